#!/usr/bin/env python3
"""Expert iteration: a policy taught by its own search, iteration after iteration.

    python scripts/expert_iteration.py --policy FILE [--iterations K] [--runs N] [--rank R]
                                       [--seed S] [--jobs J] [--n N] [--temperature T]
                                       [--epsilon P] [--core CORE] [--waste W] [--invest I]
                                       [--epochs E] [--holdout F] [--patience N] [--keep-demos K]
                                       [--extra-demos FILE ...] [--learning-rate LR] [--batch-size B]
                                       [--eval-episodes M] [--eval-seed S] [--rules FILE]
                                       [--out DIR] [--force] [--json] [--no-progress]

Each iteration, sampled search around the current policy (`sampled:policy=CURRENT,n=N,
temperature=T[,epsilon=P,core=C,waste=W,invest=I]`: its preparation played N times a round on
private copies, the best by battles against the rank's pool) plays N runs on demonstration seeds
of S + iteration; the policy is fitted to the search's actions from its own weights and exported
as the next one
(agents/train/expert_iteration.py). Writes DIR/iter_<i>/demos.npz, DIR/iter_<i>/policy.pt (with
its card), DIR/expert_iteration.json and TensorBoard exit/* in DIR/tb; prints a line per
iteration (one JSON object with --json). Same arguments, same files. A bad argument is one
`error: ...` line and exit status 2; an existing DIR is refused unless --force, and --force
replaces only a folder this script made (its .expert-iteration mark or expert_iteration.json in
it). A run stopped midway keeps the iterations it finished and drops the one it was in (the
whole DIR if none had finished). Progress bars go to stderr.

docs/RESULTS.md, "Sampled search and expert iteration": three iterations from distill v2 s1 at
archmage, 3,000 runs each, raise its mean wins a run from 0.281 to 0.295, 0.313 and 0.324, two
more to 0.343 and 0.344 (evaluation seeds 0-3, 800 runs; the planner 0.435).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from agents.cli.args import (add_count_argument, add_json_argument, add_rules_argument,
                             add_seed_argument, fail, int_in, non_negative_float_to,
                             owned_dir, parse_with_rules,
                             positive_float_to, script_parser, seed_int)
from agents.cli.progress import add_progress_argument, progress_on
from agents.search.sampled import N_MAX, TEMPERATURE_MAX, WEIGHT_MAX

MAX_ITERATIONS = 50
MAX_RUNS = 1_000_000
MAX_EPOCHS = 10_000


def build_parser(rules=None):
    p = script_parser(__doc__)
    p.add_argument("--policy", required=True, metavar="FILE",
                   help="the policy to start from: an exported policy (.pt) or a saved model "
                        "(.zip), an MLP on flat observations (required; no default)")
    add_count_argument(p, "--iterations", 1, "iterations", high=MAX_ITERATIONS)
    add_count_argument(p, "--runs", 3000, "runs of the search an iteration", high=MAX_RUNS)
    p.add_argument("--rank", default="archmage",
                   help="the rank played, a name or number of the rules' ranks (default archmage)")
    add_seed_argument(p, "the seed (demonstration seeds S + iteration, torch's)")
    add_count_argument(p, "--jobs", 1, "processes playing the search's runs (the same "
                       "demonstrations for any number)", high=64, metavar="J")
    add_count_argument(p, "--n", 16, "the search's rollouts a round", high=N_MAX)
    p.add_argument("--temperature", type=positive_float_to(TEMPERATURE_MAX), default=2.0,
                   metavar="T", help=f"the sampled rollouts' softmax temperature, in (0, "
                                     f"{TEMPERATURE_MAX:g}] (default 2)")
    p.add_argument("--epsilon", type=positive_float_to(1.0), default=1.0, metavar="P",
                   help="the share of a sampled rollout's steps that sample (the others take "
                        "the policy's greedy action), in (0, 1] (default 1: every step)")
    p.add_argument("--core", default=None, metavar="CORE",
                   help="the core the search takes when a run's core is chosen, one of the "
                        "rules' cores; the policy learns it with the rest (default: the "
                        "policy's own choice)")
    p.add_argument("--waste", type=non_negative_float_to(WEIGHT_MAX), default=0.0, metavar="W",
                   help="the search's score loses W x the mana a rollout lost for good "
                        "(rerolls, sales below the price paid) per round of income, as the "
                        f"planner's does, in [0, {WEIGHT_MAX:g}] (default 0: battles alone)")
    p.add_argument("--invest", type=non_negative_float_to(WEIGHT_MAX), default=0.0, metavar="I",
                   help="the search's score gains I x the share of the rollout's wealth its "
                        f"board holds, in [0, {WEIGHT_MAX:g}] (default 0)")
    add_count_argument(p, "--epochs", 30, "epochs of fitting an iteration", high=MAX_EPOCHS,
                       metavar="E")
    p.add_argument("--holdout", type=non_negative_float_to(0.5), default=0.0, metavar="F",
                   help="the share of the fitted runs held out to measure the fit: the epoch "
                        "with the lowest held-out loss is kept (the start policy if none is "
                        "lower) and fitting stops --patience epochs after it, in [0, 0.5] "
                        "(default 0: every epoch kept, no measure)")
    add_count_argument(p, "--patience", 3, "with --holdout: epochs without a lower held-out "
                       "loss before fitting stops", high=MAX_EPOCHS)
    add_count_argument(p, "--keep-demos", 1, "the last K iterations' demonstrations fitted "
                       "together (DAgger's aggregation; 1: this iteration's only)",
                       high=MAX_ITERATIONS, metavar="K")
    p.add_argument("--extra-demos", nargs="+", default=[], metavar="FILE",
                   help="demonstrations files (scripts/collect_demos.py, or an earlier run's "
                        "iter_<i>/demos.npz) of these rules fitted in every iteration too "
                        "(default: none)")
    p.add_argument("--learning-rate", type=positive_float_to(1.0), default=1e-3, metavar="LR",
                   help="Adam's learning rate, in (0, 1] (default 0.001)")
    add_count_argument(p, "--batch-size", 256, "steps a minibatch", high=1_000_000, metavar="B")
    add_count_argument(p, "--eval-episodes", 0, "evaluation runs of each new policy at the rank "
                       "(0: none)", high=100_000, low=0, metavar="M")
    p.add_argument("--eval-seed", type=seed_int, default=0, metavar="S",
                   help="the evaluation seed, 0..2**32-1 (default 0)")
    add_rules_argument(p)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="the output folder (default runs/exit_<policy name>_s<seed>)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing output folder (default off: refused)")
    add_json_argument(p, "one JSON object (every iteration's row) instead of the lines")
    add_progress_argument(p)
    return p


def check_observation_size(policy: str, rank, rules_path: str | None) -> None:
    """Refuse (ValueError, one line) a policy whose observation is not the run's at `rank`: its
    search could play (a longer observation is padded, agents.policy.PolicyAgent.act), but the
    fit reads the run's observations into its first layer (a duel policy, 1780 inputs, against
    the run's 1031, failed there, after the first iteration's demonstrations were written)."""
    from agents.policy import load_acting_policy
    from rune_env.envs.run_env import RuneRunEnv
    env = RuneRunEnv(rank=rank, **({"rules": rules_path} if rules_path else {}))
    try:
        want = env.observation_space
    finally:
        env.close()
    got = load_acting_policy(policy).observation_space
    if getattr(got, "shape", None) != want.shape:
        size = f"{got.shape[0]} entries" if getattr(got, "shape", None) and len(got.shape) == 1 \
            else f"a {type(got).__name__} of shape {getattr(got, 'shape', None)}"
        raise ValueError(f"--policy {policy}: the policy reads observations of {size}, a run at "
                         f"rank {rank} gives {want.shape[0]}: expert iteration fits a policy of "
                         f"the one-player run (not a duel's)")


MARK = ".expert-iteration"          # in every folder this script makes as --out
RESULT = "expert_iteration.json"    # the iterations finished so far


def drop_unfinished(out: Path) -> None:
    """After a stop (Ctrl-C, an error): the iteration folders past the last finished one (listed
    in expert_iteration.json) go, and the whole folder if none finished, so nothing
    half-written is left; the finished iterations stay, as the docstring says."""
    done = 0
    try:
        done = len(json.loads((out / RESULT).read_text(encoding="utf-8"))["iterations"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if not done:
        shutil.rmtree(out, ignore_errors=True)
        return
    for folder in out.glob("iter_*"):
        if folder.name.removeprefix("iter_").isdigit() and int(folder.name[5:]) > done:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    from agents.train.expert_iteration import ExitSettings, run_expert_iteration, teacher_name
    from rune_env.envs.arguments import check_rank_mix
    s = ExitSettings(policy=a.policy, iterations=a.iterations, runs=a.runs, rank=a.rank,
                     seed=a.seed, jobs=a.jobs, n=a.n, temperature=a.temperature,
                     epsilon=a.epsilon, core=a.core, waste=a.waste, invest=a.invest,
                     epochs=a.epochs, holdout=a.holdout, patience=a.patience,
                     keep_demos=a.keep_demos, extra_demos=tuple(a.extra_demos),
                     batch_size=a.batch_size, learning_rate=a.learning_rate,
                     eval_episodes=a.eval_episodes, eval_seed=a.eval_seed,
                     rules=str(Path(a.rules).resolve()) if a.rules else None)
    try:
        check_rank_mix(rules, a.rank, "--rank")
        from agents import make_agent
        make_agent(teacher_name(a.policy, s), rules)        # the policy loads, the knobs hold
        check_observation_size(a.policy, a.rank, s.rules)   # before anything is written
        from agents.evaluation.demos import load_demos
        for path in a.extra_demos:          # data of these rules and this env, whole
            load_demos(path, rules.hash, strict=True,
                       env_kwargs={"rank": a.rank, **({"rules": s.rules} if s.rules else {})})
    except (ValueError, OSError) as exc:
        return fail(str(exc))
    out = Path(a.out) if a.out else Path("runs") / f"exit_{Path(a.policy).stem}_s{a.seed}"
    from agents.cli.args import check_output_dir
    if (problem := check_output_dir(out, "--out")):
        return fail(problem)
    if os.path.lexists(out):
        if not a.force:
            return fail(f"{out} exists (--force replaces it)")
        if not owned_dir(out, (MARK, RESULT)):
            return fail(f"{out} exists and is not an expert_iteration.py output (no {RESULT} "
                        f"or {MARK} in it): not replaced even with --force; pick another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARK).touch()           # --force may replace this folder later, and nothing else
    try:
        rows = run_expert_iteration(s, out, progress_on(a.progress), lines=not a.json)
    except BaseException:
        drop_unfinished(out)
        raise
    if a.json:
        print(json.dumps({"out": str(out), "rules_hash": rules.hash, "iterations": rows},
                         indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
