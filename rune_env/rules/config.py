"""The rules config: load, validate, hash, and build lookup tables once.

`load_rules()` reads `configs/rules/default.yaml` (or a file of the designer's), applies
dotted-path overrides, validates every key and cross-reference, and returns a frozen `Rules`.
A bad config raises `RulesError` whose message starts with the key path of the problem, e.g.
``runes.fire.price: Input should be greater than or equal to 0``.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
from pathlib import Path
from typing import Any, Mapping

import yaml
from pydantic import ValidationError

from ..files import MAX_YAML_BYTES, read_text, safe_load_yaml, yaml_problem
from ..resources import default_rules_path  # configs/: the checkout's, or the wheel's package data
from .messages import validation_message
# the schema's public names stay importable from here, where the callers have always found them
from .schema import (ATTACK_KINDS, CASTING_KINDS, KINDS, MAX_BATTLE_S,  # noqa: F401
                     SUPPORT_KINDS, FlowSpec, RulesError, RulesSpec, cross_check)

DEFAULT_RULES_PATH = default_rules_path()


def _apply_override(data: dict, dotted: str, value: Any) -> None:
    node: Any = data
    parts = dotted.split(".")
    for i, part in enumerate(parts[:-1]):
        key: Any = int(part) if isinstance(node, list) and part.isdigit() else part
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            raise RulesError(f"{'.'.join(parts[:i + 1])}: no such key (override {dotted!r})") from None
    last: Any = parts[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise RulesError(f"{dotted}: no such index (override)")
        last = int(last)
    elif not isinstance(node, dict) or last not in node:
        raise RulesError(f"{dotted}: no such key (override)")
    node[last] = value


def _read_yaml(path: Path) -> dict:
    text = read_text(path, "rules file", RulesError, limit=MAX_YAML_BYTES)
    try:
        data = safe_load_yaml(text, str(path), RulesError)
    except yaml.YAMLError as exc:
        raise RulesError(f"{path}: not valid YAML {yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise RulesError(f"{path}: a rules file is a YAML mapping at the top level")
    return data


def _merge(base: dict, overlay: dict) -> dict:
    """`overlay` on top of `base`: mappings merge key by key (recursively), anything else (a
    number, a list, a string) replaces the base's value whole."""
    out = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


MAX_EXTENDS = 32      # rules files that extend another, in one chain (shipped: 1); an input bound


def _read_rules_file(path: Path, chain: tuple[Path, ...] = ()) -> dict:
    """A rules file as one mapping, with its `extends:` chain resolved.

    A rules file may start with `extends: OTHER.yaml` (a path relative to the file, or the name of
    a shipped rules file: `_extended_path`): it then holds
    only what differs from OTHER, merged on top of it (`_merge`). `configs/rules/seed_literal.yaml`
    is such a file. The merged mapping is validated as a whole, so a key that the schema does not
    know is refused with its path as in a full file."""
    data = _read_yaml(path)
    base = data.pop("extends", None)
    if base is None:
        return data
    if not isinstance(base, str) or not base.strip():
        raise RulesError(f"extends: expected the path of a rules file (relative to this file), "
                         f"got {base!r} [{path}]")
    base_path = _extended_path(base, path)
    here = path.resolve()
    if base_path in chain + (here,):
        names = " -> ".join(str(p) for p in chain + (here, base_path))
        raise RulesError(f"extends: a cycle of rules files ({names}) [{path}]")
    # 1,200 files deep ran out of Python's stack, said as "YAML nested more than 64 deep"
    if len(chain) >= MAX_EXTENDS:
        raise RulesError(f"extends: a chain of more than {MAX_EXTENDS} rules files (one "
                         f"extending the next) [{path}]")
    return _merge(_read_rules_file(base_path, chain + (here,)), data)


def _extended_path(base: str, path: Path) -> Path:
    """Where `extends: base` of the rules file `path` points: a path relative to the file, or else
    a shipped rules file by name (`default.yaml`, `seed_literal.yaml`, `balance_v2.yaml` in
    configs/rules/), so that a designer's file anywhere can extend the defaults; the error names
    both places looked in."""
    beside = (path.parent / base).resolve()
    if beside.is_file():
        return beside
    shipped = (DEFAULT_RULES_PATH.parent / base).resolve()
    if Path(base).name == base and shipped.is_file():
        return shipped
    raise RulesError(f"extends: no rules file {base!r}: not {beside}, nor a shipped rules file "
                     f"{shipped} [{path}]")


def load_rules(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> "Rules":
    """Load and validate a rules file (default: configs/rules/default.yaml).

    The file may extend another (`extends: default.yaml`, see `_read_rules_file`). `overrides`
    maps dotted key paths to values, e.g. ``{"battle.base_hp": 120, "flows.0.multiplier": 2.2}``;
    each must name an existing key.
    """
    path = Path(path) if path is not None else DEFAULT_RULES_PATH
    data = _read_rules_file(path)
    if not overrides:
        return Rules.from_dict(data, source=str(path))
    data = copy.deepcopy(data)
    for dotted, value in overrides.items():
        _apply_override(data, dotted, value)
    try:
        return Rules.from_dict(data, source=str(path))
    except RulesError as exc:       # the file is fine alone: say the overrides are in play
        keys = ", ".join(map(str, overrides))
        raise RulesError(str(exc).replace(f"[{path}]", f"[{path} with the override"
                                          f"{'s' if len(overrides) > 1 else ''} {keys}]")) from None


# Balance keys (RULES D-50..D-52, D-54) added after the first pools and models were made under the rules
# as written. At the value that turns their rule off they are left out of the hash: the rules as
# written (configs/rules/seed_literal.yaml) keep the hash they had before these keys existed, so
# the pools, models, saved runs and records made under them still match it. Any other value is
# hashed like every other number.
RULE_OFF_VALUES: dict[tuple[str, ...], int | None] = {
    ("battle", "min_cycle_turns"): 1,     # every cycle is as long as its turns
    ("erosion", "seal_cap_min"): 0,       # no floor under the seal cap
    ("freeze", "max_frozen"): 0,          # no limit on frozen cells
    ("runes", "amplify", "max_factor"): None,   # no amplify cap (D-54)
}


def _hashed_values(spec: "RulesSpec") -> dict:
    data = spec.model_dump(mode="json", by_alias=True)
    for path, off in RULE_OFF_VALUES.items():
        *parents, key = path
        node = data
        for name in parents:
            node = node.get(name, {})
        if key in node and node[key] == off:
            del node[key]
            if not data[path[0]]:
                del data[path[0]]
    return data


class Rules:
    """Frozen, validated rules with lookup tables built once.

    `spec` is the typed config; the attributes below are the tables the engines read.
    `hash` is a stable digest of the canonical config (sorted-key JSON), for pools and records.
    """

    def __init__(self, spec: RulesSpec, data: dict, source: str = "<dict>"):
        self.spec = spec
        self.source = source
        self._data = data
        # hash the validated values, so 100 and 100.0 (or key order) give the same hash
        # (balance keys at their "off" value are left out: RULE_OFF_VALUES)
        canonical = json.dumps(_hashed_values(spec), sort_keys=True, separators=(",", ":"))
        self.hash = hashlib.sha256(canonical.encode()).hexdigest()[:16]
        s = spec
        self.kinds = KINDS
        self.kind_index = {k: i for i, k in enumerate(KINDS)}
        self.casting_kinds = frozenset(CASTING_KINDS)
        self.attack_kinds = frozenset(ATTACK_KINDS)
        self.ring_x = s.rings.power_x
        self.radius = len(s.rings.power_x)
        self.grade_x = s.grades.power_x
        self.max_grade = len(s.grades.power_x)
        self.rune_specs = {k: getattr(s.runes, k) for k in KINDS}
        self.prices = {k: self.rune_specs[k].price for k in KINDS}
        # flows grouped by the kind they feed, keeping table order
        self.flows = s.flows
        self.flows_into: dict[str, tuple[FlowSpec, ...]] = {
            k: tuple(f for f in s.flows if f.to == k) for k in KINDS}
        self.flow_by_id = {f.id: f for f in s.flows}
        # the effect value of one hit / heal / barrier at grade I in ring 1
        self.base_value: dict[str, float] = {}
        for k in CASTING_KINDS:
            r = self.rune_specs[k]
            self.base_value[k] = next(getattr(r, a) for a in ("damage", "heal", "barrier")
                                      if hasattr(r, a))
        self.opposites: dict[str, frozenset[str]] = {k: frozenset() for k in KINDS}
        for a, b in s.opposition.pairs:
            self.opposites[a] = self.opposites[a] | {b}
            self.opposites[b] = self.opposites[b] | {a}
        self.beats: dict[str, frozenset[str]] = {
            k: frozenset(b for a, b in s.affinity.beats if a == k) for k in KINDS}
        self.beaten_by: dict[str, frozenset[str]] = {
            k: frozenset(a for a, b in s.affinity.beats if b == k) for k in KINDS}

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> "Rules":
        try:
            spec = RulesSpec.model_validate(data)
        except ValidationError as exc:
            raise RulesError(f"{validation_message(exc)} [{source}]") from None
        from .limits import check_battle_limits    # every battle ends: times and counts
        try:        # the checks across keys name their file too, as the schema's do
            cross_check(spec)
            check_battle_limits(spec, cls.ms, RulesError)
        except RulesError as exc:
            raise RulesError(f"{exc} [{source}]") from None
        return cls(spec, data, source)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Rules":
        """These rules with `overrides` (dotted key paths, as `load_rules` takes them) applied and
        validated again; the source stays these rules' (a designer's file, a retuned dict), so
        the opponent side's economy of a rank is drafted on top of the rules it belongs to."""
        data = self.to_dict()
        for dotted, value in overrides.items():
            _apply_override(data, dotted, value)
        return Rules.from_dict(data, source=self.source)

    def cut_at(self, duration_s: float) -> "Rules":
        """These rules with the battle cut at `duration_s` (at most the battle's own length, at
        least 1 ms), for tools that need a battle's state at a time (the audit's fast-kill reach):
        the battle up to then is the whole battle's. Built from these validated rules without the
        check that no time is longer than the battle (`limits.check_battle_limits`): a shorter
        battle only ends sooner, and a curse or freeze that outlasts the cut acts the same up to
        it."""
        if not (0.0 < duration_s <= self.spec.battle.duration_s and self.ms(duration_s) >= 1):
            raise RulesError(f"battle.duration_s: a cut at {duration_s!r} s is not within "
                             f"0.001..{self.spec.battle.duration_s:g} s")
        data = self.to_dict()
        data["battle"]["duration_s"] = duration_s
        spec = self.spec.model_copy(update={
            "battle": self.spec.battle.model_copy(update={"duration_s": duration_s})})
        return Rules(spec, data, source=f"{self.source} cut at {self.ms(duration_s)} ms")

    @staticmethod
    def ms(seconds: float) -> int:
        """A duration in seconds as whole milliseconds, rounded half up (D-6a)."""
        return ms_round(seconds * 1000.0)

    def __repr__(self) -> str:
        return f"Rules(source={self.source!r}, hash={self.hash})"

    # Rules are immutable and shared; copying returns the same object.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (Rules.from_dict, (self._data, self.source))



def ms_round(x_ms: float) -> int:
    """Whole milliseconds, rounded half up (RULES D-6a): 382.5 -> 383."""
    return int(math.floor(x_ms + 0.5 + 1e-9))


_DEFAULT: Rules | None = None


def default_rules() -> Rules:
    """The default rules, loaded once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_rules()
    return _DEFAULT