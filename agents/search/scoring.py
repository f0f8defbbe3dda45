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
    beats its parent: each candidate plays the reference boards one by one, those the parent did
    worst against first, and stops after the battle where its best possible value (every board
    not played yet won at full HP) falls below its floor. What it returns for the others is what
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
        # a board's points and margins by reference board (one seat), for the order in which
        # its children play the reference boards
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
            order = self._play_order(parent, margin_weight)
            boards = [c for c, _ in todo.values()]
            finished, points, margins = self._play_bounded(
                boards, np.array([f for _, f in todo.values()]), margin_weight, order)
            if len(finished):
                done = list(todo)
                self._finish([done[i] for i in finished], points, margins)
        return [self._memo.get(k) for k in keys]

    def _play_order(self, parent: Board | None, margin_weight: float) -> np.ndarray:
        """The reference boards in the order the candidates play them: those the parent did worst
        against first (a child of a parent that loses a board mostly loses it too, and a loss
        lowers the bound the most), else the heaviest first."""
        row = None if parent is None else self._rows.get(fast_key(parent))
        if row is None:
            return np.argsort(-self.weights, kind="stable")
        return np.argsort(row[0] + margin_weight * row[1], kind="stable")

    def _play_bounded(self, candidates: list[Board], floors: np.ndarray, margin_weight: float,
                      order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play each candidate against the reference boards in `order` until its bound falls
        below its floor (`BattleGrid.play_bounded`, compiled: a bound after every battle).
        Returns the indices of the candidates that played every board, and their (candidates x
        reference boards) points and margins in the reference's order."""
        me = self.seat
        n_o = len(self.boards)
        out, played = self._grid.play_bounded(self._grid.rows(candidates), me, order,
                                              self.weights[order], floors * self.total,
                                              margin_weight)
        self.battles += int(played.sum())
        finished = np.nonzero(played == n_o)[0]
        back = np.argsort(order, kind="stable")      # the order played -> the reference's

        def finished_rows(a: np.ndarray, *shape) -> np.ndarray:
            # C order, as `_play_seat` has them: numpy sums a row of another layout in another
            # order, and the last bit of a sum would differ
            return np.ascontiguousarray(a.reshape(len(candidates), n_o, *shape)[finished][:, back])

        ratio = finished_rows(out["hp"], 2) / finished_rows(out["max_hp"], 2)
        return (finished, *_points_and_margins(finished_rows(out["winner"]), ratio, me))

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
        for k, pk, mk, row in zip(keys, p, m, zip(points, margin)):
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
        ratio = (out["hp"] / out["max_hp"]).reshape(len(candidates), n_o, 2)
        return _points_and_margins(out["winner"].reshape(len(candidates), n_o), ratio, me)


def _points_and_margins(winner: np.ndarray, ratio: np.ndarray, me: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per battle, seat `me`'s points (1 a win, 0.5 a draw, 0 a loss) and HP margin (its HP
    share less the opponent's), from the winners and the (.., 2) HP shares."""
    points = np.where(winner == me, 1.0, np.where(winner < 0, 0.5, 0.0))
    return points, ratio[..., me] - ratio[..., 1 - me]
