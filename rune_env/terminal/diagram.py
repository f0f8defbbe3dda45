"""The hex diagram of a board and the text layout helpers of the terminal's screens.

The diagram: flat-topped hexes, column = axial q, row = 2r + q (half rows), the core in the
middle; a cell shows its rune as a kind code and grade digit (`Fi2` = fire, grade II), `..` when
empty and open, `##` when in a closed sector; an artifact on a cell adds its lower-case letter
(`Fi2w`, `..m`). `beside`, `wrap` and `wrap_items` lay text out in columns of at most `WIDTH`.
"""
from __future__ import annotations

import textwrap

from ..rules.board import Board
from ..rules.config import KINDS, Rules
from ..rules.geometry import geometry

WIDTH = 80            # columns of the terminal the game is drawn for
CELL_WIDTH = 4        # columns per hex column of the diagram (4 columns ~ 2 lines: near true hexes)
GAP = 2               # columns between the diagram and the status beside it


# -- codes and the diagram ----------------------------------------------------------------------
def _unique_codes(names, make) -> dict[str, str]:
    codes: dict[str, str] = {}
    for name in names:
        for cand in make(name):
            if cand not in codes.values():
                codes[name] = cand
                break
        else:  # pragma: no cover - only with very many similar names
            raise ValueError(f"no unique code for {name!r}")
    return codes


def _rune_candidates(name: str):
    letters = name.replace("_", "")
    for ch in letters[1:]:
        yield letters[0].upper() + ch.lower()
    for a in "abcdefghijklmnopqrstuvwxyz":
        yield letters[0].upper() + a


def _artifact_candidates(name: str):
    words = name.split("_")
    for w in words:
        yield w[0].lower()
    for ch in name.replace("_", ""):
        yield ch.lower()
    yield from "abcdefghijklmnopqrstuvwxyz"


RUNE_CODES: dict[str, str] = _unique_codes(KINDS, _rune_candidates)


def artifact_codes(rules: Rules) -> dict[str, str]:
    return _unique_codes(list(rules.spec.artifacts), _artifact_candidates)


def rune_code(kind: str, grade: int) -> str:
    """`Fi2` for fire grade II."""
    return f"{RUNE_CODES[kind]}{grade}"


def _core_token(core: str | None) -> str:
    return "(" + (core[:3].capitalize() if core else "--") + ")"


def board_width(rules: Rules) -> int:
    """Columns of the diagram (28 for radius 3)."""
    return (2 * rules.radius + 1) * CELL_WIDTH


def draw_board(rules: Rules, runes: dict[int, tuple[str, int]], artifacts: dict[int, str],
               open_sectors, core: str | None, names: bool = False) -> list[str]:
    """The hex diagram, one string per line: 2*radius+1 columns of flat-topped hexes, a cell's
    neighbours in the next column half a row up or down. With `names`, cells show "ring:index"."""
    geo = geometry(rules.radius)
    R = geo.radius
    width = CELL_WIDTH
    art_code = artifact_codes(rules)
    rows = [[" "] * ((2 * R + 1) * width) for _ in range(4 * R + 1)]

    def put(q: int, r: int, token: str) -> None:
        row = rows[2 * r + q + 2 * R]
        x = (q + R) * width + (width - len(token)) // 2
        row[x:x + len(token)] = list(token)

    put(0, 0, _core_token(core))
    for cell in range(geo.n_cells):
        q, r = geo.coords[cell]
        if names:
            token = geo.name(cell)
        else:
            sec = geo.sector[cell]
            if cell in runes:
                token = rune_code(*runes[cell])
            elif sec >= 0 and sec not in open_sectors:
                token = "##"
            else:
                token = ".."
            if cell in artifacts:
                token += art_code[artifacts[cell]]
        put(q, r, token)
    return ["".join(row).rstrip() for row in rows]


def board_lines(rules: Rules, board: Board) -> list[str]:
    return draw_board(rules, board.runes, board.artifacts, board.open_sectors, board.core)


def beside(left: list[str], right: list[str], left_width: int, gap: int = GAP) -> list[str]:
    """Two columns of text: `left` padded to `left_width`, `right` after `gap` spaces."""
    out = []
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        out.append((a.ljust(left_width + gap) + b).rstrip() if b else a.rstrip())
    return out


def wrap(text: str, width: int = WIDTH, indent: str = "  ") -> list[str]:
    """One logical line as screen lines of at most `width` columns."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=True,
                         break_on_hyphens=False) or [""]


def wrap_items(head: str, items: list[str], width: int = WIDTH, indent: str = "  ",
               sep: str = "  ") -> list[str]:
    """`head` then the items, wrapped between items (an item is split only when it is longer
    than a whole line)."""
    lines: list[str] = []
    line, fresh = head, True          # fresh: nothing after the head or indent yet
    tail = len(sep.rstrip())          # a line that goes on ends with the separator's mark
    for n, item in enumerate(items):
        cand = item if fresh else sep + item
        if len(line) + len(cand) + (tail if n < len(items) - 1 else 0) <= width:
            line, fresh = line + cand, False
            continue
        if not fresh:
            lines.append((line + sep.rstrip()).rstrip())
            line, fresh = indent, True
            if len(line) + len(item) + (tail if n < len(items) - 1 else 0) <= width:
                line, fresh = line + item, False
                continue
            cand = item
        parts = wrap(line + cand, width, indent)
        lines += parts[:-1]
        line, fresh = parts[-1], False
    lines.append(line.rstrip())
    return lines
