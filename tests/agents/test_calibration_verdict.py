"""calibrate_ranks.py's verdict (`agents.evaluation.grading`) on hand-made tables, and its
--pool RANK=FILE, in-process."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from agents.evaluation.runs import grading

REPO = Path(__file__).resolve().parents[2]


def _rank(rate, lo, hi, clear):
    return {"pool_win_rate": rate, "pool_ci": [lo, hi], "clear_rate": clear}


def test_graded_when_rates_fall_with_intervals_apart_and_clears_never_rise():
    """0.84 [0.82, 0.86] > 0.62 [0.60, 0.64] > 0.47 [0.45, 0.49]: each upper bound below the
    lower bound before it; clears 0.66, 0.19, 0.19 (equal is not a rise)."""
    table = {"apprentice": _rank(0.84, 0.82, 0.86, 0.66),
             "journeyman": _rank(0.62, 0.60, 0.64, 0.19),
             "sorcerer": _rank(0.47, 0.45, 0.49, 0.19)}
    assert grading(table) == []


def test_the_pairs_that_overlap_or_rise_are_named():
    """journeyman [0.60, 0.64] and sorcerer [0.58, 0.62] overlap (0.62 >= 0.60); mentor's rate is
    above sorcerer's; the clear rate rises from sorcerer 0.05 to mentor 0.07."""
    table = {"journeyman": _rank(0.62, 0.60, 0.64, 0.19),
             "sorcerer": _rank(0.60, 0.58, 0.62, 0.05),
             "mentor": _rank(0.61, 0.59, 0.63, 0.07)}
    assert grading(table) == [
        "journeyman and sorcerer overlap: [0.600, 0.640] and [0.580, 0.620]",
        "mentor's pool win rate 0.610 is not below sorcerer's 0.600",
        "the clear rate rises from sorcerer (0.050) to mentor (0.070)"]


@pytest.mark.outside_mutation_check
def test_script_takes_one_pool_per_rank_and_prints_the_verdict(capsys):
    spec = importlib.util.spec_from_file_location("calibrate", REPO / "scripts" / "calibrate_ranks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    pools = REPO / "configs" / "opponents"
    argv = ["--agent", "greedy", "--episodes", "2", "--no-progress", "--json",
            "--pool", f"apprentice={pools / 'apprentice.json.gz'}",
            "--pool", f"archmage={pools / 'archmage.json.gz'}"]
    assert mod.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["ranks"]) == ["apprentice", "archmage"]
    assert isinstance(out["graded"], bool) and out["graded"] == (not out["problems"])
    assert mod.main(["--agent", "greedy", "--pool", "apprentice"]) == 2
    assert "expected RANK=FILE" in capsys.readouterr().err


@pytest.mark.outside_mutation_check
def test_one_rank_is_no_verdict_and_a_short_pool_of_another_rank_is_said(tmp_path, capsys):
    """A pool of journeyman's with rounds 1-2 only, measured as apprentice's: the JSON's verdict
    is null (one rank), and stderr says both things a designer would otherwise miss. Apprentice
    runs: 10 wins to clear + 3 lamps - 1 = rounds 1-12 without draws, so 3-12 are drafter's."""
    from rune_env.run.opponents import Pool, load_pool, save_pool
    from rune_env.rules import default_rules
    spec = importlib.util.spec_from_file_location("calibrate", REPO / "scripts" / "calibrate_ranks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    shipped = load_pool(REPO / "configs" / "opponents" / "journeyman.json.gz", default_rules())
    short = tmp_path / "short.json"
    save_pool(Pool(shipped.rules_hash, "journeyman", {r: shipped.rounds[r] for r in (1, 2)}),
              short)
    assert mod.main(["--agent", "greedy", "--episodes", "2", "--no-progress", "--json",
                     "--pool", f"apprentice={short}"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["graded"] is None
    assert captured.err.splitlines() == [
        f"warning: {short}: a pool drafted for rank journeyman, fielded for apprentice",
        f"warning: {short}: no ghosts of rounds 3-12, which apprentice's runs reach without "
        f"draws (1-12): there they meet the budget drafter"]


def testround_ranges_are_written_as_spans():
    from agents.cli.args import round_ranges
    assert round_ranges([1, 2, 3, 5, 7, 8]) == "1-3, 5, 7-8"
    assert round_ranges([4]) == "4"
