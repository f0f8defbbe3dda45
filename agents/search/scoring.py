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
by board content, so a climb never replays a board.
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
    `battles` counts the battles played."""

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

    def __call__(self, candidates: Sequence[Board]) -> list[tuple[float, float]]:
        keys = [fast_key(c) for c in candidates]
        todo: dict[tuple, Board] = {}
        for k, c in zip(keys, candidates):
            if k not in self._memo:
                todo.setdefault(k, c)
        if todo:
            for k, v in zip(todo, self._play(list(todo.values()))):
                self._memo[k] = v
        return [self._memo[k] for k in keys]

    def _play(self, candidates: list[Board]) -> list[tuple[float, float]]:
        seats = (0, 1) if self.seat is None else (self.seat,)
        payoff = np.zeros(len(candidates))
        margins = np.zeros(len(candidates))
        for me in seats:
            p, m = self._play_seat(candidates, me)
            payoff += p / len(seats)
            margins += m / len(seats)
        return [(float(p), float(m)) for p, m in zip(payoff, margins)]

    def _play_seat(self, candidates: list[Board], me: int) -> tuple[np.ndarray, np.ndarray]:
        n_o = len(self.boards)
        out = self._grid.play(candidates, me, workers=1)   # candidate-major, the candidate in `me`
        self.battles += len(candidates) * n_o
        winner = out["winner"].reshape(len(candidates), n_o)
        ratio = (out["hp"] / out["max_hp"]).reshape(len(candidates), n_o, 2)
        points = np.where(winner == me, 1.0, np.where(winner < 0, 0.5, 0.0))
        margin = ratio[..., me] - ratio[..., 1 - me]
        return ((points * self.weights).sum(axis=1) / self.total,
                (margin * self.weights).sum(axis=1) / self.total)
