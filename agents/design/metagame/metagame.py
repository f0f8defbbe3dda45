"""The metagame of a round: a double oracle over budget-legal boards, with the best-response
search (`agents.design.metagame.oracle`) as the oracle against the current mixture.

Per round r, with the round's budget (a player's mana by then, or the first rank's opponent
budget): the set starts from `initial` drafted boards (seeded [seed, r, 13, i]); each iteration
solves the zero-sum game among the set (`solve_zero_sum`, HiGHS), turns the mixture into whole
counts (`mixture_counts`, `MIXTURE_TOTAL` in all, every support board at least 1) and fields it as
a weighted opponent set; the oracle climbs against that set from the support's boards, drafted
boards, towers and the archive (below) and returns its climbed boards, best first. The loop
stops when no board beats the mixture by more than the tolerance, or after `iterations`.

How the oracle is made strong enough that a fresh search (the gap, below) finds no counter the
loop missed; each piece was measured on the rounds and seeds where the first version failed
(seed 1 rounds 6 and 9, seed 0 round 12: fresh best responses at 64-75%):

- retries, the closing searches: a search can miss a counter that is there, so before the loop
  is called converged the oracle is asked again `retries` times, each an independent search at
  `retry_factor` x the budget (the gap's strength: `SearchSettings.scaled`, more starts and more
  patience), mutations seeded by (seed, iteration, attempt) and starts drafted afresh (seeded
  [seed, iteration, attempt, r, 15, i]);
- the archive: every board any search of the round climbed to is kept, and the
  `archive_starts` of them that do best against the current mixture are climbed too (a counter
  of an earlier mixture is often one of the next: the mixtures cycle), besides the search's own
  starts, not in their places (among them they took the places of the towers: seed 2's round 6
  converged on two boards that a fresh search, climbing from an ice tower, beat 100%);
- every support board among the starts, as the gap's search has them (with the heaviest 4
  only, seed 0's round 3 converged on a mixture that a 3-edit variant of its sixth board beat
  66.6%);
- counter edits (`SearchSettings.extra` of the mutations, `mutations.py`): at a full budget most
  of the audit's single edits no longer fit; trades, element swaps and cluster moves do;
- the tolerance (0.05): with 0.02 the loop kept adding boards that beat the mixture by 2-5%
  (round 12 went 120 iterations, 253 boards, without converging), so the retries, which look
  only when the plain search finds nothing, never ran, and the fresh search found 65%. At 0.05
  the same round converged in 45 iterations, 77 s, and fresh searches found 50%.

`solver="maxent"` picks the most mixed maximin mixture (`max_entropy_zero_sum`) instead of
linprog's vertex. On one finished round's game (seed 1, round 6, tolerance 0.02) it spread the
weight from 3 boards to 10, and a fresh search that beat the vertex 62.5% won 50% against it; but
in the loop (the defaults otherwise, same round) it took 226 s against 31 s and ended on a
2-board mixture a fresh search beat 75%, so the vertex is the default.

Measured (`python scripts/metagame.py --rounds 3 6 9 12 --seed S`, rules 184758c7a8528bca, three
runs side by side on 2 cores at load 8-9: 17-18 min each): the fresh best response won 54.5, 50.0,
50.0, 59.1% (seed 0), 54.5, 50.0, 50.0, 56.5% (seed 1) and 60.1, 50.0, 50.0, 58.1% (seed 2); round
12 used all 80 iterations at every seed (docs/BALANCE.md, "The metagame").

The gap: a fresh best response against the final mixture, with another seed (seed + 1) and
`gap_factor` x the search budget, from fresh drafted boards, towers and the support itself; its
win rate against the mixture's counts (both seatings), with a Wilson interval, and its payoff.
The acceptance asks it to be at most `target` (60%); the report says when it is not.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rune_env.rules import KINDS, Board, Rules
from rune_env.run.opponents import Pool, draft_board

from agents.design.audit import (AuditSettings, Opponents, board_cost, board_key, describe,
                                 field_reference, tower_boards)

from .double_oracle import DoubleOracleResult, double_oracle
from .oracle import (PayoffEvaluator, PayoffScore, SearchSettings, best_responses,
                     payoff_matrix, search_budget, search_starts)
from .solver import entropy, max_entropy_zero_sum, solve_zero_sum

INITIAL_STREAM, GAP_STREAM, RETRY_STREAM = 13, 14, 15
MIXTURE_TOTAL = 1000     # counts a mixture is fielded with: weights to 0.1%
# the boards of alpha-Rank a round's report names: at most this many, each with at least this mass
ALPHARANK_SHOWN, ALPHARANK_FLOOR = 5, 0.01
SOLVERS = {"vertex": solve_zero_sum, "maxent": max_entropy_zero_sum}


@dataclass(frozen=True)
class MetaSettings:
    rounds: tuple[int, ...]
    budget: str = "player"
    iterations: int = 80
    initial: int = 4                 # drafted boards the set starts with
    max_add: int = 3                 # best responses added an iteration
    tolerance: float = 0.05          # a board beating the mixture by at most this is not added
    support_starts: int = 64         # heaviest support boards among the oracle's starts
    retries: int = 4                 # independent closing searches before calling it converged
    retry_factor: int = 4            # a retry's search budget, x the search's
    archive_starts: int = 3          # best boards of the round's archive among the starts
    solver: str = "vertex"           # vertex (linprog's) or maxent: the mixture among the maximin
    search: SearchSettings = field(default_factory=lambda: SearchSettings(
        budget=4000, starts=5, mutants=32, patience=5, drafted=4, towers=2))
    gap_factor: int = 4
    target: float = 0.60
    seed: int = 0
    jobs: int | None = None
    rank: str | None = None          # budget "rank": whose opponent budget (None: the first rank)

    def to_json(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k not in ("search", "jobs")
             and not (k == "rank" and v is None)}
        return dict(d, rounds=list(self.rounds), search=self.search.to_json())


def quick_meta_settings(rounds, seed: int = 0, budget: str = "player",
                        iterations: int | None = None) -> MetaSettings:
    search = SearchSettings(budget=300, starts=2, mutants=16, patience=3, drafted=2, towers=1)
    return MetaSettings(rounds=tuple(rounds), budget=budget, iterations=iterations or 4,
                        initial=3, max_add=2, support_starts=2, retries=1, retry_factor=2,
                        search=search, gap_factor=2, seed=seed)


def mixture_counts(weights: np.ndarray, total: int = MIXTURE_TOTAL) -> np.ndarray:
    """Whole counts proportional to `weights` summing to `total` (largest remainders, ties to
    the lower index), every positive weight at least 1."""
    w = np.asarray(weights, dtype=np.float64)
    raw = w / w.sum() * total
    counts = np.floor(raw).astype(np.int64)
    counts[(w > 0) & (counts == 0)] = 1
    rest = total - int(counts.sum())
    order = np.lexsort((np.arange(len(w)), -(raw - np.floor(raw))))
    for i in order[:max(0, rest)]:
        counts[i] += 1
    return counts


@dataclass
class RoundMeta:
    round: int
    budget: int
    result: DoubleOracleResult
    gap_board: Board
    gap: PayoffScore
    target: float
    seconds: float

    @property
    def support(self) -> list[tuple[Board, float]]:
        w = self.result.solution.weights
        pairs = [(self.result.strategies[i], float(w[i])) for i in self.result.solution.support]
        return sorted(pairs, key=lambda bw: -bw[1])

    @property
    def passed(self) -> bool:
        return self.gap.win_rate <= self.target

    def alpharank(self) -> np.ndarray:
        """alpha-Rank's mass on every board the double oracle found (the round's whole matrix;
        agents/evaluation/alpharank.py): where a population of these boards that copies the
        better one drifts. The mixture answers which boards no board beats; this, which boards
        evolution keeps, counting the ones the mixture gives no weight."""
        from agents.evaluation.alpharank import alpha_rank
        return alpha_rank(self.result.matrix)

    def to_json(self, rules: Rules) -> dict:
        weights = [w for _, w in self.support]
        idx = list(self.result.solution.support)
        mass = self.alpharank()
        top = [int(i) for i in np.argsort(-mass, kind="stable")[:ALPHARANK_SHOWN]
               if mass[i] >= ALPHARANK_FLOOR]
        return {"round": self.round, "budget": self.budget, "seconds": self.seconds,
                "converged": self.result.converged, "history": self.result.history,
                "strategies": len(self.result.strategies),
                "support_size": len(idx), "entropy": entropy(np.array(weights)),
                "effective_size": math.exp(entropy(np.array(weights))),
                "mixture": [{"weight": w, "cost": board_cost(b, rules),
                             "casting_runes": casting_runes(b, rules),
                             "describe": describe(b, rules), "board": b.to_json(rules)}
                            for b, w in self.support],
                "shares": mixture_shares(self.support, rules),
                "support_matrix": self.result.matrix[np.ix_(idx, idx)].tolist(),
                "alpharank": {
                    "on_mixture": float(mass[idx].sum()),
                    "effective_size": math.exp(entropy(mass)),
                    "top": [{"mass": float(mass[i]), "in_mixture": i in idx,
                             "cost": board_cost(self.result.strategies[i], rules),
                             "describe": describe(self.result.strategies[i], rules)}
                            for i in top]},
                "gap": dict(self.gap.to_json(), board=self.gap_board.to_json(rules),
                            describe=describe(self.gap_board, rules),
                            cost=board_cost(self.gap_board, rules), target=self.target,
                            passed=self.passed)}


def casting_runes(board: Board, rules: Rules) -> int:
    return sum(1 for k, _ in board.runes.values() if k in rules.casting_kinds)


def mixture_shares(support: list[tuple[Board, float]], rules: Rules) -> dict:
    """Weighted shares: cores (None as "none"), the sun's element (of all weight), rune kinds
    (each board's runes on the board, as a share of its runes), and the weighted mean casting
    runes and cost."""
    cores: Counter = Counter()
    suns: Counter = Counter()
    kinds: Counter = Counter({k: 0.0 for k in KINDS})
    for b, w in support:
        cores[b.core or "none"] += w
        if b.sun_element:
            suns[b.sun_element] += w
        n = len(b.runes) or 1
        for k, _ in b.runes.values():
            kinds[k] += w / n
    return {"core": dict(sorted(cores.items())), "sun_element": dict(sorted(suns.items())),
            "kind": {k: kinds[k] for k in KINDS},
            "mean_casting_runes": sum(w * casting_runes(b, rules) for b, w in support),
            "mean_cost": sum(w * board_cost(b, rules) for b, w in support)}


def _mixture(boards: list[Board], weights: np.ndarray) -> Opponents:
    counts = mixture_counts(weights)
    keep = np.nonzero(counts)[0]
    return Opponents(tuple(boards[i] for i in keep), counts[keep])


class _RoundOracle:
    """The oracle of one round's double oracle (the module docstring): the starts it climbs
    from, and the archive of every board any of its searches climbed to."""

    def __init__(self, rules: Rules, round_: int, budget: int, settings: MetaSettings,
                 evaluator: PayoffEvaluator):
        self.rules, self.round, self.budget, self.settings = rules, round_, budget, settings
        self.evaluator = evaluator
        self.towers = ([] if settings.search.towers <= 0 else
                       tower_boards(rules, round_, budget, AuditSettings(
                           rounds=(round_,), tower_structures=settings.search.towers)))
        self.starts = search_starts(rules, round_, budget, settings.search, settings.seed,
                                    towers_too=False) + self.towers
        self.archive: dict[str, Board] = {}

    def archived(self, mix: Opponents) -> list[Board]:
        """The `archive_starts` archived boards that do best against `mix`."""
        boards = list(self.archive.values())
        if not boards or self.settings.archive_starts <= 0:
            return []
        scores = self.evaluator.payoffs(boards, mix)
        order = sorted(range(len(boards)), key=lambda i: scores[i].key(), reverse=True)
        return [boards[i] for i in order[:self.settings.archive_starts]]

    def search(self, mix: Opponents, starts: list[Board], search: SearchSettings,
               seed) -> list[tuple[Board, PayoffScore]]:
        found = best_responses(self.evaluator, mix, starts, self.round, self.budget, search,
                               seed, also=self.archived(mix))
        for b, _ in found:
            self.archive.setdefault(board_key(b, self.rules), b)
        return found

    def __call__(self, strategies, weights, iteration, attempt):
        # a retry looks harder, with mutations and drafted starts of its own (the first full
        # runs stopped on misses that fresh starts then beat)
        s = self.settings
        mix = _mixture(list(strategies), weights)
        heavy = [mix.boards[i] for i in np.argsort(-mix.weights, kind="stable")]
        fresh = [] if attempt == 0 else search_starts(
            self.rules, self.round, self.budget, s.search, (s.seed, iteration, attempt),
            RETRY_STREAM, towers_too=False)
        factor = 1 if attempt == 0 else s.retry_factor
        found = self.search(mix, heavy[:s.support_starts] + self.starts + fresh,
                            s.search.scaled(factor), (s.seed, iteration, attempt))
        return [(b, sc.payoff) for b, sc in found]

    def gap(self, mix: Opponents) -> tuple[Board, PayoffScore]:
        """A fresh best response against the final mixture: another seed, gap_factor x the
        search, its own drafted starts, the towers and the mixture; never the archive."""
        s = self.settings
        search = s.search.scaled(s.gap_factor)
        fresh = search_starts(self.rules, self.round, self.budget, search, s.seed + 1,
                              GAP_STREAM, towers_too=False)
        return best_responses(self.evaluator, mix, list(mix.boards) + fresh + self.towers,
                              self.round, self.budget, search, s.seed + 1)[0]


def metagame_round(rules: Rules, round_: int, settings: MetaSettings,
                   progress: Callable[[int, dict], None] | None = None) -> RoundMeta:
    t0 = time.perf_counter()
    evaluator = PayoffEvaluator(rules, settings.jobs)
    budget = search_budget(rules, round_, settings.budget, settings.rank)
    initial = [field_reference(draft_board(rules, round_, budget, np.random.default_rng(
        [settings.seed, round_, INITIAL_STREAM, i])), round_) for i in range(settings.initial)]
    oracle = _RoundOracle(rules, round_, budget, settings, evaluator)
    result = double_oracle(initial, lambda a, b: payoff_matrix(rules, a, b, settings.jobs),
                           oracle, lambda b: board_key(b, rules), settings.iterations,
                           settings.tolerance, settings.max_add, settings.retries, progress,
                           SOLVERS[settings.solver])
    gap_board, gap = oracle.gap(_mixture(result.strategies, result.solution.weights))
    return RoundMeta(round_, budget, result, gap_board, gap, settings.target,
                     time.perf_counter() - t0)


class _Ticks:
    """`run_tasks`' progress (`.update(weight)` per finished task) onto a callable."""

    def __init__(self, done: Callable[[int], None]):
        self.update = done


def metagame_rounds(rules: Rules, settings: MetaSettings, ray: str | None = None,
                    progress: Callable[[int, int, dict], None] | None = None,
                    round_done: Callable[[int], None] | None = None) -> list[RoundMeta]:
    """Every round of `settings.rounds`: here, one after the other (`progress(round, iteration,
    step)` after each iteration), or with `ray` (an address, agents/cli/fanout.py) as Ray tasks, one
    a round on one fast-engine thread unless settings.jobs says otherwise (a round draws and
    plays only from its own seeds, so the results are the same; `round_done` then hears each
    round as it finishes)."""
    if ray is not None:
        from agents.cli.fanout import run_tasks
        tick = None if round_done is None else _Ticks(round_done)
        single = settings if settings.jobs else MetaSettings(**{**settings.__dict__, "jobs": 1})
        return run_tasks(metagame_round, [(rules, r, single) for r in settings.rounds], ray,
                         tick)
    out = []
    for r in settings.rounds:
        step = None if progress is None else (lambda it, info, r=r: progress(r, it, info))
        out.append(metagame_round(rules, r, settings, step))
        if round_done is not None:
            round_done(1)
    return out


def mixture_pool(rounds: list[RoundMeta], rules: Rules, settings: MetaSettings) -> Pool:
    """The mixtures as a pool (`save_pool`): each support board a ghost with its count; its rank
    the one whose budget it was solved at (`settings.rank`), else the first (a player's budget)."""
    rank = settings.rank or rules.spec.ranks[0].id
    ghosts = {}
    for r in rounds:
        mix = _mixture(r.result.strategies, r.result.solution.weights)
        ghosts[r.round] = [{"board": b.to_json(rules), "agent": "metagame", "seed": settings.seed,
                            "round": r.round, "rank": rank, "count": int(c)}
                           for b, c in zip(mix.boards, mix.weights)]
    provenance = {"source": "metagame", "rules_hash": rules.hash,
                  "settings": settings.to_json(),
                  "counts": f"proportional to the mixture's weights, {MIXTURE_TOTAL} a round"}
    unreached = [r.round for r in rounds if not r.passed]
    if unreached:       # who fields the pool (the recipes' metagame agent) says so
        provenance["unreached"] = unreached
    return Pool(rules_hash=rules.hash, rank=rank, rounds=ghosts, provenance=provenance)
