"""Normalized scores: where an agent's mean wins sit between a floor and a top agent, the
benchmark's common scale (as Atari's human-normalized score, with `random` for 0 and the search
player for 1):

    normalized = (agent's mean wins - floor's) / (top's - floor's)

0 plays like the floor (random), 1 like the top (the planner); above 1 beats it. Every agent of one
evaluation plays the same run seeds (`eval_run_seed`), so the 95% interval is a paired bootstrap
over those seeds: each resample draws run indices with replacement, the same indices for the
agent, the floor and the top, and the interval is the 2.5th and 97.5th percentiles of the
resampled ratio. The resamples come from a generator seeded by the evaluation seed, so the same
runs give the same interval, bit for bit.

The ratio has no meaning where the top does not beat the floor: the score is None when the top's
mean wins are not above the floor's, and a bound is None when more than 2.5% of the resamples put
the top at or below the floor (the interval is unbounded on that side).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

FLOOR = "random"
TOP = "planner"
RESAMPLES = 2000
_STREAM = 0x6E6F726D      # "norm": the bootstrap's own stream of the evaluation seed


def normalized_scores(wins: dict[str, Sequence[float]], floor: str, top: str, seed: int,
                      resamples: int = RESAMPLES) -> dict[str, dict]:
    """Per agent of `wins` (label -> its runs' wins, run i on the same run seed for every
    agent): {"score", "ci": [lo, hi]} as the module docstring says. `floor` and `top` are labels
    of `wins`; every agent needs as many runs as they have."""
    for label in (floor, top):
        if label not in wins:
            raise ValueError(f"normalized scores need {label!r} among the agents")
    n = len(wins[floor])
    if n == 0:
        raise ValueError("normalized scores need at least one run")
    for label, values in wins.items():
        if len(values) != n:
            raise ValueError(f"{label}: {len(values)} runs, not {n} as {floor!r}: the agents "
                             "must play the same run seeds")
    table = {label: np.asarray(values, dtype=np.float64) for label, values in wins.items()}
    rng = np.random.default_rng([seed, _STREAM])
    idx = rng.integers(0, n, size=(resamples, n))
    floor_b = table[floor][idx].mean(axis=1)
    span_b = table[top][idx].mean(axis=1) - floor_b
    floor_mean = float(table[floor].mean())
    span = float(table[top].mean()) - floor_mean
    bad = span_b <= 0
    tail = 0.025
    out = {}
    for label, values in table.items():
        score = (float(values.mean()) - floor_mean) / span if span > 0 else None
        ratio = np.where(bad, np.nan, (values[idx].mean(axis=1) - floor_b)
                         / np.where(bad, 1.0, span_b))
        if span <= 0 or bad.mean() > tail:
            lo = hi = None
        else:
            # the undefined resamples count as the most extreme on both sides (worst case)
            lo = float(np.nanquantile(np.where(bad, -np.inf, ratio), tail))
            hi = float(np.nanquantile(np.where(bad, np.inf, ratio), 1 - tail))
        out[label] = {"score": score, "ci": [lo, hi]}
    return out


def log_score(writer, tag: str, entry: dict, step: int) -> None:
    """A normalized score into TensorBoard: `tag` and `tag`_lo, _hi (what has no value is not
    written). `writer` is a SummaryWriter."""
    if entry["score"] is None:
        return
    writer.add_scalar(tag, entry["score"], step)
    for bound, value in zip(("lo", "hi"), entry["ci"]):
        if value is not None:
            writer.add_scalar(f"{tag}_{bound}", value, step)


def format_score(entry: dict | None) -> str:
    """'0.73 [0.61, 0.85]' (the score as its bounds, to the hundredth), with '-' for what has
    no value."""
    if entry is None or entry["score"] is None:
        return "-"
    lo, hi = entry["ci"]
    bound = (lambda v: "-" if v is None else f"{v:.2f}")
    return f"{entry['score']:.2f} [{bound(lo)}, {bound(hi)}]"


def normalized_figure(rank: str, labels: list[str], scores: dict[str, dict], title: str = ""):
    """Horizontal bars of the normalized scores with their intervals, floor at 0 and top at 1
    marked (agents without a score are left out)."""
    from .charts import pyplot
    plt = pyplot()
    shown = [lab for lab in labels if scores.get(lab, {}).get("score") is not None]
    fig, ax = plt.subplots(figsize=(7.0, 0.9 + 0.38 * max(1, len(shown))))
    ys = np.arange(len(shown))[::-1]
    values = [scores[lab]["score"] for lab in shown]
    lows = [v - (scores[lab]["ci"][0] if scores[lab]["ci"][0] is not None else v)
            for lab, v in zip(shown, values)]
    highs = [(scores[lab]["ci"][1] if scores[lab]["ci"][1] is not None else v) - v
             for lab, v in zip(shown, values)]
    # a score whose interval has no bound (the top's mean wins too near the floor's for the
    # ratio to mean much: '-' in the table) is a grey bar marked so, not a certain blue one
    undefined = [None in scores[lab]["ci"] for lab in shown]
    ax.barh(ys, values, xerr=[lows, highs], ecolor="#333333", capsize=3,
            color=["#bbbbbb" if u else "#4c72b0" for u in undefined])
    for y, v, u in zip(ys, values, undefined):
        if u:
            ax.text(v, y, "  no interval", fontsize=7, color="#666666", va="center")
    ax.set_yticks(ys, shown, fontsize=8)
    from matplotlib.transforms import blended_transform_factory
    above = blended_transform_factory(ax.transData, ax.transAxes)
    for x, name in ((0.0, "floor"), (1.0, "top")):
        ax.axvline(x, color="#999999", lw=0.8, ls="--")
        ax.text(x, 1.01, name, fontsize=7, color="#666666", ha="center", va="bottom",
                transform=above)
    ax.set_xlabel("normalized mean wins: (agent - floor) / (top - floor), 95% interval", fontsize=8)
    import textwrap
    ax.set_title("\n".join(textwrap.wrap(title or f"normalized scores at {rank}", 78)),
                 fontsize=9, pad=12)
    fig.tight_layout()
    return fig
