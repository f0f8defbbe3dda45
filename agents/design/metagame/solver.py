"""Zero-sum matrix games: the maximin mixture of the row player, by linear programming, and the
most mixed one of them (maximum entropy).

The payoff matrix A holds the row player's payoff (here: a board's win rate over both seatings,
draws counting one half, against another board). The row player's maximin mixture x solves

    maximise v  subject to  sum_i x_i A[i, j] >= v  for every column j,  sum_i x_i = 1,  x >= 0,

a linear programme (scipy's HiGHS). For a symmetric game (A + A^T = 1, as board against board
is) the column player's mixture is the same and the value is 1/2.

A game can have many maximin mixtures (boards that play the same against every board in the
game, or cycles of equal strength), and the simplex method returns a vertex of that set: as few
boards as it can. `max_entropy_zero_sum` returns the one of largest entropy instead (the
maximum-entropy Nash equilibrium): the same value in the game, but the weight spread over every
board that can carry it, which an outside board must then beat all of. It maximises
-sum x_i log x_i over {x >= 0, sum x = 1, A^T x >= v - slack} (scipy's SLSQP from the vertex,
a feasible start); weights under `MAXENT_CUT` are then dropped (the iterative solver leaves
residues there) and the rest renormalised.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize

# Weights below this are solver round-off, not support: a simplex vertex puts exact zeros on
# most rows, and HiGHS leaves residues of about 1e-12 on a few.
SUPPORT_EPS = 1e-9
# The maximum-entropy mixture's weights below this are SLSQP's residues (a weight of 1e-5 is 0.01
# of the 1000 counts a mixture is fielded with)
MAXENT_CUT = 1e-5
# ... and the value it may lose by that cut (a thousandth of a win rate; the double oracle adds
# only boards that beat a mixture by 20 times that)
MAXENT_LOSS = 1e-3


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


def max_entropy_zero_sum(payoff: np.ndarray, slack: float = 1e-7,
                         max_size: int = 400) -> Solution:
    """The maximin mixture of largest entropy (the module docstring), within `slack` of the
    value (and `MAXENT_LOSS` after the cut); the vertex (`solve_zero_sum`) when more than
    `max_size` rows could carry weight or SLSQP does not improve on it."""
    a = np.asarray(payoff, dtype=np.float64)
    vertex = solve_zero_sum(a)
    # a row in the support of a maximin mixture is a best response to every minimax mixture of
    # the column player, the vertex's own among them when the game is symmetric (A + A^T = 1),
    # and to the column player's optimum in general: only those rows can carry weight
    cols = vertex.weights if np.allclose(a + a.T, 1.0) else _column_mixture(a)
    rows = np.nonzero(a @ cols >= vertex.value - slack)[0]
    k = len(rows)
    if k <= 1 or k > max_size:
        return vertex
    sub = a[rows]
    floor = vertex.value - slack

    def neg_entropy(x):
        xc = np.clip(x, 1e-300, None)
        return float((xc * np.log(xc)).sum())

    cons = [{"type": "ineq", "fun": lambda x: sub.T @ x - floor, "jac": lambda x: sub.T},
            {"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones((1, k))}]
    res = minimize(neg_entropy, vertex.weights[rows],
                   jac=lambda x: np.log(np.clip(x, 1e-300, None)) + 1.0,
                   bounds=[(0.0, 1.0)] * k, constraints=cons, method="SLSQP",
                   options={"maxiter": 300, "ftol": 1e-12})
    x = np.zeros(a.shape[0])
    x[rows] = np.clip(res.x, 0.0, None)
    x[x < MAXENT_CUT] = 0.0
    if not x.sum() > 0:
        return vertex
    x = x / x.sum()
    if (a.T @ x).min() < vertex.value - MAXENT_LOSS or entropy(x) <= entropy(vertex.weights):
        return vertex
    return Solution(x, float((a.T @ x).min()))


def _column_mixture(a: np.ndarray) -> np.ndarray:
    """The column player's minimax mixture (the row player's maximin of the game 1 - A^T)."""
    return solve_zero_sum(1.0 - a.T).weights


def entropy(weights: np.ndarray) -> float:
    """Shannon entropy in nats (exp of it is the mixture's effective size)."""
    p = np.asarray(weights, dtype=np.float64)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum()) + 0.0 if len(p) else 0.0   # + 0.0: no -0.0


def effective_size(weights: np.ndarray) -> float:
    return math.exp(entropy(weights))


def symmetric_equilibrium(scores: np.ndarray) -> np.ndarray:
    """The maximum-entropy Nash equilibrium of the symmetric zero-sum game whose row player
    scores `scores` (complete, scores + scores.T = 1: players' head-to-head mean scores, as
    scripts/ladder.py's matrix): the mixture of players none of them beats on average. Its value
    is 1/2. ValueError if a pair never met (NaN)."""
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        raise ValueError("the equilibrium needs every pair to have met")
    return max_entropy_zero_sum(scores).weights
