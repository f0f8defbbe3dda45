#!/usr/bin/env python3
"""Record an agent's demonstrations for behaviour cloning (the `pretrain:` section of
scripts/train.py's configs).

    python scripts/collect_demos.py --out FILE.npz [--agent greedy] [--runs N] [--seed S]
                                    [--rank R] [--opponents generator|POOL] [--rules FILE]
                                    [--jobs J] [--force] [--json] [--no-progress]

Plays N whole runs of RuneRun-v0 with the agent (any name make_agent knows: greedy, planner,
planner:boards=100, ...) on demonstration run seeds of S (training run seeds, never an
evaluation's: agents/evaluation/demos.py) and writes, atomically, FILE.npz: every step's flat
observation (as MlpPolicy sees it), its legal actions (bits packed), the action taken, the reward
and the run seed, with metadata (agent, seed, runs, rules hash, commit, shapes). The file is data
(numpy arrays, read without pickles), the same bytes for the same arguments on one machine, and the
same whatever --jobs. An existing FILE.npz is kept unless --force (checked before any run).
Prints a summary (one JSON object with --json). A bad argument is one `error: ...` line and exit
status 2. A progress bar goes to stderr.

    python scripts/collect_demos.py --check FILE.npz [--rules FILE] [--strict]

reads a demonstrations file back and prints its metadata (a malformed one is one `error: ...` line,
exit status 2; one of other rules warns, and --strict refuses it).
"""
from __future__ import annotations

import json
import os

from agents import make_agent
from agents.cli.args import (MAX_JOBS, MAX_RUNS, add_count_argument, add_json_argument,
                             add_opponents_argument, add_rules_argument, add_seed_argument,
                             agent_name, check_output, fail, jobs_int, parse_with_rules,
                             rules_env_kwargs, script_parser)
from agents.cli.progress import add_progress_argument, bar, progress_on


def build_parser(rules=None):
    p = script_parser(__doc__)
    p.add_argument("--out", metavar="FILE.npz",
                   help="the demonstrations file to write (default: none; required unless --check)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file (default: keep it and stop)")
    p.add_argument("--check", metavar="FILE.npz",
                   help="read this demonstrations file and print its metadata instead (default: none)")
    p.add_argument("--agent", type=agent_name, default="greedy",
                   help="the demonstrator: greedy, greedy:NOISE, planner[:KEY=VALUE,...], a "
                        "policy file, by_round:1=A;3=B (A in rounds 1-2, B from round 3: "
                        "several teachers to distil into one policy), or "
                        "sampled:policy=FILE[,KEY=VALUE,...] (a policy improved by search at "
                        "play time: its teacher in expert iteration) (default: greedy)")
    add_count_argument(p, "--runs", 20, "runs to record", high=MAX_RUNS)
    add_seed_argument(p, "the demonstrations' seed (agent and run seeds)")
    p.add_argument("--rank", default="apprentice",
                   help="the rank played, a name or number of the rules' ranks (default apprentice)")
    add_opponents_argument(p)
    add_rules_argument(p)
    p.add_argument("--jobs", type=jobs_int, default=1, metavar="J",
                   help=f"processes playing the runs, 1..{MAX_JOBS} (default 1; the file is the same "
                        f"for any number)")
    p.add_argument("--strict", action="store_true",
                   help="with --check: refuse a file made under other rules (default: warn)")
    add_json_argument(p, "one JSON object instead of the summary line")
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    from agents.evaluation.demos import DemosError, collect_demos, load_demos, save_demos
    if a.check:
        try:
            demos = load_demos(a.check, rules.hash, a.strict, rules_env_kwargs(a))
        except DemosError as exc:
            return fail(str(exc))
        print(json.dumps(demos.meta, indent=None if not a.json else 1, sort_keys=True))
        return 0
    if a.out is None:
        return fail("--out FILE.npz is required (or --check FILE.npz)")
    if os.path.lexists(a.out) and not os.path.isdir(a.out) and not a.force:
        return fail(f"--out {a.out}: exists (pass --force to replace it)")
    if problem := check_output(a.out, "--out", (".npz",)):
        return fail(problem)
    env_kwargs = {"rank": a.rank, **rules_env_kwargs(a)}
    if a.opponents is not None:
        env_kwargs["opponents"] = a.opponents
    try:
        from rune_env.envs.run_env import RuneRunEnv
        RuneRunEnv(**env_kwargs).close()        # a bad rank or pool: one line, before any run
        make_agent(a.agent, rules, seed=0)
    except (ValueError, OSError) as exc:
        return fail(str(exc))
    with bar(a.runs, f"demonstrations ({a.agent})", progress_on(a.progress)) as pb:
        demos = collect_demos(a.agent, a.runs, a.seed, env_kwargs, a.jobs, pb)
    save_demos(demos, a.out)
    summary = {"out": a.out, **demos.meta}
    print(json.dumps(summary, indent=1, sort_keys=True) if a.json else
          f"{a.out}: {demos.meta['steps']} steps of {a.runs} runs of {a.agent} (seed {a.seed}, "
          f"rules {demos.meta['rules_hash']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
