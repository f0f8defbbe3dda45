#!/usr/bin/env python3
"""Evaluate agents side by side.

    python scripts/evaluate.py --agents random scripted greedy runs/apprentice_s0/final_model.zip
                               [--rank R] [--episodes N] [--seed S] [--json] [--out DIR]
                               [--head-to-head]

Agents are `random`, `scripted`, `greedy` (or `greedy:NOISE`) or a model path. For each agent:
N whole runs on evaluation seeds (disjoint from every training seed by construction), and a
table of battle win rate, mean wins and clear rate, each with a 95% interval, rounds survived and
per-core rates. Writes DIR/eval.csv, DIR/eval.json and TensorBoard scalars under DIR/tb/<agent>/
with the same tags for every agent, so the policies sit side by side (default DIR:
runs/eval_<rank>_s<seed>).

`--head-to-head` also fights the agents' boards against each other: each agent drafts its runs
on the same seeds; in every round both reached, their boards fight in both seatings; the win
matrix gives, per pair, the share of those battles the row agent won (draws count half).
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import make_agent  # noqa: E402
from agents.evaluation import evaluate  # noqa: E402
from rune_env.rules import Board, default_rules  # noqa: E402
from agents.script_args import add_play_arguments, apply_play_arguments  # noqa: E402
from rune_env.battle.engines import battle_function  # noqa: E402
from rune_env.run.opponents import PoolError  # noqa: E402

TB_TAGS = ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived", "lamps_left",
           "mean_battle_duration")


def opponents_label(opponents: str | None, rules, rank: str) -> str:
    if opponents is not None:
        return "budget drafter" if opponents == "generator" else opponents
    from rune_env.envs.run_env import shipped_pool
    from rune_env.run.ranks import rank_index
    pool = shipped_pool(rules, rank_index(rules, rank))
    return str(pool.relative_to(ROOT)) if pool else "budget drafter (no shipped pool)"


def agent_label(name: str) -> str:
    p = Path(name)
    if p.suffix == ".zip" or p.exists():
        return f"{p.parent.name}/{p.stem}" if p.parent.name else p.stem
    return name


def head_to_head(results: dict[str, dict], rules) -> dict[str, dict[str, float]]:
    """Round-matched battles between the agents' boards, both seatings."""
    names = list(results)
    boards = {n: {} for n in names}   # name -> (run index, round) -> Board
    for n in names:
        for i, run in enumerate(results[n]["runs"]):
            for b in run["battles"]:
                boards[n][(i, b["round"])] = Board.from_json(b["board"], rules)
    matrix: dict[str, dict[str, float]] = {a: {} for a in names}
    for a in names:
        for b in names:
            if a == b:
                continue
            keys = sorted(set(boards[a]) & set(boards[b]))
            score = 0.0
            count = 0
            for key in keys:
                ba, bb = boards[a][key], boards[b][key]
                for seat_a, pair in ((0, (ba, bb)), (1, (bb, ba))):
                    r = battle_function()(pair[0], pair[1], rules)
                    score += 0.5 if r.winner is None else float(r.winner == seat_a)
                    count += 1
            matrix[a][b] = score / count if count else float("nan")
    return matrix


BOARD_IMAGES = 4   # runs per agent whose final board is drawn into TensorBoard


def final_boards(runs: list[dict], rules, count: int = BOARD_IMAGES) -> list:
    """The board each of the first `count` runs took into its last battle."""
    return [Board.from_json(r["battles"][-1]["board"], rules) for r in runs[:count] if r["battles"]]


def write_board_images(writer, tag: str, boards: list, rules, step: int = 0) -> None:
    """Pictures of boards (rune_env.pictures) as TensorBoard images, one per board."""
    from rune_env.pictures import board_rgb_array
    for i, b in enumerate(boards):
        writer.add_image(f"{tag}/{i}", board_rgb_array(b, rules, annotate=True), step,
                         dataformats="HWC")


def write_tensorboard(out_dir: Path, label: str, summary: dict, cores, boards=(), rules=None) -> None:
    """One sub-run per agent, every agent with the same tags (NaN for a core it never played),
    and pictures of the boards its first runs ended with (tag boards/final/<i>)."""
    from torch.utils.tensorboard import SummaryWriter
    safe = label.replace("/", "_")
    with SummaryWriter(str(out_dir / "tb" / safe)) as w:
        write_board_images(w, "boards/final", list(boards), rules)
        for tag in TB_TAGS:
            w.add_scalar(f"eval/{tag}", summary[tag], 0)
        for core in cores:
            v = summary["by_core"].get(core, {"clear_rate": float("nan"), "battle_win_rate": float("nan")})
            w.add_scalar(f"eval/clear_rate_core/{core}", v["clear_rate"], 0)
            w.add_scalar(f"eval/battle_win_rate_core/{core}", v["battle_win_rate"], 0)


def format_table(summaries: dict[str, dict]) -> str:
    lines = [f"{'agent':<28} {'runs':>5} {'battle win rate':>24} {'mean wins':>22} "
             f"{'clear rate':>22} {'rounds':>6}"]
    for name, s in summaries.items():
        lines.append(
            f"{name:<28} {s['episodes']:>5} "
            f"{s['battle_win_rate']:>7.3f} [{s['battle_ci'][0]:.3f}, {s['battle_ci'][1]:.3f}] "
            f"{s['mean_wins']:>6.2f} [{s['wins_ci'][0]:.2f}, {s['wins_ci'][1]:.2f}]   "
            f"{s['clear_rate']:>6.3f} [{s['clear_ci'][0]:.3f}, {s['clear_ci'][1]:.3f}] "
            f"{s['rounds_survived']:>6.2f}")
        cores = ", ".join(f"{c} {v['battle_win_rate']:.2f}/{v['clear_rate']:.2f}"
                          for c, v in s["by_core"].items())
        lines.append(f"{'':<28}   per core (battle win / clear): {cores}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Evaluate agents side by side.")
    p.add_argument("--agents", nargs="+", required=True)
    p.add_argument("--rank", default="apprentice")
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--seed", type=int, default=0, help="evaluation seed, >= 0")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", default=None)
    p.add_argument("--head-to-head", action="store_true")
    p.add_argument("--opponents", default=None,
                   help="a pool file, or 'generator' (default: the rank's shipped pool, as RuneRun-v0)")
    add_play_arguments(p)
    a = p.parse_args(argv)
    apply_play_arguments(a)
    if a.seed < 0:
        p.error("--seed must be >= 0 (evaluation seeds stay apart from training seeds)")
    rules = default_rules()
    out_dir = Path(a.out or ROOT / "runs" / f"eval_{a.rank}_s{a.seed}")
    env_kwargs = {"rank": a.rank, "opponents": a.opponents, "strict_pools": a.strict}
    results: dict[str, dict] = {}
    for name in a.agents:
        try:
            agent = make_agent(name, rules, seed=a.seed)
        except ValueError as exc:   # PolicyLoadError is a ValueError
            print(f"error: {exc}", file=sys.stderr)
            return 2
        try:
            results[agent_label(name)] = evaluate(agent, a.episodes, a.seed, env_kwargs)
        except PoolError as exc:    # a corrupt pool, or one of other rules with --strict
            print(f"error: {exc}", file=sys.stderr)
            return 2
    summaries = {n: {k: v for k, v in r.items() if k != "runs"} for n, r in results.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "eval.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "episodes", "battle_win_rate", "battle_lo", "battle_hi", "mean_wins",
                    "wins_lo", "wins_hi", "clear_rate", "clear_lo", "clear_hi", "rounds_survived"])
        for n, s in summaries.items():
            w.writerow([n, s["episodes"], s["battle_win_rate"], *s["battle_ci"], s["mean_wins"],
                        *s["wins_ci"], s["clear_rate"], *s["clear_ci"], s["rounds_survived"]])
    for n, s in summaries.items():
        write_tensorboard(out_dir, n, s, list(rules.spec.cores),
                          final_boards(results[n]["runs"], rules), rules)
    out = {"rank": a.rank, "seed": a.seed, "rules_hash": rules.hash,
           "opponents": opponents_label(a.opponents, rules, a.rank),
           "agents": {n: {k: s[k] for k in ("episodes", "battle_win_rate", "battle_ci",
                                             "mean_wins", "wins_ci", "clear_rate", "clear_ci",
                                             "rounds_survived", "by_core")}
                      for n, s in summaries.items()}}
    if a.head_to_head and len(results) > 1:
        out["head_to_head"] = head_to_head(results, rules)
    (out_dir / "eval.json").write_text(json.dumps(out, indent=1))
    if a.json:
        print(json.dumps(out))
    else:
        print(format_table(summaries))
        if "head_to_head" in out:
            names = list(out["head_to_head"])
            print("\nhead to head (row's share of battles won vs column, both seatings):")
            print(" " * 28 + "".join(f"{n[:14]:>15}" for n in names))
            for r in names:
                print(f"{r:<28}" + "".join(
                    f"{'-':>15}" if r == c else f"{out['head_to_head'][r][c]:>15.3f}" for c in names))
        print(f"\nwritten: {out_dir}/eval.csv, eval.json, tb/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
