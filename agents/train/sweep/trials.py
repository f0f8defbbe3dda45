"""The trials of a sweep: `draw_values` (the space's values of every trial: the grid's product,
repeated num_samples times, the random kinds drawn from search_seed, so the same YAML gives the
same trials), `plan_trials` (each trial's train config resolved and validated, before Ray
starts), `asha_settings`."""
from __future__ import annotations

import copy
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from ..config import ConfigError
from ..train_config import TrainConfig, check_env, read_config, validate_config

from .config import Dimension, MAX_TRIALS, SweepConfig, get_path, set_path


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

    from ..ppo import make_env_fn, new_model
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
