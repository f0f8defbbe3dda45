"""Smoke tests of scripts/train.py and scripts/evaluate.py, run as the user runs them (subprocesses;
the bad-config and bad-argument cases call their main(argv) in this process, tests/conftest.py's
`script_main`, but the first of each script).

Not battle-rule tests (no `Covers:` ids), so the module is marked `outside_mutation_check`: a plain `pytest`
runs it, the mutation check does not. One tiny training run (a copy of
configs/train/quick.yaml with 64-step rollouts, 256 timesteps, a 16x16 net, one final evaluation
run) is shared by the training tests; resume tests work on copies of its run directory. Needs the
`train` extra (torch, stable-baselines3, sb3-contrib, tensorboard); skipped without it.
"""
from __future__ import annotations

import csv
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


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The shared training run: --seed 1, so the run is named smoke__s1__<time>; the progress bar
    forced on (stderr is a pipe here)."""
    base = tmp_path_factory.mktemp("train")
    config = tiny_config(base / "tiny.yaml")
    runs = base / "runs"
    r = run(TRAIN, "--config", config, "--seed", 1, "--runs-dir", runs, "--progress")
    dirs = sorted(runs.iterdir()) if runs.is_dir() else []
    return {"result": r, "config": config, "runs": runs, "run_dir": dirs[0] if dirs else None}


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
    # signature (agents/trust.py) and its signed resume state (agents/resume.py), no temp file left
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


def test_train_fixed_run_name_refused_unless_force(tmp_path):
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps=128, final_eval_episodes=0)
    runs = tmp_path / "runs"
    old = runs / "fixed"
    old.mkdir(parents=True)
    (old / "config.yaml").write_text("name: fixed\n")
    (old / "old_marker").write_text("from the old run")
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "fixed")
    assert_one_line_error(r, str(old), "--resume", "--force")
    assert (old / "old_marker").exists()                          # left alone
    # --force with --resume: contradictory
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "fixed", "--force", "--resume")
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
    r = run(TRAIN, "--config", config, "--runs-dir", runs, "--run-name", "not_a_run", "--force")
    assert_one_line_error(r, "not a training run")
    assert (other / "precious").exists()


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


# -- train.py: --resume ----------------------------------------------------------------------------
def test_train_resume_of_a_finished_run_changes_nothing(smoke, tmp_path):
    """A finished run says so and exits 0; final model, policy, evaluation and timings stay as
    they are (found by --run-name, or as the newest run of the config's name and seed)."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    names = ("final_model.zip", "final_policy.pt", "final_policy.json", "eval.json", "train_seconds.json")
    before = files_of(d, *names)
    for args in (("--run-name", d.name), ("--config", smoke["config"], "--seed", 1),
                 ("--run-name", d.name, "--total-timesteps", 256),
                 ("--run-name", d.name, "--total-timesteps", 128)):
        r = run(TRAIN, "--runs-dir", d.parent, "--resume", *args)
        assert r.returncode == 0, (args, r.stderr)
        assert "is finished" in r.stdout and "--total-timesteps" in r.stdout, r.stdout
        assert summary_of(r)["timesteps"] == 256
        assert files_of(d, *names) == before, args
        assert sorted(p.name for p in (d / "checkpoints").glob("*.zip")) == \
            ["model_128_steps.zip", "model_256_steps.zip"]


def test_train_resume_continues_the_run(smoke, tmp_path):
    """A larger --total-timesteps trains a finished run on, from its final model."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    first = json.loads((d / "eval.json").read_text())["train_seconds"]
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", d.parent, "--resume",
            "--total-timesteps", 512)
    assert r.returncode == 0, r.stderr
    assert "final_model.zip" in r.stdout and "256 steps" in r.stdout
    summary = summary_of(r)
    assert Path(summary["run_dir"]) == d and summary["timesteps"] == 512
    # 256 more timesteps: checkpoints at 384 and 512 join the old ones, in the same run dir
    assert sorted(p.name for p in (d / "checkpoints").glob("*.zip")) == \
        ["model_128_steps.zip", "model_256_steps.zip", "model_384_steps.zip", "model_512_steps.zip"]
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 512
    ev = json.loads((d / "eval.json").read_text())
    assert ev["timesteps"] == 512 and ev["train_seconds"] > first      # both sessions counted
    assert json.loads((d / "final_policy.json").read_text())["timesteps"] == 512
    assert yaml.safe_load((d / "config.yaml").read_text())["total_timesteps"] == 512
    # TensorBoard continues the same run (run_1), with steps past the resume point
    assert [p.name for p in (d / "tb").iterdir()] == ["run_1"]
    ea = accumulator(d / "tb" / "run_1")
    assert steps_of(ea, "rollout/ep_len_mean")[-1] == 512
    assert max(steps_of(ea, "game/battle_win_rate")) > 256
    assert steps_of(ea, "eval/clear_rate") == [256, 512]


def test_train_resume_a_killed_run(smoke, tmp_path):
    """A run killed after its first checkpoint continues from it; the seconds before count."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    for name in ("final_model.zip", "final_policy.pt", "final_policy.json", "eval.json",
                 "checkpoints/model_256_steps.zip"):
        (d / name).unlink()
    before = json.loads((d / "train_seconds.json").read_text())["128"]
    r = run(TRAIN, "--runs-dir", d.parent, "--resume", "--run-name", d.name, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "model_128_steps.zip" in r.stdout and "128 steps" in r.stdout
    ev = json.loads((d / "eval.json").read_text())
    assert ev["timesteps"] == 256 and ev["train_seconds"] > before
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256


def test_train_resume_without_a_checkpoint_exits_2(smoke, tmp_path):
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    # nothing to resume at all
    r = run(TRAIN, "--config", smoke["config"], "--run-name", "never_ran", "--runs-dir",
            tmp_path / "empty_runs", "--resume")
    assert_one_line_error(r, "never_ran")
    r = run(TRAIN, "--config", smoke["config"], "--runs-dir", tmp_path / "empty_runs", "--resume")
    assert_one_line_error(r, "nothing to resume")
    # a killed run directory whose checkpoints are gone
    d = copy_run(smoke, tmp_path)
    shutil.rmtree(d / "checkpoints")
    (d / "final_model.zip").unlink()
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", d.parent, "--resume")
    assert_one_line_error(r, "checkpoint")


def test_train_resume_skips_a_checkpoint_that_does_not_load(smoke, tmp_path):
    """A kill during a save left the newest checkpoint truncated (as SB3's own save did): the
    resume says so and goes on from the newest one that loads."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    (d / "final_model.zip").unlink()                       # killed before the end
    latest = d / "checkpoints" / "model_256_steps.zip"
    latest.write_bytes(latest.read_bytes()[:1000])        # truncated
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", d.parent, "--resume",
            "--no-progress")
    assert r.returncode == 0, r.stderr
    skipped = [line for line in r.stdout.splitlines() if line.startswith("skipped: ")]
    assert skipped == [f"skipped: {latest}: not a stable-baselines3 checkpoint (not a zip archive; "
                       f"truncated or corrupt?)"]
    assert "resuming from " + str(d / "checkpoints" / "model_128_steps.zip") in r.stdout
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256
    # when none loads (here: none signed on this machine), one line says so, naming the newest
    d2 = copy_run(smoke, tmp_path / "again")
    for sig in d2.rglob("*.zip.sig"):
        sig.unlink()
    (d2 / "final_model.zip").unlink()
    r = run(TRAIN, "--runs-dir", d2.parent, "--resume", "--run-name", d2.name)
    assert_one_line_error(r, "no saved model loads (2 tried", "model_256_steps.zip", "--trust-pickle")


def _weights(path: Path) -> dict:
    """A saved model's policy weights and optimizer state, as tensors."""
    from agents.policy import load_model
    model = load_model(path)
    opt = model.policy.optimizer.state_dict()["state"]
    return {"steps": model.num_timesteps, "policy": model.policy.state_dict(),
            "optimizer": {f"{i}.{k}": v for i, s in opt.items() for k, v in s.items()
                          if hasattr(v, "shape")}}


def assert_same_weights(a: Path, b: Path) -> None:
    import torch
    wa, wb = _weights(a), _weights(b)
    assert wa["steps"] == wb["steps"]
    for part in ("policy", "optimizer"):
        assert wa[part].keys() == wb[part].keys()
        differ = [k for k in wa[part] if not torch.equal(wa[part][k], wb[part][k])]
        assert not differ, (part, differ)


def test_a_resumed_run_is_the_uninterrupted_run(tmp_path):
    """Killed at a checkpoint and resumed, or stopped at that step and resumed with a larger
    --total-timesteps, a run (the quick config, shrunk) ends with the uninterrupted run's weights
    and optimizer state bit for bit, its checkpoints on the same steps, and the same evaluations
    in eval_history.jsonl (evaluations off the rollout grid, at 192 and 384; the killed session's
    evaluation past its last checkpoint is dropped and made again, not doubled)."""
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps=512, checkpoint_every=256,
                         eval={"every": 192, "episodes": 2, "seed": 0})
    cfg = yaml.safe_load(config.read_text())
    cfg["ppo"]["n_epochs"] = 2
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    runs = tmp_path / "runs"

    def train(*args):
        r = run(TRAIN, "--runs-dir", runs, "--no-progress", *args)
        assert r.returncode == 0, r.stderr[-3000:]
        return r

    train("--config", config, "--run-name", "straight")
    straight = runs / "straight"
    history = (straight / "eval_history.jsonl").read_text()
    assert [json.loads(line)["timesteps"] for line in history.splitlines()] == [192, 384]
    ckpts = sorted(p.name for p in (straight / "checkpoints").glob("*.zip"))
    assert ckpts == ["model_256_steps.zip", "model_512_steps.zip"]

    # killed just after its checkpoint at 256 (its evaluation at 384 made, then the kill)
    killed = runs / "killed"
    shutil.copytree(straight, killed)
    for p in [*killed.glob("final_*"), killed / "eval.json", *killed.glob("checkpoints/model_512_*")]:
        p.unlink()
    r = train("--resume", "--run-name", "killed")
    assert "resuming from " + str(killed / "checkpoints" / "model_256_steps.zip") in r.stdout
    assert "not exact" not in r.stdout
    # stopped at 256 (its final model), then trained on to 512
    train("--config", config, "--run-name", "stopped", "--total-timesteps", 256)
    stopped = runs / "stopped"
    r = train("--resume", "--run-name", "stopped", "--total-timesteps", 512)
    assert "resuming from " + str(stopped / "final_model.zip") in r.stdout
    assert "not exact" not in r.stdout

    for d in (killed, stopped):
        assert_same_weights(straight / "final_model.zip", d / "final_model.zip")
        assert_same_weights(straight / "checkpoints" / "model_512_steps.zip",
                            d / "checkpoints" / "model_512_steps.zip")
        assert sorted(p.name for p in (d / "checkpoints").glob("*.zip")) == ckpts
        assert (d / "eval_history.jsonl").read_text() == history, d.name
        ev, ev0 = (json.loads((x / "eval.json").read_text()) for x in (d, straight))
        assert {k: v for k, v in ev.items() if k != "train_seconds"} == \
            {k: v for k, v in ev0.items() if k != "train_seconds"}
    # TensorBoard: SB3's and the game's scalars on the same steps with the same values (the
    # stopped run: the killed one's tb/ still holds the events its session wrote past 256; time/*
    # is wall-clock, and eval/* has the stopped session's final evaluation at 256 too)
    def scalars(d):
        ea = accumulator(d / "tb" / "run_1")
        return {t: [(e.step, e.value) for e in ea.Scalars(t)] for t in ea.Tags()["scalars"]
                if t.split("/")[0] in ("train", "rollout", "game")}
    expected = scalars(straight)
    assert "train/loss" in expected and "rollout/ep_rew_mean" in expected
    assert scalars(stopped) == expected


def test_a_checkpoint_without_its_resume_state_resumes_and_says_so(smoke, tmp_path):
    """A checkpoint whose resume state is missing (a run from before it) still resumes, from new
    episodes, with a line saying the run is no longer the uninterrupted one."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    for name in ("final_model.zip", "final_model.state.json", "eval.json",
                 "checkpoints/model_256_steps.zip", "checkpoints/model_128_steps.state.json"):
        (d / name).unlink()
    r = run(TRAIN, "--runs-dir", d.parent, "--resume", "--run-name", d.name, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stdout.splitlines() if line.startswith("not exact: ")] == \
        [f"not exact: {d / 'checkpoints' / 'model_128_steps.state.json'}: missing; the envs start "
         f"new episodes and the generators are reseeded, so the run goes on but is no longer the "
         f"uninterrupted one"]
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256


# -- train.py: bad input ---------------------------------------------------------------------------
BAD_CONFIGS = {
    "unknown key": ({"learning_rate": 0.001}, "learning_rate"),      # belongs under ppo:
    "unknown ppo key": ({"ppo": {"n_stepz": 64}}, "ppo.n_stepz"),
    "unknown eval key": ({"eval": {"evry": 64}}, "eval.evry"),
    "negative timesteps": ({"total_timesteps": -5}, "total_timesteps"),
    "no envs": ({"n_envs": 0}, "n_envs"),
    "not a number": ({"n_envs": "two"}, "n_envs"),
    "a fraction": ({"checkpoint_every": 12.5}, "checkpoint_every"),
    "a bool": ({"torch_threads": True}, "torch_threads"),
    "bad ppo value": ({"ppo": {"n_steps": 0}}, "ppo.n_steps"),
    "bad gamma": ({"ppo": {"gamma": 1.5}}, "ppo.gamma"),
    "bad masking": ({"masking": "quick"}, "masking must be one of"),    # fast | sb3
    "bad vec_env": ({"vec_env": "threads"}, "vec_env"),
    "bad name": ({"name": "a/b"}, "name"),
    "bad rank": ({"env_kwargs": {"rank": 9, "opponents": "generator"}}, "rank"),
    "bad env option": ({"env_kwargs": {"colour": "red"}}, "colour"),
    "bad env id": ({"env_id": "rune_env/Nope-v0"}, "env_id"),
}


@pytest.mark.parametrize("case", list(BAD_CONFIGS))
def test_train_bad_config_exits_2(tmp_path, case, script_main):
    """A bad config: one `error:` line naming the key, exit 2, nothing written."""
    change, words = BAD_CONFIGS[case]
    cfg = yaml.safe_load(tiny_config(tmp_path / "base.yaml").read_text())
    for key, value in change.items():
        if isinstance(value, dict) and key in ("ppo", "eval"):
            cfg[key].update(value)
        else:
            cfg[key] = value
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    args = ("--config", config, "--runs-dir", tmp_path / "runs")
    # the first case in a real process: its stderr, as the user sees it, has no traceback
    r = run(TRAIN, *args) if case == next(iter(BAD_CONFIGS)) else script_main("train", *args)
    assert_one_line_error(r, str(config), words)
    assert not (tmp_path / "runs").exists()               # refused before creating anything


@pytest.mark.parametrize("text,words", [("a: [1, 2\n", "not valid YAML at line"),
                                        ("- 1\n- 2\n", "a YAML mapping")])
def test_train_unreadable_config_exits_2(tmp_path, text, words, script_main):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    r = script_main("train", "--config", config, "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, words)
    r = script_main("train", "--config", tmp_path / "missing.yaml", "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, "missing.yaml", "cannot read")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("args,words", [
    (("--seed", "-1"), "--seed"), (("--seed", "x"), "--seed"),
    (("--total-timesteps", "0"), "--total-timesteps"), (("--run-name", "a/b"), "--run-name"),
    (("--run-name", "x:y"), "--run-name"), ((), "--config"),
])
def test_train_bad_command_line_exits_2(tmp_path, args, words, script_main):
    config = () if not args else ("--config", tiny_config(tmp_path / "tiny.yaml"))
    r = script_main("train", *config, *args, "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, words)
    assert not (tmp_path / "runs").exists()


def test_config_yaml_numbers_are_read_as_numbers(tmp_path):
    """PyYAML reads 3e-4 and 1e4 as text; the typed config reads them as the numbers they spell."""
    mod = script_module(TRAIN, "scripts_train")
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps="1e4")
    cfg = yaml.safe_load(config.read_text())
    cfg["ppo"]["learning_rate"] = "3e-4"
    config.write_text(yaml.safe_dump(cfg))
    c = mod.read_config(config)
    assert c.total_timesteps == 10000 and c.ppo.learning_rate == pytest.approx(3e-4)
    assert mod.read_config(config, {"seed": 7}).seed == 7


def test_ppo_section_keys_are_maskableppo_arguments():
    import inspect

    from sb3_contrib import MaskablePPO
    mod = script_module(TRAIN, "scripts_train")
    assert set(mod.PPOConfig.model_fields) <= set(inspect.signature(MaskablePPO.__init__).parameters)


# -- torch threads, help ---------------------------------------------------------------------------
def test_subprocess_envs_set_torch_threads():
    """Each env sets torch's threads as it starts: in a SubprocVecEnv worker (a fresh process
    with torch's default of one thread per core) it is the config's number."""
    code = ("import importlib.util, sys, torch\n"
            f"spec = importlib.util.spec_from_file_location('t', {str(TRAIN)!r})\n"
            "m = importlib.util.module_from_spec(spec); sys.modules['t'] = m\n"
            "spec.loader.exec_module(m)\n"
            "torch.set_num_threads(3)\n"
            "m.make_env_fn('rune_env/RuneRun-v0', {'opponents': 'generator'}, 0, 0, 1)()\n"
            "print(torch.get_num_threads())\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1"]


@pytest.mark.parametrize("script", [TRAIN, EVALUATE], ids=["train", "evaluate"])
def test_every_option_shows_its_default_in_help(script):
    mod = script_module(script, f"scripts_{script.stem}")
    parser = mod.build_parser()
    for action in parser._actions:
        if action.dest == "help":
            continue
        assert action.help and "default" in action.help, (action.option_strings, action.help)
    r = run(script, "--help")
    assert r.returncode == 0 and "default" in r.stdout


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


def test_evaluate_logs_at_the_models_training_step(smoke, tmp_path):
    """A policy's TensorBoard points sit at its training step (a .zip's num_timesteps, the
    `timesteps` of the JSON beside a .pt); baselines at 0. A rerun replaces an agent's files."""
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
    r = run(EVALUATE, "--agents", "random", "--episodes", 1, "--opponents", "generator",
            "--out", out, "--seed", 1, "--no-progress")
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
