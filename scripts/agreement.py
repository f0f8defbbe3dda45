#!/usr/bin/env python3
"""How often one agent takes the action another would take, on the first one's own states.

    python scripts/agreement.py --actor A --labeller B [--rank R] [--runs N] [--seed S]
                                [--labeller-seed K] [--opponents POOL] [--rules FILE]
                                [--json] [--no-progress]

Plays N whole runs with the actor (any name make_agent knows: planner, planner:align=0.05, a
policy file, greedy, ...) on evaluation run seeds of S; at every step the labeller says what it
would do (never played). Prints the share of steps on which they agree, overall, by the kind of
action the labeller asks for and by round, each with a 95% interval (a bootstrap over runs), the
seed and the rules hash (one JSON object with --json). The labeller is reset with the run's seed
plus K (default 1: another seed than the actor's; 0, the same).

Two questions of expert iteration it answers (docs/RESULTS.md, "How clonable is the planner"):
`--actor planner --labeller planner` is the teacher against itself under another seed, the most a
student that sees only the observation could match; `--actor runs/<run>/final_policy.pt
--labeller planner` is a clone against its teacher on the clone's own states. A bad argument is
one `error: ...` line and exit status 2. A progress bar goes to stderr.
"""
from __future__ import annotations

import json

from agents import make_agent
from agents.cli.args import (add_count_argument, add_json_argument, add_opponents_argument,
                             add_rules_argument, add_seed_argument, fail, int_in,
                             parse_with_rules, rules_env_kwargs, script_parser)
from agents.cli.progress import add_progress_argument, bar, progress_on

LABELLER_SEED_MAX = 1_000_000


def build_parser(rules=None):
    from agents.evaluation.agreement import LABELLER_SEED_OFFSET
    p = script_parser(__doc__)
    p.add_argument("--actor", required=True,
                   help="the agent that plays: random, greedy, planner[:KEY=VALUE,...], a policy "
                        "file (.pt), ... (required; no default)")
    p.add_argument("--labeller", required=True,
                   help="the agent asked at every step what it would do (required; no default)")
    p.add_argument("--rank", default="archmage",
                   help="the rank played, a name or number of the rules' ranks (default archmage)")
    add_count_argument(p, "--runs", 50, "runs to play", high=10_000)
    add_seed_argument(p)
    p.add_argument("--labeller-seed", type=int_in(0, LABELLER_SEED_MAX), metavar="K",
                   default=LABELLER_SEED_OFFSET,
                   help=f"the labeller's seed is the run's seed plus K, 0..{LABELLER_SEED_MAX} "
                        f"(default {LABELLER_SEED_OFFSET}: another seed than the actor's; 0: the "
                        f"same)")
    add_opponents_argument(p)
    add_rules_argument(p)
    add_json_argument(p, "one JSON object instead of the table")
    add_progress_argument(p)
    return p


def _row(name: str, share: dict) -> str:
    if share["agreement"] is None:
        return f"  {name:<18} {share['steps']:>7}        -"
    lo, hi = share["ci"]
    return f"  {name:<18} {share['steps']:>7}   {share['agreement']:.3f}  [{lo:.3f}, {hi:.3f}]"


def main(argv: list[str] | None = None) -> int:
    a, rules = parse_with_rules(build_parser, argv)
    env_kwargs = {"rank": a.rank, **rules_env_kwargs(a)}
    if a.opponents is not None:
        env_kwargs["opponents"] = a.opponents
    try:
        from rune_env.envs.run_env import RuneRunEnv
        env = RuneRunEnv(**env_kwargs)
        actor = make_agent(a.actor, env.rules, seed=a.seed)
        labeller = make_agent(a.labeller, env.rules, seed=a.seed)
    except (ValueError, OSError) as exc:
        return fail(str(exc))
    from agents.evaluation.agreement import agreement
    with bar(a.runs, f"agreement ({a.actor} / {a.labeller})", progress_on(a.progress)) as pb:
        out = agreement(actor, labeller, env, a.runs, a.seed, a.labeller_seed, pb)
    head = {"actor": a.actor, "labeller": a.labeller, "rank": a.rank, "runs": a.runs,
            "seed": a.seed, "labeller_seed": a.labeller_seed, "rules_hash": env.rules.hash}
    if a.json:
        print(json.dumps({**head, **out}, indent=1, sort_keys=True))
        return 0
    print(f"{a.actor} playing, {a.labeller} labelling (its seed: the run's + {a.labeller_seed}); "
          f"rank {a.rank}, {a.runs} runs of seed {a.seed}, rules {env.rules.hash}")
    print(f"  {'':<18} {'steps':>7}   agree  95% interval (bootstrap over runs)")
    print(_row("all", out["overall"]))
    print("  by the labeller's action:")
    for kind, share in out["by_kind"].items():
        print(_row(kind, share))
    print("  by round:")
    for round_, share in out["by_round"].items():
        print(_row(f"round {round_}", share))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
