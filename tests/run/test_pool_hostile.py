"""Hostile pool files: each is refused when loaded, as one line naming the file and the entry
(`load_pool`'s PoolError), never a TypeError, IndexError or ValueError at first use, and the
commands that read pools (`python -m rune_env render|sheet`) say it in one `error:` line with
status 2. Every shipped pool still loads.
"""
from __future__ import annotations

import copy
import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from agents.search.goal import Goals
from rune_env import cli
from rune_env.pictures.sheet import LabelledBoard, contact_sheet, round_boards
from rune_env.rules import BoardError, default_rules
from rune_env.run.opponents import MAX_GHOST_TEXT, Pool, PoolError, load_pool

REPO = Path(__file__).resolve().parents[2]
RULES = default_rules()
SHIPPED = sorted([*(REPO / "configs" / "opponents").rglob("*.json.gz"),
                  *(REPO / "configs" / "meta").glob("*.json.gz")])


def _shipped_json() -> dict:
    with gzip.open(REPO / "configs" / "opponents" / "apprentice.json.gz", "rt",
                   encoding="utf-8") as fh:
        return json.load(fh)


SOURCE = _shipped_json()


def pool_json() -> dict:
    """A small valid pool of the current rules: two ghosts of round 1, one of round 2 (from the
    shipped apprentice pool)."""
    return {"format": "rune-env-pool", "version": 1, "rules_hash": RULES.hash,
            "rank": "apprentice", "provenance": {"source": "test"},
            "rounds": {"1": copy.deepcopy(SOURCE["rounds"]["1"][:2]),
                       "2": copy.deepcopy(SOURCE["rounds"]["2"][:1])}}


def write(path: Path, data: dict) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(data, fh)
    return path


def refused(path: Path) -> str:
    """load_pool's message for `path`, checked to be one line naming the file."""
    with pytest.raises(PoolError) as info:
        load_pool(path, RULES)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    assert len(message) < 400, message
    return message


def test_the_small_pool_loads(tmp_path):
    pool = load_pool(write(tmp_path / "ok.json.gz", pool_json()), RULES)
    assert sorted(pool.rounds) == [1, 2] and len(pool.rounds[1]) == 2
    assert all(isinstance(g["agent"], str) for g in pool.rounds[1])


@pytest.mark.parametrize("field,value,expected", [
    ("agent", ["greedy"], "rounds['1'][0].agent: expected text of at most 4096 characters "
                          "(or null), got a JSON list of 1 item"),
    ("agent", {"name": "greedy"}, "rounds['1'][0].agent: expected text of at most 4096 "
                                  "characters (or null), got a JSON object of 1 item"),
    ("agent", 7, "rounds['1'][0].agent: expected text of at most 4096 characters (or null), "
                 "got 7"),
    ("agent", True, "rounds['1'][0].agent: expected text"),
    ("agent", "g" * (MAX_GHOST_TEXT + 1), "got text of 4097 characters starting 'ggg"),
    ("rank", 3, "rounds['1'][0].rank: expected text"),
    ("rank", ["apprentice"], "rounds['1'][0].rank: expected text"),
    ("seed", -1, "rounds['1'][0].seed: expected a whole number in 0..9223372036854775807 "
                 "(or null), got -1"),
    ("seed", "3", "rounds['1'][0].seed: expected a whole number in 0..9223372036854775807 "
                  "(or null), got '3'"),
    ("seed", 1.5, "rounds['1'][0].seed: expected a whole number"),
    ("seed", False, "rounds['1'][0].seed: expected a whole number"),
    ("seed", [1], "got a JSON list of 1 item"),
    ("seed", 10**30, "got a number of 31 digits"),
    ("round", 1.0, "rounds['1'][0].round: expected a whole number in 1..9223372036854775807 "
                   "(the round it is filed under), got 1.0"),
    ("round", True, "rounds['1'][0].round: expected a whole number"),
    ("round", None, "rounds['1'][0].round: expected a whole number"),
    ("round", "1", "rounds['1'][0].round: expected a whole number"),
    ("count", [2], "rounds['1'][0].count: expected a whole number in 1..2147483647"),
])
def test_a_ghost_field_of_another_type_is_refused(tmp_path, field, value, expected):
    data = pool_json()
    data["rounds"]["1"][0][field] = value
    message = refused(write(tmp_path / "p.json.gz", data))
    assert expected in message


@pytest.mark.parametrize("field", ["agent", "rank", "seed"])
def test_optional_ghost_fields_may_be_null_or_absent(tmp_path, field):
    data = pool_json()
    data["rounds"]["1"][0][field] = None
    data["rounds"]["1"][1].pop(field)
    pool = load_pool(write(tmp_path / "p.json.gz", data), RULES)
    assert pool.rounds[1][0][field] is None and field not in pool.rounds[1][1]


def test_a_ghost_of_another_round_is_still_named(tmp_path):
    data = pool_json()
    data["rounds"]["1"][0]["round"] = 2
    assert "a ghost of round 2 filed under round 1" in refused(write(tmp_path / "p.json.gz", data))


def test_an_empty_round_is_refused_naming_it(tmp_path):
    data = pool_json()
    data["rounds"]["3"] = []
    message = refused(write(tmp_path / "p.json.gz", data))
    assert message.endswith("rounds['3']: no ghosts (a round the pool has none of is left out "
                            "of \"rounds\")")
    data["rounds"] = {"1": []}
    assert "rounds['1']: no ghosts" in refused(write(tmp_path / "q.json.gz", data))


def test_every_shipped_pool_still_loads():
    assert len(SHIPPED) >= 19
    for path in SHIPPED:
        with warnings.catch_warnings():     # the archived pools are of earlier rules
            warnings.simplefilter("ignore", UserWarning)
            pool = load_pool(path, RULES)
        assert pool.rounds and all(pool.rounds.values()), path
        assert all(isinstance(g.get("agent"), str) for gs in pool.rounds.values() for g in gs)


# -- the commands that read pools -----------------------------------------------------------------
def run_cli(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def truncated_gzip(tmp_path: Path) -> Path:
    good = write(tmp_path / "whole.json.gz", pool_json()).read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(good[: len(good) // 2])
    return path


@pytest.mark.parametrize("command", ["render", "sheet"])
@pytest.mark.parametrize("make,expected", [
    (truncated_gzip, "cut.json.gz: "),
    (lambda tmp: write(tmp / "agent.json.gz", {**pool_json(), "rounds": {
        "1": [{**SOURCE["rounds"]["1"][0], "agent": 5}]}}), "rounds['1'][0].agent: expected text"),
    (lambda tmp: write(tmp / "empty.json.gz", {**pool_json(), "rounds": {"1": []}}),
     "rounds['1']: no ghosts"),
    (lambda tmp: tmp / "missing.json.gz", "missing.json.gz"),
])
def test_render_and_sheet_say_a_bad_pool_in_one_line(tmp_path, capsys, command, make, expected):
    path = make(tmp_path)
    out = tmp_path / "x.png"
    status, stdout, err = run_cli(capsys, command, path, "--round", 1, "-o", out)
    assert status == 2, err
    assert stdout == "" and err.startswith(f"error: {path}: ") and err.count("\n") == 1, err
    assert expected in err and "Traceback" not in err
    assert not out.exists()


def test_render_and_sheet_still_draw_a_good_pool(tmp_path, capsys):
    path = write(tmp_path / "ok.json.gz", pool_json())
    status, stdout, err = run_cli(capsys, "sheet", path, "--round", 1, "-o", tmp_path / "s.png")
    assert status == 0 and "2 boards of round 1" in stdout, err
    status, stdout, err = run_cli(capsys, "render", path, "--round", 2, "-o", tmp_path / "r.png")
    assert status == 0 and (tmp_path / "r.png").stat().st_size > 0, err


def test_a_sheet_of_an_audit_or_metagame_round_with_no_boards_is_one_line(tmp_path, capsys):
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"rounds": {"1": {"families": {}}}}), encoding="utf-8")
    with pytest.raises(BoardError, match=r"audit\.json: round 1 has no boards"):
        round_boards(audit, RULES, 1)
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"rounds": [{"round": 1, "mixture": []}]}), encoding="utf-8")
    status, _, err = run_cli(capsys, "sheet", meta, "--round", 1, "-o", tmp_path / "m.png")
    assert status == 2 and err == f"error: {meta}: round 1 has no boards\n"
    with pytest.raises(ValueError, match="one board or more"):
        contact_sheet([], RULES, "nothing")
    assert LabelledBoard     # the type a sheet draws


def test_goals_skip_a_round_without_boards_of_a_pool_built_in_memory(tmp_path):
    """`load_pool` refuses an empty round; a Pool made in memory may still hold one, and the
    planner's goals then draw from the rounds that have boards (no ValueError from rng.choice)."""
    loaded = load_pool(write(tmp_path / "ok.json.gz", pool_json()), RULES)
    pool = Pool(RULES.hash, "apprentice", {1: [], 2: loaded.rounds[2]})
    goals = Goals(RULES, pool, lead=0)
    assert goals.rounds == [2]
    goal, round_ = goals.pick(1, None, None, np.random.default_rng(0))
    assert round_ == 2 and goal is not None
    assert Goals(RULES, Pool(RULES.hash, "apprentice", {1: []}), lead=0).pick(
        1, None, None, np.random.default_rng(0)) is None


@pytest.mark.parametrize("data,expected", [
    ({"rounds": {"1": {"families": {"f": {"board": {}}}}}},
     "not an audit's JSON: round 1 lacks 'win_rate'"),
    ({"rounds": {"1": {"families": ["f"]}}},
     "not an audit's JSON: round 1: 'list' object has no attribute 'items'"),
    ({"rounds": [{"round": 1, "mixture": [{"board": {}, "weight": "x"}]}]},
     "round 1's mixture: each entry a weight 0..1 and a cost, as numbers"),
])
def test_a_sheet_of_a_broken_audit_or_metagame_is_one_line(tmp_path, capsys, data, expected):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "x.png"
    status, stdout, err = run_cli(capsys, "sheet", path, "--round", 1, "-o", out)
    assert status == 2 and stdout == "" and err == f"error: {path}: {expected}\n"
    assert not out.exists()


@pytest.mark.parametrize("rank,shown", [(["apprentice"], "a JSON list of 1 item"), (3, "3"),
                                        (None, "None")])
def test_a_pool_rank_that_is_not_text_is_refused(tmp_path, rank, shown):
    data = {**pool_json(), "rank": rank}
    assert refused(write(tmp_path / "p.json.gz", data)).endswith(
        f"\"rank\": expected text of at most {MAX_GHOST_TEXT} characters (the rank's name), "
        f"got {shown}")
