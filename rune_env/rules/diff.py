"""What a rules file changes: every value of its validated rules that differs from another's.

    rules_diff(rules, against) -> list[Change]     dotted key, the other's value, this one's

Both sides are compared as the rules hash reads them (`config._hashed_values`: validated, so
100 and 100.0 are one value, with balance keys at their "off" value left out), so two files
with the same hash have no change, and every change moves the hash. A key one side lacks (a
balance rule at its "off" value, RULE_OFF_VALUES) is `None` on that side.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import Rules, _hashed_values


@dataclass(frozen=True)
class Change:
    key: str
    before: Any        # `against`'s value (None: not set there)
    after: Any         # this file's value (None: not set here)

    def to_json(self) -> dict:
        return {"key": self.key, "against": self.before, "value": self.after}


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k in sorted(value):
            _flat(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = value          # a list stays one value: its items move together


def rules_diff(rules: Rules, against: Rules) -> list[Change]:
    """The values of `rules` that differ from `against`'s, by dotted key, in key order."""
    mine: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    _flat(_hashed_values(rules.spec), "", mine)
    _flat(_hashed_values(against.spec), "", theirs)
    return [Change(k, theirs.get(k), mine.get(k)) for k in sorted(set(mine) | set(theirs))
            if mine.get(k) != theirs.get(k)]
