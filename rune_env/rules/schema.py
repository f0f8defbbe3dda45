"""The rules config's schema: the kinds the code fixes, every section's typed model (each key's
type and bounds), and the cross-references the types cannot express (`cross_check`).

`config.load_rules` reads a file into `RulesSpec` through these; their numbers are data, in
configs/rules/default.yaml."""
from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr

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


def cross_check(spec: RulesSpec) -> None:
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
