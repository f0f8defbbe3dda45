"""The benchmark's normalized score (agents/evaluation/normalize.py) and scripts/evaluate.py's
--normalize: (agent - floor) / (top - floor) of mean wins, with a paired bootstrap interval over
the run seeds, in the table, eval.csv, eval.json, TensorBoard and a chart.

Not battle-rule tests (no `Covers:` ids), so the module is marked `outside_mutation_check`."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from agents.evaluation.normalize import format_score, normalized_scores

pytestmark = pytest.mark.outside_mutation_check


def test_score_is_where_the_mean_sits_between_floor_and_top():
    # floor mean 0, top mean (2+4+2+4)/4 = 3, agent mean (1+2+1+2)/4 = 1.5: 1.5 / 3 = 0.5. The
    # agent's wins are half the top's on every run, so every resample (the same run indices for
    # all three) has the ratio 0.5 too: the interval is [0.5, 0.5]
    out = normalized_scores({"random": [0, 0, 0, 0], "planner": [2, 4, 2, 4],
                             "agent": [1, 2, 1, 2]}, "random", "planner", seed=0)
    assert out["agent"]["score"] == pytest.approx(0.5)
    assert out["agent"]["ci"] == pytest.approx([0.5, 0.5])
    assert out["random"]["score"] == 0.0 and out["planner"]["score"] == pytest.approx(1.0)
    # beyond the top: agent mean 4.5 -> 1.5; below the floor: floor mean 1, agent 0 -> -1 / 2
    out = normalized_scores({"random": [1, 1], "planner": [3, 3], "a": [0, 0], "b": [5, 5]},
                            "random", "planner", seed=0)
    assert out["a"]["score"] == pytest.approx(-0.5) and out["b"]["score"] == pytest.approx(2.0)


def test_interval_is_a_paired_bootstrap_and_is_reproducible():
    rng = np.random.default_rng(7)
    wins = {"random": rng.integers(0, 2, 60).tolist(), "planner": rng.integers(4, 10, 60).tolist(),
            "agent": rng.integers(1, 8, 60).tolist()}
    a = normalized_scores(wins, "random", "planner", seed=3)
    assert a == normalized_scores(wins, "random", "planner", seed=3)      # bit for bit
    lo, hi = a["agent"]["ci"]
    assert lo < a["agent"]["score"] < hi
    # by hand for the point: means of the three lists
    m = {k: float(np.mean(v)) for k, v in wins.items()}
    assert a["agent"]["score"] == pytest.approx((m["agent"] - m["random"]) / (m["planner"] - m["random"]))
    # more runs of the same kind, a narrower interval (60 -> 240 runs: about half as wide)
    wide = hi - lo
    more = {k: v * 4 for k, v in wins.items()}
    lo4, hi4 = normalized_scores(more, "random", "planner", seed=3)["agent"]["ci"]
    assert hi4 - lo4 < 0.7 * wide


def test_no_score_where_the_top_does_not_beat_the_floor():
    out = normalized_scores({"random": [1, 2], "planner": [1, 2], "a": [3, 3]}, "random",
                            "planner", seed=0)
    assert out["a"] == {"score": None, "ci": [None, None]} and format_score(out["a"]) == "-"
    # the top beats the floor on one run of four: its mean is above (a score), but a resample
    # misses that run with probability (3/4)^4 = 0.32 > 2.5%: no bounds
    out = normalized_scores({"random": [0, 0, 0, 0], "planner": [4, 0, 0, 0], "a": [2, 0, 0, 0]},
                            "random", "planner", seed=0)
    assert out["a"]["score"] == pytest.approx(0.5) and out["a"]["ci"] == [None, None]
    assert format_score(out["a"]) == "0.50 [-, -]"


def test_bad_input():
    with pytest.raises(ValueError, match="'planner' among the agents"):
        normalized_scores({"random": [0]}, "random", "planner", seed=0)
    with pytest.raises(ValueError, match="same run seeds"):
        normalized_scores({"random": [0, 1], "planner": [3], "a": [1, 1]}, "random", "planner", 0)


# -- scripts/evaluate.py --normalize -----------------------------------------------------------
def test_evaluate_normalize_writes_the_score_everywhere(tmp_path, script_main):
    pytest.importorskip("tensorboard")
    from test_train_runs import accumulator
    out = tmp_path / "out"
    # greedy as the top (cheap), random added as the floor since --agents does not name it
    r = script_main("evaluate", "--agents", "scripted", "--normalize", "greedy", "--episodes", 4,
                    "--opponents", "generator", "--out", out, "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert list(data["agents"]) == ["scripted", "random", "greedy"]
    norm = data["normalized"]
    assert norm["floor"] == "random" and norm["top"] == "greedy" and norm["of"] == "mean_wins"
    m = {k: v["mean_wins"] for k, v in data["agents"].items()}
    assert m["greedy"] > m["random"]       # greedy wins more than random over 4 runs here
    expected = (m["scripted"] - m["random"]) / (m["greedy"] - m["random"])
    assert norm["scores"]["scripted"]["score"] == pytest.approx(expected)
    assert norm["scores"]["greedy"]["score"] == pytest.approx(1.0)
    # the CPU time an action took: greedy searches its shop (about 0.6 ms), random draws one
    # legal action (about 0.01 ms)
    ms = data["timing"]["ms_per_action"]
    assert ms["greedy"] > 5 * ms["random"] > 0
    rows = {row["agent"]: row for row in csv.DictReader(open(out / "eval.csv"))}
    assert float(rows["scripted"]["normalized"]) == pytest.approx(expected)
    assert (out / "normalized.png").stat().st_size > 1000
    ea = accumulator(out / "tb" / "scripted")
    (e,) = ea.Scalars("eval/normalized_wins")
    assert e.value == pytest.approx(expected, rel=1e-6)
    assert "eval/normalized_chart" in accumulator(out / "tb" / "normalized").Tags()["images"]


@pytest.mark.parametrize("top, words", [("random", ("--normalize random", "floor")),
                                        ("plannerr", ("plannerr",))])
def test_evaluate_normalize_bad_top_exits_2(tmp_path, script_main, top, words):
    from test_train_runs import assert_one_line_error
    r = script_main("evaluate", "--agents", "scripted", "--normalize", top, "--episodes", 1,
                    "--opponents", "generator", "--out", tmp_path / "out")
    assert_one_line_error(r, *words)
    assert not (tmp_path / "out").exists()


# -- scripts/benchmark_table.py ------------------------------------------------------------------
def test_benchmark_table_puts_the_ranks_side_by_side(tmp_path, script_main):
    """Two ranks in two processes, greedy as the top: the table has a row per agent (random and
    the top added), each rank's numbers are its own evaluate.py's, and TensorBoard has one curve
    per agent over the ranks (step = the rank's number)."""
    pytest.importorskip("tensorboard")
    from test_train_runs import accumulator
    out = tmp_path / "bench"
    r = script_main("benchmark_table", "--agents", "scripted", "--top", "greedy", "--ranks",
                    "apprentice", "5", "--episodes", 3, "--at", "archmage=2", "--jobs", 2,
                    "--out", out, "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data == json.loads((out / "benchmark.json").read_text())
    assert list(data["ranks"]) == ["apprentice", "archmage"]
    assert data["episodes"] == {"apprentice": 3, "archmage": 2}
    for rank, runs in data["episodes"].items():
        e = data["ranks"][rank]
        assert e == json.loads((out / rank / "eval.json").read_text())
        assert list(e["agents"]) == ["scripted", "random", "greedy"]
        assert all(s["episodes"] == runs for s in e["agents"].values())
        assert e["normalized"]["top"] == "greedy" and e["rank"] == rank
    rows = list(csv.DictReader(open(out / "benchmark.csv")))
    assert len(rows) == 6 and {row["rank"] for row in rows} == {"apprentice", "archmage"}
    assert (out / "normalized.png").stat().st_size > 1000
    ea = accumulator(out / "tb" / "scripted")
    steps = [e.step for e in ea.Scalars("benchmark/mean_wins")]
    assert steps == [0, 5]            # apprentice is rank 0, archmage rank 5
    assert [e.value for e in ea.Scalars("benchmark/mean_wins")] == pytest.approx(
        [data["ranks"][r]["agents"]["scripted"]["mean_wins"] for r in ("apprentice", "archmage")])
    # printed: a row per agent and rank, each header ending where its column's figures end; the
    # markdown (a cell of three figures a rank) goes to benchmark.md
    from conftest import script_module
    bench = script_module("benchmark_table")
    lines = bench.terminal_table(data["ranks"], ["apprentice", "archmage"]).splitlines()
    assert len(lines) == 1 + 3 * 2 and lines[1].startswith("scripted") and lines[2].startswith(" ")
    head = lines[0]
    for title in ("normalized [95%]", "mean wins [95%]", "clear rate"):
        end = head.index(title) + len(title)
        assert all(line[end - 1] != " " and (len(line) == end or line[end] == " ")
                   for line in lines[1:]), title
    md = (out / "benchmark.md").read_text()
    assert md.endswith(bench.markdown(data["ranks"], ["apprentice", "archmage"]) + "\n")
    # headed by what was played (it had no rules hash, seed or runs)
    assert md.startswith("Normalized mean wins [95%] (random = 0, ") and \
        f"seed {data['seed']}, rules {data['rules_hash']}, runs apprentice " in md.splitlines()[0]


@pytest.mark.parametrize("args, words", [
    (("--ranks", "nonsense"), ("--ranks", "nonsense", "unknown rank")),
    (("--ranks", "apprentice", "--at", "archmage=5"), ("--at", "not among --ranks")),
    (("--at", "archmage=0"), ("--at", "1..")),
    (("--at", "archmage=\u0663"), ("--at", "1..")),     # an Arabic-Indic 3: not ASCII
    (("--at", "archmage=5", "archmage=6"), ("--at", "archmage is given twice")),
    (("--agents", "scriptedd"), ("scriptedd",)),
    (("--top", "random"), ("--top random", "floor")),
])
def test_benchmark_table_bad_input_exits_2(tmp_path, script_main, args, words):
    from test_train_runs import assert_one_line_error
    base = ("--agents", "scripted") if "--agents" not in args else ()
    r = script_main("benchmark_table", *base, "--episodes", 1, *args, "--out", tmp_path / "out")
    assert_one_line_error(r, *words)
    assert not (tmp_path / "out").exists()


def test_the_chart_marks_a_score_without_an_interval_and_keeps_its_title_whole():
    """A score whose interval has no bound ('-' in the table: the top's mean wins too near the
    floor's) was a blue bar like a certain one; it is grey and says "no interval". The long
    title (rules hash at its end) wraps instead of running off the picture."""
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    from agents.evaluation.normalize import normalized_figure
    scores = {"scripted": {"score": 1.0, "ci": [None, None]},
              "greedy": {"score": 0.6, "ci": [0.4, 0.8]}}
    title = ("normalized mean wins at archmage (floor random, top planner; 4 runs, seed 0, "
             "rules 184758c7a8528bca)")
    (ax,) = normalized_figure("archmage", list(scores), scores, title).axes
    colours = [to_hex(bar.get_facecolor()) for bar in ax.patches]
    assert colours == ["#bbbbbb", "#4c72b0"]
    assert [t.get_text().strip() for t in ax.texts if "interval" in t.get_text()] == ["no interval"]
    assert ax.get_title().replace("\n", " ") == title and "\n" in ax.get_title()
