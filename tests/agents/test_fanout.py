"""--ray [ADDRESS]: the many-run scripts' independent runs as Ray tasks (agents/cli/fanout.py).

The results must equal a local run's, bit for bit in the JSON. These tests start a local Ray
with 2 CPUs; without Ray installed (the ray extra) they are skipped, except the check that a
script without --ray never imports Ray and that --ray without it is a clear error."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install -e \".[ray]\")")


def script(name, *args, env=None, timeout=900):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / f"{name}.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=env)


def same_output(name: str, args: list, local_extra: list = (), ray_extra: list = ()) -> None:
    """The script's stdout (its JSON) is the same without and with --ray, byte for byte, but for
    its `timing` (evaluate.py's CPU milliseconds an action: a timing of the machine, the one
    part of an output that is not reproducible)."""
    local = script(name, *args, *local_extra)
    spread = script(name, *args, *ray_extra, "--ray")
    assert local.returncode == 0 and spread.returncode == 0, spread.stderr
    assert local.stdout.strip()
    a, b = (json.loads(p.stdout) for p in (local, spread))
    if isinstance(a, dict) and "timing" in a:
        assert set(a["timing"]) == set(b["timing"])
        a, b = ({k: v for k, v in x.items() if k != "timing"} for x in (a, b))
        assert json.dumps(a) == json.dumps(b)
    else:
        assert local.stdout == spread.stdout


@pytest.mark.outside_mutation_check
def test_without_ray_nothing_imports_it(tmp_path):
    """evaluate.py, run with `ray` made unimportable (None in sys.modules), still works; with
    --ray it says what to install."""
    runner = ("import runpy, sys; sys.modules['ray'] = None; sys.argv = sys.argv[1:]; "
              "runpy.run_path(sys.argv[0], run_name='__main__')")
    p = subprocess.run([sys.executable, "-c", runner, str(ROOT / "scripts" / "evaluate.py"),
                        "--agents", "random", "--episodes", "2", "--out", str(tmp_path / "e"),
                        "--json", "--no-progress"], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["agents"]["random"]["episodes"] == 2
    if not HAVE_RAY:
        p = script("evaluate", "--agents", "random", "--episodes", "2", "--ray")
        assert p.returncode == 2 and "pip install" in p.stderr


@pytest.mark.outside_mutation_check
@needs_ray
def test_evaluate_with_ray_equals_local(tmp_path):
    """25 runs: three tasks of 10, 10 and 5 runs; the JSON is the local one's byte for byte."""
    same_output("evaluate", ["--agents", "greedy", "random", "--episodes", 25, "--json",
                                "--no-progress"], ["--out", tmp_path / "local"],
                   ["--out", tmp_path / "ray"])


@pytest.mark.outside_mutation_check
@needs_ray
def test_calibrate_with_ray_equals_local():
    same_output("calibrate_ranks", ["--agent", "greedy", "--episodes", 12, "--ranks",
                                       "apprentice", "sage", "--json", "--no-progress"])


@pytest.mark.outside_mutation_check
@needs_ray
def test_build_pools_with_ray_writes_the_same_pool(tmp_path):
    """sage at runs scale 0.15: greedy 2 runs, PPO s1 at 2M 5 runs, s2 sampling 5 runs: each
    agent one or two tasks of 5 runs; the pool files are equal byte for byte."""
    args = ["--ranks", "sage", "--runs-scale", 0.15, "--force", "--no-progress"]
    local = script("build_pools", *args, "--out-dir", tmp_path / "local")
    spread = script("build_pools", *args, "--out-dir", tmp_path / "ray", "--ray")
    assert local.returncode == 0 and spread.returncode == 0, spread.stderr
    a, b = (tmp_path / d / "sage.json.gz" for d in ("local", "ray"))
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.outside_mutation_check
@needs_ray
def test_ladder_and_audit_with_ray_equal_local(tmp_path):
    same_output("ladder", ["--agents", "greedy", "random", "--episodes", 12, "--json",
                              "--no-progress"], ["--out", tmp_path / "l"], ["--out", tmp_path / "r"])
    same_output("balance_audit", ["--quick", "--rounds", "3,6", "--json", "--no-progress"])


@pytest.mark.outside_mutation_check
@needs_ray
def test_exploitability_and_metagame_with_ray_equal_local(tmp_path):
    """A round a task: exploitability's JSON byte for byte; the metagame's but for each round's
    wall time ("seconds")."""
    same_output("exploitability", ["--pool", "configs/opponents/sage.json.gz", "--quick",
                                   "--json", "--no-progress"])
    args = ["--quick", "--json", "--no-progress"]
    local = script("metagame", *args, "--out", tmp_path / "local")
    spread = script("metagame", *args, "--out", tmp_path / "ray", "--ray")
    assert local.returncode == 0 and spread.returncode == 0, spread.stderr
    runs = [json.loads(p.stdout) for p in (local, spread)]
    for run in runs:
        run.pop("pool")
        for r in run["rounds"]:
            assert r.pop("seconds") > 0
    assert runs[0] == runs[1] and len(runs[0]["rounds"]) == 2
    a, b = (tmp_path / d / f"meta_{runs[0]['rules_hash']}.json.gz" for d in ("local", "ray"))
    assert a.read_bytes() == b.read_bytes()
