"""`python -m rune_env COMMAND`: a thin command line over rules, battle and run.

  battle A.json B.json [--trace] [--rules FILE] [--variant dice --seed N]   one battle, as JSON
  (a board may be a pool's ghost, POOL@ROUND[:INDEX], in battle, explain and replay)
  explain BOARD.json [--against OTHER.json] [--json] [--rules FILE] [--variant dice]
  play [--seed N] [--rank R] [--core C] [--profile FILE] [--opponents POOL] [--rules FILE]
                                                       a run in the terminal
  render BOARD.json -o board.png|board.svg [--annotate] [--rules FILE]   a picture of a board
  render POOL --round R [--index I] -o ghost.png       a pool's ghost (most drafted first)
  sheet POOL|AUDIT.json|META.json --round R -o sheet.png [--annotate] [--max N]
                                                       a round's boards side by side
  replay A.json B.json -o replay.html [--rules FILE]   a self-contained HTML replay of a battle
  rules FILE [--against FILE] [--json]                 a rules file's hash and what it changes

Commands that write a file say so on stdout (`wrote FILE: ...`). A warning (a pool made under
other rules than --rules names) is one `warning: ...` line on stderr.

Bad input (a bad option value, a board or rules file that breaks a rule, an output file that
cannot be written) prints one line `error: ...` naming the problem to stderr and exits with
status 2. When the reader of the output goes away (`... | head -1`), the command stops quietly
(no traceback) with status 1, as Python's own documentation recommends for a broken pipe.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import warnings
from pathlib import Path

from .files import ascii_number, printable_line, write_bytes_atomic, write_text_atomic
from .rules import BoardError, RulesError, load_board, load_rules

RULES_HELP = "a rules YAML file (default: configs/rules/default.yaml)"


class CommandError(Exception):
    """Bad input found by a command itself; printed as one `error: ...` line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (`error: ...`) instead of the usage and a message."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


# Seeds a command line takes (here and in scripts/, agents.cli.args): 32-bit, so that the run
# seeds derived from them stay far inside the int64 that numpy and torch seed with.
SEED_MAX = 2**32 - 1


def _non_negative(text: str) -> int:
    """An integer >= 0 (an index)."""
    try:
        value = int(ascii_number(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def _seed(text: str) -> int:
    """A seed: an integer 0..SEED_MAX."""
    try:
        value = int(ascii_number(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer 0..2**32-1, got {text!r}") from None
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"a seed is an integer 0..2**32-1, got {value}")
    return value


def _bounded(low: int, high: int):
    """An argparse type: a whole number in low..high."""
    def check(text: str) -> int:
        try:
            value = int(ascii_number(text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {low}..{high}, got {value}")
        return value
    return check


_round_number = _bounded(1, 999)


def _output(path: str, suffixes: tuple[str, ...], what: str) -> Path:
    """The file a command writes: its extension one of `suffixes`, its directory existing."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in suffixes:
        raise CommandError(f"{path}: {what}; got {suffix or 'no extension'!r}")
    parent = out.parent
    if not parent.is_dir():
        raise CommandError(f"{path}: the directory {str(parent)!r} does not exist")
    if out.is_dir():
        raise CommandError(f"{path}: is a directory, not a file")
    return out


def _battle(args: argparse.Namespace) -> int:
    from .battle import battle
    rules = load_rules(args.rules)
    a = board_arg(args.board_a, rules)
    b = board_arg(args.board_b, rules)
    result = battle(a, b, rules, trace=args.trace, seed=args.seed, variant=args.variant)
    print(json.dumps(result.to_json()))
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .battle.explain import explain, format_explain
    rules = load_rules(args.rules)
    board = board_arg(args.board, rules)
    other = board_arg(args.against, rules) if args.against else None
    report = explain(board, rules, other, variant=args.variant)
    print(json.dumps(report, indent=1) if args.json else format_explain(report))
    return 0


def _rules(args: argparse.Namespace) -> int:
    from .rules.diff import rules_diff
    rules = load_rules(args.file)
    against = load_rules(args.against)
    changes = rules_diff(rules, against)
    if args.json:
        print(json.dumps({"file": args.file, "rules_hash": rules.hash,
                          "against": args.against or "default", "against_hash": against.hash,
                          "changes": [c.to_json() for c in changes]}, indent=1))
        return 0
    name = args.against or "the defaults (configs/rules/default.yaml)"
    print(printable_line(f"{args.file}: rules {rules.hash}; against {name}, rules "
                         f"{against.hash}: {len(changes)} value{'s' if len(changes) != 1 else ''}"
                         f" differ{'s' if len(changes) == 1 else ''}"))
    width = max((len(c.key) for c in changes), default=0)
    for c in changes:       # a balance rule at its "off" value is not in the hash: "(off)"
        before = json.dumps(c.before) + (" (off)" if c.before_off else "")
        after = json.dumps(c.after) + (" (off)" if c.after_off else "")
        # the keys are the schema's, the values JSON (control characters escaped)
        print(f"  {c.key:<{width}}  {before} -> {after}")
    return 0


def add_play_options(p: argparse.ArgumentParser) -> None:
    """The terminal game's options (`play` here, and scripts/play.py with its `--hint`)."""
    p.add_argument("--seed", type=_seed,
                   help="the run's seed, 0..2**32-1 (default: a random one, printed)")
    p.add_argument("--rank", default="0",
                   help="rank name (apprentice, journeyman, ...) or number 0..5 "
                        "(default: 0, the first rank)")
    p.add_argument("--core",
                   help="fix the core (sun, star, moon, eclipse, tree) instead of choosing it "
                        "at the start (default: none, you choose)")
    p.add_argument("--profile", metavar="FILE",
                   help="a profile JSON file: unlocks and open ranks, saved at the end "
                        "(default: none, every rank open and every rune unlocked)")
    p.add_argument("--opponents", metavar="POOL",
                   help="a pool file, or generator for the budget drafter (default: the rank's "
                        "shipped pool, as RuneRun-v0 fields it)")
    p.add_argument("--rules", help=RULES_HELP)


def _play(args: argparse.Namespace) -> int:
    from .terminal.play import main_args
    return main_args(args)


MAX_SHEET = 120          # boards on one contact sheet: a pool round holds up to ~80


def _is_pool(path: str) -> bool:
    """A pool file, by its name (.gz) or its first bytes ("format": "rune-env-pool")."""
    from .files import is_gzip_name
    from .run.opponents import POOL_FORMAT
    if Path(path).exists() and not Path(path).is_file():
        return False            # a FIFO or a device would block the read: load_board refuses it
    if is_gzip_name(Path(path)):
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False            # load_board names the problem
    return f'"{POOL_FORMAT}"'.encode() in head


GHOST = re.compile(r"(?P<pool>.+)@(?P<round>[0-9]{1,4})(?::(?P<index>[0-9]{1,6}))?")


def pool_ghost(path: str, round_: int, index: int, rules, index_name: str = "index") -> tuple:
    """(board, label) of ghost `index` (most drafted first) of round `round_` of the pool file
    `path`; a CommandError naming what is missing otherwise."""
    from .pictures.sheet import pool_round_boards
    from .run.opponents import PoolError
    try:
        ghosts = pool_round_boards(Path(path), rules, round_)
    except PoolError as exc:        # a pool that does not load: its one line
        raise CommandError(str(exc)) from None
    if index >= len(ghosts):
        raise CommandError(f"{index_name} {index}: round {round_} of {path} has {len(ghosts)} boards "
                           f"(0..{len(ghosts) - 1})")
    return ghosts[index].board, ghosts[index].label


def board_arg(text: str, rules):
    """A command's board: a board file, or POOL@ROUND[:INDEX], ghost INDEX (default 0, the most
    drafted) of a pool's round, as `render POOL --round R --index I` draws it."""
    if Path(text).exists():
        if _is_pool(text):
            raise CommandError(f"{text}: a pool file: name one of its ghosts as "
                               f"{text}@ROUND[:INDEX]")
        return load_board(text, rules)
    m = GHOST.fullmatch(text)
    if m and _is_pool(m["pool"]):
        return pool_ghost(m["pool"], int(m["round"]), int(m["index"] or 0), rules)[0]
    pool, at, _ = text.rpartition("@")
    if at and Path(pool).exists() and _is_pool(pool):
        raise CommandError(f"{text}: a pool's ghost is POOL@ROUND or POOL@ROUND:INDEX, with a "
                           f"round and an index in ASCII digits")
    return load_board(text, rules)


BOARD_HELP = ("file (JSON), or POOL@ROUND[:INDEX] for a pool's ghost of that round (INDEX 0, the "
              "default, is the most drafted)")


def _render(args: argparse.Namespace) -> int:
    out = _output(args.output, (".png", ".svg"),
                  "the picture's format comes from its extension, .png or .svg")
    rules = load_rules(args.rules)
    if _is_pool(args.board):
        if args.round is None:
            raise CommandError(f"{args.board}: a pool file: name the round with --round R")
        board, what = pool_ghost(args.board, args.round, args.index, rules, "--index")
    else:
        if args.round is not None or args.index:
            raise CommandError("--round and --index are for pool files; "
                               f"{args.board} is a board file")
        board, what = load_board(args.board, rules), "board"
    from .pictures.board_image import board_png, board_svg
    # pictures are written whole or not at all (a temp file renamed over the name)
    if out.suffix.lower() == ".png":
        write_bytes_atomic(out, board_png(board, rules, annotate=args.annotate))
    else:
        write_text_atomic(out, board_svg(board, rules, annotate=args.annotate))
    print(printable_line(f"wrote {out}: {what}"))
    return 0


def _sheet(args: argparse.Namespace) -> int:
    out = _output(args.output, (".png",), "the contact sheet is a PNG: name it *.png")
    rules = load_rules(args.rules)
    from .pictures.sheet import contact_sheet, round_boards
    from .run.opponents import PoolError
    try:
        what, boards = round_boards(Path(args.file), rules, args.round)
    except PoolError as exc:            # a pool that does not load: its one line
        raise CommandError(str(exc)) from None
    shown = boards[:args.max]
    title = (f"{Path(args.file).name}: round {args.round}, {len(shown)} of {len(boards)} "
             f"boards ({what}; rules {rules.hash})")
    picture = io.BytesIO()
    contact_sheet(shown, rules, title, annotate=args.annotate,
                  columns=args.columns).save(picture, format="PNG")
    write_bytes_atomic(out, picture.getvalue())
    print(f"wrote {out}: {len(shown)} board{'s' if len(shown) != 1 else ''} of round {args.round}"
          + (f" (the first {args.max} of {len(boards)})" if len(boards) > len(shown) else ""))
    return 0


def _replay(args: argparse.Namespace) -> int:
    out = _output(args.output, (".html", ".htm"),
                  "the replay is a self-contained HTML page: name it *.html")
    from .pictures.replay import replay_html
    rules = load_rules(args.rules)
    a = board_arg(args.board_a, rules)
    b = board_arg(args.board_b, rules)
    page = replay_html(a, b, rules, names=(_board_name(args.board_a), _board_name(args.board_b)))
    write_text_atomic(out, page)
    print(printable_line(f"wrote {out}: the replay of {Path(args.board_a).name} against "
                         f"{Path(args.board_b).name}"))
    return 0


def _board_name(arg: str) -> str:
    """A board argument as the replay names its side: the file's name without .json(.gz), and a
    pool's ghost with its round and index (sage@15:0; its stem was "sage.json")."""
    name = Path(arg).name
    base, at, ghost = name.rpartition("@") if "@" in name else (name, "", "")
    for suffix in (".gz", ".json"):
        base = base.removesuffix(suffix)
    return f"{base}{at}{ghost}"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m rune_env", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    variants = ("deterministic", "dice")

    p = sub.add_parser("battle", help="fight board A (side 0) against board B (side 1)",
                       description="Fight board A (side 0) against board B (side 1); print the "
                                   "result as one JSON object.")
    p.add_argument("board_a", help="side 0's board: a " + BOARD_HELP)
    p.add_argument("board_b", help="side 1's board: a " + BOARD_HELP)
    p.add_argument("--trace", action="store_true",
                   help="add every event of the battle to the output (default: off)")
    p.add_argument("--rules", help=RULES_HELP)
    p.add_argument("--variant", choices=variants,
                   help="the game variant (default: the rules file's `variant`, deterministic "
                        "in the shipped rules)")
    p.add_argument("--seed", type=_seed, default=0,
                   help="the dice variant's seed, 0..2**32-1 (default: 0)")
    p.set_defaults(func=_battle)

    p = sub.add_parser("explain", help="each rune's power at battle start and why",
                       description="Each rune's power at battle start and the multipliers "
                                   "that make it.")
    p.add_argument("board", help="the board: a " + BOARD_HELP)
    p.add_argument("--against", metavar="OTHER",
                   help="the opponent's board, for affinity: a " + BOARD_HELP + " (default: "
                        "none, no affinity)")
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of the table (default: off, the table)")
    p.add_argument("--rules", help=RULES_HELP)
    p.add_argument("--variant", choices=variants,
                   help="dice: also each rune's power level and die (default: the rules' "
                        "variant)")
    p.set_defaults(func=_explain)

    p = sub.add_parser("play", help="play a run in the terminal (type help at the prompt)",
                       description="Play a whole run in the terminal; type help at the prompt. "
                                   "With hints from an agent: scripts/play.py --hint AGENT.")
    add_play_options(p)
    p.set_defaults(func=_play)

    p = sub.add_parser("render", help="draw a board as PNG or SVG (format from -o's extension)",
                       description="Draw a board, or a pool's ghost, as a PNG or SVG picture.")
    p.add_argument("board", help="the board file (JSON), or a pool file (with --round)")
    p.add_argument("--round", type=_round_number, metavar="R",
                   help="a pool file's round, 1..999 (required for a pool; default: none)")
    p.add_argument("--index", type=_non_negative, default=0, metavar="I",
                   help="which of the round's boards, most drafted first, >= 0 (default: 0)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the picture to write, *.png or *.svg, in an existing directory "
                        "(required, no default)")
    p.add_argument("--annotate", action="store_true",
                   help="add each rune's power, the flows and the resonance patterns "
                        "(default: off)")
    p.add_argument("--rules", help=RULES_HELP)
    p.set_defaults(func=_render)

    p = sub.add_parser("sheet", help="a round's boards of a pool, an audit or the metagame side "
                                     "by side (PNG)",
                       description="Draw a round's boards side by side as one PNG: a pool's "
                                   "(each labelled with its drafter and count, most drafted "
                                   "first), an audit's best board per family "
                                   "(scripts/balance_audit.py --json) or the metagame's mixture "
                                   "(scripts/metagame.py --json; each labelled with its weight, "
                                   "heaviest first).")
    p.add_argument("file", help="a pool file (.json or .json.gz), an audit's JSON or the "
                                "metagame's JSON")
    p.add_argument("--round", type=_round_number, required=True, metavar="R",
                   help="the round, 1..999 (required, no default)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the sheet to write, *.png, in an existing directory (required, no default)")
    p.add_argument("--annotate", action="store_true",
                   help="powers, flows, resonance and cell names on every board (default: off)")
    p.add_argument("--max", type=_bounded(1, MAX_SHEET), default=40, metavar="N",
                   help=f"boards at most, 1..{MAX_SHEET} (default: 40)")
    p.add_argument("--columns", type=_bounded(1, 12), default=5, metavar="N",
                   help="boards per row, 1..12 (default: 5)")
    p.add_argument("--rules", help=RULES_HELP)
    p.set_defaults(func=_sheet)

    _add_rules_command(sub)
    p = sub.add_parser("replay", help="write a self-contained HTML page replaying a battle",
                       description="Write one self-contained HTML page that replays the battle "
                                   "of board A (side 0) against board B (side 1).")
    p.add_argument("board_a", help="side 0's board: a " + BOARD_HELP)
    p.add_argument("board_b", help="side 1's board: a " + BOARD_HELP)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the page to write, *.html, in an existing directory "
                        "(required, no default)")
    p.add_argument("--rules", help=RULES_HELP)
    p.set_defaults(func=_replay)
    return parser


def _add_rules_command(sub) -> None:
    p = sub.add_parser("rules", help="a rules file's hash and the values it changes",
                       description="A rules file's hash, and each value of it that differs from "
                                   "another rules file's (the defaults unless --against), as "
                                   "KEY BEFORE -> AFTER; the values as validated and hashed, so "
                                   "files of the same hash have none.")
    p.add_argument("file", help="the rules YAML file (it may extend another)")
    p.add_argument("--against", metavar="FILE",
                   help="the rules file to compare with (default: configs/rules/default.yaml)")
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of the list (default: off, the list)")
    p.set_defaults(func=_rules)


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null, so the interpreter's last flush of the
    unwritten output does not fail again (and print a second traceback)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
        pass


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {printable_line(message)}", file=file or sys.stderr)


def main(argv: list[str] | None = None) -> int:
    # a warning (a pool drawn under other rules than --rules) is one `warning: ...` line
    warnings.showwarning = _one_line_warning
    try:
        args = build_parser().parse_args(argv)
        status = args.func(args)
        sys.stdout.flush()      # inside the try: a pipe closed early fails here at the latest
        return status
    except BrokenPipeError:
        _quiet_stdout()
        return 1
    except (BoardError, RulesError, CommandError) as exc:
        print(f"error: {printable_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:      # an output file that cannot be written
        name = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {printable_line(f'{name}{exc.strerror or exc}')}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
