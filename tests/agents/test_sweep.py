"""scripts/sweep.py: Tune sweeps of train.py runs (agents/train/sweep/).

Without Ray (the ray extra) the end-to-end sweeps are skipped; what does not need Ray runs
either way: the config errors (one `error: ...` line naming the key, exit status 2, nothing
written), --help, the one-line error that says what to install, the draws of the search space,
and the stop of a train.py run (SIGINT, as ASHA's stop does it). The sweeps start a local Ray
with 2 CPUs (--num-cpus 2), which the script shuts down at its end."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from agents.train.sweep import (Dimension, TrainRun, asha_settings, best_trial, draw_values,
                                format_table, get_path, plan_trials, read_sweep, set_path,
                                train_path_problem)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "sweep.py"
HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY,
                               reason="Ray is not installed (pip install -e \".[ray]\")")
# run a script with `ray` unimportable (None in sys.modules), as where the extra is not installed
WITHOUT_RAY = ("import runpy, sys; sys.modules['ray'] = None; sys.argv = sys.argv[1:]; "
               "runpy.run_path(sys.argv[0], run_name='__main__')")


def sweep(*args, without_ray=False, timeout=600):
    head = [sys.executable, "-c", WITHOUT_RAY] if without_ray else [sys.executable]
    return subprocess.run([*head, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def load_script():
    spec = importlib.util.spec_from_file_location("sweep_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_sweep(tmp_path: Path, **changes) -> Path:
    """configs/sweeps/quick.yaml with top-level keys changed (None: removed)."""
    data = yaml.safe_load((ROOT / "configs/sweeps/quick.yaml").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# -- the config: one line naming the key, exit status 2, nothing written --------------------------
BAD = {
    "unknown key": ({"sheduler": "asha"}, "unknown key 'sheduler'"),
    "bad space kind": ({"space": {"ppo.learning_rate": {"logunifrom": [1e-4, 1e-3]}}},
                       "space.ppo.learning_rate.logunifrom"),
    "unknown train path": ({"space": {"ppo.learnin_rate": {"grid": [1e-4]}}},
                           "unknown train-config key 'ppo.learnin_rate'"),
    "unknown override path": ({"overrides": {"eval.evry": 10}}, "'eval.evry'"),
    "path under a value": ({"space": {"seed.x": {"grid": [0]}}}, "seed is a value, not a section"),
    "bad type": ({"num_samples": "many"}, "num_samples"),
    "out of range": ({"num_samples": 0}, "num_samples must be >= 1"),
    "bad bounds": ({"space": {"ppo.learning_rate": {"loguniform": [0, 1e-3]}}},
                   "space.ppo.learning_rate: loguniform"),
    "two kinds": ({"space": {"seed": {"grid": [0], "choice": [1]}}}, "exactly one kind"),
    "not a dimension": ({"space": {"seed": [0, 1]}}, "space.seed"),
    "bad metric": ({"metric": "win_rate"}, "metric must be one of"),
    "set twice": ({"space": {"total_timesteps": {"grid": [1024]}}},
                  "'total_timesteps' is set twice"),
    "asha without scheduler": ({"asha": {"grace_period": 1024}}, "asha:"),
    "bad trial config": ({"space": {"ppo.batch_size": {"grid": [256, 1]}}},
                         "trial t001 (ppo.batch_size=1): ppo.batch_size must be >= 2"),
    "bad trial type": ({"space": {"ppo.n_epochs": {"loguniform": [1, 10]}}},
                       "ppo.n_epochs: expected a whole number"),
    "asha max_t below total": ({"scheduler": "asha", "asha": {"max_t": 1024}},
                               "asha.max_t 1024 is below"),
    "threads over cpus": ({"overrides": {"torch_threads": 2}}, "torch_threads 2 > cpus_per_trial"),
    "missing base": ({"base": "configs/train/nope.yaml"}, "nope.yaml"),
    "bad policy_kwargs": ({"overrides": {"policy_kwargs.net_arh": [64]}}, "net_arh"),
    # numpy's own errors as tracebacks before; a reduction factor near 1 listed 23 million rungs
    "uniform past a float": ({"space": {"ppo.ent_coef": {"uniform": [-1e308, 1e308]}}},
                             "spans more than a float holds"),
    "randint past int64": ({"space": {"seed": {"randint": [0, 10**20]}}},
                           "within a 64-bit integer's range"),
    "asha factor near 1": ({"scheduler": "asha", "asha": {"reduction_factor": 1.000001}},
                           "asha.reduction_factor must be >= 1.1"),
    "drawn learning rate past 1": ({"space": {"ppo.learning_rate": {"uniform": [2, 3]}}},
                                   "ppo.learning_rate must be <= 1"),
}


@pytest.mark.outside_mutation_check
@pytest.mark.parametrize("case", list(BAD))
def test_bad_config_is_one_line_naming_the_key(case, tmp_path, capsys):
    changes, expected = BAD[case]
    if case == "threads over cpus":            # quick.yaml's overrides, and torch_threads
        quick = yaml.safe_load((ROOT / "configs/sweeps/quick.yaml").read_text())
        changes = {"overrides": {**quick["overrides"], **changes["overrides"]}}
    path = write_sweep(tmp_path, **changes)
    runs = tmp_path / "runs"
    code = load_script().main(["--config", str(path), "--runs-dir", str(runs), "--num-cpus", "2"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("error: ") and "\n" not in err, err
    assert expected in err, err
    assert not runs.exists()


@pytest.mark.outside_mutation_check
def test_without_ray_help_works_and_a_run_says_what_to_install(tmp_path):
    """--help needs no Ray; a valid sweep without Ray is one line with the pip command, exit 2,
    nothing written (checked after the config, so a bad config still names its key)."""
    p = sweep("--help", without_ray=True)
    assert p.returncode == 0 and "--num-cpus" in p.stdout, p.stderr
    runs = tmp_path / "runs"
    p = sweep("--config", "configs/sweeps/quick.yaml", "--runs-dir", runs, without_ray=True)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and 'pip install -e ".[ray]"' in p.stderr, p.stderr
    assert not runs.exists() and p.stdout == ""


@pytest.mark.outside_mutation_check
def test_help_shows_every_default():
    import re
    text = load_script().build_parser().format_help()
    options = re.findall(r"^  (--[a-z-]+)", text, re.M)
    assert {"--config", "--name", "--runs-dir", "--num-samples", "--search-seed", "--ray",
            "--num-cpus", "--force", "--json", "--progress"} <= set(options)
    body = text.split("options:", 1)[1]
    entries = re.split(r"\n  (?=-)", body)[1:]              # one entry per option
    for entry in entries:
        if entry.startswith("-h"):
            continue
        assert "default" in " ".join(entry.split()), entry
    assert "a local Ray started for the sweep" in " ".join(body.split())


# -- the search space ----------------------------------------------------------------------------
SPACE = {"seed": Dimension(grid=[0, 1]), "ppo.learning_rate": Dimension(loguniform=(1e-4, 1e-3)),
         "ppo.ent_coef": Dimension(uniform=(0.0, 0.05)), "ppo.n_steps": Dimension(randint=(64, 67)),
         "policy_kwargs.net_arch": Dimension(choice=[[64, 64], [128, 128]])}


def test_draws_are_deterministic_for_a_seed():
    a = draw_values(SPACE, 5, search_seed=7)
    assert a == draw_values(SPACE, 5, search_seed=7)
    assert a != draw_values(SPACE, 5, search_seed=8)
    assert len(a) == 10                                      # num_samples x the grid
    assert [v["seed"] for v in a] == [0, 1] * 5              # the grid inside each sample
    for v in a:
        assert list(v) == list(SPACE)                        # the space's key order
        assert 1e-4 <= v["ppo.learning_rate"] <= 1e-3 and 0 <= v["ppo.ent_coef"] <= 0.05
        assert v["ppo.n_steps"] in (64, 65, 66)              # randint's hi excluded
        assert v["policy_kwargs.net_arch"] in ([64, 64], [128, 128])


def test_grid_keys_form_their_product():
    space = {"seed": Dimension(grid=[0, 1]), "ppo.n_steps": Dimension(grid=[128, 256, 512])}
    draws = draw_values(space, 1, 0)
    assert draws == [{"seed": s, "ppo.n_steps": n} for s in (0, 1) for n in (128, 256, 512)]


def test_shipped_sweeps_draw_the_same_trials_twice():
    for name in ("quick", "quick_asha", "apprentice"):
        cfg = read_sweep(ROOT / "configs" / "sweeps" / f"{name}.yaml")
        assert draw_values(cfg.space, cfg.num_samples, cfg.search_seed) == \
            draw_values(cfg.space, cfg.num_samples, cfg.search_seed)
    apprentice = read_sweep(ROOT / "configs/sweeps/apprentice.yaml")
    assert apprentice.scheduler == "asha" and apprentice.num_samples == 8
    assert set(apprentice.space) == {"seed", "ppo.learning_rate", "ppo.ent_coef", "ppo.n_steps",
                                     "policy_kwargs.net_arch"}


@pytest.mark.outside_mutation_check
def test_plan_resolves_each_trial_over_base_and_overrides():
    cfg = read_sweep(ROOT / "configs/sweeps/quick_asha.yaml")
    trials = plan_trials(cfg, "quick_asha.yaml")
    assert [t.name for t in trials] == ["t000", "t001", "t002"]
    assert [t.config.ppo.learning_rate for t in trials] == [0.001, 0.0003, 0.000001]
    for t in trials:                                          # overrides over the base
        assert t.config.total_timesteps == 3072 and t.config.eval.every == 1024
        assert t.config.eval.seed == 0 and t.config.ppo.batch_size == 256   # the base's
    assert asha_settings(cfg, trials) == {"grace_period": 1024, "reduction_factor": 2.0,
                                          "max_t": 3072, "rungs": [1024, 2048]}


def test_train_paths():
    assert train_path_problem("ppo.learning_rate") is None
    assert train_path_problem("policy_kwargs.net_arch") is None      # a free mapping
    assert train_path_problem("env_kwargs.rank") is None
    assert "unknown train-config key 'ppo.lr'" in train_path_problem("ppo.lr")
    assert "not a section" in train_path_problem("total_timesteps.x")
    data = {"eval": {"every": 0, "episodes": 20}}
    set_path(data, "eval", {"every": 1024})                          # merged, not replaced
    set_path(data, "policy_kwargs.net_arch", [64])
    assert data == {"eval": {"every": 1024, "episodes": 20}, "policy_kwargs": {"net_arch": [64]}}
    assert get_path(data, "policy_kwargs.net_arch") == [64] and get_path(data, "x.y") is None


def test_best_is_the_argmax_among_finished_then_the_table():
    records = [{"trial": "t000", "status": "finished", "battle_win_rate": 0.2, "timesteps": 10,
                "values": {"seed": 0}, "run_dir": "trials/t000"},
               {"trial": "t001", "status": "stopped_early", "battle_win_rate": 0.9,
                "timesteps": 5, "values": {"seed": 1}, "run_dir": "trials/t001"},
               {"trial": "t002", "status": "finished", "battle_win_rate": 0.5, "timesteps": 10,
                "values": {"seed": 2}, "run_dir": "trials/t002"},
               {"trial": "t003", "status": "error", "battle_win_rate": None, "timesteps": None,
                "values": {"seed": 3}, "run_dir": "trials/t003", "error": "TrialFailed: boom"}]
    assert best_trial(records, "battle_win_rate", "max")["trial"] == "t002"
    assert best_trial(records, "battle_win_rate", "min")["trial"] == "t000"
    summary = {"metric": "battle_win_rate", "mode": "max", "space": {"seed": {}},
               "sweep_dir": "runs/s", "trials": records,
               "best": {"trial": "t002", "battle_win_rate": 0.5, "timesteps": 10,
                        "status": "finished", "run_dir": "trials/t002"}}
    lines = format_table(summary).splitlines()
    # finished trials first by the metric (0.5, 0.2), then the one stopped early although its
    # 0.9 is higher (a value from 5 steps, not a final one), then the one without: the best on top
    assert [ln.split()[0] for ln in lines[1:5]] == ["t002", "t000", "t001", "t003"]
    assert lines[1].startswith("t002 *") and "t003: TrialFailed: boom" in lines[-1]


# -- a trial's train.py: stopped as ASHA stops it --------------------------------------------------
@pytest.mark.outside_mutation_check
def test_stop_interrupts_train_py_cleanly(tmp_path):
    """After its first evaluation the run is stopped: train.py gets SIGINT, says how to resume,
    exits with 130 and has no final evaluation."""
    cfg = read_sweep(ROOT / "configs/sweeps/quick.yaml")
    trial = plan_trials(cfg, "quick.yaml")[0]
    config = trial.config.to_yaml() | {"total_timesteps": 8192}
    run = TrainRun(ROOT / "scripts" / "train.py", config, tmp_path / "t.yaml", "t000",
                   tmp_path / "trials", tmp_path / "t000.log")
    run.start()
    try:
        first = run.next_report()
        assert first["timesteps_total"] == 1024 and first["final"] == 0
        assert isinstance(first["battle_win_rate"], float)
        t0 = time.monotonic()
        assert run.stop() == 130
        assert time.monotonic() - t0 < 20
    finally:
        run.stop()
    assert "interrupted: continue it with python scripts/train.py --resume" in \
        (tmp_path / "t000.log").read_text()
    assert not (tmp_path / "trials" / "t000" / "eval.json").exists()


@pytest.mark.outside_mutation_check
def test_a_stop_that_breaks_what_it_interrupts_still_exits_130(tmp_path, monkeypatch,
                                                                script_main):
    """Why the test above failed now and then (stop() returned 1): the SIGINT lands right after
    the first evaluation, often inside the checkpoint save that follows it, and zipfile's (or
    torch's) cleanup of the half-written zip raises its own error with the KeyboardInterrupt as
    its context (found by raising KeyboardInterrupt at each line of a save: ValueError "Can't
    close the ZIP file while there is an open writing handle on it", RuntimeError "unexpected
    pos"). train.py took that for a crash. Here the save is stopped that way on purpose: the run
    is interrupted (130, how to resume), and an error of its own is still an error."""
    from conftest import script_module
    from test_train_runs import tiny_config

    def stopped_in_a_save(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("Can't close the ZIP file while there is an open writing handle "
                             "on it") from None

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    config = tiny_config(tmp_path / "tiny.yaml")
    args = ("--config", config, "--runs-dir", tmp_path / "runs", "--no-progress", "--run-name")
    monkeypatch.setattr(script_module("train"), "train", stopped_in_a_save)
    r = script_main("train", *args, "stopped")
    assert r.returncode == 130, r.stderr
    assert "interrupted: continue it with python scripts/train.py --resume --run-name stopped" \
        in r.stderr
    monkeypatch.setattr(script_module("train"), "train", broken)
    with pytest.raises(ValueError, match="a bug"):
        script_main("train", *args, "broken")


# -- whole sweeps on a local Ray of 2 CPUs ---------------------------------------------------------
@pytest.mark.outside_mutation_check
@needs_ray
def test_two_trial_sweep_end_to_end(tmp_path):
    runs = tmp_path / "runs"
    p = sweep("--config", "configs/sweeps/quick.yaml", "--runs-dir", runs, "--num-cpus", 2,
              "--json", "--no-progress")
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)                                 # stdout is the JSON alone
    sweep_dir = runs / "quick_sweep"
    assert json.loads((sweep_dir / "sweep.json").read_text()) == out
    trials = out["trials"]
    assert [t["trial"] for t in trials] == ["t000", "t001"]
    assert [t["values"] for t in trials] == [{"ppo.learning_rate": 0.0003},
                                             {"ppo.learning_rate": 0.001}]
    assert all(t["status"] == "finished" and t["final"] for t in trials)
    rates = [t["battle_win_rate"] for t in trials]
    assert all(isinstance(r, float) and 0 <= r <= 1 for r in rates)
    assert out["best"]["trial"] == trials[rates.index(max(rates))]["trial"]
    for t in trials:
        run_dir = sweep_dir / t["run_dir"]
        ev = json.loads((run_dir / "eval.json").read_text())    # a whole train.py run
        assert ev["timesteps"] == t["timesteps"] == 2048
        assert ev["battle_win_rate"] == t["battle_win_rate"]   # the final report is eval.json's
        assert list((run_dir / "tb").glob("run_*/events.out.tfevents.*"))
        assert yaml.safe_load((run_dir / "config.yaml").read_text())["ppo"]["learning_rate"] == \
            t["values"]["ppo.learning_rate"]
        tune_dir = sweep_dir / t["tune_dir"]                    # Tune's own results
        assert (tune_dir / "progress.csv").is_file()
        assert list(tune_dir.glob("events.out.tfevents.*"))
        assert t["evaluations"] == 2                            # at 1024, then the final one
    # the same sweep again is refused (the directory exists), before Ray starts
    again = sweep("--config", "configs/sweeps/quick.yaml", "--runs-dir", runs, "--num-cpus", 2)
    assert again.returncode == 2 and "--force" in again.stderr


@pytest.mark.outside_mutation_check
@needs_ray
def test_asha_sweep_statuses_are_consistent(tmp_path):
    """Three trials under ASHA (rungs at 1024 and 2048 of 3072 steps). Which trials ASHA stops
    depends on the evaluations, so this checks what holds either way: every trial reported at
    least the grace period, a finished trial has its final evaluation at 3072 steps, a stopped
    one ended before it with train.py interrupted (no eval.json)."""
    runs = tmp_path / "runs"
    p = sweep("--config", "configs/sweeps/quick_asha.yaml", "--runs-dir", runs, "--num-cpus", 2,
              "--json", "--no-progress")
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)
    assert out["scheduler"] == "asha"
    assert out["asha"] == {"grace_period": 1024, "reduction_factor": 2.0, "max_t": 3072,
                           "rungs": [1024, 2048]}
    sweep_dir = runs / "quick_asha"
    assert len(out["trials"]) == 3
    for t in out["trials"]:
        assert t["status"] in ("finished", "stopped_early"), t
        assert t["timesteps"] >= 1024 and isinstance(t["battle_win_rate"], float)
        run_dir = sweep_dir / t["run_dir"]
        if t["status"] == "finished":
            assert t["final"] and t["timesteps"] == 3072
            assert json.loads((run_dir / "eval.json").read_text())["timesteps"] == 3072
        else:
            assert not t["final"] and t["timesteps"] < 3072
            assert not (run_dir / "eval.json").exists()
            assert "interrupted" in (sweep_dir / t["log"]).read_text()
    finished = [t for t in out["trials"] if t["status"] == "finished"]
    assert finished and out["best"]["trial"] in {t["trial"] for t in finished}
