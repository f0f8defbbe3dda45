"""Training MaskablePPO drafters: the library part of scripts/train.py (its docstring describes
the run directory, --resume and the TensorBoard scalars).

- The config: `TrainConfig` (with `PPOConfig`, `EvalConfig`), strict pydantic models of
  configs/train/*.yaml (keys in configs/train/README.md); `read_config` reads a file with the
  command line's overrides, `validate_config` a mapping; a problem is a `ConfigError` naming the
  file and the key. `check_env` builds one env of a config.
- Run directories: `default_run_name`, `claim_run_dir`, `latest_run`, `latest_checkpoint`,
  `TrainClock` (training seconds over sessions, train_seconds.json), `read_json` / `write_json`.
- Envs and torch: `set_torch_threads`, `make_env_fn`, `make_venv`, `seed_everything`.
- Callbacks: `build_callbacks` (checkpoints at rollout boundaries with their resume states, the
  game's TensorBoard metrics, periodic evaluations; all on the global step count, so a resumed
  run keeps them where the uninterrupted one has them: agents/resume.py), `progress_callback`,
  `tb_writers`, `tb_run_dir`.
- Training: `new_model`, `train` (learn, save, export, evaluate), `final_evaluation`,
  `summary_json`.
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

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, StrictBool,
                      ValidationError, model_validator)

from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml, write_text_atomic

from .evaluation import MAX_EPISODES, kind_shares, log_evaluation, summary_line, training_step
from .progress import bar, say
from .script_args import MAX_ENVS, MAX_ROLLOUT, MAX_STEPS, MAX_THREADS, SEED_MAX

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
    n_steps: Whole | None = Field(None, ge=1, le=MAX_ROLLOUT)
    batch_size: Whole | None = Field(None, ge=2, le=MAX_ROLLOUT)
    n_epochs: Whole | None = Field(None, ge=1, le=10_000)
    gamma: Number | None = Field(None, ge=0, le=1)
    gae_lambda: Number | None = Field(None, ge=0, le=1)
    clip_range: Number | None = Field(None, gt=0)
    clip_range_vf: Number | None = Field(None, gt=0)
    normalize_advantage: StrictBool | None = None
    ent_coef: Number | None = Field(None, ge=0)
    vf_coef: Number | None = Field(None, ge=0)
    max_grad_norm: Number | None = Field(None, gt=0)
    target_kl: Number | None = Field(None, gt=0)
    stats_window_size: Whole | None = Field(None, ge=1, le=MAX_ROLLOUT)

    def kwargs(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class EvalConfig(_Section):
    """The periodic evaluation during training."""
    every: Whole = Field(0, ge=0, le=MAX_STEPS)    # timesteps between evaluations; 0: none
    episodes: Whole = Field(20, ge=1, le=MAX_EPISODES)
    seed: Whole = Field(0, ge=0, le=SEED_MAX)      # the evaluation seed (the final one's too)


class TrainConfig(_Section):
    """A training config (configs/train/*.yaml; keys and meanings in configs/train/README.md)."""
    name: str | None = Field(None, pattern="^" + RUN_NAME.pattern + "$")
    env_id: str = "rune_env/RuneRun-v0"
    env_kwargs: Mapping = {}
    n_envs: Whole = Field(2, ge=1, le=MAX_ENVS)
    vec_env: Literal["dummy", "subproc"] = "dummy"
    seed: Whole = Field(0, ge=0, le=SEED_MAX)
    total_timesteps: Whole = Field(10000, ge=1, le=MAX_STEPS)
    torch_threads: Whole = Field(1, ge=1, le=MAX_THREADS)
    policy: Literal["MlpPolicy", "MultiInputPolicy", "CnnPolicy"] = "MlpPolicy"
    masking: Literal["fast", "sb3"] = "fast"       # the masked distribution (agents/masking.py)
    ppo: Annotated[PPOConfig, BeforeValidator(_mapping)] = PPOConfig()
    policy_kwargs: Mapping = {}
    checkpoint_every: Whole = Field(10000, ge=1, le=MAX_STEPS)
    metrics_every: Whole = Field(2048, ge=1, le=MAX_STEPS)
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


def _problem(err: dict, sections: dict | None = None) -> str:
    """One pydantic error as words, with the key's dotted path (`sections`: the models by key
    path, for the list of keys an unknown key is not; default the training config's)."""
    loc = ".".join(str(p) for p in err["loc"])
    kind, ctx, got = err["type"], err.get("ctx", {}), err.get("input")
    if kind == "extra_forbidden":
        section = tuple(err["loc"][:-1])
        models = SECTIONS if sections is None else sections
        model, ppo = models.get(section), models.get(("ppo",))
        keys = f" (keys{' of ' + '.'.join(section) if section else ''}: " \
               f"{', '.join(model.model_fields)})" if model else ""
        hint = f"; did you mean ppo.{loc}?" if not section and ppo and loc in ppo.model_fields else ""
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


def validate_model(model: type[BaseModel], data: Any, source: str, what: str,
                   sections: dict | None = None) -> Any:
    """`data` as a `model` (a strict config), else one ConfigError naming `source` and the key
    (`what`: the config's name in words, "a training config")."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {what} is a YAML mapping")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(f"{source}: {_problem(errors[0], sections)}{more}") from None


def validate_config(data: Any, source: str) -> TrainConfig:
    return validate_model(TrainConfig, data, source, "a training config")


def read_yaml(path: str | Path, overrides: dict | None = None) -> Any:
    """A YAML config file's content (None: empty), with the command line's overrides (None: not
    given) over its top-level keys; a missing file or bad YAML is a ConfigError naming it."""
    path = Path(path)
    text = read_text(path, "", ConfigError, limit=MAX_YAML_BYTES)
    try:
        data = safe_load_yaml(text, str(path), ConfigError)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: not valid YAML{where}: {what}") from None
    if isinstance(data, dict):
        data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return data


def read_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """A config file, with the command line's overrides (None: not given), validated."""
    path = Path(path)
    data = read_yaml(path, overrides)
    data = {} if data is None else data
    if isinstance(data, dict):
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


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=1))


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
        from .resume import ResumableEnv
        env = gym.make(env_id, **env_kwargs)
        env = ResumableEnv(Monitor(env))    # its state goes into checkpoints (agents/resume.py)
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


def eval_rules(env_kwargs: dict | None):
    """The rules a training config's envs play (`env_kwargs`' rules and overrides), for its
    evaluations' records and pictures."""
    from rune_env.envs.run_env import resolve_rules
    kw = env_kwargs or {}
    return resolve_rules(kw.get("rules"), kw.get("rules_overrides"))


def build_callbacks(cfg: TrainConfig, run_dir: Path, clock: TrainClock, progress: bool):
    from stable_baselines3.common.callbacks import BaseCallback

    from .evaluation import evaluate
    from .policy import PolicyAgent
    from .resume import collect_state, restore_pending_log, save_state
    from .trust import save_checkpoint
    from rune_env.rules.config import KINDS
    rules = eval_rules(cfg.env_kwargs)     # the rules the config trains under (was the defaults)

    class Checkpoints(BaseCallback):
        """A checkpoint each time training passes a multiple of `every` timesteps (the global
        model.num_timesteps, so a resumed run keeps the grid), taken at the next rollout boundary
        (after the rollout's update: before the next rollout starts, or at the end of training),
        so that a resume starts a new rollout as the uninterrupted run does. Each is
        checkpoints/model_<steps>_steps.zip (SB3's names), written atomically and signed
        (agents/trust.py), with its resume state beside it (agents/resume.py) and the training
        seconds up to it (train_seconds.json)."""

        def __init__(self, every: int, save_path: str):
            super().__init__()
            self.every, self.save_path = every, Path(save_path)
            self.last = 0
            self.peers: list = []        # the callbacks whose counters the resume state keeps
            self.pending_log: list = []  # a resumed run's logger scalars not yet written

        def _on_training_start(self) -> None:
            self.last = self.num_timesteps
            # model.learn has made its logger: the resumed update's train/* go out with the
            # next rollout's scalars, as in the uninterrupted run
            restore_pending_log(self.logger, self.pending_log)
            self.pending_log = []

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:
            self.maybe_save()

        def _on_training_end(self) -> None:
            self.maybe_save()

        def maybe_save(self) -> None:
            steps = int(self.model.num_timesteps)    # (the callback's own copy is per step)
            if steps // self.every > self.last // self.every:
                self.last = steps
                path = self.save_path / f"model_{steps}_steps.zip"
                # the state first: the zip's rename is what makes the checkpoint exist
                save_state(collect_state(self.model, self.peers), path)
                save_checkpoint(self.model, path)
                clock.record(steps)

        def resume_state(self) -> dict:
            return {"last": self.last}

        def set_resume_state(self, s: dict) -> None:
            self.last = s["last"]

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

        def resume_state(self) -> dict:
            return {"last": self.last, "battles": self.battles, "durations": self.durations,
                    "kinds": self.kinds, "episodes": self.episodes}

        def set_resume_state(self, s: dict) -> None:
            self.last = s["last"]
            self.battles, self.durations, self.kinds = s["battles"], s["durations"], s["kinds"]
            self.episodes = [tuple(e) for e in s["episodes"]]

    class PeriodicEval(BaseCallback):
        """An evaluation at the first step at or past each multiple of `every` timesteps (of
        the global model.num_timesteps: a resumed run evaluates on the same steps), appended
        to eval_history.jsonl."""

        def __init__(self, every: int, episodes: int, seed: int):
            super().__init__()
            self.every, self.episodes, self.seed = every, episodes, seed
            self.last = 0

        def _on_training_start(self) -> None:
            self.last = self.num_timesteps

        def resume_state(self) -> dict:
            return {"last": self.last}

        def set_resume_state(self, s: dict) -> None:
            self.last = s["last"]

        def _on_step(self) -> bool:
            if self.every and self.num_timesteps // self.every > self.last // self.every:
                self.last = self.num_timesteps
                # no bar of its own: the training bar is showing
                res = evaluate(PolicyAgent(self.model), self.episodes, self.seed, cfg.env_kwargs)
                for writer in tb_writers(self.logger):
                    log_evaluation(writer, res, self.num_timesteps, rules, image_tag="boards/eval",
                                   cores=list(rules.spec.cores), context=res["played_against"])
                say(summary_line(res, f"evaluation at {self.num_timesteps} steps"))
                res.pop("runs")
                with open(run_dir / "eval_history.jsonl", "a") as fh:
                    fh.write(json.dumps({"timesteps": self.num_timesteps, **res}) + "\n")
            return True

    ckpt = Checkpoints(cfg.checkpoint_every, str(run_dir / "checkpoints"))
    callbacks = [ckpt, GameMetrics(cfg.metrics_every),
                 PeriodicEval(cfg.eval.every, cfg.eval.episodes, cfg.eval.seed)]
    ckpt.peers = callbacks
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

    from .masking import policy_class
    return MaskablePPO(policy_class(cfg.policy, cfg.masking), venv, seed=cfg.seed, verbose=0,
                       policy_kwargs=cfg.policy_kwargs or None, device="cpu", **cfg.ppo.kwargs())


def train(cfg: TrainConfig, run_dir: Path, model, venv, resumed: bool, base_seconds: float,
          progress: bool, state: dict | None = None) -> dict:
    """Train `model` on to cfg.total_timesteps, save it, evaluate it; returns eval.json's content.
    `state`: the resume state of the checkpoint `model` was loaded from (agents/resume.py), put
    back before training goes on, so the run continues as if it had never stopped."""
    from .resume import collect_state, restore_state, save_state
    model.tensorboard_log = str(run_dir / "tb")
    remaining = cfg.total_timesteps - model.num_timesteps
    if resumed:
        keep_history(run_dir, int(model.num_timesteps))
    # What exists now (torch, the model, the envs) lives for the whole run: frozen out of the
    # garbage collector's generations, it is no longer walked by every full collection (about
    # 0.2 s for the half million objects, once or twice a minute of training). No effect on
    # results: the collector frees memory only.
    gc.collect()
    gc.freeze()
    clock = TrainClock(run_dir, base_seconds)
    callbacks = build_callbacks(cfg, run_dir, clock, progress)
    if state is not None:
        restore_state(model, venv, state, callbacks)     # last before learn: the generators
    try:
        model.learn(total_timesteps=remaining, callback=callbacks, tb_log_name="run",
                    reset_num_timesteps=not resumed, progress_bar=False)
        final_state = collect_state(model, callbacks)    # a larger total may resume from it
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
    from .policy import export_policy
    from .trust import save_checkpoint
    save_state(final_state, final)
    save_checkpoint(model, final)           # atomic and signed: resume and evaluate may load it
    export_policy(model, run_dir / "final_policy.pt")   # the network alone: small, committable
    seconds = clock.record(steps)
    return final_evaluation(cfg, run_dir, steps, seconds, Path(model.logger.dir), progress)


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
        try:
            if json.loads(line)["timesteps"] > steps:
                continue
        except (ValueError, KeyError, TypeError):
            continue                  # a line cut by the kill
        kept.append(line if line.endswith("\n") else line + "\n")
    if kept != lines:
        write_text_atomic(path, "".join(kept))


def final_evaluation(cfg: TrainConfig, run_dir: Path, steps: int, seconds: float, tb_dir: Path,
                     progress: bool) -> dict:
    """The final model's evaluation: eval.json, final_policy.json, and TensorBoard (eval/* at the
    last step, images boards/final/<i>)."""
    from .evaluation import evaluate
    from .policy import PolicyAgent, load_model
    episodes = cfg.final_eval_episodes
    res: dict = {}
    if episodes:
        with bar(episodes, "final evaluation", progress) as pb:
            res = evaluate(PolicyAgent(load_model(run_dir / "final_model.zip")), episodes,
                           cfg.eval.seed, cfg.env_kwargs, progress=pb)
        from torch.utils.tensorboard import SummaryWriter
        rules = eval_rules(cfg.env_kwargs)      # the config's rules, not always the defaults
        with SummaryWriter(str(tb_dir)) as w:
            log_evaluation(w, res, steps, rules, image_tag="boards/final", cores=list(rules.spec.cores),
                           context=res["played_against"])
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
        "rules_hash": rules_hash(cfg.env_kwargs),
        "timesteps": steps, "train_seconds": seconds,
        "final_eval": {k: res[k] for k in ("episodes", "battle_win_rate", "mean_wins", "clear_rate")
                       if k in res}})
    return res


def rules_hash(env_kwargs: dict) -> str:
    """The hash of the rules an env of these options plays (its `rules`/`rules_overrides`)."""
    from rune_env.envs.run_env import resolve_rules
    return resolve_rules(env_kwargs.get("rules"), env_kwargs.get("rules_overrides")).hash


def summary_json(run_dir: Path, res: dict) -> str:
    return json.dumps({"run_dir": str(run_dir), **{k: res.get(k) for k in
                       ("timesteps", "train_seconds", "battle_win_rate", "mean_wins", "clear_rate")}})
