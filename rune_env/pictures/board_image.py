"""Pictures of a board: the hexagon of 37 positions as SVG text, PNG bytes or an RGB array.

    board_svg(board, rules, annotate=False) -> str
    board_png(board, rules, annotate=False) -> bytes
    board_rgb_array(board, rules, annotate=False) -> np.ndarray (H, W, 3) uint8
    state_rgb_array(state) -> np.ndarray       a run's state: the player's board, hand and status

What is drawn: the core (its school, and for the sun its element), the 36 cells (flat-topped hexes
at x = 1.5 q, y = sqrt(3) (r + q/2) in axial coordinates, `geometry(radius).coords`), each rune's
kind by colour and symbol with its grade (I, II, III) above it, closed ring-3 sectors dark and
crossed, artifacts as a lettered diamond on the cell's right corner (W ward stone, F mana furnace,
S mana spring, D scapegoat doll), the hand along the bottom, and a header with the label, core,
round, max HP, relics and boss rules. With `annotate=True`: each casting rune's power at battle
start (an amplify's factor) below its symbol, the battle-start wards as a shield on the left
corner, each flow as an arrow from the feeder to the fed rune in the feeder's colour (dashed from
the sun core), and each resonance pattern that counts as a dashed loop through its cells, with a
halo round the runes it grows. Power and flows come from `rune_env.battle.explain.explain`,
resonance from `rune_env.battle.analysis.analyse`.

The SVG is self-made text (no dependency); every position is one <g> with class "cell" (36) or
"core" (1) and a data-cell attribute ("ring:index" or "core"). The PNG draws the same primitives
with Pillow (no cairo).
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..rules.board import Board
from ..rules.config import Rules, default_rules
from ..rules.geometry import Geometry, geometry
from . import glyphs as G
from .scene import Circle, Group, Poly, Scene, Text, to_image, to_svg

SIZE = 40.0            # a cell's circumradius, px
GAP = 1.6              # inset of each hex, px
MARGIN = 14
HEADER = 46
FOOTER = 46
LEGEND = 58            # the legend under the hand: two rows of kinds, one of artifacts
LEGEND_PER_ROW = 7
SQRT3 = math.sqrt(3.0)


@dataclass
class ReplayMarks:
    """Extras for the replay page (hidden in the plain picture): an id prefix for every element,
    the rune each reserve would put on a cell, the battle-start wards and the hand size."""

    prefix: str = ""
    reserves: list[tuple[int, str, int]] = field(default_factory=list)  # (cell, kind, grade)
    wards: tuple[int, ...] = ()


@dataclass
class Layout:
    radius: int
    width: int
    height: int
    cx: float
    cy: float
    size: float = SIZE

    legend: bool = True

    @classmethod
    def of(cls, radius: int, legend: bool = True) -> "Layout":
        """The picture's geometry; `legend`: room for the legend under the hand (the replay page
        has a legend of its own and draws its boards without)."""
        half_w = 1.5 * radius * SIZE + SIZE
        half_h = SQRT3 * SIZE * (radius + 0.5)
        width = int(math.ceil(2 * half_w + 2 * MARGIN))
        height = int(math.ceil(HEADER + 2 * half_h + 2 * MARGIN + FOOTER
                               + (LEGEND if legend else 0)))
        return cls(radius, width, height, width / 2, HEADER + MARGIN + half_h, legend=legend)

    def centre(self, q: int, r: int) -> tuple[float, float]:
        return (self.cx + 1.5 * q * self.size, self.cy + SQRT3 * (r + q / 2) * self.size)


def _fmt_power(p: float) -> str:
    return f"{p:.0f}" if p >= 100 else f"{p:.1f}"


def _fit(text: str, width: float, size: float) -> str:
    """Cut text to about `width` px (an average glyph is ~0.56 em wide)."""
    n = int(width / (0.56 * size))
    return text if len(text) <= n else text[: max(1, n - 1)].rstrip() + "…"


def _core_text(board: Board) -> str:
    if board.core is None:
        return "no core"
    return f"{board.core} core" + (f" ({board.sun_element})" if board.sun_element else "")


def status_line(board: Board, rules: Rules) -> str:
    from ..battle.analysis import SideSetup
    hp = SideSetup.of(board, rules).max_hp
    parts = [_core_text(board), f"round {board.round}", f"{hp:g} HP"]
    if board.relics:
        parts.append("relics: " + ", ".join(board.relics))
    if board.boss_rules:
        parts.append("boss: " + ", ".join(board.boss_rules))
    return " · ".join(parts)


def _rune_group(kind: str, grade: int, x: float, y: float, fill: str, cls: str,
                hidden: bool = False, extra: dict | None = None,
                effective: int | None = None) -> Group:
    """A rune's symbol and grade; `effective`, where a mana spring lifts it (D-11a), shows as
    "I>II": the grade its power is computed at."""
    g = Group(attrs={"class": cls, **(extra or {})}, hidden=hidden)
    g.add(*G.glyph(kind, x, y - 1, SIZE * 0.3, under=fill))
    grade_text = G.roman(grade) if effective in (None, grade) else (
        f"{G.roman(grade)}>{G.roman(effective)}")
    g.add(Text(x, y - SIZE * 0.58, grade_text, size=10, fill=G.TEXT, bold=True))
    return g


def _legend(scene: Scene, lay: Layout, kinds, artifacts) -> None:
    """Every rune kind's colour and symbol, and every artifact's letter, under the hand."""
    top = lay.height - MARGIN - LEGEND + 8
    step = (lay.width - 2 * MARGIN) / LEGEND_PER_ROW
    legend = Group(attrs={"class": "legend"})
    for i, kind in enumerate(kinds):
        x = MARGIN + step * (i % LEGEND_PER_ROW) + 9
        y = top + 17 * (i // LEGEND_PER_ROW)
        fill = _cell_fill(kind)
        legend.add(Circle(x, y, 7, fill=fill, stroke=G.kind_colour(kind), width=1.2))
        legend.add(*G.glyph(kind, x, y, 4.2, under=fill))
        legend.add(Text(x + 9, y, kind, size=8.5, fill=G.DIM_TEXT, anchor="start"))
    y = top + 17 * ((len(kinds) + LEGEND_PER_ROW - 1) // LEGEND_PER_ROW)
    x = MARGIN + 9
    for art in artifacts:
        legend.add(G.diamond(x, y, 6, G.artifact_colour(art)),
                   Text(x, y + 0.5, G.artifact_letter(art), size=7, fill="#15171f", bold=True),
                   Text(x + 9, y, art.replace("_", " "), size=9, fill=G.DIM_TEXT, anchor="start"))
        # each name's width in DejaVu Sans at 9 px is at most 5.4 px a letter (Pillow's own
        # font is narrower): at 5.2 "mana furnace" ran into the next diamond in a browser
        x += 20 + 5.4 * len(art)
    legend.add(Text(x + 4, y, "I>II: grade lifted", size=9,
                    fill=G.DIM_TEXT, anchor="start"))
    scene.add(legend)


def _cell_fill(kind: str | None) -> str:
    return G.mix(G.kind_colour(kind), G.BACKGROUND, 0.78) if kind else G.EMPTY_FILL


def board_scene(board: Board, rules: Rules | None = None, annotate: bool = False,
                header: tuple[str, str] | None = None,
                replay: ReplayMarks | None = None) -> Scene:
    """The board as a `Scene` (see the module docstring); `header` replaces the two top lines."""
    rules = rules or default_rules()
    geo = geometry(rules.radius)
    lay = Layout.of(rules.radius, legend=replay is None)
    scene = Scene(lay.width, lay.height, G.BACKGROUND)
    pre = replay.prefix if replay else ""
    from ..battle.analysis import SideSetup
    setup = SideSetup.of(board, rules)
    _header(scene, lay, header if header is not None else (board.label, status_line(board, rules)))

    report = analysis = None
    if annotate:
        from ..battle.analysis import analyse
        from ..battle.explain import explain
        report = explain(board, rules)
        analysis = analyse(setup, [board.runes.get(c) for c in range(geo.n_cells)],
                           [False] * geo.n_cells)
    wards = replay.wards if replay and replay.wards else None
    if annotate and wards is None:
        wards = setup.wards
    alts: dict[int, list[tuple[str, int]]] = {}
    for cell, kind, grade in (replay.reserves if replay else []):
        if (kind, grade) not in alts.setdefault(cell, []):
            alts[cell].append((kind, grade))

    scene.add(_core(board, lay, pre))
    cells = _Cells(geo, lay, board, setup, pre, annotate, alts, wards, report, replay,
                   Group(attrs={"class": "labels"}))
    for cell in range(geo.n_cells):
        scene.add(_cell(cells, cell))

    if annotate and report is not None and analysis is not None:
        scene.add(_links(board, rules, lay, report, analysis))
        scene.add(cells.labels)

    _hand(scene, lay, board.hand, pre if replay else None)
    if lay.legend:
        _legend(scene, lay, rules.kinds, list(rules.spec.artifacts))
    return scene


def _header(scene: Scene, lay: Layout, lines: tuple[str, str]) -> None:
    line1, line2 = lines
    if line1:
        scene.add(Text(MARGIN, 15, _fit(line1, lay.width - 2 * MARGIN, 12), size=12, fill=G.TEXT,
                       anchor="start", bold=True))
    width = lay.width - 2 * MARGIN
    for size in (11, 9.5):                    # the status line, smaller where it is long
        if _fit(line2, width, size) == line2:
            scene.add(Text(MARGIN, 33, line2, size=size, fill=G.DIM_TEXT, anchor="start"))
            return
    # too long for one line (many relics and boss rules): two, the relics on the second, so the
    # boss rules are not cut off the end (a relic list too long for its line is cut, with "…")
    parts = line2.split(" · ")
    relics = [p for p in parts if p.startswith("relics: ")]
    rest = [p for p in parts if not p.startswith("relics: ")]
    for text, y in ((" · ".join(rest), 28), (" · ".join(relics), 40)):
        if text:
            scene.add(Text(MARGIN, y, _fit(text, width, 8.5), size=8.5, fill=G.DIM_TEXT,
                           anchor="start"))


def _core(board: Board, lay: Layout, pre: str) -> Group:
    x, y = lay.cx, lay.cy
    core_col = G.CORE_COLOURS.get(board.core, G.CORE_COLOURS[None])
    core_fill = G.mix(core_col, G.BACKGROUND, 0.72)
    core = Group(attrs={"class": "core", "data-cell": "core", "id": f"{pre}core"})
    core.add(Poly(G.hexagon(x, y, SIZE - GAP), fill=core_fill, stroke=core_col, width=2.5))
    if board.sun_element:
        core.add(*G.core_glyph(board.core, x - 12, y - 7, 9, core_fill))
        core.add(*G.glyph(board.sun_element, x + 12, y - 7, 9, under=core_fill))
    else:
        core.add(*G.core_glyph(board.core, x, y - 7, 11, core_fill))
    core.add(Text(x, y + 17, board.core or "plain", size=10, fill=G.TEXT, bold=True))
    return core


@dataclass
class _Cells:
    """What drawing each cell needs: the board and its set-up, and the overlays asked for."""

    geo: Geometry
    lay: Layout
    board: Board
    setup: Any                              # the board's SideSetup (effective grades)
    pre: str                                # the id prefix of a replay's frame ("" otherwise)
    annotate: bool
    alts: dict[int, list[tuple[str, int]]]  # a replay's reserves that may take each cell
    wards: Any                              # per cell: wards shown, or None for no badges
    report: dict[str, Any] | None           # explain's report when annotating
    replay: ReplayMarks | None
    labels: Group                           # names and powers, drawn above the flow arrows


def _cell(d: _Cells, cell: int) -> Group:
    """One cell's group: its base and rune (or closed mark), and its overlays."""
    geo, board = d.geo, d.board
    name = geo.name(cell)
    q, r = geo.coords[cell]
    x, y = d.lay.centre(q, r)
    sector = geo.sector[cell]
    closed = sector >= 0 and sector not in board.open_sectors
    rune = board.runes.get(cell)
    g = Group(attrs={"class": "cell", "data-cell": name,
                     "id": f"{d.pre}c-{geo.ring[cell]}-{geo.index[cell]}"})
    hexa = G.hexagon(x, y, SIZE - GAP)
    if closed:
        g.attrs["data-closed"] = "1"
        g.add(Poly(hexa, fill=G.CLOSED_FILL, stroke=G.CLOSED_STROKE, width=1.5))
        m = SIZE * 0.28
        g.add(Poly([(x - m, y - m), (x + m, y + m)], stroke=G.CLOSED_STROKE, width=2, closed=False),
              Poly([(x - m, y + m), (x + m, y - m)], stroke=G.CLOSED_STROKE, width=2, closed=False))
    elif rune is None:
        g.add(Poly(hexa, fill=G.EMPTY_FILL, stroke=G.EMPTY_STROKE, width=1.5, cls="base"))
    else:
        kind, grade = rune
        g.attrs["data-kind"] = kind
        g.attrs["data-grade"] = str(grade)
        g.add(Poly(hexa, fill=_cell_fill(kind), stroke=G.kind_colour(kind), width=2, cls="base"))
        g.add(_rune_group(kind, grade, x, y, _cell_fill(kind), "rune",
                          effective=d.setup.effective_grade(cell, grade)))
    if d.annotate and not closed:
        # the cell's name ("ring:index", as board files and explain write it), bottom left
        d.labels.add(Text(x - SIZE * 0.42, y + SIZE * 0.74, name, size=8, fill=G.DIM_TEXT,
                          cls="cell-name"))
    for kind, grade in d.alts.get(cell, []):
        # a reserve that may take this cell in the replay: its own base and symbol, hidden
        alt = Group(attrs={"class": "alt", "data-rune": f"{kind}:{grade}"}, hidden=True)
        alt.add(Poly(hexa, fill=_cell_fill(kind), stroke=G.kind_colour(kind), width=2))
        alt.add(_rune_group(kind, grade, x, y, _cell_fill(kind), "rune-alt"))
        g.add(alt)
    _cell_badges(d, g, cell, x, y, rune)
    if d.replay is not None:
        _replay_overlays(g, hexa, x, y)
    return g


def _cell_badges(d: _Cells, g: Group, cell: int, x: float, y: float, rune) -> None:
    """The cell's artifact, its wards, and (annotating) its rune's power on a plate."""
    geo = d.geo
    art = d.board.artifacts.get(cell)
    if art is not None:
        ax = x + SIZE * 0.64
        # annotating, above the flow arrows (with the labels), which pass beside the centres
        (d.labels if d.annotate else g).add(
            G.diamond(ax, y, 8.5, G.artifact_colour(art)),
            Text(ax, y + 0.5, G.artifact_letter(art), size=9, fill="#15171f", bold=True))
    if d.wards is not None and d.wards[cell] and rune is not None:
        wx = x - SIZE * 0.64
        badge = Group(attrs={"class": "wards", "id": f"{d.pre}w-{geo.ring[cell]}-{geo.index[cell]}"})
        badge.add(G.shield(wx, y, 8, "#cfd8e3"),
                  Text(wx, y - 1, str(d.wards[cell]), size=9, fill="#15171f", bold=True,
                       cls="wards-n"))
        g.add(badge)
    if d.report is not None and rune is not None:
        e = d.report["cells"].get(geo.name(cell), {})
        text = (_fmt_power(e["power"]) if e.get("power") is not None
                else f"x{e['factor']:.2f}" if "factor" in e else None)
        if text:
            # drawn above the flow arrows, on a small plate of the cell's colour
            w = 0.62 * 10 * len(text) / 2 + 3
            ty = y + SIZE * 0.56
            d.labels.add(Poly([(x - w, ty - 6.5), (x + w, ty - 6.5), (x + w, ty + 6.5),
                               (x - w, ty + 6.5)], fill=_cell_fill(rune[0])),
                         Text(x, ty, text, size=10, fill=G.TEXT, cls="power"))


def _replay_overlays(g: Group, hexa, x: float, y: float) -> None:
    """Hidden layers the replay page shows: frozen, sealed, casting (with the cast's value)."""
    g.add(Group(attrs={"class": "ov-freeze"}, hidden=True).add(
        Poly(hexa, fill="#86eaf5", opacity=0.35),
        *G.glyph("ice", x + SIZE * 0.42, y + SIZE * 0.42, 6, "#e6fbff")))
    g.add(Group(attrs={"class": "ov-seal"}, hidden=True).add(
        Poly(hexa, fill="#07080b", opacity=0.72),
        Circle(x, y, SIZE * 0.36, stroke="#ff4d6d", width=3),
        Poly([(x - SIZE * 0.25, y + SIZE * 0.25), (x + SIZE * 0.25, y - SIZE * 0.25)],
             stroke="#ff4d6d", width=3, closed=False)))
    g.add(Group(attrs={"class": "ov-cast"}, hidden=True).add(
        Poly(G.hexagon(x, y, SIZE - GAP - 1.5), stroke="#ffffff", width=4),
        Text(x, y + SIZE * 0.55, "", size=11, fill="#ffffff", bold=True, cls="castval")))


def _feeders(board: Board, rules: Rules, cell: int, src_kind: str) -> list[int | None]:
    """The cells (None: the sun core) that give `cell` a flow from `src_kind` (D-19, D-35)."""
    geo = geometry(rules.radius)
    kind = {c: k for c, (k, _) in board.runes.items()}
    out: list[int | None] = [i for i in geo.inward[cell] if kind.get(i) == src_kind]
    for node in geo.neighbors[cell]:
        if kind.get(node) == "node":
            for a in geo.neighbors[node]:
                if a != cell and a not in out and kind.get(a) == src_kind:
                    out.append(a)
    if geo.ring[cell] == 1 and board.sun_element == src_kind:
        out.append(None)
    return out


def _arrow(p0, p1, colour: str, dashed: bool, offset: float = 14.0) -> list:
    # `offset`: beside the line between the centres, where a cell's grade (above its centre) and
    # power plate (below it) are: at 3.5 px a vertical flow struck through the grade ("II" read
    # "I|") and its head sat under the plate, hiding its direction
    (x0, y0), (x1, y1) = p0, p1
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    px, py = -uy * offset, ux * offset
    a = (x0 + ux * 19 + px, y0 + uy * 19 + py)
    b = (x1 - ux * 20 + px, y1 - uy * 20 + py)
    base = (b[0] - ux * 8, b[1] - uy * 8)
    head = [b, (base[0] - uy * 4.5, base[1] + ux * 4.5), (base[0] + uy * 4.5, base[1] - ux * 4.5)]
    dash = (5, 3.5) if dashed else None
    return [Poly([a, base], stroke=G.BACKGROUND, width=4.5, closed=False, dash=dash),
            Poly([a, base], stroke=colour, width=2.4, closed=False, dash=dash),
            Poly(head, fill=colour, stroke=G.BACKGROUND, width=1)]


def _links(board: Board, rules: Rules, lay: Layout, report: dict[str, Any], analysis) -> Group:
    geo = geometry(rules.radius)
    links = Group(attrs={"class": "links"})
    centre = {c: lay.centre(*geo.coords[c]) for c in range(geo.n_cells)}
    # resonance: each pattern orbit that gives some rune of it its resonance
    res = Group(attrs={"class": "resonance"})
    for fold, orbits in sorted(geo.patterns.items()):
        for _ring, cells in orbits:
            growing = [c for c in cells if analysis.resonance_fold.get(c) == fold
                       and board.runes[c][0] != "resonator"]
            if not growing:
                continue
            colour = G.kind_colour(board.runes[growing[0]][0])
            pts = [centre[c] for c in cells]
            res.add(Poly(pts, stroke=colour, width=2, dash=(6, 4), opacity=0.8,
                         closed=len(cells) > 2))
            for c in growing:
                x, y = centre[c]
                res.add(Circle(x, y - 1, SIZE * 0.45, stroke=colour, width=1.5, dash=(3, 2.5)))
    links.add(res)
    flows = Group(attrs={"class": "flows"})
    for name, e in report["cells"].items():
        cell = geo.parse(name)
        for fid in e.get("flows", {}):
            src_kind = rules.flow_by_id[fid].from_
            for src in _feeders(board, rules, cell, src_kind):
                p0 = (lay.cx, lay.cy) if src is None else centre[src]
                flows.add(*_arrow(p0, centre[cell], G.kind_colour(src_kind), dashed=src is None))
    links.add(flows)
    return links


def _hand(scene: Scene, lay: Layout, hand, prefix: str | None) -> None:
    y = lay.height - MARGIN - FOOTER / 2 + 4 - (LEGEND if lay.legend else 0)
    scene.add(Text(MARGIN, y, "hand", size=11, fill=G.DIM_TEXT, anchor="start"))
    if not hand:
        scene.add(Text(MARGIN + 44, y, "(empty)", size=11, fill=G.DIM_TEXT, anchor="start"))
        return
    for slot, (kind, grade) in enumerate(hand):
        x = MARGIN + 62 + 44 * slot
        fill = _cell_fill(kind)
        g = Group(attrs={"class": "slot", "data-slot": str(slot)})
        if prefix is not None:
            g.attrs["id"] = f"{prefix}h-{slot}"
        g.add(Circle(x, y, 18, fill=fill, stroke=G.kind_colour(kind), width=1.8))
        g.add(*G.glyph(kind, x, y - 3, 8.5, under=fill))
        g.add(Text(x, y + 11, G.roman(grade), size=9, fill=G.TEXT, bold=True))
        if prefix is not None:
            g.add(Group(attrs={"class": "ov-used"}, hidden=True).add(
                Circle(x, y, 19, fill="#07080b", opacity=0.7),
                Poly([(x - 9, y - 9), (x + 9, y + 9)], stroke="#ff4d6d", width=2.5, closed=False)))
        scene.add(g)


# -- the public functions -----------------------------------------------------------------------
def board_svg(board: Board, rules: Rules | None = None, annotate: bool = False) -> str:
    """The board as SVG text (37 <g> positions: 36 class "cell" and one class "core")."""
    return to_svg(board_scene(board, rules, annotate))


def board_image(board: Board, rules: Rules | None = None, annotate: bool = False):
    """The board as a Pillow RGB image."""
    return to_image(board_scene(board, rules, annotate))


def board_png(board: Board, rules: Rules | None = None, annotate: bool = False) -> bytes:
    """The board as PNG bytes (drawn with Pillow, the same geometry as the SVG)."""
    buf = io.BytesIO()
    board_image(board, rules, annotate).save(buf, format="PNG")
    return buf.getvalue()


def board_rgb_array(board: Board, rules: Rules | None = None, annotate: bool = False) -> np.ndarray:
    """The board as an (H, W, 3) uint8 array (Gymnasium's rgb_array; TensorBoard's add_image
    with dataformats="HWC")."""
    return np.asarray(board_image(board, rules, annotate), dtype=np.uint8)


def state_rgb_array(state, annotate: bool = False, round_shown: int | None = None) -> np.ndarray:
    """A run's state (`rune_env.run.state.RunState`) as an (H, W, 3) uint8 array: the player's
    board with its hand, and a header with round, mana, lamps, wins and losses. Same size for
    every state of one rules radius, so frames make a video. `round_shown`: the round to name
    and take the max HP of (RuneDraft-v0's last frame: the round fought, where the state has
    moved on to the next)."""
    board = state.to_board()
    if round_shown is not None:
        from dataclasses import replace
        board = replace(board, round=round_shown)
    rules = state.rules
    line1 = (f"round {board.round} · mana {state.mana} · lamps {state.lamps} · "
             f"wins {state.wins} · losses {state.losses}")
    if getattr(state, "over", False):
        line1 += " · " + ("cleared" if state.cleared else "run over")
    scene = board_scene(board, rules, annotate, header=(line1, status_line(board, rules)))
    return np.asarray(to_image(scene), dtype=np.uint8)
