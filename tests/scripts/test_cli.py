"""The command line: `python -m rune_env battle|explain`, its JSON, and how it refuses bad input.

The tests run the real CLI in a subprocess (`python -m rune_env ...`) on files in tmp_path, but
the bad-input cases, which call its main(argv) in this process (tests/conftest.py's `cli_main`;
the first bad board still runs as a real process, its stderr without a traceback).
Battle values are worked out by hand from the FROZEN rules (tests/data/rules.yaml, passed with
--rules) so retuning configs/rules/default.yaml never breaks them.

These tests check the interface, not the rules' numbers (they always read the frozen file, never
RUNE_TEST_RULES), and each subprocess costs ~0.4 s, so the module is marked
`outside_mutation_check`; CI runs it.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import FROZEN_RULES

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
BATTLE_KEYS = {"winner", "time", "hp", "max_hp", "casts"}


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rune_env", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def write_board(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def write_rules(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def frozen_data() -> dict:
    return yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))


@pytest.fixture
def fire_and_empty(tmp_path):
    """A grade-I fire in 1:0 (side 0) and an empty board (side 1)."""
    fire = write_board(tmp_path, "fire.json", {"runes": {"1:0": ["fire", 1]}})
    empty = write_board(tmp_path, "empty.json", {"runes": {}})
    return fire, empty


def parse_one_object(stdout: str) -> dict:
    """stdout must be exactly one JSON object on one line."""
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, stdout
    out = json.loads(lines[0])
    assert isinstance(out, dict)
    return out


# -- battle ------------------------------------------------------------------------------------

def test_battle_prints_one_json_object(fire_and_empty):
    """Covers: D-6, rune:fire"""
    fire, empty = fire_and_empty
    r = cli("battle", fire, empty, "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    out = parse_one_object(r.stdout)
    assert set(out) == BATTLE_KEYS
    # Fire grade I ring 1: 6 per turn; turns at 0.5, 1.0, ... s; the empty side has no elemental
    # runes (affinity x1); overdrive only after 20 s. 16 x 6 = 96 < 100, 17 x 6 = 102 >= 100:
    # down on the 17th turn at t = 17 x 0.5 = 8.5 s. hp clamped at 0; max HP round 1 = 100.
    assert out["winner"] == 0
    assert out["time"] == pytest.approx(8.5, rel=1e-12)
    assert out["hp"] == [100.0, 0.0]
    assert out["max_hp"] == [100.0, 100.0]
    assert out["casts"] == [17, 0]


def test_battle_board_a_is_side_0(fire_and_empty):
    """Covers: D-6"""
    fire, empty = fire_and_empty
    r = cli("battle", empty, fire, "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    out = parse_one_object(r.stdout)
    # The same battle seen from the other seat: side 1 wins at 8.5 s with 17 casts.
    assert out["winner"] == 1
    assert out["time"] == pytest.approx(8.5, rel=1e-12)
    assert out["hp"] == [0.0, 100.0]
    assert out["casts"] == [0, 17]


def test_battle_with_default_rules_has_the_documented_shape(tmp_path):
    """Without --rules the CLI reads configs/rules/default.yaml (numbers may be retuned, so only
    the shape is checked). A timeout gives time 60 and winner null when nobody casts."""
    a = write_board(tmp_path, "a.json", {"runes": {"1:0": ["fire", 1], "2:0": ["wind", 2]}})
    b = write_board(tmp_path, "b.json", {"runes": {"1:3": ["water", 1]}, "round": 2})
    r = cli("battle", a, b)
    assert r.returncode == 0, r.stderr
    out = parse_one_object(r.stdout)
    assert set(out) == BATTLE_KEYS
    assert out["winner"] in (0, 1, None)
    assert isinstance(out["time"], (int, float)) and 0 < out["time"] <= 60
    for key in ("hp", "max_hp", "casts"):
        assert isinstance(out[key], list) and len(out[key]) == 2
    assert all(h >= 0 for h in out["hp"])
    assert all(isinstance(n, int) for n in out["casts"])


def test_battle_trace_events(fire_and_empty):
    """Covers: D-6"""
    fire, empty = fire_and_empty
    r = cli("battle", fire, empty, "--trace", "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    out = parse_one_object(r.stdout)
    assert set(out) == BATTLE_KEYS | {"events"}
    events = out["events"]
    assert events, "a traced battle has events"
    for ev in events:
        assert {"t", "type", "side", "cell", "hp", "barrier"} <= set(ev), ev
        assert len(ev["hp"]) == 2 and len(ev["barrier"]) == 2
        assert ev["barrier"] == [0.0, 0.0]      # nobody gains barrier in this battle
    casts = [ev for ev in events if ev["type"] == "cast"]
    hits = [ev for ev in events if ev["type"] == "hit"]
    # 17 casts of the fire in 1:0 at t = 0.5 n s, each one hit of 6 on side 1.
    assert [ev["t"] for ev in casts] == pytest.approx([0.5 * n for n in range(1, 18)], rel=1e-12)
    assert {(ev["side"], ev["cell"]) for ev in casts} == {(0, "1:0")}
    assert all(ev["value"] == pytest.approx(6.0, rel=1e-12) for ev in casts)
    assert len(hits) == 17 and {ev["side"] for ev in hits} == {1}
    # HP after the n-th hit: 100 - 6 n (n = 1..16, before the knockout).
    for n, ev in enumerate(hits[:16], start=1):
        assert ev["hp"] == pytest.approx([100.0, 100.0 - 6.0 * n], rel=1e-12)
    assert events[-1]["type"] == "hit" and events[-1]["t"] == pytest.approx(8.5, rel=1e-12)


def test_battle_without_trace_has_no_events(fire_and_empty):
    fire, empty = fire_and_empty
    out = parse_one_object(cli("battle", fire, empty, "--rules", FROZEN_RULES).stdout)
    assert "events" not in out


def test_rules_file_is_honoured(tmp_path, fire_and_empty):
    """Covers: rune:fire"""
    fire, empty = fire_and_empty
    data = frozen_data()
    data["runes"]["fire"]["damage"] = 10
    rules = write_rules(tmp_path, "fire10.yaml", data)
    out = parse_one_object(cli("battle", fire, empty, "--rules", rules).stdout)
    # Fire now 10 per turn: 10 turns x 10 = 100 -> HP 0 <= 1e-9 on the 10th turn, t = 5.0 s.
    assert out["winner"] == 0
    assert out["time"] == pytest.approx(5.0, rel=1e-12)
    assert out["casts"] == [10, 0]

    data = frozen_data()
    data["battle"]["base_hp"] = 130
    rules = write_rules(tmp_path, "hp130.yaml", data)
    out = parse_one_object(cli("battle", fire, empty, "--rules", rules).stdout)
    # 130 HP: 21 x 6 = 126 < 130, 22 x 6 = 132 -> down at 22 x 0.5 = 11.0 s.
    assert out["max_hp"] == [130.0, 130.0]
    assert out["time"] == pytest.approx(11.0, rel=1e-12)
    assert out["casts"] == [22, 0]


# -- explain -----------------------------------------------------------------------------------

@pytest.fixture
def explain_boards(tmp_path):
    a = write_board(tmp_path, "a.json", {"runes": {"1:0": ["fire", 2], "2:0": ["wind", 1],
                                                   "2:1": ["amplify", 1]}})
    b = write_board(tmp_path, "b.json", {"runes": {"1:0": ["ice", 1]}})
    return a, b


def test_explain_json(explain_boards):
    """Covers: D-12, D-26, flow:firestorm, affinity:fire>ice, affinity:ice>wind"""
    a, b = explain_boards
    r = cli("explain", a, "--against", b, "--json", "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    cells = report["cells"]
    assert set(cells) == {"1:0", "2:0", "2:1"}
    for entry in cells.values():
        assert {"kind", "grade", "power", "multipliers"} <= set(entry)
    fire, wind, amp = cells["1:0"], cells["2:0"], cells["2:1"]
    # Fire II in ring 1: 6 x 1.8 (grade II) x 1 (ring 1) = 10.8. The opponent is all ice, which
    # fire beats: affinity clamp(1 + 0.6 x (1 - 0), 0.6, 1.4) = 1.4 (per hit, not in power).
    # The amplify in 2:1 is outward of 1:0, not inward: it does not reach the fire.
    assert (fire["kind"], fire["grade"]) == ("fire", 2)
    assert fire["power"] == pytest.approx(10.8, rel=1e-12)
    assert fire["multipliers"]["grade"] == pytest.approx(1.8, rel=1e-12)
    assert fire["multipliers"]["ring"] == pytest.approx(1.0, rel=1e-12)
    assert fire["multipliers"]["affinity"] == pytest.approx(1.4, rel=1e-12)
    # Wind I in ring 2 fed by the fire in 1:0 (firestorm x2): 3 x 1 x 1.25 x 2 = 7.5. Ice beats
    # wind: clamp(1 + 0.6 x (0 - 1), 0.6, 1.4) = 0.6.
    assert (wind["kind"], wind["grade"]) == ("wind", 1)
    assert wind["power"] == pytest.approx(7.5, rel=1e-12)
    assert wind["multipliers"]["ring"] == pytest.approx(1.25, rel=1e-12)
    assert wind["multipliers"]["flow:firestorm"] == pytest.approx(2.0, rel=1e-12)
    assert wind["multipliers"]["affinity"] == pytest.approx(0.6, rel=1e-12)
    # A support has no power.
    assert (amp["kind"], amp["grade"], amp["power"]) == ("amplify", 1, None)


def test_explain_table(explain_boards):
    a, b = explain_boards
    r = cli("explain", a, "--against", b, "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert "cell" in lines[0] and "power" in lines[0]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["1:0"].split()[1] == "fire" and "10.800" in rows["1:0"]   # 6 x 1.8
    assert rows["2:0"].split()[1] == "wind" and "7.500" in rows["2:0"]    # 3 x 1.25 x 2
    assert rows["2:1"].split()[1] == "amplify"


def test_explain_without_against_has_no_affinity(explain_boards):
    a, _ = explain_boards
    r = cli("explain", a, "--json", "--rules", FROZEN_RULES)
    assert r.returncode == 0, r.stderr
    cells = json.loads(r.stdout)["cells"]
    assert "affinity" not in cells["1:0"]["multipliers"]
    assert cells["1:0"]["power"] == pytest.approx(10.8, rel=1e-12)


# -- bad input -----------------------------------------------------------------------------------

def assert_refused(r: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2, nothing on stdout, ONE line on stderr naming the problem, no traceback."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == ""
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.endswith("\n") and r.stderr.count("\n") == 1, f"not one line: {r.stderr!r}"
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)
    return r.stderr


GOOD = {"runes": {"1:0": ["fire", 1]}}

BAD_BOARDS = {
    # name: (board file text or JSON data, substrings the one-line message must contain)
    "rune on the core": ({"runes": {"0:0": ["fire", 1]}}, ["0:0", "core"]),
    "closed ring-3 cell": ({"runes": {"3:0": ["fire", 1]}}, ["3:0", "not open"]),
    "closed sector with another open": ({"runes": {"3:4": ["fire", 1]}, "open_sectors": [0]},
                                        ["3:4", "sector 1"]),
    "unknown kind": ({"runes": {"1:0": ["lava", 1]}}, ["1:0", "lava"]),
    "grade 0": ({"runes": {"1:0": ["fire", 0]}}, ["1:0", "grade"]),
    "grade 4": ({"runes": {"1:0": ["fire", 4]}}, ["1:0", "grade"]),
    "grade not a whole number": ({"runes": {"1:0": ["fire", "2"]}}, ["1:0", "grade"]),
    "cell 9:9": ({"runes": {"9:9": ["fire", 1]}}, ["9:9"]),
    "cell 1:6": ({"runes": {"1:6": ["fire", 1]}}, ["1:6"]),
    "cell x": ({"runes": {"x": ["fire", 1]}}, ["'x'"]),
    "rune not a pair": ({"runes": {"1:0": "fire"}}, ["1:0", "[kind, grade]"]),
    "bad JSON": ('{"runes": {"1:0": ["fire", 1]', ["not valid JSON"]),
    "empty file": ("", ["not valid JSON"]),
    "not an object": ("[1, 2]", ["JSON object"]),
    "missing runes": ({"core": "moon"}, ["runes", "missing"]),
    "unknown key": ({"runes": {}, "colour": "red"}, ["'colour'"]),
    "unknown core": ({"runes": {}, "core": "comet"}, ["core", "comet"]),
    "sun without element": ({"runes": {}, "core": "sun"}, ["sun_element"]),
    "unknown relic": ({"runes": {}, "relics": ["crown"]}, ["relics", "unknown relic 'crown'"]),
    "unknown boss rule": ({"runes": {}, "boss_rules": ["huge"]},
                          ["boss_rules", "unknown boss rule 'huge'"]),
    "unknown artifact": ({"runes": {}, "artifacts": {"1:0": "wand"}}, ["1:0", "wand"]),
    "artifact on the core": ({"runes": {}, "artifacts": {"0:0": "ward_stone"}}, ["0:0", "core"]),
    "bad round": ({"runes": {}, "round": 0}, ["round"]),
    "bad max_hp": ({"runes": {}, "max_hp": -5}, ["max_hp"]),
}


@pytest.mark.parametrize("case", list(BAD_BOARDS), ids=list(BAD_BOARDS))
def test_bad_board_is_refused(tmp_path, case, cli_main):
    data, needles = BAD_BOARDS[case]
    bad = write_board(tmp_path, "bad.json", data)
    good = write_board(tmp_path, "good.json", GOOD)
    run = cli if case == next(iter(BAD_BOARDS)) else cli_main     # the first in a real process
    msg = assert_refused(run("battle", good, bad, "--rules", FROZEN_RULES), *needles)
    assert str(bad) in msg          # the message names the file too


def test_bad_board_refused_by_explain_too(tmp_path, cli_main):
    bad = write_board(tmp_path, "bad.json", {"runes": {"1:0": ["fire", 4]}})
    good = write_board(tmp_path, "good.json", GOOD)
    assert_refused(cli_main("explain", bad, "--rules", FROZEN_RULES), "1:0", "grade")
    assert_refused(cli_main("explain", good, "--against", bad, "--rules", FROZEN_RULES), "1:0",
                   "grade")


def test_board_path_that_is_not_a_file(tmp_path, cli_main):
    good = write_board(tmp_path, "good.json", GOOD)
    assert_refused(cli_main("battle", tmp_path, good, "--rules", FROZEN_RULES), str(tmp_path),
                   "cannot read")
    missing = tmp_path / "nope.json"
    assert_refused(cli_main("battle", good, missing, "--rules", FROZEN_RULES), "nope.json",
                   "cannot read")


def test_board_file_not_utf8_is_refused(tmp_path, cli_main):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'\xff\xfe{"runes": {}}')
    good = write_board(tmp_path, "good.json", GOOD)
    assert_refused(cli_main("battle", bad, good, "--rules", FROZEN_RULES), "bad.json")


def _unknown_key(d):
    d["battle"]["colour"] = 1


def _missing_key(d):
    del d["battle"]["base_hp"]


def _wrong_type(d):
    d["battle"]["base_hp"] = "lots"


def _negative_price(d):
    d["runes"]["fire"]["price"] = -1


def _unknown_flow_rune(d):
    d["flows"][0]["to"] = "lava"


def _unknown_rune_kind_key(d):
    d["runes"]["lava"] = {"price": 2, "damage": 6, "hits": 1}


BAD_RULES = {
    "unknown key": (_unknown_key, ["battle.colour"]),
    "missing key": (_missing_key, ["battle.base_hp"]),
    "wrong type": (_wrong_type, ["battle.base_hp"]),
    "negative price": (_negative_price, ["runes.fire.price"]),
    "unknown rune in a flow": (_unknown_flow_rune, ["flows[0].to", "lava"]),
    "unknown rune kind": (_unknown_rune_kind_key, ["runes.lava"]),
}


@pytest.mark.parametrize("case", list(BAD_RULES), ids=list(BAD_RULES))
def test_bad_rules_file_is_refused(tmp_path, fire_and_empty, case, cli_main):
    mutate, needles = BAD_RULES[case]
    data = frozen_data()
    mutate(data)
    rules = write_rules(tmp_path, "bad.yaml", data)
    fire, empty = fire_and_empty
    assert_refused(cli_main("battle", fire, empty, "--rules", rules), *needles)
    assert_refused(cli_main("explain", fire, "--rules", rules), *needles)


@pytest.mark.parametrize("text", ["battle: [1, 2\n  x: :\n", "battle:\n\tbase_hp: 1\n"],
                         ids=["unclosed flow", "tab indent"])
def test_bad_yaml_is_refused_in_one_line(tmp_path, fire_and_empty, text, cli_main):
    rules = write_rules(tmp_path, "bad.yaml", text)
    fire, empty = fire_and_empty
    assert_refused(cli_main("battle", fire, empty, "--rules", rules), "bad.yaml", "YAML")


def test_rules_file_not_a_mapping_or_not_a_file(tmp_path, fire_and_empty, cli_main):
    fire, empty = fire_and_empty
    rules = write_rules(tmp_path, "list.yaml", "- 1\n- 2\n")
    assert_refused(cli_main("battle", fire, empty, "--rules", rules), "list.yaml", "mapping")
    assert_refused(cli_main("battle", fire, empty, "--rules", tmp_path / "nope.yaml"), "nope.yaml",
                   "cannot read")
    assert_refused(cli_main("battle", fire, empty, "--rules", tmp_path), str(tmp_path),
                   "cannot read")



def test_rules_file_not_utf8_is_refused(tmp_path, fire_and_empty, cli_main):
    rules = tmp_path / "bad.yaml"
    rules.write_bytes(b"battle:\n  base_hp: \xff\xfe\n")
    fire, empty = fire_and_empty
    assert_refused(cli_main("battle", fire, empty, "--rules", rules), "bad.yaml")


# -- bad option values, output files, broken pipes, help texts ---------------------------------

def assert_one_line_error(r: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit status 2, one line `error: ...` on stderr, no traceback, nothing on stdout."""
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("error: "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    for f in fragments:
        assert f in r.stderr, (f, r.stderr)


def test_a_seed_out_of_range_is_one_line_error(cli_main):
    """Seeds are 0..2**32-1, as every script has them (a 20-digit seed was taken and shown)."""
    assert_one_line_error(cli_main("play", "--seed", "-5"), "--seed", "-5", "0..2**32-1")
    assert_one_line_error(cli_main("play", "--seed", "five"), "--seed", "'five'")
    assert_one_line_error(cli_main("play", "--seed", str(2**32)), "--seed", str(2**32))
    assert_one_line_error(cli_main("battle", "--seed", "99999999999999999999", "a", "b"),
                          "--seed", "0..2**32-1")


def test_outputs_into_a_missing_directory_or_of_the_wrong_kind(tmp_path, fire_and_empty, cli_main):
    fire, empty = fire_and_empty
    missing = tmp_path / "no" / "such"
    r = cli_main("render", fire, "-o", missing / "b.png", "--rules", FROZEN_RULES)
    assert_one_line_error(r, "does not exist", str(missing))
    r = cli_main("replay", fire, empty, "-o", missing / "r.html", "--rules", FROZEN_RULES)
    assert_one_line_error(r, "does not exist", str(missing))
    # the replay is an HTML page: a .png name is refused before any work
    r = cli_main("replay", fire, empty, "-o", tmp_path / "r.png", "--rules", FROZEN_RULES)
    assert_one_line_error(r, "r.png", "HTML", ".html")
    assert not (tmp_path / "r.png").exists()
    # a directory where the file should go
    (tmp_path / "dir.svg").mkdir()
    r = cli_main("render", fire, "-o", tmp_path / "dir.svg", "--rules", FROZEN_RULES)
    assert_one_line_error(r, "is a directory")


def test_output_closed_early_exits_quietly(explain_boards):
    """`explain ... --json | head -1`: the reader closes the pipe before the output is written
    (here: at once, while the command is still starting). No traceback, nothing on stderr;
    the status is 1 (Python's documented convention for a broken pipe)."""
    a, _ = explain_boards
    p = subprocess.Popen([sys.executable, "-m", "rune_env", "explain", str(a), "--json",
                          "--rules", str(FROZEN_RULES)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1
    assert err == ""
    # and through a real shell pipe, as a user types it
    r = subprocess.run(f"{sys.executable} -m rune_env explain {a} --json --rules {FROZEN_RULES}"
                       " | head -1", shell=True, capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.stdout.strip() == "{" and r.stderr == ""


def test_every_option_has_a_help_text_with_its_default():
    from rune_env.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert set(sub.choices) == {"battle", "explain", "play", "render", "replay", "rules", "sheet"}
    for name, p in sub.choices.items():
        text = p.format_help()
        for action in p._actions:
            if action.dest == "help":
                continue
            assert action.help, (name, action.dest)
            if action.option_strings:
                assert "default" in action.help, (name, action.option_strings, action.help)
                assert action.option_strings[-1] in text
        assert "(default" in text
