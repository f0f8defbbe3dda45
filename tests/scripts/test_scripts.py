"""Smoke tests of the scripts: benchmark, mutation check (listing and the mutations it makes;
their logic is agents/devtools/bench.py and agents/devtools/mutation.py). The benchmark's training rows and the
scripts that write TensorBoard need torch (the `train` extra): those tests skip without it."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import agents.devtools.bench as bench
import agents.devtools.mutation as mc
from conftest import FROZEN_RULES

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"


def script(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / f"{name}.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.outside_mutation_check
def test_benchmark_json():
    pytest.importorskip("sb3_contrib")          # the training rows
    r = script("benchmark", "--pairs", "20", "--env-steps", "200", "--train-steps", "256",
               "--fast-seconds", "0.3",
               "--train-config", str(REPO / "configs" / "train" / "quick.yaml"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"reference_battles_per_s", "median_duration", "median_casts", "pairs", "machine",
            "versions", "fast_battles_per_s", "batch_battles_per_s", "fast_speedup",
            "env_steps_per_s", "duel_steps_per_s", "train_fps", "train_fps_stub",
            "train_fps_ratio"} <= set(out)
    assert out["train_fps"] > 0 and out["train_fps_stub"] > 0
    assert out["train_fps_ratio"] == pytest.approx(out["train_fps"] / out["train_fps_stub"])
    assert out["pairs"] == 20
    assert out["reference_battles_per_s"] > 0
    # each engine figure is its best pass; the median pass is reported beside it
    for key in ("reference_battles_per_s", "fast_battles_per_s", "batch_battles_per_s",
                "env_steps_per_s", "duel_steps_per_s"):
        assert 0 < out[key + "_median"] <= out[key]
    assert out["fast_speedup"] == pytest.approx(out["fast_battles_per_s"]
                                                / out["reference_battles_per_s"])
    assert out["env_steps_per_s"] > 0
    assert 0 < out["median_duration"] <= 60
    assert out["median_casts"] >= 0
    assert isinstance(out["machine"], dict) and "cpu" in out["machine"]
    assert isinstance(out["versions"], dict) and out["versions"]["rules_hash"]


@pytest.mark.outside_mutation_check
def test_benchmark_table(tmp_path):
    """The table (no --json), each kind of row in it. The timed budgets are the least that runs
    each row (the figures are not checked here; test_benchmark_json checks them): 0.3 s of fast
    passes instead of 4, and the training rows on a copy of configs/train/quick.yaml cut to
    64-step rollouts, one timed rollout per env kind, instead of 16384 steps of --train-config's
    default, apprentice.yaml (16 envs), which was 40 s of the suite's CPU. That default is checked
    to be one the benchmark reads."""
    pytest.importorskip("sb3_contrib")          # the training rows
    cfg = yaml.safe_load((REPO / "configs" / "train" / "quick.yaml").read_text())
    cfg["ppo"].update(n_steps=64, batch_size=64, n_epochs=1)
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(cfg))
    r = script("benchmark", "--pairs", "5", "--seed", "3", "--env-steps", "0",
               "--fast-seconds", "0.3", "--train-steps", "128",
               "--train-config", str(tmp_path / "tiny.yaml"))
    assert r.returncode == 0, r.stderr
    assert "reference engine" in r.stdout and "battles/s" in r.stdout
    assert "standard_pairs(5, 3)" in r.stdout
    assert "MaskablePPO on RuneRun-v0 (2 envs" in r.stdout and "steps/s" in r.stdout
    from conftest import script_module
    benchmark = script_module("benchmark")
    default = benchmark.build_parser().get_default("train_config")
    assert Path(default) == REPO / "configs" / "train" / "apprentice.yaml"
    assert benchmark.read_train_config(default).n_envs == 16


def test_benchmark_passes_fill_the_minimum_time():
    """The fast engine's passes: at least `repeats`, then more until `min_seconds` are spent
    (10 ms passes: 3 passes take 30 ms; a 95 ms minimum needs 10 passes)."""
    nap = lambda: time.sleep(0.01)         # noqa: E731
    assert len(bench._timed_passes(nap, 3)) == 3
    assert len(bench._timed_passes(nap, 3, 0.0)) == 3
    times = bench._timed_passes(nap, 3, 0.095)
    assert sum(times) >= 0.095 and len(times) >= 4
    assert sum(times[:-1]) < 0.095          # it stopped at the first pass past the minimum


def test_benchmark_rejects_zero_repeats():
    r = script("benchmark", "--pairs", "5", "--fast-repeats", "0")
    assert r.returncode == 2
    assert "--fast-repeats" in r.stderr


@pytest.mark.outside_mutation_check
def test_mutation_check_list():
    r = script("mutation_check", "--list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    paths = [line.split()[0] for line in lines[:-1]]
    assert "runes.fire.damage" in paths and "flows.0.multiplier" in paths
    assert lines[-1] == f"{len(paths)} numbers"
    r = script("mutation_check", "--list", "--only", "flows[firestorm].multiplier")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:4] == ["flows.0.multiplier", "2.0", "->", "2.2"]
    r = script("mutation_check", "--list", "--only", "run.income")
    assert r.returncode == 2 and "run.income" in r.stderr


def test_mutation_check_picks_the_battle_numbers():
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    muts = {m.path: m for m in mc.mutations(data)}
    # mutated: battle numbers, list entries, nested tables, booleans
    assert muts["battle.base_hp"].new == muts["battle.base_hp"].old + 1          # int +1
    assert muts["flows.0.multiplier"].new == pytest.approx(muts["flows.0.multiplier"].old * 1.1)
    assert muts["cores.star.loose_resonance"].new is (not muts["cores.star.loose_resonance"].old)
    assert "relics.ember_jar.power_x_by_kind.fire" in muts
    assert "rings.power_x.2" in muts and "runes.mimic.copy_x_by_grade.0" in muts
    # not mutated: prices, run-only fields, other sections, strings
    for path in muts:
        assert not path.startswith(("run.", "ranks", "achievements", "dice", "sectors",
                                    "version", "variant")), path
        assert not path.endswith((".price", ".income_per_runes", ".income", ".hand_slots",
                                  ".lamp_saves")), path
        assert not path.endswith((".id", ".from", ".to")), path
    assert "grades.merge_count" not in muts
    # the override path of each mutation is one load_rules accepts
    from rune_env.rules import load_rules
    m = muts["flows.12.freeze_duration_x"]
    r = load_rules(FROZEN_RULES, overrides={m.path: m.new})
    assert r.flow_by_id["deep_freeze"].freeze_duration_x == pytest.approx(1.65)


def test_mutation_check_apply_and_normalise():
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    assert mc.normalise_path("flows[lava].erosions", data) == "flows.2.erosions"
    assert mc.normalise_path("resonance.patterns.sixfold.loose", data) == "resonance.patterns.2.loose"
    m = mc.Mutation("runes.ice.freeze_s", "runes.ice.freeze_s", 1.5, 1.65)
    out = mc.apply(data, m)
    assert out["runes"]["ice"]["freeze_s"] == 1.65 and data["runes"]["ice"]["freeze_s"] == 1.5


def test_pools_of_other_rules_warn_and_strict_refuses(tmp_path):
    """A pool whose rules hash differs from the current rules is used with a warning; the env's
    strict_pools=True and the scripts' --strict refuse it, naming both hashes (exit 2)."""
    import warnings

    from rune_env.envs.run_env import RuneRunEnv
    from rune_env.run.opponents import PoolError
    shipped = json.loads(gzip.decompress((REPO / "configs" / "opponents" / "apprentice.json.gz").read_bytes()))
    shipped["rules_hash"] = "0123456789abcdef"          # as if made under other rules
    pool = tmp_path / "other_rules.json"
    pool.write_text(json.dumps(shipped))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        RuneRunEnv(opponents=str(pool))
    assert any("0123456789abcdef" in str(w.message) for w in caught)
    with pytest.raises(PoolError, match="0123456789abcdef"):
        RuneRunEnv(opponents=str(pool), strict_pools=True)
    out = script("evaluate", "--agents", "random", "--episodes", "1", "--opponents", str(pool),
                 "--strict", "--out", str(tmp_path / "eval"))
    assert out.returncode == 2 and "0123456789abcdef" in out.stderr
    assert "Traceback" not in out.stderr
    out = script("ladder", "--agents", "random", "--pools", str(pool), "--episodes", "1",
                 "--strict", "--out", str(tmp_path / "ladder"))
    assert out.returncode == 2 and "0123456789abcdef" in out.stderr
    pytest.importorskip("torch")                 # evaluate writes TensorBoard (torch's writer)
    pytest.importorskip("tensorboard")
    out = script("evaluate", "--agents", "random", "--episodes", "1", "--opponents", str(pool),
                 "--out", str(tmp_path / "eval2"))
    assert out.returncode == 0, out.stderr
