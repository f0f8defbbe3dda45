"""Ratings from head-to-head results: a Bradley-Terry fit on an Elo scale, with intervals.

`fit_bradley_terry(results)` takes (a, b, score_of_a) triples (1 win, 0 loss, 0.5 draw) and
returns ratings with mean 1500, where a 400-point gap means 10:1 odds, as in Elo. The fit is
the classic minorisation-maximisation iteration (Hunter 2004) with a tiny prior of one draw
against a virtual average player, so that a side that won or lost everything keeps a finite
rating.

`rating_intervals(clusters, ...)` gives each rating a percentile bootstrap interval: the results
come in clusters that are not independent of each other's games (scripts/ladder.py: every battle
of one drafting run, whose boards meet every other agent's and pool's), so whole clusters are
resampled with replacement and the ratings refitted; each rating's interval is the middle
`level` of its refits. Seeded: the same clusters and seed give the same intervals.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

Tally = tuple[dict[str, float], dict[tuple[str, str], float]]


def tally(results) -> Tally:
    """(each player's total score, the games of each ordered pair) of (a, b, a's score) triples."""
    wins: dict[str, float] = defaultdict(float)
    games: dict[tuple[str, str], float] = defaultdict(float)
    for a, b, s in results:
        wins[a] += s
        wins[b] += 1.0 - s
        games[(a, b)] += 1.0
        games[(b, a)] += 1.0
    return wins, games


def fit_bradley_terry(results: list[tuple[str, str, float]], iterations: int = 500,
                      prior_games: float = 1.0) -> dict[str, float]:
    return fit_tally(tally(results), iterations, prior_games)


def fit_tally(counts: Tally, iterations: int = 500, prior_games: float = 1.0) -> dict[str, float]:
    """fit_bradley_terry on results already tallied (`tally`)."""
    wins, games = counts
    players = sorted({p for pair in games for p in pair})
    if not players:
        return {}
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


def rating_intervals(clusters: list[list[tuple[str, str, float]]], resamples: int, seed: int,
                     level: float = 0.95, iterations: int = 500,
                     progress=None) -> dict[str, tuple[float, float]]:
    """Each player's percentile bootstrap interval (`level`, from `resamples` refits) of its
    fit_bradley_terry rating: `clusters` (lists of (a, b, a's score)) are drawn whole, with
    replacement, from numpy's generator seeded `seed`. A player absent from a resample is not
    rated in it; one rated in none has no interval. `progress` gets .update(1) a resample.
    A side that won (or lost) every game in every resample gets an interval as narrow as the
    prior leaves it: the games cannot say by how much it is stronger, only that it won them."""
    tallies = [tally(c) for c in clusters if c]
    if not tallies or resamples < 1:
        return {}
    rng = np.random.default_rng(seed)
    refits: dict[str, list[float]] = defaultdict(list)
    for _ in range(resamples):
        picks = np.bincount(rng.integers(len(tallies), size=len(tallies)), minlength=len(tallies))
        wins: dict[str, float] = defaultdict(float)
        games: dict[tuple[str, str], float] = defaultdict(float)
        for (w, g), times in zip(tallies, picks):
            if times:
                for k, v in w.items():
                    wins[k] += times * v
                for k, v in g.items():
                    games[k] += times * v
        for p, r in fit_tally((wins, games), iterations).items():
            refits[p].append(r)
        if progress is not None:
            progress.update(1)
    tail = 100 * (1 - level) / 2
    return {p: (float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail)))
            for p, v in refits.items()}


def score_matrix(results, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(mean score of row against column, games of each pair) over (a, b, a's score) results,
    both ways round (b's score is 1 - a's); NaN where a pair never met, 0.5 on the diagonal."""
    index = {n: i for i, n in enumerate(names)}
    total = np.zeros((len(names), len(names)))
    games = np.zeros_like(total)
    for a, b, s in results:
        i, j = index[a], index[b]
        total[i, j] += s
        total[j, i] += 1.0 - s
        games[i, j] += 1
        games[j, i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(games > 0, total / np.maximum(games, 1), np.nan)
    np.fill_diagonal(scores, 0.5)
    return scores, games

