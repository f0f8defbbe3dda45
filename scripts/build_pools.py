#!/usr/bin/env python3
"""Build the shipped opponent pools, one per rank, from the recipes in configs/ranks.yaml.

    python scripts/build_pools.py [--config configs/ranks.yaml] [--ranks R ...]
                                  [--out-dir configs/opponents] [--runs-scale X] [--force] [--json]
                                  [--exploit-rounds R ...] [--no-exploitability]
                                  [--rules FILE] [--engine fast|reference] [--no-progress]

A rank's recipe names the agents that draft its ghosts (greedy:NOISE, or the path of a trained
policy), the runs each plays, the seed, the last round, whether the trained policies sample their
actions, and `min_trained_share`. Each agent plays its runs through agents/design/pools/drafting.py's `ghosts_of`
(as make_opponents does): under the opponent side's economy of the rank (from mentor up the
drafting agent's income and start mana x the rank's budget factor), endless, against the budget
drafter, one board per round 1..max_round per run. Journeyman's extra rune and sage's boss rules
are added when a ghost is fielded, not here. Agent i of a rank drafts on evaluation seed
`seed * 1000 + i`. `--rules FILE` builds under a rules file (the recipes' ranks and round cap,
the drafting runs and the pools' rules hash are that file's; a policy trained under other rules
warns), so its pools are fielded without a warning under the same --rules; they go to --out-dir,
which --rules of other rules than the defaults needs (configs/opponents holds the defaults').

Duplicates: a board is kept once per (round, agent) with a "count" of the runs that drafted it,
and the pool fields it with that weight (PoolOpponents samples by count), so a deterministic
policy that drafts the same board in many runs is met as often as it drafts it. Trained share of
a round, counted two ways, and both must reach `min_trained_share`:
  boards  the share of the round's pool entries (distinct boards of an agent) drafted by a trained
          policy;
  drafts  the share of the round's drafts (entries weighted by count, i.e. of the boards a player
          meets) drafted by a trained policy.
A rank whose share falls short in any round is refused: nothing is written for it and the script
exits 2 (the other ranks are still built). Pools are written atomically and compactly (one ghost
per line), with provenance: the recipe, seeds, runs scale, commit, rules hash, the policy files
with their sha256, and the shares. An existing pool is kept unless --force (checked for every
rank before anything is built). `--runs-scale X` multiplies every agent's runs (at least 1 each),
for quick trial builds. `--json` prints the per-rank report as JSON on stdout (the summaries go
to stderr). A bad argument, recipe, rank, output folder or policy file is one `error: ...` line
and exit status 2, found before any pool is built or written. A progress bar (drafting runs of
every rank) goes to stderr when it is a terminal (--progress forces it, --no-progress hides it).

Then, for the pools written, the exploitability table (scripts/exploitability.py's measure with
its --quick settings, seed 0, a player's budget): per rank and round (--exploit-rounds, default
3 6 9 12), the win rate of the best response a search finds on part of the pool's ghosts,
measured on a disjoint part, with its Wilson 95% interval; "-" for a round the pool has fewer
than two distinct ghosts of. It takes a few seconds a rank and round; --no-exploitability skips
it, and exploitability.py measures with the full search. With --json it is also the report's
"exploitability" (rank -> the rounds' `RoundExploit` JSON).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from agents.design.metagame import exploit_table, exploitability, quick_exploit_settings
from agents.design.metagame.cli import parse_rounds
from agents.design.pools import (BuildError, RecipeError, build_pools, scaled_runs,
                                 load_recipes, plan_build, pool_file)
from agents.cli.fanout import add_ray_argument, ray_problem
from agents.cli.progress import add_progress_argument, bar
from agents.cli.progress import say as progress_say
from agents.cli.provenance import git_commit
from agents.cli.args import (MAX_RUNS, add_rules_argument, add_trust_pickle_argument,
                             apply_trust_pickle, fail, parse_with_rules, positive_float_to,
                             script_parser)
from rune_env.battle.engines import add_engine_argument, use_engine
from rune_env.rules import default_rules
from rune_env.run.opponents import load_pool

DEFAULT_CONFIG = ROOT / "configs" / "ranks.yaml"
DEFAULT_OUT = ROOT / "configs" / "opponents"


EXPLOIT_ROUNDS = "3 6 9 12"

# --runs-scale's bound: recipes hold tens to hundreds of runs an agent, so a scale past 1000 is a
# typo; every agent's scaled runs must also stay within the scripts' MAX_RUNS.
MAX_RUNS_SCALE = 1000


def _too_many_runs(recipes, wanted, runs_scale: float) -> str | None:
    """Why the scaled recipes ask for too many runs (None: they do not)."""
    for rank in (r for r in wanted if r in recipes):       # plan_build names unknown ranks
        for agent in recipes[rank].agents:
            if scaled_runs(agent.runs, runs_scale) > MAX_RUNS:
                return (f"--runs-scale {runs_scale:g}: {rank}'s {agent.agent} would draft "
                        f"{scaled_runs(agent.runs, runs_scale)} runs, more than {MAX_RUNS}")
    return None


def build_parser(rules=None):
    """The command line (`rules`: parse_with_rules's; no option here is bounded by them)."""
    p = script_parser(__doc__)
    p.add_argument("--config", default=str(DEFAULT_CONFIG), metavar="FILE",
                   help="the recipe file (default configs/ranks.yaml)")
    p.add_argument("--ranks", nargs="+", default=None, metavar="RANK",
                   help="the ranks to build (default: every rank with a recipe)")
    p.add_argument("--out-dir", default=None, metavar="DIR",
                   help="where the pools <rank>.json.gz go (default configs/opponents, the "
                        "default rules' pools; required with --rules of other rules)")
    p.add_argument("--runs-scale", type=positive_float_to(MAX_RUNS_SCALE), default=1.0,
                   metavar="X",
                   help=f"multiply every agent's runs (at least 1 each), for trial builds; > 0 "
                        f"and <= {MAX_RUNS_SCALE}, and no agent's runs past {MAX_RUNS} "
                        f"(default 1.0)")
    p.add_argument("--force", action="store_true",
                   help="replace existing pool files (default: keep them and stop)")
    p.add_argument("--json", action="store_true",
                   help="the report as JSON on stdout, the summaries on stderr (default off)")
    add_rules_argument(p)
    p.add_argument("--exploit-rounds", nargs="+", default=EXPLOIT_ROUNDS.split(), metavar="R",
                   help=f"rounds of the exploitability table, e.g. 3 6 9 12, 3,6 or 1-12, within "
                        f"1..run.round_cap (default {EXPLOIT_ROUNDS})")
    p.add_argument("--no-exploitability", dest="exploitability", action="store_false",
                   help="skip the exploitability table of the pools written (default: print it, "
                        "with exploitability.py's --quick settings: a few seconds a rank and "
                        "round)")
    add_engine_argument(p)     # both engines play the same battles: the same pools
    add_trust_pickle_argument(p)
    add_progress_argument(p)
    add_ray_argument(p)
    return p


def exploit_built(report: dict, rules, out_dir: Path, rounds, a, out_file) -> dict:
    """The exploitability table of the pools written (printed on `out_file`); rank -> its
    rounds' JSON."""
    built = [rank for rank, entry in report["ranks"].items() if entry["written"]]
    settings = quick_exploit_settings(rounds)
    rows = []
    with bar(len(built) * len(rounds), "exploitability", a.progress, unit="round") as b:
        for rank in built:
            pool = load_pool(pool_file(out_dir, rank), rules)
            rows.append((rank, exploitability(rules, pool, settings, lambda _: b.update(1),
                                              a.ray)))
    if rows:
        progress_say(exploit_table(rows, rounds, rules, settings, "rank"), file=out_file)
    return {rank: [x.to_json(rules) for x in results] for rank, results in rows}


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    use_engine(a.engine)
    apply_trust_pickle(a)
    out_file = sys.stderr if a.json else sys.stdout

    def say(msg: str) -> None:
        progress_say(msg, file=out_file)

    if a.out_dir is None and rules.hash != default_rules().hash:
        return fail(f"--rules {a.rules}: give --out-dir DIR for its pools (configs/opponents "
                    f"holds the default rules' pools)")
    config = Path(a.config)
    try:
        exploit_rounds = parse_rounds(a.exploit_rounds, rules.spec.run.round_cap)
    except ValueError as exc:
        return fail(f"--exploit-rounds: {exc}")
    try:
        recipes = load_recipes(config, rules, ROOT)
        commit = git_commit(ROOT)    # once, before this build writes any pool file
        out_dir = Path(a.out_dir or DEFAULT_OUT)
        if problem := _too_many_runs(recipes, a.ranks or list(recipes), a.runs_scale):
            return fail(problem)      # before plan_build loads the policies
        wanted = plan_build(recipes, a.ranks, rules, config, out_dir, a.force)
        report, refused = build_pools(recipes, wanted, rules, config, out_dir, a.runs_scale,
                                      commit, say, a.progress, ROOT, ray=a.ray)
    except (RecipeError, BuildError) as exc:
        return fail(str(exc))
    if a.exploitability:
        report["exploitability"] = exploit_built(report, rules, out_dir, exploit_rounds, a,
                                                 out_file)
    if a.json:
        print(json.dumps(report))
    else:
        say(f"rules {rules.hash} ({a.rules or 'the defaults'}), recipes {config}")
    return 2 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
