"""Pools and audits as pictures: one ghost of a pool's round, or a round's boards side by side.

    pool_round_boards(path, rules, round_) -> list[LabelledBoard]   a pool's round, most drafted first
    audit_round_boards(path, rules, round_) -> list[LabelledBoard]  an audit's best board per family
    metagame_round_boards(path, rules, round_) -> list[LabelledBoard]  a round's mixture, by weight
    round_boards(path, rules, round_)                                any of them, by the file's content
    contact_sheet(boards, rules, title, annotate=False, columns=4) -> PIL image

A pool (`rune_env.run.opponents`, the format every opponent pool, shipped or drafted, and the
metagame's mixtures use) keeps each board of a round once per drafter with a `count` of the runs
that drafted it; its boards are listed most drafted first (ties in file order), each labelled with
its drafter and count, so index 0 is the board a player meets most often. An audit's JSON
(`scripts/balance_audit.py --json`) has one reported board per family and round, labelled with
the family, its win rate and fast-kill rate. The metagame's JSON (`scripts/metagame.py --json`)
has a list of rounds, each with its mixture: the boards of the round's equilibrium, heaviest
first, each labelled with its weight and cost. Every board is drawn by `board_image` with its label
in the header; the sheet puts them in a grid under a title line.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from ..files import load_json, read_text
from ..rules.board import Board, BoardError
from ..rules.config import Rules


@dataclass(frozen=True)
class LabelledBoard:
    board: Board
    label: str


def _labelled(data: dict, rules: Rules, label: str, source: str) -> LabelledBoard:
    board = Board.from_json(dict(data, label=label), rules, source=source)
    return LabelledBoard(board, label)


def _read_json(path: Path) -> dict:
    """The file's JSON object, read within the project's bounds (`rune_env.files.load_json`:
    nesting, size, finite numbers; a 200,000-deep array was a RecursionError)."""
    text = read_text(path, "file", BoardError)
    data = load_json(text, str(path), BoardError)
    if not isinstance(data, dict):
        raise BoardError(f"{path}: expected a JSON object")
    return data


def _warn_other_rules(data: dict, rules: Rules, path: Path, what: str) -> None:
    """The warning a pool of other rules gets, for an audit's or the metagame's JSON: its boards
    are drawn (and priced) under `rules`, not the rules they were found under."""
    made = data.get("rules_hash")
    if isinstance(made, str) and made != rules.hash:
        warnings.warn(f"{path}: {what} was made under rules {made[:40]}, the current rules are "
                      f"{rules.hash}", stacklevel=3)


def _round_of(rounds: dict, round_: int, path: Path, what: str):
    if str(round_) not in rounds and round_ not in rounds:
        have = sorted(int(r) for r in rounds)
        listed = ", ".join(str(r) for r in have) if have else "none"
        raise BoardError(f"{path}: {what} has no boards of round {round_} (rounds: {listed})")
    entry = rounds.get(round_, rounds.get(str(round_)))
    if not entry:       # `load_pool` refuses an empty round; a Pool made in memory may hold one
        raise BoardError(f"{path}: {what}'s round {round_} has no boards")
    return entry


def pool_round_boards(path: Path, rules: Rules, round_: int) -> list[LabelledBoard]:
    """A pool's boards of `round_`, most drafted first, labelled "rank r R #i: drafter xN"; a
    metagame's pool (`scripts/metagame.py --out`, whose rank field is only the format's: it
    is no rank's pool) "metagame round R #i: xN" (N of its 1000 counts)."""
    from ..run.opponents import ghost_count, load_pool
    pool = load_pool(path, rules)
    meta = pool.provenance.get("source") == "metagame"
    ghosts = _round_of(pool.rounds, round_, path,
                       "the metagame" if meta else f"the {pool.rank} pool")
    if meta:
        return _heaviest_first(ghosts, ghost_count, rules, f"{path} round {round_} board",
                               lambda k, g: f"metagame round {round_} #{k}: x{ghost_count(g)}")
    return _heaviest_first(ghosts, ghost_count, rules, f"{path} round {round_} ghost",
                           lambda k, g: f"{pool.rank} round {round_} #{k}: "
                                        f"{g.get('agent', '?')} x{ghost_count(g)}")


def _heaviest_first(items: list[dict], weight, rules: Rules, source: str,
                    label) -> list[LabelledBoard]:
    """Each item's "board", heaviest `weight(item)` first (ties in file order), labelled
    `label(k, item)`, k its place in that order."""
    order = sorted(range(len(items)), key=lambda i: -weight(items[i]))
    return [_labelled(items[i]["board"], rules, label(k, items[i]), f"{source} {i}")
            for k, i in enumerate(order)]


def audit_round_boards(path: Path, rules: Rules, round_: int) -> list[LabelledBoard]:
    """An audit's reported board of each family in `round_`."""
    data = _read_json(path)
    families = _round_of(data["rounds"], round_, path, "the audit")["families"]
    out = []
    for name, fam in families.items():
        if not isinstance(fam, dict) or not all(_is_number(fam.get(k, 0.0)) for k in
                                                ("win_rate", "fast_kill_rate", "cost")):
            raise BoardError(f"{path}: round {round_}'s family {name!r}: win_rate, "
                             f"fast_kill_rate and cost are numbers")
        label = (f"{name}: win {100 * fam['win_rate']:.0f}%, fast kills "
                 f"{100 * fam.get('fast_kill_rate', 0.0):.0f}%, cost {fam['cost']}")
        out.append(_labelled(fam["board"], rules, label, f"{path} round {round_} {name}"))
    return out


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_metagame(data: dict) -> bool:
    rounds = data.get("rounds")
    return isinstance(rounds, list) and all(isinstance(r, dict) and "round" in r
                                            and "mixture" in r for r in rounds)


def metagame_round_boards(path: Path, rules: Rules, round_: int) -> list[LabelledBoard]:
    """The metagame's mixture of `round_`, heaviest first (ties in file order), each labelled
    "round r mixture #i: weight w%, cost c"."""
    data = _read_json(path)
    if not _is_metagame(data):
        raise BoardError(f"{path}: not the metagame's JSON (scripts/metagame.py --json)")
    mixture = _round_of({r["round"]: r for r in data["rounds"]}, round_, path,
                        "the metagame")["mixture"]
    if not isinstance(mixture, list) or not all(
            isinstance(m, dict) and _is_number(m.get("weight")) and 0 <= m["weight"] <= 1
            and _is_number(m.get("cost")) for m in mixture):
        # a weight of 66 million digits as text passed float() and the label multiplied the
        # text by 100: 6.6 GB before the error (red team)
        raise BoardError(f"{path}: round {round_}'s mixture: each entry a weight 0..1 and a cost, "
                         f"as numbers")
    return _heaviest_first(mixture, lambda m: float(m["weight"]), rules,
                           f"{path} round {round_} mixture",
                           lambda k, m: f"round {round_} mixture #{k}: weight "
                                        f"{100 * m['weight']:.1f}%, cost {m['cost']}")


def round_boards(path: Path, rules: Rules, round_: int) -> tuple[str, list[LabelledBoard]]:
    """(what the file is, its boards of the round): a pool file, an audit's JSON or the
    metagame's JSON."""
    from ..run.opponents import POOL_FORMAT
    from ..files import is_gzip_name
    if is_gzip_name(path):
        return "pool", pool_round_boards(path, rules, round_)
    data = _read_json(path)
    if data.get("format") == POOL_FORMAT:
        return "pool", pool_round_boards(path, rules, round_)
    rounds = data.get("rounds")
    if isinstance(rounds, dict) and all(isinstance(v, dict) and "families" in v
                                        for v in rounds.values()):
        _warn_other_rules(data, rules, path, "the audit")
        return "audit", _some(_entries(audit_round_boards, path, rules, round_, "an audit's"),
                              path, round_)
    if _is_metagame(data):
        _warn_other_rules(data, rules, path, "the metagame")
        return "metagame", _some(_entries(metagame_round_boards, path, rules, round_,
                                          "the metagame's"), path, round_)
    raise BoardError(f"{path}: neither a pool file (\"format\": \"{POOL_FORMAT}\"), an "
                     "audit's JSON (scripts/balance_audit.py --json) nor the metagame's "
                     "(scripts/metagame.py --json)")


def _entries(read, path: Path, rules: Rules, round_: int, what: str) -> list[LabelledBoard]:
    """`read(path, rules, round_)` (an audit's or the metagame's boards), an entry missing a
    field or of another type said in one line (a BoardError) instead of a traceback."""
    try:
        return read(path, rules, round_)
    except BoardError:
        raise
    except KeyError as exc:
        raise BoardError(f"{path}: not {what} JSON: round {round_} lacks {exc}") from None
    except (TypeError, ValueError, AttributeError, IndexError) as exc:
        reason = " ".join(str(exc).split())[:120]
        raise BoardError(f"{path}: not {what} JSON: round {round_}: {reason}") from None


def _some(boards: list[LabelledBoard], path: Path, round_: int) -> list[LabelledBoard]:
    """`boards`, refused when empty (a sheet of no boards has no size)."""
    if not boards:
        raise BoardError(f"{path}: round {round_} has no boards")
    return boards


TITLE_LINE = 20         # px between two lines of a sheet's title


def _wrapped(text: str, font, width: float) -> list[str]:
    """`text` in lines of at most `width` px (words kept whole; a word wider stays one line)."""
    from PIL import Image, ImageDraw
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength
    lines: list[str] = []
    for word in text.split():
        if lines and measure(f"{lines[-1]} {word}", font=font) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]


def contact_sheet(boards: list[LabelledBoard], rules: Rules, title: str,
                  annotate: bool = False, columns: int = 4):
    """The boards in a grid (row by row, `columns` wide), under a title line; a PIL image."""
    from PIL import Image, ImageDraw
    from .board_image import board_image
    from .scene import _font
    from . import glyphs as G
    if not boards:
        raise ValueError("a contact sheet needs one board or more")
    tiles = [board_image(b.board, rules, annotate=annotate) for b in boards]
    w, h = tiles[0].size
    cols = max(1, min(columns, len(tiles)))
    rows = (len(tiles) + cols - 1) // cols
    font = _font(15)
    lines = _wrapped(title, font, cols * w - 24)      # a sheet one tile wide wraps its title
    top = 34 + TITLE_LINE * (len(lines) - 1)
    sheet = Image.new("RGB", (cols * w, top + rows * h), G.BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    for i, line in enumerate(lines):
        draw.text((12, 9 + TITLE_LINE * i), line, fill=G.TEXT, font=font)
    for i, tile in enumerate(tiles):
        sheet.paste(tile, ((i % cols) * w, top + (i // cols) * h))
    return sheet
