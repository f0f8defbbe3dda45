"""Pools and audits as pictures (`render POOL --round R`, `sheet`), and what a board picture
shows a newcomer: a legend, cell names with --annotate, the grade a mana spring lifts a rune to.
The commands run in-process (`rune_env.cli.main`)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from rune_env import cli
from rune_env.pictures.board_image import Layout, board_svg
from rune_env.pictures.sheet import pool_round_boards, round_boards
from rune_env.rules import Board, load_rules
from rune_env.run.opponents import Pool, save_pool

pytestmark = pytest.mark.outside_mutation_check

RULES = load_rules()
A = {"core": "moon", "round": 6, "runes": {"1:0": ["fire", 1], "2:0": ["wind", 2]},
     "artifacts": {"1:0": "mana_spring"}}
B = {"core": "star", "round": 6, "runes": {"1:0": ["ice", 1], "1:3": ["earth", 1]}}


@pytest.fixture
def pool_file(tmp_path):
    """Round 6: A drafted 3 times by greedy, B once by a policy; round 7: B."""
    pool = Pool(rules_hash=RULES.hash, rank="mentor", provenance={"source": "test"}, rounds={
        6: [{"board": B, "agent": "p.pt", "count": 1, "round": 6},
            {"board": A, "agent": "greedy", "count": 3, "round": 6}],
        7: [{"board": dict(B, round=7), "agent": "p.pt", "count": 1, "round": 7}]})
    path = tmp_path / "pool.json.gz"
    save_pool(pool, path, compact=True)
    return path


def test_board_picture_has_a_legend_cell_names_and_the_lifted_grade():
    """The fire I on 1:0 stands on a mana spring: its power is of grade II, so the picture
    writes "I>II"; --annotate names the cells ("1:0"); the legend names every kind."""
    board = Board.from_json(A, RULES, source="A")
    plain, annotated = board_svg(board, RULES), board_svg(board, RULES, annotate=True)
    assert 'class="legend"' in plain and "I&gt;II" in plain
    assert all(f">{kind}<" in plain for kind in RULES.kinds)
    assert ">1:0<" in annotated and ">1:0<" not in plain
    # the replay page draws its boards without the legend (it has its own): shorter by LEGEND
    assert Layout.of(RULES.radius, legend=False).height < Layout.of(RULES.radius).height


def test_a_metagame_pool_is_labelled_as_the_metagame(tmp_path):
    """A metagame's pool (source metagame) has a rank field only because the format has one:
    its boards were labelled "apprentice round 6 #0: metagame x334"; now "metagame round 6 #0:
    x750" (heaviest first: 750 of its 1000 counts)."""
    pool = Pool(rules_hash=RULES.hash, rank=RULES.spec.ranks[0].id,
                provenance={"source": "metagame"}, rounds={
                    6: [{"board": B, "agent": "metagame", "count": 250, "round": 6},
                        {"board": A, "agent": "metagame", "count": 750, "round": 6}]})
    path = tmp_path / "meta.json.gz"
    save_pool(pool, path, compact=True)
    assert [b.label for b in pool_round_boards(path, RULES, 6)] == [
        "metagame round 6 #0: x750", "metagame round 6 #1: x250"]


def test_pool_boards_most_drafted_first(pool_file):
    boards = pool_round_boards(pool_file, RULES, 6)
    assert [b.label for b in boards] == ["mentor round 6 #0: greedy x3",
                                         "mentor round 6 #1: p.pt x1"]
    assert boards[0].board.runes == Board.from_json(A, RULES, source="A").runes


def test_render_a_pool_ghost_and_its_errors(pool_file, tmp_path, capsys):
    out = tmp_path / "g.png"
    assert cli.main(["render", str(pool_file), "--round", "6", "--index", "1",
                     "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}: mentor round 6 #1: p.pt x1\n"
    assert Image.open(out).size == (Layout.of(RULES.radius).width,
                                    Layout.of(RULES.radius).height)
    for argv, message in [
            (["--round", "9"], "has no boards of round 9 (rounds: 6, 7)"),
            (["--round", "6", "--index", "2"], "--index 2: round 6 of"),
            ([], "a pool file: name the round with --round R")]:
        assert cli.main(["render", str(pool_file), "-o", str(out), *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_sheet_of_a_pool_and_of_an_audit(pool_file, tmp_path, capsys):
    """Two boards in round 6: one row of two tiles under a 34-px title."""
    out = tmp_path / "s.png"
    assert cli.main(["sheet", str(pool_file), "--round", "6", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}: 2 boards of round 6\n"
    lay = Layout.of(RULES.radius)
    assert Image.open(out).size == (2 * lay.width, 34 + lay.height)
    audit = {"rounds": {"6": {"families": {
        "one_rune": {"board": B, "win_rate": 0.25, "fast_kill_rate": 0.0, "cost": 4},
        "fast_kill": {"board": A, "win_rate": 1.0, "fast_kill_rate": 0.9, "cost": 10}}}}}
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(audit), encoding="utf-8")
    what, boards = round_boards(path, RULES, 6)
    assert what == "audit" and [b.label for b in boards] == [
        "one_rune: win 25%, fast kills 0%, cost 4", "fast_kill: win 100%, fast kills 90%, cost 10"]
    assert cli.main(["sheet", str(path), "--round", "6", "-o", str(out), "--max", "1"]) == 0
    assert "1 board of round 6 (the first 1 of 2)" in capsys.readouterr().out
    assert cli.main(["sheet", str(path), "--round", "6", "-o", str(tmp_path / "s.svg")]) == 2
    with pytest.raises(SystemExit) as exit_:       # argparse's own check: one line, status 2
        cli.main(["sheet", str(path), "--round", "6", "-o", str(out), "--max", "0"])
    assert exit_.value.code == 2 and "--max: expected 1..120, got 0" in capsys.readouterr().err


def test_sheet_of_the_metagame_json(tmp_path, capsys):
    """scripts/metagame.py --json: a list of rounds, each with its mixture; the sheet draws a
    round's mixture heaviest first, labelled with weights and costs. One tile: the title wraps
    onto more lines, so the sheet is taller than one title line over the tile."""
    meta = {"rules_hash": RULES.hash, "settings": {}, "pool": None, "rounds": [
        {"round": 3, "mixture": [{"weight": 0.25, "cost": 4, "board": B},
                                 {"weight": 0.75, "cost": 10, "board": A}]},
        {"round": 6, "mixture": [{"weight": 1.0, "cost": 9, "board": B}]}]}
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    what, boards = round_boards(path, RULES, 3)
    assert what == "metagame" and [b.label for b in boards] == [
        "round 3 mixture #0: weight 75.0%, cost 10", "round 3 mixture #1: weight 25.0%, cost 4"]
    out = tmp_path / "meta.png"
    assert cli.main(["sheet", str(path), "--round", "6", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}: 1 board of round 6\n"
    lay = Layout.of(RULES.radius)
    width, height = Image.open(out).size
    assert width == lay.width and height > 34 + lay.height
    assert cli.main(["sheet", str(path), "--round", "9", "-o", str(out)]) == 2
    assert "the metagame has no boards of round 9 (rounds: 3, 6)" in capsys.readouterr().err
    path.write_text(json.dumps({"rounds": [{"round": 3}]}), encoding="utf-8")
    assert cli.main(["sheet", str(path), "--round", "3", "-o", str(out)]) == 2
    assert "nor the metagame's (scripts/metagame.py --json)" in capsys.readouterr().err
    # a metagame of other rules: drawn, with the warning a pool of other rules gets
    path.write_text(json.dumps({**meta, "rules_hash": "0123456789abcdef"}), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"meta.json: the metagame was made under rules "
                                         r"0123456789abcdef, the current rules are "):
        assert round_boards(path, RULES, 3)[0] == "metagame"
    # JSON within the project's bounds: 200,000 brackets deep was a RecursionError
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert cli.main(["sheet", str(path), "--round", "3", "-o", str(out)]) == 2
    assert "JSON nested 200000 deep" in capsys.readouterr().err


def test_a_sheet_that_fails_midway_leaves_the_old_file(pool_file, tmp_path, monkeypatch, capsys):
    """The picture is written whole or not at all: a save that writes half and fails (a full
    disk) leaves the file that was there, and no temp file beside it."""
    out = tmp_path / "s.png"
    out.write_bytes(b"the old picture")

    def half_then_fail(self, fp, *args, **kwargs):
        if isinstance(fp, (str, Path)):
            Path(fp).write_bytes(b"half")
        else:
            fp.write(b"half")
        raise OSError("No space left on device")

    monkeypatch.setattr(Image.Image, "save", half_then_fail)
    assert cli.main(["sheet", str(pool_file), "--round", "6", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "No space left" in err and err.count("\n") == 1
    assert out.read_bytes() == b"the old picture"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_battle_explain_and_replay_take_a_pool_ghost(pool_file, tmp_path, capsys):
    """POOL@ROUND[:INDEX] names ghost INDEX of a round (most drafted first, 0 by default), the
    board `render POOL --round R --index I` draws: a designer replays "my board against ghost
    #1 of round 6" without extracting it (the replay said "unknown key 'format'")."""
    from rune_env.pictures.sheet import pool_round_boards
    ghosts = pool_round_boards(pool_file, RULES, 6)
    assert cli.board_arg(f"{pool_file}@6", RULES) == ghosts[0].board
    assert cli.board_arg(f"{pool_file}@6:1", RULES) == ghosts[1].board
    board = tmp_path / "a.json"
    board.write_text(json.dumps(A), encoding="utf-8")
    assert cli.main(["battle", str(board), f"{pool_file}@6:1"]) == 0
    fought = json.loads(capsys.readouterr().out)
    assert cli.main(["battle", str(board), str(tmp_path / "b1.json")]) == 2   # (no such file)
    capsys.readouterr()
    (tmp_path / "b1.json").write_text(json.dumps(ghosts[1].board.to_json(RULES)), encoding="utf-8")
    assert cli.main(["battle", str(board), str(tmp_path / "b1.json")]) == 0
    assert json.loads(capsys.readouterr().out) == fought
    assert cli.main(["replay", str(board), f"{pool_file}@6", "-o", str(tmp_path / "r.html")]) == 0
    assert cli.main(["explain", f"{pool_file}@6:5"]) == 2
    assert "index 5: round 6 of" in capsys.readouterr().err
    # a pool given as a board says how to name a ghost (it said "unknown key 'format'"), and a
    # malformed ghost name says its form (it said "no such file")
    assert cli.main(["battle", str(pool_file), str(board)]) == 2
    assert f"{pool_file}: a pool file: name one of its ghosts as {pool_file}@ROUND[:INDEX]" in \
        capsys.readouterr().err
    for bad in ("@-1", "@6:", "@abc", "@6:1:2", "@\u0663"):
        assert cli.main(["explain", f"{pool_file}{bad}"]) == 2
        assert "a pool's ghost is POOL@ROUND or POOL@ROUND:INDEX" in capsys.readouterr().err


def test_the_replay_names_a_pools_ghost_by_its_round_and_index():
    """`replay POOL@15 B.json` titled side 0 "sage.json" (the path's stem); it names the ghost."""
    from rune_env.cli import _board_name
    assert _board_name("configs/opponents/sage.json.gz@15") == "sage@15"
    assert _board_name("configs/opponents/sage.json.gz@15:2") == "sage@15:2"
    assert _board_name("configs/boards/sun_firestorm.json") == "sun_firestorm"
