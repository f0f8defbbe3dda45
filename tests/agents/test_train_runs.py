"""Smoke tests of scripts/train.py, run as the user runs them (subprocesses): the run directory
and its names, and what goes to TensorBoard.

Not battle-rule tests (no `Covers:` ids), so the module is marked `outside_mutation_check`: a plain `pytest`
runs it, the mutation check does not. One tiny training run (a copy of
configs/train/quick.yaml with 64-step rollouts, 256 timesteps, a 16x16 net, one final evaluation
run: tests/conftest.py's `smoke`) is shared by the training tests of this module,
tests/agents/test_train_resume.py and tests/agents/test_evaluate.py, which reuse this module's
helpers. Needs the `train` extra (torch, stable-baselines3, sb3-contrib, tensorboard); skipped
without it.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "scripts" / "train.py"
EVALUATE = REPO / "scripts" / "evaluate.py"
QUICK = REPO / "configs" / "train" / "quick.yaml"
CORES = ("sun", "star", "moon", "eclipse", "tree")
KINDS = ("fire", "wind", "water", "earth", "thunder", "dark", "light", "ice",
         "amplify", "resonator", "delay", "node", "mimic")
RUN_DIR_NAME = re.compile(r"smoke__s1__\d{8}T\d{6}Z")

GAME_SCALARS = ("game/battle_win_rate", "game/battle_duration", "game/wins_per_run",
                "game/clear_rate", "game/rounds_survived", "game/lamps_left")
SB3_SCALARS = ("rollout/ep_rew_mean", "rollout/ep_len_mean", "time/fps", "train/loss",
               "train/entropy_loss", "train/value_loss")


def run(script: Path, *args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def script_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod          # pydantic resolves the config's annotations through it
    spec.loader.exec_module(mod)
    return mod


def tiny_config(path: Path, **changes) -> Path:
    """A copy of the quick config, shrunk: 2 envs x 64-step rollouts = 128 timesteps a rollout."""
    cfg = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    cfg["name"] = "smoke"
    cfg["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    cfg["policy_kwargs"] = {"net_arch": [16, 16]}
    cfg["eval"]["every"] = 0
    cfg.update(total_timesteps=256, checkpoint_every=128, metrics_every=128, final_eval_episodes=1)
    for key, value in changes.items():
        cfg[key] = value
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def accumulator(path: Path) -> EventAccumulator:
    ea = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "images": 0})
    ea.Reload()
    return ea


def steps_of(ea: EventAccumulator, tag: str) -> list[int]:
    return [e.step for e in ea.Scalars(tag)]


def summary_of(r: subprocess.CompletedProcess) -> dict:
    """train.py's last stdout line: the run's summary as JSON."""
    return json.loads(r.stdout.strip().splitlines()[-1])


def assert_one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    """Exit status 2 and exactly one stderr line, `error: ...`, naming `words`; no traceback."""
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-2000:]
    for w in words:
        assert w in lines[0], (w, lines[0])


def files_of(d: Path, *names: str) -> dict[str, bytes]:
    return {n: (d / n).read_bytes() for n in names}


def copy_run(smoke, tmp_path) -> Path:
    """A copy of the smoke run under a fresh runs dir (same run name), for tests that change it."""
    runs = tmp_path / "runs"
    shutil.copytree(smoke["run_dir"], runs / smoke["run_dir"].name)
    return runs / smoke["run_dir"].name


# -- train.py: the run directory -------------------------------------------------------------------
def test_train_writes_its_run_directory(smoke):
    r = smoke["result"]
    assert r.returncode == 0, r.stderr
    d = smoke["run_dir"]
    assert RUN_DIR_NAME.fullmatch(d.name), d.name
    assert [p.name for p in smoke["runs"].iterdir()] == [d.name]
    # where the run goes is the first thing printed; the summary is the last line
    assert r.stdout.splitlines()[0].startswith(f"run: {d}")
    summary = summary_of(r)
    assert Path(summary["run_dir"]) == d and summary["timesteps"] == 256
    # the resolved config: the file's values, the --seed override, and the defaults merged in
    cfg = yaml.safe_load((d / "config.yaml").read_text(encoding="utf-8"))
    assert cfg["seed"] == 1 and cfg["total_timesteps"] == 256 and cfg["name"] == "smoke"
    assert cfg["ppo"]["n_steps"] == 64 and cfg["ppo"]["gamma"] == 0.99
    assert cfg["env_kwargs"] == yaml.safe_load(QUICK.read_text(encoding="utf-8"))["env_kwargs"]
    assert set(cfg["eval"]) == {"every", "episodes", "seed"}
    # TensorBoard: one run directory with event files
    assert [p.name for p in (d / "tb").iterdir()] == ["run_1"]
    assert list((d / "tb" / "run_1").glob("events.out.tfevents.*"))
    # checkpoints every 128 timesteps (the rollout boundaries at 128 and 256), each with its
    # signature (agents/policy/trust.py) and its signed resume state (agents/train/resume.py), no temp file left
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == \
        [f"model_{n}_steps.{ext}" for n in (128, 256)
         for ext in ("state.json", "state.json.sig", "zip", "zip.sig")]
    assert (d / "final_model.state.json").is_file() and (d / "final_model.state.json.sig").is_file()
    # the final model loads, and knows how far it trained; the exported policy's provenance says so
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256
    prov = json.loads((d / "final_policy.json").read_text(encoding="utf-8"))
    assert prov["timesteps"] == 256 and prov["seed"] == 1 and prov["policy"] == "final_policy.pt"
    # the final evaluation: final_eval_episodes = 1 run on an evaluation seed
    ev = json.loads((d / "eval.json").read_text(encoding="utf-8"))
    assert ev["timesteps"] == 256 and ev["episodes"] == 1 and ev["train_seconds"] > 0
    for key in ("battle_win_rate", "battle_ci", "mean_wins", "wins_ci", "clear_rate", "clear_ci",
                "rounds_survived", "lamps_left", "by_core"):
        assert key in ev, key
    assert "runs" not in ev
    assert 0.0 <= ev["battle_win_rate"] <= 1.0
    assert ev["clear_ci"][0] <= ev["clear_rate"] <= ev["clear_ci"][1]
    # the training seconds up to each saved model
    secs = json.loads((d / "train_seconds.json").read_text(encoding="utf-8"))
    assert set(secs) == {"128", "256"} and 0 < secs["128"] <= secs["256"] == ev["train_seconds"]
    # one line per evaluation: the final one here
    assert any(line.startswith("final evaluation at 256 steps: 1 runs") for line in r.stdout.splitlines())


def test_train_progress_bar_goes_to_stderr(smoke):
    """--progress (forced: stderr is a pipe here) draws SB3's bar on stderr; stdout keeps the
    run's lines and its JSON summary."""
    r = smoke["result"]
    assert r.returncode == 0, r.stderr
    assert "256/256" in r.stderr and "100%" in r.stderr
    assert "256/256" not in r.stdout and "━" not in r.stdout
    summary_of(r)


def test_train_twice_gives_two_run_directories(tmp_path):
    """The README's main command works twice: each run gets its own directory (no --run-name);
    --no-progress draws no bar."""
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps=128, final_eval_episodes=0)
    runs = tmp_path / "runs"
    dirs = []
    for _ in range(2):
        r = run(TRAIN, "--config", config, "--runs-dir", runs, "--no-progress")
        assert r.returncode == 0, r.stderr
        assert "%" not in r.stderr and "━" not in r.stderr, r.stderr
        dirs.append(Path(summary_of(r)["run_dir"]))
    assert dirs[0] != dirs[1] and sorted(p.name for p in runs.iterdir()) == sorted(d.name for d in dirs)
    for d in dirs:
        assert re.fullmatch(r"smoke__s0__\d{8}T\d{6}Z(-\d+)?", d.name), d.name
        assert (d / "final_model.zip").is_file() and ":" not in d.name


def test_run_names_are_new_sortable_and_resumable(tmp_path):
    """Two runs started in the same second get base and base-2; --resume finds the newest."""
    from datetime import datetime, timezone
    mod = script_module(TRAIN, "scripts_train")
    t = datetime(2025, 6, 11, 10, 15, 0, tzinfo=timezone.utc)
    base = mod.default_run_name("quick", 0, t)
    assert base == "quick__s0__20250611T101500Z"
    made = [mod.claim_run_dir(tmp_path, base).name for _ in range(11)]
    assert made[:2] == [base, base + "-2"] and made[-1] == base + "-11" and len(set(made)) == 11
    assert mod.latest_run(tmp_path, "quick", 0).name == base + "-11"
    later = mod.claim_run_dir(tmp_path, mod.default_run_name("quick", 0, t.replace(minute=16)))
    assert mod.latest_run(tmp_path, "quick", 0) == later
    assert sorted(made + [later.name])[-1] == later.name       # a later start sorts last
    assert mod.latest_run(tmp_path, "quick", 1) is None


def test_train_fixed_run_name_refused_unless_force(tmp_path, script_main):
    """(The refusals are main(argv) in this process: they end before anything is built; the
    --force run trains in a process of its own.)"""
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps=128, final_eval_episodes=0)
    runs = tmp_path / "runs"
    old = runs / "fixed"
    old.mkdir(parents=True)
    (old / "config.yaml").write_text("name: fixed\n")
    (old / "old_marker").write_text("from the old run")
    r = script_main("train", "--config", config, "--runs-dir", runs, "--run-name", "fixed")
    assert_one_line_error(r, str(old), "--resume", "--force")
    assert (old / "old_marker").exists()                          # left alone
    # --force with --resume: contradictory
    r = script_main("train", "--config", config, "--runs-dir", runs, "--run-name", "fixed",
                    "--force", "--resume")
    assert_one_line_error(r, "--force", "--resume")
    # --force: the old directory is deleted, the run starts again in it
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "fixed", "--force",
            "--no-progress")
    assert r.returncode == 0, r.stderr
    assert Path(summary_of(r)["run_dir"]) == old and not (old / "old_marker").exists()
    assert (old / "final_model.zip").is_file()
    assert yaml.safe_load((old / "config.yaml").read_text())["name"] == "smoke"
    # --force never deletes a directory that is not a training run
    other = runs / "not_a_run"
    other.mkdir()
    (other / "precious").write_text("x")
    r = script_main("train", "--config", config, "--runs-dir", runs, "--run-name", "not_a_run",
                    "--force")
    assert_one_line_error(r, "not a training run")
    assert (other / "precious").exists()
    # --force without a name, and an empty name: refused (both trained into a new directory)
    r = script_main("train", "--config", config, "--runs-dir", runs, "--force")
    assert_one_line_error(r, "--force needs --run-name")
    r = script_main("train", "--config", config, "--runs-dir", runs, "--run-name", "")
    assert_one_line_error(r, "--run-name ''")
    # --resume with a config that is not the run's: refused, naming the key (it was ignored)
    changed = yaml.safe_load(config.read_text())
    changed["ppo"]["ent_coef"] = 0.5
    other_config = tmp_path / "other.yaml"
    other_config.write_text(yaml.safe_dump(changed))
    r = script_main("train", "--config", other_config, "--runs-dir", runs, "--run-name", "fixed",
                    "--resume", "--total-timesteps", "256")
    assert_one_line_error(r, "ppo.ent_coef differs from", "a resumed run keeps the config")


def _claim(args):
    from agents.train.run_dirs import claim_named_run
    run_dir, go = args
    while time.time() < go:          # every process tries at the same instant
        pass
    return claim_named_run(Path(run_dir), force=False)


@pytest.mark.parametrize("made_beforehand", [False, True], ids=["new", "empty dir"])
def test_of_many_starts_with_one_name_exactly_one_claims_it(tmp_path, made_beforehand):
    """The claim is atomic (os.mkdir, then config.yaml with O_EXCL): eight processes racing for
    one name, in a new directory or in an empty one made by hand, give one claim and seven
    "exists" refusals, whatever the timing."""
    import multiprocessing
    run_dir = tmp_path / "runs" / "same"
    if made_beforehand:
        run_dir.mkdir(parents=True)
    go = time.time() + 1.0
    with multiprocessing.get_context("fork").Pool(8) as pool:
        results = pool.map(_claim, [(str(run_dir), go)] * 8)
    assert results.count(None) == 1, results
    assert all(r.startswith(f"{run_dir} exists: pass --resume") for r in results if r is not None)
    assert [p.name for p in run_dir.iterdir()] == ["config.yaml"]


def test_a_second_start_of_a_running_name_is_refused_at_once(tmp_path):
    """While one training runs in runs/busy, another start with --run-name busy is refused
    before it builds anything (it used to train beside the first, into the same files)."""
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps=4096, final_eval_episodes=0)
    runs = tmp_path / "runs"
    first = subprocess.Popen([sys.executable, str(TRAIN), "--config", str(config), "--runs-dir",
                              str(runs), "--run-name", "busy", "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        deadline = time.time() + 120
        while not (runs / "busy" / "config.yaml").is_file() and time.time() < deadline:
            time.sleep(0.1)
        t0 = time.monotonic()
        r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "busy", "--seed", "1")
        assert_one_line_error(r, str(runs / "busy"), "exists")
        assert time.monotonic() - t0 < 30            # the interpreter's start, no training
    finally:
        first.kill()
        first.wait()


def test_a_save_killed_halfway_leaves_the_old_checkpoint_whole(tmp_path):
    """save_checkpoint writes a temp name and renames it: a save that fails halfway (a kill, a
    full disk) leaves the checkpoint of that name as it was, or none, and no temp file."""
    from agents.policy.trust import is_signed, save_checkpoint

    class Model:
        def __init__(self, data, fail):
            self.data, self.fail = data, fail

        def save(self, path):
            Path(path).write_bytes(self.data[: len(self.data) // 2])
            if self.fail:
                raise OSError("no space left on device")
            Path(path).write_bytes(self.data)

    target = tmp_path / "checkpoints" / "model_64_steps.zip"
    with pytest.raises(OSError):
        save_checkpoint(Model(b"new" * 100, fail=True), target)
    assert not target.exists() and list(target.parent.iterdir()) == []
    save_checkpoint(Model(b"old" * 100, fail=False), target)
    with pytest.raises(OSError):
        save_checkpoint(Model(b"new" * 100, fail=True), target)
    assert target.read_bytes() == b"old" * 100 and is_signed(target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["model_64_steps.zip",
                                                               "model_64_steps.zip.sig"]


# -- train.py: TensorBoard -------------------------------------------------------------------------
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


def test_train_tensorboard_has_named_kind_shares(smoke):
    """Each kind's share of the runes on the boards that fought, by name (the histogram's bins
    are only indices): every kind at every metrics step, the shares adding up to 1."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    ea = accumulator(smoke["run_dir"] / "tb" / "run_1")
    scalars = set(ea.Tags()["scalars"])
    assert {f"game/kind_share/{k}" for k in KINDS} <= scalars
    for step_index, step in enumerate((128, 256)):
        shares = [ea.Scalars(f"game/kind_share/{k}")[step_index] for k in KINDS]
        assert all(e.step == step and 0.0 <= e.value <= 1.0 for e in shares)
        assert sum(e.value for e in shares) == pytest.approx(1.0, abs=1e-5)


def test_train_logs_the_final_evaluation_with_board_images(smoke):
    """The final evaluation goes to TensorBoard at the last step: eval/* scalars and pictures of
    the evaluated runs' final boards (boards/final/<i>, the README's Images tab)."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    ev = json.loads((smoke["run_dir"] / "eval.json").read_text())
    ea = accumulator(smoke["run_dir"] / "tb" / "run_1")
    assert "boards/final/0" in ea.Tags()["images"]
    img = ea.Images("boards/final/0")[0]
    assert img.step == 256 and img.width > 100 and img.height > 100
    for key in ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived"):
        (e,) = ea.Scalars(f"eval/{key}")
        assert e.step == 256 and e.value == pytest.approx(ev[key], rel=1e-6), key
    assert {f"eval/kind_share/{k}" for k in KINDS} <= set(ea.Tags()["scalars"])


def test_quick_config_evaluates_with_board_images():
    """The README's main job logs evaluations with their images (boards/eval/* halfway and at the
    end, boards/final/* at the end) within its budget."""
    cfg = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    assert cfg["final_eval_episodes"] >= 1
    assert 0 < cfg["eval"]["every"] <= cfg["total_timesteps"]
    assert cfg["total_timesteps"] <= 10000 and cfg["eval"]["episodes"] <= 20


def test_train_periodic_evaluation_writes_board_pictures(tmp_path):
    """Training with the periodic evaluation on writes the evaluated boards as images at each
    evaluation (tag boards/eval/<i>), so a benchmarker sees what the policy builds over time;
    each evaluation prints one line."""
    config = tiny_config(tmp_path / "tiny.yaml", eval={"every": 128, "episodes": 1, "seed": 0},
                         final_eval_episodes=0)
    runs = tmp_path / "runs"
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "pics")
    assert r.returncode == 0, r.stderr
    ea = accumulator(runs / "pics" / "tb" / "run_1")
    assert "boards/eval/0" in ea.Tags()["images"]
    assert len(ea.Images("boards/eval/0")) >= 1
    assert steps_of(ea, "eval/clear_rate") == [128, 256]
    lines = [line for line in r.stdout.splitlines() if line.startswith("evaluation at ")]
    assert [line.split(":")[0] for line in lines] == ["evaluation at 128 steps", "evaluation at 256 steps"]
    # "at 128 steps" plays the weights of 128 steps, the checkpoint's (made at the rollout
    # boundary, after the rollout's update; inside the rollout it played the weights of 0 steps)
    from agents.evaluation.runs import evaluate
    from agents.policy import PolicyAgent, load_model
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    history = [json.loads(x) for x in (runs / "pics" / "eval_history.jsonl").read_text().splitlines()]
    again = evaluate(PolicyAgent(load_model(runs / "pics" / "checkpoints" / "model_128_steps.zip")),
                     1, 0, cfg["env_kwargs"])
    assert history[0]["timesteps"] == 128
    assert {k: history[0][k] for k in ("battles", "battle_win_rate", "mean_wins")} == \
        {k: again[k] for k in ("battles", "battle_win_rate", "mean_wins")}


def test_the_last_step_is_evaluated_once_with_a_final_evaluation(tmp_path):
    """With a final evaluation the periodic one leaves the last step to it: one eval/* point a
    step in TensorBoard (128: periodic, 256: final), where before the periodic evaluation inside
    the last rollout also wrote 256, with the weights of 128."""
    config = tiny_config(tmp_path / "tiny.yaml", eval={"every": 128, "episodes": 1, "seed": 0})
    runs = tmp_path / "runs"
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "once")
    assert r.returncode == 0, r.stderr
    assert [line.split(":")[0] for line in r.stdout.splitlines() if "evaluation at " in line] == \
        ["evaluation at 128 steps", "final evaluation at 256 steps"]
    assert steps_of(accumulator(runs / "once" / "tb" / "run_1"), "eval/clear_rate") == [128, 256]


def test_a_draft_run_with_its_own_options_is_evaluated_on_whole_runs(tmp_path):
    """RuneDraft-v0 with its own options (round 5, budget 40) trains, then its periodic and final
    evaluations play whole RuneRun-v0 runs, as every run's do: without the draft's options, which
    RuneRunEnv does not take (a TypeError after training, leaving no eval.json)."""
    config = tiny_config(tmp_path / "draft.yaml", env_id="rune_env/RuneDraft-v0",
                         env_kwargs={"round": 5, "budget": 40, "rank": "apprentice",
                                     "opponents": "generator"},
                         eval={"every": 128, "episodes": 1, "seed": 0})
    runs = tmp_path / "runs"
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "draft")
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((runs / "draft" / "eval.json").read_text())
    assert res["episodes"] == 1 and res["rounds_survived"] >= 1
    assert len((runs / "draft" / "eval_history.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize("changes, words", [
    ({"policy": "MlpPolicy", "env_kwargs": {"obs_mode": "dict", "opponents": "generator"}},
     ("policy MlpPolicy reads a flat observation; this env's is a dict",)),
    ({"policy": "MultiInputPolicy", "masking": "sb3"},
     ("policy MultiInputPolicy reads a dict observation; this env's is flat",)),
    ({"ppo": {"n_steps": 64, "batch_size": 4096}},
     ("ppo.batch_size 4096 is more than a rollout's n_steps x n_envs = 64 x 2 = 128 steps",)),
])
def test_a_policy_that_cannot_read_the_envs_observation_is_refused_before_the_run(
        tmp_path, changes, words):
    """A policy class that does not read the env's observations was an AttributeError from
    inside SB3 after config.yaml and tb/ were written (the run name then taken); a batch larger
    than the rollout trained with the rollout as its one minibatch. Each is one error line, and
    no run directory."""
    config = tiny_config(tmp_path / "bad.yaml")
    cfg = yaml.safe_load(config.read_text())
    for key, value in changes.items():
        cfg[key] = {**cfg[key], **value} if key == "ppo" else value
    config.write_text(yaml.safe_dump(cfg))
    runs = tmp_path / "runs"
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "bad")
    assert_one_line_error(r, *words)
    assert not (runs / "bad").exists()
