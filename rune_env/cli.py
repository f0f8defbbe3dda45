"""`python -m rune_env COMMAND`: a thin command line over rules, battle and run.

  battle A.json B.json [--trace] [--rules FILE]   one battle, as one JSON object
  explain BOARD.json [--against OTHER.json] [--json] [--rules FILE]
  play [--seed N] [--rank R] [--core C] [--profile FILE] [--rules FILE]   a run in the terminal

Bad input (a board or rules file that breaks a rule) prints one line naming the problem to
stderr and exits with status 2.
"""
from __future__ import annotations

import argparse
import json
import sys

from .rules import BoardError, RulesError, load_board, load_rules


def _battle(args: argparse.Namespace) -> int:
    from .battle import battle
    rules = load_rules(args.rules)
    a = load_board(args.board_a, rules)
    b = load_board(args.board_b, rules)
    result = battle(a, b, rules, trace=args.trace)
    print(json.dumps(result.to_json()))
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .battle.explain import explain, format_explain
    rules = load_rules(args.rules)
    board = load_board(args.board, rules)
    other = load_board(args.against, rules) if args.against else None
    report = explain(board, rules, other)
    print(json.dumps(report, indent=1) if args.json else format_explain(report))
    return 0


def _play(args: argparse.Namespace) -> int:
    from .play import main_args
    return main_args(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rune_env", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("battle", help="fight board A (side 0) against board B (side 1)")
    p.add_argument("board_a")
    p.add_argument("board_b")
    p.add_argument("--trace", action="store_true", help="add every event to the output")
    p.add_argument("--rules", help="a rules YAML file (default: configs/rules/default.yaml)")
    p.set_defaults(func=_battle)
    p = sub.add_parser("explain", help="each rune's power at battle start and why")
    p.add_argument("board")
    p.add_argument("--against", help="the opponent's board, for affinity")
    p.add_argument("--json", action="store_true")
    p.add_argument("--rules")
    p.set_defaults(func=_explain)
    p = sub.add_parser("play", help="play a run in the terminal (type help at the prompt)")
    p.add_argument("--seed", type=int, help="the run's seed (default: a random one, printed)")
    p.add_argument("--rank", default="0", help="rank name or number (default: the first)")
    p.add_argument("--core", help="fix the core instead of choosing it at the start")
    p.add_argument("--profile", help="a profile JSON file: unlocks and open ranks, saved at the end")
    p.add_argument("--rules")
    p.set_defaults(func=_play)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (BoardError, RulesError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
