"""The double oracle (PSRO with an exact oracle's stand-in): a growing set of strategies, the
zero-sum game among them solved for a mixture, and an oracle that adds its best responses to the
mixture until none beats it by more than a tolerance.

The game is symmetric and constant-sum: payoff(a, b) + payoff(b, a) = 1 (a board's win rate over
both seatings against another, draws one half), so a mixture that no strategy beats by more than
`tolerance` is a `tolerance`-Nash equilibrium of the whole game as far as the oracle can tell,
and its value is 1/2. The loop is generic (`double_oracle`): strategies are any objects with a
`key`, the payoff and the oracle are callables, so a test can give it a finite table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable, Sequence

import numpy as np

from .solver import Solution, solve_zero_sum

# payoff(rows, cols) -> matrix;
# oracle(strategies, weights, iteration, attempt) -> [(strategy, payoff vs mixture)]
PayoffFn = Callable[[Sequence, Sequence], np.ndarray]
OracleFn = Callable[[Sequence, np.ndarray, int, int], list]


@dataclass
class DoubleOracleResult:
    strategies: list
    matrix: np.ndarray               # payoff among all strategies (row against column)
    solution: Solution               # the mixture over `strategies`
    history: list[dict] = field(default_factory=list)
    converged: bool = False

    @property
    def support(self) -> list:
        return [self.strategies[i] for i in self.solution.support]


def _grow(matrix: np.ndarray, strategies: list, new: list, payoff: PayoffFn) -> np.ndarray:
    """The matrix with rows and columns for `new` (constant-sum: the new columns are 1 - the
    new rows, transposed)."""
    rows = np.asarray(payoff(new, strategies + new), dtype=np.float64)
    n, k = len(strategies), len(new)
    out = np.zeros((n + k, n + k))
    out[:n, :n] = matrix
    out[n:, :] = rows
    out[:n, n:] = 1.0 - rows[:, :n].T
    return out


def double_oracle(initial: Sequence, payoff: PayoffFn, oracle: OracleFn,
                  key: Callable[[object], Hashable], iterations: int, tolerance: float = 0.01,
                  max_add: int = 3, retries: int = 0,
                  progress: Callable[[int, dict], None] | None = None,
                  solve: Callable[[np.ndarray], Solution] = solve_zero_sum) -> DoubleOracleResult:
    """Up to `iterations` rounds of: solve the game among the strategies so far, ask the oracle
    for its best responses to the mixture, add those (at most `max_add`, best first) that are
    new and beat the mixture by more than `tolerance`; stop when none does (converged). A
    search oracle can miss what is there: before calling it converged the oracle is asked again
    up to `retries` times (attempt 1, 2, ...; a search oracle looks harder each time). `solve`
    picks the mixture among the game's maximin mixtures (a vertex, or the most mixed one)."""
    strategies: list = []
    seen: set = set()
    start = []
    for s in initial:
        if key(s) not in seen:
            seen.add(key(s))
            start.append(s)
    matrix = _grow(np.zeros((0, 0)), strategies, start, payoff)
    strategies = start
    history: list[dict] = []
    for it in range(iterations):
        sol = solve(matrix)
        new: list = []
        best = float("nan")
        for attempt in range(retries + 1):
            found = oracle(strategies, sol.weights, it, attempt)
            best = max((v for _, v in found), default=float("nan"))
            for s, v in found:
                if v > 0.5 + tolerance and key(s) not in seen and len(new) < max_add:
                    seen.add(key(s))
                    new.append(s)
            if new:
                break
        step = {"iteration": it, "strategies": len(strategies), "support": len(sol.support),
                "value": sol.value, "best_response": best, "attempts": attempt + 1,
                "added": len(new)}
        history.append(step)
        if progress:
            progress(it, step)
        if not new:
            return DoubleOracleResult(strategies, matrix, sol, history, converged=True)
        matrix = _grow(matrix, strategies, new, payoff)
        strategies = strategies + new
    return DoubleOracleResult(strategies, matrix, solve(matrix), history, False)
