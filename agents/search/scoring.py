"""The search player's objective: a candidate board against the round's reference boards, in
the seat the run will give it (`expected_seat`: a public rule of the run, so the other seat's
battles would only blur the estimate; both seats where the player cannot know it), on the fast
engine.

A candidate's battles give its weighted payoff (wins, plus half the draws, per battle) and its
weighted mean HP-ratio margin (own HP / max HP minus the opponent's), which ranks boards where the
payoff is flat (everything won or everything lost). Its value (`SeatScore.value`) is

    payoff + margin_weight x margin - waste_weight x waste / income + invest_weight x invested
          + goal_weight x progress

where `waste` is the mana its plan loses for good (rerolls, and sales below the price paid),
`income` the run's base income a round (mana wasted now is a board that is weaker in every later
round, so a small gain this round must not cost a round's income), and `invested` the share of
the player's wealth (mana, and what its runes, artifacts and sectors cost) that the board holds
after the plan: mana kept buys nothing in battle, while the board carries into every later round,
so between boards that play alike the one that holds more of the wealth is preferred; and
`progress` the share of the player's goal (a strong board of a later round it builds towards,
`agents.search.goal`) that the board holds. Battle results are remembered
by board content, so a climb never replays a board; a climb's children are played only as far
as they can still beat their parent (`SeatScorer.bounded`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rune_env.battle.fast import BattleGrid
from rune_env.rules import Board, Rules
from rune_env.run.loop import player_seat

from .boards import fast_key


@dataclass(frozen=True)
class SeatScore:
    payoff: float           # weighted (wins + draws / 2) per battle
    margin: float           # weighted mean of own HP ratio minus the opponent's
    value: float            # the objective (the module docstring)

    def key(self) -> tuple[float, float]:
        return (round(self.value, 9), round(self.payoff, 9))


@dataclass(frozen=True)
class Objective:
    """The weights of `SeatScore.value` (the player's, not the game's)."""

    margin_weight: float = 0.25
    waste_weight: float = 0.5
    invest_weight: float = 0.1
    goal_weight: float = 2.0

    def score(self, payoff: float, margin: float, waste: int, income: int,
              invested: float = 0.0, progress: float = 0.0) -> SeatScore:
        value = (payoff + self.margin_weight * margin
                 - self.waste_weight * waste / max(1, income) + self.invest_weight * invested
                 + self.goal_weight * progress)
        return SeatScore(payoff, margin, value)


def expected_seat(state) -> int | None:
    """The side the player's board will take in this round's battle: in a one-player run
    `player_seat(round)` (RULES: side 0 in odd rounds); a duel seats its players apart and
    alternates them by round, so a duel player (`state.in_duel`) reads its side from its last
    battle, and cannot know it before its first (None: both seats)."""
    if not state.in_duel:
        return player_seat(state.round)
    if not state.battles:
        return None
    last = state.battles[-1]
    return last.seat if (state.round - last.round) % 2 == 0 else 1 - last.seat


class SeatScorer:
    """Plays candidates in `seat` (None: both seats, each weighing half) against weighted
    reference boards (`__call__`), remembering each board's (payoff, margin) by its content.
    `battles` counts the battles played.

    `bounded` scores a batch only as far as it matters to a climb that keeps a child only if it
    beats its parent: the candidates play the reference boards in stages, the boards the parent
    did worst against first, and a candidate whose best possible value (everything not played
    yet won at full HP) is below its floor stops there. What it returns for the others is what
    `__call__` returns, to the last bit (the full rows, summed as `__call__` sums them), so the
    climb's choices are the same and only fewer battles are fought."""

    def __init__(self, rules: Rules, boards: Sequence[Board], weights: np.ndarray,
                 seat: int | None):
        if not boards:
            raise ValueError("the search player needs at least one reference board")
        self.rules, self.boards, self.seat = rules, list(boards), seat
        self._grid = BattleGrid(self.boards, rules)    # the reference boards encoded once
        self.weights = np.asarray(weights, dtype=np.float64)
        self.total = float(self.weights.sum())
        self.battles = 0
        self._memo: dict[tuple, tuple[float, float]] = {}
        # a board's points and margins by reference board (one seat), for the order of the
        # stages of the batches it is the parent of
        self._rows: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, candidates: Sequence[Board]) -> list[tuple[float, float]]:
        keys = [fast_key(c) for c in candidates]
        todo: dict[tuple, Board] = {}
        for k, c in zip(keys, candidates):
            if k not in self._memo:
                todo.setdefault(k, c)
        if todo:
            for k, v in zip(todo, self._play(list(todo.values()), list(todo))):
                self._memo[k] = v
        return [self._memo[k] for k in keys]

    def bounded(self, candidates: Sequence[Board], floors: Sequence[float],
                margin_weight: float, parent: Board | None = None
                ) -> list[tuple[float, float] | None]:
        """(payoff, margin) of each candidate as `__call__` gives it, or None for one whose
        payoff + margin_weight x margin is shown to be below its floor (the class docstring).
        `parent`: the board the candidates are edits of (its worst reference boards first)."""
        if self.seat is None:               # both seats: no bound (a duel's first round only)
            return list(self(candidates))
        keys = [fast_key(c) for c in candidates]
        todo: dict[tuple, tuple[Board, float]] = {}
        for k, c, f in zip(keys, candidates, floors):
            if k not in self._memo and k not in todo:
                todo[k] = (c, float(f))
        if todo:
            order = self._stage_order(parent, margin_weight)
            boards = [c for c, _ in todo.values()]
            finished, points, margins = self._play_staged(
                boards, np.array([f for _, f in todo.values()]), margin_weight, order)
            if len(finished):
                done = list(todo)
                self._finish([done[i] for i in finished], points[finished], margins[finished])
        return [self._memo.get(k) for k in keys]

    def _stage_order(self, parent: Board | None, margin_weight: float) -> np.ndarray:
        """The reference boards in the order the stages play them: those the parent did worst
        against first (a child of a parent that loses a board mostly loses it too, and a loss
        lowers the bound the most), else the heaviest first."""
        row = None if parent is None else self._rows.get(fast_key(parent))
        if row is None:
            return np.argsort(-self.weights, kind="stable")
        return np.argsort(row[0] + margin_weight * row[1], kind="stable")

    def _play_staged(self, candidates: list[Board], floors: np.ndarray, margin_weight: float,
                     order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play the candidates against the reference boards in `order`, stage by stage
        (`BOUND_STAGES`), dropping after each stage those whose bound is below their floor.
        Returns the indices of the candidates that played every board, and the (candidates x
        reference boards) points and margins, in the reference's order (NaN where not played)."""
        me = self.seat
        n_o = len(self.boards)
        grid_rows = self._grid.rows(candidates)
        # in stage order: a stage fills columns done..upto of these
        points = np.full((len(candidates), n_o), np.nan)
        margins = np.full((len(candidates), n_o), np.nan)
        weights = self.weights[order]
        played_weight = np.concatenate([[0.0], np.cumsum(weights)])
        # what the reference boards not played yet can add at most to payoff + margin_weight x
        # margin, from each stage end: a win (1) with the whole margin (|margin| <= 1) each; and
        # what a stage's boards can take away at most: a loss (0) with the whole margin against
        top = (1.0 + abs(margin_weight)) * (played_weight[-1] - played_weight)
        worst = -abs(margin_weight)
        alive = np.arange(len(candidates))
        partial = np.zeros(len(candidates))        # the weighted value of the boards played
        ends = bound_stages(n_o)
        done = 0
        while done < n_o:
            # the next stage end after which a candidate could fall below its floor (one that
            # lost every board of the stage): stages where none could are played as one, at no
            # cost of a kernel call each (against strong boards hardly any child can fall
            # below a parent that loses most of its battles itself)
            short = np.max(floors[alive] * self.total - partial[alive])
            upto = next((u for u in ends if u > done and top[u]
                         + worst * (played_weight[u] - played_weight[done]) < short), n_o)
            cols = order[done:upto]
            k = upto - done
            out = self._grid.play_pairs(grid_rows, me, np.repeat(alive, k),
                                        np.tile(cols, len(alive)))
            self.battles += len(alive) * k
            winner = out["winner"].reshape(len(alive), k)
            ratio = (out["hp"] / out["max_hp"]).reshape(len(alive), k, 2)
            p = np.where(winner == me, 1.0, np.where(winner < 0, 0.5, 0.0))
            m = ratio[..., me] - ratio[..., 1 - me]
            points[alive, done:upto] = p
            margins[alive, done:upto] = m
            partial[alive] += (p + margin_weight * m) @ weights[done:upto]
            done = upto
            if done < n_o:
                alive = alive[partial[alive] + top[done] >= floors[alive] * self.total]
                if not len(alive):
                    break
        back = np.argsort(order, kind="stable")      # stage order -> the reference's order
        finished = alive if done == n_o else alive[:0]
        return finished, points[:, back], margins[:, back]

    def _play(self, candidates: list[Board], keys: list[tuple]) -> list[tuple[float, float]]:
        seats = (0, 1) if self.seat is None else (self.seat,)
        payoff = np.zeros(len(candidates))
        margins = np.zeros(len(candidates))
        for me in seats:
            points, margin = self._play_seat(candidates, me)
            p, m = self._sums(points, margin)
            payoff += p / len(seats)
            margins += m / len(seats)
            if self.seat is not None:
                self._rows.update(zip(keys, zip(points, margin)))
        return [(float(p), float(m)) for p, m in zip(payoff, margins)]

    def _finish(self, keys: list[tuple], points: np.ndarray, margin: np.ndarray) -> None:
        """Remember the boards that played every reference board (one seat), summed as `_play`
        sums them."""
        p, m = self._sums(points, margin)
        payoff = np.zeros(len(keys)) + p / 1
        margins = np.zeros(len(keys)) + m / 1
        for k, pk, mk, row in zip(keys, payoff, margins, zip(points, margin)):
            self._memo[k] = (float(pk), float(mk))
            self._rows[k] = row

    def _sums(self, points: np.ndarray, margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return ((points * self.weights).sum(axis=1) / self.total,
                (margin * self.weights).sum(axis=1) / self.total)

    def _play_seat(self, candidates: list[Board], me: int) -> tuple[np.ndarray, np.ndarray]:
        """The (candidates x reference boards) points (1 a win, 0.5 a draw) and margins of the
        candidates in seat `me`."""
        n_o = len(self.boards)
        out = self._grid.play(candidates, me, workers=1)   # candidate-major, the candidate in `me`
        self.battles += len(candidates) * n_o
        winner = out["winner"].reshape(len(candidates), n_o)
        ratio = (out["hp"] / out["max_hp"]).reshape(len(candidates), n_o, 2)
        points = np.where(winner == me, 1.0, np.where(winner < 0, 0.5, 0.0))
        return points, ratio[..., me] - ratio[..., 1 - me]


# The reference boards a bounded batch has played after each stage (`SeatScorer.bounded`): few
# at first, where most children already fall behind their parent, then more at a time; a stage
# more costs a call of the kernel (a few per cent of a stage's battles).
BOUND_STAGES = (4, 8, 16, 24)


def bound_stages(n_boards: int) -> list[int]:
    """The stage ends of `BOUND_STAGES` below `n_boards`, then `n_boards`."""
    return [s for s in BOUND_STAGES if s < n_boards] + [n_boards]
