"""Charts with matplotlib (the Agg backend: no display), the `charts` extra, which the `train`
extra brings: the league's win-rate matrix here, and the shared pieces of every chart (the
metagame's and exploitability's are agents/design/metagame/charts.py).

`charts_problem()` says why charts cannot be drawn (matplotlib missing), so a script refuses the
option, or the league its run, before any work. A figure is written as a PNG by `save` or turned
into an (H, W, 3) uint8 picture for TensorBoard by `to_array`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

DPI = 110
CHARTS_INSTALL = "pip install 'rune-env[charts]' (the train extra brings it too)"


def charts_problem() -> str | None:
    """Why charts cannot be drawn here, or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return f"charts need matplotlib: {CHARTS_INSTALL}"
    return None


def pyplot():
    """matplotlib's pyplot on the Agg backend (ImportError with the install line without it)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(f"charts need matplotlib: {CHARTS_INSTALL}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, path: str | Path) -> Path:
    """Write the figure as a PNG and close it."""
    fig.savefig(path, dpi=DPI)
    pyplot().close(fig)
    return Path(path)


def to_array(fig) -> np.ndarray:
    """The figure as an (H, W, 3) uint8 picture (TensorBoard's HWC), closed."""
    fig.set_dpi(DPI)
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba(), dtype=np.uint8)
    pyplot().close(fig)
    return np.ascontiguousarray(rgba[..., :3])


def win_matrix_figure(names: list[str], scores: np.ndarray, title: str = ""):
    """The league's win-rate matrix: row i, column j is the score of member i against member j
    (red 0, white 0.5, blue 1; grey: not played), the score in each played cell, the members
    named on the left and numbered along the top."""
    plt = pyplot()
    n = len(names)
    side = 1.2 + 0.42 * n
    label = 0.08 * max((len(s) for s in names), default=4)
    fig, ax = plt.subplots(figsize=(side + label + 1.2, side))
    cmap = plt.get_cmap("RdBu").copy()
    cmap.set_bad((0.78, 0.78, 0.78))
    m = np.ma.masked_invalid(np.asarray(scores, dtype=np.float64))
    image = ax.imshow(m, vmin=0.0, vmax=1.0, cmap=cmap)
    played = ~np.ma.getmaskarray(m)
    for i in range(n):
        for j in range(n):
            if played[i, j]:
                v = float(m[i, j])
                # two decimals, the leading 0 left out to fit: 0.996 is "1.00", not ".00"
                text = f"{v:.2f}"
                ax.text(j, i, text[1:] if text.startswith("0.") else text, ha="center", va="center",
                        fontsize=7, color="white" if abs(v - 0.5) > 0.35 else "black")
    ax.set_xticks(range(n), [str(i) for i in range(n)], fontsize=7)
    ax.xaxis.tick_top()
    ax.set_yticks(range(n), [f"{i} {name}" for i, name in enumerate(names)], fontsize=7)
    fig.colorbar(image, ax=ax, shrink=0.8, label="score (row against column)")
    ax.set_title(title or "league win rates", fontsize=9, pad=18)
    fig.tight_layout()
    return fig
