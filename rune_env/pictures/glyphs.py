"""Colours and symbols of the rune kinds, cores and artifacts, as scene primitives.

Every glyph is drawn in a box of half-size r around (cx, cy) from polygons, circles and lines
only (no font glyphs), so the SVG and the Pillow raster show the same symbol.
"""
from __future__ import annotations

import math

from .scene import Circle, Item, Poly

BACKGROUND = "#1b1f2a"
EMPTY_FILL = "#2a3040"
EMPTY_STROKE = "#454e63"
CLOSED_FILL = "#14161d"
CLOSED_STROKE = "#262a35"
TEXT = "#e8ecf4"
DIM_TEXT = "#9aa3b5"

KIND_COLOURS: dict[str, str] = {
    "fire": "#ff5a36", "wind": "#7ddc6a", "water": "#3d8bff", "earth": "#c08a4e",
    "thunder": "#ffd23f", "dark": "#b06af0", "light": "#fff1a6", "ice": "#86eaf5",
    "amplify": "#ff9f1c", "resonator": "#ff7ad9", "delay": "#a7b1bf", "node": "#3fd6c2",
    "mimic": "#cdb98d",
}
CORE_COLOURS: dict[str | None, str] = {
    "sun": "#ffb627", "star": "#8c9eff", "moon": "#d5dbe6", "eclipse": "#7a5c99",
    "tree": "#5fbf5f", None: "#7d8597",
}
ARTIFACT_COLOURS: dict[str, str] = {
    "ward_stone": "#b9c8d8", "mana_furnace": "#ff8c42", "mana_spring": "#4fc3f7",
    "scapegoat_doll": "#f0a6ca",
}
ARTIFACT_LETTERS: dict[str, str] = {
    "ward_stone": "W", "mana_furnace": "F", "mana_spring": "S", "scapegoat_doll": "D",
}
ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV", 5: "V"}


def kind_colour(kind: str) -> str:
    return KIND_COLOURS.get(kind, "#cccccc")


def artifact_colour(art: str) -> str:
    return ARTIFACT_COLOURS.get(art, "#dddddd")


def artifact_letter(art: str) -> str:
    return ARTIFACT_LETTERS.get(art, art[:1].upper())


def roman(grade: int) -> str:
    return ROMAN.get(grade, str(grade))


def mix(a: str, b: str, t: float) -> str:
    """Colour a blended towards b by t (0: a, 1: b)."""
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def hexagon(cx: float, cy: float, size: float) -> list[tuple[float, float]]:
    """A flat-topped hexagon's corners (circumradius `size`)."""
    return [(cx + size * math.cos(math.radians(60 * i)), cy + size * math.sin(math.radians(60 * i)))
            for i in range(6)]


def _p(cx, cy, r, pts):
    return [(cx + x * r, cy + y * r) for x, y in pts]


def _arc(cx, cy, rad, a0, a1, n=10):
    return [(cx + rad * math.cos(math.radians(a0 + (a1 - a0) * i / n)),
             cy + rad * math.sin(math.radians(a0 + (a1 - a0) * i / n))) for i in range(n + 1)]


def glyph(kind: str, cx: float, cy: float, r: float, colour: str | None = None,
          under: str = EMPTY_FILL) -> list[Item]:
    """The symbol of a rune kind, in its colour; `under` is the colour it is drawn on."""
    c = colour or kind_colour(kind)
    w = max(1.2, r * 0.16)
    if kind == "fire":
        outer = [(0, -1), (0.35, -0.45), (0.62, 0.05), (0.66, 0.45), (0.45, 0.82), (0, 0.98),
                 (-0.45, 0.82), (-0.66, 0.45), (-0.55, 0.0), (-0.3, -0.25), (-0.18, 0.1)]
        inner = [(0.02, -0.15), (0.25, 0.25), (0.3, 0.55), (0.1, 0.8), (-0.2, 0.78), (-0.3, 0.5),
                 (-0.1, 0.35)]
        return [Poly(_p(cx, cy, r, outer), fill=c),
                Poly(_p(cx, cy, r, inner), fill=mix(c, "#ffffff", 0.55))]
    if kind == "wind":
        out: list[Item] = []
        for dy, x0, x1 in ((-0.55, -0.95, 0.45), (0.0, -0.75, 0.7), (0.55, -0.95, 0.3)):
            curl = _arc(cx + x1 * r, cy + (dy - 0.22) * r, 0.22 * r, 90, -180, 8)
            out.append(Poly([(cx + x0 * r, cy + dy * r)] + curl, stroke=c, width=w, closed=False))
        return out
    if kind == "water":
        drop = [(cx, cy - r)] + _arc(cx, cy + 0.3 * r, 0.62 * r, -35, 215, 16)
        return [Poly(drop, fill=c),
                Poly(_arc(cx, cy + 0.3 * r, 0.38 * r, 100, 170, 6), stroke=mix(c, "#ffffff", 0.6),
                     width=w * 0.8, closed=False)]
    if kind == "earth":
        return [Poly(_p(cx, cy, r, [(-1, 0.75), (-0.35, -0.6), (0.3, 0.75)]), fill=c),
                Poly(_p(cx, cy, r, [(-0.15, 0.75), (0.45, -0.15), (1, 0.75)]),
                     fill=mix(c, "#000000", 0.25)),
                Poly(_p(cx, cy, r, [(-0.35, -0.6), (-0.55, -0.2), (-0.15, -0.2)]),
                     fill=mix(c, "#ffffff", 0.6))]
    if kind == "thunder":
        bolt = [(0.25, -1), (-0.55, 0.12), (-0.05, 0.12), (-0.3, 1), (0.6, -0.22), (0.08, -0.22),
                (0.45, -1)]
        return [Poly(_p(cx, cy, r, bolt), fill=c)]
    if kind == "dark":
        return [Circle(cx, cy, 0.85 * r, fill=c),
                Circle(cx + 0.42 * r, cy - 0.3 * r, 0.72 * r, fill=under)]
    if kind == "light":
        out = [Circle(cx, cy, 0.42 * r, fill=c)]
        for i in range(8):
            a = math.radians(45 * i)
            out.append(Poly([(cx + 0.6 * r * math.cos(a), cy + 0.6 * r * math.sin(a)),
                             (cx + 0.98 * r * math.cos(a), cy + 0.98 * r * math.sin(a))],
                            stroke=c, width=w, closed=False))
        return out
    if kind == "ice":
        out = []
        for i in range(3):
            a = math.radians(90 + 60 * i)
            ux, uy = math.cos(a), math.sin(a)
            out.append(Poly([(cx - ux * r, cy - uy * r), (cx + ux * r, cy + uy * r)], stroke=c,
                            width=w, closed=False))
            for s in (1, -1):  # little branches near both ends
                bx, by = cx + s * ux * 0.62 * r, cy + s * uy * 0.62 * r
                for turn in (50, -50):
                    b = a + math.radians(turn) + (math.pi if s < 0 else 0)
                    out.append(Poly([(bx, by), (bx + 0.3 * r * math.cos(b), by + 0.3 * r * math.sin(b))],
                                    stroke=c, width=w * 0.8, closed=False))
        return out
    if kind == "amplify":
        return [Poly(_p(cx, cy, r, [(-0.75, -0.05), (0, -0.8), (0.75, -0.05)]), stroke=c, width=w * 1.3,
                     closed=False),
                Poly(_p(cx, cy, r, [(-0.75, 0.7), (0, -0.05), (0.75, 0.7)]), stroke=c, width=w * 1.3,
                     closed=False)]
    if kind == "resonator":
        return [Circle(cx, cy, 0.9 * r, stroke=c, width=w),
                Circle(cx, cy, 0.55 * r, stroke=c, width=w),
                Circle(cx, cy, 0.2 * r, fill=c)]
    if kind == "delay":
        return [Poly(_p(cx, cy, r, [(-0.6, -0.8), (0.6, -0.8), (0, 0)]), fill=c),
                Poly(_p(cx, cy, r, [(0, 0), (0.6, 0.8), (-0.6, 0.8)]), fill=mix(c, "#000000", 0.3)),
                Poly(_p(cx, cy, r, [(-0.8, -0.92), (0.8, -0.92)]), stroke=c, width=w, closed=False),
                Poly(_p(cx, cy, r, [(-0.8, 0.92), (0.8, 0.92)]), stroke=c, width=w, closed=False)]
    if kind == "node":
        out = []
        for i in range(3):
            a = math.radians(-90 + 120 * i)
            x, y = cx + 0.72 * r * math.cos(a), cy + 0.72 * r * math.sin(a)
            out.append(Poly([(cx, cy), (x, y)], stroke=c, width=w, closed=False))
            out.append(Circle(x, y, 0.24 * r, fill=c))
        out.append(Circle(cx, cy, 0.32 * r, fill=c))
        return out
    if kind == "mimic":
        back = [(-0.85, -0.85), (0.35, -0.85), (0.35, 0.35), (-0.85, 0.35)]
        front = [(-0.35, -0.35), (0.85, -0.35), (0.85, 0.85), (-0.35, 0.85)]
        return [Poly(_p(cx, cy, r, back), stroke=c, width=w),
                Poly(_p(cx, cy, r, front), fill=under, stroke=c, width=w)]
    # an unknown kind: a plain dot
    return [Circle(cx, cy, 0.6 * r, fill=c)]


def core_glyph(core: str | None, cx: float, cy: float, r: float, under: str) -> list[Item]:
    """The school's own symbol (the sun core shows its element separately)."""
    c = CORE_COLOURS.get(core, CORE_COLOURS[None])
    if core == "sun":
        return glyph("light", cx, cy, r, c, under)
    if core == "star":
        pts = []
        for i in range(10):
            a = math.radians(-90 + 36 * i)
            rad = r if i % 2 == 0 else 0.42 * r
            pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
        return [Poly(pts, fill=c)]
    if core == "moon":
        return glyph("dark", cx, cy, r, c, under)
    if core == "eclipse":
        return [Circle(cx, cy, 0.85 * r, fill=c), Circle(cx, cy, 0.62 * r, fill="#0c0d12"),
                Circle(cx, cy, 0.9 * r, stroke=mix(c, "#ffffff", 0.4), width=1.2)]
    if core == "tree":
        return [Poly([(cx, cy - r), (cx + 0.75 * r, cy + 0.35 * r), (cx - 0.75 * r, cy + 0.35 * r)],
                     fill=c),
                Poly([(cx, cy + 0.3 * r), (cx, cy + r)], stroke=mix(c, "#000000", 0.3),
                     width=max(1.5, 0.2 * r), closed=False)]
    return [Circle(cx, cy, 0.5 * r, stroke=c, width=1.5)]


def shield(cx: float, cy: float, r: float, fill: str) -> Poly:
    return Poly(_p(cx, cy, r, [(-0.8, -0.9), (0.8, -0.9), (0.8, 0.1), (0, 1), (-0.8, 0.1)]),
                fill=fill, stroke=mix(fill, "#000000", 0.5), width=0.8)


def diamond(cx: float, cy: float, r: float, fill: str) -> Poly:
    return Poly([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=fill,
                stroke=mix(fill, "#000000", 0.5), width=0.8)
