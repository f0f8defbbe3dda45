"""How the evaluation scripts name what they evaluate: an agent's label (`agent_label`: a model
path as <run>/<file>), its TensorBoard sub-run (`tb_dir_name`, and `fresh_tb_run` to rewrite one)
and a rank given as a name or a number (`rank_name`)."""
from __future__ import annotations

from pathlib import Path


def agent_label(name: str) -> str:
    """A model path as <run>/<file stem> (a checkpoint, runs/<run>/checkpoints/<file>, as
    <run>/<file stem> too, so the checkpoints of two runs differ); any other name as it is."""
    p = Path(name)
    if p.suffix == ".zip" or p.exists():
        parent = p.parent.parent if p.parent.name == "checkpoints" else p.parent
        return f"{parent.name}/{p.stem}" if parent.name else p.stem
    return name


def tb_dir_name(label: str) -> str:
    """An agent's TensorBoard sub-run: its label with '/' as '_' (runs/x/final_model -> x_final_model)."""
    return label.replace("/", "_").replace("\\", "_")


def fresh_tb_run(d: Path) -> Path:
    """A TensorBoard run directory emptied of its earlier event files, so a rerun replaces its
    curves instead of mixing with them."""
    if d.is_dir():
        for old in d.glob("events.out.tfevents.*"):
            old.unlink()
    return d


def rank_name(text: str, rules, option: str = "--rank") -> str:
    """--rank as a name or a number 0..5 (as the envs take it) -> the rank's name; ValueError
    naming `option` and the ranks otherwise."""
    names = [r.id for r in rules.spec.ranks]
    listing = ", ".join(f"{i} {n}" for i, n in enumerate(names))
    t = text.strip()
    if t in names:
        return t
    if t.lstrip("+-").isdigit():
        i = int(t)
        if 0 <= i < len(names):
            return names[i]
        raise ValueError(f"{option} {text}: out of range; the ranks are {listing}")
    raise ValueError(f"{option} {text!r}: unknown rank; the ranks are {listing}")
