#!/usr/bin/env python3
"""Train a MaskablePPO drafter from a config.

    python scripts/train.py --config configs/train/quick.yaml [--seed S] [--total-timesteps N]
                            [--run-name NAME [--force]] [--resume] [--runs-dir DIR] [--no-progress]

Every hyperparameter comes from the YAML (keys in configs/train/README.md; it is read into the
typed `TrainConfig` below: an unknown key, a wrong type or a value out of range is one
`error: ...` line naming the key, exit status 2, nothing written). `--seed` and
`--total-timesteps` override the YAML.

The run directory: DIR/<name>__s<seed>__<UTC time>/ (e.g. runs/quick__s0__20250611T101500Z/;
sortable, a new one per run, so the same command works twice), or DIR/NAME/ with --run-name NAME
(refused if it exists, unless --resume continues it or --force deletes it first). The script
prints it first. It holds config.yaml (the resolved config), tb/ (TensorBoard: SB3's scalars and
the game's: battle win rate, wins per run, clear rate, rounds survived, lamps left, battle
duration, clear rate per core, each rune kind's share of the boards (game/kind_share/<kind>) and
their histogram; the periodic evaluations (eval/*, images boards/eval/<i>) and the final one
(eval/* at the last step, images boards/final/<i>)), checkpoints/, final_model.zip,
final_policy.pt (the network alone) with final_policy.json (its provenance: timesteps, config,
seed), eval.json (the final evaluation, timesteps, train_seconds over every session) and
train_seconds.json.

--resume continues a run from its newest model (the last checkpoint, or the final model), in the
same TensorBoard run. A finished run (its final model has total_timesteps) is not trained again:
the script says so and exits with status 0, leaving every file as it is; pass a larger
--total-timesteps to train it on. A final model is never replaced by an older one.

Speed and reproducibility: torch runs on the config's torch_threads (1 by default) in this
process and in every subprocess env, set before any torch work (with torch's default of one
thread per core, 512 steps took 12.8 s instead of 2.2 s on 2 busy cores, 86 s instead of 3.5 s
with subprocess envs). Seeds are fixed. A progress bar (SB3's, on stderr) shows when stderr is a
terminal; each evaluation prints one line.
"""
from __future__ import annotations

import gc
import json
import math
import os
import re
import shutil
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, StrictBool,  # noqa: E402
                      ValidationError, model_validator)

from agents.evaluation import MAX_EPISODES, kind_shares, log_evaluation, summary_line, training_step  # noqa: E402
from agents.progress import add_progress_argument, bar, progress_on, say  # noqa: E402
from agents.script_args import SEED_MAX, fail, positive_int, script_parser, seed_int  # noqa: E402

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=-]*")
TIME_FORMAT = "%Y%m%dT%H%M%SZ"          # UTC, ISO 8601 basic: sortable, no ':'


# -- the config ----------------------------------------------------------------------------------
class ConfigError(ValueError):
    """A training config that cannot be used; the message names the file and the key."""


def _whole(value: Any) -> Any:
    # YAML whole numbers; 1e6 and 1.0e6 (PyYAML reads the first as text) are fine, true is not
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"expected a whole number, got {value!r}") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"expected a whole number, got {value!r}")
        value = int(value)
    return value


def _number(value: Any) -> Any:
    # YAML numbers; 3e-4 (text to PyYAML) is read as the number it spells; true is refused
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
    if isinstance(value, (int, float)) and not math.isfinite(value):
        raise ValueError("expected a finite number")
    return value


def _mapping(value: Any) -> Any:
    return {} if value is None else value        # `ppo:` with nothing under it


Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, BeforeValidator(_number)]
Mapping = Annotated[dict[str, Any], BeforeValidator(_mapping)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PPOConfig(_Section):
    """MaskablePPO's keyword arguments; a key left out keeps SB3's default."""
    learning_rate: Number | None = Field(None, gt=0)
    n_steps: Whole | None = Field(None, ge=1)
    batch_size: Whole | None = Field(None, ge=2)
    n_epochs: Whole | None = Field(None, ge=1)
    gamma: Number | None = Field(None, ge=0, le=1)
    gae_lambda: Number | None = Field(None, ge=0, le=1)
    clip_range: Number | None = Field(None, gt=0)
    clip_range_vf: Number | None = Field(None, gt=0)
    normalize_advantage: StrictBool | None = None
    ent_coef: Number | None = Field(None, ge=0)
    vf_coef: Number | None = Field(None, ge=0)
    max_grad_norm: Number | None = Field(None, gt=0)
    target_kl: Number | None = Field(None, gt=0)
    stats_window_size: Whole | None = Field(None, ge=1)

    def kwargs(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class EvalConfig(_Section):
    """The periodic evaluation during training."""
    every: Whole = Field(0, ge=0)                  # timesteps between evaluations; 0: none
    episodes: Whole = Field(20, ge=1, le=MAX_EPISODES)
    seed: Whole = Field(0, ge=0, le=SEED_MAX)      # the evaluation seed (the final one's too)


class TrainConfig(_Section):
    """A training config (configs/train/*.yaml; keys and meanings in configs/train/README.md)."""
    name: str | None = Field(None, pattern="^" + RUN_NAME.pattern + "$")
    env_id: str = "rune_env/RuneRun-v0"
    env_kwargs: Mapping = {}
    n_envs: Whole = Field(2, ge=1)
    vec_env: Literal["dummy", "subproc"] = "dummy"
    seed: Whole = Field(0, ge=0, le=SEED_MAX)
    total_timesteps: Whole = Field(10000, ge=1)
    torch_threads: Whole = Field(1, ge=1)
    policy: Literal["MlpPolicy", "MultiInputPolicy", "CnnPolicy"] = "MlpPolicy"
    masking: Literal["fast", "sb3"] = "fast"       # the masked distribution (agents/masking.py)
    ppo: Annotated[PPOConfig, BeforeValidator(_mapping)] = PPOConfig()
    policy_kwargs: Mapping = {}
    checkpoint_every: Whole = Field(10000, ge=1)
    metrics_every: Whole = Field(2048, ge=1)
    eval: Annotated[EvalConfig, BeforeValidator(_mapping)] = EvalConfig()
    final_eval_episodes: Whole = Field(20, ge=0, le=MAX_EPISODES)

    @model_validator(mode="after")
    def _consistent(self) -> "TrainConfig":
        if self.masking == "fast" and self.policy != "MlpPolicy":
            raise ValueError(f"masking 'fast' is implemented for policy MlpPolicy; got "
                             f"{self.policy!r} (use masking: sb3)")
        n_steps = self.ppo.n_steps if self.ppo.n_steps is not None else 2048
        if n_steps * self.n_envs < 2:
            raise ValueError(f"ppo.n_steps x n_envs must be > 1 (got {n_steps} x {self.n_envs})")
        return self

    def to_yaml(self) -> dict[str, Any]:
        data = self.model_dump()
        data["ppo"] = self.ppo.kwargs()
        return data


SECTIONS: dict[tuple, type[BaseModel]] = {(): TrainConfig, ("ppo",): PPOConfig, ("eval",): EvalConfig}


def _problem(err: dict) -> str:
    """One pydantic error as words, with the key's dotted path."""
    loc = ".".join(str(p) for p in err["loc"])
    kind, ctx, got = err["type"], err.get("ctx", {}), err.get("input")
    if kind == "extra_forbidden":
        section = tuple(err["loc"][:-1])
        model = SECTIONS.get(section)
        keys = f" (keys{' of ' + '.'.join(section) if section else ''}: " \
               f"{', '.join(model.model_fields)})" if model else ""
        hint = f"; did you mean ppo.{loc}?" if not section and loc in PPOConfig.model_fields else ""
        return f"unknown key {loc!r}{hint}{keys}"
    bounds = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
    if kind in bounds:
        limit = next(iter(ctx.values()))
        return f"{loc} must be {bounds[kind]} {limit}; got {got!r}"
    if kind == "literal_error":
        return f"{loc} must be one of {ctx.get('expected')}; got {got!r}"
    if kind == "string_pattern_mismatch":
        return f"{loc} must be a run directory's name (letters, digits and ._+=-); got {got!r}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def validate_config(data: Any, source: str) -> TrainConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a training config is a YAML mapping")
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(f"{source}: {_problem(errors[0])}{more}") from None


def read_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """A config file, with the command line's overrides (None: not given), validated."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: not valid YAML{where}: {what}") from None
    data = {} if data is None else data
    if isinstance(data, dict):
        data.update({k: v for k, v in (overrides or {}).items() if v is not None})
        if data.get("name") is None:
            data["name"] = re.sub(r"[^A-Za-z0-9._+=-]+", "_", path.stem).lstrip("._+=-") or "run"
    return validate_config(data, str(path))


def check_env(cfg: TrainConfig, source: str) -> None:
    """Build one env of the config, so a bad env_id or env_kwargs fails before anything is written."""
    import gymnasium as gym

    import rune_env  # noqa: F401 - registers the envs
    try:
        env = gym.make(cfg.env_id, **cfg.env_kwargs)
    except gym.error.Error as exc:
        raise ConfigError(f"{source}: env_id {cfg.env_id!r}: {exc}") from None
    except (TypeError, ValueError, OSError) as exc:
        raise ConfigError(f"{source}: env_kwargs: {exc}") from None
    env.close()


# -- run directories -----------------------------------------------------------------------------
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


def latest_run(runs_dir: Path, name: str, seed: int) -> Path | None:
    """The newest run directory of `name` and `seed` made with a generated name."""
    pattern = re.compile(re.escape(f"{name}__s{seed}__") + r"(\d{8}T\d{6}Z)(?:-(\d+))?$")
    found = []
    for d in runs_dir.glob(f"{name}__s{seed}__*") if runs_dir.is_dir() else ():
        m = pattern.match(d.name)
        if m and d.is_dir():
            found.append(((m.group(1), int(m.group(2) or 1)), d))
    return max(found)[1] if found else None


def latest_checkpoint(ckpt_dir: Path) -> tuple[Path | None, int]:
    best, best_steps = None, -1
    for p in ckpt_dir.glob("model_*_steps.zip"):
        m = re.match(r"model_(\d+)_steps\.zip$", p.name)
        if m and int(m.group(1)) > best_steps:
            best, best_steps = p, int(m.group(1))
    return best, best_steps


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(path)


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


# -- torch threads, envs -------------------------------------------------------------------------
def set_torch_threads(n: int) -> None:
    """torch on `n` threads here and in subprocess envs (they inherit the variables; each env
    also sets it when it starts, see make_env_fn)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    import torch
    torch.set_num_threads(n)


def make_env_fn(env_id: str, env_kwargs: dict, rank: int, seed: int, torch_threads: int = 1):
    def _init():
        # a subprocess env's process has torch loaded (SB3's worker imports it): its default of
        # one thread per core would spin against the other processes
        import torch
        torch.set_num_threads(torch_threads)
        import gymnasium as gym
        from stable_baselines3.common.monitor import Monitor

        import rune_env  # noqa: F401 - registers the envs
        env = gym.make(env_id, **env_kwargs)
        env = Monitor(env)
        env.reset(seed=seed + rank)
        return env
    return _init


def seed_everything(seed: int) -> None:
    from stable_baselines3.common.utils import set_random_seed
    set_random_seed(seed)


def make_venv(cfg: TrainConfig):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
    fns = [make_env_fn(cfg.env_id, cfg.env_kwargs, i, cfg.seed * 1000, cfg.torch_threads)
           for i in range(cfg.n_envs)]
    venv = DummyVecEnv(fns) if cfg.vec_env == "dummy" else SubprocVecEnv(fns)
    venv.seed(cfg.seed * 1000)
    return venv


# -- callbacks -----------------------------------------------------------------------------------
def progress_callback():
    """SB3's progress bar (tqdm.rich), drawn on stderr: stdout keeps the run's lines and its final
    JSON. Without rich, a plain tqdm bar on stderr."""
    try:
        import rich  # noqa: F401
        from rich.console import Console
        from stable_baselines3.common.callbacks import ProgressBarCallback
        from tqdm import TqdmExperimentalWarning
        from tqdm.rich import tqdm as rich_tqdm
    except ImportError:
        from stable_baselines3.common.callbacks import BaseCallback

        class PlainProgressBar(BaseCallback):
            def _on_training_start(self) -> None:
                self.pbar = bar(self.locals["total_timesteps"] - self.model.num_timesteps,
                                "training", True, unit="step")

            def _on_step(self) -> bool:
                self.pbar.update(self.training_env.num_envs)
                return True

            def _on_training_end(self) -> None:
                self.pbar.close()
        return PlainProgressBar()

    import warnings

    class StderrProgressBar(ProgressBarCallback):
        def _on_training_start(self) -> None:
            warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)
            stdout_tty = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()
            # printed lines go above the bar when both are on the terminal; to stdout untouched
            # when it is a file or a pipe
            self.pbar = rich_tqdm(total=self.locals["total_timesteps"] - self.model.num_timesteps,
                                  unit="step", options={"console": Console(stderr=True),
                                                        "redirect_stdout": stdout_tty})
    return StderrProgressBar()


def build_callbacks(cfg: TrainConfig, run_dir: Path, clock: TrainClock, progress: bool):
    from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback

    from agents.evaluation import evaluate
    from agents.policy import PolicyAgent
    from rune_env.rules import default_rules
    from rune_env.rules.config import KINDS
    rules = default_rules()

    class Checkpoints(CheckpointCallback):
        """SB3's checkpoints, with the training seconds up to each (train_seconds.json)."""

        def _on_step(self) -> bool:
            saving = self.n_calls % self.save_freq == 0
            ok = super()._on_step()
            if saving:
                clock.record(self.num_timesteps)
            return ok

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
                    self.kinds.extend(b.get("kinds", []))
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
                # each kind's share of the runes on the boards that fought, by name; and the
                # histogram of the same (bins are the kinds' indices in KINDS)
                for kind, share in kind_shares(Counter(self.kinds)).items():
                    rec(f"game/kind_share/{kind}", share)
                import numpy as np
                for writer in tb_writers(self.logger):
                    writer.add_histogram("game/board_kinds", np.array([KINDS.index(k) for k in self.kinds]),
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
                # no bar of its own: the training bar is showing
                res = evaluate(PolicyAgent(self.model), self.episodes, self.seed, cfg.env_kwargs)
                for writer in tb_writers(self.logger):
                    log_evaluation(writer, res, self.num_timesteps, rules, image_tag="boards/eval",
                                   cores=list(rules.spec.cores))
                say(summary_line(res, f"evaluation at {self.num_timesteps} steps"))
                res.pop("runs")
                with open(run_dir / "eval_history.jsonl", "a") as fh:
                    fh.write(json.dumps({"timesteps": self.num_timesteps, **res}) + "\n")
            return True

    ckpt = Checkpoints(save_freq=max(1, cfg.checkpoint_every // cfg.n_envs),
                       save_path=str(run_dir / "checkpoints"), name_prefix="model")
    callbacks = [ckpt, GameMetrics(cfg.metrics_every),
                 PeriodicEval(cfg.eval.every, cfg.eval.episodes, cfg.eval.seed)]
    if progress:
        callbacks.append(progress_callback())
    return callbacks


def tb_writers(logger):
    return [w for w in (getattr(f, "writer", None) for f in logger.output_formats) if w is not None]


def tb_run_dir(run_dir: Path) -> Path:
    """The run's TensorBoard run (SB3's tb/run_<N>, the newest)."""
    runs = [(int(m.group(1)), p) for p in (run_dir / "tb").glob("run_*")
            if (m := re.fullmatch(r"run_(\d+)", p.name)) and p.is_dir()]
    return max(runs)[1] if runs else run_dir / "tb" / "run_1"


# -- training ------------------------------------------------------------------------------------
def new_model(cfg: TrainConfig, venv):
    from sb3_contrib import MaskablePPO

    from agents.masking import policy_class
    return MaskablePPO(policy_class(cfg.policy, cfg.masking), venv, seed=cfg.seed, verbose=0,
                       policy_kwargs=cfg.policy_kwargs or None, device="cpu", **cfg.ppo.kwargs())


def train(cfg: TrainConfig, run_dir: Path, model, venv, resumed: bool, base_seconds: float,
          progress: bool) -> dict:
    """Train `model` on to cfg.total_timesteps, save it, evaluate it; returns eval.json's content."""
    model.tensorboard_log = str(run_dir / "tb")
    remaining = cfg.total_timesteps - model.num_timesteps
    # What exists now (torch, the model, the envs) lives for the whole run: frozen out of the
    # garbage collector's generations, it is no longer walked by every full collection (about
    # 0.2 s for the half million objects, once or twice a minute of training). No effect on
    # results: the collector frees memory only.
    gc.collect()
    gc.freeze()
    clock = TrainClock(run_dir, base_seconds)
    callbacks = build_callbacks(cfg, run_dir, clock, progress)
    try:
        model.learn(total_timesteps=remaining, callback=callbacks, tb_log_name="run",
                    reset_num_timesteps=not resumed, progress_bar=False)
    except KeyboardInterrupt:
        for cb in callbacks:          # give the terminal back (rich hides the cursor while drawing)
            if getattr(cb, "pbar", None) is not None:
                cb.pbar.close()
        raise
    finally:
        try:
            venv.close()
        except (EOFError, OSError):   # subprocess envs already gone (Ctrl-C reaches them too)
            pass
    steps = int(model.num_timesteps)
    final = run_dir / "final_model.zip"
    older = training_step(final) if final.exists() else None
    if older is not None and older > steps:     # cannot happen: resumed from the newest model
        raise RuntimeError(f"{final} has {older} timesteps, more than this model's {steps}: kept")
    model.save(final)
    from agents.policy import export_policy
    export_policy(model, run_dir / "final_policy.pt")   # the network alone: small, committable
    seconds = clock.record(steps)
    return final_evaluation(cfg, run_dir, steps, seconds, Path(model.logger.dir), progress)


def final_evaluation(cfg: TrainConfig, run_dir: Path, steps: int, seconds: float, tb_dir: Path,
                     progress: bool) -> dict:
    """The final model's evaluation: eval.json, final_policy.json, and TensorBoard (eval/* at the
    last step, images boards/final/<i>)."""
    from agents.evaluation import evaluate
    from agents.policy import PolicyAgent, load_model
    from rune_env.rules import default_rules
    episodes = cfg.final_eval_episodes
    res: dict = {}
    if episodes:
        with bar(episodes, "final evaluation", progress) as pb:
            res = evaluate(PolicyAgent(load_model(run_dir / "final_model.zip")), episodes,
                           cfg.eval.seed, cfg.env_kwargs, progress=pb)
        from torch.utils.tensorboard import SummaryWriter
        rules = default_rules()
        with SummaryWriter(str(tb_dir)) as w:
            log_evaluation(w, res, steps, rules, image_tag="boards/final", cores=list(rules.spec.cores))
        say(summary_line(res, f"final evaluation at {steps} steps"))
    res.pop("runs", None)
    res["train_seconds"] = seconds
    res["timesteps"] = steps
    write_json(run_dir / "eval.json", res)
    write_json(run_dir / "final_policy.json", {
        "policy": "final_policy.pt",
        "format": "exported MaskableActorCriticPolicy (agents.policy.export_policy); load with "
                  "PolicyAgent(path)",
        "model": "final_model.zip", "config": "config.yaml", "seed": cfg.seed,
        "timesteps": steps, "train_seconds": seconds,
        "final_eval": {k: res[k] for k in ("episodes", "battle_win_rate", "mean_wins", "clear_rate")
                       if k in res}})
    return res


def summary_json(run_dir: Path, res: dict) -> str:
    return json.dumps({"run_dir": str(run_dir), **{k: res.get(k) for k in
                       ("timesteps", "train_seconds", "battle_win_rate", "mean_wins", "clear_rate")}})


# -- the command line ----------------------------------------------------------------------------
def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--config", metavar="YAML",
                   help="the training config (configs/train/*.yaml); required, except with "
                        "--resume --run-name, which reads the run's own config.yaml (default: none)")
    p.add_argument("--seed", type=seed_int, metavar="S",
                   help="the model's seed, 0..2**32-1; env i is seeded S*1000+i (default: the "
                        "config's seed)")
    p.add_argument("--total-timesteps", type=positive_int, dest="total_timesteps", metavar="N",
                   help="env steps to train for in all, >= 1; with --resume, a larger N trains a "
                        "run on (default: the config's total_timesteps)")
    p.add_argument("--run-name", metavar="NAME",
                   help="the run directory's name under --runs-dir; an existing one is refused "
                        "unless --resume or --force (default: <name>__s<seed>__<UTC time>, a new "
                        "directory per run)")
    p.add_argument("--force", action="store_true",
                   help="with --run-name: delete that run's directory first and start again "
                        "(default: off; an existing run is refused)")
    p.add_argument("--resume", action="store_true",
                   help="continue a run from its newest model: --run-name's, else the newest run "
                        "of the config's name and seed. A finished run is not trained again: the "
                        "script says so and exits with status 0 (default: off)")
    p.add_argument("--runs-dir", default=str(ROOT / "runs"), metavar="DIR",
                   help="where run directories go (default: runs/ of the repository)")
    from rune_env.battle.engines import add_engine_argument
    add_engine_argument(p)     # or env_kwargs: {engine: reference} in the config
    add_progress_argument(p)
    return p


def check_run_name(name: str) -> str | None:
    if not RUN_NAME.fullmatch(name):
        return (f"--run-name {name!r}: a run directory's name is letters, digits and ._+=- "
                f"(no '/', ':' or spaces), starting with a letter or digit")
    return None


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.force and a.resume:
        return fail("--force and --resume contradict each other: --force deletes the run, "
                    "--resume continues it")
    if a.config is None and not (a.resume and a.run_name):
        return fail("--config YAML is required (only --resume --run-name NAME reads the run's own "
                    "config)")
    if a.run_name and (problem := check_run_name(a.run_name)):
        return fail(problem)
    from rune_env.battle.engines import use_engine
    use_engine(a.engine)
    runs_dir = Path(a.runs_dir)
    progress = progress_on(a.progress)
    try:
        return (resume if a.resume else start)(a, runs_dir, progress)
    except ConfigError as exc:
        return fail(str(exc))


def start(a, runs_dir: Path, progress: bool) -> int:
    cfg = read_config(a.config, {"seed": a.seed, "total_timesteps": a.total_timesteps})
    run_dir = runs_dir / a.run_name if a.run_name else None
    if run_dir is not None and run_dir.exists() and not (run_dir.is_dir() and not any(run_dir.iterdir())):
        if not a.force:
            return fail(f"{run_dir} exists: pass --resume to continue it, --force to start it "
                        f"again, or another --run-name (without one, each run gets a new directory)")
        if not (run_dir / "config.yaml").is_file():
            return fail(f"{run_dir}: not a training run (no config.yaml); --force deletes only "
                        f"runs, so it is left alone")
    check_env(cfg, str(a.config))
    set_torch_threads(cfg.torch_threads)       # before any torch work
    seed_everything(cfg.seed)
    venv = make_venv(cfg)
    try:
        model = new_model(cfg, venv)
    except (TypeError, ValueError, AssertionError) as exc:   # e.g. policy_kwargs SB3 cannot use
        venv.close()
        return fail(f"{a.config}: cannot build the model ({type(exc).__name__}: {exc})")
    if run_dir is None:
        run_dir = claim_run_dir(runs_dir, default_run_name(cfg.name, cfg.seed))
    else:
        if a.force and run_dir.exists():
            shutil.rmtree(run_dir)
            say(f"--force: deleted the old {run_dir}")
        run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_yaml(), sort_keys=False))
    say(f"run: {run_dir}  (torch threads {cfg.torch_threads}; tensorboard --logdir {run_dir / 'tb'})")
    try:
        res = train(cfg, run_dir, model, venv, False, 0.0, progress)
    except KeyboardInterrupt:
        return interrupted(run_dir)
    print(summary_json(run_dir, res))
    return 0


def interrupted(run_dir: Path) -> int:
    print(f"interrupted: continue it with python scripts/train.py --resume --run-name "
          f"{run_dir.name} --runs-dir {run_dir.parent}", file=sys.stderr)
    return 130


def resume(a, runs_dir: Path, progress: bool) -> int:
    from agents.policy import PolicyLoadError, load_model
    if a.run_name:
        run_dir = runs_dir / a.run_name
    else:
        first = read_config(a.config, {"seed": a.seed})
        run_dir = latest_run(runs_dir, first.name, first.seed)
        if run_dir is None:
            return fail(f"nothing to resume: no run {first.name}__s{first.seed}__<time> under "
                        f"{runs_dir} (pass --run-name NAME for another run)")
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        return fail(f"{run_dir}: nothing to resume (no config.yaml)")
    # a resumed run keeps the config it was started with (a new total may extend it)
    cfg = read_config(saved, {"total_timesteps": a.total_timesteps})
    if a.seed is not None and a.seed != cfg.seed:
        return fail(f"--seed {a.seed}: {run_dir} was trained with seed {cfg.seed}")
    final = run_dir / "final_model.zip"
    final_steps = training_step(final) if final.exists() else None
    if final.exists() and final_steps is None:
        return fail(f"{final}: cannot read the final model (corrupt?); move it away to resume "
                    f"from the last checkpoint")
    if final_steps is not None and final_steps >= cfg.total_timesteps:
        ev = read_json(run_dir / "eval.json")
        if ev.get("timesteps") == final_steps:
            say(f"{run_dir} is finished: its final model has {final_steps} timesteps "
                f"(total_timesteps {cfg.total_timesteps}); nothing to do, nothing changed. To "
                f"train it on, pass --resume --total-timesteps N with N > {final_steps}.")
            print(summary_json(run_dir, ev))
            return 0
        # trained to the end but killed before its final evaluation: evaluate it now
        say(f"{run_dir}: trained ({final_steps} timesteps) but not evaluated; evaluating it")
        set_torch_threads(cfg.torch_threads)
        try:
            res = final_evaluation(cfg, run_dir, final_steps, TrainClock.before(run_dir, final_steps),
                                   tb_run_dir(run_dir), progress)
        except PolicyLoadError as exc:
            return fail(str(exc))
        print(summary_json(run_dir, res))
        return 0
    ckpt, ckpt_steps = latest_checkpoint(run_dir / "checkpoints")
    if final_steps is not None and final_steps >= ckpt_steps:
        source, steps = final, final_steps           # the newest model; the final one on a tie
    elif ckpt is not None:
        source, steps = ckpt, ckpt_steps
    else:
        return fail(f"{run_dir / 'checkpoints'}: no checkpoint to resume from")
    set_torch_threads(cfg.torch_threads)       # before any torch work
    try:
        model = load_model(source)
    except PolicyLoadError as exc:
        return fail(str(exc))
    seed_everything(cfg.seed)
    if a.total_timesteps is not None:
        (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_yaml(), sort_keys=False))
    say(f"run: {run_dir}  (torch threads {cfg.torch_threads}; tensorboard --logdir {run_dir / 'tb'})")
    say(f"resuming from {source} at {model.num_timesteps} steps, on to {cfg.total_timesteps}")
    venv = make_venv(cfg)
    model.set_env(venv)
    try:
        res = train(cfg, run_dir, model, venv, True, TrainClock.before(run_dir, steps), progress)
    except KeyboardInterrupt:
        return interrupted(run_dir)
    print(summary_json(run_dir, res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
