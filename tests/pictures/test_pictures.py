"""Pictures: board images (SVG, PNG, RGB arrays), the render and replay commands, the replay
page's data (the page in a real browser: test_replay_browser.py).

The board tests parse the SVG (every position is a <g> of class "cell" or "core" whose first
polygon is its hexagon) and read PNG pixels.

Interface tests, not battle-rule tests: the module is marked `outside_mutation_check`.
"""
from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from conftest import FROZEN_RULES, board

from rune_env.battle import battle
from rune_env.pictures import board_png, board_rgb_array, board_svg, replay_html, state_rgb_array
from rune_env.pictures import board_image as bi
from rune_env.rules import geometry, load_board

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
BOARDS = sorted((REPO / "configs" / "boards").glob("*.json"))
SVG_NS = "{http://www.w3.org/2000/svg}"
ALL_NAMES = {f"{k}:{i}" for k in (1, 2, 3) for i in range(6 * k)}


# -- helpers ------------------------------------------------------------------------------------
def positions(svg: str) -> dict[str, ET.Element]:
    """data-cell -> the <g> of that position; asserts each class is 'cell' or 'core'."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(f"{SVG_NS}g"):
        classes = g.get("class", "").split()
        if "cell" in classes or "core" in classes:
            name = g.get("data-cell")
            assert name not in out, f"position {name} drawn twice"
            out[name] = g
    return out


def count_classes(svg: str) -> tuple[int, int]:
    root = ET.fromstring(svg)
    cells = cores = 0
    for g in root.iter(f"{SVG_NS}g"):
        classes = g.get("class", "").split()
        cells += "cell" in classes
        cores += "core" in classes
    return cells, cores


def hex_centre(g: ET.Element) -> tuple[float, float]:
    poly = g.find(f"{SVG_NS}polygon")
    pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
    assert len(pts) == 6
    return sum(x for x, _ in pts) / 6, sum(y for _, y in pts) / 6


def texts(el: ET.Element) -> list[str]:
    return [t.text or "" for t in el.iter(f"{SVG_NS}text")]


def decode_png(data: bytes) -> np.ndarray:
    from PIL import Image
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(io.BytesIO(data)) as img:
        assert img.mode == "RGB"
        return np.asarray(img).copy()


def rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rune_env", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


# -- board images -------------------------------------------------------------------------------
@pytest.mark.parametrize("path", BOARDS, ids=[p.stem for p in BOARDS])
def test_every_example_board_renders(path, rules):
    """SVG with 36 cells + the core, PNG of the layout's size and not blank, the array the same.

    Covers: D-3
    """
    b = load_board(path, rules)
    lay = bi.Layout.of(rules.radius)
    for annotate in (False, True):
        svg = board_svg(b, rules, annotate=annotate)
        # 3 rings of 6k cells: 6 + 12 + 18 = 36 cells, plus the core = 37 positions
        assert count_classes(svg) == (36, 1)
        pos = positions(svg)
        assert set(pos) == ALL_NAMES | {"core"}
        for name, (kind, grade) in b.to_json(rules)["runes"].items():
            g = pos[name]
            assert (g.get("data-kind"), g.get("data-grade")) == (kind, str(grade))
        png = board_png(b, rules, annotate=annotate)
        pixels = decode_png(png)
        assert pixels.shape == (lay.height, lay.width, 3)
        # not blank: many colours, and well under 90% of the picture is the background
        flat = pixels.reshape(-1, 3).astype(int)
        assert len(np.unique(flat[:, 0] << 16 | flat[:, 1] << 8 | flat[:, 2])) > 200
        background = np.all(np.abs(flat - rgb(bi.G.BACKGROUND)) <= 2, axis=1)
        assert background.mean() < 0.9
    arr = board_rgb_array(b, rules)
    assert arr.dtype == np.uint8 and arr.shape == (lay.height, lay.width, 3)
    assert np.array_equal(arr, decode_png(board_png(b, rules)))


def test_cells_sit_on_the_flat_topped_hex_grid(rules):
    """Cell centres at x = 1.5 q, y = sqrt(3) (r + q/2) cell sizes from the core.

    Ring 1 starts straight above the core, (0, -1), and walks clockwise: 1:1 is (1, -1),
    1:3 is (0, 1). Ring 3's index 0 is (0, -3), 3:3 is (3, -3) (3 steps SE).
    Covers: D-3
    """
    svg = board_svg(board({"1:0": ("fire", 1)}), rules)
    pos = positions(svg)
    cx, cy = hex_centre(pos["core"])
    s = bi.SIZE
    expected = {
        "1:0": (0.0, -math.sqrt(3) * s),                 # q=0, r=-1: y = sqrt3 * (-1)
        "1:1": (1.5 * s, -math.sqrt(3) / 2 * s),         # q=1, r=-1: y = sqrt3 * (-1 + 0.5)
        "1:3": (0.0, math.sqrt(3) * s),                  # q=0, r=1
        "2:3": (3.0 * s, 0.0),                           # q=2, r=-1: y = sqrt3 * (-1 + 1) = 0
        "3:0": (0.0, -3 * math.sqrt(3) * s),             # q=0, r=-3
        "3:3": (4.5 * s, -1.5 * math.sqrt(3) * s),       # q=3, r=-3: y = sqrt3 * (-3 + 1.5)
    }
    for name, (dx, dy) in expected.items():
        x, y = hex_centre(pos[name])
        assert (x - cx, y - cy) == (pytest.approx(dx, abs=0.02), pytest.approx(dy, abs=0.02)), name
    # every pair of neighbours is one cell width apart (sqrt(3) sizes), the hexes do not overlap
    geo = geometry(rules.radius)
    for c in range(geo.n_cells):
        for n in geo.neighbors[c]:
            (x0, y0), (x1, y1) = hex_centre(pos[geo.name(c)]), hex_centre(pos[geo.name(n)])
            assert math.hypot(x1 - x0, y1 - y0) == pytest.approx(math.sqrt(3) * s, abs=0.03)


def test_closed_sectors_are_drawn_closed(rules):
    """Sector s of ring 3 is 3:3s..3:3s+2; only the listed sectors are open.

    Covers: D-4
    """
    closed = lambda svg: {n for n, g in positions(svg).items() if g.get("data-closed") == "1"}
    assert closed(board_svg(board({}), rules)) == {f"3:{i}" for i in range(18)}
    b = board({"3:4": ("earth", 1)}, open_sectors=[1, 5])
    # sector 1 = 3:3, 3:4, 3:5; sector 5 = 3:15, 3:16, 3:17
    assert closed(board_svg(b, rules)) == {f"3:{i}" for i in range(18)} - {
        "3:3", "3:4", "3:5", "3:15", "3:16", "3:17"}


def test_runes_grades_artifacts_and_core(rules):
    """Kind (colour), grade (roman), artifact letter, the core's school and the sun's element."""
    b = board({"1:0": ("fire", 2), "2:5": ("light", 3)}, core="sun", sun_element="ice",
              artifacts={"2:3": "ward_stone", "1:0": "mana_spring"})
    pos = positions(board_svg(b, rules))
    fire = pos["1:0"]
    assert fire.find(f"{SVG_NS}polygon").get("stroke") == bi.G.KIND_COLOURS["fire"]
    # grade II lifted to III by the mana spring on it (D-11a), and the spring's letter
    assert "II>III" in texts(fire) and "S" in texts(fire)
    assert "III" in texts(pos["2:5"])
    assert "W" in texts(pos["2:3"]) and pos["2:3"].get("data-kind") is None  # stone, no rune
    assert "sun" in texts(pos["core"])
    # the core draws the ice symbol for its element: the ice colour is used inside the core
    assert bi.G.KIND_COLOURS["ice"] in ET.tostring(pos["core"], encoding="unicode")


def test_the_header_keeps_the_boss_rules_of_a_long_status_line(rules):
    """Twelve relics and five boss rules: one status line was cut at "relics: resonance_mirror,
    em…", the boss rules lost. A line that fits stays one line at 11 px; a long one is two, the
    relics second, so "boss: ..." is whole (the relics cut with "…" if need be)."""
    relics = list(rules.spec.relics)[:12]
    bosses = list(rules.spec.boss_rules)[:5]
    b = board({"1:0": ("fire", 1)}, relics=relics, boss_rules=bosses)
    root = ET.fromstring(board_svg(b, rules))
    shown = texts(root)
    boss_line = "boss: " + ", ".join(bosses)
    assert any(t.endswith(boss_line) for t in shown), shown[:4]
    assert any(t.startswith("relics: " + relics[0]) for t in shown)
    short = board({"1:0": ("fire", 1)}, relics=relics[:1])
    line = [t for t in texts(ET.fromstring(board_svg(short, rules))) if "HP" in t]
    assert line == [f"no core · round 1 · 100 HP · relics: {relics[0]}"]


def test_png_draws_the_svg_geometry(rules):
    """A point inside each hex (off its symbol and texts) has that cell's fill in the PNG."""
    b = board({"1:0": ("fire", 1), "2:3": ("water", 2)}, open_sectors=[0])
    svg = board_svg(b, rules)
    pixels = decode_png(board_png(b, rules)).astype(int)
    pos = positions(svg)
    s = bi.SIZE
    fills = {"1:0": bi._cell_fill("fire"), "2:3": bi._cell_fill("water"),
             "2:0": bi.G.EMPTY_FILL, "3:1": bi.G.EMPTY_FILL, "3:4": bi.G.CLOSED_FILL}
    for name, colour in fills.items():
        x, y = hex_centre(pos[name])
        px = pixels[round(y - 0.35 * s), round(x + 0.45 * s)]
        assert np.all(np.abs(px - rgb(colour)) <= 3), (name, px, colour)


def test_annotate_shows_power_flows_and_resonance(rules):
    """Powers from explain, flow arrows from feeder to fed, the resonance pattern's loop.

    Fire 1:0 feeds the wind 2:0 outward of it (firestorm): 3 (wind) x 1 (grade I) x 1.25
    (ring 2) x 2.0 (firestorm) = 7.5. Fires 1:0 and 1:3 face each other (two-fold, x1.2):
    6 x 1.2 = 7.2 each. The sun core flowing as wind feeds the ring-1 fires with fanned flame at
    half effect: 1 + (1.5 - 1) / 2 = 1.25, and attunement does not apply (wind is not fire):
    7.2 x 1.25 = 9.0.
    Covers: D-12, flow:firestorm, flow:fanned_flame, resonance:twofold, core:sun, D-35
    """
    b = board({"1:0": ("fire", 1), "1:3": ("fire", 1), "2:0": ("wind", 1)}, core="sun",
              sun_element="wind")
    svg = board_svg(b, rules, annotate=True)
    root = ET.fromstring(svg)
    labels = next(g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "labels")
    powers = [t.text for t in labels.iter(f"{SVG_NS}text") if t.get("class") == "power"]
    assert sorted(powers) == ["7.5", "9.0", "9.0"]
    pos = positions(svg)
    centre = {n: hex_centre(pos[n]) for n in ("core", "1:0", "1:3", "2:0")}
    flows = next(g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "flows")
    heads = [p for p in flows.iter(f"{SVG_NS}polygon")]     # one filled head per arrow
    # arrows: 1:0 -> 2:0 (firestorm), core -> 1:0 and core -> 1:3 (fanned flame, dashed)
    assert len(heads) == 3
    tips = [tuple(map(float, h.get("points").split()[0].split(","))) for h in heads]
    nearest = sorted(min(centre, key=lambda n: math.dist(centre[n], tip)) for tip in tips)
    assert nearest == ["1:0", "1:3", "2:0"]
    dashed = [p for p in flows.iter(f"{SVG_NS}polyline") if p.get("stroke-dasharray")]
    assert len(dashed) == 4            # the two core arrows (outline and colour line each)
    res = next(g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "resonance")
    loops = list(res.iter(f"{SVG_NS}polyline"))
    assert len(loops) == 1
    ends = [tuple(map(float, p.split(","))) for p in loops[0].get("points").split()]
    assert len(ends) == 2
    for name in ("1:0", "1:3"):
        assert min(math.dist(centre[name], e) for e in ends) < 0.02


def test_a_drafts_last_frame_names_the_round_fought(rules):
    """After its one battle RuneDraft-v0's state has moved on to round 2 (200 HP); its last
    frame said so, where info["round"] is 1, the round fought at 100 HP. It now draws the round
    fought."""
    from rune_env.envs.run_env import RuneDraftEnv
    env = RuneDraftEnv(render_mode="rgb_array", opponents="generator", core="moon")
    env.reset(seed=0)
    ready = env.table.by_name("ready")
    while True:
        _, _, terminated, _, info = env.step(ready)
        if terminated:
            break
    assert info["round"] == 1 and env.state.round == 2
    frame = env.render()
    assert np.array_equal(frame, state_rgb_array(env.state, round_shown=1))
    assert not np.array_equal(frame, state_rgb_array(env.state))


def test_state_rgb_array_has_a_fixed_size_and_shows_the_run(rules):
    """A run's frames: the player's board with hand and status, one size for every state."""
    from rune_env.run.actions import action_table
    from rune_env.run.loop import apply, legal_mask, new_run
    state = new_run(5, rules, core="star")
    table = action_table(rules)
    first = state_rgb_array(state)
    lay = bi.Layout.of(rules.radius)
    assert first.dtype == np.uint8 and first.shape == (lay.height, lay.width, 3)
    apply(state, table.by_name("buy_rune 0"))
    slot = len(state.hand) - 1
    apply(state, table.by_name(f"place {slot} -> 1:0"))
    assert legal_mask(state).any()
    second = state_rgb_array(state)
    assert second.shape == first.shape
    # the board's picture (below the header) changed where 1:0 now holds the rune
    pos = positions(board_svg(state.to_board(), rules))
    x, y = hex_centre(pos["1:0"])
    s = bi.SIZE
    px = second[round(y - 0.35 * s), round(x + 0.45 * s)].astype(int)
    kind = state.board[geometry(rules.radius).parse("1:0")][0]
    assert np.all(np.abs(px - rgb(bi._cell_fill(kind))) <= 3)
    assert not np.array_equal(first, second)


# -- the render and replay commands -------------------------------------------------------------
def test_render_cli_writes_png_and_svg(tmp_path):
    src = REPO / "configs" / "boards" / "sun_firestorm.json"
    png, svg = tmp_path / "b.png", tmp_path / "b.svg"
    r = cli("render", src, "-o", png, "--annotate", "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    lay = bi.Layout.of(3)
    assert decode_png(png.read_bytes()).shape == (lay.height, lay.width, 3)
    r = cli("render", src, "-o", svg, "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    assert count_classes(svg.read_text(encoding="utf-8")) == (36, 1)


@pytest.mark.parametrize("command, data, message", [
    ("render", {"runes": {"3:5": ["fire", 1]}}, "not open"),
    ("render", {"runes": {"1:0": ["plasma", 1]}}, "unknown rune kind"),
    ("render", "{not json", "not valid JSON"),
    ("replay", {"runes": {"3:5": ["fire", 1]}}, "not open"),
])
def test_render_and_replay_refuse_bad_boards(tmp_path, command, data, message):
    """A bad board: one line naming the problem on stderr, exit status 2, no file written."""
    bad = tmp_path / "bad.json"
    bad.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    good = REPO / "configs" / "boards" / "sun_firestorm.json"
    out = tmp_path / ("x.png" if command == "render" else "x.html")
    args = (bad,) if command == "render" else (good, bad)
    r = cli(command, *args, "-o", out, "--rules", FROZEN_RULES)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    assert not out.exists()


def test_render_cli_refuses_an_unknown_picture_format(tmp_path):
    r = cli("render", REPO / "configs" / "boards" / "sun_firestorm.json", "-o", tmp_path / "b.jpg")
    assert r.returncode == 2 and ".png or .svg" in r.stderr


def page_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="battle-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_replay_cli_writes_one_self_contained_page(tmp_path, rules):
    a = REPO / "configs" / "boards" / "tree_reserves.json"
    b = REPO / "configs" / "boards" / "eclipse_umbra_curse.json"
    out = tmp_path / "replay.html"
    r = cli("replay", a, b, "-o", out, "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    page = out.read_text(encoding="utf-8")
    # nothing fetched: no external script, stylesheet, image or font; no URL but the SVG namespace
    assert not re.search(r"<script[^>]+src=", page)
    assert not re.search(r"<link[^>]+stylesheet", page) and "@import" not in page
    assert set(re.findall(r"https?://[^\s\"')]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert page.count("<svg ") == 2
    result = battle(load_board(a, rules), load_board(b, rules), rules, trace=True)
    data = page_data(page)
    assert data["events"] == json.loads(json.dumps(result.events))
    assert data["result"]["hp"] == list(result.hp) and data["result"]["winner"] == result.winner
    m = re.search(r'<div id="result"[^>]*data-hp0="([^"]+)"\s+data-hp1="([^"]+)"', page)
    assert (float(m.group(1)), float(m.group(2))) == result.hp


def test_replay_page_shows_rest_turns(rules):
    """Under the balance rules (min_cycle_turns 4) a one-rune board rests 3 turns a cycle: the
    page's data carries the rest events (60 s at 0.5 s: 90 of them) and the side's cycle, and the
    page has the rests chip and describes the event. As written: no rests, the chip hidden.

    Covers: D-50"""
    from rune_env.pictures.replay import replay_data
    from rune_env.rules import load_rules
    balance = load_rules(FROZEN_RULES, {"battle.min_cycle_turns": 4})
    a, b = board({"1:0": ("water", 1)}), board({})
    data, _ = replay_data(a, b, balance)
    assert sum(e["type"] == "rest" for e in data["events"]) == 90
    assert (data["sides"][0]["cycle_turns"], data["sides"][0]["rest_turns"]) == (4, 3)
    page = replay_html(a, b, balance)
    assert 'id="rests-0"' in page and "rests 0 (3 a cycle)" in page
    assert 'case "rest"' in page
    data, _ = replay_data(a, b, rules)
    assert not any(e["type"] == "rest" for e in data["events"])
    assert re.search(r'id="rests-0"[^>]*hidden', replay_html(a, b, rules))
