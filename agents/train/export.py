"""Exporting a trained checkpoint as a shipped policy: the `.pt` file (agents.policy.export_policy)
and the `.json` card beside it that says where it came from (scripts/export_policy.py); and
converting a policy of the old pickled format into the data format (`convert_pickled`).

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

from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml, write_json_atomic

from agents.evaluation.runs import eval_run_seed, training_step
from agents.policy import EXPORT_FORMAT, EXPORT_VERSION, PolicyAgent, export_policy, load_model, load_policy
from agents.policy.file import looks_pickled, write_policy_file
from agents.cli.provenance import REPO, git_commit, sha256_of, shown

from .config import rules_hash, run_env_kwargs



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
            text = read_text(run / "config.yaml", "the run's config", ExportError,
                             limit=MAX_YAML_BYTES)
            config = safe_load_yaml(text, str(run / "config.yaml"), ExportError) or {}
        except yaml.YAMLError as exc:
            raise ExportError(f"{run / 'config.yaml'}: cannot read the run's config ({exc})") from None
    env_kwargs = dict(config.get("env_kwargs") or {})
    config_file, command = _reproduction(config, run, root)
    card: dict[str, Any] = {
        "policy": shown(out, root),
        "format": format_line(dtype),
        "checkpoint": shown(checkpoint, root), "checkpoint_sha256": sha256_of(checkpoint),
        "run": shown(run, root) if run else None,
        "config": config_file,
        "seed": config.get("seed"), "timesteps": steps, "rules_hash": rules_hash(env_kwargs),
        "env_kwargs": env_kwargs,
        "command": command,
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
                                          run_env_kwargs(env_kwargs), progress)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    write_json_atomic(out.with_suffix(".json"), card)
    return card


def format_line(dtype: str) -> str:
    """The card's `format`: what the file is and how to load it."""
    return (f"{EXPORT_FORMAT} v{EXPORT_VERSION}: the acting network alone, weights as {dtype}, "
            f"safetensors with a JSON description, no pickle (agents.policy.export_policy); "
            f"load with PolicyAgent(path)")


def _reproduction(config: dict, run: Path | None, root: Path) -> tuple[str | None, str | None]:
    """The card's "config" and "command": the shipped configs/train/<name>.yaml and the
    train.py command that trained the run from it (its --seed, and --total-timesteps where the
    run's differs), when the run's config is that file's; else the run's own config.yaml, which
    train.py reads as it is. (The card named the shipped file of the run's name, whatever the run
    had changed: a copy with another ent_coef got the shipped config's command.)"""
    from .train_config import read_config, validate_config
    if not config or run is None:
        return None, None
    varying = ("seed", "total_timesteps")
    # both as config.yaml writes them (`to_yaml`: the repository's files from its root, so the
    # directory either was read from does not tell them apart)
    try:
        have = validate_config(config, str(run / "config.yaml")).to_yaml()
    except ValueError:
        have = None
    path = root / "configs" / "train" / f"{config.get('name')}.yaml"
    if have is not None and path.is_file():
        try:
            want = read_config(path).to_yaml()
        except ValueError:
            want = None
        if want is not None and {k: v for k, v in want.items() if k not in varying} == \
                {k: v for k, v in have.items() if k not in varying}:
            steps = "" if have["total_timesteps"] == want["total_timesteps"] else \
                f" --total-timesteps {have['total_timesteps']}"
            return shown(path, root), (f"python scripts/train.py --config {shown(path, root)} "
                                       f"--seed {have['seed']}{steps}")
    own = shown(run / "config.yaml", root)
    return own, f"python scripts/train.py --config {own}"


def _train_seconds(run: Path, steps: int | None) -> float | None:
    from .config import read_json
    seconds = read_json(run / "train_seconds.json").get(str(steps))
    return float(seconds) if type(seconds) in (int, float) else None


def _history(run: Path) -> list[dict]:
    """The run's periodic evaluations; a line cut by a kill, or not an evaluation, is left out
    (it was a JSONDecodeError traceback, a 100,000-deep line a RecursionError)."""
    from .run_dirs import read_history
    return read_history(run)


# -- converting the old pickled format ------------------------------------------------------------
def unpickle_old_policy(path: Path) -> tuple[dict, str]:
    """The acting weights and the dtype of a policy in the pickled format (rune-env-policy v2 or
    SB3's policy.save), as a checked description would build them. THIS RUNS THE FILE'S PICKLE:
    only `convert_pickled`, which the caller asked to trust the file (`--trust`), calls it."""
    import torch
    try:
        saved = torch.load(str(path), map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds on a corrupt file
        raise ExportError(f"{path}: cannot read the pickled policy ({type(exc).__name__}: {exc})") from None
    if not isinstance(saved, dict) or "state_dict" not in saved or "data" not in saved:
        raise ExportError(f"{path}: not a pickled policy of this project (no state_dict and data)")
    from agents.policy import _policy_classes
    classes = _policy_classes()
    name = saved.get("class", "MaskableActorCriticPolicy")
    if name not in classes:
        raise ExportError(f"{path}: unknown policy class {name!r}")
    try:
        policy = classes[name](**saved["data"])
        state = saved["state_dict"]
        dtype = saved.get("dtype", "float32")
        own = policy.state_dict()
        policy.load_state_dict({k: state[k].float() if k in state else torch.zeros_like(v)
                                for k, v in own.items()})
    except Exception as exc:  # noqa: BLE001 - a mismatched or truncated state
        raise ExportError(f"{path}: cannot rebuild the pickled policy ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:300]})") from None
    policy.set_training_mode(False)
    return {"policy": policy, "class": name, "state": acting_state_of(state, own, dtype)}, dtype


def acting_state_of(state: dict, own: dict, dtype: str) -> dict:
    """The acting weights of an old file as stored (float16 exports keep their exact bits; an
    SB3 policy.save's float32 weights stay float32)."""
    import torch
    cast = torch.float16 if dtype == "float16" else torch.float32
    from agents.policy import _VALUE_PARTS
    return {k: state[k].detach().cpu().to(cast) for k in own if not k.startswith(_VALUE_PARTS)}


def convert_pickled(old: Path, out: Path, check_episodes: int = 20, check_seed: int = 0,
                    env_kwargs: dict | None = None, root: Path = REPO, progress=None) -> dict:
    """Rewrite the pickled policy `old` (trusted by the caller: it is unpickled) as the data
    format at `out` (may be `old` itself), with the same weights bit for bit, after checking that
    the new file plays as the old one: every weight equal, and the same action at every step of
    `check_episodes` evaluation runs (the card's env_kwargs unless given). The card beside `out`
    (the old card, if any) gets the new format and `converted_from` (the old file's sha256, so a
    pool's provenance that names the old file's hash still leads here). Returns the card."""
    import torch
    old, out = Path(old), Path(out)
    if not old.is_file():
        raise ExportError(f"{old}: no such policy file")
    with open(old, "rb") as fh:
        if not looks_pickled(fh.read(8)):
            raise ExportError(f"{old}: not a pickled policy (already in the data format?)")
    old_sha = sha256_of(old)
    card_file = old.with_suffix(".json")
    card: dict[str, Any] = json.loads(card_file.read_text(encoding="utf-8")) if card_file.is_file() else {}
    loaded, dtype = unpickle_old_policy(old)
    from agents.policy import _exported_class
    from agents.policy.file import describe
    description = describe(loaded["policy"], _exported_class(loaded["policy"]), dtype)
    tmp = out.with_name(f".{out.name}.convert.pt")
    try:
        write_policy_file(tmp, loaded["state"], description)
        new = load_policy(tmp)
        old_state, new_state = loaded["policy"].state_dict(), new.state_dict()
        differ = [k for k in loaded["state"] if not torch.equal(old_state[k], new_state[k])]
        if differ:
            raise ExportError(f"{old}: the converted weights differ from the old ones ({differ[:3]})")
        kwargs = env_kwargs if env_kwargs is not None else _card_env_kwargs(card)
        check = agreement(loaded["policy"], new, check_episodes, check_seed,
                          run_env_kwargs(kwargs), progress) \
            if check_episodes else None
        if check is not None and check["same_actions"] != check["steps"]:
            raise ExportError(f"{old}: the converted policy chose differently in "
                              f"{check['steps'] - check['same_actions']} of {check['steps']} steps")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    card["format"] = format_line(dtype)
    card["policy"] = shown(out, root)
    if "sha256" in card:                  # a card that names its policy's hash (league_s0)
        card["sha256"] = sha256_of(out)
    card["converted_from"] = {
        "sha256": old_sha, "format": "a torch pickle (rune-env-policy v2 or SB3 policy.save)",
        "command": f"python scripts/export_policy.py --convert {shown(old, root)} --trust"
                   + ("" if out == old else f" --out {shown(out, root)}"),
        "same_weights": True, "check": None if check is None else {**check, "env_kwargs": kwargs}}
    write_json_atomic(out.with_suffix(".json"), card)
    return card


def _card_env_kwargs(card: dict) -> dict:
    """The env a card's policy plays (its env_kwargs; a re-exported card's check's; a duel
    policy's rank; else the defaults)."""
    for value in (card.get("env_kwargs"), (card.get("reexport_check") or {}).get("env_kwargs")):
        if isinstance(value, dict):
            return dict(value)
    duel = card.get("duel_kwargs")
    if isinstance(duel, dict) and "rank" in duel:
        return {"rank": duel["rank"]}
    return {}
