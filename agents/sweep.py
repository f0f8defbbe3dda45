"""Hyperparameter sweeps of train.py runs under Ray Tune: the library part of scripts/sweep.py
(its docstring describes the command line and the sweep directory).

A sweep is a training config (`base`, a configs/train/*.yaml), fixed `overrides` applied to it,
and a search `space` over its keys by dotted path (`ppo.learning_rate`, `policy_kwargs.net_arch`,
`seed`, ...). Each trial is one train.py run, started as a subprocess by a Tune trainable, so a
trial is exactly what `python scripts/train.py --config ...` makes (its own run directory,
TensorBoard, checkpoints, eval.json); the trainable follows the run's `eval_history.jsonl` and
reports each periodic evaluation to Tune, then the final one (eval.json). ASHA, if the sweep asks
for it, stops the weaker trials at its rungs (in timesteps); a stopped trial's train.py is
interrupted as Ctrl-C would (SIGINT), which leaves it resumable with train.py --resume.

- The config: `SweepConfig` (with `Dimension`, `ASHAConfig`), strict pydantic models like
  agents/training.py's `TrainConfig`; `read_sweep` reads a file with the command line's
  overrides; a problem is a `ConfigError` naming the file and the key.
- The trials: `draw_values` (the space's values of every trial: the grid's product, repeated
  num_samples times, the random kinds drawn from search_seed, so the same YAML gives the same
  trials), `plan_trials` (each trial's train config resolved and validated, before Ray starts),
  `asha_settings`, `train_path_problem`, `set_path` / `get_path`.
- Running: `TrainRun` (one train.py subprocess and the evaluations it has written; no Ray),
  `run_sweep` (Ray Tune: the trainable, ASHA, the progress lines).
- The outcome: `trial_record`, `sweep_summary` (sweep.json's content, with the best trial),
  `format_table`.

Ray is imported only inside `run_sweep` and what it calls, so everything else (validation, the
draws, the table) works without the ray extra.
"""
from __future__ import annotations

import copy
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from .script_args import SEED_MAX
from .training import (RUN_NAME, SECTIONS, ConfigError, Mapping, Number, TrainConfig, Whole,
                       check_env, read_config, read_json, read_yaml, validate_config,
                       validate_model)

# What a trial reports to Tune from each evaluation (agents.evaluation.summarise's numbers); the
# sweep's `metric` is one of them.
REPORTED_METRICS = ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived", "lamps_left")
# Tune's time attribute, env steps: ASHA's rungs and max_t are in it, and under Tune's own name for
# it Tune's TensorBoard files use it as their step, so they line up with train.py's curves
TIME_ATTR = "timesteps_total"
MAX_TRIALS = 10_000            # a typo like num_samples: 1e6 is refused before anything starts
DIMENSION_KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
STATUSES = ("finished", "stopped_early", "error", "interrupted", "not_started")


# -- the sweep config ----------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _dimension(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError(f"a dimension is a mapping of one kind ({', '.join(DIMENSION_KINDS)}) to "
                         f"its values, e.g. {{grid: [0, 1]}}; got {value!r}")
    return value


class Dimension(_Strict):
    """One key of the search space: exactly one of
    grid: [v, ...]       every value, each in its own trials (a grid's keys form their product);
    choice: [v, ...]     one value drawn per trial, each equally likely;
    uniform: [lo, hi]    a number drawn uniformly from lo..hi;
    loguniform: [lo, hi] a number whose logarithm is uniform (0 < lo < hi: learning rates);
    randint: [lo, hi]    a whole number lo <= x < hi (hi excluded, as in Tune and numpy)."""
    grid: list[Any] | None = Field(None, min_length=1)
    choice: list[Any] | None = Field(None, min_length=1)
    uniform: tuple[Number, Number] | None = None
    loguniform: tuple[Number, Number] | None = None
    randint: tuple[Whole, Whole] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> "Dimension":
        given = [k for k in DIMENSION_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"a dimension has exactly one kind of {', '.join(DIMENSION_KINDS)}; "
                             f"got {', '.join(given) or 'none'}")
        kind = given[0]
        if kind in ("uniform", "loguniform", "randint"):
            lo, hi = getattr(self, kind)
            if not lo < hi:
                raise ValueError(f"{kind}: [lo, hi] needs lo < hi; got [{lo}, {hi}]")
            if kind == "loguniform" and lo <= 0:
                raise ValueError(f"loguniform: [lo, hi] needs 0 < lo; got [{lo}, {hi}]")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in DIMENSION_KINDS if getattr(self, k) is not None)


class ASHAConfig(_Strict):
    """ASHA's settings, in timesteps (Tune's AsyncHyperBandScheduler with time_attr timesteps).
    A trial can be stopped at each rung grace_period * reduction_factor**k < max_t if its metric
    is below the best 1/reduction_factor of the trials that reached that rung."""
    grace_period: Whole | None = Field(None, ge=1)   # default: the trials' eval.every
    reduction_factor: Number = Field(3.0, gt=1)
    max_t: Whole | None = Field(None, ge=1)          # default: the trials' total_timesteps


def _scheduler(value: Any) -> Any:
    return "none" if value is None else value         # `scheduler:` with nothing, or null


def _space(value: Any) -> Any:
    return {} if value is None else value


class SweepConfig(_Strict):
    """A sweep config (configs/sweeps/*.yaml; keys in configs/sweeps/README.md)."""
    name: str | None = Field(None, pattern="^" + RUN_NAME.pattern + "$")
    base: str                                        # the trials' training config
    overrides: Mapping = {}                          # dotted train-config key -> fixed value
    space: Annotated[dict[str, Annotated[Dimension, BeforeValidator(_dimension)]],
                     BeforeValidator(_space)] = {}
    num_samples: Whole = Field(1, ge=1, le=MAX_TRIALS)
    search_seed: Whole = Field(0, ge=0, le=SEED_MAX)
    metric: Literal[REPORTED_METRICS] = "battle_win_rate"
    mode: Literal["max", "min"] = "max"
    scheduler: Annotated[Literal["none", "asha"], BeforeValidator(_scheduler)] = "none"
    asha: Annotated[ASHAConfig, BeforeValidator(lambda v: {} if v is None else v)] = ASHAConfig()
    cpus_per_trial: Whole = Field(1, ge=1)
    max_concurrent: Whole | None = Field(None, ge=1)  # default: as many as the CPUs allow

    @model_validator(mode="after")
    def _consistent(self) -> "SweepConfig":
        for section, keys in (("overrides", self.overrides), ("space", self.space)):
            for key in keys:
                if problem := train_path_problem(key):
                    raise ValueError(f"{section}: {problem}")
        keys = [*self.overrides, *self.space]
        for a, b in itertools.permutations(keys, 2):
            if a == b or b.startswith(a + "."):
                where = "in both overrides and space" if a == b else f"under {a!r}"
                raise ValueError(f"{b!r} is set twice ({where}): give each train-config key once")
        if "asha" in self.model_fields_set and self.scheduler != "asha":
            raise ValueError("asha: ASHA's settings are given but scheduler is 'none' (set "
                             "scheduler: asha, or remove them)")
        return self

    def to_yaml(self) -> dict[str, Any]:
        """The validated config as a sweep YAML reads (sweep.yaml of the sweep directory)."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["space"] = {k: d.model_dump(mode="json", exclude_none=True)
                         for k, d in self.space.items()}
        if self.scheduler != "asha":
            data.pop("asha")
        return data


class _SweepSections(dict):
    """The models by key path, for the list of keys an unknown key is not (space.<key> is a
    Dimension whatever the key)."""

    def get(self, section, default=None):
        if len(section) == 2 and section[0] == "space":
            return Dimension
        return super().get(section, default)


SWEEP_SECTIONS = _SweepSections({(): SweepConfig, ("asha",): ASHAConfig})


def read_sweep(path: str | Path, overrides: dict | None = None) -> SweepConfig:
    """A sweep config file with the command line's overrides (None: not given), validated; the
    name defaults to the file's stem."""
    path = Path(path)
    data = read_yaml(path, overrides)
    if isinstance(data, dict) and data.get("name") is None:
        data["name"] = path.stem
    return validate_model(SweepConfig, data, str(path), "a sweep config", SWEEP_SECTIONS)


def tune_problem() -> str | None:
    """Why Ray Tune cannot be used here (the ray extra is not installed), or None."""
    try:
        import ray.tune  # noqa: F401
    except ImportError:
        return ('a sweep runs its trials under Ray Tune, which is not installed: '
                'pip install -e ".[ray]"')
    return None


def train_path_problem(key: str) -> str | None:
    """Why `key` (dotted, e.g. ppo.learning_rate) names no field of the training config, or None.
    Below a free mapping (env_kwargs, policy_kwargs) any key is accepted: the env and SB3 check
    those when the trial starts (env_kwargs before Ray starts, see plan_trials)."""
    parts = key.split(".")
    if not all(parts):
        return f"{key!r} is not a dotted train-config key (e.g. ppo.learning_rate)"
    model: type[BaseModel] | None = TrainConfig
    prefix: tuple = ()
    for part in parts:
        if model is None:                       # under env_kwargs or policy_kwargs
            return None
        if part not in model.model_fields:
            where = f" of {'.'.join(prefix)}" if prefix else ""
            return (f"unknown train-config key {key!r} (keys{where}: "
                    f"{', '.join(model.model_fields)})")
        annotation = model.model_fields[part].annotation
        prefix += (part,)
        if prefix in SECTIONS:
            model = SECTIONS[prefix]
        elif get_origin(annotation) is dict or annotation is dict:
            model = None
        elif len(prefix) < len(parts):
            return f"train-config key {key!r}: {'.'.join(prefix)} is a value, not a section"
    return None


def set_path(data: dict, key: str, value: Any) -> None:
    """Set the dotted `key` of a config mapping to `value`; a mapping value is merged into the
    mapping there (so `eval: {every: 1024}` keeps the base's eval.episodes and eval.seed)."""
    *parents, last = key.split(".")
    node = data
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if isinstance(value, dict) and isinstance(node.get(last), dict):
        for k, v in value.items():
            set_path(node[last], k, v)
    else:
        node[last] = copy.deepcopy(value)


def get_path(data: dict, key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


# -- the trials ----------------------------------------------------------------------------------
def draw_values(space: dict[str, Dimension], num_samples: int, search_seed: int) -> list[dict]:
    """The space's values of every trial, in trial order: for each of num_samples samples, every
    combination of the grid keys (their product, the first key varying slowest), each with the
    random keys (choice, uniform, loguniform, randint) drawn in the space's order from one numpy
    generator seeded with search_seed. The same space, num_samples and seed give the same list
    (Tune's semantics: num_samples repeats the grid)."""
    import numpy as np
    rng = np.random.default_rng(search_seed)
    grid_keys = [k for k, d in space.items() if d.kind == "grid"]
    combos = list(itertools.product(*(space[k].grid for k in grid_keys)))
    draws = []
    for _ in range(num_samples):
        for combo in combos:
            values = dict(zip(grid_keys, copy.deepcopy(combo)))
            for key, dim in space.items():
                if dim.kind == "choice":
                    values[key] = copy.deepcopy(dim.choice[int(rng.integers(len(dim.choice)))])
                elif dim.kind == "uniform":
                    values[key] = float(rng.uniform(*dim.uniform))
                elif dim.kind == "loguniform":
                    lo, hi = dim.loguniform
                    values[key] = float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
                elif dim.kind == "randint":
                    values[key] = int(rng.integers(*dim.randint))
            draws.append({k: values[k] for k in space})          # the space's key order
    return draws


def trial_count(space: dict[str, Dimension], num_samples: int) -> int:
    return num_samples * math.prod(len(d.grid) for d in space.values() if d.kind == "grid")


def describe_values(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "no space values"


@dataclass
class Trial:
    """One trial: its name (its train.py run directory's), the space's values it was given
    (dotted keys, as the validated config holds them) and its resolved training config."""
    name: str
    values: dict[str, Any]
    config: TrainConfig


def plan_trials(sweep: SweepConfig, source: str) -> list[Trial]:
    """Every trial's training config: the base (validated on its own first), the overrides, the
    trial's space values; each validated like a train.py config, and checked against what a sweep
    needs (a final evaluation to rank by; with ASHA, periodic evaluations to stop at; no more
    torch threads than the CPUs Tune reserves). A problem is a ConfigError naming the key (and
    the trial), raised before anything is written or started."""
    count = trial_count(sweep.space, sweep.num_samples)
    if count > MAX_TRIALS:
        raise ConfigError(f"{source}: {count} trials (num_samples x the grid's combinations); at "
                          f"most {MAX_TRIALS}")
    try:
        base = read_config(sweep.base)
    except ConfigError as exc:
        raise ConfigError(f"{source}: base: {exc}") from None
    start = base.to_yaml()
    for key, value in sweep.overrides.items():
        set_path(start, key, value)
    validate_config(copy.deepcopy(start), f"{source}: overrides on {sweep.base}")
    draws = draw_values(sweep.space, sweep.num_samples, sweep.search_seed)
    width = max(3, len(str(len(draws) - 1)))
    trials = []
    for i, values in enumerate(draws):
        name = f"t{i:0{width}d}"
        data = copy.deepcopy(start)
        for key, value in values.items():
            set_path(data, key, value)
        cfg = validate_config(data, f"{source}: trial {name} ({describe_values(values)})")
        resolved = cfg.to_yaml()
        trials.append(Trial(name, {k: get_path(resolved, k) for k in values}, cfg))
    for t in trials:
        check_trial(sweep, t, source)
    # a bad env_kwargs or policy_kwargs fails here, not in every trial after Ray has started
    kinds = {json.dumps([t.config.env_id, t.config.env_kwargs, t.config.policy, t.config.masking,
                         t.config.policy_kwargs], sort_keys=True, default=str): t for t in trials}
    for t in kinds.values():
        where = f"{source}: trial {t.name} ({describe_values(t.values)})"
        check_env(t.config, where)
        check_model(t.config, where)
    asha_settings(sweep, trials, source)        # its checks
    return trials


def check_trial(sweep: SweepConfig, trial: Trial, source: str) -> None:
    cfg, where = trial.config, f"{source}: trial {trial.name} ({describe_values(trial.values)})"
    if cfg.final_eval_episodes == 0:
        raise ConfigError(f"{where}: final_eval_episodes is 0, but a sweep ranks its trials by "
                          f"their final evaluation (eval.json); set it >= 1 (base or overrides)")
    if cfg.torch_threads > sweep.cpus_per_trial:
        raise ConfigError(f"{where}: torch_threads {cfg.torch_threads} > cpus_per_trial "
                          f"{sweep.cpus_per_trial} (the CPUs Tune reserves for a trial)")
    if sweep.scheduler == "asha" and cfg.eval.every == 0:
        raise ConfigError(f"{where}: eval.every is 0, but ASHA judges trials at their periodic "
                          f"evaluations; set overrides eval.every (e.g. to the grace period)")


def check_model(cfg: TrainConfig, source: str) -> None:
    """Build a trial's model once, on one env (SB3 takes policy_kwargs there: a key it does not
    know, e.g. net_arh, is a ConfigError before anything starts)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from .training import make_env_fn, new_model
    n_steps = max(2, cfg.ppo.n_steps or 2048)            # one env: a rollout of >= 2 steps
    probe = cfg.model_copy(update={"n_envs": 1,
                                   "ppo": cfg.ppo.model_copy(update={"n_steps": n_steps})})
    venv = DummyVecEnv([make_env_fn(cfg.env_id, cfg.env_kwargs, 0, 0, cfg.torch_threads)])
    try:
        new_model(probe, venv)
    except (TypeError, ValueError, AssertionError) as exc:
        raise ConfigError(f"{source}: cannot build the model ({type(exc).__name__}: "
                          f"{exc})") from None
    finally:
        venv.close()


def asha_settings(sweep: SweepConfig, trials: list[Trial], source: str = "sweep") -> dict | None:
    """ASHA's resolved settings (None without ASHA): grace_period (default: the largest
    eval.every of the trials, i.e. every trial has evaluated once by the first rung), max_t
    (default: the largest total_timesteps; it may not be smaller, or ASHA would stop the
    surviving trials before their final evaluation), reduction_factor, and the rungs."""
    if sweep.scheduler != "asha":
        return None
    totals = max(t.config.total_timesteps for t in trials)
    grace = sweep.asha.grace_period or max(t.config.eval.every for t in trials)
    max_t = sweep.asha.max_t or totals
    rf = sweep.asha.reduction_factor
    if max_t < totals:
        raise ConfigError(f"{source}: asha.max_t {max_t} is below the trials' total_timesteps "
                          f"{totals}: ASHA would stop every surviving trial at max_t, before its "
                          f"final evaluation (leave max_t out: it defaults to total_timesteps)")
    if grace >= max_t:
        raise ConfigError(f"{source}: asha.grace_period {grace} must be below asha.max_t {max_t} "
                          f"(the first rung; no trial could be stopped)")
    rungs = []
    while grace * rf ** len(rungs) < max_t:
        rungs.append(round(grace * rf ** len(rungs)))
    return {"grace_period": grace, "reduction_factor": rf, "max_t": max_t, "rungs": rungs}


# -- one trial: train.py as a subprocess ---------------------------------------------------------
class TrialFailed(RuntimeError):
    """train.py ended with an error; the message is its status and the last line of its log."""


class TrainRun:
    """One train.py run in a subprocess, and the evaluations it has written so far.

    `start()` writes the trial's config and starts `python scripts/train.py --config <config>
    --run-name <name> --runs-dir <trials dir> --no-progress`, its output into `log_path`.
    `next_report()` waits for the next evaluation: a new row of the run's eval_history.jsonl
    (train.py appends one per periodic evaluation), or, when train.py has exited, the final
    evaluation from eval.json (`final: 1`). A periodic evaluation at the run's last step
    (timesteps >= total_timesteps) is not reported: the final evaluation of the finished model,
    at the same step, comes next and takes its place (so a scheduler's max_t at total_timesteps
    never stops a trial before its final evaluation). `stop()` interrupts train.py as Ctrl-C
    would (SIGINT: it closes its envs and leaves a run train.py --resume continues), then kills
    it if it has not ended within `grace` seconds."""

    POLL_SECONDS = 0.5

    def __init__(self, train_script: str | Path, config: dict, config_path: Path, run_name: str,
                 trials_dir: Path, log_path: Path, python: str | None = None):
        self.command = [python or sys.executable, str(train_script), "--config", str(config_path),
                        "--run-name", run_name, "--runs-dir", str(trials_dir), "--no-progress"]
        self.config = config
        self.config_path = config_path
        self.run_dir = trials_dir / run_name
        self.log_path = log_path
        self.total_timesteps = int(config["total_timesteps"])
        self.proc: subprocess.Popen | None = None
        self._log = None
        self._offset = 0                 # how far eval_history.jsonl has been read
        self._pending: list[dict] = []
        self.finished = False

    def start(self) -> None:
        import yaml
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(yaml.safe_dump(self.config, sort_keys=False))
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.run_dir.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}     # the log follows the run as it goes
        # its own session: a Ctrl-C on the sweep's terminal reaches Tune (which stops the trials
        # through stop()), not every train.py at once
        self.proc = popen_interruptible(self.command, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env, start_new_session=True)

    def _new_rows(self) -> None:
        path = self.run_dir / "eval_history.jsonl"
        if not path.is_file():
            return
        with open(path, "rb") as fh:
            fh.seek(self._offset)
            chunk = fh.read()
        end = chunk.rfind(b"\n") + 1           # whole lines only: a row may be half written
        self._offset += end
        for line in chunk[:end].decode("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if int(row["timesteps"]) < self.total_timesteps:
                    self._pending.append(report_from(row, final=False))

    def next_report(self) -> dict:
        """The next evaluation as a Tune result (see the class docstring); raises TrialFailed if
        train.py exits with an error."""
        while True:
            self._new_rows()
            if self._pending:
                return self._pending.pop(0)
            code = self.proc.poll()
            if code is not None:
                self._new_rows()                # rows written just before it exited
                if self._pending:
                    return self._pending.pop(0)
                self._close_log()
                if code != 0:
                    raise TrialFailed(f"train.py exited with status {code}: "
                                      f"{last_line(self.log_path)} (log: {self.log_path})")
                final = read_json(self.run_dir / "eval.json")
                self.finished = True
                out = report_from(final, final=True)
                out["train_seconds"] = final.get("train_seconds")
                return out
            time.sleep(self.POLL_SECONDS)

    def stop(self, grace: float = 30.0) -> int | None:
        """End train.py if it is still running (SIGINT, then SIGKILL after `grace` s); returns
        its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_log()
        return self.proc.returncode

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


# Run a Python script (argv[1], its arguments after it) with SIGINT as Ctrl-C: unblocked and
# raising KeyboardInterrupt, whatever the parent left it as (see popen_interruptible)
_INTERRUPTIBLE = ("import runpy, signal, sys; "
                  "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); "
                  "signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def popen_interruptible(command: list[str], **kwargs) -> subprocess.Popen:
    """subprocess.Popen of `[python, script, args...]` whose script receives SIGINT as Ctrl-C.
    A child inherits both the parent's blocked signals and its ignored ones through exec: Ray's
    workers block SIGINT (measured: an ASHA-stopped trial trained on to its end), and a shell
    without job control starts background commands with SIGINT ignored (then Python installs no
    KeyboardInterrupt handler at all: a sweep started with `&` could not stop a trial). So the
    child's Python first unblocks SIGINT and installs the handler, then runs the script as
    `__main__` (its argv and __doc__ as if run directly)."""
    python, script, *args = command
    return subprocess.Popen([python, "-c", _INTERRUPTIBLE, script, *args], **kwargs)


def report_from(evaluation: dict, final: bool) -> dict:
    """A Tune result from an evaluation summary (a row of eval_history.jsonl, or eval.json)."""
    out = {TIME_ATTR: int(evaluation["timesteps"]), "eval_episodes": evaluation.get("episodes"),
           "final": int(final)}
    out.update({k: evaluation[k] for k in REPORTED_METRICS if k in evaluation})
    return out


def last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1] if lines else "(empty log)"


# -- the sweep under Tune ------------------------------------------------------------------------
def trainable_class():
    """The Tune trainable of a trial (a class, so that Tune's stop reaches `cleanup`, which ends
    train.py). Made here so that importing this module does not import Ray."""
    from ray import tune

    class TrainPyTrial(tune.Trainable):
        """A trial = one train.py run (TrainRun); each step reports its next evaluation."""

        def setup(self, config: dict, plan: dict):
            name = config["trial"]["name"]
            job = plan["trials"][name]
            sweep_dir = Path(plan["sweep_dir"])
            self.run = TrainRun(plan["train_script"], job["config"],
                                sweep_dir / "trial_configs" / f"{name}.yaml", name,
                                sweep_dir / "trials", sweep_dir / "logs" / f"{name}.log")
            self.run.start()

        def step(self) -> dict:
            result = self.run.next_report()
            if result["final"]:
                result["done"] = True
            return result

        def cleanup(self):
            self.run.stop()

    return TrainPyTrial


def recording_asha(settings: dict):
    """Tune's ASHAScheduler on timesteps, which also remembers the trials it stopped (Tune's
    results do not tell a trial ASHA stopped from one that was interrupted). Its metric and mode
    come from the TuneConfig (Tune refuses them in both places)."""
    from ray.tune.schedulers import ASHAScheduler, TrialScheduler

    class RecordingASHA(ASHAScheduler):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.stopped_trials: set[str] = set()

        def on_trial_result(self, tune_controller, trial, result):
            action = super().on_trial_result(tune_controller, trial, result)
            if action == TrialScheduler.STOP and not result.get("final"):
                self.stopped_trials.add(trial.config["trial"]["name"])
            return action

    return RecordingASHA(time_attr=TIME_ATTR, max_t=settings["max_t"],
                         grace_period=settings["grace_period"],
                         reduction_factor=settings["reduction_factor"])


def progress_callback(metric: str):
    """A Tune callback that says each trial's evaluations and end on stderr, one line each."""
    from ray import tune

    from .progress import say

    class SweepProgress(tune.Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            value = result.get(metric)
            what = "final evaluation" if result.get("final") else "evaluation"
            shown = f"{value:.3f}" if isinstance(value, (int, float)) else "n/a"
            say(f"{trial.config['trial']['name']}: {what} at {result.get(TIME_ATTR)} steps, "
                f"{metric} {shown}", file=sys.stderr)

        def on_trial_complete(self, iteration, trials, trial, **info):
            how = "finished" if (trial.last_result or {}).get("final") else "stopped early"
            say(f"{trial.config['trial']['name']}: {how}", file=sys.stderr)

        def on_trial_error(self, iteration, trials, trial, **info):
            say(f"{trial.config['trial']['name']}: error (its train.py log: logs/"
                f"{trial.config['trial']['name']}.log)", file=sys.stderr)

    return SweepProgress()


def run_sweep(sweep: SweepConfig, trials: list[Trial], sweep_dir: Path, train_script: Path,
              address: str | None, num_cpus: int | None, progress: bool) -> list[dict]:
    """Run the trials under Tune (Ray at `address`, or a local Ray of `num_cpus` CPUs when
    address is None; it is shut down at the end) and return each trial's record (trial_record),
    in trial order. Tune's own files go to sweep_dir/tune/<trial>/ (progress.csv, result.json,
    TensorBoard events of the reported metrics)."""
    import contextlib

    # Tune's console output: the legacy reporter, which verbose=0 silences (the new one still
    # prints its tables on stdout, where the sweep's table or JSON goes)
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"
    import ray
    from ray import tune
    started_here = not ray.is_initialized()
    if started_here:
        # "local": a new Ray on this machine even when RAY_ADDRESS is set or a `ray start`
        # cluster runs here (ray.init() would join that one, and refuse num_cpus)
        ray.init(address=address or "local", num_cpus=num_cpus if address is None else None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        settings = asha_settings(sweep, trials)
        scheduler = recording_asha(settings) if settings else None
        plan = {"sweep_dir": str(sweep_dir.resolve()), "train_script": str(train_script),
                "trials": {t.name: {"config": t.config.to_yaml()} for t in trials}}
        trainable = tune.with_resources(tune.with_parameters(trainable_class(), plan=plan),
                                        {"cpu": sweep.cpus_per_trial})
        tuner = tune.Tuner(
            trainable,
            param_space={"trial": tune.grid_search([{"name": t.name, "values": t.values}
                                                    for t in trials])},
            tune_config=tune.TuneConfig(
                metric=sweep.metric, mode=sweep.mode, scheduler=scheduler, num_samples=1,
                max_concurrent_trials=sweep.max_concurrent,
                trial_name_creator=lambda t: t.config["trial"]["name"],
                trial_dirname_creator=lambda t: t.config["trial"]["name"]),
            run_config=tune.RunConfig(
                name="tune", storage_path=str(sweep_dir.resolve()), verbose=0,
                callbacks=[progress_callback(sweep.metric)] if progress else None,
                checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=False)))
        with contextlib.redirect_stdout(sys.stderr):      # whatever Tune still prints
            grid = tuner.fit()
        stopped = scheduler.stopped_trials if scheduler is not None else set()
        by_name = {r.config["trial"]["name"]: r for r in grid if r.config}
        return [trial_record(t, by_name.get(t.name), t.name in stopped, sweep_dir)
                for t in trials]
    finally:
        if started_here:
            ray.shutdown()


# -- the outcome ---------------------------------------------------------------------------------
def error_line(error: BaseException) -> str:
    """A trial's error as one line: the original exception's message (Ray wraps it)."""
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}".strip()


def trial_record(trial: Trial, result, stopped_by_asha: bool, sweep_dir: Path) -> dict:
    """What sweep.json says about a trial: its values, status, last reported metrics, where its
    files are. `result` is its Tune Result (None if Tune has none)."""
    metrics = dict(result.metrics or {}) if result is not None else {}
    error = result.error if result is not None else None
    if error is not None:
        status = "error"
    elif metrics.get("final"):
        status = "finished"
    elif stopped_by_asha:
        status = "stopped_early"
    elif metrics.get(TIME_ATTR) is not None:
        status = "interrupted"
    else:
        status = "not_started"
    record = {"trial": trial.name, "values": trial.values, "status": status,
              "timesteps": metrics.get(TIME_ATTR), "final": bool(metrics.get("final")),
              "evaluations": metrics.get("training_iteration", 0)}
    record.update({k: metrics.get(k) for k in REPORTED_METRICS})
    record.update({
        "eval_episodes": metrics.get("eval_episodes"),
        "train_seconds": metrics.get("train_seconds"),
        "run_dir": f"trials/{trial.name}", "tune_dir": f"tune/{trial.name}",
        "log": f"logs/{trial.name}.log",
        "error": error_line(error) if error is not None else None})
    return record


def best_trial(records: list[dict], metric: str, mode: str) -> dict | None:
    """The best trial by its last `metric`: among the finished trials (their final evaluation),
    else among all that reported it; the first in trial order on a tie."""
    scored = [r for r in records if isinstance(r.get(metric), (int, float))]
    finished = [r for r in scored if r["status"] == "finished"]
    pool = finished or scored
    if not pool:
        return None
    sign = 1 if mode == "max" else -1
    return max(pool, key=lambda r: sign * r[metric])        # max keeps the first of equals


def sweep_summary(sweep: SweepConfig, source: str, sweep_dir: Path, records: list[dict],
                  settings: dict | None, wall_seconds: float) -> dict:
    """sweep.json's content."""
    best = best_trial(records, sweep.metric, sweep.mode)
    counts = {s: sum(r["status"] == s for r in records) for s in STATUSES}
    return {
        "name": sweep.name, "config": source, "sweep_dir": str(sweep_dir), "base": sweep.base,
        "metric": sweep.metric, "mode": sweep.mode, "scheduler": sweep.scheduler, "asha": settings,
        "num_samples": sweep.num_samples, "search_seed": sweep.search_seed,
        "space": sweep.to_yaml()["space"], "overrides": sweep.overrides,
        "cpus_per_trial": sweep.cpus_per_trial,
        "wall_seconds": round(wall_seconds, 1),
        "counts": {s: n for s, n in counts.items() if n},
        "best": None if best is None else {
            "trial": best["trial"], "values": best["values"], sweep.metric: best[sweep.metric],
            "timesteps": best["timesteps"], "status": best["status"], "run_dir": best["run_dir"]},
        "trials": records,
    }


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def _measure(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def format_table(summary: dict) -> str:
    """The trials, best first by the sweep's metric (those without it last, in trial order);
    `*` marks the best trial."""
    metric, mode = summary["metric"], summary["mode"]
    records = summary["trials"]
    keys = list(summary["space"])
    sign = -1 if mode == "max" else 1

    def order(r):
        value = r.get(metric)
        return (0, sign * value) if isinstance(value, (int, float)) else (1, 0)

    rows = sorted(records, key=order)              # stable: trial order among equals
    best = (summary.get("best") or {}).get("trial")
    measures = ["battle_win_rate", "mean_wins", "clear_rate"]
    if metric not in measures:
        measures.append(metric)
    header = ["trial", "status", *keys, "timesteps", *measures]
    table = [header]
    for r in rows:
        mark = " *" if r["trial"] == best else ""
        table.append([r["trial"] + mark, r["status"], *(_shown(r["values"].get(k)) for k in keys),
                      _shown(r["timesteps"]), *(_measure(r.get(k)) for k in measures)])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    if best is not None:
        b = summary["best"]
        lines.append(f"best: {best} ({metric} {_measure(b[metric])} at {b['timesteps']} steps, "
                     f"{b['status']}): {Path(summary['sweep_dir']) / b['run_dir']}")
    else:
        lines.append(f"best: none (no trial reported {metric})")
    lines += [f"{r['trial']}: {r['error']}" for r in records if r.get("error")]
    return "\n".join(lines)
