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

# -- safety bounds ------------------------------------------------------------------------------
# Not game numbers (those are in configs/rules/default.yaml): the largest values a rules file may
# give so that loading it, building its tables and playing a run cannot allocate without end,
# loop for ever or overflow. Each is far above what the shipped rules use (in brackets).
#
# The observation's step record is int32 (rune_env/envs/observation.py, `Encoder.observe`: mana,
# round, lamps, costs... are packed as C ints); `cross_check` bounds the mana a whole run can
# reach by this (`run_mana_bound`).
STEP_RECORD_MAX = 2**31 - 1
# run.round_cap and the other round counts: reset builds the boss schedule, one entry per boss
# round (1.0e+12 hung in `loop.boss_schedule`) [30]
MAX_ROUNDS = 1000
# hand and artifact slots: the action table has place[slot, cell] for every slot and cell, so
# slots x cells actions (64 x 126 = 8,064 at the largest radius, 6) and an observation row per
# slot; 1.0e+9 ran out of memory in `actions._build` [8 and 4]
MAX_SLOTS = 64
# shop offers, reward and relic choices: an action each, and a block of the observation [5, 3]
MAX_OFFERS = 64
# run.action_cap: actions of one preparation [60]
MAX_ACTIONS = 1000
# one amount of mana (a price, a cost, an income, a reward, a budget): with MAX_ROUNDS and
# MAX_ACTIONS the whole run's mana stays far below STEP_RECORD_MAX (`run_mana_bound`) [<= 10]
MAX_MANA = 10_000
# counts that are neither mana nor rounds (lamps, wards, absorbs, charges, dice ranks...) [<= 13]
MAX_COUNT = 1000
# grades a rune can reach: a sold rune of grade G gives merge_count^(G-1) units of mana [3]
MAX_GRADES = 10
# entries of a named table (cores, boss rules, relics, artifacts, ranks, flows, patterns): each
# is a column of the observation or a modifier the engines loop over [<= 14]
MAX_TABLE = 64
# a multiplier or a share ("_x", multiplier, normal/loose...): products of a dozen of them times
# MAX_EFFECT stay finite (1.0e+300 multiplied to infinity, and the dice's PL = floor(inf) raised
# OverflowError) [<= 3.2]
MAX_MULTIPLIER = 100.0
# an effect value (damage, heal, barrier, HP, magic): 1.0e+308 overflowed to infinity [<= 100]
MAX_EFFECT = 1.0e6
# the faces of a power die and the PL a dice rank needs [<= 13]
MAX_DIE = 1_000_000
# drafted opponents kept per round and budget (run.opponent_bank), each a board in memory [64]
MAX_OPPONENT_BANK = 10_000

def _whole_number_hint(value: Any) -> Any:
    # a whole number written 1e3 (text to PyYAML) or 1000.0: refused as StrictInt refuses it,
    # but saying what to write (the bare "Input should be a valid integer" did not)
    number = float(value) if isinstance(value, str) and _reads_as_number(value) else value
    if isinstance(number, float) and not isinstance(value, bool) and number.is_integer() \
            and abs(number) < 1e15:
        got = f"the text {value!r}: YAML reads {value} as a string" if isinstance(value, str) \
            else f"{value!r}"
        raise ValueError(f"expected a whole number, got {got}; write {int(number)}")
    return value


Int = Annotated[StrictInt, BeforeValidator(_whole_number_hint)]
Bool = StrictBool
Str = StrictStr


class BattleSpec(_Strict):
    duration_s: Num = Field(gt=0, le=MAX_BATTLE_S)
    base_interval_s: Num = Field(gt=0)
    base_hp: Num = Field(gt=0, le=MAX_EFFECT)
    hp_per_round: Num = Field(ge=0, le=MAX_EFFECT)
    draw_tolerance: Num = Field(ge=0, le=1)            # relative
    death_threshold: Num = Field(ge=0, le=MAX_EFFECT)  # HP
    strongest_tolerance: Num = Field(ge=0, le=1)       # relative
    curse_heal_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    min_cycle_turns: Int = Field(ge=1, le=MAX_COUNT)


# bounded items of the lists
Multiplier = Annotated[Num, Field(ge=0, le=MAX_MULTIPLIER)]
Mana = Annotated[Int, Field(ge=0, le=MAX_MANA)]


class RingSpec(_Strict):
    power_x: tuple[Multiplier, ...] = Field(min_length=1, max_length=6)


class GradeSpec(_Strict):
    power_x: tuple[Multiplier, ...] = Field(min_length=1, max_length=MAX_GRADES)
    merge_count: Int = Field(ge=2, le=MAX_COUNT)


class SectorSpec(_Strict):
    open_costs: tuple[Mana, ...] = Field(min_length=6, max_length=6)


class _Priced(_Strict):
    price: Int = Field(ge=0, le=MAX_MANA)


class AttackRune(_Priced):
    damage: Num = Field(ge=0, le=MAX_EFFECT)
    hits: Int = Field(ge=1)     # at most limits.MAX_REPEATS (checked there, with its reason)


class ThunderRune(AttackRune):
    barrier_wear: Num = Field(gt=0, le=MAX_MULTIPLIER)


class DarkRune(AttackRune):
    curse_s: Num = Field(ge=0)


class IceRune(AttackRune):
    freeze_s: Num = Field(ge=0)


class WaterRune(_Priced):
    heal: Num = Field(ge=0, le=MAX_EFFECT)


class LightRune(_Priced):
    heal: Num = Field(ge=0, le=MAX_EFFECT)
    # each at most limits.MAX_REPEATS (checked there)
    unseals_by_grade: tuple[Annotated[Int, Field(ge=0)], ...]


class EarthRune(_Priced):
    barrier: Num = Field(ge=0, le=MAX_EFFECT)
    outermost_wards: Int = Field(ge=0, le=MAX_COUNT)


class AmplifyRune(_Priced):
    increase: Num = Field(ge=0, le=MAX_MULTIPLIER)
    # D-54: the product of the amplify factors one rune receives is at most this; None: no cap
    # (the rules as written). Below 1 a cap would weaken an amplified rune below an unamplified
    # one, so it is refused.
    max_factor: Num | None = Field(default=None, ge=1, le=MAX_MULTIPLIER)


class DelayRune(_Priced):
    power_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    period: Int = Field(ge=1, le=MAX_COUNT)


class MimicRune(_Priced):
    copy_x_by_grade: tuple[Multiplier, ...]


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
    multiplier: Num = Field(gt=0, le=MAX_MULTIPLIER)
    erosions: Int = Field(default=0, ge=0)          # at most limits.MAX_REPEATS
    reflect: Num = Field(default=0.0, ge=0, le=MAX_MULTIPLIER)
    drizzle_charges: Int = Field(default=0, ge=0, le=MAX_COUNT)
    barrier_strip: Num = Field(default=0.0, ge=0, le=1)
    extra_casts: Int = Field(default=0, ge=0)       # at most limits.MAX_REPEATS
    storm_delay_s: Num = Field(default=0.0, ge=0)   # times: limits.check_durations
    overflow_to_barrier: Bool = False
    curse_s: Num = Field(default=0.0, ge=0)
    curse_duration_x: Num = Field(default=1.0, gt=0, le=MAX_MULTIPLIER)
    freeze_duration_x: Num = Field(default=1.0, gt=0, le=MAX_MULTIPLIER)


class FlowLimits(_Strict):
    reflect_cap: Num = Field(ge=0, le=MAX_MULTIPLIER)
    drizzle_max_charges: Int = Field(ge=0, le=MAX_COUNT)
    drizzle_attack_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    storm_budget_s: Num = Field(ge=0)


class AttunementSpec(_Strict):
    multiplier: Num = Field(gt=0, le=MAX_MULTIPLIER)


class PatternSpec(_Strict):
    id: Str
    fold: Literal[2, 3, 6]
    normal: Num = Field(gt=0, le=MAX_MULTIPLIER)
    loose: Num = Field(gt=0, le=MAX_MULTIPLIER)


class ResonanceSpec(_Strict):
    patterns: tuple[PatternSpec, ...] = Field(max_length=MAX_TABLE)


class OppositionSpec(_Strict):
    pairs: tuple[tuple[Str, Str], ...] = Field(max_length=MAX_TABLE)
    multiplier: Num = Field(gt=0, le=MAX_MULTIPLIER)


class AffinitySpec(_Strict):
    beats: tuple[tuple[Str, Str], ...] = Field(max_length=MAX_TABLE)
    # hits x clamp(1 + slope * (beaten - beating), min, max), the shares in [0, 1]: a negative
    # slope (beaten runes hit weaker) has a meaning; past +-MAX_MULTIPLIER the clamp decides alone
    slope: Num = Field(ge=-MAX_MULTIPLIER, le=MAX_MULTIPLIER)
    min: Num = Field(gt=0, le=MAX_MULTIPLIER)
    max: Num = Field(gt=0, le=MAX_MULTIPLIER)


class OverdriveSpec(_Strict):
    start_s: Num = Field(ge=0)
    per_second: Num = Field(ge=0, le=MAX_MULTIPLIER)


class ErosionSpec(_Strict):
    per_cycle: Int = Field(ge=0)                    # at most limits.MAX_REPEATS
    seal_cap_divisor: Int = Field(ge=1, le=MAX_COUNT)
    seal_cap_min: Int = Field(ge=0, le=MAX_COUNT)


class FreezeSpec(_Strict):
    max_frozen: Int = Field(ge=0, le=MAX_COUNT)


class Modifier(_Strict):
    """Effects of a core, a boss rule or a relic on its side; every field left out is neutral."""

    interval_x: Num = Field(default=1.0, gt=0, le=MAX_MULTIPLIER)
    power_x: Num = Field(default=1.0, ge=0, le=MAX_MULTIPLIER)
    outermost_power_x: Num = Field(default=1.0, ge=0, le=MAX_MULTIPLIER)
    hp_x: Num = Field(default=1.0, gt=0, le=MAX_MULTIPLIER)
    power_x_by_kind: dict[str, Multiplier] = Field(default_factory=dict)
    extra_erosions: Int = Field(default=0, ge=0)    # at most limits.MAX_REPEATS
    outermost_wards: Int = Field(default=0, ge=0, le=MAX_COUNT)
    hand_slots: Int = Field(default=0, ge=0, le=MAX_SLOTS)
    # a relic's income may be negative (a cursed relic; income is never below 0 in all)
    income: Int = Field(default=0, ge=-MAX_MANA, le=MAX_MANA)
    lamp_saves: Int = Field(default=0, ge=0, le=MAX_COUNT)
    loose_resonance: Bool = False
    reserve_any_kind: Bool = False
    # added to every resonance multiplier (shipped: 0.2). Below 0 it weakens resonance; below -1
    # it would turn any multiplier up to 1 (and the shipped ones, 1.2 to 2.5, mostly) negative
    resonance_add: Num = Field(default=0.0, ge=-1.0, le=MAX_MULTIPLIER)
    seal_cap_divisor: Int | None = Field(default=None, ge=1, le=MAX_COUNT)
    amplify_increase_x: Num = Field(default=1.0, ge=0, le=MAX_MULTIPLIER)
    flow_increase_x: Num = Field(default=1.0, ge=0, le=MAX_MULTIPLIER)
    core_flow_strength: Num = Field(default=0.0, ge=0, le=1)
    unseal_after_s: Num | None = Field(default=None, ge=0)


class ArtifactSpec(_Priced):
    wards: Int = Field(default=0, ge=0, le=MAX_COUNT)
    income_per_runes: Int = Field(default=0, ge=0, le=MAX_COUNT)
    grade_bonus: Int = Field(default=0, ge=0, le=MAX_GRADES)
    absorbs: Int = Field(default=0, ge=0, le=MAX_COUNT)


class RunSpec(_Strict):
    start_mana: Int = Field(ge=0, le=MAX_MANA)
    income: Int = Field(ge=0, le=MAX_MANA)
    lamps: Int = Field(ge=1, le=MAX_COUNT)
    wins_to_clear: Int = Field(ge=1, le=MAX_ROUNDS)
    endless: Bool
    round_cap: Int = Field(ge=1, le=MAX_ROUNDS)
    action_cap: Int = Field(ge=1, le=MAX_ACTIONS)
    shop_rune_offers: Int = Field(ge=0, le=MAX_OFFERS)
    shop_artifact_offers: Int = Field(ge=0, le=MAX_OFFERS)
    reroll_cost: Int = Field(ge=0, le=MAX_MANA)
    hand_slots: Int = Field(ge=0, le=MAX_SLOTS)
    hand_slots_max: Int = Field(ge=0, le=MAX_SLOTS)
    artifact_slots: Int = Field(ge=0, le=MAX_SLOTS)
    artifact_slots_max: Int = Field(ge=0, le=MAX_SLOTS)
    rune_sell_per_unit: Int = Field(ge=0, le=MAX_MANA)
    artifact_sell_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    reward_first_round: Int = Field(ge=1, le=MAX_ROUNDS)
    reward_every: Int = Field(ge=1, le=MAX_ROUNDS)
    reward_choices: Int = Field(ge=1, le=MAX_OFFERS)
    reward_mana: Int = Field(ge=0, le=MAX_MANA)
    reward_hand_slots: Int = Field(ge=0, le=MAX_SLOTS)
    reward_artifact_slots: Int = Field(ge=0, le=MAX_SLOTS)
    reward_base_stat_hp_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    boss_every: Int = Field(ge=1, le=MAX_ROUNDS)
    relic_choices: Int = Field(ge=1, le=MAX_OFFERS)
    opponent_budget_base: Int = Field(ge=0, le=MAX_MANA)
    opponent_budget_per_round: Int = Field(ge=0, le=MAX_MANA)
    opponent_noise: Num = Field(ge=0, le=1)
    opponent_bank: Int = Field(ge=0, le=MAX_OPPONENT_BANK)


class RankSpec(_Strict):
    id: Str
    opponent_extra_runes: Int = Field(default=0, ge=0, le=MAX_COUNT)
    # a harder rank may lower the income (shipped: -1), never below 0 in all (`loop.income`)
    income_delta: Int = Field(default=0, ge=-MAX_MANA, le=MAX_MANA)
    opponent_budget_x: Num = Field(default=1.0, gt=0, le=MAX_MULTIPLIER)
    boss_rule_count: Int = Field(default=1, ge=1, le=MAX_TABLE)
    lamps: Int | None = Field(default=None, ge=1, le=MAX_COUNT)


class AchievementSpec(_Strict):
    delay: Literal["clear_run", "sixfold_win", "boss_win"]
    node: Literal["clear_run", "sixfold_win", "boss_win"]
    mimic: Literal["clear_run", "sixfold_win", "boss_win"]


# a die has at least 1 face (a roll is 1 + n % faces); rank 0's fixed 1 is not in the table
DieFaces = Annotated[Int, Field(ge=1, le=MAX_DIE)]
DieCount = Annotated[Int, Field(ge=0, le=MAX_DIE)]


class DiceSpec(_Strict):
    faces_by_rank: tuple[DieFaces, ...] = Field(min_length=1, max_length=MAX_TABLE)
    plus_by_rank: tuple[DieCount, ...] = Field(min_length=1, max_length=MAX_TABLE)
    plus_per_rank_beyond: Int = Field(ge=0, le=MAX_DIE)
    weak_pl: tuple[DieCount, ...] = Field(min_length=1, max_length=MAX_TABLE)
    weak_pl_per_rank_beyond: Int = Field(ge=1, le=MAX_DIE)
    strong_pl: tuple[DieCount, ...] = Field(min_length=1, max_length=MAX_TABLE)
    strong_pl_per_rank_beyond: Int = Field(ge=1, le=MAX_DIE)
    power_per_level: Num = Field(gt=0, le=MAX_EFFECT)
    magic_base: Num = Field(gt=0, le=MAX_EFFECT)
    magic_per_round: Num = Field(ge=0, le=MAX_EFFECT)
    sickness_band_x: Num = Field(gt=0, le=MAX_MULTIPLIER)
    poison_band_x: Num = Field(gt=0, le=MAX_MULTIPLIER)
    sickness_power_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    poison_power_x: Num = Field(ge=0, le=MAX_MULTIPLIER)
    burn_faces: DieFaces


class RulesSpec(_Strict):
    version: Literal[1]
    variant: Literal["deterministic", "dice"]
    battle: BattleSpec
    rings: RingSpec
    grades: GradeSpec
    sectors: SectorSpec
    runes: RuneTable
    flows: tuple[FlowSpec, ...] = Field(max_length=MAX_TABLE)
    flow_limits: FlowLimits
    attunement: AttunementSpec
    resonance: ResonanceSpec
    opposition: OppositionSpec
    affinity: AffinitySpec
    overdrive: OverdriveSpec
    erosion: ErosionSpec
    freeze: FreezeSpec
    cores: dict[str, Modifier] = Field(max_length=MAX_TABLE)
    boss_rules: dict[str, Modifier] = Field(max_length=MAX_TABLE)
    relics: dict[str, Modifier] = Field(max_length=MAX_TABLE)
    artifacts: dict[str, ArtifactSpec] = Field(max_length=MAX_TABLE)
    run: RunSpec
    ranks: tuple[RankSpec, ...] = Field(min_length=1, max_length=MAX_TABLE)
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
    most, parts = run_mana_bound(spec)
    if most > STEP_RECORD_MAX:
        raise RulesError(f"run.round_cap: a run of {spec.run.round_cap} rounds could hold up to "
                         f"{most:,} mana ({parts}), more than the observation's int32 step record "
                         f"holds ({STEP_RECORD_MAX:,}): lower run.round_cap, run.action_cap or "
                         f"the mana amounts")


def run_mana_bound(spec: RulesSpec) -> tuple[int, str]:
    """(an upper bound of the mana a run under `spec` can ever hold, how it adds up).

    Mana only grows by: the start (run.start_mana, or an opponent's draft budget, which
    `loop.new_draft` gives as mana: at most the last round's budget at the rank whose factors
    multiply highest), and each round at most: the income (run.income, every positive rank
    income_delta, every positive relic income, and mana furnaces: each of at most n_cells
    furnaces counts at most the 7 cells it reaches), the reward mana, and one sale per action
    (action_cap), each at most the larger of a rune of the highest grade
    (rune_sell_per_unit * merge_count^(grades - 1)) and the dearest artifact times
    artifact_sell_x. The shipped rules give 24,645."""
    run = spec.run
    radius = len(spec.rings.power_x)
    n_cells = 3 * radius * (radius + 1)      # rings of 6, 12, 18... cells (the core is none)
    budget_x = 1.0
    most_x = 1.0
    for rank in spec.ranks:
        budget_x *= rank.opponent_budget_x
        most_x = max(most_x, budget_x)
    budget = math.floor((run.opponent_budget_base
                         + run.opponent_budget_per_round * (run.round_cap - 1)) * most_x + 1e-9)
    start = max(run.start_mana, budget)
    income = (run.income + sum(max(0, r.income_delta) for r in spec.ranks)
              + sum(max(0, m.income) for m in spec.relics.values()))
    if any(a.income_per_runes > 0 for a in spec.artifacts.values()):
        income += 7 * n_cells
    rune_sale = run.rune_sell_per_unit * spec.grades.merge_count ** (len(spec.grades.power_x) - 1)
    art_sale = max((math.floor(a.price * run.artifact_sell_x) for a in spec.artifacts.values()),
                   default=0)
    per_round = income + run.reward_mana + run.action_cap * max(rune_sale, art_sale)
    most = start + run.round_cap * per_round
    return most, f"{start:,} at the start and up to {per_round:,} a round"
