"""Pools and audits as pictures: one ghost of a pool's round, or a round's boards side by side.

    pool_round_boards(path, rules, round_) -> list[LabelledBoard]   a pool's round, most drafted first
    audit_round_boards(path, rules, round_) -> list[LabelledBoard]  an audit's best board per family
    round_boards(path, rules, round_)                                either, by the file's content
    contact_sheet(boards, rules, title, annotate=False, columns=4) -> PIL image

A pool (`rune_env.run.opponents`, the format every opponent pool, shipped or drafted, and the
metagame's mixtures use) keeps each board of a round once per drafter with a `count` of the runs
that drafted it; its boards are listed most drafted first (ties in file order), each labelled with
its drafter and count, so index 0 is the board a player meets most often. An audit's JSON
(`scripts/balance_audit.py --json`) has one reported board per family and round, labelled with
the family, its win rate and fast-kill rate. Every board is drawn by `board_image` with its label
in the header; the sheet puts them in a grid under a title line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..files import read_text
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
    text = read_text(path, "file", BoardError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BoardError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise BoardError(f"{path}: expected a JSON object")
    return data


def _round_of(rounds: dict, round_: int, path: Path, what: str):
    if str(round_) not in rounds and round_ not in rounds:
        have = sorted(int(r) for r in rounds)
        listed = ", ".join(str(r) for r in have) if have else "none"
        raise BoardError(f"{path}: {what} has no boards of round {round_} (rounds: {listed})")
    return rounds.get(round_, rounds.get(str(round_)))


def pool_round_boards(path: Path, rules: Rules, round_: int) -> list[LabelledBoard]:
    """A pool's boards of `round_`, most drafted first, labelled "rank r R #i: drafter xN"."""
    from ..run.opponents import ghost_count, load_pool
    pool = load_pool(path, rules)
    ghosts = _round_of(pool.rounds, round_, path, f"the {pool.rank} pool")
    order = sorted(range(len(ghosts)), key=lambda i: -ghost_count(ghosts[i]))
    out = []
    for rank_in_round, i in enumerate(order):
        g = ghosts[i]
        label = (f"{pool.rank} round {round_} #{rank_in_round}: {g.get('agent', '?')} "
                 f"x{ghost_count(g)}")
        out.append(_labelled(g["board"], rules, label, f"{path} round {round_} ghost {i}"))
    return out


def audit_round_boards(path: Path, rules: Rules, round_: int) -> list[LabelledBoard]:
    """An audit's reported board of each family in `round_`."""
    data = _read_json(path)
    families = _round_of(data["rounds"], round_, path, "the audit")["families"]
    out = []
    for name, fam in families.items():
        label = (f"{name}: win {100 * fam['win_rate']:.0f}%, fast kills "
                 f"{100 * fam.get('fast_kill_rate', 0.0):.0f}%, cost {fam['cost']}")
        out.append(_labelled(fam["board"], rules, label, f"{path} round {round_} {name}"))
    return out


def round_boards(path: Path, rules: Rules, round_: int) -> tuple[str, list[LabelledBoard]]:
    """(what the file is, its boards of the round): a pool file or an audit's JSON."""
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
        return "audit", audit_round_boards(path, rules, round_)
    raise BoardError(f"{path}: neither a pool file (\"format\": \"{POOL_FORMAT}\") nor an "
                     "audit's JSON (scripts/balance_audit.py --json)")


def contact_sheet(boards: list[LabelledBoard], rules: Rules, title: str,
                  annotate: bool = False, columns: int = 4):
    """The boards in a grid (row by row, `columns` wide), under a title line; a PIL image."""
    from PIL import Image, ImageDraw
    from .board_image import board_image
    from .scene import _font
    from . import glyphs as G
    tiles = [board_image(b.board, rules, annotate=annotate) for b in boards]
    w, h = tiles[0].size
    cols = max(1, min(columns, len(tiles)))
    rows = (len(tiles) + cols - 1) // cols
    top = 34
    sheet = Image.new("RGB", (cols * w, top + rows * h), G.BACKGROUND)
    ImageDraw.Draw(sheet).text((12, 9), title, fill=G.TEXT, font=_font(15))
    for i, tile in enumerate(tiles):
        sheet.paste(tile, ((i % cols) * w, top + (i // cols) * h))
    return sheet
