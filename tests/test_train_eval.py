"""Smoke tests of scripts/train.py and scripts/evaluate.py, run as the user runs them (subprocesses).

Not battle-rule tests (no `Covers:` ids), so the module is marked `slow`: a plain `pytest` runs it,
the mutation check (`-m "not slow"`) skips it. One tiny training run (a copy of
configs/train/quick.yaml with 64-step rollouts, 256 timesteps, a 16x16 net, one final evaluation
run) is shared by the training tests; resume tests work on copies of its run directory. Needs the
`train` extra (torch, stable-baselines3, sb3-contrib, tensorboard); skipped without it.
"""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TRAIN = REPO / "scripts" / "train.py"
EVALUATE = REPO / "scripts" / "evaluate.py"
QUICK = REPO / "configs" / "train" / "quick.yaml"
CORES = ("sun", "star", "moon", "eclipse", "tree")

GAME_SCALARS = ("game/battle_win_rate", "game/battle_duration", "game/wins_per_run",
                "game/clear_rate", "game/rounds_survived", "game/lamps_left")
SB3_SCALARS = ("rollout/ep_rew_mean", "rollout/ep_len_mean", "time/fps", "train/loss",
               "train/entropy_loss", "train/value_loss")


def run(script: Path, *args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def tiny_config(path: Path, **changes) -> Path:
    """A copy of the quick config, shrunk: 2 envs x 64-step rollouts = 128 timesteps a rollout."""
    cfg = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    cfg["name"] = "smoke"
    cfg["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    cfg["policy_kwargs"] = {"net_arch": [16, 16]}
    cfg.update(total_timesteps=256, checkpoint_every=128, metrics_every=128, final_eval_episodes=1)
    for key, value in changes.items():
        cfg[key] = value
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def accumulator(path: Path) -> EventAccumulator:
    ea = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0})
    ea.Reload()
    return ea


def steps_of(ea: EventAccumulator, tag: str) -> list[int]:
    return [e.step for e in ea.Scalars(tag)]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The shared training run: --seed 1, so the run is named smoke_s1."""
    base = tmp_path_factory.mktemp("train")
    config = tiny_config(base / "tiny.yaml")
    runs = base / "runs"
    r = run(TRAIN, "--config", config, "--seed", 1, "--runs-dir", runs)
    return {"result": r, "config": config, "runs": runs, "run_dir": runs / "smoke_s1"}


def copy_run(smoke, tmp_path) -> Path:
    """A copy of the smoke run under a fresh runs dir (same run name), for tests that change it."""
    runs = tmp_path / "runs"
    shutil.copytree(smoke["run_dir"], runs / "smoke_s1")
    return runs


# -- train.py ----------------------------------------------------------------------------------------
def test_train_writes_its_run_directory(smoke):
    r = smoke["result"]
    assert r.returncode == 0, r.stderr
    d = smoke["run_dir"]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert Path(summary["run_dir"]) == d and summary["timesteps"] == 256
    # the resolved config: the file's values, the --seed override, and the defaults merged in
    cfg = yaml.safe_load((d / "config.yaml").read_text(encoding="utf-8"))
    assert cfg["seed"] == 1 and cfg["total_timesteps"] == 256 and cfg["name"] == "smoke"
    assert cfg["ppo"]["n_steps"] == 64 and cfg["ppo"]["gamma"] == 0.99
    assert cfg["env_kwargs"] == yaml.safe_load(QUICK.read_text(encoding="utf-8"))["env_kwargs"]
    assert set(cfg["eval"]) == {"every", "episodes", "seed"}
    # TensorBoard: one run directory with an event file
    assert [p.name for p in (d / "tb").iterdir()] == ["run_1"]
    assert list((d / "tb" / "run_1").glob("events.out.tfevents.*"))
    # checkpoints every 128 timesteps: 128 // 2 envs = every 64 vector steps = at 128 and 256
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == \
        ["model_128_steps.zip", "model_256_steps.zip"]
    # the final model loads, and knows how far it trained
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256
    # the final evaluation: final_eval_episodes = 1 run on an evaluation seed
    ev = json.loads((d / "eval.json").read_text(encoding="utf-8"))
    assert ev["timesteps"] == 256 and ev["episodes"] == 1 and ev["train_seconds"] > 0
    for key in ("battle_win_rate", "battle_ci", "mean_wins", "wins_ci", "clear_rate", "clear_ci",
                "rounds_survived", "lamps_left", "by_core"):
        assert key in ev, key
    assert "runs" not in ev
    assert 0.0 <= ev["battle_win_rate"] <= 1.0
    assert ev["clear_ci"][0] <= ev["clear_rate"] <= ev["clear_ci"][1]


def test_train_tensorboard_has_the_game_tags(smoke):
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    ea = accumulator(smoke["run_dir"] / "tb" / "run_1")
    scalars = set(ea.Tags()["scalars"])
    missing = [t for t in GAME_SCALARS + SB3_SCALARS if t not in scalars]
    assert not missing, f"missing tags {missing}; have {sorted(scalars)}"
    per_core = [t for t in scalars if t.startswith("game/clear_rate_core/")]
    assert per_core and {t.rsplit("/", 1)[1] for t in per_core} <= set(CORES), per_core
    # metrics_every = 128 = one rollout: game scalars logged at the two rollouts' ends
    assert steps_of(ea, "game/battle_win_rate") == [128, 256]
    for tag in ("game/battle_win_rate", "game/clear_rate", *per_core):
        assert all(0.0 <= e.value <= 1.0 for e in ea.Scalars(tag)), tag
    assert all(e.value > 0 for e in ea.Scalars("game/battle_duration"))
    # the histogram of rune kinds on the boards that fought: indices into the 13 kinds
    assert "game/board_kinds" in ea.Tags()["histograms"]
    hist = ea.Histograms("game/board_kinds")
    assert hist and all(h.histogram_value.num > 0 for h in hist)
    assert all(0 <= h.histogram_value.min and h.histogram_value.max <= 12 for h in hist)


def test_train_resume_continues_the_run(smoke, tmp_path):
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    runs = copy_run(smoke, tmp_path)
    d = runs / "smoke_s1"
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", runs, "--resume",
            "--total-timesteps", 512)
    assert r.returncode == 0, r.stderr
    assert "model_256_steps.zip" in r.stdout and "256 steps" in r.stdout
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert Path(summary["run_dir"]) == d and summary["timesteps"] == 512
    # 256 more timesteps: checkpoints at 384 and 512 join the old ones, in the same run dir
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == \
        ["model_128_steps.zip", "model_256_steps.zip", "model_384_steps.zip", "model_512_steps.zip"]
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 512
    assert json.loads((d / "eval.json").read_text())["timesteps"] == 512
    # TensorBoard continues the same run (run_1), with steps past the resume point
    assert [p.name for p in (d / "tb").iterdir()] == ["run_1"]
    ea = accumulator(d / "tb" / "run_1")
    assert steps_of(ea, "rollout/ep_len_mean")[-1] == 512
    assert max(steps_of(ea, "game/battle_win_rate")) > 256


def test_train_resume_without_a_checkpoint_exits_2(smoke, tmp_path):
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    # nothing to resume at all
    r = run(TRAIN, "--config", smoke["config"], "--run-name", "never_ran", "--runs-dir",
            tmp_path / "empty_runs", "--resume")
    assert r.returncode == 2
    assert "never_ran" in r.stderr and "Traceback" not in r.stderr
    # a run directory whose checkpoints are gone
    runs = copy_run(smoke, tmp_path)
    shutil.rmtree(runs / "smoke_s1" / "checkpoints")
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", runs, "--resume")
    assert r.returncode == 2
    assert "checkpoint" in r.stderr and "Traceback" not in r.stderr


def test_train_resume_from_a_corrupt_checkpoint_exits_2(smoke, tmp_path):
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    runs = copy_run(smoke, tmp_path)
    latest = runs / "smoke_s1" / "checkpoints" / "model_256_steps.zip"
    latest.write_bytes(latest.read_bytes()[:1000])        # truncated
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", runs, "--resume")
    assert r.returncode == 2
    assert str(latest) in r.stderr and "Traceback" not in r.stderr


def test_train_refuses_an_existing_run_dir(smoke):
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    before = (smoke["run_dir"] / "config.yaml").read_text()
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", smoke["runs"])
    assert r.returncode == 2
    assert "--resume" in r.stderr and str(smoke["run_dir"]) in r.stderr
    assert (smoke["run_dir"] / "config.yaml").read_text() == before     # left alone


def test_train_unknown_config_key_exits_2(tmp_path):
    config = tiny_config(tmp_path / "typo.yaml", learning_rate=0.001)   # belongs under ppo:
    r = run(TRAIN, "--config", config, "--runs-dir", tmp_path / "runs")
    assert r.returncode == 2
    assert "learning_rate" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()               # refused before creating anything


def test_train_bad_masking_exits_2(tmp_path):
    config = tiny_config(tmp_path / "masking.yaml", masking="quick")    # fast | sb3
    r = run(TRAIN, "--config", config, "--runs-dir", tmp_path / "runs")
    assert r.returncode == 2
    assert "masking must be one of" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("section,key", [("ppo", "n_stepz"), ("eval", "evry")])
def test_train_unknown_nested_config_key_exits_2(tmp_path, section, key):
    """A typo inside a section is an unknown key too: it must not crash (ppo) or be ignored
    silently (eval: the periodic evaluation would just not run)."""
    cfg = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    cfg[section][key] = 64
    cfg.update(total_timesteps=128, final_eval_episodes=0)
    cfg["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    config = tmp_path / "typo.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    r = run(TRAIN, "--config", config, "--runs-dir", tmp_path / "runs")
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert key in r.stderr and "Traceback" not in r.stderr


# -- evaluate.py ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def evaluation(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval") / "out"
    r = run(EVALUATE, "--agents", "random", "scripted", "--episodes", 3, "--json",
            "--head-to-head", "--out", out)
    return {"result": r, "out": out}


def test_evaluate_json(evaluation):
    r = evaluation["result"]
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out == json.loads((evaluation["out"] / "eval.json").read_text())   # printed = written
    assert set(out["agents"]) == {"random", "scripted"}
    for name, s in out["agents"].items():
        assert {"episodes", "battle_win_rate", "battle_ci", "mean_wins", "wins_ci", "clear_rate",
                "clear_ci"} <= set(s), name
        assert s["episodes"] == 3
        for rate, ci in (("battle_win_rate", "battle_ci"), ("mean_wins", "wins_ci"),
                         ("clear_rate", "clear_ci")):
            lo, hi = s[ci]
            assert lo <= s[rate] <= hi, (name, rate)
        # 3 runs: the clear rate is k/3 and its interval wilson(k, 3)
        from agents.evaluation import wilson
        k = round(s["clear_rate"] * 3)
        assert s["clear_rate"] == pytest.approx(k / 3)
        assert s["clear_ci"] == pytest.approx(list(wilson(k, 3)), rel=1e-12)
    # head to head: both seatings of the same round-matched battles, draws half, so the two
    # shares of a pair add up to 1
    h = out["head_to_head"]
    assert set(h) == {"random", "scripted"}
    assert 0.0 <= h["random"]["scripted"] <= 1.0
    assert h["random"]["scripted"] + h["scripted"]["random"] == pytest.approx(1.0, rel=1e-12)


def test_evaluate_matches_the_evaluation_api(evaluation):
    """The script's numbers are agents.evaluation.evaluate's on the evaluation seeds."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    from agents import make_agent
    from agents.evaluation import evaluate
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
        assert float(row["battle_win_rate"]) == pytest.approx(s["battle_win_rate"], rel=1e-12)
        assert [float(row["battle_lo"]), float(row["battle_hi"])] == pytest.approx(s["battle_ci"])
        assert float(row["mean_wins"]) == pytest.approx(s["mean_wins"], rel=1e-12)
        assert [float(row["wins_lo"]), float(row["wins_hi"])] == pytest.approx(s["wins_ci"])
        assert float(row["clear_rate"]) == pytest.approx(s["clear_rate"], rel=1e-12)
        assert [float(row["clear_lo"]), float(row["clear_hi"])] == pytest.approx(s["clear_ci"])


def test_evaluate_tensorboard_runs_have_the_same_tags(evaluation):
    """One TensorBoard sub-run per agent with the same tags, so the agents sit side by side (the
    script's docstring) -- whatever cores each agent happened to play."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    out = json.loads(evaluation["result"].stdout)
    tb = evaluation["out"] / "tb"
    assert sorted(p.name for p in tb.iterdir()) == ["random", "scripted"]
    tags = {}
    for name in ("random", "scripted"):
        ea = accumulator(tb / name)
        tags[name] = set(ea.Tags()["scalars"])
        for key in ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived"):
            assert ea.Scalars(f"eval/{key}")[0].value == pytest.approx(out["agents"][name][key],
                                                                      rel=1e-6), (name, key)
    assert {"eval/battle_win_rate", "eval/mean_wins", "eval/clear_rate"} <= tags["random"]
    assert tags["random"] == tags["scripted"], (
        f"only random: {sorted(tags['random'] - tags['scripted'])}; "
        f"only scripted: {sorted(tags['scripted'] - tags['random'])}")


def test_evaluate_bad_model_path_exits_2(tmp_path):
    missing = tmp_path / "no_model.zip"
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"definitely not a checkpoint")
    for path in (missing, garbage):
        r = run(EVALUATE, "--agents", path, "--episodes", 1, "--out", tmp_path / "out")
        assert r.returncode == 2, r.stderr
        assert str(path) in r.stderr and "Traceback" not in r.stderr


def test_evaluate_labels_model_paths(smoke):
    """A model path is an agent too, labelled <run>/<file stem> (its TensorBoard sub-run
    <run>_<stem>); baselines keep their names. (Playing a trained model through the evaluation
    loop is in tests/test_agents.py: an untrained policy's runs are too long for this budget.)"""
    import importlib.util
    spec = importlib.util.spec_from_file_location("scripts_evaluate", EVALUATE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.agent_label("random") == "random" and mod.agent_label("greedy:0.2") == "greedy:0.2"
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    model = smoke["run_dir"] / "final_model.zip"
    assert mod.agent_label(str(model)) == "smoke_s1/final_model"
    from agents import make_agent
    from agents.policy import PolicyAgent
    agent = make_agent(str(model))
    assert isinstance(agent, PolicyAgent) and agent.model.num_timesteps == 256


def test_evaluate_writes_board_pictures_to_tensorboard(evaluation):
    """Each agent's sub-run holds pictures of the boards its first runs ended with (3 runs here,
    so images boards/final/0..2), each the board picture's size (rune_env.pictures)."""
    assert evaluation["result"].returncode == 0, evaluation["result"].stderr
    for name in ("random", "scripted"):
        ea = EventAccumulator(str(evaluation["out"] / "tb" / name), size_guidance={"images": 0})
        ea.Reload()
        tags = set(ea.Tags()["images"])
        assert {"boards/final/0", "boards/final/1", "boards/final/2"} <= tags, (name, tags)
        img = ea.Images("boards/final/0")[0]
        assert img.width > 100 and img.height > 100


def test_train_periodic_evaluation_writes_board_pictures(tmp_path):
    """Training with the periodic evaluation on writes the evaluated boards as images at each
    evaluation (tag boards/eval/<i>), so a benchmarker sees what the policy builds over time."""
    config = tiny_config(tmp_path / "tiny.yaml", eval={"every": 128, "episodes": 1, "seed": 0})
    runs = tmp_path / "runs"
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "pics")
    assert r.returncode == 0, r.stderr
    ea = EventAccumulator(str(runs / "pics" / "tb" / "run_1"), size_guidance={"images": 0})
    ea.Reload()
    assert "boards/eval/0" in ea.Tags()["images"]
    assert len(ea.Images("boards/eval/0")) >= 1
