#!/usr/bin/env python3
"""A ladder of agents and opponent pools from round-matched head-to-head battles.

    python scripts/ladder.py --agents greedy random [MODEL.zip ...] [--pools configs/opponents/*.json]
                             [--episodes N] [--samples K] [--seed S] [--opponents POOL|generator]
                             [--rules FILE] [--json] [--out DIR] [--no-progress]

Each agent drafts N runs on evaluation seeds (apprentice runs against --opponents: by default
apprentice's shipped pool, as RuneRun-v0); its board of every round fights (both seatings)
the other agents' boards of the same seed and round, and K boards of the same round sampled from
each pool. The results are fitted into Bradley-Terry ratings on an Elo scale (agents/evaluation/ratings.py),
each with a 95% interval: a percentile bootstrap over the drafting runs (all the battles of run i
of every agent are resampled together, --resamples times, seeded by --seed). The head-to-head
matrix (every name's mean score against every other's) goes to ladder.json, DIR/matrix.png and
TensorBoard (DIR/tb/matrix, image ladder/win_matrix), with the agents' equilibrium: the mixture of
agents none of them beats on average (the matrix game's maximum-entropy Nash equilibrium), and
their alpha-Rank (agents/evaluation/alpharank.py: the stationary mass of a population that copies
whoever does better, OpenSpiel's single-population alpha-Rank with its defaults). The
ladder is printed, written to DIR/ladder.json (atomically) and to TensorBoard
(DIR/tb/<name>, tag ladder/rating). Rate at least two agents, or agents and pools. `--rules FILE`
drafts, fights and rates under a rules file: pools drafted under it (scripts/make_opponents.py
--rules) are read without a warning; the shipped pools are of the defaults, so under other rules
give the drafting runs `--opponents` (your pool, or generator).

Every agent and pool is checked before anything is played: a bad argument, agent or pool file
is one `error: ...` line and exit status 2. Progress bars (runs drafted, battles played) go to
stderr when it is a terminal (--progress forces them, --no-progress hides them).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from agents import make_agent
from agents.cli.progress import bar
from agents.evaluation.runs import evaluate
from agents.cli.fanout import add_ray_argument, ray_problem
from agents.evaluation.runs import evaluate_by_name
from agents.evaluation.ratings import fit_bradley_terry, rating_intervals
from agents.evaluation.labels import agent_labels, fresh_tb_run, repeated, tb_dir_name
from agents.evaluation.runs import MAX_EPISODES
from agents.cli.args import (MAX_RESAMPLES, MAX_SAMPLES, add_count_argument, add_json_argument,
                             add_opponents_argument, add_play_arguments, add_rules_argument,
                             add_seed_argument, agent_name, apply_play_arguments, fail,
                             load_pool_once, parse_with_rules, rules_env_kwargs, script_parser)
from rune_env.battle.engines import battle_function
from rune_env.rules import Board
from rune_env.files import write_json_atomic
from rune_env.run.opponents import PoolError


def score(a: Board, b: Board, rules) -> list[float]:
    """a's score in both seatings (1 win, 0.5 draw)."""
    out = []
    for seat, pair in ((0, (a, b)), (1, (b, a))):
        r = battle_function()(pair[0], pair[1], rules)
        out.append(0.5 if r.winner is None else float(r.winner == seat))
    return out


def matches(boards: dict, pools: dict, samples: int, rng):
    """(agent, opponent, agent's board, opponent's board, drafting run), one at a time: the list
    is never built (runs x rounds x samples x pools pairs). Each agent meets every later agent
    on the boards of the same run and round, then `samples` boards of each pool's round, drawn
    by their counts."""
    names = list(boards)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            for key in sorted(set(boards[x]) & set(boards[y])):
                yield x, y, boards[x][key], boards[y][key], key[0]
        for pname, by_round in pools.items():
            for (run, rnd), board in sorted(boards[x].items()):
                options, weights = by_round.get(rnd, ([], None))
                if not options:
                    continue
                for k in rng.choice(len(options), size=samples, p=weights / weights.sum()):
                    yield x, pname, board, options[int(k)], run


def count_matches(boards: dict, pools: dict, samples: int) -> int:
    """How many pairs `matches` yields (for the progress bar)."""
    names = list(boards)
    total = sum(len(set(boards[x]) & set(boards[y]))
                for i, x in enumerate(names) for y in names[i + 1:])
    for x in names:
        for by_round in pools.values():
            total += samples * sum(1 for (_, rnd) in boards[x] if by_round.get(rnd, ([], None))[0])
    return total


def build_parser(rules=None):
    """The command line (`rules`: parse_with_rules's; no option here is bounded by them)."""
    p = script_parser(__doc__)
    p.add_argument("--agents", type=agent_name, nargs="+", required=True, metavar="AGENT",
                   help="the agents to rate: random, scripted, greedy, greedy:NOISE, planner[:KEY=VALUE,...] (the search player) or paths of "
                        "saved models (.zip) or exported policies (.pt) (required)")
    p.add_argument("--pools", nargs="+", default=[], metavar="POOL",
                   help="opponent pool files rated beside the agents (default: none; then give "
                        "at least two agents)")
    add_count_argument(p, "--episodes", 20, "runs each agent drafts", high=MAX_EPISODES)
    add_count_argument(p, "--samples", 4, "pool boards per agent board, drawn by their counts",
                       metavar="K", high=MAX_SAMPLES)
    add_count_argument(p, "--resamples", 200, "bootstrap resamples of the drafting runs for the "
                       "ratings' 95%% intervals (0: none)", high=MAX_RESAMPLES, low=0)
    add_seed_argument(p, "evaluation seed, the pool sampling's and the bootstrap's seed")
    add_opponents_argument(p, "what the agents' drafting runs fight")
    add_rules_argument(p)
    add_json_argument(p, "the ladder as one JSON object instead of the table")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where ladder.json and the TensorBoard logs go (default runs/ladder_s<SEED>)")
    add_play_arguments(p)
    add_ray_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    twice = sorted({n for n in a.agents if a.agents.count(n) > 1})
    if twice:
        return fail(f"--agents: {', '.join(twice)} given twice")
    if len(a.agents) < 2 and not a.pools:
        return fail("nothing to rate: give at least two --agents, or --pools to rate against")
    out_dir = Path(a.out or ROOT / "runs" / f"ladder_s{a.seed}")
    if out_dir.exists() and not out_dir.is_dir():
        return fail(f"--out {out_dir}: not a directory")
    from agents.cli.args import check_output_dir
    if (problem := check_output_dir(out_dir, "--out")):      # before anything is played
        return fail(problem)
    # every pool and agent is checked before anything is played
    pools = {}
    for path in a.pools:
        try:
            pool = load_pool_once(path, rules, strict=a.strict)
        except PoolError as exc:    # missing, corrupt, not a pool, or of other rules with --strict
            return fail(str(exc))
        name = f"pool:{Path(path).name.removesuffix('.gz').removesuffix('.json')}"
        if name in pools:
            return fail(f"--pools: two pools are named {name} ({path})")
        # each round's boards with their sampling weights (a ghost's count: how many drafting
        # runs drafted it), so the ladder meets a pool's boards as often as the env fields them
        pools[name] = {
            r: (pool.boards(r, rules), np.array(pool.counts(r), dtype=float)) for r in pool.rounds}
    apply_play_arguments(a)
    drafting = {"opponents": a.opponents, "strict_pools": a.strict, **rules_env_kwargs(a)}
    try:      # the drafting runs' opponents, checked once (a pool of other rules: one warning)
        from rune_env.envs.run_env import RuneRunEnv, shipped_pool
        fielded = shipped_pool(rules, 0) if a.opponents is None else a.opponents
        if fielded not in (None, "generator"):
            load_pool_once(fielded, rules, strict=a.strict)
        RuneRunEnv(**drafting).close()
    except (PoolError, OSError, ValueError) as exc:
        return fail(f"--opponents: {exc}")
    agents = {}
    # each agent shown as evaluate.py and the benchmark table name it (a policy file as
    # <folder>/<stem>: models/apprentice_s0), in the table, ladder.json and TensorBoard
    # (two files that would share a label are named by more of their paths: agent_labels)
    if (twice := repeated(list(a.agents))) is not None:
        return fail(f"--agents: {twice!r} is given twice")
    labels = dict(zip(a.agents, agent_labels(list(a.agents))))
    for name in a.agents:
        try:
            agents[name] = make_agent(name, rules, seed=a.seed, strict=a.strict)
        except ValueError as exc:   # an unknown name, a policy file that does not load
            return fail(str(exc))
    rng = np.random.default_rng(a.seed)
    boards: dict[str, dict] = {}
    with bar(len(agents) * a.episodes, "drafting", a.progress) as progress:
        for name, agent in agents.items():
            progress.set_description(f"drafting {name}")
            res = evaluate(agent, a.episodes, a.seed, drafting, progress=progress) \
                if a.ray is None else \
                evaluate_by_name(name, a.episodes, a.seed, drafting, a.ray,
                                 drafting.get("rules"), a.seed, a.strict,
                                 progress)     # the same runs, as Ray tasks
            boards[name] = {(i, b["round"]): Board.from_json(b["board"], rules)
                            for i, run in enumerate(res["runs"]) for b in run["battles"]}
    results: list[tuple[str, str, float]] = []
    by_run: dict[int, list] = {}       # the bootstrap's clusters
    with bar(count_matches(boards, pools, a.samples), "battles", a.progress,
             unit="pair") as progress:
        for x, y, board, other, run in matches(boards, pools, a.samples, rng):
            for s in score(board, other, rules):
                results.append((labels.get(x, x), labels.get(y, y), s))
                by_run.setdefault(run, []).append(results[-1])
            progress.update(1)
    if not results:
        return fail("no battles to rate: no round was reached by two agents, nor met a pool's "
                    "boards of the same round")
    ratings = fit_bradley_terry(results)
    with bar(a.resamples, "bootstrap", a.progress and a.resamples > 0) as progress:
        intervals = rating_intervals([by_run[k] for k in sorted(by_run)], a.resamples, a.seed,
                                     progress=progress)
    games = {n: sum(1 for r in results if n in r[:2]) for n in ratings}
    scores = {n: sum(r[2] if r[0] == n else 1 - r[2] for r in results if n in r[:2]) for n in ratings}
    ladder = sorted(ratings, key=ratings.get, reverse=True)
    out = {"rules_hash": rules.hash, "seed": a.seed, "episodes": a.episodes,
           "samples": a.samples, "resamples": a.resamples,
           "opponents": a.opponents or "the apprentice pool", "ladder": [
        {"name": n, "rating": ratings[n],
         "rating_ci": list(intervals[n]) if n in intervals else None, "games": games[n],
         "score": scores[n] / games[n] if games[n] else None} for n in ladder]}
    out.update(head_to_head(results, ladder, [labels[n] for n in a.agents]))
    try:
        write_json_atomic(out_dir / "ladder.json", out)      # a killed run leaves the old file
        write_pictures(out, ratings, out_dir)
    except OSError as exc:
        return fail(f"--out {out_dir}: cannot write the ladder ({exc.strerror or exc})")
    print(json.dumps(out) if a.json else ladder_table(out))
    return 0


def head_to_head(results, names: list[str], agents: list[str]) -> dict:
    """ladder.json's "matrix" (every name's mean score against every other's, null where two
    never met: pools meet agents, not each other) and, with two agents or more, the agents'
    "equilibrium": the maximum-entropy Nash mixture of their matrix (the mix of agents none of
    them beats on average; agents/design/metagame/solver.py's symmetric_equilibrium) and their
    "alpharank": alpha-Rank's stationary mass (where a population that copies whoever does
    better spends its time; agents/evaluation/alpharank.py, OpenSpiel's defaults)."""
    from agents.design.metagame.solver import symmetric_equilibrium as equilibrium
    from agents.evaluation.alpharank import alpha_rank
    from agents.evaluation.ratings import score_matrix
    scores, games = score_matrix(results, names)
    out: dict = {"matrix": {"names": names, "games": games.astype(int).tolist(), "scores": [
        [None if np.isnan(v) else float(v) for v in row] for row in scores]}}
    if len(agents) >= 2:
        idx = [names.index(n) for n in agents]
        among = scores[np.ix_(idx, idx)]          # the agents' own matrix (pools meet no pool)
        out["equilibrium"] = {n: float(w) for n, w in zip(agents, equilibrium(among))}
        out["alpharank"] = {n: float(w) for n, w in zip(agents, alpha_rank(among))}
    return out


def picture_scores(out: dict) -> np.ndarray:
    """ladder.json's matrix as the picture shows it: a cell of no games is NaN, drawn grey (not
    played): pools never meet each other, nor a name itself (the JSON keeps the diagonal's 0.5,
    the value of a player against itself, which the equilibrium reads)."""
    return np.array([[np.nan if v is None or g == 0 else v for v, g in zip(row, games)]
                     for row, games in zip(out["matrix"]["scores"], out["matrix"]["games"])])


def write_pictures(out: dict, ratings: dict, out_dir: Path) -> None:
    """The win-rate matrix as out_dir/matrix.png and in TensorBoard (out_dir/tb/matrix, image
    ladder/win_matrix), and each name's rating (out_dir/tb/<name>, ladder/rating)."""
    from torch.utils.tensorboard import SummaryWriter

    from agents.evaluation.charts import DPI, to_array, win_matrix_figure
    names = out["matrix"]["names"]
    scores = picture_scores(out)
    fig = win_matrix_figure(names, scores, f"rules {out['rules_hash']}, seed {out['seed']}")
    fig.savefig(out_dir / "matrix.png", dpi=DPI)       # the file, then the same figure as an image
    # a rerun into the same --out replaces its TensorBoard runs (it added a second event file,
    # two ratings at step 0), as evaluate.py's do
    with SummaryWriter(str(fresh_tb_run(out_dir / "tb" / "matrix"))) as w:
        w.add_image("ladder/win_matrix", to_array(fig), 0, dataformats="HWC")
    for n in out["matrix"]["names"]:
        with SummaryWriter(str(fresh_tb_run(out_dir / "tb" / tb_dir_name(n).replace(":", "_")))) as w:
            w.add_scalar("ladder/rating", ratings[n], 0)


def ladder_table(out: dict) -> str:
    """The ladder (ladder.json's content) as the terminal's table, under a line of its settings."""
    intervals = (f"95% intervals: bootstrap of the runs ({out['resamples']} resamples)"
                 if out["resamples"] else "no intervals (--resamples 0)")
    lines = [f"rules {out['rules_hash']}, seed {out['seed']}, {out['episodes']} drafting runs an "
             f"agent, {out['samples']} pool boards an agent board; {intervals}",
             f"{'#':>2} {'name':<40} {'rating':>7} {'95% interval':>14} {'games':>6} {'score':>6}"]
    for i, row in enumerate(out["ladder"], 1):
        ci = "[{:.0f}, {:.0f}]".format(*row["rating_ci"]) if row["rating_ci"] else "-"
        lines.append(f"{i:>2} {row['name']:<40} {row['rating']:>7.0f} {ci:>14} {row['games']:>6} "
                     f"{row['score'] if row['score'] is not None else float('nan'):>6.3f}")
    if out.get("equilibrium"):
        mix = sorted(out["equilibrium"].items(), key=lambda kv: -kv[1])
        lines.append("equilibrium of the agents' head-to-head matrix (the mix none of them beats "
                     "on average): " + ", ".join(f"{n} {100 * w:.0f}%" for n, w in mix if w > 0))
    if out.get("alpharank"):
        # the agents with a share to show; the rest together (their order would be noise)
        mass = sorted(out["alpharank"].items(), key=lambda kv: -kv[1])
        shown = [(n, w) for n, w in mass if w >= 0.0005]
        rest = len(mass) - len(shown)
        lines.append("alpha-Rank of the same matrix (where a population copying whoever does "
                     "better spends its time): " + ", ".join(f"{n} {100 * w:.1f}%" for n, w in shown)
                     + (f"; the other {rest} 0.0%" if rest else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
