#!/usr/bin/env python3
"""Make an opponent pool for a rank from agents' boards ("ghosts").

    python scripts/make_opponents.py --rank R --agents A [A ...] [--runs N] [--seed S]
                                     [--max-round M] --out FILE [--force]

Each agent plays N runs; every board it takes into battle is recorded with its agent, run seed,
round and rank. Ghosts of rank R are drafted with the opponent side's rules of R: from mentor up
the drafting agent's income and starting mana are x the rank's opponent budget factor (D-44);
journeyman's extra rune and sage's boss rules are added when a ghost is fielded, not here. The
drafting runs play on past lost lamps and the 10th win up to round M (default 15), so every round
gets ghosts. Duplicates are removed; a summary (boards per round, kinds, grades, cores) is
printed; the pool file is written atomically (a killed run leaves the old file) and an existing
file is kept unless --force.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import make_agent  # noqa: E402
from agents.evaluation import eval_run_seed  # noqa: E402
from rune_env.envs.run_env import RuneRunEnv  # noqa: E402
from rune_env.rules import default_rules  # noqa: E402
from rune_env.run.opponents import Pool, save_pool  # noqa: E402
from rune_env.run.ranks import rank_effects, rank_index  # noqa: E402


def drafting_overrides(rules, rank: int) -> dict:
    """The opponent side's economy of `rank`: income and start mana x the budget factor."""
    x = rank_effects(rules, rank).opponent_budget_x
    run = rules.spec.run
    out = {"run.endless": True}
    if x != 1.0:
        out["run.income"] = int(math.floor(run.income * x + 1e-9))
        out["run.start_mana"] = int(math.floor(run.start_mana * x + 1e-9))
    return out


def ghosts_of(agent_name: str, rank: int, runs: int, seed: int, max_round: int,
              rules, env_kwargs: dict | None = None) -> list[dict]:
    """Play `runs` drafting runs and return a ghost per battle (rounds 1..max_round)."""
    agent = make_agent(agent_name, rules, seed=seed)
    env = RuneRunEnv(rank=0, rules_overrides=drafting_overrides(rules, rank), **(env_kwargs or {}))
    rank_name = rules.spec.ranks[rank].id
    out = []
    for i in range(runs):
        run_seed = eval_run_seed(seed, i)
        obs, info = env.reset(options={"run_seed": run_seed})
        agent.reset(run_seed)
        env.state.lamps = 10**6   # play on past lost lamps (observations clip lamps at 1)
        while True:
            state = env.state if getattr(agent, "needs_state", False) else None
            obs, _, term, trunc, info = env.step(agent.act(obs, info["action_mask"], state=state))
            b = info.get("battle")
            if b is not None:
                out.append({"board": b["board"], "agent": agent_name, "seed": run_seed,
                            "round": b["round"], "rank": rank_name})
                if b["round"] >= max_round:
                    break
            if term or trunc:
                break
    return out


def dedupe(ghosts: list[dict]) -> list[dict]:
    seen, out = set(), []
    for g in ghosts:
        key = (g["round"], json.dumps(g["board"], sort_keys=True))
        if key not in seen:
            seen.add(key)
            out.append(g)
    return out


def summary(pool: Pool) -> str:
    lines = [f"pool for {pool.rank}: {sum(len(v) for v in pool.rounds.values())} boards"]
    for rnd, ghosts in sorted(pool.rounds.items()):
        kinds = Counter(k for g in ghosts for k, _ in g["board"]["runes"].values())
        grades = Counter(gr for g in ghosts for _, gr in g["board"]["runes"].values())
        cores = Counter(g["board"].get("core") for g in ghosts)
        agents = Counter(g["agent"] for g in ghosts)
        lines.append(f"round {rnd:>2}: {len(ghosts):>4} boards | agents "
                     + ", ".join(f"{a} {n}" for a, n in agents.most_common())
                     + " | kinds " + ", ".join(f"{k} {n}" for k, n in kinds.most_common(5))
                     + " | grades " + ", ".join(f"{g}:{n}" for g, n in sorted(grades.items()))
                     + " | cores " + ", ".join(f"{c} {n}" for c, n in cores.most_common()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Make an opponent pool for a rank from agents' boards.")
    p.add_argument("--rank", required=True)
    p.add_argument("--agents", nargs="+", required=True)
    p.add_argument("--runs", type=int, default=20, help="runs per agent")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-round", type=int, default=15)
    p.add_argument("--out", required=True)
    p.add_argument("--force", action="store_true")
    a = p.parse_args(argv)
    rules = default_rules()
    out = Path(a.out)
    if out.exists() and not a.force:
        print(f"error: {out} exists (pass --force to replace it)", file=sys.stderr)
        return 2
    try:
        rank = rank_index(rules, a.rank if not a.rank.isdigit() else int(a.rank))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ghosts: list[dict] = []
    for i, name in enumerate(a.agents):
        try:
            ghosts += ghosts_of(name, rank, a.runs, a.seed * 1000 + i, a.max_round, rules)
        except ValueError as exc:
            print(f"error: agent {name!r}: {exc}", file=sys.stderr)
            return 2
    ghosts = dedupe(ghosts)
    rounds: dict[int, list[dict]] = {}
    for g in ghosts:
        rounds.setdefault(g["round"], []).append(g)
    pool = Pool(rules_hash=rules.hash, rank=rules.spec.ranks[rank].id, rounds=rounds,
                provenance={"agents": a.agents, "runs": a.runs, "seed": a.seed,
                            "max_round": a.max_round, "script": "scripts/make_opponents.py"})
    save_pool(pool, out)
    print(summary(pool))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
