#!/usr/bin/env python3
"""Check that the ranks get harder: one reference agent against every rank's pool and rules.

    python scripts/calibrate_ranks.py --agent greedy [--episodes N] [--seed S] [--pools-dir DIR]
                                      [--pool RANK=FILE ...] [--ranks R ...] [--rules FILE]
                                      [--json] [--no-progress]

For each rank R:
  pool_win_rate  the agent plays N runs under apprentice rules with its opponents drawn from R's
                 pool at the matching round (so the pools themselves are compared); its battle win
                 rate, with a Wilson 95% interval (pool_ci);
  clear_rate     the agent plays N runs under R's full rules (against R's pool, as RuneRun-v0
                 does by default); the share cleared, with a Wilson 95% interval (clear_ci).
Prints a table; `--json` prints {"ranks": {"apprentice": {"pool_win_rate", "pool_ci",
"clear_rate", "clear_ci", ...}, ...}, "graded": bool (null: one rank, no verdict), "problems":
[...]}. The last line is the
verdict: "graded" (each next rank's pool win rate lower with the 95% intervals apart, the clear
rate never rising) or "not graded: " and the pairs that overlap. `--pool RANK=FILE` measures that
file as RANK's pool (repeatable); a rank without one takes --pools-dir's (default: the shipped
pool of the rank for the rules, as RuneRun-v0 fields it), and with --pool and no --ranks only the
ranks named by --pool are measured. `--rules FILE` plays under a rules file (its ranks, the
agent, the runs): pools drafted under it (scripts/make_opponents.py --rules) are fielded without
a warning. Every pool is checked before anything is played; a bad
argument, rank, agent or pool file is one `error: ...` line and exit status 2. A progress bar
(runs played) goes to stderr when it is a terminal (--progress forces it, --no-progress hides it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from agents import make_agent
from agents.evaluation.runs import evaluate, grading, wilson
from agents.cli.fanout import add_ray_argument, ray_problem
from agents.evaluation.runs import evaluate_by_name
from agents.cli.progress import bar
from agents.evaluation.runs import MAX_EPISODES
from agents.cli.args import (add_count_argument, add_json_argument, add_play_arguments,
                             add_rules_argument, add_seed_argument, agent_name,
                             apply_play_arguments, fail, load_pool_once, parse_with_rules,
                             rules_env_kwargs, script_parser)
from rune_env.run.opponents import PoolError

def build_parser(rules=None):
    """The command line (`rules`: parse_with_rules's; the ranks are checked after parsing)."""
    p = script_parser(__doc__)
    p.add_argument("--agent", type=agent_name, required=True,
                   help="the reference agent: random, scripted, greedy, greedy:NOISE, planner[:KEY=VALUE,...] (the search player) or the path "
                        "of a saved model (.zip) or exported policy (.pt) (required)")
    add_count_argument(p, "--episodes", 100, "runs per rank and measure", high=MAX_EPISODES)
    add_seed_argument(p)
    p.add_argument("--pools-dir", default=None, metavar="DIR",
                   help="the directory of the pools <rank>.json.gz (or .json) (default: the "
                        "shipped pools of the rules, configs/opponents or its folder of the "
                        "rules' hash)")
    p.add_argument("--pool", action="append", default=[], metavar="RANK=FILE",
                   help="RANK's pool is FILE (repeatable; default: none, --pools-dir's pools)")
    p.add_argument("--ranks", nargs="+", default=None, metavar="RANK",
                   help="the ranks to measure (default: every rank of the rules, or those "
                        "--pool names)")
    # the parser's tail and main's first lines share make_opponents.py's shape, not its options
    add_rules_argument(p)
    add_json_argument(p)
    add_play_arguments(p)
    add_ray_argument(p)
    return p


def pools_of(a, rules, ranks: list[str], given: dict[str, Path]) -> dict[str, Path]:
    """Each rank's pool: --pool's, else --pools-dir's <rank>.json.gz (or .json), else the rank's
    shipped pool for the rules (`shipped_pool`). Every pool is loaded here, before anything is
    played (one warning line for a pool of other rules); a missing or bad one is a PoolError."""
    from rune_env.envs.run_env import shipped_pool
    pools_dir = Path(a.pools_dir) if a.pools_dir is not None else None
    if pools_dir is not None and any(r not in given for r in ranks) and not pools_dir.is_dir():
        raise PoolError(f"--pools-dir {pools_dir}: no such directory")
    names = [r.id for r in rules.spec.ranks]
    pools = {}
    for rank in ranks:
        if rank in given:
            pool = given[rank]
        elif pools_dir is not None:
            pool = next((pools_dir / f"{rank}{suffix}" for suffix in (".json.gz", ".json")
                         if (pools_dir / f"{rank}{suffix}").is_file()), None)
            if pool is None:
                raise PoolError(f"no pool for rank {rank}: {pools_dir / rank}.json.gz (or .json)")
        else:
            pool = shipped_pool(rules, names.index(rank))
            if pool is None:
                raise PoolError(f"no shipped pool for rank {rank}: give --pool {rank}=FILE")
        # other rules, another rank's pool, rounds without ghosts: one warning line each
        load_pool_once(pool, rules, strict=a.strict, rank=rank)
        pools[rank] = pool
    return pools


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    names = [r.id for r in rules.spec.ranks]
    given: dict[str, Path] = {}
    for item in a.pool:
        rank, sep, file = item.partition("=")
        if not sep or not file:
            return fail(f"--pool {item!r}: expected RANK=FILE")
        if rank not in names:
            return fail(f"--pool: unknown rank {rank!r} (one of {', '.join(names)})")
        if rank in given:
            return fail(f"--pool {item!r}: {rank} is given twice (--pool {rank}={given[rank]} "
                        f"before it); one pool per rank")
        given[rank] = Path(file)
    ranks = a.ranks or ([r for r in names if r in given] if given else names)
    for rank in ranks:
        if rank not in names:
            return fail(f"--ranks: unknown rank {rank!r} (one of {', '.join(names)})")
    ranks = [r for r in names if r in ranks]        # easiest first, as the verdict reads them
    try:
        pools = pools_of(a, rules, ranks, given)
    except PoolError as exc:    # missing, corrupt, not a pool, or of other rules with --strict
        return fail(str(exc))
    apply_play_arguments(a)
    try:
        checked = make_agent(a.agent, rules, seed=a.seed, strict=a.strict)
    except ValueError as exc:       # an unknown name, a policy file that does not load
        return fail(str(exc))
    out: dict = {"agent": a.agent, "episodes": a.episodes, "seed": a.seed, "rules_hash": rules.hash,
                 "ranks": {}}
    with bar(2 * a.episodes * len(ranks), "calibrating", a.progress) as progress:
        for rank in ranks:
            pool = pools[rank]
            progress.set_description(rank)
            # a fresh agent per rank, as before (the first is the one just checked)
            agent, checked = checked or make_agent(a.agent, rules, seed=a.seed, strict=a.strict), None
            fielded = {"opponents": str(pool), "strict_pools": a.strict, **rules_env_kwargs(a)}
            play = (lambda kw: evaluate(agent, a.episodes, a.seed, kw, progress=progress)) \
                if a.ray is None else \
                (lambda kw: evaluate_by_name(a.agent, a.episodes, a.seed, kw, a.ray,
                                             fielded.get("rules"), a.seed, a.strict,
                                             progress))   # the same runs, as Ray tasks
            try:
                vs_pool = play({"rank": names[0], **fielded})     # the easiest rank's rules
                full = play({"rank": rank, **fielded})
            except PoolError as exc:    # corrupt, or of other rules with --strict
                return fail(str(exc))
            won = round(vs_pool["battle_win_rate"] * vs_pool["battles"])
            cleared = round(full["clear_rate"] * full["episodes"])
            out["ranks"][rank] = {
                "pool_win_rate": vs_pool["battle_win_rate"], "pool_ci": list(wilson(won, vs_pool["battles"])),
                "pool_battles": vs_pool["battles"],
                "clear_rate": full["clear_rate"], "clear_ci": list(wilson(cleared, full["episodes"])),
                "mean_wins": full["mean_wins"],
            }
    problems = grading(out["ranks"])
    # one rank is no grade: null, as the table's "no verdict"
    out["graded"] = (not problems) if len(out["ranks"]) > 1 else None
    out["problems"] = problems
    if a.json:
        print(json.dumps(out))
    else:
        print(f"agent {a.agent}, {a.episodes} runs per cell, seed {a.seed}, rules {rules.hash}")
        print(f"{'rank':<11} {'pool win rate':>14} {'95% CI':>14} {'battles':>8} {'clear rate':>11} "
              f"{'95% CI':>14}")
        for rank, r in out["ranks"].items():
            print(f"{rank:<11} {r['pool_win_rate']:>14.3f} [{r['pool_ci'][0]:.3f}, {r['pool_ci'][1]:.3f}] "
                  f"{r['pool_battles']:>8} {r['clear_rate']:>11.3f} [{r['clear_ci'][0]:.3f}, {r['clear_ci'][1]:.3f}]")
        if len(out["ranks"]) > 1:
            print("graded" if not problems else "not graded: " + "; ".join(problems))
        else:
            print("no verdict: one rank measured (give two or more to grade them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
