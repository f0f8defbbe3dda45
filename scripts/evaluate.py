#!/usr/bin/env python3
"""Evaluate agents side by side.

    python scripts/evaluate.py --agents random scripted greedy runs/<run>/final_model.zip
                               [--rank R] [--episodes N] [--seed S] [--json] [--out DIR]
                               [--head-to-head] [--normalize [TOP]] [--paired] [--rules FILE]
                               [--no-progress]

Agents are `random`, `scripted`, `greedy` (or `greedy:NOISE`), `planner` (the search player;
`planner:KEY=VALUE,...` sets its knobs: boards, reference, size, noise, core, roll...;
`planner:strong` is its strong preset, within 1 s a round) or a model path
(a `.zip` checkpoint or an exported `.pt` policy). For each agent: N whole runs on evaluation seeds
(disjoint from every training seed by construction), and a table of battle win rate, mean wins and
clear rate, each with a 95% interval, rounds survived, per-core rates and the CPU milliseconds an
action took the agent to choose (a timing of this machine, not reproducible like the rest).
Writes DIR/eval.csv (its ms_per_action column is that timing), DIR/runs.csv (a row per agent
and run), DIR/eval.json (the agents' CPU milliseconds an action apart, under `timing`: with
eval.csv's column, the one part of the output that is not reproducible) and TensorBoard under DIR/tb/<agent>/ (default DIR: runs/eval_<rank>_s<seed>):
every agent with the same tags (eval/*, eval/kind_share/<kind>, eval/clear_rate_core/<core>,
images boards/final/<i>), at the agent's training step (a checkpoint's num_timesteps, the
`timesteps` of the JSON beside an exported .pt; 0 for the baselines), so the policies line up on
one axis; a rerun replaces an agent's TensorBoard files, it does not add to them. `--rules FILE`
plays another rules file (e.g. configs/rules/seed_literal.yaml, the rules as written, with its
own shipped pools and policies).

`--normalize [TOP]` adds each agent's normalized score, (its mean wins - random's) / (TOP's -
random's), TOP the search player `planner` by default: 0 plays like random, 1 like the planner,
with a 95% interval from a paired bootstrap over the run seeds (agents/evaluation/normalize.py).
`random` and TOP are evaluated too when --agents does not name them. The score goes to the table,
eval.csv, eval.json (`normalized`), TensorBoard (eval/normalized_wins, _lo, _hi in each agent's
run) and a chart, DIR/normalized.png (also in TensorBoard under tb/normalized/).

`--paired` adds, for each pair of agents, the differences of their battle win rate, mean wins and
clear rate with 95% intervals from a paired bootstrap over the run seeds they share, marked where
apart from 0 (agents/evaluation/paired.py): to the printed output, eval.json (`paired`) and
DIR/paired.csv.

`--head-to-head` also fights the agents' boards against each other: each agent drafts its runs
on the same seeds; in every round both reached, their boards fight in both seatings; the win
matrix gives, per pair, the share of those battles the row agent won (draws count half).

A progress bar (runs played) goes to stderr when it is a terminal, never to stdout. A bad
argument, rank, agent, model file or pool is one `error: ...` line on stderr and exit status 2.
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from agents import make_agent
from agents.evaluation.runs import (EVAL_TAGS, MAX_EPISODES, evaluate, log_evaluation,
                                    training_step)
from agents.cli.fanout import add_ray_argument, ray_problem
from agents.evaluation.runs import evaluate_by_name, ms_per_action
from agents.evaluation.normalize import FLOOR, TOP, log_score, normalized_scores
from agents.evaluation.paired import MEASURES, format_paired, paired_differences
from agents.evaluation.labels import (agent_label, agent_labels, fresh_tb_run, rank_name,
                                     repeated, same_agent, tb_dir_name, tb_dir_names)
from agents.cli.progress import bar
from agents.cli.args import (add_count_argument, add_json_argument, add_opponents_argument,
                             add_play_arguments, add_rules_argument, add_seed_argument, agent_name,
                             apply_play_arguments, fail, parse_with_rules, rules_env_kwargs,
                             script_parser)
from rune_env.battle.engines import battle_function
from rune_env.rules import Board, default_rules
from rune_env.run.opponents import PoolError

TB_TAGS = EVAL_TAGS


def opponents_label(opponents: str | None, rules, rank: str) -> str:
    if opponents is not None:
        return "budget drafter" if opponents == "generator" else opponents
    from rune_env.envs.run_env import SHIPPED_POOLS, shipped_pool
    from rune_env.run.ranks import rank_index
    pool = shipped_pool(rules, rank_index(rules, rank))
    if pool is None:
        return "budget drafter (no shipped pool)"
    # named as in a checkout wherever the package is installed (a wheel's pools live in
    # site-packages, not under this script's checkout): the same JSON from either
    return f"configs/opponents/{pool.relative_to(SHIPPED_POOLS).as_posix()}"


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


def write_tensorboard(out_dir: Path, label: str, result: dict, cores, rules, step: int = 0,
                      context: dict | None = None, normalized: dict | None = None,
                      folder: str | None = None) -> Path:
    """An agent's evaluation into DIR/tb/<agent>/ at its training step: the old event files of that
    directory are deleted first, so a rerun replaces the agent's curves instead of mixing them
    with the last run's. Every agent gets the same tags (agents.evaluation.runs.log_evaluation)."""
    from torch.utils.tensorboard import SummaryWriter
    d = fresh_tb_run(out_dir / "tb" / (folder or tb_dir_name(label)))
    with SummaryWriter(str(d)) as w:
        log_evaluation(w, result, step, rules, cores=cores, context=context)
        if normalized is not None:
            log_score(w, "eval/normalized_wins", normalized, step)
    return d


def write_normalized_chart(out_dir: Path, rank: str, labels: list[str], scores: dict,
                           floor: str, top: str, context: dict) -> Path:
    """DIR/normalized.png, and the same picture in TensorBoard (tb/normalized/)."""
    from torch.utils.tensorboard import SummaryWriter
    from agents.evaluation.charts import save, to_array
    from agents.evaluation.normalize import normalized_figure
    title = (f"normalized mean wins at {rank} (floor {floor}, top {top}; "
             f"{context['episodes']} runs, seed {context['seed']}, rules {context['rules_hash']})")
    path = save(normalized_figure(rank, labels, scores, title), out_dir / "normalized.png")
    with SummaryWriter(str(fresh_tb_run(out_dir / "tb" / "normalized"))) as w:
        w.add_image("eval/normalized_chart", to_array(normalized_figure(rank, labels, scores, title)),
                    0, dataformats="HWC")
    return path


def normalize(results: dict[str, dict], floor: str, top: str, seed: int) -> dict:
    """--normalize: each agent's normalized score (agents/evaluation/normalize.py), with a
    warning when the top does not beat the floor (no scores then)."""
    scores = normalized_scores({n: [run["wins"] for run in r["runs"]] for n, r in results.items()},
                               floor, top, seed)
    if scores[top]["score"] is None:
        print(f"warning: {top} does not win more than {floor} here: no normalized scores",
              file=sys.stderr)
    return scores


def write_csv(path: Path, summaries: dict[str, dict], context: dict,
              normalized: dict | None) -> None:
    """eval.csv: a row per agent with its rates, what it played against and its timing."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "episodes", "battle_win_rate", "battle_lo", "battle_hi", "mean_wins",
                    "wins_lo", "wins_hi", "clear_rate", "clear_lo", "clear_hi", "rounds_survived",
                    "rank", "opponents", "rules_hash", "seed", "ms_per_action"]
                   + (["normalized", "normalized_lo", "normalized_hi"] if normalized else []))
        for n, s in summaries.items():
            w.writerow([n, s["episodes"], s["battle_win_rate"], *s["battle_ci"], s["mean_wins"],
                        *s["wins_ci"], s["clear_rate"], *s["clear_ci"], s["rounds_survived"],
                        context["rank"], context["opponents"], context["rules_hash"],
                        context["seed"], s["ms_per_action"]]
                       + ([normalized[n]["score"], *normalized[n]["ci"]] if normalized else []))


RUN_COLUMNS = ("run_seed", "wins", "losses", "draws", "cleared", "rounds", "lamps", "core")


def write_runs_csv(path: Path, results: dict[str, dict], context: dict) -> None:
    """runs.csv: a row per agent and run (its seed, wins, losses, draws, whether it cleared, the
    battles it fought, the lamps it kept, its core), so any statistic of the runs can be worked
    out again without playing them."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", *RUN_COLUMNS, "rank", "rules_hash", "seed"])
        for n, r in results.items():
            for run in r["runs"]:
                w.writerow([n, *(int(run[k]) if k == "cleared" else run[k] for k in RUN_COLUMNS),
                            context["rank"], context["rules_hash"], context["seed"]])


def write_paired_csv(path: Path, pairs: list[dict], context: dict) -> None:
    """paired.csv: a row per pair and measure, its difference, interval and whether apart."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "measure", "difference", "lo", "hi", "apart", "rank", "rules_hash",
                    "seed", "episodes"])
        for p in pairs:
            for m in MEASURES:
                w.writerow([p["a"], p["b"], m, p[m]["difference"], *p[m]["ci"], p[m]["apart"],
                            context["rank"], context["rules_hash"], context["seed"],
                            context["episodes"]])


def print_head_to_head(matrix: dict[str, dict[str, float]]) -> None:
    """The matrix with its columns numbered as its rows (a name cut to fit a column could not
    be told from another: two columns read 'models/apprent'), the names as long as they are."""
    names = list(matrix)
    width = max(len(f"{len(names)} {n}") for n in names) + 2
    print("\nhead to head (row's share of battles won vs column, both seatings):")
    print(" " * width + "".join(f"{i:>8}" for i in range(1, len(names) + 1)))
    for i, r in enumerate(names, 1):
        print(f"{f'{i} {r}':<{width}}" + "".join(
            f"{'-':>8}" if r == c else f"{matrix[r][c]:>8.3f}" for c in names))


def format_table(summaries: dict[str, dict], normalized: dict | None = None,
                 context: dict | None = None) -> str:
    """The printed table: what was played (`context`: rank, opponents, rules, seed), then a row
    per agent with its rates and 95% intervals and a line of its per-core rates and timing."""
    from agents.cli.tables import text_table
    from agents.evaluation.normalize import format_score

    def rate(value, ci, digits):
        return f"{value:.{digits}f} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"
    header = ["agent", "runs", "battle win rate [95%]", "mean wins [95%]", "clear rate [95%]",
              "rounds"] + (["normalized [95%]"] if normalized else [])
    rows = [[name, str(s["episodes"]), rate(s["battle_win_rate"], s["battle_ci"], 3),
             rate(s["mean_wins"], s["wins_ci"], 2), rate(s["clear_rate"], s["clear_ci"], 3),
             f"{s['rounds_survived']:.2f}"]
            + ([format_score(normalized.get(name))] if normalized else [])
            for name, s in summaries.items()]
    head, *body = text_table(header, rows)
    lines = [] if context is None else [
        f"{context['rank']} against {context['opponents']}; rules {context['rules_hash']}, "
        f"evaluation seed {context['seed']}, {context['episodes']} runs an agent"]
    lines.append(head)
    for line, s in zip(body, summaries.values()):
        cores = ", ".join(f"{c} {v['battle_win_rate']:.2f}/{v['clear_rate']:.2f}"
                          for c, v in s["by_core"].items())
        lines += [line, f"    per core (battle win / clear): {cores}; "
                        f"{s['ms_per_action']:.2f} CPU ms an action"]
    return "\n".join(lines)


def eval_json(context: dict, summaries: dict[str, dict], steps: dict[str, int],
              normalized: tuple | None, pairs: list[dict]) -> dict:
    """eval.json's content: what was played, each agent's rates, its timing apart, and the
    normalized scores ((floor, top, scores)) and paired differences where asked for."""
    out = {"rank": context["rank"], "seed": context["seed"], "rules_hash": context["rules_hash"],
           "opponents": context["opponents"],
           "agents": {n: {"timesteps": steps[n],
                          **{k: s[k] for k in ("episodes", "battle_win_rate", "battle_ci",
                                               "mean_wins", "wins_ci", "clear_rate", "clear_ci",
                                               "rounds_survived", "by_core")}}
                      for n, s in summaries.items()},
           # the one part of the output that is not reproducible: a timing of this machine
           "timing": {"ms_per_action": {n: s["ms_per_action"] for n, s in summaries.items()}}}
    if normalized:
        floor, top, scores = normalized
        out["normalized"] = {"floor": floor, "top": top, "of": "mean_wins",
                             "interval": "paired bootstrap over run seeds, 2.5-97.5%",
                             "scores": scores}
    if pairs:
        out["paired"] = {"interval": "paired bootstrap over run seeds, 2.5-97.5%",
                         "of": "first - second", "pairs": pairs}
    return out


def build_parser(rules=None):
    """The command line; the ranks it lists are `rules`' (default: the defaults)."""
    p = script_parser(__doc__)
    p.add_argument("--agents", type=agent_name, nargs="+", required=True, metavar="AGENT",
                   help="random, scripted, greedy, greedy:NOISE (NOISE a share 0..1 of random "
                        "actions), planner[:KEY=VALUE,...] (the search player; knobs boards "
                        "10..1000000, reference meta|rank|FILE[@K][+...], size 1..256, noise "
                        "0..1, core, goal meta|none, meta auto|FILE, default auto: the "
                        "metagame shipped for the rules (a pool file for a designer's rules), "
                        "goal_weight 0..100, waste_weight 0..100, "
                        "default 0.5: mana lost to rerolls and sales per round's income, "
                        "goal_lead 0..15, "
                        "goal_from 1..run.round_cap or auto, default auto = 3 in a run, 1 in a "
                        "duel: the first round that weighs the goal, align 0..1, default 0: the "
                        "battle points it gives up to keep a placement a learner made, seed_from "
                        "run|state, default run: state draws its searches from what it sees, "
                        "roll 0..64, default 0: views of its own a roll decision draws, 0 "
                        "off, roll_share (0, 1], default 0.34: of boards, each search of a "
                        "roll decision, roll_view_share (0, 1] or none, default none (= "
                        "roll_share): of boards, each search weighing the stand and the views, "
                        "the commits keeping roll_share, "
                        "roll_halving 0|1, default 0: its commits race over the "
                        "views, about half the searches, roll_until 1..run.round_cap or none, "
                        "default none: the lookahead's last round, roll_cap 1..run.action_cap "
                        "or none, default none: its rerolls a round at most, spend_floor 0..1, "
                        "default 0: it rolls only while its holdings and the mana left after the "
                        "reroll are this share of the mana had), ahead 0..32, default 0: views of "
                        "the next round's shop each of its best boards is weighed on, 0 off, "
                        "ahead_share (0, 1], "
                        "default 0.2: of boards, each search of the next round), "
                        "by_round:1=A;3=B (A in rounds 1-2, B from round 3), "
                        "sampled:policy=FILE,n=16,temperature=1,reference=rank,size=64,margin=0.05 "
                        "(a policy improved by search at play time; n 1..1024 rollouts a round, "
                        "temperature (0, 100], size 1..1024 reference boards, margin 0..10) or "
                        "the path of a "
                        "saved model (.zip) or "
                        "exported policy (.pt) (required; no default)")
    ranks = [r.id for r in (rules or default_rules()).spec.ranks]
    p.add_argument("--rank", default=ranks[0], metavar="R",
                   help=f"the rank to play: a name ({', '.join(ranks)}) or its number "
                        f"0..{len(ranks) - 1}, as the envs take it (default: {ranks[0]})")
    add_count_argument(p, "--episodes", 100, "runs per agent", high=MAX_EPISODES)
    add_seed_argument(p, "evaluation seed (its run seeds are apart from every training seed and "
                         "from every other evaluation seed's)")
    add_json_argument(p, "eval.json's content on stdout instead of the table")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: runs/eval_<rank>_s<seed>)")
    p.add_argument("--head-to-head", action="store_true",
                   help="also fight the agents' boards of the same seed and round against each "
                        "other, both seatings (default: off)")
    p.add_argument("--normalize", type=agent_name, nargs="?", const=TOP, default=None, metavar="TOP",
                   help="also each agent's normalized score of mean wins, (agent - random) / "
                        f"(TOP - random), with a paired bootstrap 95%% interval; TOP is an agent "
                        f"as --agents takes it (alone: {TOP}, the search player at its defaults); "
                        "random and TOP are evaluated too if --agents does not name them "
                        "(default: off)")
    p.add_argument("--paired", action="store_true",
                   help="also each pair of agents' differences of battle win rate, mean wins and "
                        "clear rate, with paired bootstrap 95%% intervals over the run seeds "
                        "(default: off)")
    add_opponents_argument(p, "what the agents play against")
    add_rules_argument(p)
    add_play_arguments(p)
    add_ray_argument(p)
    return p


def agent_names(a) -> list[str]:
    """The agents to play: --agents, then the floor and the top of --normalize where they are
    not among them. ValueError for an agent given twice (by any path: `same_agent`), a top that
    is the floor, or --paired with fewer than two."""
    names = list(a.agents)
    if (twice := repeated(names)) is not None:
        raise ValueError(f"--agents: {twice!r} is given twice")
    if a.normalize is not None:      # the floor and the top play too, after the named agents
        names += [n for n in (FLOOR, a.normalize) if not any(same_agent(n, m) for m in names)]
        if same_agent(a.normalize, FLOOR):
            raise ValueError(f"--normalize {a.normalize}: the top must not be the floor ({FLOOR})")
    if a.paired and len(names) < 2:
        raise ValueError("--paired: give two agents or more (or --normalize, whose floor and top "
                         "play too): it compares each pair")
    return names


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    apply_play_arguments(a)          # torch threads (default 1) before any torch work
    try:
        rank = rank_name(a.rank, rules)
    except ValueError as exc:     # a bad rank
        return fail(str(exc))
    out_dir = Path(a.out or ROOT / "runs" / f"eval_{rank}_s{a.seed}")
    if out_dir.exists() and not out_dir.is_dir():
        return fail(f"--out {out_dir}: exists and is not a directory")
    from agents.cli.args import check_output_dir
    if (problem := check_output_dir(out_dir, "--out")):      # before anything is played
        return fail(problem)
    env_kwargs = {"rank": rank, "opponents": a.opponents, "strict_pools": a.strict,
                  **rules_env_kwargs(a)}
    # everything is checked before anything is played: the pool, then every agent
    try:
        from rune_env.envs.run_env import RuneRunEnv
        RuneRunEnv(**env_kwargs).close()
    except (PoolError, OSError, ValueError) as exc:   # a missing or corrupt pool, one of other rules with --strict
        return fail(str(exc))
    try:
        names = agent_names(a)
        # two files that would share a label (two runs' iter_2/policy.pt) are named by more of
        # their paths (agent_labels)
        labels = agent_labels(names)
        agents = {label: make_agent(name, rules, seed=a.seed, strict=a.strict)
                  for name, label in zip(names, labels)}
    except ValueError as exc:   # an unknown name; PolicyLoadError (missing, corrupt) is a ValueError
        return fail(str(exc))
    steps = {label: (training_step(name) or 0) for label, name in zip(agents, names)}
    name_of = dict(zip(agents, names))
    results: dict[str, dict] = {}
    with bar(a.episodes * len(agents), "evaluating", a.progress) as progress:
        for label, agent in agents.items():
            progress.set_description(label)
            try:
                if a.ray is None:
                    results[label] = evaluate(agent, a.episodes, a.seed, env_kwargs,
                                              progress=progress)
                else:                 # the same runs as Ray tasks, each agent rebuilt by name
                    results[label] = evaluate_by_name(name_of[label], a.episodes, a.seed,
                                                      env_kwargs, a.ray,
                                                      env_kwargs.get("rules"), a.seed,
                                                      a.strict, progress)
            except PoolError as exc:
                return fail(str(exc))
    # the rates (reproducible), and the agent's CPU time an action (a timing of this machine)
    summaries = {n: {**{k: v for k, v in r.items() if k != "runs"},
                     "ms_per_action": ms_per_action(r["runs"])} for n, r in results.items()}
    # what every evaluation here was played against: in the CSV's rows and TensorBoard's text
    context = {"rank": rank, "opponents": opponents_label(a.opponents, rules, rank),
               "rules_hash": rules.hash, "episodes": a.episodes, "seed": a.seed}
    def label_of(wanted: str) -> str:     # the label the agent got (agent_labels), by name
        return next((lb for n, lb in zip(names, labels) if same_agent(n, wanted)),
                    agent_label(wanted))
    floor, top = label_of(FLOOR), label_of(a.normalize or TOP)
    normalized = None if a.normalize is None else normalize(results, floor, top, a.seed)
    pairs = (paired_differences({n: r["runs"] for n, r in results.items()}, a.seed)
             if a.paired else [])
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_csv(out_dir / "eval.csv", summaries, context, normalized)
        write_runs_csv(out_dir / "runs.csv", results, context)
        folders = tb_dir_names(list(results))     # one TensorBoard run an agent, never shared
        for n, r in results.items():
            write_tensorboard(out_dir, n, r, list(rules.spec.cores), rules, steps[n], context,
                              normalized[n] if normalized else None, folder=folders[n])
        if normalized:
            write_normalized_chart(out_dir, rank, list(results), normalized, floor, top, context)
        if pairs:
            write_paired_csv(out_dir / "paired.csv", pairs, context)
    except OSError as exc:
        return fail(f"{out_dir}: cannot write ({exc.strerror or exc})")
    out = eval_json(context, summaries, steps, normalized and (floor, top, normalized), pairs)
    if a.head_to_head and len(results) > 1:
        out["head_to_head"] = head_to_head(results, rules)
    (out_dir / "eval.json").write_text(json.dumps(out, indent=1))
    if a.json:
        print(json.dumps(out))
    else:
        print(format_table(summaries, normalized, context))
        if pairs:
            print(format_paired(pairs, a.episodes))
        if "head_to_head" in out:
            print_head_to_head(out["head_to_head"])
        print(f"\nwritten: {out_dir}/eval.csv, runs.csv, eval.json, tb/"
              + (", normalized.png" if normalized else "") + (", paired.csv" if pairs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
