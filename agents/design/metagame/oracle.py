"""The best-response search: a strong hill climb for the board that does best against a weighted
set of boards (a pool's ghosts, or a metagame's mixture), on the fast engine.

The objective is the payoff of the metagame: the weighted share of battles won over both
seatings, draws counting one half (`PayoffScore.payoff`), ties broken by the mean HP-ratio margin
(where many boards win or lose everything, the margin still ranks them). The search is the
balance audit's open search (`agents.design.audit.hill_climb` with its `Mutator`: budget-legal
boards within a fresh run's slots) with the faster mutator of `mutations.py` (`CounterMutator`:
the audit's edits plus, for a share `extra` of the mutations, the counter edits a full-budget
board needs), started from several seeds and climbed from each apart:

- the given boards (a pool's own best boards on the choose set, or a mixture's support and the
  earlier best responses), so the search starts from what is already strong there;
- boards the budget drafter drafts with the search's budget (seeded [seed, round, stream, i]);
- the audit's amplify towers (`agents.design.audit.tower_boards`), the burst boards that kill early.

Every start is scored, the `starts` best distinct ones are climbed (each `generations` x
`mutants` boards at most, stopping after `patience` generations without a move), and the
climbed boards come back best first: the first is the best response, the others are for a double
oracle that adds several at a time. Every random draw comes from generators seeded from the
search's seed, so a search is reproducible bit for bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from rune_env.battle.fast import fast_battles
from rune_env.rules import Board, Rules
from rune_env.run.opponents import draft_board, opponent_budget
from rune_env.run.ranks import player_budget, rank_effects

from agents.design.audit import (AuditSettings, Evaluator, Opponents, board_cost, board_key,
                                 field_reference, hill_climb, tower_boards)
from agents.evaluation.runs import wilson

from .mutations import CounterMutator, fast_key

# Seed streams of a search: [seed, round, stream, ...].
DRAFT_STREAM, MUTATE_STREAM = 11, 12


@dataclass(frozen=True)
class SearchSettings:
    """How hard the best-response search looks (settings of the search, not game numbers)."""

    budget: int = 6000          # boards scored at most by the climbs, all starts together
    starts: int = 6             # best distinct starts climbed
    mutants: int = 32           # mutants a generation
    patience: int = 6           # generations without a move before a start is given up
    drafted: int = 6            # drafted boards among the candidate starts
    towers: int = 2             # audit tower structures per attack kind among the starts
    extra: float = 0.3          # share of the mutations that are counter edits (mutations.py)

    @property
    def generations(self) -> int:
        return max(1, self.budget // (self.starts * self.mutants))

    def scaled(self, factor: int) -> "SearchSettings":
        """`factor` x the budget, spent on sqrt(factor) x the starts and the patience (rounded
        up): a climb that has stalled for `patience` generations stops whatever the budget, so
        a larger budget alone would buy nothing."""
        root = math.ceil(math.sqrt(factor) - 1e-9)
        return replace(self, budget=self.budget * factor, starts=self.starts * root,
                       patience=self.patience * root)

    def to_json(self) -> dict:
        return dict(self.__dict__, generations=self.generations)


@dataclass(frozen=True)
class PayoffScore:
    """A board against a weighted set of opponents, both seatings."""

    wins: int
    draws: int
    battles: int
    margin: float           # weighted mean of own HP ratio minus the opponent's

    @property
    def win_rate(self) -> float:
        return self.wins / self.battles if self.battles else float("nan")

    @property
    def payoff(self) -> float:
        """The metagame's payoff: wins plus half the draws, per battle."""
        return (self.wins + 0.5 * self.draws) / self.battles if self.battles else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        """Wilson 95% interval of the win rate (it counts battles, which repeat boards)."""
        return wilson(self.wins, self.battles)

    def key(self) -> tuple[float, float]:
        return (self.payoff, self.margin)

    def to_json(self) -> dict:
        return {"win_rate": self.win_rate, "ci": list(self.ci), "payoff": self.payoff,
                "draws": self.draws, "battles": self.battles, "margin": self.margin}


class PayoffEvaluator(Evaluator):
    """The audit's evaluator with the payoff objective (remembered per opponent set)."""

    def __init__(self, rules: Rules, workers: int | None = None):
        super().__init__(rules, workers)
        self._payoff_memo: dict[int, tuple[Opponents, dict]] = {}

    def payoffs(self, candidates: Sequence[Board], opponents: Opponents) -> list[PayoffScore]:
        # keyed by identity, the opponents kept alive beside their memo so the id stays theirs;
        # boards by their fast keys (a JSON key per mutant cost more than its battles)
        _, memo = self._payoff_memo.setdefault(id(opponents), (opponents, {}))
        return self._memo(candidates, opponents, memo, self._play_payoff, key=fast_key)

    def _play_payoff(self, candidates: list[Board], opponents: Opponents) -> list[PayoffScore]:
        out, side = self._battles(candidates, opponents.boards, self.rules)
        winner = out["winner"]
        ratio = out["hp"] / out["max_hp"]
        margin = np.stack([ratio[0, ..., 0] - ratio[0, ..., 1],
                           ratio[1, ..., 1] - ratio[1, ..., 0]])
        w = opponents.weights
        wins = ((winner == side) * w).sum(axis=(0, 2))
        draws = ((winner < 0) * w).sum(axis=(0, 2))
        margins = (margin * w).sum(axis=(0, 2)) / (2 * opponents.total)
        return [PayoffScore(int(wins[i]), int(draws[i]), 2 * opponents.total, float(margins[i]))
                for i in range(len(candidates))]


def payoff_matrix(rules: Rules, rows: Sequence[Board], cols: Sequence[Board],
                  workers: int | None = None) -> np.ndarray:
    """A[i, j]: board rows[i]'s payoff against cols[j], both seatings (draws one half)."""
    pairs = [(a, b) for a in rows for b in cols]
    if not pairs:
        return np.zeros((len(rows), len(cols)))
    pairs += [(b, a) for a, b in pairs]
    out = fast_battles(pairs, rules, workers=workers)
    n = len(pairs) // 2
    w = out["winner"].astype(np.int64)
    first = np.where(w[:n] == 0, 1.0, np.where(w[:n] < 0, 0.5, 0.0))
    second = np.where(w[n:] == 1, 1.0, np.where(w[n:] < 0, 0.5, 0.0))
    return ((first + second) / 2.0).reshape(len(rows), len(cols))


def search_budget(rules: Rules, round_: int, kind: str, rank: str | None = None) -> int:
    """The budget of the boards searched: `player` (`player_budget`) or `rank` (the opponent
    budget of `rank`, default the first rank, D-44)."""
    if kind == "player":
        return player_budget(rules, round_)
    if kind == "rank":
        return opponent_budget(rules, round_, rank_effects(rules, rank or rules.spec.ranks[0].id))
    raise ValueError(f"budget must be player or rank; got {kind!r}")


def search_starts(rules: Rules, round_: int, budget: int, settings: SearchSettings,
                  seed: int | Sequence[int], stream: int = DRAFT_STREAM,
                  towers_too: bool = True) -> list[Board]:
    """The drafted and tower starts of a search (the given boards are added by the caller).
    Drafted board i comes from the generator seeded [*seed, round, stream, i]; the towers are
    built greedily (no draw), so `towers_too=False` leaves out what an earlier call gave."""
    seeds = [seed] if isinstance(seed, int) else list(seed)
    drafted = [field_reference(draft_board(rules, round_, budget, np.random.default_rng(
        [*seeds, round_, stream, i])), round_) for i in range(settings.drafted)]
    towers: list[Board] = []
    if settings.towers > 0 and towers_too:
        towers = tower_boards(rules, round_, budget,
                              AuditSettings(rounds=(round_,), tower_structures=settings.towers))
    return drafted + towers


def best_responses(evaluator: PayoffEvaluator, opponents: Opponents, starts: Sequence[Board],
                   round_: int, budget: int, settings: SearchSettings,
                   seed: int | Sequence[int],
                   also: Sequence[Board] = ()) -> list[tuple[Board, PayoffScore]]:
    """The climbed boards against `opponents`, best first (the module docstring). `seed`: an
    int or a sequence of them (a double oracle's seed, iteration and attempt), which seeds the
    mutations together with the round. `also`: boards climbed besides the `starts` best of
    `starts` (a double oracle's archive: strong boards that would otherwise take the places of
    the weaker, more varied starts)."""
    rules = evaluator.rules
    legal, seen = [], set()
    for b in starts:
        key = board_key(b, rules)
        if key not in seen and board_cost(b, rules) <= budget:
            seen.add(key)
            legal.append(b)
    if not legal:
        raise ValueError(f"round {round_}: no start fits the budget {budget}")
    scores = evaluator.payoffs(legal, opponents)
    order = sorted(range(len(legal)), key=lambda i: scores[i].key(), reverse=True)  # stable
    picked, played = [], set()
    for i in order:
        if scores[i] not in played:      # equal scores: most likely boards that play the same
            played.add(scores[i])
            picked.append(legal[i])
        if len(picked) >= settings.starts:
            break
    chosen = {board_key(b, rules) for b in picked}
    picked += [b for b in also
               if board_key(b, rules) not in chosen and board_cost(b, rules) <= budget]
    seeds = [seed] if isinstance(seed, int) else list(seed)
    mutator = CounterMutator(rules, round_, budget,
                             np.random.default_rng([*seeds, round_, MUTATE_STREAM]),
                             settings.extra)
    score = lambda boards: evaluator.payoffs(boards, opponents)  # noqa: E731
    out: dict[str, tuple[Board, PayoffScore]] = {}
    for start in picked:
        found = hill_climb(score, [start], mutator, settings.generations, settings.mutants,
                           settings.patience)
        if found is not None:
            out.setdefault(board_key(found[0], rules), (found[0], found[1]))
    return sorted(out.values(), key=lambda bs: bs[1].key(), reverse=True)
