"""How the evaluation scripts name what they evaluate: an agent's label (`agent_label`: a model
path as <run>/<file>), its TensorBoard sub-run (`tb_dir_name`, and `fresh_tb_run` to rewrite one)
and a rank given as a name or a number (`rank_name`)."""
from __future__ import annotations

from pathlib import Path


def agent_label(name: str) -> str:
    """A model path as <run>/<file stem> (a checkpoint, runs/<run>/checkpoints/<file>, as
    <run>/<file stem> too, so the checkpoints of two runs differ); any other name as it is."""
    p = Path(name)
    if _is_file_name(name):
        parent = _run_folder(p)
        return f"{parent.name}/{p.stem}" if parent.name else p.stem
    return name


def _is_file_name(name: str) -> bool:
    """A name that `agent_label` names by its path: a model (.zip) or an existing file."""
    return Path(name).suffix == ".zip" or Path(name).exists()


def _run_folder(p: Path) -> Path:
    """The folder a model file is named by: its own, or its run's for a checkpoint."""
    return p.parent.parent if p.parent.name == "checkpoints" else p.parent


def _label_with_folders(name: str, folders: int) -> str:
    """`agent_label` with `folders` more of the path's folders before it (from the absolute
    path: a relative name has as many as its file)."""
    p = Path(name)
    parent = _run_folder(p)
    names = [d.name for d in (parent.absolute(), *parent.absolute().parents) if d.name]
    return "/".join([*reversed(names[:1 + folders]), p.stem])


def same_agent(a: str, b: str) -> bool:
    """Two names of one agent: the same text, or two paths of one file."""
    if a == b:
        return True
    try:
        return Path(a).is_file() and Path(b).is_file() and Path(a).samefile(b)
    except OSError:
        return False


def repeated(names: list[str]) -> str | None:
    """The first name that is an agent named before it (`same_agent`), or None."""
    return next((n for i, n in enumerate(names)
                 if any(same_agent(n, m) for m in names[:i])), None)


def agent_labels(names: list[str]) -> list[str]:
    """Each name's label (`agent_label`). Where different files would share one (two runs'
    iter_2/policy.pt), each of them is named by more of its path, a folder at a time, until the
    labels differ (exit1/iter_2/policy, exit2/iter_2/policy). The same agent given twice
    (`same_agent`) is the caller's to refuse; its labels stay equal."""
    labels = [agent_label(n) for n in names]
    # the files a longer label may tell apart: not one agent given twice
    own = [_is_file_name(n) and not any(same_agent(n, m) for m in names if m is not n)
           for n in names]

    def clashing() -> set[str]:
        return {lb for lb in labels if labels.count(lb) > 1}

    for folders in range(1, 64):
        clash = clashing()
        if not clash:
            return labels
        labels = [_label_with_folders(n, folders) if lb in clash and mine else lb
                  for n, lb, mine in zip(names, labels, own)]
    # files that no number of folders tells apart (a.pt and a.zip of one folder, x/policy.pt
    # and x/checkpoints/policy.pt): their whole paths
    clash = clashing()
    return [str(Path(n).absolute()) if lb in clash and mine else lb
            for n, lb, mine in zip(names, labels, own)]


def tb_dir_names(labels: list[str]) -> dict[str, str]:
    """Each label's TensorBoard sub-run, told apart where `tb_dir_name` would give two labels
    one folder (a_b/x and a/b_x are both a_b_x; the second agent's run replaced the first's):
    the later ones get ~2, ~3, ..."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in labels:
        name, k = tb_dir_name(label), 1
        while name in used:
            k += 1
            name = f"{tb_dir_name(label)}~{k}"
        used.add(name)
        out[label] = name
    return out


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
