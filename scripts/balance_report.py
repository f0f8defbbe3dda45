#!/usr/bin/env python3
"""Balance report for designers: how long battles last, how often they time out, and how the
heuristic drafter fares against the default opponents.

    python scripts/balance_report.py [--battles N] [--runs N] [--seed S] [--jobs J] [--rules F]
                                     [--variant dice] [--json] [--no-progress]

Per round 1..12: N battles between boards the drafter builds in that round of a run (runs played
with lamps that never run out, so every round is reached) and that round's default opponent:
median duration, share ending at the timeout, share ending in overdrive (after 20 s), seals per
battle (both sides), the drafter's win rate with its Wilson 95% interval (each battle is of its
own run). Then N whole apprentice runs: battle win rate (with a 95% interval clustered by run:
a run's battles share its board), mean wins, clear rate (with its Wilson 95% interval); and win
rates by core, by rune kind on the board and by relic held (battles of
the same runs, so counts beside them, not intervals). The rules hash and seed head the table.

With the dice variant (`--variant dice`, or a rules file with `variant: dice`; RULES.md section 12)
every battle gets a seed from its run's generator, and the per-round table gains two columns: the
share of battles a burst decides (a side's stored mana beyond 5M) and the share a mana burn
decides (a burn leaving the loser's HP at 0).

A bad number or rules file (missing, not YAML, against the schema) is one `error: ...` line and
exit status 2, before anything is played. Progress bars (runs played) go to stderr when it is a
terminal (--progress forces them, --no-progress hides them); never to stdout.
"""
from __future__ import annotations

import json
import statistics
import sys
from collections import deque
from concurrent.futures import ProcessPoolExecutor

from rune_env.battle.engine import battle as reference_battle
from agents.evaluation.runs import wilson, wilson_clustered
from agents.cli.progress import add_progress_argument, bar
from agents.cli.args import (add_count_argument, add_jobs_argument,
                             add_json_argument, add_rules_argument, add_seed_argument, fail,
                             script_parser)
from rune_env.rules import RulesError, load_rules
from rune_env.run import apply, default_opponents, new_run
from rune_env.run.drafter import HeuristicDrafter
from rune_env.battle.engines import add_engine_argument, use_engine

ROUNDS = 12
# The whole runs' seeds start 100,000 after the per-round runs' (seed + 100_000 + i), so at most
# that many of each keeps the two sets of runs apart; the report also keeps every battle's row
# (about 12 a run) for its medians, a few hundred MB at this bound.
MAX_REPORT_RUNS = 100_000
# Tasks handed to the workers ahead of the results read: the task list is never built whole.
WINDOW = 64


def _play(args: tuple) -> list[dict]:
    """One run by the drafter; returns a summary per battle. `immortal` keeps lamps lit."""
    rules_path, seed, immortal, max_rounds, variant = args
    # the per-round table plays on past the 10th win, so that every round is reached
    rules = load_rules(rules_path, {"run.endless": True} if immortal else None)
    state = new_run(seed, rules)
    drafter = HeuristicDrafter(rules, seed=seed)
    out = []
    reasons: list[str] = []

    def dice_battle(b0, b1, rules_):
        # a seed per battle from the run's generator (as RuneRunEnv(variant="dice") does)
        r = reference_battle(b0, b1, rules_, seed=int(state.rng.integers(2**32)), variant="dice")
        reasons.append(r.reason)
        return r

    battle_fn = dice_battle if (variant or rules.spec.variant) == "dice" else None
    while not state.over:
        if immortal:
            state.lamps = 10**6
        a = drafter.act(state)
        info = apply(state, a, default_opponents(rules), battle_fn)
        if info.battle is not None:
            b = info.battle.to_json()
            out.append({"round": b["round"], "outcome": b["outcome"], "time": b["time"],
                        "reason": reasons[-1] if reasons else None,
                        "seals": sum(b["seals"]), "core": state.core,
                        "kinds": sorted({k for k, _ in state.board.values()}),
                        "relics": list(state.relics), "run_seed": seed})
            if immortal and b["round"] >= max_rounds:
                break
    if not immortal:
        out.append({"run_end": True, "wins": state.wins, "cleared": state.cleared,
                    "battles": len(out)})
    return out


def _rate(rows: list[dict]) -> float:
    return sum(r["outcome"] == "win" for r in rows) / len(rows) if rows else float("nan")


def _rate_ci(rows: list[dict]) -> list[float]:
    """The Wilson 95% interval of `_rate` (the per-round battles are of separate runs, so
    independent; the whole runs' clear rate likewise)."""
    return list(wilson(sum(r["outcome"] == "win" for r in rows), len(rows)))


def _played(pool, tasks, progress) -> list[dict]:
    """Every task's battles, in task order; `progress` (a bar) moves by one per task done.
    `tasks` is read lazily, at most WINDOW tasks ahead of the results (Executor.map would
    submit the whole iterable at once)."""
    out: list[dict] = []
    pending: deque = deque()
    for task in tasks:
        pending.append(pool.submit(_play, task))
        if len(pending) >= WINDOW:
            out += pending.popleft().result()
            if progress is not None:
                progress.update(1)
    while pending:
        out += pending.popleft().result()
        if progress is not None:
            progress.update(1)
    return out


def report(rules_path: str | None, battles: int, runs: int, seed: int, jobs: int,
           variant: str | None = None, progress: bool | None = False) -> dict:
    """The report's numbers. `progress`: bars on stderr (None: when it is a terminal)."""
    rules = load_rules(rules_path)
    variant = variant or rules.spec.variant
    duration = rules.spec.battle.duration_s
    od_start = rules.spec.overdrive.start_s
    tasks_rounds = ((rules_path, seed + i, True, ROUNDS, variant) for i in range(battles))
    tasks_runs = ((rules_path, seed + MAX_REPORT_RUNS + i, False, 0, variant) for i in range(runs))
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, battles + runs))) as pool:
        with bar(battles, f"rounds 1..{ROUNDS}", progress) as b:
            per_round = _played(pool, tasks_rounds, b)
        with bar(runs, "whole runs", progress) as b:
            whole = _played(pool, tasks_runs, b)
    out: dict = {"rules_hash": rules.hash, "seed": seed, "variant": variant, "rounds": {}, "runs": {},
                 "by_core": {}, "by_kind": {}, "by_relic": {}}
    for rnd in range(1, ROUNDS + 1):
        rows = [b for b in per_round if b["round"] == rnd]
        times = [b["time"] for b in rows]
        out["rounds"][str(rnd)] = {
            "battles": len(rows),
            "median_duration": statistics.median(times) if times else None,
            "timeout_share": sum(t >= duration for t in times) / len(rows) if rows else None,
            "overdrive_share": sum(t > od_start for t in times) / len(rows) if rows else None,
            "seals_per_battle": statistics.fmean(b["seals"] for b in rows) if rows else None,
            "win_rate": _rate(rows),
            "win_ci": _rate_ci(rows),
        }
        if variant == "dice":
            for reason in ("burst", "burn"):
                out["rounds"][str(rnd)][f"{reason}_share"] = (
                    sum(b["reason"] == reason for b in rows) / len(rows) if rows else None)
    ends = [b for b in whole if b.get("run_end")]
    fought = [b for b in whole if not b.get("run_end")]
    by_run: dict[int, list[dict]] = {}
    for b in fought:
        by_run.setdefault(b["run_seed"], []).append(b)
    _, battle_lo, battle_hi = wilson_clustered(
        [sum(b["outcome"] == "win" for b in bs) for bs in by_run.values()],
        [len(bs) for bs in by_run.values()])
    out["runs"] = {
        "runs": len(ends),
        "battle_win_rate": _rate(fought),
        # a run's battles share its board: the interval is clustered by run
        "battle_win_ci": [battle_lo, battle_hi],
        "mean_wins": statistics.fmean(e["wins"] for e in ends) if ends else None,
        "clear_rate": sum(e["cleared"] for e in ends) / len(ends) if ends else None,
        "clear_ci": list(wilson(sum(e["cleared"] for e in ends), len(ends))),
    }
    for key, field in (("by_core", "core"), ("by_kind", "kinds"), ("by_relic", "relics")):
        groups: dict[str, list] = {}
        for b in fought:
            values = b[field] if isinstance(b[field], list) else [b[field]]
            for v in values:
                groups.setdefault(str(v), []).append(b)
        out[key] = {k: {"battles": len(v), "win_rate": _rate(v)} for k, v in sorted(groups.items())}
    return out


def format_report(rep: dict) -> str:
    dice = rep.get("variant") == "dice"
    lines = [f"rules {rep['rules_hash']}, seed {rep['seed']}",
             "round  battles  median_s  timeout  overdrive  seals  win_rate      95% interval"
             + ("    burst     burn" if dice else "")]
    for rnd, r in rep["rounds"].items():
        ci = "[{:.1%}, {:.1%}]".format(*r["win_ci"])
        lines.append(f"{rnd:>5}  {r['battles']:>7}  {r['median_duration']:>8.2f}  "
                     f"{r['timeout_share']:>7.1%}  {r['overdrive_share']:>9.1%}  "
                     f"{r['seals_per_battle']:>5.2f}  {r['win_rate']:>8.1%}  {ci:>16}"
                     + (f"  {r['burst_share']:>7.1%}  {r['burn_share']:>7.1%}" if dice else ""))
    runs = rep["runs"]
    lines.append("")
    lines.append(f"whole apprentice runs: {runs['runs']}  battle win rate {runs['battle_win_rate']:.1%} "
                 + "[{:.1%}, {:.1%}]".format(*runs["battle_win_ci"])
                 + f"  mean wins {runs['mean_wins']:.2f}  clear rate {runs['clear_rate']:.1%} "
                 + "[{:.1%}, {:.1%}]".format(*runs["clear_ci"]))
    for key in ("by_core", "by_kind", "by_relic"):
        parts = [f"{k} {v['win_rate']:.0%} ({v['battles']})" for k, v in rep[key].items()]
        lines.append(f"{key}: " + ", ".join(parts))
    return "\n".join(lines)


def build_parser():
    p = script_parser(__doc__)
    add_count_argument(p, "--battles", 200, "battles in each of the rounds 1..12",
                       high=MAX_REPORT_RUNS)
    add_count_argument(p, "--runs", 200, "whole apprentice runs", high=MAX_REPORT_RUNS)
    add_seed_argument(p, "the first run seed of the per-round runs (the whole runs start at "
                         "S + 100000)")
    add_jobs_argument(p)
    add_rules_argument(p)
    p.add_argument("--variant", choices=("deterministic", "dice"),
                   help="the game variant (default: the rules file's `variant`)")
    add_json_argument(p, "one JSON object instead of the tables")
    add_engine_argument(p)
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        load_rules(a.rules)          # checked here, once, before the workers read it
    except RulesError as exc:        # missing, not YAML, or against the schema
        return fail(f"--rules: {exc}")
    use_engine(a.engine)
    rep = report(a.rules, a.battles, a.runs, a.seed, a.jobs, a.variant, progress=a.progress)
    print(json.dumps(rep, indent=1) if a.json else format_report(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
