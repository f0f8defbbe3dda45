#!/usr/bin/env python3
"""How the search player plays: its rates at ranks, what it builds round by round, how long it
thinks, and its duels.

    python scripts/planner_report.py [--agent planner] [--ranks apprentice archmage]
                                     [--runs N] [--duels N] [--against A ...] [--seed S]
                                     [--opponents POOL|generator] [--rules FILE] [--json]
                                     [--no-progress] [--ray [ADDRESS]]

For each rank: N whole runs (evaluation seeds, as scripts/evaluate.py plays them) against the
rank's pool (or --opponents: under a rules file of your own, your pool or generator), with the battle win rate, mean wins and clear rate and their 95% intervals; then, per
round, what the boards cost against the mana the run had given the agent by then (start mana,
incomes and reward mana), the mana it kept unspent (the rest went to rerolls and to sales below the
price paid), the share of boards costing at least 85% of it, the rerolls a round, casting runes and
runes, the grades' mix, the cores, the commonest kinds, and the CPU seconds the agent spent
deciding the round (mean and most; the planner reports them). With --duels N it then plays N
RuneDuel games against each agent of --against (seats alternating, duel seeds of
`agents.evaluation.duels.match_seed`) and prints its score with a Wilson 95% interval of its win
rate. Any agent name make_agent knows works as --agent (greedy for comparison). A bad argument is
one `error: ...` line and exit status 2. A progress bar (runs and games) goes to stderr.
"""
from __future__ import annotations

import json
from pathlib import Path

from agents import make_agent
from agents.cli.args import (add_count_argument, add_json_argument, add_opponents_argument,
                             add_play_arguments, add_rules_argument, add_seed_argument,
                             agent_name, apply_play_arguments, fail, load_pool_once,
                             parse_with_rules, rules_env_kwargs, script_parser)
from agents.cli.fanout import add_ray_argument, ray_problem, run_tasks
from agents.cli.progress import bar
from agents.cli.provenance import shown
from agents.evaluation.builds import play_games, play_run_builds, round_table
from agents.evaluation.runs import MAX_EPISODES, eval_run_seed, summarise, wilson
from rune_env.run.opponents import PoolError

ROOT = Path(__file__).resolve().parents[1]
RUNS_PER_TASK = 5
GAMES_PER_TASK = 5


def build_parser(rules=None):
    p = script_parser(__doc__)
    p.add_argument("--agent", type=agent_name, default="planner",
                   help="the agent to report on: planner[:KEY=VALUE,...], or any name "
                        "make_agent knows (default: planner)")
    p.add_argument("--ranks", nargs="*", default=["apprentice", "archmage"], metavar="RANK",
                   help="the ranks to play (default: apprentice archmage; --ranks with no "
                        "names: the duels only)")
    add_count_argument(p, "--runs", 50, "runs per rank", high=MAX_EPISODES)
    add_count_argument(p, "--duels", 0, "duels against each --against agent", low=0,
                       high=100_000)
    # the default found from anywhere, not only from the repository's root
    p.add_argument("--against", nargs="*", default=[str(ROOT / "agents" / "models" / "league_s0.pt")],
                   metavar="A", help="the duel opponents (default: the repository's "
                                     "agents/models/league_s0.pt)")
    add_seed_argument(p)
    add_opponents_argument(p, "what the runs play against")
    add_rules_argument(p)
    add_json_argument(p)
    add_play_arguments(p)
    add_ray_argument(p)
    return p


def _runs(agent_name: str, rules_path: str | None, env_kwargs: dict, seed: int, start: int,
          count: int) -> list[dict]:
    """Runs start..start+count-1 of evaluation seed `seed` (a task of the fan-out)."""
    from rune_env.battle.fast import warm_up
    from rune_env.envs.run_env import RuneRunEnv
    from rune_env.rules import load_rules
    rules = load_rules(rules_path) if rules_path else None
    env = RuneRunEnv(**env_kwargs)
    # the battle kernel compiled (a fresh checkout, or a worker without the disk cache: about
    # 14 s) before the agent's first decision, so the round times are the decisions' own
    warm_up(rules or env.rules)
    agent = make_agent(agent_name, rules or env.rules, seed=seed)
    return [play_run_builds(env, agent, eval_run_seed(seed, i)) for i in range(start, start + count)]


def _opponents_problem(ranks: list[str], env_kwargs: dict, rules) -> str | None:
    """Each rank's opponents checked before anything is played: a missing or corrupt pool, or one
    of other rules with --strict, is the one-line answer; a pool of other rules without it is one
    warning line, said once."""
    from rune_env.envs.run_env import RuneRunEnv, shipped_pool
    names = [r.id for r in rules.spec.ranks]
    opponents = env_kwargs["opponents"]
    for rank in ranks:
        try:
            fielded = shipped_pool(rules, names.index(rank)) if opponents is None else opponents
            if fielded not in (None, "generator"):
                load_pool_once(fielded, rules, strict=env_kwargs["strict_pools"], rank=rank)
            RuneRunEnv(rank=rank, **env_kwargs).close()
        except (PoolError, OSError, ValueError) as exc:
            return f"--opponents: {exc}" if opponents is not None else f"{rank}: {exc}"
    return None


def _slices(total: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(size, total - s)) for s in range(0, total, size)]


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    names = [r.id for r in rules.spec.ranks]
    for rank in a.ranks:
        if rank not in names:
            return fail(f"--ranks: unknown rank {rank!r} (one of {', '.join(names)})")
    if not a.ranks and not a.duels:
        return fail("nothing to do: no --ranks and no --duels")
    apply_play_arguments(a)
    env_kwargs = {"opponents": a.opponents, "strict_pools": a.strict, **rules_env_kwargs(a)}
    if (problem := _opponents_problem(a.ranks, env_kwargs, rules)):
        return fail(problem)
    try:
        for name in [a.agent, *(a.against if a.duels else [])]:
            make_agent(name, rules, seed=0)
    except ValueError as exc:
        return fail(str(exc))
    rules_path = rules_env_kwargs(a).get("rules")
    out: dict = {"agent": a.agent, "rules_hash": rules.hash, "seed": a.seed,
                 "opponents": a.opponents or "the rank's pool", "ranks": {}, "duels": {}}
    total = a.runs * len(a.ranks) + a.duels * len(a.against)
    with bar(total, "playing", a.progress) as progress:
        for rank in a.ranks:
            kwargs = {"rank": rank, **env_kwargs}
            tasks = [(a.agent, rules_path, kwargs, a.seed, s, n) for s, n in _slices(a.runs, RUNS_PER_TASK)]
            runs = [r for chunk in run_tasks(_runs, tasks, a.ray, progress,
                                              [n for *_, n in tasks]) for r in chunk]
            summary = summarise(runs, max_wins=rules.spec.run.wins_to_clear)
            out["ranks"][rank] = {k: summary[k] for k in (
                "episodes", "battles", "battle_win_rate", "battle_ci", "mean_wins", "wins_ci",
                "clear_rate", "clear_ci", "rounds_survived")}
            out["ranks"][rank]["rounds"] = round_table(runs)
        for other in a.against if a.duels else []:
            tasks = [(a.agent, other, rules_path, a.seed, s, n) for s, n in _slices(a.duels, GAMES_PER_TASK)]
            scores = [x for chunk in run_tasks(play_games, tasks, a.ray, progress,
                                                [n for *_, n in tasks]) for x in chunk]
            wins = sum(x == 1.0 for x in scores)
            out["duels"][shown(Path(other)) if Path(other).exists() else other] = {"games": len(scores), "wins": wins,
                                   "draws": sum(x == 0.5 for x in scores),
                                   "score": sum(scores) / len(scores), "win_rate": wins / len(scores),
                                   "win_ci": list(wilson(wins, len(scores)))}
    print(json.dumps(out, indent=1) if a.json else format_report(out))
    return 0


def format_report(out: dict) -> str:
    lines = [f"{out['agent']}  (rules {out['rules_hash']}, evaluation seed {out['seed']}, "
             f"opponents: {out['opponents']})"]
    for rank, r in out["ranks"].items():
        lines.append(f"\n{rank}: {r['episodes']} runs  battle win rate {r['battle_win_rate']:.3f} "
                     f"[{r['battle_ci'][0]:.3f}, {r['battle_ci'][1]:.3f}]  mean wins "
                     f"{r['mean_wins']:.2f} [{r['wins_ci'][0]:.2f}, {r['wins_ci'][1]:.2f}]  clear "
                     f"{r['clear_rate']:.3f} [{r['clear_ci'][0]:.3f}, {r['clear_ci'][1]:.3f}]")
        lines.append(f"{'round':>5} {'boards':>6} {'win':>5} {'cost/had':>8} {'kept':>5} "
                     f"{'>=85%':>6} {'rolls':>5} {'casting':>7} {'runes':>5}  {'I/II/III':<14} "
                     f"{'s mean':>6} {'s max':>5}  cores; kinds")
        for row in r["rounds"]:
            g = row["grades"]
            mix = "/".join(f"{g.get(k, 0.0):.2f}" for k in (1, 2, 3))
            secs = ("-" if row["seconds_mean"] is None else f"{row['seconds_mean']:.2f}",
                    "-" if row["seconds_max"] is None else f"{row['seconds_max']:.2f}")
            cores = " ".join(f"{c}:{n}" for c, n in row["cores"].items())
            lines.append(f"{row['round']:>5} {row['battles']:>6} {row['win_rate']:>5.2f} "
                         f"{row['spend']:>8.2f} {row['kept']:>5.2f} {row['spend_85']:>6.2f} "
                         f"{row['rerolls']:>5.1f} {row['casting']:>7.1f} "
                         f"{row['runes']:>5.1f}  {mix:<14} {secs[0]:>6} {secs[1]:>5}  "
                         f"{cores}; {' '.join(row['kinds'])}")
    for other, d in out["duels"].items():
        lines.append(f"\nduels against {other}: {d['games']} games, score {d['score']:.3f}, "
                     f"won {d['win_rate']:.3f} [{d['win_ci'][0]:.3f}, {d['win_ci'][1]:.3f}]")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
