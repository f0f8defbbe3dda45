"""The replay page in a real browser: headless Chromium, driven over `--remote-debugging-pipe`
(the DevTools protocol as NUL-terminated JSON on fds 3 and 4: no websocket, no selenium, no
driver); skipped when no Chromium is installed (Debian: `apt-get install -y chromium`). Moved
from test_pictures.py.

Interface tests, not battle-rule tests: the module is marked `outside_mutation_check`.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from conftest import board

from rune_env.battle import battle
from rune_env.pictures import replay_html
from rune_env.rules import load_board

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]


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
