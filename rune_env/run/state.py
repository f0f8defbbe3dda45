"""The state of a run: everything needed to continue it exactly, and its JSON form.

A `RunState` is mutated in place by `rune_env.run.loop.apply`; `clone()` copies it (for search
and planning), `to_json()` / `RunState.from_json()` save and resume it: a resumed run draws the
same later offers and fights the same battles, because the generator's state is saved too.
Two named parts of it: the choice waiting for the player (`PendingChoice`, of one of
`PENDING_KINDS`) and the summary of each battle fought (`BattleSummary`).
"""
from __future__ import annotations

import copy
import json
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..files import load_json, shown
from ..rules.board import Board
from ..rules.config import Rules, default_rules
from ..rules.geometry import geometry
from ..rules.hp import round_max_hp

STATE_VERSION = 1
# The kinds of choice a run can wait for, each taken by the action group "choose_<kind>". The
# order is the observation's (its pending part, and the compiled record's code 0, 1, 2).
PENDING_KINDS = ("core", "reward", "relic")
# The most a saved run's count (mana, wins, lamps, ...) may be: the observation's step record
# holds them as int32 (rune_env/envs/observation.py, Encoder.observe), and a run adds to them
# (income, a battle's outcome) before the next observation, so 10^9 leaves room (the draft
# env's budget bound is this). No run comes near it.
COUNT_MAX = 10**9
# the whole-number fields of a saved run: (key, lowest, highest); seeds have no upper bound
SAVED_COUNTS = (("seed", 0, None), ("rank", 0, None), ("round", 1, COUNT_MAX),
                ("mana", 0, COUNT_MAX), ("hand_slots", 0, COUNT_MAX),
                ("artifact_slots", 0, COUNT_MAX), ("lamps", 0, COUNT_MAX),
                ("lamp_saves", 0, COUNT_MAX), ("wins", 0, COUNT_MAX), ("losses", 0, COUNT_MAX),
                ("draws", 0, COUNT_MAX), ("prep_actions", 0, COUNT_MAX),
                ("units_bought", 0, COUNT_MAX), ("units_sold", 0, COUNT_MAX))


class RunStateError(ValueError):
    """A saved run that cannot be loaded; the message names the problem."""


@dataclass
class PendingChoice:
    """A choice the player must take before anything else: a core (round 1, unless the core is
    fixed), a reward or a relic. `queue` holds the choices waiting behind it, in order (their
    own queues are empty). JSON: {"kind", "options", "queue": [{"kind", "options"}, ...]}."""

    kind: str                   # one of PENDING_KINDS
    options: list[str]
    queue: list[PendingChoice] = field(default_factory=list)

    @property
    def group(self) -> str:
        """The action group that takes this choice."""
        return "choose_" + self.kind

    def copy(self) -> PendingChoice:
        return PendingChoice(self.kind, list(self.options), [q.copy() for q in self.queue])

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "options": list(self.options),
                "queue": [{"kind": q.kind, "options": list(q.options)} for q in self.queue]}

    @classmethod
    def from_json(cls, data: Any) -> PendingChoice:
        """A saved pending choice; RunStateError if it is not one."""
        def one(d: Any) -> PendingChoice:
            if not isinstance(d, dict) or d.get("kind") not in PENDING_KINDS \
                    or not isinstance(d.get("options"), list):
                raise RunStateError("saved run: malformed pending choice")
            return cls(d["kind"], list(d["options"]))
        choice = one(data)
        queue = data.get("queue", [])
        if not isinstance(queue, list):
            raise RunStateError("saved run: malformed pending choice")
        choice.queue = [one(q) for q in queue]
        return choice


@dataclass(frozen=True)
class BattleSummary:
    """One battle of the run, from the player's side (pairs are [player, opponent]); what the
    envs put in `info["battle"]` (as `to_json()`, a plain dict with these keys)."""

    round: int
    outcome: str                # "win", "loss" or "draw"
    seat: int                   # the player's side in the battle (RULES E-22)
    time: float                 # s
    hp: tuple                   # clamped at 0
    max_hp: tuple
    casts: tuple
    seals: tuple
    boss_rules: tuple
    core: str | None
    kinds: tuple                # the player's board's rune kinds, sorted
    board: dict                 # the player's board, as a board file (RULES section 17)
    opponent: dict              # the opponent's board, as a board file
    lamp_saved: bool = False    # a phoenix feather saved the lamp of this loss

    def to_json(self) -> dict[str, Any]:
        """The summary as a plain dict (`lamp_saved` only when true); the boards are copies."""
        out = {"round": self.round, "outcome": self.outcome, "seat": self.seat,
               "time": self.time, "hp": list(self.hp), "max_hp": list(self.max_hp),
               "casts": list(self.casts), "seals": list(self.seals),
               "boss_rules": list(self.boss_rules), "core": self.core, "kinds": list(self.kinds),
               "board": copy.deepcopy(self.board), "opponent": copy.deepcopy(self.opponent)}
        if self.lamp_saved:
            out["lamp_saved"] = True
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BattleSummary:
        pairs = {k: tuple(data[k]) for k in ("hp", "max_hp", "casts", "seals")}
        return cls(round=data["round"], outcome=data["outcome"], seat=data["seat"],
                   time=data["time"], boss_rules=tuple(data["boss_rules"]), core=data["core"],
                   kinds=tuple(data["kinds"]), board=data["board"], opponent=data["opponent"],
                   lamp_saved=bool(data.get("lamp_saved", False)), **pairs)


@dataclass
class RunState:
    rules: Rules
    seed: int
    rank: int
    rng: np.random.Generator
    round: int = 1
    mana: int = 0
    hand: list[tuple[str, int]] = field(default_factory=list)       # slot = index
    board: dict[int, tuple[str, int]] = field(default_factory=dict)  # cell -> (kind, grade)
    artifacts: dict[int, str] = field(default_factory=dict)          # placed: cell -> artifact
    artifact_inventory: list[str] = field(default_factory=list)
    hand_slots: int = 0
    artifact_slots: int = 0
    open_sectors: list[int] = field(default_factory=list)            # in the order opened
    core: str | None = None
    sun_element: str | None = None
    relics: list[str] = field(default_factory=list)
    lamps: int = 0
    lamp_saves: int = 0            # phoenix feathers not yet used
    wins: int = 0
    losses: int = 0
    draws: int = 0
    hp_bonus: float = 0.0          # base-stat rewards: max HP x (1 + hp_bonus)
    shop_runes: list[str | None] = field(default_factory=list)
    shop_artifacts: list[str | None] = field(default_factory=list)
    pending: PendingChoice | None = None   # the choice to take before anything else
    boss_schedule: dict[int, list[str]] = field(default_factory=dict)
    prep_actions: int = 0          # actions in this round's preparation (D-41 cap)
    unlocked: list[str] = field(default_factory=list)
    over: bool = False
    cleared: bool = False
    achievements: list[str] = field(default_factory=list)  # earned in this run
    # counters for invariants and logs (grade-I units)
    units_bought: int = 0
    units_sold: int = 0
    battles: list[BattleSummary] = field(default_factory=list)   # one per battle fought
    actions_taken: list[int] = field(default_factory=list)
    # a duel's shared draws (rune_env/run/duel.py): when set, reward and relic options come from
    # a generator seeded by (choice_seed, round, kind), not from `rng`, so both players of a duel
    # are offered the same draws; None in a one-player run
    choice_seed: int | None = None

    # -- derived -------------------------------------------------------------------------------
    @property
    def in_duel(self) -> bool:
        """A duel's player (its shared draws set), not a one-player run."""
        return self.choice_seed is not None

    @property
    def max_hp(self) -> float:
        return round_max_hp(self.rules, self.round, self.hp_bonus)

    @property
    def artifacts_held(self) -> int:
        """Placed and in the inventory: both use artifact slots (D-40)."""
        return len(self.artifacts) + len(self.artifact_inventory)

    @property
    def boss_rules(self) -> list[str]:
        """The boss rules of this round's opponent (empty outside boss rounds)."""
        return list(self.boss_schedule.get(self.round, []))

    def to_board(self) -> Board:
        """The player's board as it enters battle; the hand is its reserves."""
        return Board(runes=dict(self.board), artifacts=dict(self.artifacts), hand=tuple(self.hand),
                     core=self.core, sun_element=self.sun_element,
                     open_sectors=frozenset(self.open_sectors), relics=tuple(self.relics),
                     max_hp=self.max_hp, round=self.round)

    def clone(self, with_rng: bool = True) -> "RunState":
        """A copy to play on. `with_rng=False` leaves the run's generator out (None): a player
        that weighs its own choices on a copy never sees what the run will draw, and a reroll,
        a new shop or a battle on such a copy fails instead."""
        new = copy.copy(self)
        # (a BattleSummary is frozen: the copied list may share them)
        for name in ("hand", "artifact_inventory", "open_sectors", "relics", "shop_runes",
                     "shop_artifacts", "unlocked", "achievements", "battles", "actions_taken"):
            setattr(new, name, list(getattr(self, name)))
        new.board = dict(self.board)
        new.artifacts = dict(self.artifacts)
        new.pending = None if self.pending is None else self.pending.copy()
        new.boss_schedule = {k: list(v) for k, v in self.boss_schedule.items()}
        if with_rng and self.rng is not None:
            new.rng = np.random.Generator(type(self.rng.bit_generator)())
            new.rng.bit_generator.state = self.rng.bit_generator.state
        else:
            new.rng = None
        return new

    # -- JSON ----------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        geo = geometry(self.rules.radius)
        return {
            "version": STATE_VERSION,
            "rules_hash": self.rules.hash,
            "seed": self.seed, "rank": self.rank, "round": self.round, "mana": self.mana,
            "hand": [[k, g] for k, g in self.hand],
            "board": {geo.name(c): [k, g] for c, (k, g) in sorted(self.board.items())},
            "artifacts": {geo.name(c): a for c, a in sorted(self.artifacts.items())},
            "artifact_inventory": list(self.artifact_inventory),
            "hand_slots": self.hand_slots, "artifact_slots": self.artifact_slots,
            "open_sectors": list(self.open_sectors), "core": self.core,
            "sun_element": self.sun_element, "relics": list(self.relics), "lamps": self.lamps,
            "lamp_saves": self.lamp_saves, "wins": self.wins, "losses": self.losses,
            "draws": self.draws, "hp_bonus": self.hp_bonus,
            "shop_runes": list(self.shop_runes), "shop_artifacts": list(self.shop_artifacts),
            "pending": None if self.pending is None else self.pending.to_json(),
            "boss_schedule": {str(k): list(v) for k, v in sorted(self.boss_schedule.items())},
            "prep_actions": self.prep_actions, "unlocked": list(self.unlocked),
            "over": self.over, "cleared": self.cleared, "achievements": list(self.achievements),
            "units_bought": self.units_bought, "units_sold": self.units_sold,
            "battles": [b.to_json() for b in self.battles],
            "actions_taken": list(self.actions_taken),
            "rng": _jsonable(self.rng.bit_generator.state),
            # only in a duel's runs: one-player saved runs keep their old keys
            **({"choice_seed": self.choice_seed} if self.choice_seed is not None else {}),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: dict[str, Any], rules: Rules | None = None) -> "RunState":
        rules = rules or default_rules()
        if not isinstance(data, dict):
            raise RunStateError("a saved run is a JSON object")
        if data.get("version") != STATE_VERSION:
            raise RunStateError(f"saved run version {data.get('version')!r}; this rune-env "
                                f"reads version {STATE_VERSION}")
        if data.get("rules_hash") != rules.hash:
            raise RunStateError(f"saved run was played under rules {data.get('rules_hash')!r}, "
                                f"not the current rules {rules.hash!r}")
        _check_counts(data)
        geo = geometry(rules.radius)
        try:
            rng = np.random.Generator(np.random.PCG64())
            rng.bit_generator.state = data["rng"]
            state = cls(
                rules=rules, seed=int(data["seed"]), rank=int(data["rank"]), rng=rng,
                round=int(data["round"]), mana=int(data["mana"]),
                hand=[(k, int(g)) for k, g in data["hand"]],
                board={geo.parse(c): (k, int(g)) for c, (k, g) in data["board"].items()},
                artifacts={geo.parse(c): a for c, a in data["artifacts"].items()},
                artifact_inventory=list(data["artifact_inventory"]),
                hand_slots=int(data["hand_slots"]), artifact_slots=int(data["artifact_slots"]),
                open_sectors=[int(s) for s in data["open_sectors"]], core=data["core"],
                sun_element=data["sun_element"], relics=list(data["relics"]),
                lamps=int(data["lamps"]), lamp_saves=int(data["lamp_saves"]),
                wins=int(data["wins"]), losses=int(data["losses"]), draws=int(data["draws"]),
                hp_bonus=float(data["hp_bonus"]), shop_runes=list(data["shop_runes"]),
                shop_artifacts=list(data["shop_artifacts"]), pending=None,
                boss_schedule={int(k): list(v) for k, v in data["boss_schedule"].items()},
                prep_actions=int(data["prep_actions"]), unlocked=list(data["unlocked"]),
                over=bool(data["over"]), cleared=bool(data["cleared"]),
                achievements=list(data["achievements"]),
                units_bought=int(data["units_bought"]), units_sold=int(data["units_sold"]),
                battles=[BattleSummary.from_json(b) for b in data["battles"]],
                actions_taken=[int(a) for a in data["actions_taken"]],
                choice_seed=None if data.get("choice_seed") is None else int(data["choice_seed"]),
            )
            pending = data["pending"]
        except (KeyError, TypeError, ValueError) as exc:
            raise RunStateError(f"saved run is malformed: {type(exc).__name__}: {exc}") from None
        state.pending = None if pending is None else PendingChoice.from_json(pending)
        _check_content(state)
        return state

    @classmethod
    def loads(cls, text: str, rules: Rules | None = None) -> "RunState":
        # the pools' and boards' bounds: nesting, huge integers, NaN (a save file travels too)
        return cls.from_json(load_json(text, "saved run", RunStateError), rules)


def _check_counts(data: dict[str, Any]) -> None:
    """The whole-number fields of a saved run (SAVED_COUNTS; choice_seed, when present and not
    None, a seed): Python or numpy integers (not bools, floats or strings) in their bounds,
    else a RunStateError naming the key, so a hostile number is refused at load, not at the
    next step's observation."""
    fields = SAVED_COUNTS + ((("choice_seed", 0, None),)
                             if data.get("choice_seed") is not None else ())
    for key, lo, hi in fields:
        if key not in data:
            raise RunStateError(f"saved run is malformed: no {key!r}")
        value = data[key]
        whole = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
        if not whole or value < lo or (hi is not None and value > hi):
            want = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            problem = "is out of range" if whole else "is malformed"
            raise RunStateError(f"saved run {problem}: {key} must be a whole number {want}; got "
                                f"{shown(value)}")
    actions = data.get("actions_taken")
    if isinstance(actions, list) and not all(
            isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_))
            and 0 <= a <= COUNT_MAX for a in actions):
        raise RunStateError(f"saved run is malformed: actions_taken must be a list of action "
                            f"ids 0..{COUNT_MAX}")


def _check_content(state: RunState) -> None:
    """Refuse a saved run whose content breaks the rules (hand-edited or corrupt files)."""
    from ..rules.board import BoardError
    from ..rules.config import KINDS
    spec = state.rules.spec
    try:
        state.to_board().validate(state.rules)
    except BoardError as exc:
        raise RunStateError(f"saved run has an impossible board: {exc}") from None
    checks = [
        ("artifact_inventory", state.artifact_inventory, spec.artifacts),
        ("shop_runes", [o for o in state.shop_runes if o is not None], KINDS),
        ("shop_artifacts", [o for o in state.shop_artifacts if o is not None], spec.artifacts),
        ("unlocked", state.unlocked, KINDS),
        ("boss_schedule", [b for v in state.boss_schedule.values() for b in v], spec.boss_rules),
    ]
    for key, values, known in checks:
        for v in values:
            if not isinstance(v, str) or v not in known:      # a list is unhashable: not a name
                raise RunStateError(f"saved run: {key}: unknown {shown(v)}")
    # the shop has its fixed slots (a bought offer leaves None): the observation and the mask
    # are written slot by slot into arrays of the rules' sizes, so a longer shop wrote past them
    for key, offers, size in (("shop_runes", state.shop_runes, spec.run.shop_rune_offers),
                              ("shop_artifacts", state.shop_artifacts,
                               spec.run.shop_artifact_offers)):
        if len(offers) != size:
            raise RunStateError(f"saved run: {key}: {len(offers)} offers; the rules' shop has "
                                f"{size}")
    if not state.unlocked or len(set(state.unlocked)) != len(state.unlocked):
        raise RunStateError("saved run: unlocked: the shop's kinds, at least one, each once")
    _check_pending(state)
    if not 0 <= state.rank < len(spec.ranks):
        raise RunStateError(f"saved run: rank {state.rank} out of range")
    if len(state.hand) > state.hand_slots or state.hand_slots > spec.run.hand_slots_max:
        raise RunStateError("saved run: more hand runes or slots than the rules allow")
    if state.artifacts_held > state.artifact_slots \
            or state.artifact_slots > spec.run.artifact_slots_max:
        raise RunStateError("saved run: more artifacts or artifact slots than the rules allow")
    if state.mana < 0 or state.lamps < 0 or state.round < 1:
        raise RunStateError("saved run: negative mana or lamps, or a round below 1")


def _check_pending(state: RunState) -> None:
    """A saved pending choice (and its queue) offers what the run could offer: 1 .. the rules'
    number of options (a core choice: the cores), distinct, each one of its kind's names (a
    reward: a category of REWARD_CATEGORIES, an artifact's naming a known artifact)."""
    from .rewards import ARTIFACT, REWARD_CATEGORIES, RewardOption
    if state.pending is None:
        return
    spec = state.rules.spec
    most = {"core": len(spec.cores), "reward": spec.run.reward_choices,
            "relic": spec.run.relic_choices}

    def known(kind: str, option: str) -> bool:
        if kind == "core":
            return option in spec.cores
        if kind == "relic":
            return option in spec.relics
        reward = RewardOption.parse(option)
        return reward.category in REWARD_CATEGORIES and (
            reward.artifact in spec.artifacts if reward.category == ARTIFACT
            else reward.artifact is None)
    for choice in [state.pending, *state.pending.queue]:
        options = choice.options
        if not 1 <= len(options) <= most[choice.kind] or len(set(map(shown, options))) != len(options):
            raise RunStateError(f"saved run: pending {choice.kind} choice: 1..{most[choice.kind]} "
                                f"distinct options, got {len(options)}")
        for option in options:
            if not isinstance(option, str) or not known(choice.kind, option):
                raise RunStateError(f"saved run: pending {choice.kind} choice: unknown option "
                                    f"{shown(option)}")


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    return obj
