"""`python -m rune_env COMMAND`: a thin command line over rules, battle and run.

  battle A.json B.json [--trace] [--rules FILE] [--variant dice --seed N]   one battle, as JSON
  explain BOARD.json [--against OTHER.json] [--json] [--rules FILE] [--variant dice]
  play [--seed N] [--rank R] [--core C] [--profile FILE] [--rules FILE]   a run in the terminal
  render BOARD.json -o board.png|board.svg [--annotate] [--rules FILE]   a picture of a board
  replay A.json B.json -o replay.html [--rules FILE]   a self-contained HTML replay of a battle

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
    result = battle(a, b, rules, trace=args.trace, seed=args.seed, variant=args.variant)
    print(json.dumps(result.to_json()))
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .battle.explain import explain, format_explain
    rules = load_rules(args.rules)
    board = load_board(args.board, rules)
    other = load_board(args.against, rules) if args.against else None
    report = explain(board, rules, other, variant=args.variant)
    print(json.dumps(report, indent=1) if args.json else format_explain(report))
    return 0


def _play(args: argparse.Namespace) -> int:
    from .play import main_args
    return main_args(args)


def _render(args: argparse.Namespace) -> int:
    from pathlib import Path
    suffix = Path(args.output).suffix.lower()
    if suffix not in (".png", ".svg"):
        print(f"error: {args.output}: the picture's format comes from its extension, "
              f".png or .svg; got {suffix or 'none'!r}", file=sys.stderr)
        return 2
    rules = load_rules(args.rules)
    board = load_board(args.board, rules)
    from .pictures.board_image import board_png, board_svg
    if suffix == ".png":
        Path(args.output).write_bytes(board_png(board, rules, annotate=args.annotate))
    else:
        Path(args.output).write_text(board_svg(board, rules, annotate=args.annotate), encoding="utf-8")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from pathlib import Path
    from .pictures.replay import replay_html
    rules = load_rules(args.rules)
    a = load_board(args.board_a, rules)
    b = load_board(args.board_b, rules)
    page = replay_html(a, b, rules, names=(Path(args.board_a).stem, Path(args.board_b).stem))
    Path(args.output).write_text(page, encoding="utf-8")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rune_env", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("battle", help="fight board A (side 0) against board B (side 1)")
    p.add_argument("board_a")
    p.add_argument("board_b")
    p.add_argument("--trace", action="store_true", help="add every event to the output")
    p.add_argument("--rules", help="a rules YAML file (default: configs/rules/default.yaml)")
    p.add_argument("--variant", choices=("deterministic", "dice"),
                   help="the game variant (default: the rules file's `variant`)")
    p.add_argument("--seed", type=int, default=0, help="the dice variant's seed (default 0)")
    p.set_defaults(func=_battle)
    p = sub.add_parser("explain", help="each rune's power at battle start and why")
    p.add_argument("board")
    p.add_argument("--against", help="the opponent's board, for affinity")
    p.add_argument("--json", action="store_true")
    p.add_argument("--rules")
    p.add_argument("--variant", choices=("deterministic", "dice"),
                   help="dice: also each rune's power level and die (default: the rules' variant)")
    p.set_defaults(func=_explain)
    p = sub.add_parser("play", help="play a run in the terminal (type help at the prompt)")
    p.add_argument("--seed", type=int, help="the run's seed (default: a random one, printed)")
    p.add_argument("--rank", default="0", help="rank name or number (default: the first)")
    p.add_argument("--core", help="fix the core instead of choosing it at the start")
    p.add_argument("--profile", help="a profile JSON file: unlocks and open ranks, saved at the end")
    p.add_argument("--rules")
    p.set_defaults(func=_play)
    p = sub.add_parser("render", help="draw a board as PNG or SVG (format from -o's extension)")
    p.add_argument("board")
    p.add_argument("-o", "--output", required=True, help="the picture to write: *.png or *.svg")
    p.add_argument("--annotate", action="store_true",
                   help="add each rune's power, the flows and the resonance patterns")
    p.add_argument("--rules")
    p.set_defaults(func=_render)
    p = sub.add_parser("replay", help="write a self-contained HTML page replaying a battle")
    p.add_argument("board_a")
    p.add_argument("board_b")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("--rules")
    p.set_defaults(func=_replay)
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
