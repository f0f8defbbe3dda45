"""The benchmark's measurements (scripts/benchmark.py is its command line; its docstring says
what each figure is and how it is timed).

- `BenchOptions`: what to measure, how long (the script's options, typed; the training config
  read into train.py's `TrainConfig`).
- Measurements are functions decorated with `@measurement`: each gets the shared `Context`
  (options, rules, pairs, notes passed between measurements) and returns `Row`s; they run in the
  order they are defined. `run(options)` runs them all on one pinned core and returns the
  report; `to_json` and `format_table` print it.

It lives in agents/ rather than rune_env/ because the training measurement needs the layers
above the envs (agents.train.masking's policy, agents.train.train_config's TrainConfig); the engine and env
measurements would fit in rune_env, but one home keeps the rows in one registry.
"""
from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rune_env.battle import battle
from rune_env.rules import Board, Rules, default_rules, load_rules
from rune_env.rules.sampling import standard_pairs

from agents.cli.provenance import REPO

if TYPE_CHECKING:
    from agents.train.train_config import TrainConfig

ENV_PASSES = 5    # the timed env steps are split into this many passes


@dataclass(frozen=True)
class BenchOptions:
    """What the benchmark measures (scripts/benchmark.py's options)."""
    pairs: int                    # standard_pairs(pairs, seed)
    seed: int
    rules: str | None             # a rules file; None: the default rules
    reference_passes: int         # timed passes of the reference engine
    fast_repeats: int             # at least this many timed passes of the fast engine
    fast_seconds: float           # ... and more until they have taken this long
    env_steps: int                # timed env steps (0: skip)
    train_steps: int              # timed MaskablePPO steps per env kind (0: skip)
    train_config: "TrainConfig | None" = None   # the training config (None: no training rows)


@dataclass
class Row:
    key: str            # the JSON key
    label: str          # the table's first column
    value: float
    unit: str = ""
    fmt: str = "{:.1f}"


@dataclass
class Context:
    options: BenchOptions
    rules: Rules
    pairs: list[tuple[Board, Board]]
    notes: dict[str, Any] = field(default_factory=dict)


MEASUREMENTS: list[Callable[[Context], list[Row]]] = []


def measurement(fn: Callable[[Context], list[Row]]) -> Callable[[Context], list[Row]]:
    """Register a measurement; they run in the order they are defined."""
    MEASUREMENTS.append(fn)
    return fn


# -- measurements ------------------------------------------------------------------------------

def _timed_passes(play, repeats: int, min_seconds: float = 0.0) -> list[float]:
    """Seconds of each pass of play(): `repeats` passes, then more until the passes have taken
    `min_seconds` in all. (A pass of the fast engine over the standard set takes about 20 ms:
    twenty of them fit in a third of a second, inside one slow phase of the shared machine,
    which lasts seconds; passes spread over seconds give its best pass a fair chance.)"""
    times = []
    while len(times) < repeats or sum(times) < min_seconds:
        t0 = time.perf_counter()
        play()
        times.append(time.perf_counter() - t0)
    return times


def _rates(n: int, times: list[float]) -> tuple[float, float]:
    """(best, median) per-second rates of passes of n items each (battles, steps). The best pass
    is the figure: this machine is shared and its speed swings by up to 1.7x between runs a
    second apart, and interference only ever slows a pass down, so the fastest pass is the
    closest to the code's own cost (timeit's reasoning); the median shows the spread."""
    return n / min(times), n / statistics.median(times)


@measurement
def reference_engine(ctx: Context) -> list[Row]:
    rules, pairs = ctx.rules, ctx.pairs
    for a, b in pairs[:min(10, len(pairs))]:      # warm-up, not timed
        battle(a, b, rules)
    results: list = []

    def play():
        results[:] = [battle(a, b, rules) for a, b in pairs]

    best, median = _rates(len(pairs), _timed_passes(play, ctx.options.reference_passes))
    ctx.notes["reference_battles_per_s"] = best
    return [
        Row("reference_battles_per_s",
            f"reference engine (best of {ctx.options.reference_passes} passes)", best, "battles/s"),
        Row("reference_battles_per_s_median", "... median pass", median, "battles/s"),
        Row("median_duration", "median battle duration",
            float(statistics.median(r.time for r in results)), "s", "{:.3f}"),
        Row("median_casts", "median casts (both sides)",
            float(statistics.median(sum(r.casts) for r in results)), "casts", "{:.1f}"),
    ]


@measurement
def fast_engine(ctx: Context) -> list[Row]:
    """The compiled engine (rune_env.battle.fast) on the same pairs: one thread on the pinned core
    (board encoding included: every pass encodes every board), then batched over every core the
    OS allows. Compilation is loaded from the disk cache (or done) before timing and reported on
    its own. Each figure is the best of its passes (see `_rates`; at least --fast-repeats, more
    until --fast-seconds), the median beside."""
    from rune_env.battle.fast import fast_battles, warm_up
    t0 = time.perf_counter()
    warm_up(ctx.rules)
    compile_s = time.perf_counter() - t0
    pairs = ctx.pairs
    repeats, seconds = ctx.options.fast_repeats, ctx.options.fast_seconds
    times = _timed_passes(lambda: fast_battles(pairs, ctx.rules, workers=1), repeats, seconds)
    best, median = _rates(len(pairs), times)
    rows = [Row("fast_compile_s", "fast engine first call (compile or cache load)", compile_s, "s",
                "{:.2f}"),
            Row("fast_battles_per_s", f"fast engine, one core (best of {len(times)} passes)",
                best, "battles/s"),
            Row("fast_battles_per_s_median", "... median pass", median, "battles/s")]
    if "reference_battles_per_s" in ctx.notes:
        rows.append(Row("fast_speedup", "fast / reference, one core (best passes)",
                        best / ctx.notes["reference_battles_per_s"], "x"))
    if hasattr(os, "sched_setaffinity"):       # let the batch use every core
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    times = _timed_passes(lambda: fast_battles(pairs, ctx.rules), repeats, seconds)
    best, median = _rates(len(pairs), times)
    if ctx.notes.get("pinned") is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {ctx.notes["pinned"]})
    rows += [Row("batch_battles_per_s",
                 f"fast engine batched, {os.cpu_count()} cores (best of {len(times)})", best,
                 "battles/s"),
             Row("batch_battles_per_s_median", "... median pass", median, "battles/s")]
    return rows



@measurement
def env_steps(ctx: Context) -> list[Row]:
    """RuneRun-v0 with a uniformly random masked policy, battles included, default opponents
    (the rank's shipped pool, else the budget drafter with its opponent bank). A warm-up of as
    many untimed steps first fills the bank for the rounds a random policy reaches; the timed
    steps run in ENV_PASSES passes (one continuing episode stream), best and median pass
    reported as for the engines (`_rates`)."""
    import numpy as np

    from rune_env.envs.run_env import RuneRunEnv
    n = ctx.options.env_steps
    if n <= 0:
        return []
    env = RuneRunEnv(rules=ctx.rules)
    rng = np.random.default_rng(ctx.options.seed)
    obs, info = env.reset(seed=ctx.options.seed)

    def steps(count: int) -> None:
        nonlocal obs, info
        for _ in range(count):
            legal = np.flatnonzero(info["action_mask"])
            obs, _, term, trunc, info = env.step(int(legal[int(rng.integers(len(legal)))]))
            if term or trunc:
                obs, info = env.reset()

    return _stepping_rows("env_steps_per_s", "env steps, random masked policy", steps, n)


def _stepping_rows(key: str, label: str, steps, n: int) -> list[Row]:
    """`steps(count)` warmed up with n untimed steps, then timed in ENV_PASSES passes of
    n / ENV_PASSES: the best pass and the median (`_rates`)."""
    steps(n)                      # warm-up
    per_pass = max(1, n // ENV_PASSES)
    best, median = _rates(per_pass, _timed_passes(lambda: steps(per_pass), ENV_PASSES))
    return [Row(key, f"{label} (best of {ENV_PASSES} passes of {per_pass})", best, "steps/s"),
            Row(key + "_median", "... median pass", median, "steps/s")]


@measurement
def duel_steps(ctx: Context) -> list[Row]:
    """RuneDuel (the Parallel API) with a uniformly random masked action for each player, both
    observations built every step, battles included; as many steps as env_steps, in the same
    passes (`_rates`) after a warm-up of as many untimed steps."""
    import numpy as np

    from rune_env.duel import RuneDuelEnv
    n = ctx.options.env_steps
    if n <= 0:
        return []
    env = RuneDuelEnv(rules=ctx.rules)
    rng = np.random.default_rng(ctx.options.seed)
    obs, _ = env.reset(seed=ctx.options.seed)

    def steps(count: int) -> None:
        nonlocal obs
        for _ in range(count):
            actions = {}
            for agent in env.agents:
                legal = np.flatnonzero(obs[agent]["action_mask"])
                actions[agent] = int(legal[int(rng.integers(len(legal)))])
            obs, _, _, _, _ = env.step(actions)
            if not env.agents:
                obs, _ = env.reset()

    return _stepping_rows("duel_steps_per_s", "duel steps (two players), random masked policy",
                          steps, n)


@measurement
def training(ctx: Context) -> list[Row]:
    """MaskablePPO training frames/s on RuneRun-v0 and on a stub with the same spaces that does
    no game work (`rune_env.envs.stub`; episodes as long as RuneRun-v0's mean in its warm-up,
    its constant observation RuneRun-v0's first), with the same n_envs, hyperparameters and
    masked distribution (those of --train-config, as scripts/train.py reads them; `masking: fast`
    unless the config says sb3; vectorised in this process (DummyVecEnv) on the pinned core, one
    torch thread).

    Both models are built and warmed up (two untimed rollouts and updates each), then trained
    in alternating chunks of one rollout (n_steps x n_envs steps) in the order real, stub, stub,
    real, ..., until each has done --train-steps timed steps; each figure is its steps over its
    summed time. The machine's speed drifts within a minute: alternating chunks a few seconds
    long gives both envs the same machine, which measuring one after the other did not (the
    ratio then moved between 0.67 and 0.91 with the code unchanged)."""
    n = ctx.options.train_steps
    if n <= 0:
        return []
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import rune_env  # noqa: F401 - registers the envs
    from rune_env.envs.stub import StubRunEnv

    cfg = ctx.options.train_config
    torch.set_num_threads(1)
    from agents.train.config import sb3_policy_kwargs
    from agents.train.masking import policy_class
    masking = cfg.masking
    policy = policy_class(cfg.policy, masking)
    # a config that leaves n_envs out is measured on one env, as the benchmark always did
    # (train.py would train it on TrainConfig's default, 2)
    n_envs = cfg.n_envs if "n_envs" in cfg.model_fields_set else 1
    env_kwargs = dict(cfg.env_kwargs)
    env_kwargs.pop("opponents", None)     # the rank's default opponents, as env_steps uses
    env_kwargs["rules"] = ctx.rules
    env_id = cfg.env_id

    def model_on(make_env):
        venv = DummyVecEnv([lambda i=i: Monitor(make_env(i)) for i in range(n_envs)])
        venv.seed(ctx.options.seed)
        model = MaskablePPO(policy, venv, seed=ctx.options.seed, verbose=0,
                            device="cpu", policy_kwargs=sb3_policy_kwargs(cfg.policy_kwargs),
                            **cfg.ppo.kwargs())
        # a logger that writes nothing: without one, every learn() makes an empty SB3-<time>
        # folder in the temp directory (stable-baselines3's default log folder)
        model.set_logger(Logger(folder=None, output_formats=[]))
        model.learn(total_timesteps=2 * model.n_steps * n_envs)    # untimed warm-up
        return model, venv

    real, real_venv = model_on(lambda i: gym.make(env_id, **env_kwargs))
    lengths = [len_ for e in real_venv.envs for len_ in e.get_episode_lengths()]
    mean_len = max(1, round(sum(lengths) / len(lengths))) if lengths else 100
    probe = gym.make(env_id, **env_kwargs)
    spaces = (probe.observation_space, probe.action_space)
    first_obs, _ = probe.reset(seed=ctx.options.seed)    # the stub's constant observation
    steps = probe.spec.max_episode_steps     # the TimeLimit of the env's own rules
    probe.close()

    # the stub goes through gym.make too, so both envs have the same wrappers (the env checker,
    # order enforcing, the time limit) and differ only in the game's work
    stub_id = "rune_env/RuneRunStub-v0"
    if stub_id not in gym.registry:
        gym.register(id=stub_id, entry_point=StubRunEnv, max_episode_steps=steps)
    stub, stub_venv = model_on(lambda i: gym.make(
        stub_id, observation_space=spaces[0], action_space=spaces[1], episode_length=mean_len,
        observation=first_obs))

    real_fps, stub_fps = _alternate(real, stub, n, real.n_steps * n_envs)
    real_venv.close()
    stub_venv.close()
    return [Row("train_fps", f"MaskablePPO on RuneRun-v0 ({n_envs} envs, one core, "
                f"masking {masking})", real_fps, "steps/s"),
            Row("train_fps_stub", f"... on a stub env (episodes of {mean_len} steps)", stub_fps,
                "steps/s"),
            Row("train_fps_ratio", "RuneRun-v0 / stub (alternating chunks)", real_fps / stub_fps,
                "", "{:.2f}")]


def _alternate(real, stub, n: int, chunk: int) -> tuple[float, float]:
    """Train the two models in alternating chunks of `chunk` steps (real, stub, stub, real, ...)
    until each has done `n`; each one's steps per second of its own summed time."""
    # as scripts/train.py does before learning: what exists now lives to the end, frozen out of
    # the garbage collector's generations (else a full collection, about 0.2 s, lands in one
    # env's chunks or the other's by chance)
    gc.collect()
    gc.freeze()
    done = {id(real): 0, id(stub): 0}
    spent = {id(real): 0.0, id(stub): 0.0}
    order = (real, stub, stub, real)
    i = 0
    while min(done.values()) < n:
        model = order[i % 4]
        i += 1
        if done[id(model)] >= n:
            continue
        before = model.num_timesteps
        t0 = time.perf_counter()
        model.learn(total_timesteps=chunk, reset_num_timesteps=False)
        spent[id(model)] += time.perf_counter() - t0
        done[id(model)] += model.num_timesteps - before
    return done[id(real)] / spent[id(real)], done[id(stub)] / spent[id(stub)]


# -- machine and versions --------------------------------------------------------------------

def pin_to_one_core() -> int | None:
    """Pin this process to one CPU (Linux); returns the CPU or None where not possible."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return cpu
    except OSError:
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(pinned: int | None) -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "pinned_cpu": pinned,
        "platform": platform.platform(),
        "python": platform.python_implementation() + " " + platform.python_version(),
    }


def _version(dist: str) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def project_version() -> str | None:
    try:
        import tomllib
        return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    except Exception:  # noqa: BLE001 - informative only
        return _version("rune-env")


def git_commit() -> str | None:
    """The short commit, with "+dirty" if tracked files differ from it (a figure measured on
    uncommitted code must say so)."""
    import subprocess
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    if not commit:
        return None
    return commit + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def versions(rules: Rules) -> dict[str, Any]:
    return {
        "rune_env": project_version(),
        "git": git_commit(),
        "rules_hash": rules.hash,
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "pydantic": _version("pydantic"),
        "pyyaml": _version("PyYAML"),
        "numba": _version("numba"),
    }


# -- main ------------------------------------------------------------------------------------------

def run(options: BenchOptions) -> dict[str, Any]:
    """Every measurement, in order, on one pinned core; the report (rows, pairs, seed, machine,
    versions) that `to_json` and `format_table` print."""
    pinned = pin_to_one_core()
    rules = load_rules(options.rules) if options.rules else default_rules()
    pairs = standard_pairs(options.pairs, options.seed, rules)
    ctx = Context(options=options, rules=rules, pairs=pairs)
    ctx.notes["pinned"] = pinned
    rows: list[Row] = []
    for fn in MEASUREMENTS:
        rows.extend(fn(ctx))
    return {"rows": rows, "pairs": len(pairs), "seed": options.seed,
            "machine": machine_info(pinned), "versions": versions(rules)}


def to_json(report: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {row.key: row.value for row in report["rows"]}
    out.update(pairs=report["pairs"], seed=report["seed"], machine=report["machine"],
               versions=report["versions"])
    return out


def format_table(report: dict[str, Any]) -> str:
    rows = report["rows"]
    width = max(len(r.label) for r in rows)
    lines = [f"standard_pairs({report['pairs']}, {report['seed']}) on one core "
             f"({report['machine']['cpu']}; pinned cpu {report['machine']['pinned_cpu']})"]
    lines.append(f"{'measure':<{width}}  {'value':>12}  unit")
    for r in rows:
        lines.append(f"{r.label:<{width}}  {r.fmt.format(r.value):>12}  {r.unit}")
    v = report["versions"]
    lines.append(f"rune_env {v['rune_env']} ({v['git']}), rules {v['rules_hash']}, "
                 f"python {v['python']}, numpy {v['numpy']}")
    return "\n".join(lines)
