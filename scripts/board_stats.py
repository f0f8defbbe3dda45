#!/usr/bin/env python3
"""What boards agents, or opponent pools, take into battle, round by round.

    python scripts/board_stats.py [--agents AGENT ...] [--pools FILE ...] [--rank R]
                                  [--opponents POOL|generator] [--episodes N] [--seed S]
                                  [--from-round R] [--max-casting K] [--by-drafter]
                                  [--rules FILE] [--json] [--out FILE] [--no-progress]

Sources (at least one): `--agents` (random, scripted, greedy, greedy:NOISE, planner[:KEY=VALUE,...] (the search player) or a model path, a
`.zip` checkpoint or an exported `.pt` policy) each play N whole runs on evaluation seeds (as
scripts/evaluate.py plays them), and every battle's board counts once; `--pools` files count every
ghost of every round as often as its `count` says (the boards the pool fields).

Per source, a row per round: boards, casting runes per board (the eight elements on the circle,
not the hand), median [10th, 90th percentile] (weighted, by the inverted CDF: always a count
that occurs), the share of boards with <= K casting runes, the boards' mean cost against the
round's budget (a pool: its rank's opponent budget, what its drafting runs were given; an agent: a
player's budget, 10, 20, 30, ... mana under the defaults; the cost counts the runes on the circle
and in the hand, the artifacts and the open sectors), the top 3 rune kinds (of the runes) and
the top core; for agents, what the runs end with (cores, relics, artifacts); last, "from round
R on: X% of N boards have <= K casting runes" with its 95% interval, and the least and mean cost
share from round R on (issue #32 asks 0.80 of the budget from round 3 of mentor, sage and
archmage's ghosts). A pool's boards are also
split by drafter (each ghost records the agent that drafted it): a line per drafter with its
boards and its "from round R on" share, and with `--by-drafter` a whole table per drafter. The JSON report
(`--json` on stdout, `--out FILE` written atomically) holds every round's statistics: casting
runes (median, p10, p90, min, max, mean, share <= K), the shares of every rune kind, grade, core,
artifact and relic, and the rules hash (and each pool's own); a pool's also per drafter
("drafters").

`--rules FILE` plays and reads under a rules file (the agents, their runs and the pools are
checked against it; the bounds of --from-round and --max-casting are that file's): a pool drafted
under the same --rules (scripts/make_opponents.py --rules) is read without a warning. Under a
rules file other than the defaults the rank's shipped pool is of other rules, so give the agents
`--opponents` (your pool, or generator).

A pool or a policy made under other rules is one `warning: ...` line on stderr (refused with
--strict). A progress bar (runs played) goes to stderr when it is a terminal, never to stdout. A
bad argument, rank, agent, model file or pool is one `error: ...` line on stderr and exit status 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from agents import make_agent
from agents.evaluation.board_stats import (DEFAULT_FROM_ROUND, DEFAULT_MAX_CASTING,
                                           agent_boards, by_drafter, drafter_lines,
                                           format_source, pool_boards, summarise)
from agents.evaluation.runs import MAX_EPISODES
from agents.cli.progress import bar
from agents.cli.args import (add_count_argument, add_json_argument, add_opponents_argument,
                             add_play_arguments, add_rules_argument, add_seed_argument, agent_name,
                             apply_play_arguments, check_output, fail, int_in, load_pool_once,
                             parse_with_rules, script_parser)
from rune_env.files import write_json_atomic
from rune_env.rules import default_rules
from rune_env.run.opponents import PoolError


def build_parser(rules=None):
    """The command line; its bounds (ranks, run.round_cap, a board's cells) are `rules`'
    (default: the defaults)."""
    rules = rules or default_rules()
    p = script_parser(__doc__)
    p.add_argument("--agents", type=agent_name, nargs="+", default=[], metavar="AGENT",
                   help="agents whose boards to count: random, scripted, greedy, greedy:NOISE, planner[:KEY=VALUE,...] (the search player) or "
                        "the path of a saved model (.zip) or exported policy (.pt) (default: "
                        "none; give --agents, --pools or both)")
    p.add_argument("--pools", nargs="+", default=[], metavar="FILE",
                   help="pool files whose ghosts to count, each as often as its count (default: "
                        "none)")
    ranks = [r.id for r in rules.spec.ranks]
    p.add_argument("--rank", default=ranks[0], metavar="R",
                   help=f"the rank the agents play: a name ({', '.join(ranks)}) or its number "
                        f"0..{len(ranks) - 1} (default: {ranks[0]})")
    add_opponents_argument(p)
    add_count_argument(p, "--episodes", 100, "runs per agent", high=MAX_EPISODES)
    add_seed_argument(p, "evaluation seed of the agents' runs")
    cap = rules.spec.run.round_cap
    p.add_argument("--from-round", type=int_in(1, cap, "run.round_cap"),
                   default=DEFAULT_FROM_ROUND, metavar="R",
                   help=f"the overall line counts the boards of rounds >= R, 1..{cap} "
                        f"(default {DEFAULT_FROM_ROUND})")
    from rune_env.rules.geometry import geometry
    cells = geometry(rules.radius).n_cells
    p.add_argument("--max-casting", type=int_in(0, cells, "the cells of a board"),
                   default=DEFAULT_MAX_CASTING, metavar="K",
                   help=f"the share of boards with <= K casting runes, 0..{cells} (a board's "
                        f"cells) (default {DEFAULT_MAX_CASTING})")
    p.add_argument("--by-drafter", action="store_true",
                   help="also a whole table per drafter of each pool (default off: a line per "
                        "drafter)")
    add_rules_argument(p)
    add_json_argument(p, "the JSON report on stdout instead of the tables")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="also write the JSON report to FILE, atomically (default: not written)")
    add_play_arguments(p)
    return p


def check_sources(a, rules, rank: int):
    """Everything checked before anything is played: the opponents' pool, every agent and every
    pool file. Returns (the agents' env or None, opponents label, agents by label, pools by
    label); raises ValueError (PoolError, an unknown agent, a missing model) or OSError with the
    message to print."""
    from rune_env.envs.run_env import RuneRunEnv, shipped_pool
    if a.opponents is None:
        shipped = shipped_pool(rules, rank)
        opponents = str(shipped) if shipped else None
        if shipped is None:
            label = "budget drafter (no shipped pool)"
        else:   # a wheel's shipped pools are not in the checkout
            label = str(shipped.relative_to(ROOT) if shipped.is_relative_to(ROOT) else shipped)
    else:
        opponents = a.opponents
        label = "budget drafter" if a.opponents == "generator" else a.opponents
    if a.agents and opponents not in (None, "generator"):
        load_pool_once(opponents, rules, a.strict)     # says a pool of other rules once
    # built now, so that an opponents pool the env refuses stops the script before any play
    env = RuneRunEnv(rank=rank, opponents=a.opponents, strict_pools=a.strict,
                     rules=rules) if a.agents else None
    agents = {}
    for name in a.agents:
        if name in agents:
            raise ValueError(f"--agents: {name!r} is given twice")
        agents[name] = make_agent(name, rules, seed=a.seed, strict=a.strict)
    pools = {}
    for path in a.pools:
        if path in pools or path in agents:
            raise ValueError(f"--pools: {path!r} is given twice")
        pools[path] = load_pool_once(path, rules, a.strict)
    return env, label, agents, pools


def budgets(rules, rank_name: str | None):
    """round -> the opponent budget (D-44) of the rank named `rank_name`; a player's (E-36, the
    first rank's) when None or a rank these rules do not have (a pool made under other rules)."""
    from rune_env.run.ranks import opponent_budget, rank_effects
    names = [r.id for r in rules.spec.ranks]
    effects = rank_effects(rules, names.index(rank_name) if rank_name in names else 0)
    return lambda round_: opponent_budget(rules, round_, effects)


def report(a, rules, rank_name: str, env, opponents: str, agents: dict, pools: dict) -> dict:
    """Play the agents (in `env`), read the pools, and summarise every source: an agent's
    boards cost against a player's budget, a pool's against its rank's opponent budget."""
    sources: dict[str, dict] = {}
    player = budgets(rules, None)
    with bar(a.episodes * len(agents), "boards", a.progress) as progress:
        for name, agent in agents.items():
            progress.set_description(name)
            boards, runs = agent_boards(agent, a.episodes, a.seed, env=env, progress=progress)
            sources[name] = {"source": "agent", "rank": rank_name, "opponents": opponents,
                             "episodes": a.episodes, "seed": a.seed,
                             **summarise(boards, rules, a.from_round, a.max_casting, runs,
                                         budget=player)}
    for path, pool in pools.items():
        entries = pool_boards(pool, rules)
        budget = budgets(rules, pool.rank)
        sources[path] = {"source": "pool", "rank": pool.rank, "pool_rules_hash": pool.rules_hash,
                         "same_rules": pool.rules_hash == rules.hash,
                         **summarise(entries, rules, a.from_round, a.max_casting, budget=budget),
                         "drafters": {name: summarise(group, rules, a.from_round, a.max_casting,
                                                      budget=budget)
                                      for name, group in by_drafter(entries).items()}}
    return {"rules_hash": rules.hash, "from_round": a.from_round, "max_casting": a.max_casting,
            "sources": sources}


def title(label: str, s: dict) -> str:
    if s["source"] == "agent":
        return (f"{label}: agent, {s['episodes']} runs (seed {s['seed']}), rank {s['rank']}, "
                f"opponents: {s['opponents']}")
    other = "" if s["same_rules"] else f", made under other rules ({s['pool_rules_hash']})"
    return f"{label}: pool of rank {s['rank']}, {s['boards']} boards by count{other}"


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    if not a.agents and not a.pools:
        return fail("give --agents, --pools or both (the boards to count)")
    if a.agents:                     # pools alone play nothing: no engine, no torch to import
        apply_play_arguments(a)      # torch threads (default 1) before any torch work
    from rune_env.envs.arguments import check_rank
    try:
        rank = check_rank(rules, a.rank, "--rank")
    except ValueError as exc:
        return fail(str(exc))
    inputs = [*a.pools, *a.agents]      # an --out that is one of them would overwrite it
    if a.out is not None and (problem := check_output(a.out, "--out", inputs=inputs)):
        return fail(problem)
    try:
        # PoolError, an unknown agent and PolicyLoadError (missing, corrupt) are ValueErrors
        env, opponents, agents, pools = check_sources(a, rules, rank)
    except (OSError, ValueError) as exc:
        return fail(str(exc))
    try:
        out = report(a, rules, rules.spec.ranks[rank].id, env, opponents, agents, pools)
    except PoolError as exc:      # a ghost the env cannot field (as scripts/evaluate.py says it)
        return fail(str(exc))
    if a.out is not None:
        try:
            write_json_atomic(Path(a.out), out)
        except OSError as exc:
            return fail(f"--out {a.out}: cannot write ({exc.strerror or exc})")
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"rules {out['rules_hash']}; casting runes per board, from round {a.from_round} on "
          f"<= {a.max_casting}")
    for label, s in out["sources"].items():
        print()
        print(format_source(title(label, s), s, a.max_casting))
        if s["source"] == "pool":
            print("  by drafter:")
            print("\n".join(drafter_lines(s["drafters"])))
            for name, d in s["drafters"].items() if a.by_drafter else ():
                print()
                print(format_source(f"{label}, drafted by {name}", d, a.max_casting))
    if a.out is not None:
        print(f"\nwritten: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
