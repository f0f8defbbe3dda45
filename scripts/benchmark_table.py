#!/usr/bin/env python3
"""The benchmark table: agents side by side at every rank, with normalized scores.

    python scripts/benchmark_table.py --agents scripted greedy agents/models/apprentice_s0.pt ...
                                      [--ranks all|R ...] [--episodes N] [--at RANK=N ...]
                                      [--top AGENT] [--seed S] [--jobs J] [--out DIR] [--json]
                                      [--rules FILE] [--no-progress]

For each rank, `scripts/evaluate.py --normalize TOP` (default TOP: `planner`, the search player
at its defaults): every agent, plus `random` (the floor) and TOP, plays N whole runs against the
rank's shipped pool on the same evaluation seeds, and each gets its battle win rate, mean wins
and clear rate with 95% intervals, the CPU milliseconds it takes to choose an action, and its
normalized score of mean wins, (agent - random) / (TOP -
random), with a paired bootstrap interval (agents/evaluation/normalize.py; a cell reads "-" where
TOP's mean wins are not above random's, and a bound "-" where more than 2.5% of the resamples put
TOP at or below random: the ratio has no meaning there, as with few runs at a rank where both
win little, such as archmage). The ranks are played
in J processes at once (one evaluate.py each), since a rank's runs are independent of another's.

Writes DIR (default runs/benchmark_s<seed>): DIR/<rank>/ (evaluate.py's eval.csv, eval.json,
normalized.png and TensorBoard per agent), DIR/benchmark.json and DIR/benchmark.csv (a row per
agent and rank), DIR/benchmark.md (the table as markdown, agents by ranks, as docs/RESULTS.md
shows it), DIR/normalized.png (the normalized scores, agents by rank), and TensorBoard
DIR/tb/<agent>/ with benchmark/normalized_wins (and _lo, _hi), benchmark/mean_wins and
benchmark/clear_rate at step = the rank's number (0 apprentice .. 5 archmage), so each agent is
one curve over the ranks and the agents sit side by side. Prints the table, a row per agent and
rank with aligned columns (--json: benchmark.json's content instead).

A bad argument, rank or agent is one `error: ...` line and exit status 2 before anything is
played; a rank whose evaluation fails stops the table with its error. A progress bar (ranks
done) goes to stderr.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVALUATE = ROOT / "scripts" / "evaluate.py"

from agents import make_agent
from agents.cli.args import (MAX_RUNS, add_count_argument, add_jobs_argument, add_json_argument,
                             add_rules_argument, add_seed_argument, agent_name, check_output_dir,
                             fail, make_output_dir, parse_with_rules, remove_made, script_parser)
from agents.cli.progress import add_progress_argument, bar
from agents.evaluation.normalize import FLOOR, TOP, format_score, log_score


def build_parser(rules=None):
    from rune_env.rules import default_rules
    ranks = [r.id for r in (rules or default_rules()).spec.ranks]
    p = script_parser(__doc__)
    p.add_argument("--agents", type=agent_name, nargs="+", required=True, metavar="AGENT",
                   help="the agents to compare, as evaluate.py takes them (random and TOP are "
                        "added; required; no default)")
    p.add_argument("--ranks", nargs="+", default=["all"], metavar="R",
                   help=f"ranks to play: names ({', '.join(ranks)}), numbers 0..{len(ranks) - 1} "
                        "or all (default: all)")
    add_count_argument(p, "--episodes", 100, "runs per agent and rank", high=MAX_RUNS)
    p.add_argument("--at", nargs="+", default=[], metavar="RANK=N",
                   help=f"runs at a rank instead of --episodes, e.g. archmage=200 (N 1..{MAX_RUNS};"
                        " default: none)")
    p.add_argument("--top", type=agent_name, default=TOP, metavar="AGENT",
                   help=f"the agent that scores 1 (default: {TOP}, the search player)")
    add_seed_argument(p)
    add_jobs_argument(p, "ranks evaluated at once (a process each)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: runs/benchmark_s<seed>)")
    add_json_argument(p, "benchmark.json's content on stdout instead of the table")
    add_rules_argument(p)
    p.add_argument("--trust-pickle", action="store_true",
                   help="passed to evaluate.py: load .zip checkpoints no training run here signed "
                        "(default: off)")
    add_progress_argument(p)
    return p


def rank_list(names: list[str], rules) -> list[str]:
    """--ranks -> rank names in the rules' order; ValueError naming a bad one."""
    from agents.evaluation.labels import rank_name
    ranks = [r.id for r in rules.spec.ranks]
    if names == ["all"]:
        return ranks
    chosen = {rank_name(n, rules, "--ranks") for n in names}
    return [r for r in ranks if r in chosen]


def episodes_at(pairs: list[str], ranks: list[str], default: int, rules) -> dict[str, int]:
    """--at RANK=N ... -> rank -> runs; ValueError naming a bad pair."""
    from agents.evaluation.labels import rank_name
    out = {r: default for r in ranks}
    given: set[str] = set()
    for pair in pairs:
        name, eq, n = pair.partition("=")
        n = n.strip()
        if not eq or not (n.isascii() and n.isdigit()) or not 1 <= int(n) <= MAX_RUNS:
            raise ValueError(f"--at {pair!r}: RANK=N with N a whole number 1..{MAX_RUNS}")
        rank = rank_name(name, rules, "--at")
        if rank not in out:
            raise ValueError(f"--at {pair!r}: {rank} is not among --ranks")
        if rank in given:           # the last would win silently: one of the two is a mistake
            raise ValueError(f"--at {pair!r}: {rank} is given twice")
        given.add(rank)
        out[rank] = int(n)
    return out


def evaluate_rank(rank: str, agents: list[str], top: str, runs: int, a, out: Path) -> dict:
    """One rank's evaluate.py --normalize, in its own process; its eval.json."""
    argv = [sys.executable, str(EVALUATE), "--agents", *agents, "--normalize", top,
            "--rank", rank, "--episodes", str(runs), "--seed", str(a.seed),
            "--out", str(out / rank), "--json", "--no-progress"]
    if a.rules:
        argv += ["--rules", a.rules]
    if a.trust_pickle:
        argv.append("--trust-pickle")
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        raise RuntimeError(f"{rank}: {last}")
    return json.loads(r.stdout)


def markdown(table: dict, ranks: list[str]) -> str:
    """Agents as rows, ranks as columns: normalized score [95%] / mean wins / clear rate."""
    agents = list(next(iter(table.values()))["agents"])
    head = "| agent | " + " | ".join(ranks) + " | CPU ms an action |"
    lines = [head, "|---|" + "---|" * (len(ranks) + 1)]
    for name in agents:
        cells = []
        for rank in ranks:
            e = table[rank]
            s = e["agents"][name]
            n = e["normalized"]["scores"].get(name)
            cells.append(f"{format_score(n)}<br>{s['mean_wins']:.2f} wins, "
                         f"clear {s['clear_rate']:.2f}")
        ms = sum(table[r]["timing"]["ms_per_action"][name] for r in ranks) / len(ranks)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ms:.2f} |")
    return "\n".join(lines)


def terminal_table(table: dict, ranks: list[str]) -> str:
    """The same figures for a terminal: a row per agent and rank, the agent's rows together,
    columns aligned (the markdown, with a cell of three figures, is benchmark.md)."""
    from agents.cli.tables import text_table
    agents = list(next(iter(table.values()))["agents"])
    rows = []
    for name in agents:
        for rank in ranks:
            e = table[rank]
            s = e["agents"][name]
            rows.append([name if rank == ranks[0] else "", rank,
                         format_score(e["normalized"]["scores"].get(name)),
                         f"{s['mean_wins']:.2f} [{s['wins_ci'][0]:.2f}, {s['wins_ci'][1]:.2f}]",
                         f"{s['clear_rate']:.2f}", f"{e['timing']['ms_per_action'][name]:.2f}"])
    return "\n".join(text_table(["agent", "rank", "normalized [95%]", "mean wins [95%]",
                                  "clear rate", "CPU ms an action"], rows, left=2))


def write_outputs(out: Path, table: dict, ranks: list[str], rules, context: dict) -> None:
    from torch.utils.tensorboard import SummaryWriter
    names = [r.id for r in rules.spec.ranks]
    with open(out / "benchmark.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["rank", "agent", "episodes", "mean_wins", "wins_lo", "wins_hi", "clear_rate",
                    "clear_lo", "clear_hi", "battle_win_rate", "normalized", "normalized_lo",
                    "normalized_hi", "floor", "top", "rules_hash", "seed", "ms_per_action"])
        for rank in ranks:
            e = table[rank]
            for name, s in e["agents"].items():
                n = e["normalized"]["scores"][name]
                w.writerow([rank, name, s["episodes"], s["mean_wins"], *s["wins_ci"],
                            s["clear_rate"], *s["clear_ci"], s["battle_win_rate"], n["score"],
                            *n["ci"], e["normalized"]["floor"], e["normalized"]["top"],
                            e["rules_hash"], e["seed"], e["timing"]["ms_per_action"][name]])
    (out / "benchmark.json").write_text(json.dumps({**context, "ranks": table}, indent=1))
    # what was played, above the table (the terminal's header line; the markdown had none)
    head = (f"Normalized mean wins [95%] ({context['floor']} = 0, {context['top']} = 1), mean wins, "
            f"clear rate; seed {context['seed']}, rules {context['rules_hash']}, runs "
            + ", ".join(f"{r} {context['episodes'][r]}" for r in ranks)
            + ". CPU ms an action is a timing of this machine, not reproducible.\n\n")
    (out / "benchmark.md").write_text(head + markdown(table, ranks) + "\n")
    from agents.evaluation.labels import fresh_tb_run, tb_dir_name
    agents = list(next(iter(table.values()))["agents"])
    for name in agents:
        with SummaryWriter(str(fresh_tb_run(out / "tb" / tb_dir_name(name)))) as w:
            for rank in ranks:
                e, step = table[rank], names.index(rank)
                s = e["agents"][name]
                w.add_scalar("benchmark/mean_wins", s["mean_wins"], step)
                w.add_scalar("benchmark/clear_rate", s["clear_rate"], step)
                log_score(w, "benchmark/normalized_wins", e["normalized"]["scores"][name], step)
    figure(out / "normalized.png", table, ranks, agents, context)


def figure(path: Path, table: dict, ranks: list[str], agents: list[str], context: dict) -> None:
    """The normalized scores, one line per agent over the ranks, with their intervals."""
    import numpy as np
    from agents.evaluation.charts import pyplot, save
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 4.4))
    xs = np.arange(len(ranks))
    # tab20 and a marker cycle: a dozen agents stay apart (the default cycle repeats after ten)
    colours = plt.get_cmap("tab20").colors
    markers = "osD^vP*Xh<>p"
    for i, name in enumerate(agents):
        ys, lo, hi = [], [], []
        for rank in ranks:
            n = table[rank]["normalized"]["scores"][name]
            v = np.nan if n["score"] is None else n["score"]
            ys.append(v)
            lo.append(v - n["ci"][0] if n["ci"][0] is not None else 0.0)
            hi.append(n["ci"][1] - v if n["ci"][1] is not None else 0.0)
        shift = (i - (len(agents) - 1) / 2) * 0.03
        colour = colours[(2 * i) % 20 + (i // 10) % 2]
        ax.errorbar(xs + shift, ys, yerr=[lo, hi], marker=markers[i % len(markers)], ms=3.5, lw=1,
                    capsize=2, label=name, color=colour)
        # a score whose interval has no bound ('-' in the table) is hollow: no certainty shown
        loose = [k for k, rank in enumerate(ranks)
                 if None in table[rank]["normalized"]["scores"][name]["ci"]
                 and not np.isnan(ys[k])]
        if loose:
            ax.plot(xs[loose] + shift, [ys[k] for k in loose], ls="none",
                    marker=markers[i % len(markers)], ms=6, mfc="white", mec=colour)
    ax.axhline(0.0, color="#999999", lw=0.8, ls="--")
    ax.axhline(1.0, color="#999999", lw=0.8, ls="--")
    ax.set_xticks(xs, ranks, fontsize=8)
    ax.set_ylabel("normalized mean wins (floor 0, top 1; hollow: no interval)", fontsize=8)
    ax.set_title(f"benchmark: {context['floor']} = 0, {context['top']} = 1 (seed {context['seed']},"
                 f" rules {context['rules_hash']})", fontsize=9)
    # the legend beside the lines, not on them
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save(fig, path)


class _Refused(Exception):
    """A failure after --out was made: its message is the error line, and what was made goes."""


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except _Refused as exc:
        return fail(str(exc))


def _main(argv: list[str] | None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    try:
        ranks = rank_list(a.ranks, rules)
        runs = episodes_at(a.at, ranks, a.episodes, rules)
    except ValueError as exc:
        return fail(str(exc))
    from agents.evaluation.labels import repeated, same_agent
    if same_agent(a.top, FLOOR):
        return fail(f"--top {a.top}: the top must not be the floor ({FLOOR})")
    for name in [*a.agents, a.top]:      # every agent checked before anything is played
        try:
            make_agent(name, rules, seed=a.seed)
        except ValueError as exc:
            return fail(str(exc))
    if (twice := repeated(list(a.agents))) is not None:
        return fail(f"--agents: {twice!r} is given twice")
    agents = [n for n in a.agents if not (same_agent(n, FLOOR) or same_agent(n, a.top))]
    if not agents:
        return fail(f"--agents: give an agent besides the floor ({FLOOR}) and the top "
                    f"({a.top}), which are always in the table")
    out = Path(a.out or ROOT / "runs" / f"benchmark_s{a.seed}")
    if (problem := check_output_dir(out, "--out")):
        return fail(problem)
    try:
        made = make_output_dir(out)
    except OSError as exc:
        return fail(f"--out {out}: cannot make it ({exc.strerror or exc})")
    try:
        return _benchmark(a, rules, ranks, runs, agents, out)
    except BaseException:
        remove_made(made, contents=True)      # nothing half-written is left behind
        raise


def _benchmark(a, rules, ranks, runs, agents, out) -> int:
    from agents.evaluation.labels import agent_labels
    table: dict[str, dict] = {}
    with bar(len(ranks), "ranks", a.progress, unit="rank") as progress, \
            ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {rank: pool.submit(evaluate_rank, rank, agents, a.top, runs[rank], a, out)
                   for rank in ranks}
        try:
            for rank in ranks:
                table[rank] = futures[rank].result()
                progress.update(1)
        except RuntimeError as exc:
            for f in futures.values():
                f.cancel()
            raise _Refused(str(exc)) from None
    # the top's label as evaluate.py gives it (agent_labels over its agents, floor and top)
    top_label = agent_labels([*agents, FLOOR, a.top])[-1]
    context = {"floor": FLOOR, "top": top_label, "seed": a.seed,
               "rules_hash": rules.hash, "episodes": runs}
    try:
        write_outputs(out, table, ranks, rules, context)
    except OSError as exc:
        raise _Refused(f"{out}: cannot write ({exc.strerror or exc})") from None
    if a.json:
        print(json.dumps({**context, "ranks": table}))
    else:
        print(f"normalized mean wins [95%]: {FLOOR} = 0, {context['top']} = 1; seed {a.seed}, "
              f"rules {rules.hash}, runs {', '.join(f'{r} {runs[r]}' for r in ranks)}\n")
        print(terminal_table(table, ranks))
        print(f"\nwritten: {out}/benchmark.csv, benchmark.json, benchmark.md (the table as "
              f"markdown), normalized.png, tb/, <rank>/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
