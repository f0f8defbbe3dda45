"""The search player (`planner`): plans each preparation with the rules and the fast engine.

Each round it searches for a **target**, the board it wants to field, among the boards its run can
reach this round (its runes, artifacts and mana, the shop on display and the rerolls it expects
to need: `agents.search.assets`), by battles against a **reference** population of the round
(`agents.search.reference`: by default the round's metagame and the rank's own pool, half each)
in the seat the run gives it (`agents.search.target`). Then it builds the target action by action
with the shop it meets
(`agents.search.execute`); when the target is reached, or the shop's luck has made it too dear, it
searches once more among the boards it can reach with what is on display now (no rerolls), builds
that, buys copies of its board's kinds that the shop shows with the mana left (reserves now, merges
later: `Executor.spend_down`), and readies. Across rounds it builds towards a **goal**, a board of the metagame a few
rounds ahead (`agents.search.goal`): the goal is a start of each round's search, and the share of
it the target holds is part of the objective, so pieces of a board that is worth nothing until it
is whole are bought when the shop shows them. Its choices:

- the **core** (a run's first choice): the first goal's core; without a goal (`goal=none`, or no
  metagame shipped for the rules), for each offered core, the value of its best target this
  round (the shop on display) plus that of its best target at `core_round`'s player budget from
  scratch (any kind, as if the shop showed everything); the best sum (or `core` if fixed);
- a **reward** or **relic**: each option applied to a private copy of its own state, and the
  target search run on each from the current target; the option whose best board scores best.

It plays fair: it reads its own run (never the run's generator: a private copy used to weigh a
choice has no generator at all, so a reroll or a battle on it would fail loudly), the rules and
public data (the shipped metagame and pools). Every draw of its own comes from generators seeded
by (its seed, the round, a stream), so the same seed gives the same run, bit for bit.

Knobs (`PlannerSettings`; on the command line `planner` or `planner:KEY=VALUE,...`; `planner:strong`
is a named set of them, `agents.search.settings.PRESETS`): `boards` (the
search budget: candidate boards a round's target search may score, each played against every
reference board of the round), `reference` (meta, rank or a pool file, parts joined by +, `@K` for
K rounds ahead), `size` (reference boards a part gives a round), `noise` (the share of its actions
taken uniformly at random among the legal ones: the strength dial for building ranks), `core` (a
fixed core), `goal` (meta or none), `goal_weight` (how much the goal's share held weighs against
this round's battles: large, a player that follows the goal), `goal_lead` (how many rounds ahead a
goal is drawn from), `waste_weight` (how much mana lost for good, rerolls and sales below the price
paid, weighs per round's income: `agents.search.scoring`) and `goal_from` (the first round whose
search weighs the goal, or `auto`, the default: 3 in a run, 1 in a duel); before it the goal is
still a start of the search and still picks the core, but the round's battles alone decide. At
archmage, whose runs are decided in rounds 1-2, weighing the goal from round 1 cost the planner
about a quarter of its wins; in the duel, weighing it from round 3 cost it duels (`GOAL_FROM_RUN`).
`meta` (`auto`, the default: the metagame shipped for the rules; or a pool file, such as
`scripts/metagame.py --rules FILE --out DIR` writes for a designer's rules) is the metagame of
the reference's `meta` part and of the goal; where none is shipped for the rules, `auto` warns
and the player drafts its reference and has no goal.
`align` (0, off, by default) is a teacher's knob: the battle points it gives up to keep a rune or
artifact where the board already holds it rather than where its own search put it (`align_target`),
so that, labelling a learner's states, it does not ask for every placement but its own to be
undone. `seed_from` (run, the default, or state) is another: with `state` its searches draw from a
hash of what it sees (`public_state_seed`) and its reference from a fixed seed, so the same state
gets the same plan in every run, the consistency a student that sees only the state needs.
`roll` (0, off, by default) replaces the target's own reroll plans by a lookahead at each view of
the shop: stand with what is on display, or build a part of the board and roll once more, judged
on `roll` views of the shop the player draws itself (`agents.search.rolling`); each search of
that decision has `roll_share` of `boards`, or with `roll_view_share` (none, the same, by default)
the searches that weigh the stand and the views have that share and the commits `roll_share`;
with `roll_halving=1` its commits race over the views (successive halving: about half the
searches, the same decision whenever the best commit survives).
Three bounds on the lookahead: `roll_until` (none by default) its last round, the rounds after it
rolling by the target's own plans; `roll_cap` (none by default) rerolls a round at most, so a
round's roll decisions, and its time, are bounded; `spend_floor` (0, off, by default) lets it weigh a
reroll only while its holdings plus the mana left after it are that share of the mana its run has
had (`agents.search.spending`: the mana the 85% spending line counts, kept as its own book).
`ahead` (0, off, by default) picks the board to build among the search's best boards of distinct
holdings by this round's value plus the next round's, searched on `ahead` views of the next
round's shop the player draws itself (`agents.search.ahead`), each with `ahead_share` of `boards`.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import replace

import numpy as np

from rune_env.battle.fast import warm_up
from rune_env.rules import Board, Rules, default_rules
from rune_env.run.actions import action_table
from rune_env.run.loop import apply
from rune_env.run.state import RunState

from .ahead import pick_ahead
from .assets import Assets, private_copy
from .boards import Layout, fast_key
from .execute import Executor
from .goal import Goals, progress
from .rolling import own_views, roll_choice
from .reference import Reference, ReferenceSpec, load_metagame, player_budget, seen_boards
from .scoring import SeatScore, SeatScorer, expected_seat
from .settings import PlannerSettings
from .spending import ManaBook
from .target import ClimbSettings, align_target, search_target

# Seed streams of the player's generators: [seed, round, stream, ...].
_NOISE, _PLAN, _SETTLE, _CORE, _GOAL, _CHOICE = range(6)
_ROLL = 99          # past every _CHOICE + option (a choice's streams), so no other seed moved
_AHEAD = 98         # likewise, for the look a round ahead
SCORERS_KEPT = 4    # scorers remembered (this round's, the next round's for `ahead`)
_UNLOADED = object()     # the metagame not read yet (None is an answer: none for these rules)


class PlannerAgent:
    """The search player on the agent protocol (`act(obs, mask, state=...)`, `reset(seed)`)."""

    needs_state = True

    def __init__(self, rules: Rules | None = None, seed: int | None = 0,
                 settings: PlannerSettings | None = None):
        self.rules = rules or default_rules()
        self.settings = (settings or PlannerSettings()).check(self.rules)
        self.table = action_table(self.rules)
        self.executor = Executor(self.rules)
        self.book = ManaBook(self.rules, self.table)      # the mana had, for `spend_floor`
        self._references: dict[int, Reference] = {}
        self._goal_source: Goals | None = None
        self._metagame_pool = _UNLOADED       # `_metagame`: read once, shared by reference and goal
        # the kernel loaded now, not in the first decision, and its objects kept out of the
        # garbage collector's walks (`warm_up`): both would count in a round's time
        warm_up(self.rules)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = int(seed or 0)
        self.noise_rng = np.random.default_rng([self.seed, 0, _NOISE])
        # the references were built with the previous run's seed: a run's choices must depend on
        # its own seed only, not on which run this planner played first (in one process, or
        # split over workers)
        for reference in self._references.values():
            reference.reseed(self._reference_seed())
        self._round: tuple | None = None
        self._target: Layout | None = None
        self._target_points = 0.0                          # the plan's battle points
        self._goal: tuple[Layout, int] | None = None      # (the goal, its round)
        self._settled = False
        self._roll_next = False                            # roll once the commit is built
        self._view = False                                 # a view of the shop not yet weighed
        self._round_rolls = 0                              # the lookahead's rerolls this round
        self._rolling = False                              # the lookahead decides this round
        self.book.reset()
        self._scorers: dict[tuple, SeatScorer] = {}     # by reference key, the latest last
        self.decision_times: list[tuple[int, float]] = []  # (round, CPU seconds deciding)

    # -- the protocol -----------------------------------------------------------------------------
    def act(self, observation, action_mask, state: RunState | None = None) -> int:
        action = self.advise(observation, action_mask, state)
        self.book.note(state, action)
        return action

    def advise(self, observation, action_mask, state: RunState | None = None) -> int:
        """The action it would take from `state`, not recorded as taken (`act` is this and the
        record): a hint to a player it advises (rune_env/terminal/hints.py), who may take
        another, which `watch` then records."""
        if state is None:
            raise ValueError("the planner needs the run state: "
                             "act(obs, mask, state=env.unwrapped.state)")
        mask = np.asarray(action_mask, dtype=bool)
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action")
        self.book.observe(state)
        return self._act(state, mask, legal)

    def planned_board(self, state: RunState) -> Board | None:
        """The board it is building toward in `state`'s round (its target, as its last decision
        left it), or None before its first decision of the round. The terminal game's `plan`."""
        if self._target is None or self._round != (state.round, len(state.battles)):
            return None
        return self._target.board(self.rules, state.round)

    def watch(self, state: RunState, action: int) -> None:
        """`action` is taken from `state` by the player it advises: recorded as if its own (the
        mana had, for `spend_floor`)."""
        self.book.observe(state)
        self.book.note(state, action)

    def _act(self, state: RunState, mask: np.ndarray, legal: np.ndarray) -> int:
        if self.settings.noise > 0 and self.noise_rng.random() < self.settings.noise:
            return int(legal[int(self.noise_rng.integers(len(legal)))])
        start = time.process_time()
        try:
            if state.pending is not None:
                return self._choose(state, mask)
            return self._prepare(state, mask)
        finally:
            self._count_time(state.round, time.process_time() - start)

    def _draw_seed(self, state: RunState) -> int:
        """The seed of a search's generator: the player's own, or with `seed_from=state` one
        drawn from what it sees (the same state, the same search, whatever the run's seed)."""
        return self.seed if self.settings.seed_from == "run" else public_state_seed(state)

    def _reference_seed(self) -> int:
        """The reference's seed: the player's, or with `seed_from=state` a fixed one (0), so
        that the reference too is the same in every run."""
        return self.seed if self.settings.seed_from == "run" else 0

    def _count_time(self, round_: int, seconds: float) -> None:
        if self.decision_times and self.decision_times[-1][0] == round_:
            self.decision_times[-1] = (round_, self.decision_times[-1][1] + seconds)
        else:
            self.decision_times.append((round_, seconds))

    # -- preparation ------------------------------------------------------------------------------
    def _prepare(self, state: RunState, mask: np.ndarray) -> int:
        ready = self.table.id("ready")
        key = (state.round, len(state.battles))
        if key != self._round:
            self._round, self._settled = key, False
            self._update_goal(state)
            self._rolling = self._rolls_in(state.round)
            if self._rolling:
                self._view, self._roll_next, self._round_rolls = True, False, 0
            else:
                self._target = self.plan(state, rerolls=True)
        if self._rolling:
            return self._rolling_action(state, mask)
        if not self._settled and state.prep_actions >= state.rules.spec.run.action_cap - 8:
            self._settle(state)       # the round's cap is near: finish with what is on display
        a = self._next_action(state, mask)
        if a is None and not self._settled:
            self._settle(state)
            a = self._next_action(state, mask)
        if a is None:
            a = self.executor.spend_down(state, mask)
        return ready if a is None else int(a)

    def _rolling_action(self, state: RunState, mask: np.ndarray) -> int:
        """With `roll`: at each view of the shop, stand or roll (`agents.search.rolling`); build
        the stand board, or the commit and then the reroll; the executor never rolls itself."""
        if self._view:
            self._view, self._settled = False, True
            choice = self._roll_choice(state)
            self._roll_next = choice.roll
            self._target = choice.target
            if not choice.roll:
                self._stand(state)
        a = self._next_action(state, mask)
        reroll = self.table.id("reroll")
        if a is None and self._roll_next:
            self._roll_next = False
            if mask[reroll]:
                self._view = True
                self._round_rolls += 1
                return reroll
            self._stand(state)
            a = self._next_action(state, mask)
        if a is None:
            a = self.executor.spend_down(state, mask)
        return self.table.id("ready") if a is None else int(a)

    def _stand(self, state: RunState) -> None:
        """With `roll`: the board to stand with, searched again with the whole budget from the
        current target (what is on display, no rerolls)."""
        self._target = self.plan(state, rerolls=False, stream=_SETTLE)

    def _roll_choice(self, state: RunState):
        scorer = self._scorer(state)
        starts = self._starts(state, scorer)
        settings = self._climb(self.settings.roll_share, state.round, duel=state.in_duel)
        view_share = self.settings.roll_view_share
        weighing = settings if view_share is None else \
            self._climb(view_share, state.round, duel=state.in_duel)
        seed = [self._draw_seed(state), state.round, _ROLL, state.prep_actions]

        def searcher(climb):
            def search(assets: Assets, tail: tuple):
                rng = np.random.default_rng([*seed, *tail])
                return search_target(assets, scorer, starts, climb, rng, False, self.goal)
            return search

        # the views' seed tail (3,) is none of the searches' (0,), (1, j) and (2, commit, view)
        # with no views to weigh (`_may_roll` false) the decision is to stand
        views = own_views(state, self.settings.roll, np.random.default_rng([*seed, 3])) \
            if self._may_roll(state) else []
        return roll_choice(state, searcher(settings), self.executor, settings.objective, views,
                           halving=self.settings.roll_halving, weigh=searcher(weighing))

    def _rolls_in(self, round_: int) -> bool:
        """Whether the lookahead (`roll`) decides the rerolls of round `round_` (up to
        `roll_until`); else the target's own reroll plans do."""
        until = self.settings.roll_until
        return bool(self.settings.roll) and (until is None or round_ <= until)

    def _may_roll(self, state: RunState) -> bool:
        """Whether the lookahead may weigh one more reroll this round: under `roll_cap` rerolls
        so far, and one more keeping the holdings plus the mana left at least `spend_floor` of
        the mana had (`agents.search.spending`)."""
        cap = self.settings.roll_cap
        if cap is not None and self._round_rolls >= cap:
            return False
        return self.book.may_roll(state, self.settings.spend_floor)

    def _next_action(self, state: RunState, mask: np.ndarray) -> int | None:
        """The executor's next action towards the target, the target first aligned with the
        board as it stands when `align` is on (after every plan: a new plan is free to put a
        piece elsewhere again)."""
        if self.settings.align > 0:
            self._target = align_target(Assets.of(state), self._target, self._scorer(state),
                                        self._target_points - self.settings.align)
        return self.executor.next_action(state, self._target, mask, rerolls=not self._settled)

    def _settle(self, state: RunState) -> None:
        self._settled = True
        self._target = self.plan(state, rerolls=False, share=self.settings.settle_share,
                                 stream=_SETTLE)

    def plan(self, state: RunState, rerolls: bool, share: float = 1.0,
             stream: int = _PLAN) -> Layout:
        """The target of this preparation (the module docstring)."""
        assets = Assets.of(state)
        scorer = self._scorer(state)
        starts = self._starts(state, scorer)
        settings = self._climb(share, state.round, duel=state.in_duel)
        rng = np.random.default_rng([self._draw_seed(state), state.round, stream,
                                     state.prep_actions])
        scored = [] if self.settings.ahead else None
        target, score = search_target(assets, scorer, starts, settings, rng, rerolls, self.goal,
                                      scored)
        if scored:
            target, score = self._ahead(state, scored) or (target, score)
        self._target_points = score.payoff
        return target

    def _ahead(self, state: RunState, scored: list):
        """With `ahead`: the finalist of a round's search whose next round looks best
        (`agents.search.ahead`), searched on the player's own views of the next round's shop."""
        seed = [self._draw_seed(state), state.round, _AHEAD, state.prep_actions]
        views = own_views(state, self.settings.ahead, np.random.default_rng([*seed, 0]))
        settings = self._climb(self.settings.ahead_share, state.round + 1, duel=state.in_duel)

        def search(nxt: RunState, tail: tuple) -> SeatScore:
            scorer = self._scorer(nxt)
            rng = np.random.default_rng([*seed, 1, *tail])
            _, score = search_target(Assets.of(nxt), scorer, self._reference_starts(nxt, scorer),
                                     settings, rng, True, self.goal)
            return score

        return pick_ahead(state, scored, search, views)

    def _starts(self, state: RunState, scorer: SeatScorer) -> list[Layout]:
        """A preparation's search starts: the current target (if any), then the reference's."""
        starts = [self._target] if self._target is not None else []
        return starts + self._reference_starts(state, scorer)

    def _climb(self, share: float, round_: int, duel: bool = False) -> ClimbSettings:
        """The climb's settings for `share` of the search budget, with the goal's weight in
        round `round_` (0 before the goal's first round, `PlannerSettings.goal_start`)."""
        climb = self.settings.climb
        weight = self.settings.goal_weight if round_ >= self.settings.goal_start(duel) else 0.0
        return replace(climb, boards=int(self.settings.boards * share),
                       objective=replace(climb.objective, goal_weight=weight,
                                         waste_weight=self.settings.waste_weight))

    # -- the goal ---------------------------------------------------------------------------------
    @property
    def goal(self) -> Layout | None:
        return None if self._goal is None else self._goal[0]

    def _goals(self) -> Goals | None:
        if self.settings.goal == "none":
            return None
        if self._goal_source is None:
            self._goal_source = Goals(self.rules, self._metagame(), self.settings.goal_lead)
        return self._goal_source

    def _metagame(self):
        """The metagame (`settings.meta`: `load_metagame`), read once for the goal and for every
        rank's reference, so a missing one is reported once."""
        if self._metagame_pool is _UNLOADED:
            self._metagame_pool = load_metagame(self.rules, self.settings.meta)
        return self._metagame_pool

    def _update_goal(self, state: RunState) -> None:
        """A first goal, or the next one once the run holds all of the goal (drawn from a round
        after the goal's own, so a goal reached early is followed by a larger one at once), or
        once the goal's round has passed (the goal module's docstring)."""
        goals = self._goals()
        if goals is None or state.core is None:
            return
        owned = Assets.of(state).layout()
        if self._goal is not None:
            held = progress(self._goal[0], owned, self.rules) >= 1.0
            if not held and state.round <= self._goal[1]:
                return
            after = max(state.round, self._goal[1] + 1 - goals.lead) if held else state.round
        else:
            after = state.round
        rng = np.random.default_rng([self._draw_seed(state), state.round, _GOAL])
        self._goal = goals.pick(after, state.core, owned, rng) or self._goal

    def _reference(self, state: RunState) -> Reference:
        if state.rank not in self._references:
            spec = ReferenceSpec(self.settings.reference, self.settings.size,
                                 meta=self.settings.meta)
            self._references[state.rank] = Reference(self.rules, spec, state.rank,
                                                     self._reference_seed(), self._metagame)
        return self._references[state.rank]

    def _scorer(self, state: RunState) -> SeatScorer:
        """The scorer of the state's round: its reference boards in its seat. The searches of one
        preparation (the target's, the settling one, each option of a reward or relic) that face
        the same reference share one scorer, so a board one of them played is not played again:
        the scores are the same (a board's battles are a function of its content, the key of the
        scorer's memory), only fewer battles are fought."""
        seen, seen_weights = seen_boards(state, self.settings.seen)
        key = (state.rank, state.round, tuple(state.boss_rules), expected_seat(state),
               tuple(fast_key(b) for b in seen), seen_weights.tobytes())
        if key in self._scorers:
            return self._scorers[key]
        boards, weights = self._reference(state).boards(state.round, tuple(state.boss_rules))
        if seen:
            # the opponents met so far, fielded in this round, as one more part of the reference
            parts = len(self._reference(state).parts)
            boards = [*boards, *seen]
            weights = np.concatenate([weights * parts, seen_weights]) / (parts + 1)
        scorer = SeatScorer(self.rules, boards, weights, expected_seat(state))
        self._scorers[key] = scorer
        if len(self._scorers) > SCORERS_KEPT:
            del self._scorers[next(iter(self._scorers))]
        return scorer

    @staticmethod
    def _reference_starts(state: RunState, scorer: SeatScorer) -> list[Layout]:
        return [Layout.of(b).in_core(state.core) for b in scorer.boards]

    # -- choices ----------------------------------------------------------------------------------
    def _choose(self, state: RunState, mask: np.ndarray) -> int:
        pending = state.pending
        group = pending.group
        options = [i for i in range(len(pending.options)) if mask[self.table.id(group, i)]]
        if pending.kind == "core":
            return self.table.id(group, self._core_choice(state, options))
        best, best_key = options[0], None
        for i in options:
            trial = private_copy(state)
            apply(trial, self.table.id(group, i))
            if trial.pending is not None:       # a queued choice after this one: weigh it as is
                trial.pending = None
            found = self.plan_score(trial, self.settings.choice_share, _CHOICE + i)
            if best_key is None or found.key() > best_key:
                best, best_key = i, found.key()
        return self.table.id(group, best)

    def plan_score(self, state: RunState, share: float, stream: int,
                   assets: Assets | None = None) -> SeatScore:
        """The score of the best target found for `state` (a private copy) with `share` of the
        search budget (from `assets`, default the state's own)."""
        assets = assets or Assets.of(state)
        scorer = self._scorer(state)
        starts = [self._target] if self._target is not None else []
        settings = self._climb(share, state.round, duel=state.in_duel)
        rng = np.random.default_rng([self._draw_seed(state), state.round, stream])
        _, score = search_target(assets, scorer, starts, settings, rng, rerolls=True)
        return score

    def _core_choice(self, state: RunState, options: list[int]) -> int:
        cores = self.table.cores
        if self.settings.core is not None:
            fixed = [i for i in options if cores[i] == self.settings.core]
            if fixed:
                return fixed[0]
        goals = self._goals()
        if goals is not None:
            rng = np.random.default_rng([self._draw_seed(state), state.round, _GOAL])
            self._goal = goals.pick(state.round, None, None, rng)
            if self._goal is not None and self._goal[0].core in cores:
                wanted = cores.index(self._goal[0].core)
                if wanted in options:
                    return wanted
            self._goal = None
        round_ = self.settings.core_round
        share = 0.5 / max(1, len(options))
        best, best_value = options[0], None
        for i in options:
            now = private_copy(state)
            apply(now, self.table.id("choose_core", i))
            later = private_copy(now)
            later.round = round_
            later.mana = player_budget(self.rules, round_)
            # this round with the shop on display, and a later round's budget from scratch
            value = (self.plan_score(now, share, _CORE).value
                     + self.plan_score(later, share, _CORE, Assets.of(later).shopping_freely()).value)
            if best_value is None or value > best_value + 1e-12:
                best, best_value = i, value
        return best


def public_state_seed(state: RunState) -> int:
    """A seed drawn from the run as its player sees it (rank, round, mana, lamps and record, its
    core, runes, artifacts, relics and sectors, the shop on display, the kinds unlocked, the next
    boss's rules), never from the run's generator. Why (`seed_from=state`): a planner whose
    searches draw from its own seed answers like states with unlike plans (it agrees with itself
    under another seed on 15% of its actions at archmage, 25% with align: docs/RESULTS.md, "How
    clonable is the planner"), and a student that sees only the state averages them."""
    seen = (state.rank, state.round, state.mana, state.lamps, state.wins, state.losses,
            state.draws, state.core, state.sun_element, tuple(state.hand),
            tuple(sorted(state.board.items())), tuple(sorted(state.artifacts.items())),
            tuple(state.artifact_inventory), tuple(sorted(state.open_sectors)),
            tuple(state.relics), tuple(state.shop_runes), tuple(state.shop_artifacts),
            tuple(state.unlocked), tuple(state.boss_rules), state.hand_slots,
            state.artifact_slots)
    return int.from_bytes(hashlib.blake2b(repr(seen).encode(), digest_size=8).digest(), "little")


__all__ = ["PlannerAgent", "PlannerSettings", "parse_planner", "private_copy"]
