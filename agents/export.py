"""Exporting a trained checkpoint as a shipped policy: the `.pt` file (agents.policy.export_policy)
and the `.json` card beside it that says where it came from (scripts/export_policy.py).

The card is what `training_step`, `build_pools.py` (a pool's provenance) and the docs read: the
checkpoint and its sha256, the run's config, seed and rules hash, the timesteps and training
seconds at that checkpoint, the run's periodic evaluation there (if one was made), and how often
the exported (float16) policy chose the same action as the checkpoint on evaluation runs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from rune_env.files import write_json_atomic

from .evaluation import eval_run_seed, training_step
from .policy import EXPORT_FORMAT, EXPORT_VERSION, PolicyAgent, export_policy, load_model, load_policy
from .pools import git_commit, sha256_of, shown
from .training import rules_hash

REPO = Path(__file__).resolve().parents[1]


class ExportError(ValueError):
    """A checkpoint that cannot be exported as asked; the message names the file and the problem."""


def run_of(checkpoint: Path) -> Path | None:
    """The training run a checkpoint belongs to: the folder holding config.yaml, the
    checkpoint's own folder (final_model.zip) or its parent (checkpoints/model_<N>_steps.zip)."""
    for d in (checkpoint.parent, checkpoint.parent.parent):
        if (d / "config.yaml").is_file():
            return d
    return None


def _at_step(rows: list[dict], steps: int) -> dict | None:
    """The periodic evaluation made at `steps` (the train script evaluates after the checkpoint
    of the same step), if any."""
    for r in rows:
        if r.get("timesteps") == steps:
            return {k: r[k] for k in ("episodes", "battle_win_rate", "mean_wins", "clear_rate")
                    if k in r}
    return None


def agreement(model, policy, episodes: int, seed: int, env_kwargs: dict, progress=None) -> dict:
    """Play `episodes` evaluation runs with the checkpoint `model` (deterministic); at every step
    the exported `policy` chooses too, on the same observation and mask. Returns the steps and
    how many of them the two chose the same action."""
    from rune_env.envs.run_env import RuneRunEnv
    env = RuneRunEnv(**env_kwargs)
    ref, exp = PolicyAgent(model), PolicyAgent(policy)
    steps = same = 0
    for i in range(episodes):
        run_seed = eval_run_seed(seed, i)
        obs, info = env.reset(options={"run_seed": run_seed})
        done = False
        while not done:
            action = ref.act(obs, info["action_mask"])
            same += action == exp.act(obs, info["action_mask"])
            steps += 1
            obs, _r, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        if progress is not None:
            progress.update(1)
    return {"episodes": episodes, "evaluation_seed": seed, "steps": steps, "same_actions": same}


def export_checkpoint(checkpoint: Path, out: Path, dtype: str = "float16", check_episodes: int = 0,
                      check_seed: int = 0, note: str | None = None, root: Path = REPO,
                      progress=None) -> dict[str, Any]:
    """Export `checkpoint` (a training run's .zip) to `out` (.pt) with its card (`out` with
    .json). Both are written only when everything has been read and checked; returns the card."""
    checkpoint, out = Path(checkpoint), Path(out)
    if out.suffix != ".pt":
        raise ExportError(f"{out}: the exported policy's file name must end in .pt")
    model = load_model(checkpoint)           # PolicyLoadError names a missing or corrupt file
    steps = training_step(checkpoint)
    run = run_of(checkpoint)
    config: dict = {}
    if run is not None:
        try:
            config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ExportError(f"{run / 'config.yaml'}: cannot read the run's config ({exc})") from None
    env_kwargs = dict(config.get("env_kwargs") or {})
    config_file = _config_file(config.get("name"), root)
    card: dict[str, Any] = {
        "policy": shown(out, root),
        "format": f"{EXPORT_FORMAT} v{EXPORT_VERSION}: the acting network alone, weights as {dtype} "
                  f"(agents.policy.export_policy); load with PolicyAgent(path)",
        "checkpoint": shown(checkpoint, root), "checkpoint_sha256": sha256_of(checkpoint),
        "run": shown(run, root) if run else None,
        "config": config_file,
        "seed": config.get("seed"), "timesteps": steps, "rules_hash": rules_hash(env_kwargs),
        "env_kwargs": env_kwargs,
        "command": (f"python scripts/train.py --config {config_file} "
                    f"--seed {config.get('seed')}") if config else None,
        "export_command": f"python scripts/export_policy.py {shown(checkpoint, root)} "
                          f"--out {shown(out, root)}" + ("" if dtype == "float16" else f" --dtype {dtype}"),
        "commit": git_commit(root),
    }
    if run is not None:
        card["train_seconds"] = _train_seconds(run, steps)
        card["train_periodic_eval"] = _at_step(_history(run), steps)
    if note:
        card["note"] = note
    tmp = out.with_name(f".{out.name}.export.pt")
    try:
        export_policy(model, tmp, dtype=dtype)
        if check_episodes:
            card["agreement"] = agreement(model, load_policy(tmp), check_episodes, check_seed,
                                          env_kwargs, progress)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    write_json_atomic(out.with_suffix(".json"), card)
    return card


def _config_file(name: str | None, root: Path) -> str | None:
    if not name:
        return None
    path = root / "configs" / "train" / f"{name}.yaml"
    return shown(path, root) if path.is_file() else None


def _train_seconds(run: Path, steps: int | None) -> float | None:
    try:
        table = json.loads((run / "train_seconds.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return table.get(str(steps))


def _history(run: Path) -> list[dict]:
    try:
        lines = (run / "eval_history.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [json.loads(line) for line in lines if line.strip()]
