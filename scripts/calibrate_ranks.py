#!/usr/bin/env python3
"""Check that the ranks get harder: one reference agent against every rank's pool and rules.

    python scripts/calibrate_ranks.py --agent greedy [--episodes N] [--seed S] [--pools-dir DIR] [--json]

For each rank R:
  pool_win_rate  the agent plays N runs under apprentice rules with its opponents drawn from R's
                 pool at the matching round (so the pools themselves are compared); its battle win
                 rate, with a Wilson 95% interval (pool_ci);
  clear_rate     the agent plays N runs under R's full rules (against R's pool, as RuneRun-v0
                 does by default); the share cleared, with a Wilson 95% interval (clear_ci).
Prints a table; `--json` prints {"ranks": {"apprentice": {"pool_win_rate", "pool_ci",
"clear_rate", "clear_ci", ...}, ...}}.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import make_agent  # noqa: E402
from agents.evaluation import evaluate, wilson  # noqa: E402
from rune_env.rules import default_rules  # noqa: E402
from agents.script_args import add_play_arguments, apply_play_arguments  # noqa: E402
from rune_env.run.opponents import PoolError  # noqa: E402

DEFAULT_POOLS = ROOT / "configs" / "opponents"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Pool win rate and clear rate per rank for one agent.")
    p.add_argument("--agent", required=True)
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pools-dir", default=str(DEFAULT_POOLS))
    p.add_argument("--ranks", nargs="*", default=None, help="default: every rank")
    p.add_argument("--json", action="store_true")
    add_play_arguments(p)
    a = p.parse_args(argv)
    apply_play_arguments(a)
    rules = default_rules()
    ranks = a.ranks or [r.id for r in rules.spec.ranks]
    out: dict = {"agent": a.agent, "episodes": a.episodes, "rules_hash": rules.hash, "ranks": {}}
    for rank in ranks:
        pool = Path(a.pools_dir) / f"{rank}.json"
        if not pool.exists():
            print(f"error: no pool for rank {rank}: {pool}", file=sys.stderr)
            return 2
        try:
            agent = make_agent(a.agent, rules, seed=a.seed)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        try:
            vs_pool = evaluate(agent, a.episodes, a.seed, {"rank": "apprentice", "opponents": str(pool),
                                                             "strict_pools": a.strict})
            full = evaluate(agent, a.episodes, a.seed, {"rank": rank, "opponents": str(pool),
                                                           "strict_pools": a.strict})
        except PoolError as exc:    # corrupt, or of other rules with --strict
            print(f"error: {exc}", file=sys.stderr)
            return 2
        won = round(vs_pool["battle_win_rate"] * vs_pool["battles"])
        cleared = round(full["clear_rate"] * full["episodes"])
        out["ranks"][rank] = {
            "pool_win_rate": vs_pool["battle_win_rate"], "pool_ci": list(wilson(won, vs_pool["battles"])),
            "pool_battles": vs_pool["battles"],
            "clear_rate": full["clear_rate"], "clear_ci": list(wilson(cleared, full["episodes"])),
            "mean_wins": full["mean_wins"],
        }
    if a.json:
        print(json.dumps(out))
    else:
        print(f"agent {a.agent}, {a.episodes} runs per cell, rules {rules.hash}")
        print(f"{'rank':<11} {'pool win rate':>14} {'95% CI':>16} {'battles':>8} {'clear rate':>11} {'95% CI':>16}")
        for rank, r in out["ranks"].items():
            print(f"{rank:<11} {r['pool_win_rate']:>14.3f} [{r['pool_ci'][0]:.3f}, {r['pool_ci'][1]:.3f}] "
                  f"{r['pool_battles']:>8} {r['clear_rate']:>11.3f} [{r['clear_ci'][0]:.3f}, {r['clear_ci'][1]:.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
