"""Pictures: board images (SVG, PNG, RGB arrays), the render and replay commands, the replay page.

The board tests parse the SVG (every position is a <g> of class "cell" or "core" whose first
polygon is its hexagon) and read PNG pixels. The replay page is opened in headless Chromium,
driven over `--remote-debugging-pipe` (the DevTools protocol as NUL-terminated JSON on fds 3 and
4: no websocket, no selenium, no driver); that test is skipped when no Chromium is installed
(Debian: `apt-get install -y chromium`).

Interface tests, not battle-rule tests: the module is marked `outside_mutation_check`.
"""
from __future__ import annotations

import base64
import io
import json
import math
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
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


# -- the replay page in a real browser ----------------------------------------------------------
def chromium_binary() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Chromium:
    """Headless Chromium over --remote-debugging-pipe: DevTools messages are NUL-terminated JSON,
    written to the browser's fd 3 and read from its fd 4."""

    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="rune-env-chromium-")
        child_in, self._write = os.pipe()
        self._read_fd, child_out = os.pipe()
        self._log = open(os.path.join(self.profile, "chromium.log"), "wb")
        args = [binary, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"]
        actions = [(os.POSIX_SPAWN_DUP2, child_in, 3), (os.POSIX_SPAWN_DUP2, child_out, 4),
                   (os.POSIX_SPAWN_DUP2, self._log.fileno(), 1),
                   (os.POSIX_SPAWN_DUP2, self._log.fileno(), 2)]
        self.pid = os.posix_spawn(binary, args, os.environ, file_actions=actions)
        os.close(child_in)
        os.close(child_out)
        self._buf = b""
        self._id = 0
        self.session: str | None = None
        self.events: list[dict] = []

    def _next(self, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer")
            if select.select([self._read_fd], [], [], left)[0]:
                chunk = os.read(self._read_fd, 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed its pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, browser: bool = False,
             timeout: float = 30) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self._write, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._next(timeout)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        end = time.monotonic() + timeout
        while True:
            m = self._next(max(0.01, end - time.monotonic()))
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self, url: str, width: int = 1100, height: int = 1000) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 browser=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def problems(self) -> list[str]:
        """Uncaught exceptions, console errors and warnings, and browser log errors so far."""
        out = []
        for m in self.events:
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('text')} {d.get('exception', {}).get('description')}")
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif method == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        Path(path).write_bytes(base64.b64decode(data["data"]))

    def close(self) -> None:
        try:
            self.send("Browser.close", browser=True, timeout=5)
        except Exception:
            pass
        for _ in range(50):
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
            time.sleep(0.1)
        else:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        os.close(self._write)
        os.close(self._read_fd)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium():
    binary = chromium_binary()
    if binary is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); "
                    "the replay page's browser test needs it")
    browser = Chromium(binary)
    yield browser
    browser.close()


def _slider_to(browser: Chromium, value: str) -> None:
    browser.js(f"(function(){{var s=document.getElementById('slider'); s.value={value};"
               "s.dispatchEvent(new Event('input'));})()")


def test_replay_page_in_chromium_ends_at_the_hand_worked_result(chromium, tmp_path, rules):
    """A grade-I fire in 1:0 against an empty board: 6 damage a turn from t = 0.5 s every
    0.5 s; 17 turns (t = 0.5 .. 8.5 s) deal 17 x 6 = 102 >= 100, so side 1 is down at 8.5 s
    with HP 0 and side 0 keeps 100. 17 moments (one per turn) after the start.

    Covers: rune:fire, D-6
    """
    page = tmp_path / "fire.html"
    page.write_text(replay_html(board({"1:0": ("fire", 1)}), board({}), rules), encoding="utf-8")
    chromium.events.clear()
    chromium.open(page.as_uri())
    assert chromium.js("document.body.dataset.ready") == "1"
    assert chromium.js("document.getElementById('slider').max") == "17"
    assert chromium.js("document.getElementById('result').hidden") is True
    chromium.js("document.getElementById('btn-step').click()")
    # after the first moment: t = 0.5 s, side 1 hit once: 100 - 6 = 94, the fire outlined
    assert chromium.js("document.getElementById('time').dataset.t") == "0.5"
    assert float(chromium.js("document.getElementById('hp-1').dataset.hp")) == 94.0
    assert chromium.js("document.querySelector('#s0-c-1-0 .ov-cast').getAttribute('display')") is None
    _slider_to(chromium, "document.getElementById('slider').max")
    assert chromium.js("document.getElementById('time').dataset.t") == "8.5"
    assert float(chromium.js("document.getElementById('hp-0').dataset.hp")) == 100.0
    assert float(chromium.js("document.getElementById('hp-1').dataset.hp")) == 0.0
    assert chromium.js("document.getElementById('result').hidden") is False
    assert "Side 0" in chromium.js("document.getElementById('result').textContent")
    assert chromium.problems() == []


def test_replay_page_of_two_empty_boards_runs_its_clock_to_the_timeout(chromium, tmp_path, rules):
    """Two empty boards: no event, a draw at the time limit (60 s). The page showed "t = 0.000 s
    / 0.000 s" and "overdrive x1.0" beside "Draw by timeout at 60 s"; the battle's end is a
    moment of its own. At 60 s the overdrive (from 20 s, +1 a second past it, as the page
    computes from the rules) is 1 + per_second x (60 - start_s)."""
    page = tmp_path / "empty.html"
    page.write_text(replay_html(board({}), board({}), rules), encoding="utf-8")
    chromium.events.clear()
    chromium.open(page.as_uri())
    assert chromium.js("document.body.dataset.ready") == "1"
    assert chromium.js("document.getElementById('slider').max") == "1"
    _slider_to(chromium, "1")
    duration = rules.spec.battle.duration_s
    assert float(chromium.js("document.getElementById('time').dataset.t")) == duration
    od = rules.spec.overdrive
    factor = 1 + od.per_second * (duration - od.start_s)
    assert chromium.js("document.getElementById('overdrive').textContent") == f"overdrive x{factor:.1f}"
    assert chromium.problems() == []


def test_replay_page_in_chromium_plays_and_shows_the_battle_result(chromium, tmp_path, rules):
    """A whole example battle (seals, reserves, wards, curses, dolls): play, step, slider; at
    the end the HP the page shows (computed by its script from the trace) is the result's."""
    a = load_board(REPO / "configs" / "boards" / "tree_reserves.json", rules)
    b = load_board(REPO / "configs" / "boards" / "eclipse_umbra_curse.json", rules)
    result = battle(a, b, rules)
    page = tmp_path / "replay.html"
    page.write_text(replay_html(a, b, rules), encoding="utf-8")
    chromium.events.clear()
    chromium.open(page.as_uri())
    assert chromium.js("document.body.dataset.ready") == "1"
    n_moments = len({e["t"] for e in battle(a, b, rules, trace=True).events})
    assert chromium.js("document.getElementById('slider').max") == str(n_moments)
    # play at 10x for a moment: the slider moves by itself; pause stops it
    chromium.js("document.getElementById('speed').value='10';"
                "document.getElementById('btn-play').click()")
    time.sleep(0.6)
    chromium.js("document.getElementById('btn-play').click()")
    played = int(chromium.js("document.getElementById('slider').value"))
    assert played >= 2
    time.sleep(0.2)
    assert int(chromium.js("document.getElementById('slider').value")) == played
    _slider_to(chromium, "document.getElementById('slider').max")
    assert int(chromium.js("document.getElementById('slider').value")) == n_moments
    assert float(chromium.js("document.getElementById('time').dataset.t")) == result.time
    shown = (float(chromium.js("document.getElementById('hp-0').dataset.hp")),
             float(chromium.js("document.getElementById('hp-1').dataset.hp")))
    assert shown == result.hp
    res = chromium.js("(function(){var r=document.getElementById('result');"
                      "return [r.hidden, r.dataset.winner, r.textContent];})()")
    assert res[0] is False and res[1] == str(result.winner)
    # the last reserve to take each cell is drawn there; every used hand slot is crossed out
    reserves = [e for e in battle(a, b, rules, trace=True).events if e["type"] == "reserve"]
    assert reserves
    latest = {(e["side"], e["cell"]): e for e in reserves}
    for e in reserves:
        assert chromium.js(f"document.querySelector('#s{e['side']}-h-{e['slot']} .ov-used')"
                           ".getAttribute('display')") is None
    for e in latest.values():
        cell = e["cell"].replace(":", "-")
        assert chromium.js(f"document.querySelector('#s{e['side']}-c-{cell} .alt[data-rune=\"{e['kind']}:"
                           f"{e['grade']}\"]').getAttribute('display')") is None
    chromium.js("document.getElementById('btn-back').click()")
    assert chromium.js("document.getElementById('result').hidden") is True
    assert chromium.problems() == []


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
