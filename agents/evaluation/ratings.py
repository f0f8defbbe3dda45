"""Ratings from head-to-head results: a Bradley-Terry fit on an Elo scale.

`fit_bradley_terry(results)` takes (a, b, score_of_a) triples (1 win, 0 loss, 0.5 draw) and
returns ratings with mean 1500, where a 400-point gap means 10:1 odds, as in Elo. The fit is
the classic minorisation-maximisation iteration (Hunter 2004) with a tiny prior of one draw
against a virtual average player, so that a side that won or lost everything keeps a finite
rating.
"""
from __future__ import annotations

import math
from collections import defaultdict


def fit_bradley_terry(results: list[tuple[str, str, float]], iterations: int = 500,
                      prior_games: float = 1.0) -> dict[str, float]:
    players = sorted({p for a, b, _ in results for p in (a, b)})
    if not players:
        return {}
    wins: dict[str, float] = defaultdict(float)
    games: dict[tuple[str, str], float] = defaultdict(float)
    for a, b, s in results:
        wins[a] += s
        wins[b] += 1.0 - s
        games[(a, b)] += 1.0
        games[(b, a)] += 1.0
    strength = {p: 1.0 for p in players}
    for _ in range(iterations):
        new = {}
        for p in players:
            # the prior: prior_games games against a virtual player of strength 1, half won
            denom = prior_games / (strength[p] + 1.0)
            for q in players:
                n = games.get((p, q), 0.0)
                if n:
                    denom += n / (strength[p] + strength[q])
            new[p] = (wins[p] + prior_games / 2) / denom
        # normalise to geometric mean 1
        g = math.exp(sum(math.log(v) for v in new.values()) / len(new))
        strength = {p: v / g for p, v in new.items()}
    return {p: 1500.0 + 400.0 * math.log10(strength[p]) for p in players}
