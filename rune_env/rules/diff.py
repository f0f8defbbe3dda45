"""What a rules file changes: every value of its validated rules that differs from another's.

    rules_diff(rules, against) -> list[Change]     dotted key, the other's value, this one's

Both sides are compared as the rules hash reads them (`config._hashed_values`: validated, so
100 and 100.0 are one value, with balance keys at their "off" value left out), so two files
with the same hash have no change, and every change moves the hash. A change shows each side's
value as the file holds it, and whether it is that balance rule's "off" value. A list of
entries with ids (flows, ranks) is compared entry by entry, keyed by id
(`flows.firestorm.multiplier`); another list is one value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import Rules, _hashed_values

_ABSENT = object()


@dataclass(frozen=True)
class Change:
    key: str
    before: Any              # `against`'s value (None: not there at all)
    after: Any               # this file's value
    before_off: bool = False  # the value is its balance rule's "off" one (not in the hash)
    after_off: bool = False

    def to_json(self) -> dict:
        return {"key": self.key, "against": self.before, "value": self.after,
                "against_off": self.before_off, "value_off": self.after_off}


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k in sorted(value):
            _flat(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif (isinstance(value, list) and value and all(isinstance(v, dict) and "id" in v
                                                    for v in value)
          and len({str(v["id"]) for v in value}) == len(value)):
        for v in value:          # entries by id: one entry's change is that entry's keys
            _flat({k: x for k, x in v.items() if k != "id"}, f"{prefix}.{v['id']}", out)
    else:
        out[prefix] = value      # any other list stays one value: its items move together


def _values(rules: Rules) -> tuple[dict, dict]:
    hashed: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    _flat(_hashed_values(rules.spec), "", hashed)
    _flat(rules.spec.model_dump(mode="json", by_alias=True), "", shown)
    return hashed, shown


def rules_diff(rules: Rules, against: Rules) -> list[Change]:
    """The values of `rules` that differ from `against`'s, by dotted key, in key order."""
    mine, mine_shown = _values(rules)
    theirs, theirs_shown = _values(against)
    keys = sorted(k for k in set(mine) | set(theirs)
                  if mine.get(k, _ABSENT) != theirs.get(k, _ABSENT))
    return [Change(k, theirs_shown.get(k), mine_shown.get(k), k not in theirs and k in theirs_shown,
                   k not in mine and k in mine_shown) for k in keys]
