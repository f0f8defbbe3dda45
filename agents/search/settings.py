"""The search player's knobs (`PlannerSettings`) and their names on the command line
(`parse_planner`: `planner`, `planner:KEY=VALUE,...`, or a named set of knobs, `planner:strong`,
with knobs after it that win over its own: `PRESETS`). What each knob does is in the module
docstring of `agents.search.planner`; none is a number of the game.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from rune_env.rules import Rules

from agents.names import PLANNER, parse_knobs

from .ahead import VIEWS_AHEAD_MAX
from .reference import AHEAD_MAX, META_AUTO, check_meta, parse_source
from .rolling import ROLL_MAX
from .scoring import Objective
from .target import ClimbSettings

BOARDS_BOUNDS = (10, 1_000_000)
GOAL_SOURCES = ("meta", "none")
SEED_SOURCES = ("run", "state")
OBJECTIVE_WEIGHT_MAX = 100.0     # the bound of goal_weight and waste_weight
# The goal's first round by default (`goal_from=auto`), measured in the twenty-second session
# (docs/RESULTS.md, "The search player"). In a run the ghosts of rounds 1-2 are drafted boards at
# the rank's budget and decide archmage's runs: weighing the goal from round 3 won 0.435 wins a
# run at archmage against 0.33 from round 1 (seeds 0-3, 800 runs), 0.192 of its battles against
# 0.139. In a duel the opponent builds from scratch too, and the goal's early pieces pay in the
# longer game: from round 1 it won 312 of 350 duels (league_s0 and the three apprentice PPO
# seeds), from round 3 290.
GOAL_FROM_RUN = 3
GOAL_FROM_DUEL = 1
SIZE_BOUNDS = (1, 256)
# Named knob sets: `planner:NAME`, or `planner:NAME,KEY=VALUE,...` (the knobs given win over the
# preset's). `strong` is the setting docs/RESULTS.md calls X ("The archmage line, in short"):
# it beats every PPO seed and greedy at archmage by mean wins at each of five seeds, spends
# 0.88-0.97 of the mana had from round 3 and wins 0.90 of its duels against league_s0, within
# 1 s a round on one core. Not the default: the default drafts the shipped pools and teaches
# the clones, in about a third of the time a round.
PRESETS = {"strong": "roll=8,roll_halving=1,spend_floor=0.87,roll_cap=1,roll_until=3"}


@dataclass(frozen=True)
class PlannerSettings:
    """The search player's knobs (the module docstring of `agents.search.planner`); none is a
    number of the game."""

    boards: int = 600              # candidate boards a round's target search may score
    settle_share: float = 0.34     # of `boards`, for the search with what is on display
    choice_share: float = 0.25     # of `boards`, for each option of a reward or relic choice
    reference: str = "meta+rank"
    size: int = 16
    noise: float = 0.0
    core: str | None = None
    seen: int = 2                  # the last opponents met, a part of the reference (0: none)
    goal: str = "meta"             # meta: build towards a metagame board (goal.py); none
    meta: str = META_AUTO          # the metagame of the reference's meta part and of the goal:
    #                                auto (the one shipped for the rules) or a pool file
    goal_lead: int = 2             # rounds ahead of the current one a goal is drawn from
    goal_weight: float = Objective.goal_weight     # the weight of the goal's share held
    # the weight of mana lost for good, per income; lower rolls more: later boards win more but
    # cost less of the mana had (0.05: 0.73-0.82; docs/RESULTS.md, "Where the gap is")
    waste_weight: float = Objective.waste_weight
    goal_from: int | None = None   # the first round whose search weighs the goal (weight 0 before);
    #                                None (`auto`): GOAL_FROM_RUN in a run, GOAL_FROM_DUEL in a duel
    core_round: int = 6            # the round whose budget weighs the cores
    align: float = 0.0             # battle points a move onto the board's own cells may cost
    #                                (0: off; a teacher's knob, `align_target`)
    seed_from: str = "run"         # run: its searches draw from its seed; state: from what it
    #                                sees (`public_state_seed`; a teacher's knob)
    roll: int = 0                  # views of its own a roll decision draws (`agents.search.
    #                                rolling`); 0: off, the target's own reroll plans
    roll_share: float = 0.34       # of `boards`, for each search of a roll decision (its stand,
    #                                commits and views alike, so they are compared on one budget)
    roll_view_share: float | None = None   # of `boards`, for the searches that weigh the stand
    #                                and the views, the commits keeping `roll_share` (None: the
    #                                same); the views are most of a decision's searches, and the
    #                                commits are what it builds
    roll_halving: bool = False     # the commits race over the views (successive halving), about
    #                                half the searches (`agents.search.rolling`)
    roll_until: int | None = None  # the lookahead's last round (None: every round); the rounds
    #                                after it roll by the target's own plans
    roll_cap: int | None = None    # the lookahead's rerolls a round at most (None: no cap): a
    #                                bound on a round's roll decisions, so on its time
    spend_floor: float = 0.0       # the lookahead rolls only while its holdings plus the mana left
    #                                after the reroll are this share of the mana had (0: off;
    #                                `agents.search.spending`)
    ahead: int = 0                 # views of the next round's shop a finalist is weighed on
    #                                (`agents.search.ahead`); 0: off, this round's value alone
    ahead_share: float = 0.2       # of `boards`, for each search of the next round
    climb: ClimbSettings = field(default_factory=ClimbSettings)

    def check(self, rules: Rules) -> "PlannerSettings":
        """The settings, or ValueError naming the knob out of its bounds."""
        lo, hi = BOARDS_BOUNDS
        if not lo <= self.boards <= hi:
            raise ValueError(f"planner: boards must be in {lo}..{hi}; got {self.boards}")
        lo, hi = SIZE_BOUNDS
        if not lo <= self.size <= hi:
            raise ValueError(f"planner: size must be in {lo}..{hi}; got {self.size}")
        if not 0 <= self.goal_lead <= AHEAD_MAX:
            raise ValueError(f"planner: goal_lead must be in 0..{AHEAD_MAX}; got {self.goal_lead}")
        if not 0.0 <= self.goal_weight <= OBJECTIVE_WEIGHT_MAX:
            raise ValueError(f"planner: goal_weight must be in 0..{OBJECTIVE_WEIGHT_MAX}; got "
                             f"{self.goal_weight}")
        if not 0.0 <= self.waste_weight <= OBJECTIVE_WEIGHT_MAX:
            raise ValueError(f"planner: waste_weight must be in 0..{OBJECTIVE_WEIGHT_MAX}; got "
                             f"{self.waste_weight}")
        last = rules.spec.run.round_cap          # a run's last round, as by_round's bound
        if self.goal_from is not None and not 1 <= self.goal_from <= last:
            raise ValueError(f"planner: goal_from must be in 1..{last}; got {self.goal_from}")
        if not 0.0 <= self.align <= 1.0:
            raise ValueError(f"planner: align is a share of battle points between 0 and 1; got "
                             f"{self.align}")
        if not 0 <= self.roll <= ROLL_MAX:
            raise ValueError(f"planner: roll must be in 0..{ROLL_MAX}; got {self.roll}")
        if not 0.0 < self.roll_share <= 1.0:
            raise ValueError(f"planner: roll_share is a share of boards in (0, 1]; got "
                             f"{self.roll_share}")
        if self.roll_view_share is not None and not 0.0 < self.roll_view_share <= 1.0:
            raise ValueError(f"planner: roll_view_share is a share of boards in (0, 1] or none; "
                             f"got {self.roll_view_share}")
        if self.roll_halving not in (False, True):
            raise ValueError(f"planner: roll_halving is 0 or 1; got {self.roll_halving}")
        if self.roll_until is not None and not 1 <= self.roll_until <= last:
            raise ValueError(f"planner: roll_until must be in 1..{last} or none; got "
                             f"{self.roll_until}")
        actions = rules.spec.run.action_cap      # a round's actions, so its rerolls at most
        if self.roll_cap is not None and not 1 <= self.roll_cap <= actions:
            raise ValueError(f"planner: roll_cap must be in 1..{actions} or none; got "
                             f"{self.roll_cap}")
        if not 0.0 <= self.spend_floor <= 1.0:
            raise ValueError(f"planner: spend_floor is a share between 0 and 1; got "
                             f"{self.spend_floor}")
        if not 0 <= self.ahead <= VIEWS_AHEAD_MAX:
            raise ValueError(f"planner: ahead must be in 0..{VIEWS_AHEAD_MAX}; got {self.ahead}")
        if not 0.0 < self.ahead_share <= 1.0:
            raise ValueError(f"planner: ahead_share is a share of boards in (0, 1]; got "
                             f"{self.ahead_share}")
        if not 0.0 <= self.noise <= 1.0:
            raise ValueError(f"planner: noise is a share between 0 and 1; got {self.noise}")
        if self.seed_from not in SEED_SOURCES:
            raise ValueError(f"planner: seed_from is one of {', '.join(SEED_SOURCES)}; got "
                             f"{self.seed_from!r}")
        check_meta(self.meta)
        if self.core is not None and self.core not in rules.spec.cores:
            raise ValueError(f"planner: unknown core {self.core!r} (one of "
                             f"{', '.join(rules.spec.cores)})")
        return self

    def to_json(self) -> dict:
        return {"boards": self.boards, "reference": self.reference, "size": self.size,
                "noise": self.noise, "core": self.core, "goal": self.goal, "meta": self.meta,
                "goal_weight": self.goal_weight, "waste_weight": self.waste_weight,
                "goal_lead": self.goal_lead,
                "goal_from": "auto" if self.goal_from is None else self.goal_from,
                "align": self.align, "seed_from": self.seed_from, "roll": self.roll,
                "roll_share": self.roll_share,
                "roll_view_share": "none" if self.roll_view_share is None else self.roll_view_share,
                "roll_halving": int(self.roll_halving),
                "roll_until": "none" if self.roll_until is None else self.roll_until,
                "roll_cap": "none" if self.roll_cap is None else self.roll_cap,
                "spend_floor": self.spend_floor, "ahead": self.ahead,
                "ahead_share": self.ahead_share}

    def goal_start(self, duel: bool) -> int:
        """The first round whose search weighs the goal, in a duel or in a run."""
        if self.goal_from is not None:
            return self.goal_from
        return GOAL_FROM_DUEL if duel else GOAL_FROM_RUN


def _round_or_auto(value: str) -> int | None:
    """A goal_from value: `auto` (None) or a round number; ValueError otherwise."""
    return None if value == "auto" else int(value)


def _or_none(kind):
    """A knob's parser that also takes `none` (None): roll_until and roll_cap (int),
    roll_view_share (float); ValueError otherwise."""
    return lambda value: None if value == "none" else kind(value)


def _zero_or_one(value: str) -> bool:
    """A switch's value: 0 (off) or 1 (on); ValueError otherwise."""
    if value not in ("0", "1"):
        raise ValueError(value)
    return value == "1"


_KNOB_KINDS = {"boards": int, "size": int, "noise": float, "reference": str, "core": str,
               "goal": str, "meta": str, "goal_weight": float, "waste_weight": float,
               "goal_lead": int, "goal_from": _round_or_auto, "align": float, "seed_from": str,
               "roll": int, "roll_share": float, "roll_view_share": _or_none(float),
               "roll_halving": _zero_or_one,
               "roll_until": _or_none(int), "roll_cap": _or_none(int), "spend_floor": float,
               "ahead": int, "ahead_share": float}
_WANTED = {"goal_from": "a round number or auto", "roll_halving": "0 or 1",
           "roll_until": "a round number or none", "roll_cap": "a whole number or none",
           "roll_view_share": "a number or none"}
_EXAMPLE = "planner:noise=0.2,boards=300"


def parse_planner(name: str, rules: Rules) -> PlannerSettings:
    """`planner`, `planner:KEY=VALUE,...` (keys: boards, reference, size, noise, core, goal,
    meta, goal_weight, waste_weight, goal_lead, goal_from, align, seed_from, roll, roll_share,
    roll_view_share, roll_halving, roll_until, roll_cap, spend_floor, ahead, ahead_share) or
    `planner:PRESET[,KEY=VALUE,...]` (`PRESETS`; the knobs given win over the preset's) ->
    settings;
    ValueError with a one-line reason otherwise."""
    if name == PLANNER:
        return PlannerSettings().check(rules)
    if not name.startswith(PLANNER + ":"):
        raise ValueError(f"not a planner: {name!r}")
    body = name.split(":", 1)[1]
    first, comma, rest = body.partition(",")
    values: dict = {}
    if first.strip() and "=" not in first:
        preset = PRESETS.get(first.strip())
        if preset is None:
            raise ValueError(f"agent {name!r}: {first.strip()!r} is no planner preset; the "
                             f"presets are {', '.join(PRESETS)} (or give KEY=VALUE knobs)")
        values = parse_knobs(name, preset, _KNOB_KINDS, "planner", _EXAMPLE, _WANTED)
        body = rest if comma else None      # `planner:strong,` refused below, as a knob missing
    if body is not None:
        values.update(parse_knobs(name, body, _KNOB_KINDS, "planner", _EXAMPLE, _WANTED))
    if values.get("goal", "meta") not in GOAL_SOURCES:
        raise ValueError(f"agent {name!r}: goal is one of {', '.join(GOAL_SOURCES)}")
    if "reference" in values:
        try:
            parse_source(values["reference"])
        except ValueError as exc:
            raise ValueError(f"agent {name!r}: {exc}") from None
    return replace(PlannerSettings(), **values).check(rules)


__all__ = ["BOARDS_BOUNDS", "GOAL_FROM_DUEL", "GOAL_FROM_RUN", "GOAL_SOURCES",
           "OBJECTIVE_WEIGHT_MAX", "PRESETS", "PlannerSettings", "SEED_SOURCES", "SIZE_BOUNDS",
           "parse_planner"]
