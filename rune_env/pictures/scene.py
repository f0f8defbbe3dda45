"""A tiny vector scene and its two back ends: SVG text (no dependency) and a Pillow raster.

A picture is built once as a `Scene` of primitives (polygons, circles, polylines, text) in pixel
coordinates, grouped in `Group`s that carry SVG attributes (ids, classes, data-*). `to_svg` writes
it as self-contained SVG text; `to_image` draws the very same primitives with Pillow (supersampled
then scaled down, for smooth edges), so the SVG and the PNG show one geometry. Groups marked
`hidden` are written to the SVG with display="none" (the replay page shows them from JS) and left
out of the raster.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Union
from xml.sax.saxutils import escape, quoteattr

Point = tuple[float, float]


@dataclass
class Poly:
    points: list[Point]
    fill: str | None = None
    stroke: str | None = None
    width: float = 1.0
    dash: tuple[float, float] | None = None
    opacity: float = 1.0
    closed: bool = True          # False: an open polyline (fill ignored)
    cls: str | None = None


@dataclass
class Circle:
    cx: float
    cy: float
    r: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 1.0
    dash: tuple[float, float] | None = None
    opacity: float = 1.0
    cls: str | None = None


@dataclass
class Text:
    x: float
    y: float
    text: str
    size: float = 12.0
    fill: str = "#ffffff"
    anchor: str = "middle"       # "start", "middle" or "end"; vertically always centred
    bold: bool = False
    opacity: float = 1.0
    cls: str | None = None
    id: str | None = None


@dataclass
class Group:
    items: list["Item"] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)
    hidden: bool = False

    def add(self, *items: "Item") -> "Group":
        self.items.extend(items)
        return self


Item = Union[Poly, Circle, Text, Group]


@dataclass
class Scene:
    width: int
    height: int
    background: str
    root: Group = field(default_factory=Group)

    def add(self, *items: Item) -> "Scene":
        self.root.items.extend(items)
        return self


# -- SVG ----------------------------------------------------------------------------------------
def _n(x: float) -> str:
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _pts(points: list[Point]) -> str:
    return " ".join(f"{_n(x)},{_n(y)}" for x, y in points)


def _paint(fill, stroke, width, dash, opacity) -> str:
    out = [f'fill="{fill}"' if fill else 'fill="none"']
    if stroke:
        out.append(f'stroke="{stroke}" stroke-width="{_n(width)}" stroke-linejoin="round" '
                   f'stroke-linecap="round"')
        if dash:
            out.append(f'stroke-dasharray="{_n(dash[0])} {_n(dash[1])}"')
    if opacity < 1.0:
        out.append(f'opacity="{_n(opacity)}"')
    return " ".join(out)


def _cls(c: str | None) -> str:
    return f' class="{c}"' if c else ""


def _svg_item(item: Item, out: list[str], indent: str) -> None:
    if isinstance(item, Group):
        attrs = "".join(f" {k}={quoteattr(str(v))}" for k, v in item.attrs.items())
        if item.hidden:
            attrs += ' display="none"'
        out.append(f"{indent}<g{attrs}>")
        for sub in item.items:
            _svg_item(sub, out, indent + " ")
        out.append(f"{indent}</g>")
    elif isinstance(item, Poly):
        if item.closed:
            out.append(f'{indent}<polygon{_cls(item.cls)} points="{_pts(item.points)}" '
                       f'{_paint(item.fill, item.stroke, item.width, item.dash, item.opacity)}/>')
        else:
            out.append(f'{indent}<polyline{_cls(item.cls)} points="{_pts(item.points)}" '
                       f'{_paint(None, item.stroke, item.width, item.dash, item.opacity)}/>')
    elif isinstance(item, Circle):
        out.append(f'{indent}<circle{_cls(item.cls)} cx="{_n(item.cx)}" cy="{_n(item.cy)}" '
                   f'r="{_n(item.r)}" '
                   f'{_paint(item.fill, item.stroke, item.width, item.dash, item.opacity)}/>')
    elif isinstance(item, Text):
        anchor = item.anchor
        ident = f' id="{item.id}"' if item.id else ""
        weight = ' font-weight="bold"' if item.bold else ""
        op = f' opacity="{_n(item.opacity)}"' if item.opacity < 1.0 else ""
        out.append(f'{indent}<text{ident}{_cls(item.cls)} x="{_n(item.x)}" y="{_n(item.y)}" '
                   f'font-size="{_n(item.size)}"{weight} fill="{item.fill}"{op} '
                   f'text-anchor="{anchor}" dominant-baseline="central">{escape(item.text)}</text>')
    else:  # pragma: no cover
        raise TypeError(f"not a scene item: {item!r}")


def to_svg(scene: Scene, attrs: dict[str, str] | None = None) -> str:
    """The scene as one <svg> element (UTF-8 text, no XML declaration)."""
    extra = "".join(f" {k}={quoteattr(str(v))}" for k, v in (attrs or {}).items())
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{scene.width}" '
           f'height="{scene.height}" viewBox="0 0 {scene.width} {scene.height}"{extra} '
           f'font-family="DejaVu Sans, Verdana, Arial, sans-serif">',
           f' <rect x="0" y="0" width="{scene.width}" height="{scene.height}" '
           f'fill="{scene.background}"/>']
    for item in scene.root.items:
        _svg_item(item, out, " ")
    out.append("</svg>")
    return "\n".join(out) + "\n"


# -- raster (Pillow) ----------------------------------------------------------------------------
SUPERSAMPLE = 3


@lru_cache(maxsize=64)
def _font(px: int):
    from PIL import ImageFont
    try:
        return ImageFont.load_default(size=px)       # the font bundled with Pillow (FreeType)
    except (TypeError, OSError, ImportError):        # pragma: no cover - Pillow without FreeType
        return ImageFont.load_default()


def _dashes(points: list[Point], dash: tuple[float, float]) -> list[list[Point]]:
    """Split a polyline into its dash segments."""
    on, off = dash
    segs: list[list[Point]] = []
    cur: list[Point] = []
    pos = 0.0            # position inside the on+off period
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0)
        d = 0.0
        while d < length - 1e-9:
            period_left = (on - pos) if pos < on else (on + off - pos)
            step = min(period_left, length - d)
            a = d / length
            b = (d + step) / length
            pa = (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a)
            pb = (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)
            if pos < on:
                if not cur:
                    cur = [pa]
                cur.append(pb)
            pos += step
            d += step
            if pos >= on and cur:
                segs.append(cur)
                cur = []
            if pos >= on + off - 1e-9:
                pos = 0.0
    if cur:
        segs.append(cur)
    return segs


def _flatten(group: Group, out: list) -> None:
    for item in group.items:
        if isinstance(item, Group):
            if not item.hidden:
                _flatten(item, out)
        else:
            out.append(item)


def _draw(draw, item, k: float) -> None:
    if isinstance(item, Poly):
        pts = [(x * k, y * k) for x, y in item.points]
        if item.closed and item.fill:
            draw.polygon(pts, fill=item.fill)
        if item.stroke:
            line = pts + [pts[0]] if item.closed else pts
            w = max(1, round(item.width * k))
            pieces = _dashes(line, (item.dash[0] * k, item.dash[1] * k)) if item.dash else [line]
            for piece in pieces:
                draw.line(piece, fill=item.stroke, width=w, joint="curve")
                r = w / 2                              # round caps
                if w >= 3:
                    for x, y in (piece[0], piece[-1]):
                        draw.ellipse([x - r, y - r, x + r, y + r], fill=item.stroke)
    elif isinstance(item, Circle):
        x, y, r = item.cx * k, item.cy * k, item.r * k
        if item.fill:
            draw.ellipse([x - r, y - r, x + r, y + r], fill=item.fill)
        if item.stroke:
            w = max(1, round(item.width * k))
            if item.dash:
                n = max(8, int(2 * math.pi * r / 4))
                ring = [(x + r * math.cos(2 * math.pi * i / n), y + r * math.sin(2 * math.pi * i / n))
                        for i in range(n + 1)]
                for piece in _dashes(ring, (item.dash[0] * k, item.dash[1] * k)):
                    draw.line(piece, fill=item.stroke, width=w)
            else:
                draw.ellipse([x - r - w / 2, y - r - w / 2, x + r + w / 2, y + r + w / 2],
                             outline=item.stroke, width=w)
    elif isinstance(item, Text):
        font = _font(max(1, round(item.size * k)))
        anchor = {"start": "lm", "middle": "mm", "end": "rm"}[item.anchor]
        kw = {"stroke_width": max(1, round(0.35 * k)), "stroke_fill": item.fill} if item.bold else {}
        try:
            draw.text((item.x * k, item.y * k), item.text, fill=item.fill, font=font,
                      anchor=anchor, **kw)
        except ValueError:  # pragma: no cover - a bitmap font takes no anchor
            draw.text((item.x * k, item.y * k), item.text, fill=item.fill, font=font)


def to_image(scene: Scene, supersample: int = SUPERSAMPLE):
    """The scene as a Pillow RGB image of scene.width x scene.height pixels."""
    from PIL import Image, ImageDraw
    k = supersample
    size = (scene.width * k, scene.height * k)
    img = Image.new("RGBA", size, scene.background)
    items: list = []
    _flatten(scene.root, items)
    i = 0
    while i < len(items):
        op = items[i].opacity
        j = i
        while j < len(items) and items[j].opacity == op:
            j += 1
        if op >= 1.0:
            draw = ImageDraw.Draw(img)
            for item in items[i:j]:
                _draw(draw, item, k)
        else:
            # translucent items share one layer, composited once at their opacity
            layer = Image.new("RGBA", size, (0, 0, 0, 0))
            draw = ImageDraw.Draw(layer)
            for item in items[i:j]:
                _draw(draw, item, k)
            alpha = layer.getchannel("A").point(lambda a, op=op: int(a * op + 0.5))
            layer.putalpha(alpha)
            img.alpha_composite(layer)
        i = j
    return img.convert("RGB").resize((scene.width, scene.height), Image.LANCZOS)
