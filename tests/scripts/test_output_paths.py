"""Output paths and up-front checks of the scripts: an output file or directory that cannot be
written (a directory where a file goes, a path under a regular file, /proc/x: refused even for
root, whom os.access lets through), a chart of a format matplotlib does not write, a repeated
or blank value, or a league config whose duel_kwargs or members do not load, is one `error: ...`
line and exit status 2, checked before any work, and nothing is left behind in tmp_path.

The cases run each script's main(argv) in this process (tests/conftest.py's `script_main`); the
first runs a script as a real process."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
# the same one-line check as the other scripts' bad-input tests (pytest puts this folder on the
# path: its files import each other by name)
from test_scripts_input import assert_one_line_error  # noqa: E402

SCRIPTS = REPO / "scripts"
POOL = REPO / "configs" / "opponents" / "apprentice.json.gz"
POLICY = REPO / "agents" / "models" / "apprentice_s0.pt"
TRAIN_CONFIG = REPO / "configs" / "train" / "apprentice.yaml"
LEAGUE_CONFIG = REPO / "configs" / "league" / "default.yaml"
on_linux = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# (script, args, needles); {file} is a regular file in tmp_path, {tmp} tmp_path itself
CASES = [
    ("benchmark_table", ["--agents", "greedy", "--ranks", "apprentice", "--out", "/proc/x/out"],
     ["--out /proc/x/out", "cannot write in /proc"]),
    ("benchmark_table", ["--agents", "greedy", "--out", "{file}/sub"], ["--out", "not a directory"]),
    ("benchmark_table", ["--agents", "random", "--out", "{tmp}/out"],
     ["--agents", "besides the floor"]),
    ("benchmark_table", ["--agents", "planner", "random", "--out", "{tmp}/out"],
     ["--agents", "besides the floor"]),
    ("benchmark_table", ["--agents", "greedy", "--top", "", "--out", "{tmp}/out"],
     ["--top: an empty agent name"]),
    ("collect_demos", ["--out", "/proc/x/out.npz", "--runs", "1"], ["--out", "cannot write in /proc"]),
    ("collect_demos", ["--out", "{file}", "--runs", "1"], ["--out", "exists", "--force"]),
    ("collect_demos", ["--out", "{tmp}", "--runs", "1"], ["--out", "is a directory"]),
    ("collect_demos", ["--out", "{file}/sub.npz", "--runs", "1"], ["--out", "not a directory"]),
    ("collect_demos", ["--agent", " ", "--out", "{tmp}/d.npz"], ["--agent: an empty agent name"]),
    ("expert_iteration", ["--policy", str(POLICY), "--out", "{file}/sub"],
     ["--out", "not a directory"]),
    ("expert_iteration", ["--policy", str(POLICY), "--out", "/proc/x/out"],
     ["--out", "cannot write in /proc"]),
    ("metagame", ["--quick", "--out", "/proc/x/out"], ["--out", "cannot write in /proc"]),
    ("metagame", ["--quick", "--tb", "{file}/sub"], ["--tb", "not a directory"]),
    ("metagame", ["--quick", "--tb", "/proc/x/tb"], ["--tb", "cannot write in /proc"]),
    ("exploitability", ["--quick", "--pool", str(POOL), "--chart", "/proc/x/o.png"], ["--chart", "cannot write in /proc"]),
    ("exploitability", ["--quick", "--pool", str(POOL), "--chart", "{tmp}/o.txt"], ["--chart", ".png"]),
    ("exploitability", ["--quick", "--pool", str(POOL), "--tb", "{file}/sub"], ["--tb", "not a directory"]),
    ("training_curves", ["{tmp}", "--out", "/proc/x/x.png"], ["--out", "cannot write in /proc"]),
    ("training_curves", ["{tmp}", "--out", "{tmp}/x.txt"], ["--out", ".png, .svg or .pdf"]),
    ("training_curves", ["{tmp}", "--out", "{tmp}/c.png", "--line", "nan:x"], ["--line", "finite"]),
    ("training_curves", ["{tmp}", "--out", "{tmp}/c.png", "--line", "inf:x"], ["--line", "finite"]),
    ("training_curves", ["{tmp}", "--out", "{tmp}/c.png", "--line=-inf"], ["--line", "finite"]),
    ("coverage_table", ["--out", "{tmp}"], ["--out", "is a directory"]),
    ("coverage_table", ["--out", "{file}/x.md"], ["--out", "not a directory"]),
    ("coverage_table", ["--out", "/proc/x/y.md"], ["--out", "cannot write in /proc"]),
    ("mutation_check", ["--json", "{tmp}", "--list"], ["--json", "is a directory"]),
    ("mutation_check", ["--json", "/proc/x/y.json", "--list"], ["--json", "cannot write in /proc"]),
    ("mutation_check", ["--json", "{file}/y.json", "--list"], ["--json", "not a directory"]),
    *[(name, [*extra, "--runs-dir", where], ["--runs-dir", needle])
      for name, extra in [("train", ["--config", str(TRAIN_CONFIG)]),
                          ("league", ["--config", str(LEAGUE_CONFIG)]),
                          ("exploit", ["--target", "greedy"]),
                          ("train_rllib", ["--config", str(TRAIN_CONFIG)]),
                          ("sweep", ["--config", str(TRAIN_CONFIG)])]
      for where, needle in [("{file}", "not a directory"), ("{file}/sub", "not a directory"),
                            ("/proc/x", "cannot write in /proc")]],
    ("evaluate", ["--agents", "random", "--out", "/proc/x/ev"], ["--out", "cannot write in /proc"]),
    ("evaluate", ["--agents", "random", "--out", "{file}/sub"], ["--out", "not a directory"]),
    ("ladder", ["--agents", "random", "greedy", "--out", "/proc/x/ld"],
     ["--out", "cannot write in /proc"]),
    ("ladder", ["--agents", "random", "greedy", "--out", "{file}/sub"], ["--out", "not a directory"]),
    ("calibrate_ranks", ["--agent", "greedy", "--pool", "apprentice={tmp}/A",
                         "--pool", "apprentice={tmp}/B"], ["--pool", "apprentice is given twice"]),
    ("pin_golden", ["--set", "nosuch"], ["--set", "invalid choice"]),
    ("evaluate", ["--agents", ""], ["--agents: an empty agent name"]),
    ("evaluate", ["--agents", "greedy", " "], ["--agents: an empty agent name"]),
    ("make_opponents", ["--agents", "", "--out", "{tmp}/p.json"], ["--agents: an empty agent name"]),
    ("exploit", ["--target", ""], ["--target: an empty agent name"]),
]


def _fill(args: list[str], tmp: Path, file: Path) -> list[str]:
    return [a.replace("{file}", str(file)).replace("{tmp}", str(tmp)) for a in args]


@pytest.mark.parametrize("name,args,needles", CASES,
                         ids=[f"{c[0]}:{' '.join(c[1])[-40:]}" for c in CASES])
def test_bad_output_is_one_line_and_leaves_nothing(script_main, tmp_path, name, args, needles):
    if any("/proc/" in a for a in args) and not Path("/proc/self").is_dir():
        pytest.skip("needs Linux's /proc")
    file = tmp_path / "a_file"
    file.write_text("in the way\n")
    before = tree(tmp_path)
    r = script_main(name, *_fill(args, tmp_path, file))
    assert_one_line_error(r, *needles)
    assert tree(tmp_path) == before
    assert file.read_text() == "in the way\n"


@on_linux
def test_as_a_process(tmp_path):
    """A real process: the check runs before any work and says it in one line."""
    r = subprocess.run([sys.executable, str(SCRIPTS / "benchmark_table.py"), "--agents", "greedy",
                        "--out", "/proc/x/out"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert_one_line_error(r, "--out /proc/x/out", "cannot write in /proc")
    assert tree(tmp_path) == []


# -- league.py: the whole config checked before the run directory is made --------------------------
def _league_config(tmp: Path, **changes) -> Path:
    cfg = {"name": "lg", "n_envs": 1, "total_timesteps": 64,
           "members": [{"name": "greedy", "agent": "greedy"}], **changes}
    path = tmp / "lg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


LEAGUE_CASES = [
    ({"duel_kwargs": {"battle_reward": float("nan")}}, ["duel_kwargs", "battle_reward"]),
    ({"duel_kwargs": {"battle_reward": -1}}, ["duel_kwargs", "battle_reward"]),
    ({"duel_kwargs": {"rank": "nosuch"}}, ["duel_kwargs", "rank"]),
    ({"duel_kwargs": {"nosuch": 1}}, ["duel_kwargs", "nosuch"]),
    ({"members": [{"name": "x", "agent": "nosuch"}]}, ["members: x", "nosuch"]),
    ({"members": [{"name": "x", "agent": "{tmp}/m.zip"}]}, ["members: x", "--trust-pickle"]),
]


@pytest.mark.parametrize("changes,needles", LEAGUE_CASES,
                         ids=["nan", "negative", "rank", "unknown_key", "agent", "pickled"])
def test_league_checks_before_its_run_directory(script_main, tmp_path, changes, needles):
    with zipfile.ZipFile(tmp_path / "m.zip", "w") as z:     # a checkpoint no run here signed
        z.writestr("data", "{}")
    changes = yaml.safe_load(yaml.safe_dump(changes).replace("'{tmp}", f"'{tmp_path}")
                             .replace("{tmp}", str(tmp_path)))
    config = _league_config(tmp_path, **changes)
    runs = tmp_path / "runs"
    for _ in range(2):         # the same refusal again: nothing of the first is in the way
        r = script_main("league", "--config", config, "--runs-dir", runs)
        assert_one_line_error(r, *needles)
        assert not runs.exists()


# -- benchmark.py: the training config's model built before the measurements -----------------------
def test_benchmark_train_config_model_checked_first(script_main, tmp_path):
    cfg = yaml.safe_load(TRAIN_CONFIG.read_text())
    cfg["policy_kwargs"] = {"net_arch": [-1]}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = script_main("benchmark", "--train-config", path, "--train-steps", "10")
    assert_one_line_error(r, "--train-config", "cannot build the model")
