"""`python -m rune_env play` on the 80 x 24 terminal: screens, info, warnings, max HP, sides, and
the game in a real pseudo-terminal and in tmux.

Like tests/terminal/test_play_commands.py (whose helpers these tests reuse) they check the
interface, not the rules' numbers, and read the frozen rules file, never RUNE_TEST_RULES; marked
`outside_mutation_check` (CI runs it).
"""
from __future__ import annotations

import io
import re
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import FROZEN_RULES

from rune_env.terminal.play import HELP
from rune_env.rules import Board, load_rules
from rune_env.run import PendingChoice, action_table, legal_mask, new_run
from rune_env.terminal.play import PAUSE, REPORT_LINES, SCREEN_LINES, Session, battle_report
from rune_env.run.loop import apply as apply_action
from rune_env.terminal.diagram import WIDTH
from rune_env.terminal.screen import VIEW_LINES, view
from rune_env.terminal.words import hp_why, info_lines, placement_warnings
from test_play_commands import REPO, RULES, empty_opponent, run_play

pytestmark = pytest.mark.outside_mutation_check


# -- the 80 x 24 terminal: screens, info, warnings, max HP, sides -------------------------------
def test_screens_fit_80_columns_and_24_lines():
    """Every screen of random runs (all ranks, choices, rewards, relics, bosses), every battle
    report and the help fit: the view is at most 21 lines (with the typed command, the "ok"
    line and the prompt: 24), a report at most 21 (with the command, the "ok" line and the
    pause prompt: 24), no line over 80 columns."""
    strong = Board(runes={0: ("fire", 3), 6: ("wind", 3), 1: ("ice", 3)})

    def opponent(round_, effects, boss_rules, rng):
        return Board() if round_ % 3 else strong

    table = action_table(RULES)
    ready = table.id("ready")
    seen = {"reports": 0, "pending": set(), "relics": 0}
    for seed in range(6):
        state = new_run(seed, RULES, rank=seed)
        rng = np.random.default_rng(seed)
        while not state.over:
            lines = view(state)
            assert len(lines) <= VIEW_LINES and max(map(len, lines)) <= WIDTH, "\n".join(lines)
            if state.pending:
                seen["pending"].add(state.pending.kind)
            mask = legal_mask(state)
            legal = np.flatnonzero(mask)
            action = ready if mask[ready] and rng.random() < 0.05 else \
                int(legal[rng.integers(len(legal))])
            step = apply_action(state, action, opponent)
            if step.battle:
                report = battle_report(state, step.battle)
                assert len(report) <= REPORT_LINES and max(map(len, report)) <= WIDTH, \
                    "\n".join(report)
                assert len(report[-1].split()) == 2          # both boards' last rows are there
                seen["reports"] += 1
        seen["relics"] = max(seen["relics"], len(state.relics))
    assert seen["reports"] >= 30 and seen["pending"] == {"core", "reward", "relic"}
    assert VIEW_LINES + 3 <= SCREEN_LINES and REPORT_LINES + 3 <= SCREEN_LINES
    assert len(HELP.splitlines()) + 2 <= SCREEN_LINES


def _crowded_state():
    """A late, crowded run: tree core, 8 hand runes, 4 artifacts, 6 relics, base-stat rewards,
    a giant+swift boss, useless supports on the board."""
    s = new_run(2**31 - 1, RULES, rank=4, core="tree")
    s.round = 10
    s.boss_schedule[10] = ["giant", "swift"]
    s.hand_slots = 8
    s.hand = [("resonator", 3), ("amplify", 2), ("thunder", 3), ("mimic", 1), ("light", 2),
              ("water", 1), ("earth", 3), ("delay", 2)]
    s.artifact_slots = 4
    s.artifact_inventory = ["scapegoat_doll", "mana_spring"]
    s.artifacts = {5: "ward_stone", 20: "mana_furnace"}
    s.relics = ["resonance_mirror", "focusing_mirror", "phoenix_feather", "tide_vessel",
                "coin_purse", "thorn_crown"]
    s.hp_bonus = 0.3
    s.open_sectors = [0, 1, 2, 3, 4, 5]
    s.wins, s.losses, s.draws, s.mana = 9, 12, 7, 1234
    s.board = {0: ("amplify", 3), 1: ("delay", 1), 2: ("mimic", 2), 3: ("node", 1),
               20: ("amplify", 1), 30: ("delay", 1), 35: ("node", 1)}
    return s


def test_a_crowded_screen_still_fits():
    s = _crowded_state()
    for pending in (None, PendingChoice("reward", ["artifact:scapegoat_doll", "artifact_slot",
                                                  "base_stat"]),
                    PendingChoice("relic", ["bulwark", "hourglass", "warding_seal"])):
        s.pending = pending
        lines = view(s)
        text = "\n".join(lines)
        assert len(lines) <= VIEW_LINES and max(map(len, lines)) <= WIDTH, text
        assert "side 1" in lines[0]                         # round 10: the player is side 1
        assert "core tree:" in text and "hand_slots" not in text
        if pending is None:
            assert "hand 8/8" in text and "shop" in text
            assert "7 supports do nothing" in text and "type check" in text
        else:
            assert f"Choose a {pending.kind}" in text
            assert all(f"[{i}]" in text for i in range(3))


def test_info_explains_with_the_rules_numbers():
    """`info NAME` in words, with the numbers of the rules in play: a retuned copy shows its own
    numbers (moon's interval 0.7 -> 30% faster, ice's freeze 2.25 s, the ward stone at 6 mana,
    the ember jar's fire x1.35)."""
    rc, out, _ = run_play("info moon\ninfo ice\ninfo ward_stone\ninfo ember_jar\ninfo giant\n"
                          "info base_stat\ninfo Ward Stone\ninfo wardstone\ninfo\nquit\n", seed=1)
    assert rc == 0
    r = RULES.spec
    replies = dict(chunk.partition("\n")[::2] for chunk in out.split("\n> ")[1:])
    moon = replies["info moon"]
    assert "moon" in moon and "turns 20% faster" in moon and "power x0.9" in moon
    assert f"{r.battle.base_interval_s * 0.8:g} s instead of {r.battle.base_interval_s:g} s" in moon
    ice = replies["info ice"]
    assert f"price {r.runes.ice.price} mana" in ice
    assert f"one hit of {r.runes.ice.damage:g} damage" in ice
    assert f"for {r.runes.ice.freeze_s:g} s" in ice and "deep_freeze x1.2" in ice
    ward = replies["info ward_stone"]
    assert f"price {r.artifacts['ward_stone'].price} mana" in ward and "holds 1 ward" in ward
    assert replies["info Ward Stone"] == ward
    jar = replies["info ember_jar"]
    assert "a relic" in jar and "fire and thunder power x1.2" in jar
    assert "max HP x1.3" in replies["info giant"] and "in this run" in replies["info giant"]
    # the rounds in words: "round 15" for one, "rounds 5, 15" for more (it said "rounds 15")
    said = replies["info giant"].split("in this run: ")[1].split("\n")[0]
    assert re.fullmatch(r"never|round \d+|rounds \d+(, \d+)+", said), said
    assert "+10%" in replies["info base_stat"]
    assert "did you mean ward_stone?" in replies["info wardstone"]
    assert all(n in replies["info"] for n in ("moon", "ice", "ward_stone", "ember_jar", "giant"))
    for chunk in replies.values():
        assert max(map(len, chunk.splitlines())) <= WIDTH
    tuned = load_rules(FROZEN_RULES, {"cores.moon.interval_x": 0.7, "runes.ice.freeze_s": 2.25,
                                      "artifacts.ward_stone.price": 6,
                                      "relics.ember_jar.power_x_by_kind.fire": 1.35})
    text = "\n".join(info_lines(tuned, "moon") + info_lines(tuned, "ice")
                     + info_lines(tuned, "ward_stone") + info_lines(tuned, "ember_jar"))
    assert "turns 30% faster" in text and "for 2.25 s" in text and "price 6 mana" in text
    assert "fire power x1.35" in text and "thunder power x1.2" in text
    assert "interval_x" not in text and "power_x_by_kind" not in text



def test_info_amplify_states_the_cap():
    """D-54: a rune's amplifies together multiply its power by at most runes.amplify.max_factor.
    `info amplify` said only "x1.75/x2.35/x3.4 at grade I/II/III; several amplifies multiply
    again", the rules before the cap, whatever the cap. With a cap of 2 a grade II or III
    amplify alone reaches it: x1.75/x2/x2 (1 + 0.75 x the grade power 1, 1.8 and 3.2, the frozen
    rules' power_x, capped at 2); with 1.5, x1.5 at every grade; without a cap, no cap."""
    def said(rules) -> str:
        return " ".join(" ".join(info_lines(rules, "amplify")).split())
    frozen = load_rules(FROZEN_RULES)
    assert frozen.spec.runes.amplify.max_factor is None
    factors = [round(1 + frozen.spec.runes.amplify.increase * x, 6)
               for x in frozen.spec.grades.power_x]
    uncapped = said(frozen)
    assert uncapped.endswith("several amplifies multiply again") and "cap" not in uncapped
    for cap in (2, 1.5):
        capped = "/".join(f"x{min(f, cap):g}" for f in factors)
        text = said(load_rules(FROZEN_RULES, {"runes.amplify.max_factor": cap}))
        assert (f"all the amplifies on one rune together by at most x{cap:g} (the amplify "
                f"cap): {capped} at grade I/II/III (uncapped "
                f"{'/'.join(f'x{f:g}' for f in factors)})") in text, text
    assert factors == [1.75, 2.35, 3.4]       # the frozen numbers the docstring works with

def test_cores_are_shown_in_words():
    rc, out, _ = run_play("choose moon\nquit\n", seed=2)
    assert rc == 0
    assert "[2] moon: turns 20% faster, power x0.9" in out
    assert "core moon: turns 20% faster, power x0.9" in out
    for key in ("interval_x", "power_x", "core_flow_strength", "loose_resonance",
                "seal_cap_divisor", "outermost_power_x"):
        assert key not in out


def test_placement_warnings():
    """An amplify in the outermost ring, a delay with nothing outward, a mimic in ring 1 and a
    lone node do nothing: the screen says so and `check` lists them; a casting rune outward of
    the delay ends its warning."""
    geo_cell = {"1:0": 0, "1:3": 3, "2:6": 12, "3:0": 18, "2:0": 6}
    s = new_run(3, RULES, core="moon")
    s.open_sectors = [0]
    s.board = {geo_cell["3:0"]: ("amplify", 1), geo_cell["1:3"]: ("delay", 1),
               geo_cell["1:0"]: ("mimic", 1), geo_cell["2:6"]: ("node", 1)}
    warnings = placement_warnings(RULES, s.board)
    assert len(warnings) == 4
    text = "\n".join(warnings)
    assert "amplify at 3:0 does nothing: it is in the outermost ring" in text
    assert "delay at 1:3 does nothing: no casting rune outward" in text
    assert "mimic at 1:0 does nothing: ring 1 has nothing inward but the core" in text
    assert "node at 2:6 does nothing: it links 1 rune," in text      # the delay at 1:3
    screen = "\n".join(view(s))
    assert "! mimic at 1:0 does nothing" in screen and "2 supports do nothing more" in screen
    out = io.StringIO()
    Session(s, out).command(["check"])
    assert out.getvalue().count("! ") == 4
    # a fire outward of the delay (1:3 -> 2:5, 2:6, 2:7: 2:7 is id 13), next to the node too
    s.board[13] = ("fire", 1)
    left = placement_warnings(RULES, s.board)
    assert not any(w.startswith(("delay", "node")) for w in left) and len(left) == 2
    # the mimic in ring 2 over an inward fire does something
    assert placement_warnings(RULES, {0: ("fire", 1), 6: ("mimic", 1)}) == []
    # an amplify with no casting rune outward still acts through a node linking a casting rune
    # (1:0 amplify, 1:1 node, 1:2 fire: D-19), and the node links two runes
    assert placement_warnings(RULES, {0: ("amplify", 1), 1: ("node", 1), 2: ("fire", 1)}) == []
    assert placement_warnings(RULES, {0: ("amplify", 1), 2: ("fire", 1)}) == [
        "amplify at 1:0 does nothing: no casting rune outward (2:0, 2:1, 2:11)"]


def test_max_hp_growth_and_sides_are_explained():
    """Round 2: max HP 100 + 1 round x 25 (frozen hp_per_round 25), side 1; a base-stat reward
    adds its 10%; a giant boss multiplies the boss's max HP by 1.3, in the status and in the
    battle report."""
    rc, out, _ = run_play("choose 0\nready\nquit\n", seed=11, opponents=empty_opponent)
    assert rc == 0
    assert "you are side 0 (first to move)" in out           # round 1
    assert "(you were side 0)" in out and "you, side 0:" in out and "opponent, side 1:" in out
    assert "max HP 125 = 100 + 1 round x 25" in out and "you are side 1" in out
    s = new_run(4, RULES, core="moon")
    s.round, s.hp_bonus = 5, 0.1
    s.boss_schedule[5] = ["giant"]
    assert hp_why(RULES, 5, 0.1) == "220 = (100 + 4 rounds x 25) +10% (base-stat rewards)"
    screen = "\n".join(view(s))
    assert "max HP 220 = (100 + 4 rounds x 25) +10%" in screen
    assert "boss max HP 260 = 200 x1.3 (giant)" in screen
    step = apply_action(s, action_table(RULES).id("ready"), empty_opponent)
    report = "\n".join(battle_report(s, step.battle))
    assert "against a boss (giant)" in report
    assert "max HP: you 220 = (100 + 4 x 25) +10%" in report
    assert "opponent 260 = 200 x1.3 (giant)" in report


# -- in a real terminal: a pseudo-terminal of 80 x 24 --------------------------------------------
class Terminal:
    """`python -m rune_env play` in a pseudo-terminal of 80 x 24 (python's pty module)."""

    def __init__(self, *args: str, cols: int = 80, rows: int = 24):
        import fcntl
        import os
        import pty
        import struct
        import termios
        self.os = os
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = dict(os.environ, COLUMNS=str(cols), LINES=str(rows), TERM="dumb")
        self.proc = subprocess.Popen([sys.executable, "-m", "rune_env", "play", *args],
                                     cwd=REPO, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True)
        os.close(slave)
        self.buf = b""
        self.log = b""

    def _read(self, timeout: float) -> bytes:
        import select
        r, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not r:
            return b""
        try:
            data = self.os.read(self.master, 65536)
        except OSError:           # the game has ended
            data = b""
        if not data:
            raise EOFError
        self.log += data
        return data

    def until(self, marker: str, timeout: float = 90.0) -> str:
        import time
        end = time.monotonic() + timeout
        want = marker.encode()
        while want not in self.buf:
            if time.monotonic() > end:
                raise AssertionError(f"{marker!r} not shown; the end: {self.buf[-600:]!r}")
            self.buf += self._read(end - time.monotonic())
        i = self.buf.index(want) + len(want)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out.decode().replace("\r\n", "\n")

    def quiet_for(self, seconds: float) -> bytes:
        import time
        end = time.monotonic() + seconds
        got = b""
        while time.monotonic() < end:
            try:
                got += self._read(end - time.monotonic())
            except EOFError:
                break
        self.buf += got
        return got

    def type(self, line: str) -> None:
        self.os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=30)
        self.os.close(self.master)


def _screens(transcript: str) -> list[list[str]]:
    """The transcript cut where the game waits for input (a prompt or the pause): each piece is
    what the terminal shows at that moment, from the line the player typed on."""
    pieces, current = [], []
    for line in transcript.split("\n"):
        current.append(line)
        if line.startswith("> ") or line.startswith(PAUSE):
            pieces.append(current)
            current = [line]
    return pieces


def test_the_game_in_an_80x24_pseudo_terminal():
    """In a real (pseudo-)terminal of 80 x 24: no line over 80 columns; each screen, from the
    typed command to the next prompt, fits in 24 lines; after a battle the game waits for Enter
    (nothing more comes until it is pressed); `info` answers with the config's numbers."""
    pytest.importorskip("pty")
    # the budget drafter: the shipped pools are of the default rules, not the frozen file's
    term = Terminal("--seed", "1", "--core", "moon", "--rules", str(FROZEN_RULES),
                    "--opponents", "generator")
    try:
        text = term.until("> ")
        for command in ("buy 2", "place 0 1:0", "info moon", "info ice", "info ward_stone",
                        "info ember_jar", "help", "cells"):
            term.type(command)
            text += term.until("\n> ")
        term.type("ready")
        text += term.until(PAUSE)
        assert "-- Battle of round 1" in text and "(you were side 0)" in text
        # the game waits: no next screen until Enter
        assert b"== Round 2" not in term.quiet_for(1.5)
        term.type("")
        text += term.until("\n> ")
        assert "== Round 2" in text and "you are side 1" in text
        term.type("quit")
        text += term.until("record:")
    finally:
        term.close()
    spec = RULES.spec
    assert "turns 20% faster" in text and "power x0.9" in text
    assert f"freezes the opponent's strongest rune for {spec.runes.ice.freeze_s:g} s" in text
    assert f"price {spec.artifacts['ward_stone'].price} mana" in text
    assert "fire and thunder power x1.2" in text
    lines = text.split("\n")
    too_wide = [ln for ln in lines if len(ln) > 80]
    assert not too_wide, too_wide
    screens = _screens(text)
    assert len(screens) >= 10
    for screen in screens:
        assert len(screen) <= 24, "\n".join(screen)


def test_the_game_in_tmux_80x24():
    """The same in tmux at 80 x 24, reading what the pane shows: the whole screen (its header
    and the prompt) is visible at once, the whole battle report (its header and the pause
    prompt) too."""
    import shutil
    import time
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed")
    sock = f"rune-test-{os.getpid()}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True,
                              timeout=30).stdout

    def pane_until(marker: str, prompt: bool = True, timeout: float = 90.0) -> list[str]:
        """The pane once it shows `marker` (and, with `prompt`, waits at the prompt)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pane = tmux("capture-pane", "-p", "-t", "game").rstrip("\n").split("\n")
            if marker in "\n".join(pane) and (not prompt or pane[-1].strip() == ">"):
                return pane
            time.sleep(0.2)
        raise AssertionError(f"{marker!r} not shown:\n" + "\n".join(pane))

    cmd = (f"{sys.executable} -m rune_env play --seed 1 --core moon --rules {FROZEN_RULES} "
           f"--opponents generator")
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "game", "-x", "80", "-y", "24", "-c",
         str(REPO), cmd)
    try:
        pane = pane_until("== Round 1")
        assert len(pane) <= 24
        for keys, said in (("buy 2", "ok: buy_rune 2"), ("place 0 1:0", "ok: place 0 -> 1:0")):
            tmux("send-keys", "-t", "game", keys, "Enter")
            pane = pane_until(said)
            # the whole screen is visible at once: the typed command, "ok", the header, the
            # shop and hand, the prompt
            top = pane.index(f"> {keys}")
            assert pane[top + 1] == said and pane[top + 2].startswith("== Round 1"), pane
            assert any(ln.startswith("hand") for ln in pane[top:])
        tmux("send-keys", "-t", "game", "ready", "Enter")
        pane = pane_until(PAUSE, prompt=False)
        top = pane.index("> ready")                               # the report fits under it
        assert pane[top + 1].startswith("-- Battle of round 1"), pane
        assert pane[-1].startswith(PAUSE), pane
        time.sleep(1.5)                                           # Enter is awaited
        assert "== Round 2" not in tmux("capture-pane", "-p", "-t", "game")
        tmux("send-keys", "-t", "game", "", "Enter")
        pane = pane_until("== Round 2")
        assert any(ln.startswith("== Round 2") for ln in pane)
        tmux("send-keys", "-t", "game", "info ember_jar", "Enter")
        pane = pane_until("fire and thunder power x1.2")
        assert all(len(ln) <= 80 for ln in pane)
    finally:
        tmux("kill-server")


def test_bad_seed_is_refused():
    rc, out, err = run_play("", seed=-5)
    assert rc == 2 and out == "" and "seed must be an integer >= 0" in err and "-5" in err
