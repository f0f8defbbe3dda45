"""Sampled search: a trained policy improved by search at play time (policy-guided best-of-N).

At the start of each round's preparation, the player plays its policy's preparation `n` times on
private copies of its state, up to the round's battle: the first rollout takes the policy's
greedy actions, the others sample them (a softmax of the legal actions' logits at `temperature`).
Each rollout's board, as it would be fielded, is scored against the round's reference boards in
the seat the run will give it (`agents.search.reference`, `agents.search.scoring`: by default the
rank's shipped pool, the opponents it meets), by its payoff (wins, half the draws) plus `margin` x
its HP-ratio margin; the best rollout wins (the first of equals, so the greedy one on a tie). The
player then plays that rollout's actions for as long as what it sees is what the rollout saw
(the same observation and legal actions), and searches again from where it is when not (a
reroll's offers in a rollout are not the run's).

Why: the policies we train take a good share of their good boards with some probability but not
as their greedy choice; battles against the round's pool pick them out (at archmage, best of 16
rollouts of distill v2 s1 wins a quarter more a run than its greedy play: docs/RESULTS.md,
"Sampled search and expert iteration"). The labels it gives (one of the policy's own
rollouts) are actions the policy can represent, which makes it an expert-iteration teacher for
that policy (scripts/expert_iteration.py, or `pretrain.agent: "sampled:policy=..."` with
`pretrain.init`).

Fair play, as the planner's: the copies carry a generator of the player's own, seeded by its seed
(a run's seed in evaluations), the round and the search, never the run's, so a reroll in a
rollout shows offers the run has not drawn; the opponent's board is never read, and the
reference is public data. The same seed gives the same run.

Knobs: `sampled:policy=PATH,n=16,temperature=1,reference=rank,size=64,margin=0.05,epsilon=1,
core=NAME,waste=0,invest=0` (`parse_sampled`; epsilon: the share of a sampled rollout's steps that
sample, the others greedy; core: the core taken when the run's core is chosen, default the
policy's choice; waste and invest: the planner's thrift in the score, `SampledSettings`).
One-player runs only (RuneRun-v0, RuneDraft-v0): in a duel its policy's observation is not the
run's.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from agents.names import SAMPLED_PREFIX as PREFIX
from agents.names import parse_knobs
from rune_env.envs.observation import Encoder
from rune_env.rules import Rules, default_rules
from rune_env.run.actions import action_table
from rune_env.run.loop import apply
from rune_env.run.state import RunState

from .boards import board_cost
from .reference import Reference, ReferenceSpec, parse_source
from .scoring import Objective, SeatScorer, expected_seat

N_MAX = 1024                 # rollouts a search
SIZE_MAX = 1024              # reference boards a round
TEMPERATURE_MAX = 100.0
MARGIN_MAX = 10.0
WEIGHT_MAX = 10.0            # the waste and invest weights
_SHOP_STREAM = 31            # [seed, round, search, rollout, stream]: a rollout's own draws
_PICK_STREAM = 32            # [seed, round, search, rollout, stream]: its sampled actions
# a rollout's steps: the round's preparation actions (the cap ends it, D-41) and its choices
# (a core, a reward, a relic), with room to spare
_CHOICES = 8


@dataclass(frozen=True)
class SampledSettings:
    policy: str = ""              # an exported policy (.pt) or a saved model (.zip), an MLP
    n: int = 16                   # rollouts a search, the first greedy
    temperature: float = 1.0      # the sampled rollouts' softmax temperature
    reference: str = "rank"       # the boards a rollout's board is scored against (reference.py)
    size: int = 64                # reference boards a round, at most
    margin: float = 0.05          # the HP-ratio margin's weight in a board's score
    # a sampled rollout's share of sampled steps: each step samples with this probability and
    # takes the greedy action otherwise (1: every step samples). Below 1 the best rollout's
    # actions are the greedy ones but for a few deviations, the ones that made its board better:
    # cleaner labels for expert iteration than a rollout sampled throughout
    epsilon: float = 1.0
    # the core to take when the run's core is to be chosen (None: the policy's choice). The
    # search scores a round's boards, so it never trades a weaker first round for a core that
    # grows stronger later (moon, the planner's choice at archmage); this knob makes that choice
    # for it, and in expert iteration teaches it to the policy with the rest
    core: str | None = None
    # the planner's thrift (agents.search.scoring): a rollout's score loses `waste` x the mana it
    # lost for good (rerolls, sales below the price paid) per round of base income, and gains
    # `invest` x the share of its wealth (mana and what its board cost) the board holds. A score
    # of one round's battles alone pays for any reroll that wins a little more now, and the mana
    # is missing from every later board (at archmage the policies' boards hold 0.7 of their mana
    # from round 3, the planner's 0.95). 0 and 0: the rollouts' battles alone, as before the knobs
    waste: float = 0.0
    invest: float = 0.0

    def check(self) -> "SampledSettings":
        if not self.policy:
            raise ValueError("sampled search needs policy=PATH (an exported policy or a saved model)")
        if not Path(self.policy).is_file():
            raise ValueError(f"sampled search: no policy file {self.policy!r}")
        if not 1 <= self.n <= N_MAX:
            raise ValueError(f"sampled search: n is 1..{N_MAX}, got {self.n}")
        if not (math.isfinite(self.temperature) and 0 < self.temperature <= TEMPERATURE_MAX):
            raise ValueError(f"sampled search: temperature is in (0, {TEMPERATURE_MAX:g}], "
                             f"got {self.temperature}")
        if not 1 <= self.size <= SIZE_MAX:
            raise ValueError(f"sampled search: size is 1..{SIZE_MAX}, got {self.size}")
        if not (math.isfinite(self.margin) and 0 <= self.margin <= MARGIN_MAX):
            raise ValueError(f"sampled search: margin is in [0, {MARGIN_MAX:g}], got {self.margin}")
        if not (math.isfinite(self.epsilon) and 0 < self.epsilon <= 1):
            raise ValueError(f"sampled search: epsilon is in (0, 1], got {self.epsilon}")
        for knob in ("waste", "invest"):
            value = getattr(self, knob)
            if not (math.isfinite(value) and 0 <= value <= WEIGHT_MAX):
                raise ValueError(f"sampled search: {knob} is in [0, {WEIGHT_MAX:g}], got {value}")
        parse_source(self.reference)
        return self


def parse_sampled(name: str) -> SampledSettings:
    """`sampled:policy=PATH,n=16,...` -> settings; ValueError with a one-line reason otherwise."""
    if not name.startswith(PREFIX):
        raise ValueError(f"not a sampled search: {name!r}")
    kinds = {"policy": str, "n": int, "temperature": float, "reference": str, "size": int,
             "margin": float, "epsilon": float, "core": str, "waste": float, "invest": float}
    values = parse_knobs(name, name[len(PREFIX):], kinds, "sampled search",
                         "sampled:policy=agents/models/distill_v2_s1.pt,n=16")
    try:
        return replace(SampledSettings(), **values).check()
    except ValueError as exc:
        raise ValueError(f"agent {name!r}: {exc}") from None


def _acting_net(path: str):
    """The policy's acting network as numpy (`agents.policy._ActingNet`): its logits for the
    legal actions of one observation, without torch."""
    from agents.policy import _ActingNet, load_acting_policy
    net = _ActingNet.of(load_acting_policy(path))
    if net is None:
        raise ValueError(f"sampled search: {path} is not a masked MLP policy on flat observations")
    return net


class SampledSearchAgent:
    """Sampled search on the agent protocol (`act(obs, mask, state=...)`, `reset(seed)`)."""

    needs_state = True

    def __init__(self, rules: Rules | None = None, seed: int | None = 0,
                 settings: SampledSettings | None = None):
        self.rules = rules or default_rules()
        self.settings = (settings or SampledSettings()).check()
        from agents.policy import check_model_rules
        check_model_rules(self.settings.policy, self.rules)
        self.net = _acting_net(self.settings.policy)
        self.encoder = Encoder(self.rules)
        self.core_action = None          # the action choosing the settings' core
        if self.settings.core is not None:
            table = action_table(self.rules)
            if self.settings.core not in table.cores:
                raise ValueError(f"sampled search: core is one of {', '.join(table.cores)}, got "
                                 f"{self.settings.core!r}")
            self.core_action = table.id("choose_core", table.cores.index(self.settings.core))
        self.steps_max = self.rules.spec.run.action_cap + _CHOICES
        s = self.settings
        self.objective = Objective(margin_weight=s.margin, waste_weight=s.waste,
                                   invest_weight=s.invest, goal_weight=0.0)
        self._references: dict[int, Reference] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = int(seed or 0)
        for reference in self._references.values():
            reference.reseed(self.seed)
        self._plan: list[tuple[np.ndarray, np.ndarray, int]] = []  # (obs, mask, action) to come
        self._searches: dict[int, int] = {}        # searches made per round (their seeds)
        self._scorer: tuple[tuple, SeatScorer] | None = None
        self.decision_times: list[tuple[int, float]] = []   # (round, CPU seconds deciding)
        self.rollouts = 0

    def act(self, observation, action_mask, state: RunState | None = None) -> int:
        if state is None:
            raise ValueError("sampled search needs the run state: "
                             "act(obs, mask, state=env.unwrapped.state)")
        if state.in_duel:
            raise ValueError("sampled search plays one-player runs, not duels")
        mask = np.asarray(action_mask, dtype=bool)
        if not mask.any():
            raise ValueError("no legal action")
        obs = np.asarray(observation, dtype=np.float32).reshape(-1)
        if self._plan:
            seen, legal, action = self._plan[0]
            if np.array_equal(seen, obs) and np.array_equal(legal, mask):
                self._plan.pop(0)
                return action
        start = time.process_time()
        self._plan = self._search(state)
        self._count_time(state.round, time.process_time() - start)
        seen, legal, action = self._plan.pop(0)
        if not (np.array_equal(legal, mask) and mask[action]):
            raise RuntimeError("sampled search: the state given is not the one observed")
        return action

    # -- the search ---------------------------------------------------------------------------
    def _search(self, state: RunState) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """The best of the settings' rollouts from `state` (its steps to play)."""
        k = self._searches.get(state.round, 0)
        self._searches[state.round] = k + 1
        boards, plans, kept = [], [], []
        wealth = state.mana + board_cost(state.to_board(), self.rules)
        for j in range(self.settings.n):
            steps, board, mana = self._rollout(state, [self.seed, state.round, k, j],
                                               greedy=(j == 0))
            plans.append(steps)
            boards.append(board)
            kept.append(mana)
        scorer = self._scorer_for(state)
        fielded = [b for b in boards if b is not None]
        scores = iter(scorer(fielded)) if fielded else iter(())
        best, best_value = plans[0], -math.inf
        for steps, board, mana in zip(plans, boards, kept):
            # a rollout that ends the run before a battle (none does today) scores least
            if board is None:
                continue
            payoff, margin = next(scores)
            value = self._value(payoff, margin, wealth, board, mana)
            if value > best_value:
                best, best_value = steps, value
        return best

    def _value(self, payoff: float, margin: float, wealth: int, board, mana: int) -> float:
        """A rollout's score, the planner's objective (`scoring.Objective`) with the settings'
        weights and no goal: `wealth` the player's mana and board cost when the search began,
        `mana` what the rollout kept. A reward taken in the preparation adds wealth; only what
        is lost counts as waste."""
        cost = board_cost(board, self.rules)
        lost = max(0, wealth - (mana + cost))
        return self.objective.score(payoff, margin, lost, self.rules.spec.run.income,
                                    cost / max(1, mana + cost)).value

    def _rollout(self, state: RunState, key: list[int], greedy: bool):
        """The policy's preparation on a private copy of `state` (a generator of its own) up to
        the round's battle: its steps (obs, mask, action), the board it would field and the mana
        it keeps."""
        copy = state.clone(with_rng=False)
        copy.rng = np.random.default_rng(key + [_SHOP_STREAM])
        pick = np.random.default_rng(key + [_PICK_STREAM])
        self.rollouts += 1
        steps = []
        for _ in range(self.steps_max):
            obs, mask = self.encoder.observe(copy)
            if self.core_action is not None and mask[self.core_action]:
                action = self.core_action                  # the core is being chosen: the knob's
            else:
                action = self._choose(obs, mask, pick, greedy)
            steps.append((obs, mask, action))
            result = apply(copy, action, defer_battle=True, assume_legal=True)
            if result.ready:
                return steps, copy.to_board(), copy.mana
            if copy.over:
                return steps, None, copy.mana
        raise RuntimeError(f"sampled search: a rollout took more than {self.steps_max} steps "
                           f"without a battle")

    def _choose(self, obs: np.ndarray, mask: np.ndarray, pick: np.random.Generator,
                greedy: bool) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        logits = self.net.logits(obs, legal)
        # with epsilon 1 no draw is made here, so those rollouts are the ones of before the knob
        if greedy or (self.settings.epsilon < 1 and pick.random() >= self.settings.epsilon):
            return int(legal[int(np.argmax(logits))])
        z = (logits - logits.max()) / self.settings.temperature
        p = np.exp(z)
        return int(legal[int(pick.choice(len(legal), p=p / p.sum()))])

    def _scorer_for(self, state: RunState) -> SeatScorer:
        """The round's scorer (its reference boards in the run's seat), kept for the round."""
        key = (state.rank, state.round, tuple(state.boss_rules), expected_seat(state))
        if self._scorer is None or self._scorer[0] != key:
            if state.rank not in self._references:
                spec = ReferenceSpec(source=self.settings.reference, size=self.settings.size)
                self._references[state.rank] = Reference(self.rules, spec, state.rank, self.seed)
            boards, weights = self._references[state.rank].boards(state.round,
                                                                  tuple(state.boss_rules))
            self._scorer = (key, SeatScorer(self.rules, boards, weights, key[3]))
        return self._scorer[1]

    def _count_time(self, round_: int, seconds: float) -> None:
        if self.decision_times and self.decision_times[-1][0] == round_:
            self.decision_times[-1] = (round_, self.decision_times[-1][1] + seconds)
        else:
            self.decision_times.append((round_, seconds))
