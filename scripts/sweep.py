#!/usr/bin/env python3
"""Sweep train.py's hyperparameters with Ray Tune (optionally stopping weak trials with ASHA).

    python scripts/sweep.py --config configs/sweeps/quick.yaml [--name NAME] [--runs-dir DIR]
                            [--num-samples N] [--search-seed S] [--ray [ADDRESS]] [--num-cpus N]
                            [--force] [--json] [--no-progress]

The sweep YAML (keys in configs/sweeps/README.md; read into the typed `SweepConfig` of
agents/train/sweep/) names a training config (`base`), fixed `overrides` and a search `space` over
train-config keys by dotted path (seed, ppo.learning_rate, ppo.ent_coef, ppo.n_steps,
policy_kwargs.net_arch, ...). Every trial's config is resolved and validated before Ray starts:
an unknown key, a wrong type or a value out of range, in the sweep or in any trial's config, is
one `error: ...` line naming the key, exit status 2, nothing written. The same YAML and
search_seed draw the same trials.

Each trial is one train.py run (SB3 MaskablePPO), started by a Tune trainable as
`python scripts/train.py --config DIR/NAME/trial_configs/<trial>.yaml --run-name <trial>
--runs-dir DIR/NAME/trials --no-progress`, on `cpus_per_trial` CPUs (1 by default) of the Ray:
its evaluations (eval_history.jsonl, then the final eval.json) are reported to Tune at their
timesteps, and ASHA (`scheduler: asha`) stops a weaker trial at its rungs by interrupting its
train.py (as Ctrl-C does; the run stays resumable with train.py --resume).

The sweep directory DIR/NAME/ (default runs/<the YAML's name>/; an existing one is refused
unless --force): sweep.yaml (the validated sweep), trial_configs/<trial>.yaml, trials/<trial>/
(each a whole train.py run directory: config.yaml, tb/, checkpoints/, eval_history.jsonl,
eval.json, final_model.zip, ...), logs/<trial>.log (train.py's output), tune/<trial>/ (Tune's:
progress.csv, result.json, TensorBoard events of the reported metrics) and sweep.json (every
trial's values, status (finished, stopped_early by ASHA, error; interrupted or not_started after
a Ctrl-C), last metrics and files, and the best trial: the best last metric among the finished
trials). `tensorboard --logdir DIR/NAME` shows every trial's train.py curves beside Tune's, both
at their env steps.

stdout holds only the table of trials, best first (or sweep.json's content with --json); the
sweep directory and the progress lines (each trial's evaluations) go to stderr. Exit status 0
when every trial finished or was stopped by ASHA, 1 if a trial failed (its row says why; its log
has train.py's output), 130 if the sweep was interrupted. Ctrl-C ends the sweep (Tune stops
its trials; Ray ends the train.py runs with their workers) and still writes sweep.json and the
table; each unfinished run continues from its last checkpoint with train.py --resume (a whole
sweep is not resumed).

Ray: a local Ray with --num-cpus CPUs (default: all cores), started for the sweep and shut down
at its end; or `--ray ADDRESS` for a cluster (docs/SCALE.md; DIR should be on a filesystem every
node mounts at the same path). Needs the ray extra: pip install -e ".[ray]"; without it, this
help works and a run says so in one line (exit status 2).
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import yaml

from agents.cli.fanout import LOCAL, add_ray_argument
from agents.cli.progress import add_progress_argument, progress_on, say
from agents.cli.args import (MAX_CPUS, add_json_argument, check_runs_dir, fail, int_in,
                             script_parser, seed_int, usable_cores)
from agents.train.sweep import (MAX_TRIALS, asha_settings, format_table, plan_trials, read_sweep,
                                run_sweep, sweep_summary, tune_problem)
from agents.train.config import RUN_NAME, ConfigError, write_json

TRAIN_SCRIPT = ROOT / "scripts" / "train.py"


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--config", required=True, metavar="YAML",
                   help="the sweep config (configs/sweeps/*.yaml); required, no default")
    p.add_argument("--name", metavar="NAME",
                   help="the sweep directory's name under --runs-dir (default: the YAML's name, "
                        "else its file name)")
    p.add_argument("--runs-dir", default=str(ROOT / "runs"), metavar="DIR",
                   help="where the sweep directory goes (default: runs/ of the repository)")
    p.add_argument("--num-samples", type=int_in(1, MAX_TRIALS), dest="num_samples", metavar="N",
                   help=f"how many times the grid is repeated with fresh random draws, 1..{MAX_TRIALS} "
                        "(default: the YAML's num_samples)")
    p.add_argument("--search-seed", type=seed_int, dest="search_seed", metavar="S",
                   help="the seed of the random draws, 0..2**32-1 (default: the YAML's "
                        "search_seed)")
    add_ray_argument(p)          # the many-run scripts' option, with a sweep's default and help
    restate(p, "ray", LOCAL, "the Ray the trials run on: the cluster at ADDRESS (auto, or "
                             "HOST:PORT; docs/SCALE.md) (default, and --ray alone: a local Ray "
                             "started for the sweep with --num-cpus CPUs, shut down at its end)")
    p.add_argument("--num-cpus", type=int_in(1, MAX_CPUS), dest="num_cpus", metavar="N",
                   help=f"the local Ray's CPUs, 1..{MAX_CPUS} (default: all usable cores, {usable_cores()} "
                        f"here); not with --ray ADDRESS")
    p.add_argument("--force", action="store_true",
                   help="delete an existing sweep directory of that name first (default: off; "
                        "an existing one is refused)")
    add_json_argument(p, "sweep.json's content instead of the table")
    add_progress_argument(p)
    restate(p, "progress", None, "a line on stderr for each trial's evaluations and end, never on "
                                 "stdout (default: shown when stderr is a terminal; --progress "
                                 "forces them, --no-progress turns them off)")
    return p


def restate(parser, dest: str, default, help_text: str) -> None:
    """Give a shared option (agents.cli.fanout's --ray, agents.cli.progress's --progress) the default
    and the help it has in this script."""
    option = next(action for action in parser._actions if action.dest == dest)
    option.default, option.help = default, help_text


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if (status := check_runs_dir(a.runs_dir)) is not None:
        return status
    if a.num_cpus is not None and a.ray != LOCAL:
        return fail(f"--num-cpus is for the local Ray; the cluster at {a.ray} has its own CPUs")
    if a.name is not None and not RUN_NAME.fullmatch(a.name):
        return fail(f"--name {a.name!r}: a sweep directory's name is letters, digits and ._+=- "
                    f"(no '/', ':' or spaces), starting with a letter or digit")
    try:
        sweep = read_sweep(a.config, {"name": a.name, "num_samples": a.num_samples,
                                      "search_seed": a.search_seed})
        trials = plan_trials(sweep, a.config)
        settings = asha_settings(sweep, trials, a.config)
    except ConfigError as exc:
        return fail(str(exc))
    if problem := tune_problem():
        return fail(problem)
    num_cpus = a.num_cpus or usable_cores()
    if a.ray == LOCAL and sweep.cpus_per_trial > num_cpus:
        return fail(f"{a.config}: cpus_per_trial {sweep.cpus_per_trial} is more than the local "
                    f"Ray's {num_cpus} CPUs (--num-cpus): no trial could start")
    sweep_dir = Path(a.runs_dir) / sweep.name
    if sweep_dir.exists() and not (sweep_dir.is_dir() and not any(sweep_dir.iterdir())):
        if not a.force:
            return fail(f"{sweep_dir} exists: pass --force to replace it, or another --name")
        if not (sweep_dir / "sweep.yaml").is_file():
            return fail(f"{sweep_dir}: not a sweep directory (no sweep.yaml); --force deletes "
                        f"only sweeps, so it is left alone")
        shutil.rmtree(sweep_dir)
        say(f"--force: deleted the old {sweep_dir}", file=sys.stderr)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / "sweep.yaml").write_text(yaml.safe_dump(sweep.to_yaml(), sort_keys=False))
    scheduler = (f"ASHA, rungs {settings['rungs']} of max_t {settings['max_t']}" if settings
                 else "no early stopping")
    say(f"sweep: {sweep_dir}  ({len(trials)} trials, {scheduler}; tensorboard --logdir "
        f"{sweep_dir})", file=sys.stderr)
    t0 = time.monotonic()
    try:
        records = run_sweep(sweep, trials, sweep_dir, TRAIN_SCRIPT,
                            None if a.ray == LOCAL else a.ray, num_cpus, progress_on(a.progress))
    except KeyboardInterrupt:
        print(f"interrupted: {sweep_dir} has the trials' runs so far (each continues with "
              f"python scripts/train.py --resume --run-name <trial> --runs-dir "
              f"{sweep_dir / 'trials'})", file=sys.stderr)
        return 130
    summary = sweep_summary(sweep, str(a.config), sweep_dir, records, settings,
                            time.monotonic() - t0)
    write_json(sweep_dir / "sweep.json", summary)
    print(json.dumps(summary, indent=1) if a.json else format_table(summary))
    statuses = {r["status"] for r in records}
    if statuses & {"interrupted", "not_started"}:
        say(f"interrupted: some trials did not finish (sweep.json says which); each continues "
            f"from its last checkpoint with python scripts/train.py --resume --run-name <trial> "
            f"--runs-dir {sweep_dir / 'trials'}", file=sys.stderr)
        return 130
    return 1 if "error" in statuses else 0


if __name__ == "__main__":
    sys.exit(main())
