"""Zero-sum matrix games: the maximin mixture of the row player, by linear programming.

The payoff matrix A holds the row player's payoff (here: a board's win rate over both seatings,
draws counting one half, against another board). The row player's maximin mixture x solves

    maximise v  subject to  sum_i x_i A[i, j] >= v  for every column j,  sum_i x_i = 1,  x >= 0,

a linear programme (scipy's HiGHS). For a symmetric game (A + A^T = 1, as board against board
is) the column player's mixture is the same and the value is 1/2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

# Weights below this are solver round-off, not support: a simplex vertex puts exact zeros on
# most rows, and HiGHS leaves residues of about 1e-12 on a few.
SUPPORT_EPS = 1e-9


class SolverError(RuntimeError):
    """The linear programme did not solve (it always should: the game is bounded)."""


@dataclass(frozen=True)
class Solution:
    weights: np.ndarray      # the row player's mixture, summing to 1
    value: float             # the game's value to the row player

    @property
    def support(self) -> np.ndarray:
        return np.nonzero(self.weights > SUPPORT_EPS)[0]


def solve_zero_sum(payoff: np.ndarray) -> Solution:
    """The row player's maximin mixture of the zero-sum game `payoff` (rows: own strategies,
    columns: the opponent's) and the game's value. Variables (x_1..x_n, v); linprog minimises,
    so the objective is -v."""
    a = np.asarray(payoff, dtype=np.float64)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"the payoff must be a non-empty matrix; got shape {a.shape}")
    n, m = a.shape
    c = np.zeros(n + 1)
    c[-1] = -1.0
    # v - sum_i x_i A[i, j] <= 0 for every column j
    a_ub = np.hstack([-a.T, np.ones((m, 1))])
    a_eq = np.concatenate([np.ones(n), [0.0]])[None, :]
    bounds = [(0.0, None)] * n + [(None, None)]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise SolverError(f"linprog: {res.message}")
    x = np.clip(res.x[:n], 0.0, None)
    x[x <= SUPPORT_EPS] = 0.0
    return Solution(x / x.sum(), float(res.x[-1]))


def entropy(weights: np.ndarray) -> float:
    """Shannon entropy in nats (exp of it is the mixture's effective size)."""
    p = np.asarray(weights, dtype=np.float64)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum()) + 0.0 if len(p) else 0.0   # + 0.0: no -0.0


def effective_size(weights: np.ndarray) -> float:
    return math.exp(entropy(weights))
