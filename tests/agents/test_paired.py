"""Paired differences between the agents of one evaluation (agents/evaluation/paired.py) and
scripts/evaluate.py's --paired: a - b of battle win rate, mean wins and clear rate, each with a
paired bootstrap interval over the run seeds, in the table, eval.json and paired.csv.

Not battle-rule tests (no `Covers:` ids), so the module is marked `outside_mutation_check`."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from agents.evaluation.paired import format_paired, paired_differences

pytestmark = pytest.mark.outside_mutation_check


def run(seed, outcomes, cleared=False):
    """A run as `evaluate` returns it: its seed, its battles ("w" won, "l" lost), wins, clear."""
    return {"run_seed": seed,
            "battles": [{"outcome": {"w": "win", "l": "loss"}[o]} for o in outcomes],
            "wins": outcomes.count("w"), "cleared": cleared}


def test_differences_by_hand_and_a_constant_gap_has_a_point_interval():
    # run 10: a W L, b L; run 11: a W W L, b W L. Battle win rate: a 3/5 = 0.6, b 1/3; mean
    # wins a 1.5, b 0.5, a gap of 1 on each run, so 1 in every resample: the interval is [1, 1];
    # clear rates 0 and 0
    runs = {"a": [run(10, "wl"), run(11, "wwl")], "b": [run(10, "l"), run(11, "wl")]}
    (pair,) = paired_differences(runs, seed=0)
    assert (pair["a"], pair["b"]) == ("a", "b")
    assert pair["battle_win_rate"]["difference"] == pytest.approx(0.6 - 1 / 3)
    assert pair["mean_wins"]["difference"] == pytest.approx(1.0)
    assert pair["mean_wins"]["ci"] == pytest.approx([1.0, 1.0])
    assert pair["clear_rate"] == {"difference": 0.0, "ci": [0.0, 0.0], "apart": False}
    # two runs are too few to call any difference apart (MIN_APART_RUNS, 10): a bootstrap of
    # so few says little of the spread (of one run, its interval was the point, starred)
    assert not pair["mean_wins"]["apart"]
    ten = {"a": [run(i, "wl") for i in range(10)], "b": [run(i, "l") for i in range(10)]}
    (pair,) = paired_differences(ten, seed=0)
    assert pair["mean_wins"]["ci"] == pytest.approx([1.0, 1.0]) and pair["mean_wins"]["apart"]


def test_pairing_separates_what_the_agents_own_intervals_do_not():
    # 200 runs whose wins vary a lot from seed to seed (0..4), the same for both agents, and b
    # one win behind on a fifth of them: a's mean wins 0.2 above b's. Unpaired, the spread of
    # the seeds (sd about 1.4, so a 95% half-width of about 0.2 each) makes the two agents'
    # intervals overlap; paired, the seeds' spread cancels and the gap is apart from 0
    rng = np.random.default_rng(5)
    base = rng.integers(0, 5, 200)
    behind = np.arange(200) % 5 == 0
    a = [{"run_seed": i, "battles": [], "wins": int(w), "cleared": False}
         for i, w in enumerate(base + 1)]
    b = [{"run_seed": i, "battles": [], "wins": int(w), "cleared": False}
         for i, w in enumerate(base + 1 - behind)]
    (pair,) = paired_differences({"a": a, "b": b}, seed=1)
    assert pair["mean_wins"]["difference"] == pytest.approx(0.2)
    lo, hi = pair["mean_wins"]["ci"]
    assert 0 < lo < 0.2 < hi and pair["mean_wins"]["apart"]
    # each agent's own normal interval: half-width 1.96 sd / sqrt(200), overlapping
    half = 1.96 * np.std(base, ddof=1) / np.sqrt(200)
    assert np.mean(base + 1) - half < np.mean(base + 1 - behind) + half
    # the same runs, the same intervals, bit for bit; another seed, other resamples
    assert paired_differences({"a": a, "b": b}, seed=1) == [pair]
    assert paired_differences({"a": a, "b": b}, seed=2)[0]["mean_wins"]["ci"] != [lo, hi]


def test_every_pair_in_order_and_the_table():
    # x loses its one battle in each of 10 runs, y and z win theirs: x - y is -1 win a run on
    # every run (interval [-1, -1], apart), y - z 0 on every run (not apart)
    runs = {"x": [run(i, "l") for i in range(10)], "y": [run(i, "w") for i in range(10)],
            "z": [run(i, "w") for i in range(10)]}
    pairs = paired_differences(runs, seed=0)
    assert [(p["a"], p["b"]) for p in pairs] == [("x", "y"), ("x", "z"), ("y", "z")]
    table = format_paired(pairs, 10)
    assert "over the 10 run seeds; * apart from 0" in table
    assert "x - y" in table and "-1.00 [-1.00, -1.00]*" in table
    assert "y - z" in table and "+0.00 [+0.00, +0.00] " in table
    # with 3 runs the table says no difference is called apart, and stars none
    few = paired_differences({k: v[:3] for k, v in runs.items()}, seed=0)
    table = format_paired(few, 3)
    assert "no * with fewer than 10 runs" in table and "*" not in table.split("\n", 2)[2]
    assert paired_differences({"x": runs["x"]}, seed=0) == []


def test_agents_on_other_run_seeds_are_refused():
    with pytest.raises(ValueError, match="b: its run seeds are not a's"):
        paired_differences({"a": [run(1, "w")], "b": [run(2, "w")]}, seed=0)
    with pytest.raises(ValueError, match="at least one run"):
        paired_differences({"a": [], "b": []}, seed=0)


def test_evaluate_paired_writes_the_pairs_everywhere(tmp_path, script_main):
    out = tmp_path / "out"
    r = script_main("evaluate", "--agents", "random", "greedy", "--paired", "--episodes", 6,
                    "--opponents", "generator", "--out", out, "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    (pair,) = data["paired"]["pairs"]
    m = {k: v["mean_wins"] for k, v in data["agents"].items()}
    assert (pair["a"], pair["b"]) == ("random", "greedy")
    assert pair["mean_wins"]["difference"] == pytest.approx(m["random"] - m["greedy"])
    assert pair["clear_rate"]["difference"] == pytest.approx(
        data["agents"]["random"]["clear_rate"] - data["agents"]["greedy"]["clear_rate"])
    rows = list(csv.DictReader(open(out / "paired.csv")))
    assert [row["measure"] for row in rows] == ["battle_win_rate", "mean_wins", "clear_rate"]
    assert float(rows[1]["difference"]) == pytest.approx(pair["mean_wins"]["difference"])
    assert json.loads((out / "eval.json").read_text())["paired"] == data["paired"]
    # the printed table
    r = script_main("evaluate", "--agents", "random", "greedy", "--paired", "--episodes", 2,
                    "--opponents", "generator", "--out", tmp_path / "out2", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "paired differences (first - second" in r.stdout and "random - greedy" in r.stdout
