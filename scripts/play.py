#!/usr/bin/env python3
"""The terminal game with hints: `python -m rune_env play`, and an agent that advises you.

    python scripts/play.py --hint AGENT [--seed N] [--rank R] [--core C] [--profile FILE]
                           [--opponents POOL] [--rules FILE] [--strict] [--trust-pickle]

The game is `python -m rune_env play` (its `help` lists the commands). `hint` at the prompt asks
AGENT what it would do now and prints it as the command to type with what its number stands for
(`hint: buy 2  (fire)`); you may take it or not. AGENT is any agent name evaluate.py takes:
`planner:strong` (the strongest search player within about 1 s a hint), `planner` (about a third
of that), `greedy`, or a policy file (`agents/models/apprentice_s2.pt`). `plan` draws the board
the search player is building toward this round (after a hint of the round). The agent sees what
it would see in RuneRun-v0 (the run state, never the opponent's board before a battle nor draws
not made) and is told every action you take; take every hint and you play the very run the agent
plays with that seed, fielding at each battle the board `plan` showed
(rune_env/terminal/hints.py).

A bad option, rules file, profile or agent is one `error: ...` line and exit status 2 before the
run starts.
"""
from __future__ import annotations

import sys

from agents import make_agent
from agents.cli.args import (add_trust_pickle_argument, agent_name, apply_trust_pickle, fail,
                             script_parser)
from agents.policy import limit_torch_threads
from rune_env.cli import add_play_options
from rune_env.rules import RulesError, default_rules, load_rules
from rune_env.terminal.hints import Adviser
from rune_env.terminal.play import main_args


def build_parser():
    p = script_parser(__doc__)
    add_play_options(p)
    p.add_argument("--hint", type=agent_name, metavar="AGENT", default=None,
                   help="the agent `hint` asks: planner:strong, planner, greedy, a policy file, "
                        "... as evaluate.py takes them (default: none, `hint` says how to get "
                        "one)")
    p.add_argument("--strict", action="store_true",
                   help="refuse a policy made under other rules (default: warn and use it)")
    add_trust_pickle_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rules = load_rules(args.rules) if args.rules else default_rules()
    except RulesError as exc:
        return fail(str(exc))
    make = None
    if args.hint is not None:
        apply_trust_pickle(args)
        # one observation at a time: one torch thread is fastest (set when a policy loads; a
        # planner or greedy never imports torch)
        limit_torch_threads(1)
        try:
            agent = make_agent(args.hint, rules, seed=0, strict=args.strict)
        except (ValueError, OSError) as exc:
            return fail(str(exc))

        def make(seed: int) -> Adviser:
            return Adviser(agent, rules, args.hint, seed)
    return main_args(args, rules=rules, adviser=make)


if __name__ == "__main__":
    sys.exit(main())
