#!/usr/bin/env python3
"""Make an opponent pool for a rank from agents' boards ("ghosts").

    python scripts/make_opponents.py --rank R --agents A [A ...] [--runs N] [--seed S]
                                     [--max-round M] [--sample] [--rules FILE] [--engine E]
                                     --out FILE [--force] [--no-progress]

Each agent plays N runs; every board it takes into battle is recorded with its agent, run seed,
round and rank. Ghosts of rank R are drafted with the opponent side's rules of R: from mentor up
the drafting agent's income and starting mana are x the rank's opponent budget factor (D-44);
journeyman's extra rune and sage's boss rules are added when a ghost is fielded, not here. The
drafting runs play on past lost lamps and the 10th win up to round M (default 15), so every round
gets ghosts. `--rules FILE` drafts under a rules file (e.g. a designer's change that `extends:
default.yaml`): the agents, the drafting runs and the pool's rules hash are that file's, so the
pool is fielded without a warning under the same --rules. The drafting runs meet the budget drafter (the opponents the PPO agents trained
against), never a shipped pool, so a pool does not depend on the pools already in
configs/opponents/. A board an agent drafted in several runs is kept once with its "count" (the
pool fields it with that weight); a summary (boards and drafts per round, agents, kinds, grades,
cores) is printed; the pool file is written atomically (a killed run leaves the old file) and an
existing file is kept unless --force. A bad argument, rank, agent or output path is one
`error: ...` line and exit status 2, before anything is drafted; a progress bar (drafting runs)
goes to stderr when it is a terminal (--progress forces it, --no-progress hides it).

The functions (agents/design/pools/drafting.py: drafting_overrides, make_drafting_agent, ghosts_of, tally,
summary) are also what scripts/build_pools.py builds the shipped pools with.
"""
from __future__ import annotations

import sys
from pathlib import Path

from agents.design.pools import (DRAFTING_OPPONENTS, by_round, draft_ghosts, make_agents,
                                 summary, tally)
from agents.cli.progress import add_progress_argument
from agents.cli.args import (MAX_RUNS, add_count_argument, add_rules_argument, add_seed_argument,
                             add_trust_pickle_argument, agent_name, apply_trust_pickle,
                             check_output, fail, int_in, parse_with_rules, script_parser)
from rune_env.battle.engines import add_engine_argument, use_engine
from rune_env.rules import default_rules
from rune_env.run.opponents import Pool, save_pool
from rune_env.run.ranks import rank_index


def build_parser(rules=None):
    """The command line; its bounds (ranks, run.round_cap) are `rules`' (default: the defaults)."""
    rules = rules or default_rules()
    p = script_parser(__doc__)
    p.add_argument("--rank", required=True,
                   help="the rank the pool is for: "
                        + ", ".join(r.id for r in rules.spec.ranks)
                        + f", or its number 0..{len(rules.spec.ranks) - 1} (required)")
    p.add_argument("--agents", type=agent_name, nargs="+", required=True, metavar="AGENT",
                   help="who drafts the ghosts: random, scripted, greedy, greedy:NOISE, planner[:KEY=VALUE,...] (the search player) or paths "
                        "of saved models (.zip) or exported policies (.pt) (required)")
    add_count_argument(p, "--runs", 20, "drafting runs per agent", high=MAX_RUNS)
    add_seed_argument(p, "the drafting seed (agent i drafts on evaluation seed S * 1000 + i)")
    cap = rules.spec.run.round_cap
    p.add_argument("--max-round", type=int_in(1, cap, "run.round_cap"), default=min(15, cap),
                   metavar="M",
                   help=f"the last round drafted, 1..{cap} (run.round_cap) (default "
                        f"{min(15, cap)})")
    p.add_argument("--out", required=True, metavar="FILE", help="the pool file to write (required)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file (default: keep it and stop)")
    p.add_argument("--sample", action="store_true",
                   help="trained policies sample their actions (diverse ghosts) instead of taking "
                        "the likeliest one (default off)")
    add_rules_argument(p)
    # the parser's tail and main's first lines share calibrate_ranks.py's shape, not its options
    add_engine_argument(p)
    add_trust_pickle_argument(p)
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    try:
        rank = rank_index(rules, a.rank if not a.rank.isdigit() else int(a.rank))
    except ValueError as exc:
        return fail(f"--rank: {exc}")
    out = Path(a.out)
    if out.exists() and not out.is_dir() and not a.force:
        return fail(f"{out} exists (pass --force to replace it)")
    problem = check_output(out, "--out")
    if problem:
        return fail(problem)
    use_engine(a.engine)
    apply_trust_pickle(a)
    try:
        agents = make_agents(a.agents, a.seed, a.sample, rules)   # all before anything is drafted
        ghosts = draft_ghosts(agents, rank, a.runs, a.max_round, rules, a.progress)
    except ValueError as exc:   # an unknown name, a policy file that does not load
        return fail(str(exc))
    pool = Pool(rules_hash=rules.hash, rank=rules.spec.ranks[rank].id, rounds=by_round(tally(ghosts)),
                provenance={"agents": a.agents, "runs": a.runs, "seed": a.seed,
                            "max_round": a.max_round, "sample": a.sample, "rules": a.rules,
                            "script": "scripts/make_opponents.py",
                            "drafting_opponents": DRAFTING_OPPONENTS})
    try:
        save_pool(pool, out, compact=True)      # atomic: an error leaves the old file, or none
    except OSError as exc:
        return fail(f"--out {out}: cannot write the pool ({exc.strerror or exc})")
    print(summary(pool))
    print(f"written {out} (rules {rules.hash}, seed {a.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
