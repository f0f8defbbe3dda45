"""Paired differences: how far apart two agents of one evaluation are, run seed by run seed.

Every agent of one evaluation plays the same run seeds (`eval_run_seed`). For each pair of agents
(a, b) this gives the differences a - b of three rates: the battle win rate (battles won over
battles fought, pooled over the runs), mean wins a run and the clear rate, each with a 95%
interval from a paired bootstrap over the run seeds: each resample draws run indices with
replacement, the same indices for both agents, and the interval is the 2.5th and 97.5th
percentiles of the resampled difference. A difference is **apart from 0** when its interval does
not hold 0 and the agents shared at least MIN_APART_RUNS run seeds: a bootstrap of fewer says
little of how the runs spread (of one, nothing: its interval is the point itself, and was
starred). The resamples come from a generator seeded by the evaluation seed (a stream of its
own), so the same runs give the same intervals, bit for bit.

Why besides each agent's own interval: two agents whose own 95% intervals overlap can still be
apart run for run (a run seed fixes what both agents meet until their play differs: the core
offers, the first shop), and a difference's interval is the direct answer to "is a ahead of b";
the agents' own intervals stay as they are in the table. It is the benchmark's
second reading, not a replacement: "intervals apart" in an issue's acceptance means the agents'
own intervals.
"""
from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np

RESAMPLES = 2000
MIN_APART_RUNS = 10       # run seeds a pair must share before a difference is called apart
_STREAM = 0x70616972      # "pair": the bootstrap's own stream of the evaluation seed
MEASURES = ("battle_win_rate", "mean_wins", "clear_rate")
DIGITS = {"battle_win_rate": 3, "mean_wins": 2, "clear_rate": 3}    # the printed table's


def _per_run(runs: Sequence[dict]) -> dict[str, np.ndarray]:
    """A run's battles won and fought, wins and clear (0/1), as arrays over the runs."""
    return {"won": np.array([sum(b["outcome"] == "win" for b in r["battles"]) for r in runs],
                            dtype=np.float64),
            "fought": np.array([len(r["battles"]) for r in runs], dtype=np.float64),
            "wins": np.array([r["wins"] for r in runs], dtype=np.float64),
            "cleared": np.array([bool(r["cleared"]) for r in runs], dtype=np.float64)}


def _rates(per_run: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The three rates of the runs `idx` picks (a row of indices a resample, or one row)."""
    fought = per_run["fought"][idx].sum(axis=-1)
    won = per_run["won"][idx].sum(axis=-1)
    return {"battle_win_rate": np.divide(won, fought, out=np.zeros_like(won), where=fought > 0),
            "mean_wins": per_run["wins"][idx].mean(axis=-1),
            "clear_rate": per_run["cleared"][idx].mean(axis=-1)}


def paired_differences(runs: dict[str, Sequence[dict]], seed: int,
                       resamples: int = RESAMPLES) -> list[dict]:
    """For each pair of agents of `runs` (label -> its runs, as `evaluate` returns them), in
    the order given: {"a", "b", and per measure {"difference", "ci": [lo, hi], "apart"}} (the
    module docstring). ValueError when the agents did not play the same run seeds."""
    labels = list(runs)
    if len(labels) < 2:
        return []
    seeds = [r["run_seed"] for r in runs[labels[0]]]
    if not seeds:
        raise ValueError("paired differences need at least one run")
    for label in labels[1:]:
        if [r["run_seed"] for r in runs[label]] != seeds:
            raise ValueError(f"{label}: its run seeds are not {labels[0]}'s: paired differences "
                             "need every agent on the same runs")
    per_run = {label: _per_run(rs) for label, rs in runs.items()}
    n = len(seeds)
    idx = np.random.default_rng([seed, _STREAM]).integers(0, n, size=(resamples, n))
    whole = np.arange(n)
    point = {label: _rates(p, whole) for label, p in per_run.items()}
    boot = {label: _rates(p, idx) for label, p in per_run.items()}
    out = []
    for a, b in combinations(labels, 2):
        entry: dict = {"a": a, "b": b}
        for m in MEASURES:
            diff = boot[a][m] - boot[b][m]
            lo, hi = (float(q) for q in np.quantile(diff, [0.025, 0.975]))
            entry[m] = {"difference": float(point[a][m] - point[b][m]), "ci": [lo, hi],
                        "apart": bool((lo > 0 or hi < 0) and n >= MIN_APART_RUNS)}
        out.append(entry)
    return out


def format_paired(pairs: list[dict], runs: int) -> str:
    """The pairs as a printed table: each difference, its interval, and * where apart from 0."""
    names = [f"{p['a']} - {p['b']}" for p in pairs]
    width = max([44, *(len(n) + 1 for n in names)])       # a long model path keeps its column
    apart = ("* apart from 0" if runs >= MIN_APART_RUNS else
             f"no * with fewer than {MIN_APART_RUNS} runs: too few to say")
    lines = [f"\npaired differences (first - second; 95% paired bootstrap over the {runs} run "
             f"seeds; {apart}):",
             f"{'pair':<{width}} {'battle win rate':>27} {'mean wins':>23} {'clear rate':>27}"]
    for name, p in zip(names, pairs):
        cells = []
        for m in MEASURES:
            d, digits = p[m], DIGITS[m]
            cells.append(f"{d['difference']:+.{digits}f} [{d['ci'][0]:+.{digits}f}, "
                         f"{d['ci'][1]:+.{digits}f}]{'*' if d['apart'] else ' '}")
        lines.append(f"{name:<{width}} {cells[0]:>27} {cells[1]:>23} {cells[2]:>27}")
    return "\n".join(lines)


__all__ = ["MEASURES", "MIN_APART_RUNS", "RESAMPLES", "format_paired", "paired_differences"]
