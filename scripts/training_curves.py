#!/usr/bin/env python3
"""Training runs' curves side by side: one TensorBoard scalar of several runs in one chart.

    python scripts/training_curves.py RUN_DIR [RUN_DIR ...] [--tag game/battle_win_rate]
                                      [--labels A B ...] [--line VALUE:LABEL ...]
                                      [--max-steps N] [--out FILE.png] [--json]

Reads each run's TensorBoard (RUN_DIR/tb/, train.py's; its PPO part, not tb/pretrain/) and draws
`--tag` against the environment steps, one line per run. A run cloned first (train.py's
`pretrain:`) says in its legend what its demonstrations and cloning took (pretrain.json:
demonstration runs and seconds, cloning seconds), since its step 0 comes after them. `--line
0.676:greedy` draws a level to compare with. Writes FILE (default runs/curves.png) and prints the
points (JSON with --json). A run without the tag, or a directory that is not a run, is one
`error: ...` line and exit status 2.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from rune_env.files import ascii_number
from agents.cli.args import (CHART_SUFFIXES, MAX_STEPS, add_json_argument, check_output, fail,
                             int_in, script_parser)

DEFAULT_TAG = "game/battle_win_rate"
FEW_POINTS = 40          # a curve of at most this many points gets a dot on each


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="train.py run directories, one or more (required)")
    p.add_argument("--tag", default=DEFAULT_TAG,
                   help=f"the TensorBoard scalar to draw (default {DEFAULT_TAG})")
    p.add_argument("--labels", nargs="+", default=None, metavar="LABEL",
                   help="a legend label per run (default: the run directories' names)")
    p.add_argument("--line", nargs="+", default=[], metavar="VALUE:LABEL",
                   help="levels to draw, e.g. 0.676:greedy, each VALUE within +-1e12 (a "
                        "negative one as --line=-0.5:x, argparse's way; without :LABEL the "
                        "value is its label) (default: none)")
    p.add_argument("--max-steps", type=int_in(1, MAX_STEPS), default=None, metavar="N",
                   help=f"draw steps up to N, 1..{MAX_STEPS} (default: all)")
    p.add_argument("--out", default=str(ROOT / "runs" / "curves.png"), metavar="FILE",
                   help="the chart to write, a .png, .svg or .pdf (default runs/curves.png)")
    add_json_argument(p, "the points as JSON instead of a summary")
    return p


# An event file's record: its length (8 bytes, little-endian), that length's CRC (4), the data,
# the data's CRC (4). TensorBoard reads a record's claimed length in one read, so a 28-byte file
# claiming 2^36 bytes was a MemoryError; a training run's records are scalars and PNG images of
# kilobytes. A longer claim is refused before TensorBoard reads the file.
MAX_EVENT_RECORD = 64 * 2**20


def check_event_file(path: Path) -> None:
    """ValueError (one line naming the file) unless `path` is a regular file whose records
    each claim at most MAX_EVENT_RECORD bytes (a last record cut short by a kill is fine:
    TensorBoard stops there). A FIFO would block the read."""
    import struct
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file (a pipe or a device?)")
    size = path.stat().st_size
    with open(path, "rb") as fh:
        pos = 0
        while pos + 12 <= size:
            fh.seek(pos)
            (length,) = struct.unpack("<Q", fh.read(8))
            if length > MAX_EVENT_RECORD:
                raise ValueError(f"{path}: a record at byte {pos} claims {length:,} bytes (at "
                                 f"most {MAX_EVENT_RECORD:,}): not a TensorBoard event file, or "
                                 f"a corrupt one")
            pos += 12 + length + 4


def scalars(run: Path, tag: str) -> list[tuple[int, float]]:
    """(step, value) of `tag` in the run's PPO TensorBoard (every tb/ sub-run but pretrain/),
    sorted by step; ValueError when the run has none, or an event file is not one
    (`check_event_file`)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    tb = run / "tb"
    if not tb.is_dir():
        raise ValueError(f"{run}: not a training run (no tb/)")
    points: dict[int, float] = {}
    files = sorted(tb.rglob("events.out.tfevents.*"))
    for path in files:
        check_event_file(path)
    tags: set[str] = set()
    for d in sorted({p.parent for p in files}):
        if d.name == "pretrain":
            continue
        ea = EventAccumulator(str(d), size_guidance={"scalars": 0})
        ea.Reload()
        tags |= set(ea.Tags()["scalars"])
        if tag in ea.Tags()["scalars"]:
            for e in ea.Scalars(tag):
                points[int(e.step)] = float(e.value)   # a resumed run's later write wins
    if not points:
        held = (f"it has {len(tags)} other scalar tags" if tags else
                "its event files hold no scalars at all: empty, or corrupt" if files else
                "it has no event files")
        raise ValueError(f"{run}: no scalar {tag!r} in its TensorBoard ({held})")
    return sorted(points.items())


def pretrain_note(run: Path) -> str:
    """'+ 60 planner:boards=30 runs in 43 s, cloning 10 s', or '' for a run not cloned."""
    path = run / "pretrain.json"
    if not path.is_file():
        return ""
    try:
        p = json.loads(path.read_text(encoding="utf-8"))
        return (f" (cloned first: {p['runs']} {p['agent']} runs in {p['demo_seconds']:.0f} s, "
                f"cloning {p['clone_seconds']:.0f} s)")
    except (ValueError, KeyError, TypeError):
        return " (cloned first)"


MAX_LINE_VALUE = 1e12      # a reference line's value (matplotlib cannot lay out an axis to 1e308)


def chart_title(runs: list[Path], tag: str) -> str:
    """The tag, and the rules hashes and seeds of the runs (from each run's config.yaml; a run
    whose config does not read is left out of them)."""
    from agents.train.config import ConfigError, rules_hash
    from agents.train.train_config import read_config
    hashes, seeds = [], []
    for run in runs:
        try:
            cfg = read_config(run / "config.yaml")
            hashes.append(rules_hash(cfg.env_kwargs))
            seeds.append(str(cfg.seed))
        except (ConfigError, ValueError, OSError):
            continue
    parts = [tag]
    if hashes:
        parts.append("rules " + ", ".join(dict.fromkeys(hashes)))
        parts.append("seeds " + ", ".join(seeds))
    return " · ".join(parts)


def parse_lines(items: list[str]) -> list[tuple[float, str]]:
    out = []
    for item in items:
        value, colon, label = item.partition(":")
        try:
            number = float(ascii_number(value))     # '١' was drawn at 1.0
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and abs(number) <= MAX_LINE_VALUE):
            raise ValueError(f"--line {item!r}: VALUE:LABEL with VALUE a finite number within "
                             f"+-{MAX_LINE_VALUE:g}")
        out.append((number, label if colon else value))
    return out


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    runs = [Path(r) for r in a.runs]
    if a.labels is not None and len(a.labels) != len(runs):
        return fail(f"--labels: {len(a.labels)} labels for {len(runs)} runs")
    if (problem := check_output(Path(a.out), "--out", CHART_SUFFIXES)):
        return fail(problem)
    try:
        lines = parse_lines(a.line)
        curves = {str(r): scalars(r, a.tag) for r in runs}
    except ValueError as exc:
        return fail(str(exc))
    if a.max_steps is not None:
        curves = {k: [(s, v) for s, v in pts if s <= a.max_steps] for k, pts in curves.items()}
    from agents.evaluation.charts import pyplot, save
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, run in enumerate(runs):
        pts = curves[str(run)]
        label = (a.labels[i] if a.labels else run.name) + pretrain_note(run)
        # a dot on each point of a short curve: one point alone is no line, and was not drawn
        ax.plot([s for s, _ in pts], [v for _, v in pts], lw=1.2, label=label,
                marker="o" if len(pts) <= FEW_POINTS else None, markersize=3)
    values = [v for pts in curves.values() for _, v in pts] + [v for v, _ in lines]
    if a.tag.endswith("rate") and values and all(0.0 <= v <= 1.0 for v in values):
        ax.set_ylim(0.0, 1.0)         # a rate on its whole scale, so runs compare by eye
    for value, label in lines:
        ax.axhline(value, color="#777777", lw=0.8, ls="--")
        ax.text(ax.get_xlim()[1], value, f"{label} ", fontsize=7, ha="right", va="bottom",
                color="#555555")
    ax.set_xlabel("environment steps of PPO", fontsize=8)
    ax.set_ylabel(a.tag, fontsize=8)
    ax.set_title(chart_title(runs, a.tag), fontsize=8)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    save(fig, a.out)
    if a.json:
        print(json.dumps({"tag": a.tag, "runs": {k: [list(p) for p in v] for k, v in curves.items()}}))
    else:
        for run in runs:
            pts = curves[str(run)]
            print(f"{run.name}: {len(pts)} points, last {pts[-1][1]:.3f} at {pts[-1][0]} steps"
                  if pts else f"{run.name}: no points")
        print(f"written: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
