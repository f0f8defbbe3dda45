#!/usr/bin/env python3
"""Check that the ranks get harder: one reference agent against every rank's pool and rules.

    python scripts/calibrate_ranks.py --agent greedy [--episodes N] [--seed S] [--pools-dir DIR]
                                      [--pool RANK=FILE ...] [--ranks R ...] [--json]
                                      [--no-progress]

For each rank R:
  pool_win_rate  the agent plays N runs under apprentice rules with its opponents drawn from R's
                 pool at the matching round (so the pools themselves are compared); its battle win
                 rate, with a Wilson 95% interval (pool_ci);
  clear_rate     the agent plays N runs under R's full rules (against R's pool, as RuneRun-v0
                 does by default); the share cleared, with a Wilson 95% interval (clear_ci).
Prints a table; `--json` prints {"ranks": {"apprentice": {"pool_win_rate", "pool_ci",
"clear_rate", "clear_ci", ...}, ...}, "graded": bool, "problems": [...]}. The last line is the
verdict: "graded" (each next rank's pool win rate lower with the 95% intervals apart, the clear
rate never rising) or "not graded: " and the pairs that overlap. `--pool RANK=FILE` measures that
file as RANK's pool (repeatable); a rank without one takes --pools-dir's, and with --pool and no
--ranks only the ranks named by --pool are measured. Every pool is checked before anything is played; a bad
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
from agents.cli.args import (add_count_argument, add_json_argument,
                             add_play_arguments, add_seed_argument, apply_play_arguments, fail,
                             load_pool_once, script_parser)
from rune_env.rules import default_rules
from rune_env.run.opponents import PoolError

DEFAULT_POOLS = ROOT / "configs" / "opponents"


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--agent", required=True,
                   help="the reference agent: random, scripted, greedy, greedy:NOISE or the path "
                        "of a saved model (.zip) or exported policy (.pt) (required)")
    add_count_argument(p, "--episodes", 100, "runs per rank and measure", high=MAX_EPISODES)
    add_seed_argument(p)
    p.add_argument("--pools-dir", default=str(DEFAULT_POOLS), metavar="DIR",
                   help="the directory of the pools <rank>.json.gz (or .json) (default configs/opponents)")
    p.add_argument("--pool", action="append", default=[], metavar="RANK=FILE",
                   help="RANK's pool is FILE (repeatable; default: none, --pools-dir's pools)")
    p.add_argument("--ranks", nargs="+", default=None, metavar="RANK",
                   help="the ranks to measure (default: every rank of the rules, or those "
                        "--pool names)")
    # the parser's tail and main's first lines share make_opponents.py's shape, not its options
    add_json_argument(p)
    add_play_arguments(p)
    add_ray_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    rules = default_rules()
    names = [r.id for r in rules.spec.ranks]
    given: dict[str, Path] = {}
    for item in a.pool:
        rank, sep, file = item.partition("=")
        if not sep or not file:
            return fail(f"--pool {item!r}: expected RANK=FILE")
        if rank not in names:
            return fail(f"--pool: unknown rank {rank!r} (one of {', '.join(names)})")
        given[rank] = Path(file)
    ranks = a.ranks or ([r for r in names if r in given] if given else names)
    for rank in ranks:
        if rank not in names:
            return fail(f"--ranks: unknown rank {rank!r} (one of {', '.join(names)})")
    ranks = [r for r in names if r in ranks]        # easiest first, as the verdict reads them
    pools_dir = Path(a.pools_dir)
    if any(r not in given for r in ranks) and not pools_dir.is_dir():
        return fail(f"--pools-dir {pools_dir}: no such directory")
    # every pool is checked before anything is played: a missing or bad one fails at once
    pools = {}
    for rank in ranks:
        found = [given[rank]] if rank in given else [
            pools_dir / f"{rank}{suffix}" for suffix in (".json.gz", ".json")
            if (pools_dir / f"{rank}{suffix}").is_file()]
        if not found:
            return fail(f"no pool for rank {rank}: {pools_dir / rank}.json.gz (or .json)")
        pool = found[0]
        try:
            load_pool_once(pool, rules, strict=a.strict)    # other rules: one warning line
        except PoolError as exc:    # corrupt, not a pool, or of other rules with --strict
            return fail(str(exc))
        pools[rank] = pool
    apply_play_arguments(a)
    try:
        checked = make_agent(a.agent, rules, seed=a.seed, strict=a.strict)
    except ValueError as exc:       # an unknown name, a policy file that does not load
        return fail(str(exc))
    out: dict = {"agent": a.agent, "episodes": a.episodes, "rules_hash": rules.hash, "ranks": {}}
    with bar(2 * a.episodes * len(ranks), "calibrating", a.progress) as progress:
        for rank in ranks:
            pool = pools[rank]
            progress.set_description(rank)
            # a fresh agent per rank, as before (the first is the one just checked)
            agent, checked = checked or make_agent(a.agent, rules, seed=a.seed, strict=a.strict), None
            play = (lambda kw: evaluate(agent, a.episodes, a.seed, kw, progress=progress)) \
                if a.ray is None else \
                (lambda kw: evaluate_by_name(a.agent, a.episodes, a.seed, kw, a.ray, None,
                                             a.seed, a.strict, progress))   # the same runs, as Ray tasks
            try:
                vs_pool = play({"rank": "apprentice", "opponents": str(pool),
                                "strict_pools": a.strict})
                full = play({"rank": rank, "opponents": str(pool), "strict_pools": a.strict})
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
    out["graded"], out["problems"] = not problems, problems
    if a.json:
        print(json.dumps(out))
    else:
        print(f"agent {a.agent}, {a.episodes} runs per cell, rules {rules.hash}")
        print(f"{'rank':<11} {'pool win rate':>14} {'95% CI':>16} {'battles':>8} {'clear rate':>11} {'95% CI':>16}")
        for rank, r in out["ranks"].items():
            print(f"{rank:<11} {r['pool_win_rate']:>14.3f} [{r['pool_ci'][0]:.3f}, {r['pool_ci'][1]:.3f}] "
                  f"{r['pool_battles']:>8} {r['clear_rate']:>11.3f} [{r['clear_ci'][0]:.3f}, {r['clear_ci'][1]:.3f}]")
        if len(out["ranks"]) > 1:
            print("graded" if not problems else "not graded: " + "; ".join(problems))
    return 0


if __name__ == "__main__":
    sys.exit(main())
