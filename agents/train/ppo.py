"""Training MaskablePPO drafters: the library part of scripts/train.py (its docstring describes
the run directory, --resume and the TensorBoard scalars). The config is agents.train.train_config,
the run directory agents.train.run_dirs, the callbacks agents.train.callbacks.

- Envs and torch: `set_torch_threads`, `make_env_fn`, `make_venv`, `seed_everything`.
- Training: `new_model`, `train` (learn, save, export, evaluate), `final_evaluation`,
  `summary_json`.
"""
from __future__ import annotations

import gc
import json
import os
from pathlib import Path

from agents.cli.progress import bar, say
from agents.evaluation.runs import log_evaluation, summary_line, training_step

from .config import eval_rules, rules_hash, run_env_kwargs, sb3_policy_kwargs, write_json
from .run_dirs import TrainClock, keep_history
from .train_config import TrainConfig


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
        env = ResumableEnv(Monitor(env))    # its state goes into checkpoints (agents/train/resume.py)
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


def new_model(cfg: TrainConfig, venv):
    from sb3_contrib import MaskablePPO

    from .masking import policy_class
    return MaskablePPO(policy_class(cfg.policy, cfg.masking), venv, seed=cfg.seed, verbose=0,
                       policy_kwargs=sb3_policy_kwargs(cfg.policy_kwargs), device="cpu", **cfg.ppo.kwargs())


def train(cfg: TrainConfig, run_dir: Path, model, venv, resumed: bool, base_seconds: float,
          progress: bool, state: dict | None = None, demos=None) -> dict:
    """Train `model` on to cfg.total_timesteps, save it, evaluate it; returns eval.json's content.
    `state`: the resume state of the checkpoint `model` was loaded from (agents/train/resume.py), put
    back before training goes on, so the run continues as if it had never stopped. `demos`: the
    demonstrations the policy was cloned on, for the config's keep term (agents/train/keep.py; a
    resumed run reads them from the run directory)."""
    from .callbacks import build_callbacks
    from .keep import keep_term
    from .resume import collect_state, restore_state, run_identity, save_state
    keep_term(cfg, model, run_dir, demos)     # hooked into the optimizer for this session
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
        # a larger total may resume from it
        final_state = collect_state(model, callbacks, run_identity(cfg))
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
    from agents.policy import export_policy
    from agents.policy.trust import save_checkpoint
    save_state(final_state, final)
    save_checkpoint(model, final, run_identity(cfg))    # signed, with the run's identity
    export_policy(model, run_dir / "final_policy.pt")   # the network alone: small, committable
    seconds = clock.record(steps)
    return final_evaluation(cfg, run_dir, steps, seconds, Path(model.logger.dir), progress)


def final_evaluation(cfg: TrainConfig, run_dir: Path, steps: int, seconds: float, tb_dir: Path,
                     progress: bool) -> dict:
    """The final model's evaluation: eval.json, final_policy.json, and TensorBoard (eval/* at the
    last step, images boards/final/<i>)."""
    from agents.evaluation.runs import evaluate
    from agents.policy import PolicyAgent, load_model
    episodes = cfg.final_eval_episodes
    res: dict = {}
    if episodes:
        rules = eval_rules(cfg.env_kwargs)      # the config's rules, not always the defaults
        with bar(episodes, "final evaluation", progress) as pb:
            res = evaluate(PolicyAgent(load_model(run_dir / "final_model.zip"), rules=rules),
                           episodes, cfg.eval.seed, run_env_kwargs(cfg.env_kwargs), progress=pb)
        from torch.utils.tensorboard import SummaryWriter
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


def summary_json(run_dir: Path, res: dict) -> str:
    return json.dumps({"run_dir": str(run_dir), **{k: res.get(k) for k in
                       ("timesteps", "train_seconds", "battle_win_rate", "mean_wins", "clear_rate")}})
