#!/usr/bin/env python3
"""Train a MaskablePPO drafter from a config.

    python scripts/train.py --config configs/train/quick.yaml [--seed S] [--total-timesteps N]
                            [--run-name NAME] [--resume] [--runs-dir DIR]

Every hyperparameter comes from the YAML (keys in configs/train/README.md). Output in
runs/<run-name>/: config.yaml (the resolved config), tb/ (TensorBoard: SB3's scalars and the
game's: battle win rate, wins per run, clear rate, rounds survived, lamps left, battle duration,
clear rate per core, a histogram of the board's rune kinds, and the periodic evaluation),
checkpoints/, final_model.zip, final_policy.pt (the network alone) and eval.json. `--resume` continues a killed run from its last
checkpoint. Reproducible on one machine: seeds fixed and torch threads set by the config.
"""
from __future__ import annotations

import argparse
import gc
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

DEFAULTS = {
    "name": None,
    "env_id": "rune_env/RuneRun-v0",
    "env_kwargs": {},
    "n_envs": 2,
    "vec_env": "dummy",            # dummy | subproc
    "seed": 0,
    "total_timesteps": 10000,
    "torch_threads": 1,
    "policy": "MlpPolicy",
    "masking": "fast",             # fast | sb3: the masked distribution's arithmetic (agents/masking.py)
    "ppo": {},
    "policy_kwargs": {},
    "checkpoint_every": 10000,
    "metrics_every": 2048,
    "eval": {"every": 0, "episodes": 20, "seed": 0},
    "final_eval_episodes": 20,
}


class ConfigError(ValueError):
    pass


def load_config(path: str | Path, overrides: dict) -> dict:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a training config is a YAML mapping")
    unknown = sorted(set(data) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (keys: {', '.join(DEFAULTS)})")
    cfg = json.loads(json.dumps(DEFAULTS))
    for key, value in data.items():
        if isinstance(cfg.get(key), dict) and isinstance(value, dict):
            cfg[key].update(value)
        else:
            cfg[key] = value
    for key, value in overrides.items():
        if value is not None:
            cfg[key] = value
    bad = sorted(set(cfg["eval"]) - set(DEFAULTS["eval"]))
    if bad:
        raise ConfigError(f"{path}: unknown key eval.{bad[0]} (keys: {', '.join(DEFAULTS['eval'])})")
    import inspect

    from sb3_contrib import MaskablePPO
    allowed = set(inspect.signature(MaskablePPO.__init__).parameters) - {
        "self", "policy", "env", "seed", "tensorboard_log", "policy_kwargs", "device", "verbose", "_init_setup_model"}
    bad = sorted(set(cfg["ppo"]) - allowed)
    if bad:
        raise ConfigError(f"{path}: unknown key ppo.{bad[0]} (MaskablePPO takes: {', '.join(sorted(allowed))})")
    if cfg["name"] is None:
        cfg["name"] = path.stem
    from agents.masking import policy_class
    try:
        policy_class(cfg["policy"], cfg["masking"])
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if cfg["vec_env"] not in ("dummy", "subproc"):
        raise ConfigError(f"{path}: vec_env must be 'dummy' or 'subproc'")
    for key in ("n_envs", "total_timesteps", "torch_threads", "checkpoint_every"):
        if not isinstance(cfg[key], int) or cfg[key] < 1:
            raise ConfigError(f"{path}: {key} must be a positive whole number")
    return cfg


def make_env_fn(env_id: str, env_kwargs: dict, rank: int, seed: int):
    def _init():
        import gymnasium as gym
        from stable_baselines3.common.monitor import Monitor

        import rune_env  # noqa: F401 - registers the envs
        env = gym.make(env_id, **env_kwargs)
        env = Monitor(env)
        env.reset(seed=seed + rank)
        return env
    return _init


def latest_checkpoint(ckpt_dir: Path) -> Path | None:
    best, best_steps = None, -1
    for p in ckpt_dir.glob("model_*_steps.zip"):
        m = re.match(r"model_(\d+)_steps\.zip$", p.name)
        if m and int(m.group(1)) > best_steps:
            best, best_steps = p, int(m.group(1))
    return best


def build_callbacks(cfg: dict, run_dir: Path, eval_env_kwargs: dict):
    from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback

    from agents.evaluation import evaluate
    from agents.policy import PolicyAgent
    from rune_env.rules.config import KINDS

    class GameMetrics(BaseCallback):
        """Game scalars from the envs' infos, written every `metrics_every` steps."""

        def __init__(self, every: int):
            super().__init__()
            self.every = every
            self.reset_stats()
            self.last = 0

        def reset_stats(self):
            self.battles, self.durations, self.kinds = [], [], []
            self.episodes = []   # (wins, cleared, rounds, lamps, core)

        def _on_step(self) -> bool:
            infos = self.locals["infos"]
            dones = self.locals["dones"]
            for info, done in zip(infos, dones):
                b = info.get("battle")
                if b is not None:
                    self.battles.append(b["outcome"] == "win")
                    self.durations.append(b["time"])
                    self.kinds.extend(KINDS.index(k) for k in b.get("kinds", []))
                if done and "wins" in info:
                    self.episodes.append((info["wins"], info["cleared"], info["round"],
                                          info["lamps"], (b or {}).get("core")))
            return True

        def _on_rollout_end(self) -> None:
            # SB3 writes the log after each rollout's update: record once per rollout so no
            # window's scalars are overwritten before they are written
            if self.num_timesteps - self.last >= self.every:
                self.flush()

        def flush(self):
            self.last = self.num_timesteps
            rec = self.logger.record
            if self.battles:
                rec("game/battle_win_rate", sum(self.battles) / len(self.battles))
                rec("game/battle_duration", sum(self.durations) / len(self.durations))
            if self.episodes:
                n = len(self.episodes)
                rec("game/wins_per_run", sum(e[0] for e in self.episodes) / n)
                rec("game/clear_rate", sum(e[1] for e in self.episodes) / n)
                rec("game/rounds_survived", sum(e[2] for e in self.episodes) / n)
                rec("game/lamps_left", sum(e[3] for e in self.episodes) / n)
                cores = {}
                for e in self.episodes:
                    cores.setdefault(str(e[4]), []).append(e[1])
                for core, cleared in cores.items():
                    rec(f"game/clear_rate_core/{core}", sum(cleared) / len(cleared))
            if self.kinds:
                import numpy as np
                for fmt in self.logger.output_formats:
                    writer = getattr(fmt, "writer", None)
                    if writer is not None:
                        writer.add_histogram("game/board_kinds", np.array(self.kinds),
                                             self.num_timesteps, bins=np.arange(len(KINDS) + 1) - 0.5)
                        writer.flush()
            self.reset_stats()

    class PeriodicEval(BaseCallback):
        def __init__(self, every: int, episodes: int, seed: int):
            super().__init__()
            self.every, self.episodes, self.seed = every, episodes, seed
            self.last = 0

        def _on_step(self) -> bool:
            if self.every and self.num_timesteps - self.last >= self.every:
                self.last = self.num_timesteps
                res = evaluate(PolicyAgent(self.model), self.episodes, self.seed, eval_env_kwargs)
                for key in ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived"):
                    self.logger.record(f"eval/{key}", res[key])
                self._board_images(res["runs"])
                with open(run_dir / "eval_history.jsonl", "a") as fh:
                    res.pop("runs")
                    fh.write(json.dumps({"timesteps": self.num_timesteps, **res}) + "\n")
            return True

        def _board_images(self, runs) -> None:
            """What the policy builds now: its final boards of the first evaluation runs, drawn."""
            from rune_env.pictures import board_rgb_array
            from rune_env.rules import Board, default_rules
            rules = default_rules()
            for fmt in self.logger.output_formats:
                writer = getattr(fmt, "writer", None)
                if writer is None:
                    continue
                for i, run in enumerate(runs[:4]):
                    if run["battles"]:
                        board = Board.from_json(run["battles"][-1]["board"], rules)
                        writer.add_image(f"boards/eval/{i}", board_rgb_array(board, rules, annotate=True),
                                         self.num_timesteps, dataformats="HWC")
                writer.flush()

    ckpt = CheckpointCallback(save_freq=max(1, cfg["checkpoint_every"] // cfg["n_envs"]),
                              save_path=str(run_dir / "checkpoints"), name_prefix="model")
    ev = cfg["eval"]
    return [ckpt, GameMetrics(cfg["metrics_every"]),
            PeriodicEval(ev.get("every", 0), ev.get("episodes", 20), ev.get("seed", 0))]


def train(cfg: dict, run_dir: Path, resume: bool) -> dict:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from agents.evaluation import evaluate
    from agents.policy import PolicyAgent, load_model

    torch.set_num_threads(cfg["torch_threads"])
    set_random_seed(cfg["seed"])
    fns = [make_env_fn(cfg["env_id"], cfg["env_kwargs"], i, cfg["seed"] * 1000)
           for i in range(cfg["n_envs"])]
    venv = DummyVecEnv(fns) if cfg["vec_env"] == "dummy" else SubprocVecEnv(fns)
    venv.seed(cfg["seed"] * 1000)
    tb_dir = run_dir / "tb"
    done_steps = 0
    if resume:
        ckpt = latest_checkpoint(run_dir / "checkpoints")
        if ckpt is None:
            raise FileNotFoundError(f"{run_dir / 'checkpoints'}: no checkpoint to resume from")
        model = load_model(ckpt)
        model.set_env(venv)
        model.tensorboard_log = str(tb_dir)
        done_steps = model.num_timesteps
        print(f"resuming from {ckpt} at {done_steps} steps")
    else:
        ppo = dict(cfg["ppo"])
        from agents.masking import policy_class
        model = MaskablePPO(policy_class(cfg["policy"], cfg["masking"]), venv, seed=cfg["seed"], verbose=0,
                            tensorboard_log=str(tb_dir), policy_kwargs=cfg["policy_kwargs"] or None,
                            device="cpu", **ppo)
    remaining = cfg["total_timesteps"] - done_steps
    # What exists now (torch, the model, the envs) lives for the whole run: frozen out of the
    # garbage collector's generations, it is no longer walked by every full collection (about
    # 0.2 s for the half million objects, once or twice a minute of training). No effect on
    # results: the collector frees memory only.
    gc.collect()
    gc.freeze()
    t0 = time.time()
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=build_callbacks(cfg, run_dir, cfg["env_kwargs"]),
                    tb_log_name="run", reset_num_timesteps=not resume, progress_bar=False)
    elapsed = time.time() - t0
    model.save(run_dir / "final_model.zip")
    from agents.policy import export_policy
    export_policy(model, run_dir / "final_policy.pt")   # the network alone: small, committable
    venv.close()
    episodes = cfg["final_eval_episodes"]
    res = evaluate(PolicyAgent(load_model(run_dir / "final_model.zip")), episodes,
                   cfg["eval"].get("seed", 0), cfg["env_kwargs"]) if episodes else {}
    res.pop("runs", None)
    res["train_seconds"] = elapsed
    res["timesteps"] = int(model.num_timesteps)
    (run_dir / "eval.json").write_text(json.dumps(res, indent=1))
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Train MaskablePPO on Rune Circle from a config.")
    p.add_argument("--config", required=True)
    p.add_argument("--seed", type=int)
    p.add_argument("--total-timesteps", type=int, dest="total_timesteps")
    p.add_argument("--run-name")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--runs-dir", default=str(ROOT / "runs"))
    from rune_env.battle.engines import add_engine_argument, use_engine
    add_engine_argument(p)     # or env_kwargs: {engine: reference} in the config
    a = p.parse_args(argv)
    use_engine(a.engine)
    try:
        cfg = load_config(a.config, {"seed": a.seed, "total_timesteps": a.total_timesteps})
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    name = a.run_name or (cfg["name"] if a.seed is None else f"{cfg['name']}_s{cfg['seed']}")
    run_dir = Path(a.runs_dir) / name
    if a.resume:
        saved = run_dir / "config.yaml"
        if not saved.exists():
            print(f"error: {run_dir}: nothing to resume (no config.yaml)", file=sys.stderr)
            return 2
        # a resumed run keeps the config it was started with (a new total may extend it)
        cfg = yaml.safe_load(saved.read_text())
        if a.total_timesteps is not None:
            cfg["total_timesteps"] = a.total_timesteps
    elif run_dir.exists() and any(run_dir.iterdir()):
        print(f"error: {run_dir} exists: pass --resume to continue it or another --run-name",
              file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    if not a.resume:
        (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    from agents.policy import PolicyLoadError
    try:
        res = train(cfg, run_dir, a.resume)
    except (PolicyLoadError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"run_dir": str(run_dir), **{k: res.get(k) for k in
                      ("timesteps", "train_seconds", "battle_win_rate", "mean_wins", "clear_rate")}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
