#!/usr/bin/env python3
"""A ladder of agents and opponent pools from round-matched head-to-head battles.

    python scripts/ladder.py --agents greedy random [MODEL.zip ...] [--pools configs/opponents/*.json]
                             [--episodes N] [--samples K] [--seed S] [--json] [--out DIR]

Each agent drafts N runs on evaluation seeds; its board of every round fights (both seatings)
the other agents' boards of the same seed and round, and K boards of the same round sampled from
each pool. The results are fitted into Bradley-Terry ratings on an Elo scale (agents/ratings.py);
the ladder is printed and written to TensorBoard (DIR/tb/<name>, tag ladder/rating).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import make_agent  # noqa: E402
from agents.evaluation import evaluate  # noqa: E402
from agents.ratings import fit_bradley_terry  # noqa: E402
from rune_env.rules import Board, default_rules  # noqa: E402
from rune_env.run.opponents import PoolError, load_pool  # noqa: E402
from agents.script_args import add_play_arguments, apply_play_arguments  # noqa: E402
from rune_env.battle.engines import battle_function  # noqa: E402


def score(a: Board, b: Board, rules) -> list[float]:
    """a's score in both seatings (1 win, 0.5 draw)."""
    out = []
    for seat, pair in ((0, (a, b)), (1, (b, a))):
        r = battle_function()(pair[0], pair[1], rules)
        out.append(0.5 if r.winner is None else float(r.winner == seat))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Ratings of agents and pools from head-to-head battles.")
    p.add_argument("--agents", nargs="+", required=True)
    p.add_argument("--pools", nargs="*", default=[])
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--samples", type=int, default=4,
                   help="pool boards per agent board, drawn by their counts")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", default=None)
    add_play_arguments(p)
    a = p.parse_args(argv)
    apply_play_arguments(a)
    rules = default_rules()
    rng = np.random.default_rng(a.seed)
    boards: dict[str, dict] = {}
    for name in a.agents:
        try:
            agent = make_agent(name, rules, seed=a.seed)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        res = evaluate(agent, a.episodes, a.seed)
        boards[name] = {(i, b["round"]): Board.from_json(b["board"], rules)
                        for i, run in enumerate(res["runs"]) for b in run["battles"]}
    pools = {}
    for path in a.pools:
        try:
            pool = load_pool(path, rules, strict=a.strict)
        except PoolError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        # each round's boards with their sampling weights (a ghost's count: how many drafting
        # runs drafted it), so the ladder meets a pool's boards as often as the env fields them
        pools[f"pool:{Path(path).stem}"] = {
            r: (pool.boards(r, rules), np.array(pool.counts(r), dtype=float)) for r in pool.rounds}
    results: list[tuple[str, str, float]] = []
    names = list(boards)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            for key in sorted(set(boards[x]) & set(boards[y])):
                for s in score(boards[x][key], boards[y][key], rules):
                    results.append((x, y, s))
        for pname, by_round in pools.items():
            for (_, rnd), board in sorted(boards[x].items()):
                options, weights = by_round.get(rnd, ([], None))
                if not options:
                    continue
                for k in rng.choice(len(options), size=a.samples, p=weights / weights.sum()):
                    for s in score(board, options[int(k)], rules):
                        results.append((x, pname, s))
    ratings = fit_bradley_terry(results)
    games = {n: sum(1 for r in results if n in r[:2]) for n in ratings}
    scores = {n: sum(r[2] if r[0] == n else 1 - r[2] for r in results if n in r[:2]) for n in ratings}
    ladder = sorted(ratings, key=ratings.get, reverse=True)
    out = {"rules_hash": rules.hash, "ladder": [
        {"name": n, "rating": ratings[n], "games": games[n],
         "score": scores[n] / games[n] if games[n] else None} for n in ladder]}
    out_dir = Path(a.out or ROOT / "runs" / f"ladder_s{a.seed}")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "ladder.json").write_text(json.dumps(out, indent=1))
    from torch.utils.tensorboard import SummaryWriter
    for n in ladder:
        with SummaryWriter(str(out_dir / "tb" / n.replace("/", "_").replace(":", "_"))) as w:
            w.add_scalar("ladder/rating", ratings[n], 0)
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{'#':>2} {'name':<40} {'rating':>7} {'games':>6} {'score':>6}")
        for i, row in enumerate(out["ladder"], 1):
            print(f"{i:>2} {row['name']:<40} {row['rating']:>7.0f} {row['games']:>6} "
                  f"{row['score'] if row['score'] is not None else float('nan'):>6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
