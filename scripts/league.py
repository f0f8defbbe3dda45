#!/usr/bin/env python3
"""Train a self-play league in the duel (RuneDuel) from a config.

    python scripts/league.py --config configs/league/default.yaml [--seed S]
                             [--total-timesteps N] [--run-name NAME] [--resume] [--runs-dir DIR]

MaskablePPO learns against opponents sampled from the league by prioritised fictitious
self-play: the config's fixed members (greedy, the apprentice PPO policies) and the learner's
own snapshots, one every snapshot_every steps (agents/train/league.py describes the method; the keys
are in configs/league/README.md; an unknown key or a bad value is one `error: ...` line, exit
status 2).

The run directory, DIR/NAME/ (default: the config's name): config.yaml, tb/ (TensorBoard: SB3's
curves, league/learner_score, league/score/<member> and league/weight/<member> (PFSP), the
ratings league/rating/<member> at each snapshot, and the win-rate matrix as the image
league/win_matrix, drawn by matplotlib: the train extra brings it, and without it the league
stops before training with one `error: ...` line), members/snap_<steps>.pt (+ .json cards), checkpoints/league_<steps>.zip,
league.json (members, rating duels, the learner's scores), and at the end final_policy.pt (+
final_policy.json), final_model.zip and eval.json (the final agent against each fixed member:
win and loss rates with 95% intervals; the ratings, each with a 95% bootstrap interval over the
rating duels, ratings_ci). The last line on stdout is eval.json's
summary as JSON.

--resume continues a run from its last snapshot (its checkpoint and league.json); the duels in
flight at that moment are not replayed, so a resumed league is not bit for bit the uninterrupted
one. Seeds are fixed: the same config and seed on one machine give the same league.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import yaml

from agents.cli.progress import add_progress_argument, progress_on, say
from agents.cli.args import (add_trust_pickle_argument, apply_trust_pickle, check_runs_dir,
                             fail, int_in, script_parser, seed_int, MAX_STEPS)
from agents.train.config import ConfigError, portable
from agents.train.run_dirs import open_named_run
from rune_env.files import write_text_atomic


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--config", required=True, metavar="YAML",
                   help="the league config, configs/league/*.yaml (required)")
    p.add_argument("--seed", type=seed_int, metavar="S",
                   help="the league's seed, 0..2**32-1 (default: the config's seed)")
    p.add_argument("--total-timesteps", type=int_in(1, MAX_STEPS), dest="total_timesteps",
                   metavar="N", help=f"learner steps in all, 1..{MAX_STEPS} (default: the "
                                     f"config's total_timesteps)")
    p.add_argument("--run-name", metavar="NAME",
                   help="the run directory's name under --runs-dir (default: the config's name)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run from its last snapshot (default: off; an existing run "
                        "is refused without --resume or --force)")
    p.add_argument("--force", action="store_true",
                   help="delete the run's directory first and start again (default: off)")
    p.add_argument("--runs-dir", default=str(ROOT / "runs"), metavar="DIR",
                   help="where run directories go (default: runs/ of the repository)")
    add_trust_pickle_argument(p)
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.force and a.resume:
        return fail("--force and --resume contradict each other")
    if (status := check_runs_dir(a.runs_dir)) is not None:
        return status
    apply_trust_pickle(a)
    from agents.train.league import check_league, read_league_config, run_league
    try:
        cfg = read_league_config(a.config, {"seed": a.seed, "total_timesteps": a.total_timesteps})
        league = check_league(cfg, str(a.config))  # duel_kwargs and members, before any directory
    except ConfigError as exc:
        return fail(str(exc))
    from agents.cli.args import make_output_dir, remove_made
    run_dir = Path(a.runs_dir) / (a.run_name or cfg.name)
    new_run = not run_dir.exists()
    try:
        made = make_output_dir(Path(a.runs_dir))    # the --runs-dir folders this run made
    except OSError as exc:
        return fail(f"--runs-dir {a.runs_dir}: cannot make it ({exc.strerror or exc})")
    run_dir = open_named_run(Path(a.runs_dir), a.run_name or cfg.name, a.resume, a.force,
                             "a league run")
    if isinstance(run_dir, str):
        remove_made(made)
        return fail(run_dir)
    new_run = new_run or not a.resume          # --force made it again; --resume of none made it
    from agents.policy import PolicyLoadError
    try:
        say(f"league: {run_dir}  (tensorboard --logdir {run_dir / 'tb'})")
        res = run_league(cfg, run_dir, resume=a.resume, progress=progress_on(a.progress),
                         league=league,      # its members loaded by the check, not again
                         on_start=lambda: write_text_atomic(
                             run_dir / "config.yaml",
                             yaml.safe_dump(portable(cfg.model_dump()), sort_keys=False)))
    except (ConfigError, PolicyLoadError) as exc:   # refused before training (a checkpoint or
        if new_run:                                 # league.json that does not load): a run
            shutil.rmtree(run_dir, ignore_errors=True)     # this start made goes, so a rerun
            remove_made(made)                              # is not told "exists"
        return fail(str(exc))
    summary = {"run_dir": str(run_dir), "timesteps": res["timesteps"],
               "against": {k: {key: v[key] for key in ("win_rate", "win_ci", "loss_rate", "beats")}
                           for k, v in res["against"].items()}}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
