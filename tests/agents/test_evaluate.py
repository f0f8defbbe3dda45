"""Smoke tests of scripts/evaluate.py, run as the user runs it (subprocesses; the bad-input cases
call its main(argv) in this process, tests/conftest.py's `script_main`).

Not battle-rule tests (no `Covers:` ids), so the module is marked `outside_mutation_check`. The
models evaluated come from the shared tiny training run (tests/conftest.py's `smoke`); the helpers
are tests/agents/test_train_runs.py's. Needs the `train` extra; skipped without it.
"""
from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from test_train_runs import (  # noqa: E402
    EVALUATE, KINDS, REPO, accumulator, assert_one_line_error, run, script_module, steps_of)

pytestmark = pytest.mark.outside_mutation_check


# -- evaluate.py ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def evaluation(tmp_path_factory):
    """Two baselines, 3 runs each, --json, with the progress bar forced on (stderr is a pipe)."""
    out = tmp_path_factory.mktemp("eval") / "out"
    r = run(EVALUATE, "--agents", "random", "scripted", "--episodes", 3, "--json",
            "--head-to-head", "--out", out, "--progress")
    return {"result": r, "out": out}


def test_evaluate_json(evaluation):
    r = evaluation["result"]
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)          # the whole of stdout: the bar is on stderr
    assert out == json.loads((evaluation["out"] / "eval.json").read_text())   # printed = written
    assert set(out["agents"]) == {"random", "scripted"}
    for name, s in out["agents"].items():
        assert {"episodes", "battle_win_rate", "battle_ci", "mean_wins", "wins_ci", "clear_rate",
                "clear_ci", "timesteps"} <= set(s), name
        assert s["episodes"] == 3 and s["timesteps"] == 0
        for rate, ci in (("battle_win_rate", "battle_ci"), ("mean_wins", "wins_ci"),
                         ("clear_rate", "clear_ci")):
            lo, hi = s[ci]
            assert lo <= s[rate] <= hi, (name, rate)
        # 3 runs: the clear rate is k/3 and its interval wilson(k, 3)
        from agents.evaluation.runs import wilson
        k = round(s["clear_rate"] * 3)
        assert s["clear_rate"] == pytest.approx(k / 3)
        assert s["clear_ci"] == pytest.approx(list(wilson(k, 3)), rel=1e-12)
    # head to head: both seatings of the same round-matched battles, draws half, so the two
    # shares of a pair add up to 1
    h = out["head_to_head"]
    assert set(h) == {"random", "scripted"}
    assert 0.0 <= h["random"]["scripted"] <= 1.0
    assert h["random"]["scripted"] + h["scripted"]["random"] == pytest.approx(1.0, rel=1e-12)


def test_evaluate_progress_bar_is_on_stderr(evaluation):
    r = evaluation["result"]
    assert r.returncode == 0, r.stderr
    assert "/6" in r.stderr and "run" in r.stderr          # 2 agents x 3 runs
    assert "/6" not in r.stdout


def test_evaluate_matches_the_evaluation_api(evaluation):
    """The script's numbers are agents.evaluation.evaluate's on the evaluation seeds."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    from agents import make_agent
    from agents.evaluation.runs import evaluate
    from rune_env.rules import default_rules
    out = json.loads(evaluation["result"].stdout)
    res = evaluate(make_agent("scripted", default_rules(), seed=0), 3, 0,
                   {"rank": "apprentice", "opponents": None})
    for key in ("battle_win_rate", "mean_wins", "clear_rate", "battle_ci", "wins_ci", "clear_ci"):
        assert out["agents"]["scripted"][key] == pytest.approx(res[key], rel=1e-12), key


def test_evaluate_csv(evaluation):
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    out = json.loads(evaluation["result"].stdout)
    with open(evaluation["out"] / "eval.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["agent"] for row in rows] == ["random", "scripted"]
    for row in rows:
        s = out["agents"][row["agent"]]
        assert int(row["episodes"]) == 3
        # what it was played against, in every row (as eval.json's header says)
        assert (row["rank"], row["opponents"], row["rules_hash"], int(row["seed"])) == (
            out["rank"], out["opponents"], out["rules_hash"], out["seed"])
        assert float(row["battle_win_rate"]) == pytest.approx(s["battle_win_rate"], rel=1e-12)
        assert [float(row["battle_lo"]), float(row["battle_hi"])] == pytest.approx(s["battle_ci"])
        assert float(row["mean_wins"]) == pytest.approx(s["mean_wins"], rel=1e-12)
        assert [float(row["wins_lo"]), float(row["wins_hi"])] == pytest.approx(s["wins_ci"])
        assert float(row["clear_rate"]) == pytest.approx(s["clear_rate"], rel=1e-12)
        assert [float(row["clear_lo"]), float(row["clear_hi"])] == pytest.approx(s["clear_ci"])


def test_evaluate_runs_csv(evaluation):
    """runs.csv: a row per agent and run, in the agents' order, on the evaluation seeds 2^30 + i
    (eval_run_seed at seed 0), whose wins average to the table's mean wins and whose clears to
    its clear rate, so any statistic of the runs can be worked out again from the file."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    out = json.loads(evaluation["result"].stdout)
    with open(evaluation["out"] / "runs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["agent"] for r in rows] == ["random"] * 3 + ["scripted"] * 3
    for name in ("random", "scripted"):
        mine = [r for r in rows if r["agent"] == name]
        assert [int(r["run_seed"]) for r in mine] == [2**30, 2**30 + 1, 2**30 + 2]
        s = out["agents"][name]
        assert sum(int(r["wins"]) for r in mine) / 3 == pytest.approx(s["mean_wins"], rel=1e-12)
        assert sum(int(r["cleared"]) for r in mine) / 3 == pytest.approx(s["clear_rate"], rel=1e-12)
        assert all(r["rules_hash"] == out["rules_hash"] and r["seed"] == "0" for r in mine)


def test_evaluate_tensorboard_runs_have_the_same_tags(evaluation):
    """One TensorBoard sub-run per agent with the same tags, so the agents sit side by side (the
    script's docstring), but for the per-core rates: a core an agent never played has no rate
    (absent, not NaN); the baselines at step 0. Each run also has the interval bounds as scalars
    and a text saying what it was played against."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    out = json.loads(evaluation["result"].stdout)
    tb = evaluation["out"] / "tb"
    assert sorted(p.name for p in tb.iterdir()) == ["random", "scripted"]
    tags = {}
    for name in ("random", "scripted"):
        ea = accumulator(tb / name)
        tags[name] = set(ea.Tags()["scalars"])
        for key in ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived"):
            (e,) = ea.Scalars(f"eval/{key}")
            assert e.step == 0 and e.value == pytest.approx(out["agents"][name][key], rel=1e-6), (name, key)
        shares = [ea.Scalars(f"eval/kind_share/{k}")[0].value for k in KINDS]
        assert sum(shares) == pytest.approx(1.0, abs=1e-5)
        for rate, ci in (("battle_win_rate", "battle_ci"), ("mean_wins", "wins_ci"),
                         ("clear_rate", "clear_ci")):
            bounds = [ea.Scalars(f"eval/{rate}_{end}")[0].value for end in ("lo", "hi")]
            assert bounds == pytest.approx(out["agents"][name][ci], rel=1e-6), (name, rate)
        played = {c for c in out["agents"][name]["by_core"]}
        assert {t.split("/")[-1] for t in tags[name] if "_core/" in t} == played
        text = ea.Tensors("eval/played_against/text_summary")[0].tensor_proto.string_val[0].decode()
        assert f"rules_hash: {out['rules_hash']}" in text and "episodes: " in text
        assert f"opponents: {out['opponents']}" in text
    assert {"eval/battle_win_rate", "eval/mean_wins", "eval/clear_rate"} <= tags["random"]
    shared = [{t for t in tags[n] if "_core/" not in t} for n in ("random", "scripted")]
    assert shared[0] == shared[1], (
        f"only random: {sorted(shared[0] - shared[1])}; only scripted: {sorted(shared[1] - shared[0])}")


def test_evaluate_writes_board_pictures_to_tensorboard(evaluation):
    """Each agent's sub-run holds pictures of the boards its first runs ended with (3 runs here,
    so images boards/final/0..2), each the board picture's size (rune_env.pictures)."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    for name in ("random", "scripted"):
        ea = accumulator(evaluation["out"] / "tb" / name)
        tags = set(ea.Tags()["images"])
        assert {"boards/final/0", "boards/final/1", "boards/final/2"} <= tags, (name, tags)
        img = ea.Images("boards/final/0")[0]
        assert img.width > 100 and img.height > 100


def test_evaluate_logs_at_the_models_training_step(smoke, tmp_path, script_main):
    """A policy's TensorBoard points sit at its training step (a .zip's num_timesteps, the
    `timesteps` of the JSON beside a .pt); baselines at 0. A rerun replaces an agent's files
    (main(argv) in this process: what it checks is the files it leaves)."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = smoke["run_dir"]
    out = tmp_path / "out"
    r = run(EVALUATE, "--agents", "random", d / "final_model.zip", d / "final_policy.pt",
            "--episodes", 1, "--opponents", "generator", "--out", out, "--json")
    assert r.returncode == 0, r.stderr
    labels = {"random": 0, f"{d.name}/final_model": 256, f"{d.name}/final_policy": 256}
    assert {n: s["timesteps"] for n, s in json.loads(r.stdout)["agents"].items()} == labels
    for label, step in labels.items():
        ea = accumulator(out / "tb" / label.replace("/", "_"))
        assert steps_of(ea, "eval/clear_rate") == [step], label
        assert ea.Images("boards/final/0")[0].step == step
    # a rerun replaces the agent's directory: one event file, one point per tag
    r = script_main("evaluate", "--agents", "random", "--episodes", 1, "--opponents",
                    "generator", "--out", out, "--seed", 1, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "run/s" not in r.stderr and "%|" not in r.stderr
    events = list((out / "tb" / "random").glob("events.out.tfevents.*"))
    assert len(events) == 1
    assert steps_of(accumulator(out / "tb" / "random"), "eval/clear_rate") == [0]


def test_training_step_of_saved_policies(smoke, tmp_path):
    from agents.evaluation.runs import training_step
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = smoke["run_dir"]
    assert training_step(d / "final_model.zip") == 256
    assert training_step(d / "checkpoints" / "model_128_steps.zip") == 128
    assert training_step(d / "final_policy.pt") == 256
    shipped = REPO / "agents" / "models" / "apprentice_s0.pt"
    if shipped.exists():
        assert training_step(shipped) == json.loads(shipped.with_suffix(".json").read_text())["timesteps"]
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a zip")
    assert training_step(garbage) is None and training_step(tmp_path / "none.pt") is None


BAD_EVALUATE = {
    "unknown rank": (("--rank", "nonsense"), ("--rank", "apprentice", "archmage")),
    "rank out of range": (("--rank", "9"), ("--rank 9", "0 apprentice", "5 archmage")),
    "negative episodes": (("--episodes", "-1"), ("--episodes",)),
    "no episodes": (("--episodes", "0"), ("--episodes",)),
    "negative seed": (("--seed", "-1"), ("--seed",)),
    "seed not a number": (("--seed", "ten"), ("--seed",)),
    "seed too large": (("--seed", str(2**40)), ("--seed",)),
    "unknown agent": (("--agents", "randomm"), ("randomm",)),
    "torch threads": (("--torch-threads", "0"), ("--torch-threads",)),
}


@pytest.mark.parametrize("case", list(BAD_EVALUATE))
def test_evaluate_bad_input_exits_2(tmp_path, case, script_main):
    args, words = BAD_EVALUATE[case]
    base = ("--agents", "random") if "--agents" not in args else ()
    argv = (*base, "--episodes", 1, "--opponents", "generator", *args, "--out", tmp_path / "out")
    # the first case in a real process: its stderr, as the user sees it, has no traceback
    r = run(EVALUATE, *argv) if case == next(iter(BAD_EVALUATE)) else script_main("evaluate", *argv)
    assert_one_line_error(r, *words)
    assert not (tmp_path / "out").exists()


def test_evaluate_bad_model_path_exits_2(tmp_path, script_main):
    missing = tmp_path / "no_model.zip"
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"definitely not a checkpoint")
    truncated_pt = tmp_path / "policy.pt"
    truncated_pt.write_bytes(b"PK\x03\x04 not a torch file")
    for path in (missing, garbage, truncated_pt, tmp_path / "no_policy.pt"):
        # a bad model after a good agent: refused before anything is played
        r = script_main("evaluate", "--agents", "random", path, "--episodes", 1, "--opponents",
                        "generator", "--out", tmp_path / "out")
        assert_one_line_error(r, str(path))
        assert not (tmp_path / "out").exists()


def test_evaluate_rank_accepts_names_and_numbers():
    """--rank takes a name or a number 0..5, as the envs do; the output directory uses the name."""
    mod = script_module(EVALUATE, "scripts_evaluate")
    from rune_env.rules import default_rules
    rules = default_rules()
    names = [r.id for r in rules.spec.ranks]
    for i, n in enumerate(names):
        assert mod.rank_name(str(i), rules) == n and mod.rank_name(n, rules) == n
    for bad in ("nonsense", "9", "-1", str(len(names))):
        with pytest.raises(ValueError, match="the ranks are 0 apprentice"):
            mod.rank_name(bad, rules)


def test_the_shipped_pool_is_named_as_in_a_checkout_wherever_the_package_lives(monkeypatch, tmp_path):
    """The label of a rank's shipped pool is configs/opponents/<file>, also when the package (and
    its pools) is installed away from the script's checkout: it was the path relative to the
    checkout, a ValueError for a wheel's or another checkout's pools."""
    mod = script_module(EVALUATE, "scripts_evaluate")
    from rune_env.rules import default_rules
    monkeypatch.setattr(mod, "ROOT", tmp_path)          # the script elsewhere than the pools
    assert mod.opponents_label(None, default_rules(), "archmage") == "configs/opponents/archmage.json.gz"
    assert mod.opponents_label("generator", default_rules(), "archmage") == "budget drafter"


def test_evaluate_labels_model_paths(smoke):
    """A model path is an agent too, labelled <run>/<file stem> (its TensorBoard sub-run
    <run>_<stem>); baselines keep their names."""
    mod = script_module(EVALUATE, "scripts_evaluate")
    assert mod.agent_label("random") == "random" and mod.agent_label("greedy:0.2") == "greedy:0.2"
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    model = smoke["run_dir"] / "final_model.zip"
    assert mod.agent_label(str(model)) == f"{smoke['run_dir'].name}/final_model"
    from agents import make_agent
    from agents.policy import PolicyAgent
    agent = make_agent(str(model))
    assert isinstance(agent, PolicyAgent) and agent.model.num_timesteps == 256


def test_the_final_board_pictures_say_which_run_and_battle_they_show():
    """TensorBoard's boards/final/<i> pictures had a blank first line: each now names its run
    (seed, wins, losses) and the battle the board went into (round, outcome)."""
    from agents.evaluation.runs import final_boards
    from rune_env.rules import Board, default_rules
    rules = default_rules()
    board = Board.from_json({"runes": {"1:0": ["fire", 1]}, "round": 4}, rules)
    runs = [{"run_seed": 7, "wins": 3, "losses": 2, "cleared": False,
             "battles": [{"round": 4, "outcome": "loss", "board": board.to_json(rules)}]},
            {"run_seed": 8, "wins": 0, "losses": 0, "cleared": False, "battles": []}]
    (shown,) = final_boards(runs, rules)
    assert shown.label == "run 7: 3 wins, 2 losses · last battle (round 4): loss"
    assert shown.runes == board.runes and shown.round == 4


def test_the_head_to_head_table_numbers_its_columns(capsys):
    """Columns headed by names cut to 14 characters read 'models/apprent' twice; they are
    numbered as the rows, whose names are whole, and every row lines up with its columns."""
    from conftest import script_module
    evaluate_script = script_module("evaluate")
    a, b = "models/apprentice_s0_2000k", "models/apprentice_s0"
    evaluate_script.print_head_to_head({a: {a: 0.5, b: 0.6}, b: {a: 0.4, b: 0.5}})
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].split() == ["1", "2"]
    assert lines[2].split() == ["1", a, "-", "0.600"] and lines[3].split() == ["2", b, "0.400", "-"]
    assert len({len(line) for line in lines[1:]}) == 1
