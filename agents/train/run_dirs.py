"""Run directories of the trainers: `default_run_name`, `claim_run_dir`, `claim_named_run`,
`open_named_run`, `latest_run`, `saved_models` (the checkpoints --resume tries), `keep_history`
(eval_history.jsonl as it was at a resumed step), `TrainClock` (training seconds over sessions,
train_seconds.json) and `tb_run_dir` (the run's TensorBoard run)."""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from agents.cli.progress import say
from agents.evaluation.runs import training_step
from rune_env.files import write_text_atomic

from .config import RUN_NAME, read_json, write_json

TIME_FORMAT = "%Y%m%dT%H%M%SZ"          # UTC, ISO 8601 basic: sortable, no ':'


def default_run_name(name: str, seed: int, now: datetime | None = None) -> str:
    """<name>__s<seed>__<UTC time>: sortable, no ':' (cleanrl's name__seed__time, readable)."""
    return f"{name}__s{seed}__{(now or datetime.now(timezone.utc)).strftime(TIME_FORMAT)}"


def claim_run_dir(runs_dir: Path, base: str) -> Path:
    """Create a new run directory base, base-2, base-3, ... (two runs started in the same second
    get two directories)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    for k in range(1, 1000):
        d = runs_dir / (base if k == 1 else f"{base}-{k}")
        try:
            d.mkdir()
            return d
        except FileExistsError:
            continue
    raise FileExistsError(f"{runs_dir / base}: too many runs of that name")


def claim_named_run(run_dir: Path, force: bool, what: str = "a training run") -> str | None:
    """Make the named run directory `run_dir` this process's, atomically, or say why not (None:
    claimed). Whatever the timing, of two starts with one name exactly one claims it: the
    directory is made with os.mkdir (no exist_ok), and the claim is its config.yaml, created
    with O_EXCL (empty; the caller writes it), so an empty directory made beforehand may be used
    but not by two. `force` first deletes an existing run (one with a config.yaml; `what` names
    it in the message), never another folder."""
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    if force and run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
        if not (run_dir / "config.yaml").is_file():
            return f"{run_dir}: not {what} (no config.yaml); --force deletes only runs, so it is left alone"
        shutil.rmtree(run_dir, ignore_errors=True)     # another --force may be deleting it too
        say(f"--force: deleted the old {run_dir}")
    exists = (f"{run_dir} exists: pass --resume to continue it, --force to start it again, or "
              f"another --run-name (without one, each run gets a new directory)")
    try:
        os.mkdir(run_dir)
    except FileExistsError:
        if not run_dir.is_dir() or any(run_dir.iterdir()):
            return exists
    try:
        os.close(os.open(run_dir / "config.yaml", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return exists        # another start claimed it between our two steps
    return None


def open_named_run(runs_dir: Path, name: str, resume: bool, force: bool, what: str) -> Path | str:
    """The directory runs_dir/name of a named run (created), or why not, for the scripts whose
    runs are named (league.py, train_rllib.py): a new run claims it atomically
    (`claim_named_run`: a run there already is refused unless `force` deletes it first); with
    `resume` an existing one is continued."""
    if not RUN_NAME.fullmatch(name):
        return f"--run-name {name!r}: letters, digits and ._+=-, starting with a letter or digit"
    run_dir = runs_dir / name
    if resume:
        run_dir.mkdir(parents=True, exist_ok=True)
        return run_dir
    problem = claim_named_run(run_dir, force, what)
    return problem if problem is not None else run_dir


def latest_run(runs_dir: Path, name: str, seed: int) -> Path | None:
    """The newest run directory of `name` and `seed` made with a generated name."""
    pattern = re.compile(re.escape(f"{name}__s{seed}__") + r"(\d{8}T\d{6}Z)(?:-(\d+))?$")
    found = []
    for d in runs_dir.glob(f"{name}__s{seed}__*") if runs_dir.is_dir() else ():
        m = pattern.match(d.name)
        if m and d.is_dir():
            found.append(((m.group(1), int(m.group(2) or 1)), d))
    return max(found)[1] if found else None


def saved_models(run_dir: Path) -> list[tuple[Path, int | None]]:
    """The run's saved models, newest first, for --resume to try in turn: its checkpoints by
    step, and final_model.zip at the timesteps it says (before a checkpoint of the same step;
    an unreadable final model last, with None)."""
    found = [(p, int(m.group(1))) for p in (run_dir / "checkpoints").glob("model_*_steps.zip")
             if (m := re.fullmatch(r"model_(\d+)_steps\.zip", p.name))]
    final = run_dir / "final_model.zip"
    if final.exists():
        found.append((final, training_step(final)))
    # newest first; at the same step the final model first (it is the run's own last save)
    return sorted(found, key=lambda pn: (pn[1] is not None, pn[1] or 0, pn[0] == final), reverse=True)


class TrainClock:
    """Training seconds over sessions: train_seconds.json maps the timesteps of each saved model
    (checkpoints, the final model) to the seconds spent training up to it, so a resumed run's
    train_seconds counts the sessions before it."""

    def __init__(self, run_dir: Path, base_seconds: float):
        self.path = run_dir / "train_seconds.json"
        self.base = base_seconds
        self.t0 = time.monotonic()

    def seconds(self) -> float:
        return self.base + time.monotonic() - self.t0

    def record(self, steps: int) -> float:
        data = read_json(self.path)
        data[str(int(steps))] = s = round(self.seconds(), 3)
        write_json(self.path, data)
        return s

    @staticmethod
    def before(run_dir: Path, steps: int) -> float:
        """The seconds spent up to the model of `steps` timesteps (0 if never recorded)."""
        value = read_json(run_dir / "train_seconds.json").get(str(int(steps)))
        if value is None:
            ev = read_json(run_dir / "eval.json")
            value = ev.get("train_seconds") if ev.get("timesteps") == steps else 0.0
        return float(value or 0.0)


def history_entry(line: str) -> dict | None:
    """One line of eval_history.jsonl as its evaluation (a JSON object with whole `timesteps`),
    or None: a line cut by a kill, or anything else (read within the project's JSON bounds, so a
    hostile line is None too, not a RecursionError)."""
    from rune_env.files import load_json
    try:
        entry = load_json(line, "eval_history.jsonl", ValueError)
    except ValueError:
        return None
    if not isinstance(entry, dict) or type(entry.get("timesteps")) is not int:
        return None
    return entry


def read_history(run_dir: Path) -> list[dict]:
    """The run's periodic evaluations, eval_history.jsonl's whole lines (`history_entry`)."""
    try:
        lines = (Path(run_dir) / "eval_history.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [e for e in map(history_entry, lines) if e is not None]


def keep_history(run_dir: Path, steps: int) -> None:
    """eval_history.jsonl as it was at `steps` timesteps (a resume from there): the evaluations
    a killed session made after its last checkpoint are made again, so they go, and the
    resumed run appends exactly the uninterrupted run's lines."""
    path = run_dir / "eval_history.jsonl"
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = []
    for line in lines:
        entry = history_entry(line)
        if entry is None or entry["timesteps"] > steps:
            continue                  # a line cut by the kill, or past the resume
        kept.append(line if line.endswith("\n") else line + "\n")
    if kept != lines:
        write_text_atomic(path, "".join(kept))


def tb_run_dir(run_dir: Path) -> Path:
    """The run's TensorBoard run (SB3's tb/run_<N>, the newest)."""
    runs = [(int(m.group(1)), p) for p in (run_dir / "tb").glob("run_*")
            if (m := re.fullmatch(r"run_(\d+)", p.name)) and p.is_dir()]
    return max(runs)[1] if runs else run_dir / "tb" / "run_1"
