"""alpha-Rank (Omidshafiei et al., 2019) of players from their head-to-head matrix.

Nash asks which mixture none of the players beats; alpha-Rank asks where a population drifts
when its members copy whoever does better. A population of `population` players all use one
strategy; now and then one of them switches to another strategy (each other strategy equally
likely) and the switch spreads or dies out by selection of intensity `alpha`. The chain over
"everyone plays s" states has a stationary distribution: the share of time the population spends
at each player. Players that beat what beats them keep mass; a cycle (rock, paper, scissors)
shares it; a player every other beats gets almost none. It is defined for any matrix, has one
answer (Nash may have many), and ranks every player, where Nash gives weight to few.

This is OpenSpiel's single-population alpha-Rank (`open_spiel.python.egt.alpharank.compute`) for
a symmetric constant-sum game, with its defaults: population 50, alpha 100, the local selection
model (a switch spreads with the Fermi probability of its score against the resident,
u = alpha x (score(r, s) - score(s, r))). The fixation probability of strategy r in a population
of s is rho = (1 - exp(-u)) / (1 - exp(-population x u)), or 1 / population at u = 0; computed
here in logs, so that alpha x population of thousands neither overflows nor divides by zero
(OpenSpiel's warns and returns nan there). tests/agents/test_alpharank.py pins its figures to
OpenSpiel 2.0.2's on the same matrices.
"""
from __future__ import annotations

import math

import numpy as np

# OpenSpiel's alpharank.compute defaults: the population's size and the selection intensity.
DEFAULT_POPULATION = 50
DEFAULT_ALPHA = 100.0
MAX_ALPHA = 1e4           # beyond it every fixation is 0 or 1 to double precision anyway
MAX_POPULATION = 10_000


def _log_expm1(x: float) -> float:
    """log(exp(x) - 1) for x > 0, without overflow."""
    return x + math.log(-math.expm1(-x)) if x > 30.0 else math.log(math.expm1(x))


def fixation(u: float, population: int) -> float:
    """The probability that one switch to a strategy with selection advantage u (> 0: it does
    better than the resident) takes over a population of `population`."""
    if abs(u) < 1e-14:
        return 1.0 / population
    if u > 0:
        return -math.expm1(-u) / -math.expm1(-population * u)
    # u < 0: (1 - e^a) / (1 - e^(m a)) with a = -u > 0 is (e^a - 1) / (e^(m a) - 1)
    a = -u
    return math.exp(_log_expm1(a) - _log_expm1(population * a))


def alpha_rank(scores: np.ndarray, alpha: float = DEFAULT_ALPHA,
               population: int = DEFAULT_POPULATION) -> np.ndarray:
    """The stationary distribution of alpha-Rank's chain (the module docstring) over the players
    of `scores`, where scores[i, j] is i's mean score against j (the diagonal is not read). Every
    off-diagonal pair must be given (ValueError on NaN); a score in [0, 1] with scores +
    scores.T = 1 is a constant-sum game, as the ladder's matrix is, but any payoffs work."""
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0]
    if scores.ndim != 2 or scores.shape != (n, n) or n == 0:
        raise ValueError(f"alpha-Rank needs a square matrix of players, not shape {scores.shape}")
    if not (0.0 < alpha <= MAX_ALPHA) or not math.isfinite(alpha):
        raise ValueError(f"alpha must be in (0, {MAX_ALPHA:g}], not {alpha}")
    if not 2 <= population <= MAX_POPULATION:
        raise ValueError(f"the population must be 2..{MAX_POPULATION}, not {population}")
    off = ~np.eye(n, dtype=bool)
    if not np.isfinite(scores[off]).all():
        raise ValueError("alpha-Rank needs every pair of players to have met")
    if n == 1:
        return np.ones(1)
    eta = 1.0 / (n - 1)            # a switch picks each other strategy alike
    chain = np.zeros((n, n))
    for s in range(n):
        for r in range(n):
            if r != s:
                chain[s, r] = eta * fixation(alpha * (scores[r, s] - scores[s, r]), population)
        chain[s, s] = 1.0 - chain[s].sum()
    return stationary(chain)


def stationary(chain: np.ndarray) -> np.ndarray:
    """The stationary distribution pi = pi chain of a row-stochastic matrix with one closed class
    (ValueError if it has more: then the answer is not unique)."""
    n = chain.shape[0]
    # pi (chain - I) = 0 and sum(pi) = 1: the transposed system, one equation replaced by the sum
    system = chain.T - np.eye(n)
    system[-1, :] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    if np.linalg.matrix_rank(system) < n:
        raise ValueError("alpha-Rank's chain has more than one stationary distribution "
                         "(players that never switch away from each other); lower alpha")
    pi = np.linalg.solve(system, rhs)
    pi = np.clip(pi, 0.0, None)    # rounding can leave -1e-17 where the mass is 0
    return pi / pi.sum()
