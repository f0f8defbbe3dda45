"""The rules config: load, validate, hash, and build lookup tables once.

`load_rules()` reads `configs/rules/default.yaml` (or a file of the designer's), applies
dotted-path overrides, validates every key and cross-reference, and returns a frozen `Rules`.
A bad config raises `RulesError` whose message starts with the key path of the problem, e.g.
``runes.fire.price: Input should be greater than or equal to 0``.
"""
from __future__ import annotations

import copy
import math
import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt,
                      StrictStr, ValidationError)

from ..files import MAX_YAML_BYTES, read_text, safe_load_yaml
from ..resources import default_rules_path  # configs/: the checkout's, or the wheel's package data

DEFAULT_RULES_PATH = default_rules_path()

# The kinds are fixed by the code (each has an effect function); their numbers are data.
CASTING_KINDS: tuple[str, ...] = ("fire", "wind", "water", "earth", "thunder", "dark", "light", "ice")
SUPPORT_KINDS: tuple[str, ...] = ("amplify", "resonator", "delay", "node", "mimic")
KINDS: tuple[str, ...] = CASTING_KINDS + SUPPORT_KINDS
ATTACK_KINDS: tuple[str, ...] = ("fire", "wind", "thunder", "dark", "ice")


class RulesError(ValueError):
    """A rules config that cannot be used; the message names the key path."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


def _number(value: Any) -> float:
    # YAML numbers only: 100 and 1.5 are fine, "100" and true are refused.
    if isinstance(value, str) and _reads_as_number(value):
        # PyYAML (YAML 1.1) reads 1e300 and 1.0e300 as text: a float needs a dot and a signed
        # exponent; say so, with the spelling it reads as the number meant
        raise ValueError(f"expected a number, got the text {value!r}: YAML reads {value} as a "
                         f"string; write {yaml.safe_dump(float(value)).splitlines()[0]}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {value!r}")
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("expected a finite number")
    return float(value)


def _reads_as_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


Num = Annotated[float, BeforeValidator(_number)]
# The longest battle a rules file may ask for: ten times the default's 60 s. With turns at least
# 1 ms apart (rune_env/rules/limits.py), a battle then has at most 600,000 turns a side, which
# the reference engine plays in a few seconds; 1.0e+12 s (30,000 years) was accepted before.
MAX_BATTLE_S = 600.0
Int = StrictInt
Bool = StrictBool
Str = StrictStr


class BattleSpec(_Strict):
    duration_s: Num = Field(gt=0, le=MAX_BATTLE_S)
    base_interval_s: Num = Field(gt=0)
    base_hp: Num = Field(gt=0)
    hp_per_round: Num = Field(ge=0)
    draw_tolerance: Num = Field(ge=0)
    death_threshold: Num = Field(ge=0)
    strongest_tolerance: Num = Field(ge=0)
    curse_heal_x: Num = Field(ge=0)
    min_cycle_turns: Int = Field(ge=1)


class RingSpec(_Strict):
    power_x: tuple[Num, ...] = Field(min_length=1, max_length=6)


class GradeSpec(_Strict):
    power_x: tuple[Num, ...] = Field(min_length=1)
    merge_count: Int = Field(ge=2)


class SectorSpec(_Strict):
    open_costs: tuple[Int, ...] = Field(min_length=6, max_length=6)


class _Priced(_Strict):
    price: Int = Field(ge=0)


class AttackRune(_Priced):
    damage: Num = Field(ge=0)
    hits: Int = Field(ge=1)


class ThunderRune(AttackRune):
    barrier_wear: Num = Field(gt=0)


class DarkRune(AttackRune):
    curse_s: Num = Field(ge=0)


class IceRune(AttackRune):
    freeze_s: Num = Field(ge=0)


class WaterRune(_Priced):
    heal: Num = Field(ge=0)


class LightRune(_Priced):
    heal: Num = Field(ge=0)
    unseals_by_grade: tuple[Int, ...]


class EarthRune(_Priced):
    barrier: Num = Field(ge=0)
    outermost_wards: Int = Field(ge=0)


class AmplifyRune(_Priced):
    increase: Num = Field(ge=0)
    # D-54: the product of the amplify factors one rune receives is at most this; None: no cap
    # (the rules as written). Below 1 a cap would weaken an amplified rune below an unamplified
    # one, so it is refused.
    max_factor: Num | None = Field(default=None, ge=1)


class DelayRune(_Priced):
    power_x: Num = Field(ge=0)
    period: Int = Field(ge=1)


class MimicRune(_Priced):
    copy_x_by_grade: tuple[Num, ...]


class RuneTable(_Strict):
    fire: AttackRune
    wind: AttackRune
    water: WaterRune
    earth: EarthRune
    thunder: ThunderRune
    dark: DarkRune
    light: LightRune
    ice: IceRune
    amplify: AmplifyRune
    resonator: _Priced
    delay: DelayRune
    node: _Priced
    mimic: MimicRune


class FlowSpec(_Strict):
    id: Str
    from_: Str = Field(alias="from")
    to: Str
    multiplier: Num = Field(gt=0)
    erosions: Int = Field(default=0, ge=0)
    reflect: Num = Field(default=0.0, ge=0)
    drizzle_charges: Int = Field(default=0, ge=0)
    barrier_strip: Num = Field(default=0.0, ge=0, le=1)
    extra_casts: Int = Field(default=0, ge=0)
    storm_delay_s: Num = Field(default=0.0, ge=0)
    overflow_to_barrier: Bool = False
    curse_s: Num = Field(default=0.0, ge=0)
    curse_duration_x: Num = Field(default=1.0, gt=0)
    freeze_duration_x: Num = Field(default=1.0, gt=0)


class FlowLimits(_Strict):
    reflect_cap: Num = Field(ge=0)
    drizzle_max_charges: Int = Field(ge=0)
    drizzle_attack_x: Num = Field(ge=0)
    storm_budget_s: Num = Field(ge=0)


class AttunementSpec(_Strict):
    multiplier: Num = Field(gt=0)


class PatternSpec(_Strict):
    id: Str
    fold: Literal[2, 3, 6]
    normal: Num = Field(gt=0)
    loose: Num = Field(gt=0)


class ResonanceSpec(_Strict):
    patterns: tuple[PatternSpec, ...]


class OppositionSpec(_Strict):
    pairs: tuple[tuple[Str, Str], ...]
    multiplier: Num = Field(gt=0)


class AffinitySpec(_Strict):
    beats: tuple[tuple[Str, Str], ...]
    slope: Num
    min: Num = Field(gt=0)
    max: Num = Field(gt=0)


class OverdriveSpec(_Strict):
    start_s: Num = Field(ge=0)
    per_second: Num = Field(ge=0)


class ErosionSpec(_Strict):
    per_cycle: Int = Field(ge=0)
    seal_cap_divisor: Int = Field(ge=1)
    seal_cap_min: Int = Field(ge=0)


class FreezeSpec(_Strict):
    max_frozen: Int = Field(ge=0)


class Modifier(_Strict):
    """Effects of a core, a boss rule or a relic on its side; every field left out is neutral."""

    interval_x: Num = Field(default=1.0, gt=0)
    power_x: Num = Field(default=1.0, ge=0)
    outermost_power_x: Num = Field(default=1.0, ge=0)
    hp_x: Num = Field(default=1.0, gt=0)
    power_x_by_kind: dict[str, Num] = Field(default_factory=dict)
    extra_erosions: Int = Field(default=0, ge=0)
    outermost_wards: Int = Field(default=0, ge=0)
    hand_slots: Int = Field(default=0, ge=0)
    income: Int = Field(default=0)
    lamp_saves: Int = Field(default=0, ge=0)
    loose_resonance: Bool = False
    reserve_any_kind: Bool = False
    resonance_add: Num = 0.0
    seal_cap_divisor: Int | None = Field(default=None, ge=1)
    amplify_increase_x: Num = Field(default=1.0, ge=0)
    flow_increase_x: Num = Field(default=1.0, ge=0)
    core_flow_strength: Num = Field(default=0.0, ge=0, le=1)
    unseal_after_s: Num | None = Field(default=None, ge=0)


class ArtifactSpec(_Priced):
    wards: Int = Field(default=0, ge=0)
    income_per_runes: Int = Field(default=0, ge=0)
    grade_bonus: Int = Field(default=0, ge=0)
    absorbs: Int = Field(default=0, ge=0)


class RunSpec(_Strict):
    start_mana: Int = Field(ge=0)
    income: Int = Field(ge=0)
    lamps: Int = Field(ge=1)
    wins_to_clear: Int = Field(ge=1)
    endless: Bool
    round_cap: Int = Field(ge=1)
    action_cap: Int = Field(ge=1)
    shop_rune_offers: Int = Field(ge=0)
    shop_artifact_offers: Int = Field(ge=0)
    reroll_cost: Int = Field(ge=0)
    hand_slots: Int = Field(ge=0)
    hand_slots_max: Int = Field(ge=0)
    artifact_slots: Int = Field(ge=0)
    artifact_slots_max: Int = Field(ge=0)
    rune_sell_per_unit: Int = Field(ge=0)
    artifact_sell_x: Num = Field(ge=0)
    reward_first_round: Int = Field(ge=1)
    reward_every: Int = Field(ge=1)
    reward_choices: Int = Field(ge=1)
    reward_mana: Int = Field(ge=0)
    reward_hand_slots: Int = Field(ge=0)
    reward_artifact_slots: Int = Field(ge=0)
    reward_base_stat_hp_x: Num = Field(ge=0)
    boss_every: Int = Field(ge=1)
    relic_choices: Int = Field(ge=1)
    opponent_budget_base: Int = Field(ge=0)
    opponent_budget_per_round: Int = Field(ge=0)
    opponent_noise: Num = Field(ge=0, le=1)
    opponent_bank: Int = Field(ge=0)


class RankSpec(_Strict):
    id: Str
    opponent_extra_runes: Int = Field(default=0, ge=0)
    income_delta: Int = 0
    opponent_budget_x: Num = Field(default=1.0, gt=0)
    boss_rule_count: Int = Field(default=1, ge=1)
    lamps: Int | None = Field(default=None, ge=1)


class AchievementSpec(_Strict):
    delay: Literal["clear_run", "sixfold_win", "boss_win"]
    node: Literal["clear_run", "sixfold_win", "boss_win"]
    mimic: Literal["clear_run", "sixfold_win", "boss_win"]


class DiceSpec(_Strict):
    faces_by_rank: tuple[Int, ...] = Field(min_length=1)
    plus_by_rank: tuple[Int, ...] = Field(min_length=1)
    plus_per_rank_beyond: Int = Field(ge=0)
    weak_pl: tuple[Int, ...] = Field(min_length=1)
    weak_pl_per_rank_beyond: Int = Field(ge=1)
    strong_pl: tuple[Int, ...] = Field(min_length=1)
    strong_pl_per_rank_beyond: Int = Field(ge=1)
    power_per_level: Num = Field(gt=0)
    magic_base: Num = Field(gt=0)
    magic_per_round: Num = Field(ge=0)
    sickness_band_x: Num = Field(gt=0)
    poison_band_x: Num = Field(gt=0)
    sickness_power_x: Num = Field(ge=0)
    poison_power_x: Num = Field(ge=0)
    burn_faces: Int = Field(ge=1)


class RulesSpec(_Strict):
    version: Literal[1]
    variant: Literal["deterministic", "dice"]
    battle: BattleSpec
    rings: RingSpec
    grades: GradeSpec
    sectors: SectorSpec
    runes: RuneTable
    flows: tuple[FlowSpec, ...]
    flow_limits: FlowLimits
    attunement: AttunementSpec
    resonance: ResonanceSpec
    opposition: OppositionSpec
    affinity: AffinitySpec
    overdrive: OverdriveSpec
    erosion: ErosionSpec
    freeze: FreezeSpec
    cores: dict[str, Modifier]
    boss_rules: dict[str, Modifier]
    relics: dict[str, Modifier]
    artifacts: dict[str, ArtifactSpec]
    run: RunSpec
    ranks: tuple[RankSpec, ...] = Field(min_length=1)
    achievements: AchievementSpec
    dice: DiceSpec


# Names the code gives behaviour to; the config must define them (their numbers are free).
REQUIRED_CORES = ("sun", "star", "moon", "eclipse", "tree")
REQUIRED_ARTIFACTS = ("ward_stone", "mana_furnace", "mana_spring", "scapegoat_doll")


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<root>"


def _cross_check(spec: RulesSpec) -> None:
    """Cross-references the schema cannot express; each error names its key path."""
    kinds = set(KINDS)
    casting = set(CASTING_KINDS)
    n_grades = len(spec.grades.power_x)
    for i, flow in enumerate(spec.flows):
        for key, kind in (("from", flow.from_), ("to", flow.to)):
            if kind not in casting:
                raise RulesError(f"flows[{i}].{key}: unknown casting rune {kind!r} "
                                 f"(one of {', '.join(CASTING_KINDS)})")
    ids = [f.id for f in spec.flows]
    if len(set(ids)) != len(ids):
        raise RulesError("flows: flow ids must be unique")
    for i, pair in enumerate(spec.opposition.pairs):
        for kind in pair:
            if kind not in kinds:
                raise RulesError(f"opposition.pairs[{i}]: unknown rune {kind!r}")
    for i, pair in enumerate(spec.affinity.beats):
        for kind in pair:
            if kind not in casting:
                raise RulesError(f"affinity.beats[{i}]: unknown elemental rune {kind!r}")
    if spec.affinity.min > spec.affinity.max:
        raise RulesError("affinity.min: must not exceed affinity.max")
    for section in ("cores", "boss_rules", "relics"):
        for name, mod in getattr(spec, section).items():
            for kind in mod.power_x_by_kind:
                if kind not in kinds:
                    raise RulesError(f"{section}.{name}.power_x_by_kind: unknown rune {kind!r}")
    for name in REQUIRED_CORES:
        if name not in spec.cores:
            raise RulesError(f"cores.{name}: missing (the code gives this core behaviour)")
    for name in REQUIRED_ARTIFACTS:
        if name not in spec.artifacts:
            raise RulesError(f"artifacts.{name}: missing (the code gives this artifact behaviour)")
    for key, values in (("runes.light.unseals_by_grade", spec.runes.light.unseals_by_grade),
                        ("runes.mimic.copy_x_by_grade", spec.runes.mimic.copy_x_by_grade)):
        if len(values) != n_grades:
            raise RulesError(f"{key}: needs one entry per grade ({n_grades})")
    d = spec.dice
    for key, values in (("dice.plus_by_rank", d.plus_by_rank), ("dice.weak_pl", d.weak_pl),
                        ("dice.strong_pl", d.strong_pl)):
        if len(values) != len(d.faces_by_rank):
            raise RulesError(f"{key}: needs one entry per rank of dice.faces_by_rank")
    rank_ids = [r.id for r in spec.ranks]
    if len(set(rank_ids)) != len(rank_ids):
        raise RulesError("ranks: rank ids must be unique")


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
        detail = " ".join(str(exc).split())
        raise RulesError(f"{path}: not valid YAML ({detail})") from None
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
    if overrides:
        data = copy.deepcopy(data)
        for dotted, value in overrides.items():
            _apply_override(data, dotted, value)
    return Rules.from_dict(data, source=str(path))


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
            raise RulesError(f"{_validation_message(exc)} [{source}]") from None
        _cross_check(spec)
        from .limits import check_battle_limits    # every battle ends: times and counts
        try:
            check_battle_limits(spec, cls.ms, RulesError)
        except RulesError as exc:
            raise RulesError(f"{exc} [{source}]") from None
        return cls(spec, data, source)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

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


def _validation_message(exc: ValidationError) -> str:
    """The first problem of a rules mapping, key path first (`Rules.from_dict`).

    An unknown key comes first, with the closest allowed key at its place: a typo such as
    `battle.base_hpp` gives ``battle.base_hpp: unknown key (did you mean 'base_hp'?)`` rather than
    the `battle.base_hp: Field required` it also causes (a required key left out at that place is
    preferred as the suggestion, and is not counted as another problem)."""
    import difflib

    errors = exc.errors()
    missing = {(tuple(e["loc"][:-1]), e["loc"][-1]) for e in errors
               if e["type"] == "missing" and e["loc"]}
    unknown = []        # (error, the allowed keys at its place, the suggestion or None)
    for e in errors:
        if e["type"] != "extra_forbidden" or not e["loc"]:
            continue
        parent, key = tuple(e["loc"][:-1]), str(e["loc"][-1])
        allowed = _keys_at(parent) or []
        close = difflib.get_close_matches(key, allowed, n=3, cutoff=0.6)
        close.sort(key=lambda k: (parent, k) not in missing)   # stable: closest first otherwise
        unknown.append((e, allowed, close[0] if close else None))
    explained = {(tuple(e["loc"][:-1]), guess) for e, _, guess in unknown if guess is not None}
    others = len(errors) - 1 - sum(1 for m in missing if m in explained)
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others > 0 else ""
    if unknown:
        err, allowed, guess = unknown[0]
        if guess is not None:
            hint = f" (did you mean {guess!r}?)"
        elif allowed:
            hint = f" (the keys here: {', '.join(allowed)})"
        else:
            hint = ""
        return f"{_path(err['loc'])}: unknown key{hint}{more}"
    err = errors[0]
    if err["type"] == "missing":
        return f"{_path(err['loc'])}: required key missing{more}"
    return f"{_path(err['loc'])}: {err['msg']}{more}"


def _keys_at(loc: tuple) -> list[str] | None:
    """The keys the schema allows at a pydantic error location (None where it is not a section
    of named keys: a number, a list, a table of free names such as `cores`)."""
    tp = _schema_at(loc)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [field.alias or name for name, field in tp.model_fields.items()]
    return None


def _schema_at(loc: tuple) -> Any:
    """The schema type at a location: RulesSpec's fields by key, dict values by any name, tuple
    items by index (None if the location leaves the schema)."""
    from typing import get_args, get_origin

    tp: Any = RulesSpec
    for part in loc:
        tp = _bare_type(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            tp = next((field.annotation for name, field in tp.model_fields.items()
                       if (field.alias or name) == part), None)
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        elif get_origin(tp) is tuple and isinstance(part, int):
            args = get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                tp = args[0]
            else:
                tp = args[part] if 0 <= part < len(args) else None
        else:
            return None
        if tp is None:
            return None
    return _bare_type(tp)


def _bare_type(tp: Any) -> Any:
    """`tp` without `Annotated[...]` and without `| None`."""
    import types
    from typing import Union, get_args, get_origin

    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


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
