"""`python -m rune_env play`: the terminal game's commands, board diagram and whole runs, driven by
scripted standard input.

Most tests call `rune_env.terminal.play.play(...)` with io.StringIO streams (fast); one runs the real CLI in
a subprocess. They check the interface (commands -> action ids, the board diagram, reasons for bad
input, whole runs to their end, the profile), not the rules' numbers, and always read the frozen
rules file, never RUNE_TEST_RULES; a few whole runs take a few seconds, so the module is marked
`outside_mutation_check` like tests/scripts/test_cli.py (CI runs it). The screens of the 80 x 24
terminal are tested in tests/terminal/test_play_screens.py, which reuses this module's helpers.
"""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FROZEN_RULES

from rune_env.terminal.diagram import board_width, draw_board
from rune_env.terminal.play import GAME_COMMANDS, HELP, OTHER_COMMANDS, parse_command, play
from rune_env.rules import Board, load_rules
from rune_env.run import action_table, new_run

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
RULES = load_rules(FROZEN_RULES)
# Ring 1 then ring 2 in casting order: the cells a scripted player fills (never closed).
INNER_CELLS = [f"1:{i}" for i in range(6)] + [f"2:{i}" for i in range(12)]
CELL_TOKEN = re.compile(r"^(?:[A-Z][a-z][123]|\.\.|##)[a-z]?$")
CORE_TOKEN = re.compile(r"^\([A-Z][a-z]{2}\)$|^\(--\)$")


def run_play(script: str, **kw):
    # the budget drafter unless a test says otherwise: the shipped pools are of the default
    # rules, not of the frozen file these tests read (tests/terminal/test_play_hints.py plays
    # the default, the rank's shipped pool, under the default rules)
    kw.setdefault("opponents", "generator")
    out, err = io.StringIO(), io.StringIO()
    rc = play(rules=RULES, stdin=io.StringIO(script), stdout=out, stderr=err, **kw)
    return rc, out.getvalue(), err.getvalue()


def empty_opponent(round_, effects, boss_rules, rng):
    """An opponent with no runes: it has no turns, so it never damages or erodes (D-6)."""
    return Board()


def diagrams(text: str) -> list[list[str]]:
    """Every board diagram after a "== Round" header: its 13 lines (radius 3: 4*3+1 rows), cut
    at the diagram's width (the status stands beside it)."""
    width = board_width(RULES)
    lines = text.splitlines()
    return [[ln[:width] for ln in lines[i + 1:i + 14]]
            for i, ln in enumerate(lines) if ln.startswith("== Round")]


def tokens(diagram: list[str]) -> list[str]:
    return [t for ln in diagram for t in ln.split()]


def battle_rounds(text: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2))
            for m in re.finditer(r"-- Battle of round (\d+)[^:]*: (WIN|LOSS|DRAW) at", text)]


# -- help and commands --------------------------------------------------------------------------
def test_help_lists_every_command():
    rc, out, _ = run_play("help\nquit\n", seed=1)
    assert rc == 0
    listed = {usage.split()[0] for usage, _ in GAME_COMMANDS + OTHER_COMMANDS}
    expected = {"buy", "buyart", "reroll", "place", "pick", "sell", "merge", "open", "art",
                "pickart", "sellart", "element", "choose", "ready", "show", "cells", "explain",
                "check", "help", "quit"}
    assert expected <= listed
    for usage, text in GAME_COMMANDS + OTHER_COMMANDS:
        assert usage in HELP and text in HELP
    assert "info NAME" in HELP
    # it fits the 80 x 24 terminal: with the typed command and the next prompt, 24 lines
    assert len(HELP.splitlines()) <= 22 and max(map(len, HELP.splitlines())) <= 80
    # what `help` printed is that list
    for line in HELP.splitlines():
        assert line in out


def test_each_command_is_one_action_of_the_table():
    """Cell ids by hand (geometry: ring k starts at id 3k(k-1)): 1:0 -> 0, 1:3 -> 3,
    2:3 -> 6 + 3 = 9, 3:17 -> 18 + 17 = 35."""
    table = action_table(RULES)
    state = new_run(1, RULES)             # a core choice is pending

    def kind_args(cmd: str):
        a = table.actions[parse_command(state, cmd.split())]
        return (a.kind, *a.args)

    assert kind_args("choose 1") == ("choose_core", table.cores.index("star"))
    assert kind_args("choose moon") == ("choose_core", table.cores.index("moon"))
    assert kind_args("buy 2") == ("buy_rune", 2)
    assert kind_args("buyart 0") == ("buy_artifact", 0)
    assert kind_args("reroll") == ("reroll",)
    assert kind_args("place 0 2:3") == ("place", 0, 9)
    assert kind_args("place 3 3:17") == ("place", 3, 35)
    assert kind_args("pick 2:3") == ("pick_up", 9)
    assert kind_args("sell 0") == ("sell", 0)
    assert kind_args("merge 0") == ("merge_hand", 0)
    assert kind_args("merge 2:3") == ("merge_board", 9)
    assert kind_args("open 4") == ("open_sector", 4)
    assert kind_args("art 0 1:3") == ("place_artifact", 0, 3)
    assert kind_args("pickart 1:3") == ("pick_up_artifact", 3)
    assert kind_args("sellart 0") == ("sell_artifact", 0)
    assert kind_args("element fire") == ("set_sun_element", table.elements.index("fire"))
    assert kind_args("ready") == ("ready",)


def test_bad_input_prints_the_reason_and_prompts_again():
    script = ["bogus", "place 0 9:9", "buy x", "buy 7", "ready", "choose 9", "place 0",
              "choose star", "place 0 1:0", "element fire", "pick 1:0", "quit"]
    rc, out, _ = run_play("\n".join(script) + "\n", seed=2)
    assert rc == 0
    # one prompt per line read; each command is echoed after its prompt (input is not a tty)
    chunks = out.split("\n> ")[1:]
    assert len(chunks) == len(script)
    replies = {}
    for chunk in chunks:
        cmd, _, reply = chunk.partition("\n")
        replies[cmd] = reply
    assert "unknown command 'bogus'" in replies["bogus"]
    assert "no cell 9:9" in replies["place 0 9:9"]
    assert "offer must be a number, not 'x'" in replies["buy x"]
    # frozen rules: shop_rune_offers 5 -> offers 0..4
    assert "offer 7 is out of range (0..4)" in replies["buy 7"]
    assert "a core choice is pending" in replies["ready"]
    # five cores -> options 0..4
    assert "core option 9 is out of range (0..4)" in replies["choose 9"]
    assert "usage: place H CELL" in replies["place 0"]
    assert "ok: choose_core star" in replies["choose star"]
    assert "hand slot 0 is empty" in replies["place 0 1:0"]
    assert "only a core that flows (sun) has an element" in replies["element fire"]
    assert "cell 1:0 holds no rune" in replies["pick 1:0"]
    assert "leave the run at round 1" in replies["quit"]
    assert "-- Battle" not in out         # nothing illegal went through, no ready happened


def test_end_of_input_exits_cleanly():
    rc, out, _ = run_play("", seed=3)
    assert rc == 0
    assert "End of input: leaving the run at round 1." in out


# -- the board diagram --------------------------------------------------------------------------
def test_diagram_has_37_cells_and_draws_runes_artifacts_and_sectors():
    """Flat-topped hexes, axial (q, r); a cell is drawn on row 2r + q + 6 (13 rows). Ring 2 is
    walked from (0,-2) clockwise, 2 steps SE first, then S: 2:3 = (2,-1) -> row 2(-1)+2+6 = 6,
    the core's row (0 + 0 + 6), right of it; 2:9 = (-2,1) -> row 6, left of it; ring 3 has odd q
    there (3:4 = (3,-2) -> row 5; 3:14 = (-3,1) -> row 5). Ring 3's top
    cell 3:0 = (0,-3) -> row 0 alone; row 1 holds 3:17 = (-1,-2) and 3:1 = (1,-3).
    Sector 0 of ring 3 = 3:0, 3:1, 3:2 (D-4): open, the other 15 ring-3 cells closed.

    Covers: D-3, D-4"""
    runes = {9: ("fire", 2)}                   # 2:3, fire grade II -> "Fi2"
    artifacts = {0: "ward_stone", 9: "mana_spring"}   # 1:0 (empty) and under the fire rune
    lines = draw_board(RULES, runes, artifacts, {0}, "sun")
    assert len(lines) == 13
    toks = tokens(lines)
    assert len(toks) == 37
    assert sum(1 for t in toks if CELL_TOKEN.match(t)) == 36
    assert [t for t in toks if CORE_TOKEN.match(t)] == ["(Sun)"]
    assert lines[0].split() == [".."]                  # 3:0, open
    assert lines[1].split() == ["##", ".."]            # 3:17 closed, 3:1 open
    assert lines[6].split() == ["..", "(Sun)", "Fi2s"]   # 2:9, the core, 2:3 with the spring
    assert lines[5].split() == ["##", "..", "..", "##"]  # 3:14, 1:5, 1:1, 3:4
    assert lines[4].split() == ["..", "..w", ".."]     # 2:10, 1:0 with the ward stone, 2:2
    # 18 ring-3 cells: 3 open, 15 closed; rings 1-2: 18 cells, one rune
    assert toks.count("##") == 15
    names = draw_board(RULES, {}, {}, set(), None, names=True)
    assert names[6].split() == ["2:9", "(--)", "2:3"]
    assert names[5].split() == ["3:14", "1:5", "1:1", "3:4"]
    assert sorted(t for t in tokens(names) if ":" in t) == sorted(
        f"{k}:{i}" for k in (1, 2, 3) for i in range(6 * k))


def test_show_draws_the_board_with_37_cells():
    rc, out, _ = run_play("show\nquit\n", seed=4, core="moon")
    assert rc == 0
    boards = diagrams(out)
    assert len(boards) == 2                   # at the start and after `show`
    for d in boards:
        toks = tokens(d)
        assert len(toks) == 37
        assert sum(1 for t in toks if CELL_TOKEN.match(t)) == 36
        assert [t for t in toks if CORE_TOKEN.match(t)] == ["(Moo)"]
        # a new run: rings 1-2 open and empty (18 ".."), ring 3 closed (18 "##") (D-4)
        assert toks.count("..") == 18 and toks.count("##") == 18


# -- whole runs ---------------------------------------------------------------------------------
def test_run_of_ready_only_ends_when_the_lamps_are_out():
    """An empty board has no turns (D-6): it never deals damage, so it never wins; each loss puts
    out a lamp (3), draws cost none. Max HP 100 in round 1, 100 + 25 = 125 in round 2 (D-9).

    Covers: D-6, D-9"""
    rc, out, _ = run_play("choose 0\n" + "ready\n" * 40, seed=11)
    assert rc == 0
    fights = battle_rounds(out)
    outcomes = [o for _, o in fights]
    assert [r for r, _ in fights] == list(range(1, len(fights) + 1))
    assert "WIN" not in outcomes
    assert outcomes.count("LOSS") == 3
    assert outcomes[-1] == "LOSS"
    assert "*** Run over: every lamp is out" in out
    assert f"record: 0 wins, 3 losses, {outcomes.count('DRAW')} draws" in out
    assert re.search(r"round 1\b.*\n  HP left: you [\d.]+/100 \(\d+%\), opponent [\d.]+/100 ", out)
    assert re.search(r"round 2\b.*\n  HP left: you [\d.]+/125 \(\d+%\), opponent [\d.]+/125 ", out)
    assert out.rstrip().endswith("achievements: none")
    # after the run is over, the rest of the input is not read as commands
    assert out.count("\n> ready") == len(fights)


def test_the_action_cap_forces_the_battle():
    """D-41 (a run rule): the 60th preparation action of a round (frozen `action_cap: 60`) ends
    the preparation by itself. Switching the sun core's element is such an action."""
    script = "element wind\nelement fire\n" * 30 + "element wind\n"
    rc, out, _ = run_play(script, seed=8, core="sun")
    assert rc == 0
    assert out.count("ok: set_sun_element") == 61
    assert out.count("the round's last action (60): the battle starts.") == 1
    assert [r for r, _ in battle_rounds(out)] == [1]
    # the 60th command was "element fire" (even-numbered); the battle report follows it
    sixtieth = out.split("\n> ")[60]
    assert sixtieth.startswith("element fire\nok: set_sun_element fire; the round's last")
    assert "actions 59/60 this round" in out and "actions 1/60 this round" in out


def _shopping_round() -> list[str]:
    """A fixed script for one round: take a pending choice, buy every offer, place hand slot 0 on
    each inner cell in turn (the failures just print their reason), fight."""
    return (["choose 0"] + [f"buy {i}" for i in range(5)]
            + [f"place 0 {c}" for c in INNER_CELLS] + ["ready"])


def test_scripted_run_cleared_against_empty_opponents(tmp_path):
    """Against an empty board every round with an attacking rune on ours is a win (its first hit
    lowers the opponent's HP ratio below ours; nothing hits back), else a draw. The run is
    cleared at the 10th win; reward choices come at the start of rounds 4, 7, 10...; a relic
    choice after each boss win (rounds 5, 10, ...) unless the run ended there. A fresh profile
    locks delay, node and mimic; clearing opens journeyman and earns clear_run and boss_win."""
    profile = tmp_path / "profile.json"
    script = "\n".join(_shopping_round() * 30) + "\n"
    rc, out, err = run_play(script, seed=5, core="sun", profile_path=str(profile),
                            opponents=empty_opponent)
    assert rc == 0, err
    assert out.startswith(f"Rune Circle: seed 5, rank apprentice, rules {RULES.hash}. Type "
                          f"help.\nLocked runes: delay, node, mimic (achievements unlock them).")
    fights = battle_rounds(out)
    rounds = len(fights)
    assert [r for r, _ in fights] == list(range(1, rounds + 1))
    outcomes = [o for _, o in fights]
    assert "LOSS" not in outcomes
    assert outcomes.count("WIN") == 10 and outcomes[-1] == "WIN"
    assert f"*** Run cleared with 10 wins in {rounds} rounds! ***" in out
    rewards = [r for r in range(1, rounds + 1) if r >= 4 and (r - 4) % 3 == 0]
    assert out.count("Choose a reward") == len(rewards)
    boss_wins = [r for r, o in fights if r % 5 == 0 and o == "WIN" and r < rounds]
    assert out.count("Choose a relic") == len(boss_wins)
    # the locked kinds were never offered
    for line in out.splitlines():
        if line.startswith("shop:"):
            assert not re.search(r"\b(delay|node|mimic)\b", line), line
    data = json.loads(profile.read_text())
    assert data["cleared_ranks"] == ["apprentice"]
    assert "clear_run" in data["achievements"]
    assert ("boss_win" in data["achievements"]) == any(r % 5 == 0 and o == "WIN" for r, o in fights)

    # the next rank is open now; delay (clear_run) is unlocked, node still locked
    rc, out, _ = run_play("", seed=6, rank="journeyman", profile_path=str(profile))
    assert rc == 0
    head = "\n".join(out.splitlines()[:2])
    assert head.startswith("Rune Circle: seed 6, rank journeyman")
    assert "node" in head and "delay" not in head


def test_profile_refuses_a_rank_that_is_not_open(tmp_path):
    profile = tmp_path / "fresh.json"
    rc, out, err = run_play("ready\n", seed=1, rank="journeyman", profile_path=str(profile))
    assert rc == 2
    assert "rank 'journeyman' is not open" in err and "apprentice" in err
    assert out == ""
    # without a profile every rank can be played (the research setting)
    rc, out, _ = run_play("", seed=1, rank="journeyman")
    assert rc == 0 and "rank journeyman" in out


# -- the real command line ----------------------------------------------------------------------
def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rune_env", "play", *args], input=stdin,
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def test_cli_play_subcommand(capsys):
    p = cli("--seed", "7", "--core", "moon", "--rules", str(FROZEN_RULES), stdin="show\nready\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"Rune Circle: seed 7, rank apprentice, rules {RULES.hash}. Type help.")
    assert len(battle_rounds(p.stdout)) == 1
    assert "End of input: leaving the run at round 2." in p.stdout
    # bad settings: exit status 2 and a message (in-process: a second subprocess costs ~1 s)
    from rune_env.cli import main
    assert main(["play", "--seed", "7", "--rank", "grandmaster", "--rules", str(FROZEN_RULES)]) == 2
    assert "unknown rank 'grandmaster'" in capsys.readouterr().err
