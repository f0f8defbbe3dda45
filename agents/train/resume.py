"""Exact resume: what a checkpoint needs beside SB3's zip so that a resumed run is the run it resumes.

SB3's zip (agents/policy/trust.py's `save_checkpoint`) holds the policy, the optimizer and
`num_timesteps`. A run killed at a checkpoint and resumed trains to the same weights, bit for bit,
as the run never killed, because checkpoints are written only at rollout boundaries (after a
rollout and its update: agents/train/callbacks.py's `Checkpoints`) and each has a resume state beside it,
`<checkpoint>.state.json` (written atomically and signed like the zip: `save_state`):

- the rollout position: the VecEnv's last observations and episode starts (`_last_obs`,
  `_last_episode_starts`, `_last_original_obs` if any), so the resumed rollout goes on from the
  same observations instead of resetting the envs;
- every env's state (`ResumableEnv.resume_state`): the run (`RuneRunEnv.get_state`: the run state
  with its generator, the env's `np_random`) and each wrapper's counters (Monitor's episode
  rewards and lengths, the step limits' counts (RulesTimeLimit, TimeLimit), OrderEnforcing's and PassiveEnvChecker's flags);
- the global generators: torch's (the policy samples actions with it), numpy's (SB3 shuffles the
  minibatches with it) and Python's;
- SB3's counters: `_episode_num`, `_n_updates`, the episode-info buffers (rollout/ep_*_mean),
  and the scalars its logger holds for the next write (the last update's train/*);
- the callbacks' counters (the last checkpoint, evaluation and metrics steps, the game metrics
  gathered since the last write).

Arrays are kept as their raw bytes (base64) with dtype and shape, so they come back exactly; JSON
everywhere, no pickle. A checkpoint without its state (a run from before this, a state that is
missing, unsigned or of another step) still resumes, with a line saying the envs start new
episodes and the run is no longer the uninterrupted one.
"""
from __future__ import annotations

import base64
import json
import os
import random
from collections import deque
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

STATE_FORMAT = "rune-env-resume-state"
STATE_VERSION = 1
STATE_SUFFIX = ".state.json"


class ResumeStateError(ValueError):
    """A resume state that cannot be used (missing, unsigned, of another step, version or run)."""


def run_identity(cfg) -> str:
    """The identity of a training run's config (TrainConfig), kept in its resume states: a digest
    of the config without total_timesteps (which a resume may raise). A state of another run, a
    checkpoint copied from elsewhere, is then told apart from the run's own."""
    import hashlib
    data = {k: v for k, v in cfg.to_yaml().items() if k != "total_timesteps"}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


# -- arrays and generators as JSON ---------------------------------------------------------------
def pack_array(a) -> dict | None:
    if a is None:
        return None
    if isinstance(a, dict):          # Dict observations
        return {"dict": {k: pack_array(v) for k, v in a.items()}}
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape),
            "b64": base64.b64encode(a.tobytes()).decode("ascii")}


def unpack_array(d: dict | None):
    if d is None:
        return None
    if "dict" in d:
        return {k: unpack_array(v) for k, v in d["dict"].items()}
    return np.frombuffer(base64.b64decode(d["b64"]), dtype=np.dtype(d["dtype"])) \
        .reshape(d["shape"]).copy()


def _jsonable(x: Any) -> Any:
    """numpy scalars and tuples as plain JSON (floats keep every bit: JSON writes repr)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, deque)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return pack_array(x)
    if isinstance(x, np.generic):
        return x.item()
    return x


def global_rng_state() -> dict:
    import torch
    name, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss = random.getstate()
    return {"torch": pack_array(torch.get_rng_state().numpy()),
            "numpy": {"name": name, "keys": pack_array(keys), "pos": int(pos),
                      "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
            "python": {"version": version, "internal": list(internal), "gauss": gauss}}


def set_global_rng_state(s: dict) -> None:
    import torch
    torch.set_rng_state(torch.from_numpy(unpack_array(s["torch"])))
    n = s["numpy"]
    np.random.set_state((n["name"], unpack_array(n["keys"]), n["pos"], n["has_gauss"],
                         n["cached_gaussian"]))
    p = s["python"]
    random.setstate((p["version"], tuple(p["internal"]), p["gauss"]))


# -- the envs ------------------------------------------------------------------------------------
_WRAPPER_FIELDS = {
    "Monitor": ("rewards", "episode_returns", "episode_lengths", "episode_times", "total_steps",
                "needs_reset"),
    "TimeLimit": ("_elapsed_steps",),
    "RulesTimeLimit": ("_elapsed_steps",),
    "OrderEnforcing": ("_has_reset",),
    "PassiveEnvChecker": ("checked_reset", "checked_step", "checked_render", "checked_data_reuse"),
}


class ResumableEnv(gym.Wrapper):
    """The outermost wrapper of a training env (agents/train/ppo.py's make_env_fn): reads and sets
    the state of the whole stack under it, through the VecEnv's env_method (so subprocess envs
    too). A wrapper it does not know, or an env without get_state/set_state, is an error: a state
    it cannot keep is never silently dropped."""

    def _stack(self):
        w, stack = self.env, []
        while isinstance(w, gym.Wrapper):
            stack.append(w)
            w = w.env
        if not (hasattr(w, "get_state") and hasattr(w, "set_state")):
            raise ResumeStateError(f"{type(w).__name__} has no get_state/set_state: cannot resume it exactly")
        for x in stack:
            if type(x).__name__ not in _WRAPPER_FIELDS:
                raise ResumeStateError(f"wrapper {type(x).__name__}: its state is not kept for resume")
        return stack, w

    def resume_state(self) -> dict:
        stack, env = self._stack()
        # the fields this Gymnasium version's wrapper has (PassiveEnvChecker's differ between
        # 1.2, which the ray extra installs, and 1.4)
        return {"wrappers": [[type(x).__name__, {f: _jsonable(getattr(x, f))
                                                 for f in _WRAPPER_FIELDS[type(x).__name__]
                                                 if hasattr(x, f)}]
                             for x in stack],
                "env": _jsonable(env.get_state())}

    def resume_state_problem(self, state: dict) -> str | None:
        """Why `set_resume_state` would refuse `state` (or fail halfway), or None; changes
        nothing."""
        try:
            stack, env = self._stack()
        except ResumeStateError as exc:
            return str(exc)
        if not isinstance(state, dict) or not isinstance(state.get("wrappers"), list):
            return "not an env state"
        names = [type(x).__name__ for x in stack]
        state = _migrated(state, names)
        saved = [w[0] if isinstance(w, list) and len(w) == 2 else None for w in state["wrappers"]]
        if names != saved:
            return f"the env's wrappers {names} are not the saved ones {saved}"
        for name, fields in state["wrappers"]:
            if not isinstance(fields, dict) or not set(fields) <= set(_WRAPPER_FIELDS[name]):
                return f"{name}'s saved fields are not the ones kept"
        check = getattr(env, "check_state", None)
        if check is not None:
            try:
                check(state.get("env"))
            except ValueError as exc:
                return " ".join(str(exc).split())[:300]
        return None

    def set_resume_state(self, state: dict) -> None:
        stack, env = self._stack()
        names = [type(x).__name__ for x in stack]
        state = _migrated(state, names)
        if names != [n for n, _ in state["wrappers"]]:
            raise ResumeStateError(f"the env's wrappers {names} are not the saved ones "
                                   f"{[n for n, _ in state['wrappers']]}")
        for x, (_, fields) in zip(stack, state["wrappers"]):
            for f, v in fields.items():
                setattr(x, f, v)
        env.set_state(state["env"])


def _migrated(state: dict, names: list[str]) -> dict:
    """An env state saved before the step limit was RulesTimeLimit (the fifty-first session):
    its stack had a TimeLimit beneath PassiveEnvChecker where today's has RulesTimeLimit
    outermost under the Monitor. Its TimeLimit's count is the RulesTimeLimit's, moved to where
    `names` (the env's stack) has it, so such a checkpoint still resumes exactly. Any other
    state as it is."""
    wrappers = state.get("wrappers")
    if not isinstance(wrappers, list) or "RulesTimeLimit" not in names or "TimeLimit" in names:
        return state
    saved = [w[0] if isinstance(w, list) and len(w) == 2 else None for w in wrappers]
    if "TimeLimit" not in saved or "RulesTimeLimit" in saved:
        return state
    moved = [w for w in wrappers if w[0] != "TimeLimit"]
    fields = wrappers[saved.index("TimeLimit")][1]
    moved.insert(names.index("RulesTimeLimit"), ["RulesTimeLimit", fields])
    return {**state, "wrappers": moved}


# -- the model's state ---------------------------------------------------------------------------
def collect_state(model, callbacks, run: str | None = None) -> dict:
    """The resume state of `model` (with its env) and the callbacks, now (a rollout boundary);
    `run`: the run's `run_identity`."""
    venv = model.get_env()
    return {"format": STATE_FORMAT, "version": STATE_VERSION, "run": run,
            "num_timesteps": int(model.num_timesteps),
            "last_obs": pack_array(model._last_obs),
            "last_episode_starts": pack_array(model._last_episode_starts),
            "last_original_obs": pack_array(getattr(model, "_last_original_obs", None)),
            "episode_num": int(model._episode_num), "n_updates": int(model._n_updates),
            "ep_info_buffer": _jsonable(list(model.ep_info_buffer or [])),
            "ep_success_buffer": _jsonable(list(model.ep_success_buffer or [])),
            "envs": venv.env_method("resume_state"),
            "rng": global_rng_state(),
            "logger": pending_log(model),
            "callbacks": {type(cb).__name__: cb.resume_state() for cb in callbacks
                          if hasattr(cb, "resume_state")}}


def pending_log(model) -> list:
    """The scalars SB3's logger holds for its next write: at a rollout boundary, the update's
    train/* (SB3 writes them with the next rollout's rollout/* and time/*)."""
    log = getattr(model, "_logger", None)
    if log is None:
        return []
    out = []
    for key, value in log.name_to_value.items():
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            excluded = log.name_to_excluded.get(key)
            excluded = [excluded] if isinstance(excluded, str) else list(excluded or ())
            out.append([key, _jsonable(value), excluded])
    return out


def restore_pending_log(logger, pending: list) -> None:
    """Put the pending scalars back into the resumed session's logger (made by model.learn; see
    agents/train/callbacks.py's Checkpoints._on_training_start)."""
    for key, value, excluded in pending:
        logger.record(key, value, exclude=tuple(excluded) or None)


def state_path(checkpoint: Path) -> Path:
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(checkpoint.name.removesuffix(".zip") + STATE_SUFFIX)


def save_state(state: dict, checkpoint: Path) -> Path:
    """The resume state beside `checkpoint` (its .state.json), atomically and signed (a temp
    name, its signature, a rename)."""
    from agents.policy.trust import write_signature
    path = state_path(checkpoint)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(state, separators=(",", ":")), encoding="utf-8")
        write_signature(tmp, path)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def load_state(checkpoint: Path, steps: int, run: str | None = None) -> dict:
    """The resume state of `checkpoint` at `steps` timesteps, of the run whose `run_identity` is
    `run` (a state saved without one, before identities were kept, is taken), or
    ResumeStateError saying why not."""
    from agents.policy.trust import is_signed, pickle_trusted
    path = state_path(checkpoint)
    if not path.is_file():
        raise ResumeStateError(f"{path}: missing")
    if not (pickle_trusted() or is_signed(path)):
        raise ResumeStateError(f"{path}: not signed by this machine's training")
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeStateError(f"{path}: unreadable ({exc})") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT \
            or state.get("version") != STATE_VERSION:
        raise ResumeStateError(f"{path}: not a {STATE_FORMAT} v{STATE_VERSION}")
    if state.get("num_timesteps") != steps:
        raise ResumeStateError(f"{path}: of {state.get('num_timesteps')} timesteps, not {steps}")
    if run is not None and state.get("run") not in (None, run):
        raise ResumeStateError(f"{path}: the state of another run (its config differs from this "
                               f"run's config.yaml)")
    return state


def check_state(state: dict, venv, where: str) -> None:
    """ResumeStateError (one line, `where` naming the file) unless `restore_state` can put
    `state` back on `venv` whole: checked before anything is changed or written, so a state that
    does not fit (other env options, another number of envs) is refused, not half restored."""
    def bad(what: str):
        return ResumeStateError(f"{where}: {what}")
    envs = state.get("envs")
    if not isinstance(envs, list) or len(envs) != venv.num_envs:
        raise bad(f"{len(envs) if isinstance(envs, list) else 'no'} envs saved, "
                  f"{venv.num_envs} now")
    space = venv.observation_space
    try:
        last_obs = unpack_array(state.get("last_obs"))
        starts = unpack_array(state.get("last_episode_starts"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise bad(f"its rollout position does not unpack ({' '.join(str(exc).split())[:200]})") \
            from None
    if not isinstance(last_obs, np.ndarray) or last_obs.shape != (venv.num_envs, *space.shape) \
            or last_obs.dtype != space.dtype:
        shape = getattr(last_obs, "shape", None)
        raise bad(f"its observations have shape {shape}, these envs' {(venv.num_envs, *space.shape)}")
    if not isinstance(starts, np.ndarray) or starts.shape != (venv.num_envs,):
        raise bad("its episode starts are not one per env")
    for key in ("episode_num", "n_updates"):
        if type(state.get(key)) is not int or state[key] < 0:
            raise bad(f"{key} must be a whole number >= 0")
    for key in ("ep_info_buffer", "ep_success_buffer", "logger"):
        if not isinstance(state.get(key, []), list):
            raise bad(f"{key} must be a list")
    if not isinstance(state.get("callbacks", {}), dict) or not isinstance(state.get("rng"), dict):
        raise bad("callbacks and rng must be mappings")
    for i, saved in enumerate(envs):
        problem = venv.env_method("resume_state_problem", saved, indices=[i])[0]
        if problem:
            raise bad(f"env {i}: {problem}")


def restore_state(model, venv, state: dict, callbacks) -> None:
    """Put `state` back: the envs (without a reset), the rollout position, SB3's counters and
    buffers, the callbacks' counters, and last the global generators (call it right before
    `model.learn(..., reset_num_timesteps=False)`: nothing may draw from them in between).
    `check_state` has checked it; what still fails is a ResumeStateError (one line)."""
    try:
        _restore(model, venv, state, callbacks)
    except ResumeStateError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ResumeStateError(f"the resume state cannot be put back ({type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:200]})") from None


def _restore(model, venv, state: dict, callbacks) -> None:
    if len(state["envs"]) != venv.num_envs:
        raise ResumeStateError(f"{len(state['envs'])} envs saved, {venv.num_envs} now")
    model.set_env(venv, force_reset=False)
    for i, s in enumerate(state["envs"]):
        venv.env_method("set_resume_state", s, indices=[i])
    # a pending seed would re-seed an env at its next venv.reset(); a resumed run never resets
    # the VecEnv, but no seed of the fresh envs must linger either
    if hasattr(venv, "_reset_seeds"):
        venv._reset_seeds()
    model._last_obs = unpack_array(state["last_obs"])
    model._last_episode_starts = unpack_array(state["last_episode_starts"])
    if state.get("last_original_obs") is not None:
        model._last_original_obs = unpack_array(state["last_original_obs"])
    model._episode_num = state["episode_num"]
    model._n_updates = state["n_updates"]
    size = model._stats_window_size
    model.ep_info_buffer = deque(state["ep_info_buffer"], maxlen=size)
    model.ep_success_buffer = deque(state["ep_success_buffer"], maxlen=size)
    for cb in callbacks:
        if hasattr(cb, "pending_log"):
            cb.pending_log = state.get("logger", [])
    saved = state.get("callbacks", {})
    for cb in callbacks:
        if hasattr(cb, "set_resume_state") and type(cb).__name__ in saved:
            cb.set_resume_state(saved[type(cb).__name__])
    set_global_rng_state(state["rng"])
