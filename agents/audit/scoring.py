"""The balance audit's measuring side: its settings, the reference boards and their split into
choose and report sets, what a board costs, and the scores of boards against a set of opponents
(`Evaluator`, on the fast engine). The method is described in the package docstring
(`agents/audit/__init__.py`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from rune_env.battle.fast import fast_battles
from rune_env.rules import Board, Rules
from rune_env.run.loop import units
from rune_env.run.opponents import Pool, draft_board, opponent_budget
from rune_env.run.profile import Profile
from rune_env.run.ranks import rank_effects

from ..evaluation import wilson

# Seed streams of a round: [seed, round, stream, ...] (independent generators per purpose).
_DRAFT_STREAM, _SPLIT_STREAM, _SEARCH_STREAM, _POOL_STREAM, _START_STREAM = range(5)

MAX_BATCH_PAIRS = 60_000     # battles per fast_battles call: big enough to keep both cores busy,
                             # small enough that the pair lists stay a few MB


class AuditError(ValueError):
    """An audit that cannot be run as asked; the message says why."""


# -- settings ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditSettings:
    """How much the audit searches and measures (the audit's knobs, not rules of the game)."""

    rounds: tuple[int, ...]
    choose_boards: int = 100         # reference boards a round that candidates are chosen on
    report_boards: int = 200         # disjoint reference boards the chosen boards are measured on
    small_grades: tuple[int, ...] = (1, 2)   # grades of the one-, two-rune and mono-kind families
    mono_sizes: tuple[int, ...] = (3, 4, 5, 6)
    two_rune_parents: int = 4        # best one-rune boards that get a second rune
    trick_bases: int = 2             # best boards of each of the one- and two-rune families
    search_drafted_starts: int = 2   # drafted boards the open search also starts from
    search_generations: int = 20
    search_mutants: int = 40
    search_patience: int = 8
    seed: int = 0
    jobs: int | None = None          # fast-engine threads (None: every usable core)

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


def full_settings(rounds: Iterable[int], seed: int = 0, jobs: int | None = None) -> AuditSettings:
    """The default audit (the command line without --quick)."""
    return AuditSettings(rounds=tuple(rounds), seed=seed, jobs=jobs)


def quick_settings(rounds: Iterable[int], seed: int = 0, jobs: int | None = None) -> AuditSettings:
    """A smaller audit for a first look and for tests: fewer opponents and candidates."""
    return AuditSettings(rounds=tuple(rounds), choose_boards=40, report_boards=80,
                         two_rune_parents=3, trick_bases=1, search_drafted_starts=1,
                         search_generations=10, search_mutants=24, search_patience=4,
                         seed=seed, jobs=jobs)


# -- reference boards -------------------------------------------------------------------------
def round_budget(rules: Rules, round_: int) -> int:
    """The round's opponent budget at the first rank (apprentice), D-44."""
    return opponent_budget(rules, round_, rank_effects(rules, rules.spec.ranks[0].id))


def board_key(board: Board, rules: Rules) -> str:
    """A board's content as one string (equal boards, equal keys)."""
    return json.dumps(board.to_json(rules), sort_keys=True)


def field_reference(board: Board, round_: int) -> Board:
    """A reference board as fielded in a round without a boss (E-30): that round, the round's max
    HP, no boss rules; everything else (core, artifacts, hand, relics) as drawn."""
    return board.replace(round=round_, max_hp=None, boss_rules=(), label="")


def drafted_boards(rules: Rules, round_: int, count: int, seed: int,
                   stream: int = _DRAFT_STREAM) -> list[Board]:
    """`count` boards of the budget drafter for the round, board i from the generator seeded
    [seed, round, stream, i] (so any board can be redrawn alone)."""
    budget = round_budget(rules, round_)
    return [field_reference(draft_board(rules, round_, budget,
                                        np.random.default_rng([seed, round_, stream, i])), round_)
            for i in range(count)]


def pool_boards(pool: Pool, rules: Rules, round_: int, count: int, seed: int) -> list[Board]:
    """The pool's ghosts of the round as draws, each as often as its `count` when the round has
    at most `count` ghosts, else `count` draws weighted by the counts (seeded). Empty when the
    pool has no ghost of the round."""
    ghosts = [field_reference(b, round_) for b in pool.boards(round_, rules)]
    weights = pool.counts(round_)
    if len(ghosts) <= count:
        return [g for g, w in zip(ghosts, weights) for _ in range(w)]
    rng = np.random.default_rng([seed, round_, _POOL_STREAM])
    p = np.asarray(weights, dtype=np.float64) / sum(weights)
    return [ghosts[int(i)] for i in rng.choice(len(ghosts), size=count, p=p)]


@dataclass(frozen=True, eq=False)
class Opponents:
    """Distinct reference boards with their weights (how many draws gave each)."""

    boards: tuple[Board, ...]
    weights: np.ndarray                                   # int64, one per board
    scores: dict = field(default_factory=dict, repr=False, compare=False)   # memo: key -> Score

    @property
    def total(self) -> int:
        return int(self.weights.sum())


def split_opponents(draws: Sequence[Board], choose_share: float, rules: Rules,
                    rng: np.random.Generator) -> tuple[Opponents, Opponents]:
    """Split draws into disjoint choose and report sets (see the package docstring): identical
    boards merge into one weighted board, the distinct boards are shuffled and dealt to the
    choose set until it holds `choose_share` of the weight; the rest is the report set."""
    weight: dict[str, int] = {}
    first: dict[str, Board] = {}
    for b in draws:
        key = board_key(b, rules)
        weight[key] = weight.get(key, 0) + 1
        first.setdefault(key, b)
    keys = list(first)
    if len(keys) < 2:
        raise AuditError(f"round {draws[0].round if draws else '?'}: only {len(keys)} distinct "
                         f"reference board(s); cannot split them into choose and report sets")
    order = [keys[int(i)] for i in rng.permutation(len(keys))]
    target = choose_share * sum(weight.values())
    choose: list[str] = []
    taken = 0
    for key in order[:-1]:          # the last board always goes to the report set
        if choose and taken >= target:
            break
        choose.append(key)
        taken += weight[key]
    report = order[len(choose):]

    def of(ks: list[str]) -> Opponents:
        return Opponents(tuple(first[k] for k in ks), np.array([weight[k] for k in ks], np.int64))
    return of(choose), of(report)


# -- what a board costs and whether a shop could give it ---------------------------------------
def board_cost(board: Board, rules: Rules) -> int:
    """Mana a run pays for the board: runes on it and in the hand (merged grades count their
    grade-I runes), artifacts, and the ring-3 sectors it has open, in opening order."""
    spec = rules.spec
    runes = sum(rules.prices[k] * units(rules, g) for k, g in (*board.runes.values(), *board.hand))
    artifacts = sum(spec.artifacts[a].price for a in board.artifacts.values())
    sectors = sum(spec.sectors.open_costs[:len(board.open_sectors)])
    return runes + artifacts + sectors


def hand_slots(rules: Rules, core: str | None) -> int:
    """The hand slots a fresh run with this core has (D-40)."""
    run = rules.spec.run
    extra = rules.spec.cores[core].hand_slots if core is not None else 0
    return min(run.hand_slots_max, run.hand_slots + extra)


def shop_notes(board: Board, rules: Rules) -> list[str]:
    """What a run could not have given this board without rewards or unlocks, budget aside."""
    run = rules.spec.run
    notes = []
    if len(board.artifacts) > run.artifact_slots:
        notes.append(f"{len(board.artifacts)} artifacts: a run starts with {run.artifact_slots} "
                     f"slots (rewards add more)")
    slots = hand_slots(rules, board.core)
    if len(board.hand) > slots:
        notes.append(f"hand of {len(board.hand)}: a run with this core has {slots} slots")
    unlocked = set(Profile().unlocked(rules))
    locks = rules.spec.achievements.model_dump()
    for kind in sorted({k for k, _ in (*board.runes.values(), *board.hand)} - unlocked):
        notes.append(f"{kind} needs the {locks[kind]} unlock (research runs have it)")
    return notes


# -- scoring ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Score:
    """A board against a weighted set of opponents, both seatings."""

    wins: int                # weighted battles the board won
    battles: int             # weighted battles (both seatings)
    margin: float            # weighted mean of own HP ratio minus the opponent's
    median_time: float       # s, weighted median over the battles

    @property
    def win_rate(self) -> float:
        return self.wins / self.battles if self.battles else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.battles)

    def key(self) -> tuple[float, float]:
        """Ordering while choosing: win rate, then the HP margin."""
        return (self.win_rate, self.margin)

    def to_json(self) -> dict:
        return {"win_rate": self.win_rate, "ci": list(self.ci), "median_time": self.median_time,
                "battles": self.battles}


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2.0)])


class Evaluator:
    """Plays candidates against opponent sets on the fast engine and remembers each score (per
    opponent set, by board content), so the open search never replays a board."""

    def __init__(self, rules: Rules, workers: int | None = None):
        self.rules = rules
        self.workers = workers
        self.battles = 0         # battles played, for the progress line

    def scores(self, candidates: Sequence[Board], opponents: Opponents) -> list[Score]:
        keys = [board_key(c, self.rules) for c in candidates]
        todo: dict[str, Board] = {}
        for k, c in zip(keys, candidates):
            if k not in opponents.scores:
                todo.setdefault(k, c)
        new = list(todo.items())
        per_batch = max(1, MAX_BATCH_PAIRS // (2 * len(opponents.boards)))
        for start in range(0, len(new), per_batch):
            chunk = new[start:start + per_batch]
            for (k, _), s in zip(chunk, self._play([c for _, c in chunk], opponents)):
                opponents.scores[k] = s
        return [opponents.scores[k] for k in keys]

    def _play(self, candidates: list[Board], opponents: Opponents) -> list[Score]:
        opps = opponents.boards
        n_c, n_o = len(candidates), len(opps)
        pairs = [(c, o) for c in candidates for o in opps]
        pairs += [(o, c) for c, o in pairs]
        out = fast_battles(pairs, self.rules, workers=self.workers)
        self.battles += len(pairs)
        winner = out["winner"].reshape(2, n_c, n_o)
        ratio = (out["hp"] / out["max_hp"]).reshape(2, n_c, n_o, 2)
        times = out["time"].reshape(2, n_c, n_o)
        # seating 0: the candidate is side 0; seating 1: side 1
        won = np.stack([winner[0] == 0, winner[1] == 1])
        margin = np.stack([ratio[0, ..., 0] - ratio[0, ..., 1],
                           ratio[1, ..., 1] - ratio[1, ..., 0]])
        w = opponents.weights
        total = 2 * opponents.total
        wins = (won * w).sum(axis=(0, 2))
        margins = (margin * w).sum(axis=(0, 2)) / total
        both = np.concatenate([w, w])
        return [Score(int(wins[i]), total, float(margins[i]),
                      _weighted_median(times[:, i, :].reshape(-1), both)) for i in range(n_c)]

    def baseline(self, choose: Opponents, report: Opponents) -> Score:
        """The choose set against the report set, both seatings, from the choose side."""
        pairs = [(a, b) for a in choose.boards for b in report.boards]
        pairs += [(b, a) for a, b in pairs]
        out = fast_battles(pairs, self.rules, workers=self.workers)
        self.battles += len(pairs)
        n = len(pairs) // 2
        w = np.outer(choose.weights, report.weights).reshape(-1)
        won = np.concatenate([out["winner"][:n] == 0, out["winner"][n:] == 1])
        ratio = out["hp"] / out["max_hp"]
        margin = np.concatenate([ratio[:n, 0] - ratio[:n, 1], ratio[n:, 1] - ratio[n:, 0]])
        both = np.concatenate([w, w])
        total = int(both.sum())
        return Score(int((won * both).sum()), total, float((margin * both).sum() / total),
                     _weighted_median(out["time"], both))
