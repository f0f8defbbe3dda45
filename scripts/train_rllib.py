#!/usr/bin/env python3
"""Train PPO with RLlib on RuneRun-v0, RuneDraft-v0 or the duel (self-play), from a config.

    python scripts/train_rllib.py --config configs/rllib/quick.yaml [--seed S]
                                  [--total-timesteps N] [--run-name NAME [--force]] [--resume]
                                  [--runs-dir DIR] [--ray ADDRESS] [--num-cpus N]

Needs the ray and train extras (pip install -e ".[ray]", which includes train). The YAML's keys
are in configs/rllib/README.md; it is read into the typed `RLlibConfig` of
agents/train/rllib_config.py: an unknown key, a wrong type or a value out of range is one
`error: ...` line naming the key (exit status 2, nothing written, Ray not started).

The run directory, like train.py's: DIR/<name>__s<seed>__<UTC time>/, or DIR/NAME/ with
--run-name NAME (refused if it exists, unless --resume continues it or --force deletes it
first). It holds config.yaml, tb/ (TensorBoard: rllib/* (episode return and length of the
runners), learner/* (RLlib's policy and value losses, entropy, KL, gradient norm),
time/steps_per_second, eval/* at each evaluation and at the end), checkpoints/algo_<steps>/
(RLlib checkpoints, each signed as a whole in algo_<steps>.sig: they are pickles, so --resume
restores the newest only if a training run on this machine saved it as it is, or with
--trust-pickle; agents/policy/trust.py), eval_history.jsonl (the periodic
evaluations), final_policy.pt with final_policy.json (the trained module exported as the
project's policy format: evaluate.py --agents runs/<run>/final_policy.pt, ladders and pools
play it as they play an SB3 drafter), eval.json (the final evaluation) and train_seconds.json.
The last line on stdout is a JSON summary.

The environment: RLlib's PPO on its current API stack, the actions masked by the RLModule
agents/train/rllib.py defines (the mask rides in the observation). For the duel both players are the
one learning policy (self-play). With num_env_runners 0 (the shipped configs) the driver samples
and learns, on torch_threads threads; a local Ray is started for the run (--num-cpus CPUs) unless
--ray ADDRESS joins a cluster (docs/SCALE.md), where num_env_runners > 0 spreads the sampling.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import yaml

from agents.cli.fanout import ray_problem
from agents.cli.progress import add_progress_argument, progress_on, say
from agents.cli.args import (MAX_CPUS, MAX_STEPS, add_trust_pickle_argument, apply_trust_pickle,
                             check_runs_dir, fail, int_in, script_parser, seed_int)
from agents.train.config import ConfigError
from agents.train.run_dirs import claim_run_dir, default_run_name, open_named_run


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--config", required=True, metavar="YAML",
                   help="the RLlib config (configs/rllib/*.yaml) (required)")
    p.add_argument("--seed", type=seed_int, metavar="S",
                   help="the run's seed, 0..2**32-1 (default: the config's seed)")
    p.add_argument("--total-timesteps", type=int_in(1, MAX_STEPS), dest="total_timesteps",
                   metavar="N", help=f"env steps to train for, 1..{MAX_STEPS} (default: the config's total_timesteps; "
                        "whole iterations, so it may end a little past)")
    p.add_argument("--run-name", metavar="NAME",
                   help="the run directory's name under --runs-dir (default: "
                        "<name>__s<seed>__<UTC time>, a new one per run)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run --run-name names from its newest checkpoint "
                        "(default: off)")
    p.add_argument("--force", action="store_true",
                   help="delete the --run-name directory first and start again (default: off)")
    p.add_argument("--runs-dir", default=str(ROOT / "runs"), metavar="DIR",
                   help="where run directories go (default: runs/ of the repository)")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="the Ray cluster to join (auto, or HOST:PORT; docs/SCALE.md) (default: "
                        "a local Ray started for this run)")
    p.add_argument("--num-cpus", type=int_in(1, MAX_CPUS), dest="num_cpus", metavar="N",
                   help=f"CPUs of the local Ray, 1..{MAX_CPUS} (default: every core; ignored with --ray)")
    add_trust_pickle_argument(p)
    add_progress_argument(p)
    return p


def run_directory(a, name: str, seed: int) -> Path | str:
    """The run's directory (created), or an error message."""
    runs_dir = Path(a.runs_dir)
    if a.run_name is None:
        if a.resume:
            return "--resume needs --run-name (the run to continue)"
        return claim_run_dir(runs_dir, default_run_name(name, seed))
    if a.resume and not (runs_dir / a.run_name / "config.yaml").is_file():
        return f"{runs_dir / a.run_name}: no run to resume (no config.yaml)"
    return open_named_run(runs_dir, a.run_name, a.resume, a.force, "a training run")


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.force and a.resume:
        return fail("--force and --resume contradict each other")
    if (status := check_runs_dir(a.runs_dir)) is not None:
        return status
    from agents.train.rllib_config import check_env, read_rllib_config
    try:
        cfg = read_rllib_config(a.config, {"seed": a.seed, "total_timesteps": a.total_timesteps})
        check_env(cfg, a.config)
    except ConfigError as exc:
        return fail(str(exc))
    problem = ray_problem()
    if problem:
        return fail(problem.replace("--ray", "train_rllib.py"))
    apply_trust_pickle(a)
    if a.resume and a.run_name:     # RLlib's checkpoints are pickles: this machine's, or trusted
        from agents.policy.trust import UntrustedCheckpoint, check_checkpoint_dir
        from agents.train.rllib import latest_algo_checkpoint
        ckpt, _ = latest_algo_checkpoint(Path(a.runs_dir) / a.run_name)
        try:
            if ckpt is not None:
                check_checkpoint_dir(ckpt)
        except UntrustedCheckpoint as exc:
            return fail(str(exc))
    run_dir = run_directory(a, cfg.name, cfg.seed)
    if isinstance(run_dir, str):
        return fail(run_dir)
    if not a.resume:
        (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_yaml(), sort_keys=False))
    say(f"run: {run_dir}  (tensorboard --logdir {run_dir / 'tb'})")
    from agents.train.rllib import start_ray, train_rllib
    ray = start_ray(a.ray, a.num_cpus)
    try:
        res = train_rllib(cfg, run_dir, resume=a.resume, progress=progress_on(a.progress))
    finally:
        ray.shutdown()
    keys = ("timesteps", "train_seconds", "battle_win_rate", "mean_wins", "clear_rate",
            "win_rate", "loss_rate")
    print(json.dumps({"run_dir": str(run_dir), **{k: res[k] for k in keys if k in res}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
