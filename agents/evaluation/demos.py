"""Demonstrations: an agent's observations, legal masks and actions over whole runs of RuneRun-v0,
for behaviour cloning (agents/train/pretrain.py) and scripts/collect_demos.py.

A demonstration file is a zip of .npy arrays (numpy's .npz; data, never a pickle: each member's
.npy header is read and checked, dtype, shape and size against the member's bytes, before its data
is, so an object array or a header claiming more than the file holds is refused unread) written
byte for byte the same for the same agent, seed and runs (fixed zip timestamps) and atomically (a
temp file in the same folder, then renamed):

- `obs` (steps, obs_size) float32 in [0, 1]: the flat observation the agent saw, as MlpPolicy receives it;
- `masks` (steps, ceil(actions / 8)) uint8: the legal actions, bits packed (np.packbits);
- `actions` (steps,) int32: the action taken, legal under its mask;
- `rewards` (steps,) float32: the env's reward for that step (for Monte-Carlo returns);
- `run_seeds` (steps,) int64: the run seed of the step's run, a training one (`demo_run_seed`;
  a run's steps are contiguous);
- `meta` (bytes,) uint8: UTF-8 JSON: format, agent, seed, runs, rules_hash, commit, obs_size,
  actions, steps and the env's options.

Runs are played on training run seeds (`demo_run_seed`: below the env's TRAINING_SEED_LIMIT,
where evaluations never play), so a policy cloned from demonstrations is never evaluated on a run
it was shown. Each run depends only on its run seed (the agent is reset with it), so runs may be
played in several processes (`jobs`) with the same result.
"""
from __future__ import annotations

import io
import json
import math
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rune_env.envs.run_env import TRAINING_SEED_LIMIT
from rune_env.files import load_json, shown, write_bytes_atomic

from .runs import EVAL_SEED_STRIDE, play_run

FORMAT = 1
KEYS = {"obs": np.float32, "masks": np.uint8, "actions": np.int32, "rewards": np.float32,
        "run_seeds": np.int64, "meta": np.uint8}
MAX_DEMO_BYTES = 2**31         # the arrays' size once unpacked: a larger file is refused unread
MAX_META_BYTES = 2**20         # meta's JSON (a few hundred bytes as written)
_NDIM = {"obs": 2, "masks": 2, "actions": 1, "rewards": 1, "run_seeds": 1, "meta": 1}
META_KEYS = ("format", "agent", "seed", "runs", "rules_hash", "obs_size", "actions", "steps")
RUNS_PER_TASK = 4
# With an actor (DAgger): the meta key of the steps on which the actor took the labelled action,
# the learner's agreement with its expert on its own states (training accuracy, on the expert's
# states, does not show it: docs/RESULTS.md, "How clonable is the planner")
AGREED = "agreed"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)   # every member's timestamp: the same bytes for the same arrays


class DemosError(ValueError):
    """A demonstrations file that cannot be used; the message is one line naming the file."""


def demo_run_seed(seed: int, run: int) -> int:
    """The run seed of demonstration run `run` under seed `seed`: a training run seed (below
    TRAINING_SEED_LIMIT), so never one an evaluation plays."""
    return (seed * EVAL_SEED_STRIDE + run) % TRAINING_SEED_LIMIT


@dataclass
class Demos:
    obs: np.ndarray
    masks: np.ndarray          # packed bits
    actions: np.ndarray
    rewards: np.ndarray
    run_seeds: np.ndarray
    meta: dict

    def __len__(self) -> int:
        return len(self.actions)

    def legal(self) -> np.ndarray:
        """The masks as (steps, actions) booleans."""
        n = int(self.meta["actions"])
        return np.unpackbits(self.masks, axis=1, count=n).astype(bool)

    def returns(self, gamma: float) -> np.ndarray:
        """Each step's discounted return to the end of its run (float32)."""
        out = np.zeros(len(self), np.float32)
        acc = 0.0
        for i in range(len(self) - 1, -1, -1):
            if i == len(self) - 1 or self.run_seeds[i + 1] != self.run_seeds[i]:
                acc = 0.0
            acc = float(self.rewards[i]) + gamma * acc
            out[i] = acc
        return out

    def select(self, keep: np.ndarray) -> "Demos":
        """The steps where the boolean array `keep` is true (the metadata of these, with the
        counts)."""
        keep = np.asarray(keep, dtype=bool)
        meta = {**self.meta, "steps": int(keep.sum()),
                "runs": len(np.unique(self.run_seeds[keep]))}
        return Demos(*(getattr(self, k)[keep]
                       for k in ("obs", "masks", "actions", "rewards", "run_seeds")), meta)

    def extend(self, other: "Demos") -> "Demos":
        """These demonstrations followed by `other`'s (the metadata of these, with the counts)."""
        meta = {**self.meta, "steps": len(self) + len(other),
                "runs": int(self.meta["runs"]) + int(other.meta["runs"])}
        return Demos(*(np.concatenate([getattr(self, k), getattr(other, k)])
                       for k in ("obs", "masks", "actions", "rewards", "run_seeds")), meta)


class _Recorder:
    """An agent that records what `agent` saw and did; with an `actor`, the actor's action is
    played and `agent`'s is recorded (DAgger: the expert labels the states the actor visits)."""

    def __init__(self, agent, record: dict, actor=None):
        self.agent, self.record, self.actor = agent, record, actor
        self.needs_state = getattr(agent, "needs_state", False) or getattr(actor, "needs_state", False)
        self.agreed = 0     # with an actor: the steps on which it took the action `agent` labels

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)
        if self.actor is not None:
            self.actor.reset(seed)

    def act(self, observation, action_mask, state=None) -> int:
        action = int(self.agent.act(observation, action_mask, state=state))
        self.record["obs"].append(np.asarray(observation, np.float32).reshape(-1))
        self.record["masks"].append(np.packbits(np.asarray(action_mask, bool)))
        self.record["actions"].append(action)
        if self.actor is None:
            return action
        played = int(self.actor.act(observation, action_mask, state=state))
        self.agreed += played == action
        return played


def play_demos(agent_name: str, env_kwargs: dict, seed: int, start: int, count: int,
               actor: str | None = None) -> dict:
    """Runs start..start+count-1 of seed `seed` played by `agent_name` (a task: names and
    numbers in, arrays out), as arrays keyed as a file's (without meta); with `actor` (a name
    make_agent knows, e.g. a policy file), played by the actor and labelled by `agent_name`."""
    from agents import make_agent
    from rune_env.envs.run_env import RuneRunEnv
    env = RuneRunEnv(**env_kwargs)
    if env.obs_mode != "flat":
        raise ValueError("demonstrations record flat observations (obs_mode 'flat')")
    agent = make_agent(agent_name, env.rules, seed=seed)
    parts: dict[str, list] = {k: [] for k in KEYS if k != "meta"}
    agreed = 0
    for i in range(start, start + count):
        record: dict[str, list] = {"obs": [], "masks": [], "actions": []}
        run_seed = demo_run_seed(seed, i)
        acting = None if actor is None else make_agent(actor, env.rules, seed=seed)
        recorder = _Recorder(agent, record, acting)
        rewards = _play_recorded(env, recorder, run_seed)
        agreed += recorder.agreed
        for k, v in record.items():
            parts[k].extend(v)
        parts["rewards"].extend(rewards)
        parts["run_seeds"].extend([run_seed] * len(record["actions"]))
    out = {k: np.asarray(v, KEYS[k]).reshape((len(v), -1) if k in ("obs", "masks") else (-1,))
           for k, v in parts.items()}
    return {**out, AGREED: agreed} if actor is not None else out


def _play_recorded(env, recorder: _Recorder, run_seed: int) -> list[float]:
    """play_run's run, with each step's reward (the env's, as PPO sees it)."""
    rewards: list[float] = []
    step = env.step

    def stepping(action):
        out = step(action)
        rewards.append(float(out[1]))
        return out
    env.step = stepping
    try:
        play_run(env, recorder, run_seed)
    finally:
        del env.step
    return rewards


def collect_demos(agent_name: str, runs: int, seed: int, env_kwargs: dict | None = None,
                  jobs: int = 1, progress=None, start: int = 0, actor: str | None = None) -> Demos:
    """`runs` runs of `agent_name` (any name make_agent knows) on `demo_run_seed(seed, i)` for i
    from `start`, in `jobs` processes (the same arrays for any number); with `actor`, the actor
    plays and `agent_name` labels (`play_demos`). `progress` gets .update(runs done)."""
    from agents.cli.provenance import git_commit
    from rune_env.envs.run_env import resolve_rules
    env_kwargs = dict(env_kwargs or {})
    tasks = [(agent_name, env_kwargs, seed, start + s, min(RUNS_PER_TASK, runs - s), actor)
             for s in range(0, runs, RUNS_PER_TASK)]
    if jobs <= 1 or len(tasks) == 1:
        chunks = []
        for t in tasks:
            chunks.append(play_demos(*t))
            if progress is not None:
                progress.update(t[4])
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)),
                                 mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(play_demos, *t) for t in tasks]
            chunks = []
            for t, f in zip(tasks, futures):
                chunks.append(f.result())
                if progress is not None:
                    progress.update(t[4])
    arrays = {k: np.concatenate([c[k] for c in chunks]) for k in KEYS if k != "meta"}
    rules = resolve_rules(env_kwargs.get("rules"), env_kwargs.get("rules_overrides"))
    from rune_env.run.actions import action_table
    meta = {"format": FORMAT, "agent": agent_name, "seed": seed, "runs": runs,
            "rules_hash": rules.hash, "commit": git_commit(), "obs_size": int(arrays["obs"].shape[1]),
            "actions": len(action_table(rules)), "steps": int(len(arrays["actions"])), "start": start,
            "actor": actor,
            **({AGREED: int(sum(c[AGREED] for c in chunks))} if actor is not None else {}),
            "env_kwargs": {k: v for k, v in env_kwargs.items()
                           if isinstance(v, (str, int, float, bool, type(None)))}}
    return Demos(meta=meta, **arrays)


# -- the file ------------------------------------------------------------------------------------
def save_demos(demos: Demos, path: str | Path) -> None:
    """Write `demos` to `path` (.npz), atomically (`rune_env.files.write_bytes_atomic`) and the
    same bytes for the same arrays."""
    arrays = {k: getattr(demos, k) for k in KEYS if k != "meta"}
    arrays["meta"] = np.frombuffer(json.dumps(demos.meta, sort_keys=True).encode(), np.uint8)
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as z:
        for k, a in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(a, KEYS[k]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{k}.npy", date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())
    write_bytes_atomic(Path(path), data.getvalue())


def load_demos(path: str | Path, rules_hash: str | None = None, strict: bool = False,
               env_kwargs: dict | None = None) -> Demos:
    """The demonstrations of `path`, checked (keys, dtypes, shapes, metadata, every action legal
    under its mask), else a DemosError naming the file. Made under other rules than `rules_hash`:
    a warning, or with `strict` a DemosError. With `env_kwargs` (the RuneRun-v0 options they
    are to be used with), their observation size and action count must be that env's: checked
    from the metadata before the arrays are read, so a file made for another env is one line
    here, not a shape error inside torch (or masks unpacked to the file's own claimed width)."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise DemosError(f"{where}: no such file")
    try:
        with zipfile.ZipFile(path) as z:
            members = {i.filename: i for i in z.infolist()}
            missing = [f"{k}.npy" for k in KEYS if f"{k}.npy" not in members]
            if missing:
                raise DemosError(f"{where}: not a demonstrations file (missing {', '.join(missing)})")
            if sum(i.file_size for i in members.values()) > MAX_DEMO_BYTES:
                raise DemosError(f"{where}: larger than {MAX_DEMO_BYTES} bytes unpacked")
            encrypted = [k for k in KEYS if members[f"{k}.npy"].flag_bits & 0x1]
            if encrypted:
                raise DemosError(f"{where}: {encrypted[0]}.npy is encrypted (demonstrations are "
                                 f"a plain .npz)")
            meta = _meta(_read_member(z, members["meta.npy"], "meta", where), where)
            if env_kwargs is not None:
                check_fits(meta, env_kwargs, where)
            arrays = {k: _read_member(z, members[f"{k}.npy"], k, where) for k in KEYS if k != "meta"}
    except DemosError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise DemosError(f"{where}: not a demonstrations file ({' '.join(str(exc).split())})") from None
    demos = Demos(meta=meta, **arrays)
    _check(demos, where)
    if rules_hash is not None and meta["rules_hash"] != rules_hash:
        message = (f"{where}: demonstrations made under rules {meta['rules_hash']}, not these "
                   f"rules ({rules_hash})")
        if strict:
            raise DemosError(message)
        warnings.warn(message, stacklevel=2)
    return demos


def env_sizes(env_kwargs: dict) -> tuple[int, int]:
    """(flat observation size, action count) of RuneRun-v0 under `env_kwargs`."""
    from rune_env.envs.run_env import RuneRunEnv
    env = RuneRunEnv(**{**env_kwargs, "obs_mode": "flat"})
    try:
        return int(np.prod(env.observation_space.shape)), int(env.action_space.n)
    finally:
        env.close()


def check_fits(meta: dict, env_kwargs: dict, where: str) -> None:
    """DemosError unless demonstrations of metadata `meta` were recorded on an env with the
    observation size and action count of RuneRun-v0 under `env_kwargs` (a policy learns from
    them with that env's network: another size cannot be fitted, and masks of another width
    mean other actions)."""
    obs_size, actions = env_sizes(env_kwargs)
    if (meta["obs_size"], meta["actions"]) != (obs_size, actions):
        raise DemosError(f"{where}: recorded on an env of {meta['obs_size']} observation values "
                         f"and {meta['actions']} actions; this one has {obs_size} and {actions} "
                         f"(demonstrations of other rules or env options)")


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, where: str) -> np.ndarray:
    """Member `key`.npy as an array, its .npy header read and checked first (never a pickle): the
    dtype and the number of dimensions the format's, the size the header claims exactly the bytes
    the member holds (and `meta` at most MAX_META_BYTES), so nothing is allocated from a claim
    the file cannot back (a header saying (10**11, 1031) is refused unread)."""
    name = info.filename
    fmt = np.lib.format
    with z.open(info) as f:
        try:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"an .npy format version {version[0]}.{version[1]}; this code "
                                 f"reads 1.0 and 2.0")
        except (ValueError, SyntaxError, TypeError, EOFError) as exc:
            raise DemosError(f"{where}: {name}: not an .npy array "
                             f"({' '.join(str(exc).split())[:200]})") from None
        want = np.dtype(KEYS[key])
        if dtype != want:
            raise DemosError(f"{where}: {name}: not a demonstrations file ({key} must be "
                             f"{want.name}, {want.str}; got {dtype.str})")
        if len(shape) != _NDIM[key] or not all(type(n) is int and n >= 0 for n in shape):
            raise DemosError(f"{where}: {name}: shape {_shape(shape)}, expected "
                             f"{_NDIM[key]} dimension{'s' if _NDIM[key] > 1 else ''} of sizes "
                             f">= 0")
        count = math.prod(shape)
        nbytes = count * want.itemsize
        held = info.file_size - f.tell()
        if nbytes != held:
            raise DemosError(f"{where}: {name}: the header claims shape {_shape(shape)} "
                             f"({nbytes:,} bytes), the member holds {max(held, 0):,} bytes of data")
        if key == "meta" and nbytes > MAX_META_BYTES:
            raise DemosError(f"{where}: {name}: {nbytes:,} bytes of metadata (at most "
                             f"{MAX_META_BYTES:,})")
        out = np.empty(count, want)
        view = memoryview(out).cast("B") if nbytes else memoryview(b"")
        got = 0
        while got < nbytes:
            chunk = f.read(min(1 << 24, nbytes - got))
            if not chunk:
                raise DemosError(f"{where}: {name}: truncated ({got:,} of {nbytes:,} bytes)")
            view[got:got + len(chunk)] = chunk
            got += len(chunk)
        f.read(1)           # the end of the member: zipfile checks its CRC there
    return out.reshape(shape, order="F" if fortran else "C")


def _shape(shape: Any) -> str:
    return shown(tuple(shape) if isinstance(shape, (tuple, list)) else shape, 60)


def _meta(raw: np.ndarray, where: str) -> dict[str, Any]:
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise DemosError(f"{where}: meta.npy: meta must be a 1-d uint8 array of JSON")
    try:
        text = raw.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        raise DemosError(f"{where}: meta.npy: not UTF-8 JSON") from None
    # bounded: nesting, values, integer digits, finite numbers (a meta nested 100,000 deep is
    # one line, not a RecursionError)
    meta = load_json(text, f"{where}: meta.npy", DemosError)
    if not isinstance(meta, dict) or (missing := [k for k in META_KEYS if k not in meta]):
        lacks = ", ".join(missing) if isinstance(meta, dict) else "a mapping"
        raise DemosError(f"{where}: meta.npy: meta lacks {lacks}")
    if meta["format"] != FORMAT or type(meta["format"]) is not int:
        raise DemosError(f"{where}: meta.npy: format {shown(meta['format'], 40)}, this code reads "
                         f"{FORMAT}")
    if not isinstance(meta["agent"], str):
        raise DemosError(f"{where}: meta.npy: meta agent must be the agent's name (text)")
    for k in ("obs_size", "actions", "steps", "runs"):
        if not isinstance(meta[k], int) or isinstance(meta[k], bool) or meta[k] < 0:
            raise DemosError(f"{where}: meta.npy: meta {k} must be a whole number >= 0; got "
                             f"{meta[k]!r}")
    if not isinstance(meta["rules_hash"], str):
        raise DemosError(f"{where}: meta.npy: meta rules_hash must be text")
    return meta


def _check(d: Demos, where: str) -> None:
    n, size, actions = d.meta["steps"], d.meta["obs_size"], d.meta["actions"]
    shapes = {"obs": (n, size), "masks": (n, (actions + 7) // 8), "actions": (n,),
              "rewards": (n,), "run_seeds": (n,)}
    for k, shape in shapes.items():
        a = getattr(d, k)
        if a.dtype != KEYS[k]:
            raise DemosError(f"{where}: {k}.npy: {k} must be {np.dtype(KEYS[k]).name}; got "
                             f"{a.dtype.name}")
        if a.shape != shape:
            raise DemosError(f"{where}: {k}.npy: {k} has shape {_shape(a.shape)}, the metadata "
                             f"says {_shape(shape)}")
    if n == 0:
        raise DemosError(f"{where}: no steps")
    if not np.isfinite(d.rewards).all():
        raise DemosError(f"{where}: rewards.npy: rewards must be finite")
    outside = ~((d.obs >= 0.0) & (d.obs <= 1.0))      # NaN too
    if outside.any():
        step, col = (int(i) for i in np.argwhere(outside)[0])
        raise DemosError(f"{where}: obs.npy: observations are in [0, 1]; step {step} has "
                         f"{float(d.obs[step, col])!r} at {col}")
    if actions % 8:                 # np.packbits pads the last byte with zero bits
        pad = np.uint8((1 << (8 - actions % 8)) - 1)
        bad_pad = np.flatnonzero(d.masks[:, -1] & pad)
        if bad_pad.size:
            raise DemosError(f"{where}: masks.npy: step {int(bad_pad[0])}'s mask sets bits past "
                             f"action {actions - 1} (masks are {actions} packed booleans)")
    if n and (d.run_seeds.min() < 0 or d.run_seeds.max() >= TRAINING_SEED_LIMIT):
        bad = int(np.flatnonzero((d.run_seeds < 0) | (d.run_seeds >= TRAINING_SEED_LIMIT))[0])
        raise DemosError(f"{where}: run_seeds.npy: step {bad}'s run seed {int(d.run_seeds[bad])} "
                         f"is not a training run seed (0..{TRAINING_SEED_LIMIT - 1})")
    if d.actions.min() < 0 or d.actions.max() >= actions:
        raise DemosError(f"{where}: actions.npy: actions must be in 0..{actions - 1}")
    # each step's own bit of its packed mask (not the masks unpacked: 8 bytes a packed byte)
    bits = (d.masks[np.arange(n), d.actions // 8] >> (7 - d.actions % 8).astype(np.uint8)) & 1
    if not bits.all():
        bad = int(np.flatnonzero(bits == 0)[0])
        raise DemosError(f"{where}: actions.npy: step {bad}'s action {int(d.actions[bad])} is "
                         f"illegal under its mask")
