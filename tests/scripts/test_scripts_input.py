"""The scripts' command lines: a bad number or file is one `error: ...` line and exit status 2
(no traceback, nothing written); a board's round is bounded; every option's --help shows its
default; progress bars go to stderr only (forced on with --progress), never into --json output.

The bad inputs stop a script before anything is played: most cases call its main(argv) in this
process (tests/conftest.py's `script_main`), the first case of each script runs it as a real
process, as do the --help and progress-bar tests (with a tiny budget)."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rune_env.rules import Board, BoardError, default_rules
from rune_env.run.opponents import Pool, save_pool

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
ROUND_CAP = default_rules().spec.run.round_cap
SHIPPED_POOL = REPO / "configs" / "opponents" / "apprentice.json.gz"
BAR = re.compile(r"\d+/\d+ \[")          # tqdm's "3/10 [00:01<00:02, ...]"


def script(name: str, *args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / f"{name}.py"), *map(str, args)],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(r: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2, and stderr is one `error: ...` line (warnings aside) holding the needles."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()
             and not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# -- files used by the cases ----------------------------------------------------------------------
def _files(tmp: Path) -> dict[str, Path]:
    files = {
        "missing": tmp / "missing.yaml",
        "bad_yaml": tmp / "bad.yaml",
        "schema": tmp / "schema.yaml",
        "corrupt_pool": tmp / "corrupt.json",
        "wrong_pool": tmp / "wrong_format.json",
        "round_pool": tmp / "round_pool.json",
        "a_file": tmp / "a_file.txt",
        "pools_dir": tmp / "pools",
        "recipe": tmp / "recipe.yaml",
    }
    files["bad_yaml"].write_text("battle: [1\n")
    files["schema"].write_text(f"extends: {REPO / 'configs' / 'rules' / 'default.yaml'}\n"
                               "battle: {duration_s: -1}\n")
    files["corrupt_pool"].write_text('{"format": "rune-env-pool", "rounds": {"1": [')
    files["wrong_pool"].write_text('{"runes": {}}')
    rules = default_rules()
    pool = Pool(rules_hash=rules.hash, rank="apprentice",
                rounds={1: [{"board": {"runes": {"1:0": ["fire", 1]}, "round": 1}, "round": 1}]})
    save_pool(pool, files["round_pool"])
    data = json.loads(files["round_pool"].read_text())
    data["rounds"]["1"][0]["board"]["round"] = 99999999999
    files["round_pool"].write_text(json.dumps(data))
    files["a_file"].write_text("not a folder")
    files["pools_dir"].mkdir()
    (files["pools_dir"] / "apprentice.json").write_text(files["corrupt_pool"].read_text())
    files["recipe"].write_text("version: 1\n"
                               "defaults: {max_round: 1, sample: false, min_trained_share: 0.0}\n"
                               "ranks:\n  apprentice: {seed: 7, agents: [{agent: random, runs: 1}]}\n")
    return files


@pytest.fixture
def files(tmp_path):
    return _files(tmp_path)


OUT = "{tmp}/out.json"

# (script, args, needles); {name} is a path from _files, {tmp} the test's folder
CASES = {
    # balance_report
    "report rules missing": ("balance_report", ["--rules", "{missing}"],
                             ["--rules", "missing.yaml", "cannot read"]),
    "report rules bad yaml": ("balance_report", ["--rules", "{bad_yaml}"],
                              ["bad.yaml", "not valid YAML"]),
    "report rules schema": ("balance_report", ["--rules", "{schema}"],
                            ["battle.duration_s", "schema.yaml"]),
    "report battles -5": ("balance_report", ["--battles", "-5"], ["--battles", "in 1..", "-5"]),
    "report runs 0": ("balance_report", ["--runs", "0"], ["--runs", "in 1.."]),
    "report jobs 0": ("balance_report", ["--jobs", "0"], ["--jobs", "1..", "'0'"]),
    "report jobs 100000": ("balance_report", ["--jobs", "100000"], ["--jobs", "per usable core"]),
    "report seed -1": ("balance_report", ["--seed", "-1"], ["--seed"]),
    "report battles float": ("balance_report", ["--battles", "1.5"], ["--battles", "whole number"]),
    "report variant": ("balance_report", ["--variant", "dicey"], ["--variant", "invalid choice"]),
    # make_opponents
    "opponents runs -1": ("make_opponents", ["--rank", "apprentice", "--agents", "random",
                                             "--out", OUT, "--runs", "-1"], ["--runs", "in 1.."]),
    "opponents runs 0": ("make_opponents", ["--rank", "apprentice", "--agents", "random",
                                            "--out", OUT, "--runs", "0"], ["--runs"]),
    "opponents max-round 0": ("make_opponents", ["--rank", "apprentice", "--agents", "random",
                                                 "--out", OUT, "--max-round", "0"],
                              ["--max-round", f"1..{ROUND_CAP}", "run.round_cap"]),
    "opponents max-round past cap": ("make_opponents", ["--rank", "apprentice", "--agents",
                                                        "random", "--out", OUT, "--max-round",
                                                        str(ROUND_CAP + 1)],
                                     ["--max-round", f"1..{ROUND_CAP}", str(ROUND_CAP + 1)]),
    "opponents unknown rank": ("make_opponents", ["--rank", "wizard", "--agents", "random",
                                                  "--out", OUT], ["unknown rank 'wizard'"]),
    "opponents rank number": ("make_opponents", ["--rank", "9", "--agents", "random",
                                                 "--out", OUT], ["--rank", "9"]),
    "opponents seed -1": ("make_opponents", ["--rank", "apprentice", "--agents", "random",
                                             "--out", OUT, "--seed", "-1"], ["--seed"]),
    "opponents unknown agent": ("make_opponents", ["--rank", "apprentice", "--agents", "random",
                                                   "cleverbot", "--out", OUT],
                                ["unknown agent 'cleverbot'"]),
    "opponents missing policy": ("make_opponents", ["--rank", "apprentice", "--agents",
                                                    "{tmp}/nowhere.pt", "--out", OUT],
                                 ["nowhere.pt"]),
    "opponents out is a folder": ("make_opponents", ["--rank", "apprentice", "--agents",
                                                     "random", "--out", "{pools_dir}"],
                                  ["--out", "directory"]),
    "opponents out under a file": ("make_opponents", ["--rank", "apprentice", "--agents",
                                                      "random", "--out", "{a_file}/pool.json"],
                                   ["--out", "not a directory"]),
    # ladder
    "ladder episodes -1": ("ladder", ["--agents", "random", "scripted", "--episodes", "-1",
                                      "--out", "{tmp}/ladder"], ["--episodes", "in 1.."]),
    "ladder samples 0": ("ladder", ["--agents", "random", "scripted", "--samples", "0",
                                    "--out", "{tmp}/ladder"], ["--samples", "in 1.."]),
    "ladder nothing to rate": ("ladder", ["--agents", "random", "--out", "{tmp}/ladder"],
                               ["nothing to rate"]),
    "ladder empty pools": ("ladder", ["--agents", "random", "--pools", "--out", "{tmp}/ladder"],
                           ["--pools", "at least one"]),
    "ladder pool missing": ("ladder", ["--agents", "random", "--pools", "{tmp}/none.json",
                                       "--out", "{tmp}/ladder"], ["none.json", "cannot read"]),
    "ladder pool corrupt": ("ladder", ["--agents", "random", "--pools", "{corrupt_pool}",
                                       "--out", "{tmp}/ladder"], ["corrupt.json", "not valid JSON"]),
    "ladder pool wrong format": ("ladder", ["--agents", "random", "--pools", "{wrong_pool}",
                                            "--out", "{tmp}/ladder"],
                                 ["wrong_format.json", "not a rune-env pool"]),
    "ladder pool board round": ("ladder", ["--agents", "random", "--pools", "{round_pool}",
                                           "--out", "{tmp}/ladder"],
                                ["round_pool.json", "round must be", f"1..{ROUND_CAP}",
                                 "99999999999"]),
    "ladder agent twice": ("ladder", ["--agents", "random", "random", "--out", "{tmp}/ladder"],
                           ["given twice"]),
    "ladder torch threads": ("ladder", ["--agents", "random", "scripted", "--torch-threads", "0",
                                        "--out", "{tmp}/ladder"], ["--torch-threads"]),
    "ladder out is a file": ("ladder", ["--agents", "random", "scripted", "--out", "{a_file}"],
                             ["--out", "not a directory"]),
    # calibrate_ranks
    "calibrate episodes 0": ("calibrate_ranks", ["--agent", "random", "--episodes", "0"],
                             ["--episodes", "in 1.."]),
    "calibrate seed": ("calibrate_ranks", ["--agent", "random", "--seed", "x"], ["--seed"]),
    "calibrate unknown rank": ("calibrate_ranks", ["--agent", "random", "--ranks", "wizard"],
                               ["unknown rank 'wizard'"]),
    "calibrate pools dir missing": ("calibrate_ranks", ["--agent", "random", "--pools-dir",
                                                        "{tmp}/nowhere"],
                                    ["--pools-dir", "nowhere"]),
    "calibrate pool corrupt": ("calibrate_ranks", ["--agent", "random", "--pools-dir",
                                                   "{pools_dir}", "--ranks", "apprentice"],
                               ["apprentice.json", "not valid JSON"]),
    "calibrate pool missing": ("calibrate_ranks", ["--agent", "random", "--pools-dir",
                                                   "{pools_dir}", "--ranks", "mentor"],
                               ["no pool for rank mentor", "mentor.json"]),
    "calibrate unknown agent": ("calibrate_ranks", ["--agent", "cleverbot", "--ranks",
                                                    "apprentice"], ["unknown agent 'cleverbot'"]),
    # build_pools
    "pools runs-scale 0": ("build_pools", ["--config", "{recipe}", "--out-dir", "{tmp}/built",
                                           "--runs-scale", "0"], ["--runs-scale must be > 0"]),
    "pools runs-scale nan": ("build_pools", ["--config", "{recipe}", "--out-dir", "{tmp}/built",
                                             "--runs-scale", "nan"], ["--runs-scale", "finite"]),
    "pools config missing": ("build_pools", ["--config", "{missing}", "--out-dir", "{tmp}/built"],
                             ["missing.yaml", "cannot read"]),
    "pools config bad yaml": ("build_pools", ["--config", "{bad_yaml}", "--out-dir",
                                              "{tmp}/built"], ["bad.yaml", "not valid YAML"]),
    "pools unknown rank": ("build_pools", ["--config", "{recipe}", "--out-dir", "{tmp}/built",
                                           "--ranks", "wizard"], ["unknown rank 'wizard'"]),
    "pools out-dir is a file": ("build_pools", ["--config", "{recipe}", "--out-dir", "{a_file}"],
                                ["--out-dir", "not a directory"]),
    # benchmark and parity_check
    "benchmark pairs 0": ("benchmark", ["--pairs", "0"], ["--pairs", "in 1.."]),
    "benchmark fast-seconds": ("benchmark", ["--fast-seconds", "-1"], ["--fast-seconds", ">= 0"]),
    # an unbounded time would keep the benchmark running for good
    "benchmark fast-seconds huge": ("benchmark", ["--fast-seconds", "1e9"],
                                    ["--fast-seconds", "in [0, 3600]"]),
    "mutation timeout huge": ("mutation_check", ["--timeout", "1e9"],
                              ["--timeout", "<= 86400"]),
    "benchmark rules": ("benchmark", ["--rules", "{bad_yaml}"], ["bad.yaml", "not valid YAML"]),
    "benchmark train config": ("benchmark", ["--train-config", "{missing}"],
                               ["--train-config", "missing.yaml"]),
    "parity jobs 0": ("parity_check", ["--jobs", "0"], ["--jobs", "1.."]),
    "parity rules": ("parity_check", ["--rules", "{schema}"], ["battle.duration_s"]),
}


# The first case of each script runs in a real process: its stderr, as the user sees it, has no
# traceback; the other cases make the same assertions on main(argv) run here.
IN_A_PROCESS = {next(case for case, (name, _, _) in CASES.items() if name == script_name)
                for script_name, _, _ in CASES.values()}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_input_is_one_line_and_exit_2(tmp_path, files, case, script_main):
    name, args, needles = CASES[case]
    names = {k: str(v) for k, v in files.items()}
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    run = script if case in IN_A_PROCESS else script_main
    r = run(name, *(a.format(tmp=tmp_path, **names) for a in args))
    assert_one_line_error(r, *needles)
    # nothing written, not even a temp file
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


# -- a board's round ------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [99999999999, 0, -1, 1.5, 2.0, True, False, "3", None,
                                 ROUND_CAP + 1, 2**31])
def test_board_round_is_bounded(bad):
    with pytest.raises(BoardError, match=rf"round must be a whole number in 1\.\.{ROUND_CAP} "
                                         rf"\(run\.round_cap"):
        Board.from_json({"runes": {}, "round": bad}, default_rules())


def test_board_round_within_the_cap_loads():
    for rnd in (1, ROUND_CAP):
        assert Board.from_json({"runes": {}, "round": rnd}, default_rules()).round == rnd


def test_board_file_with_a_huge_round_is_refused_by_the_cli(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"runes": {"1:0": ["fire", 1]}, "round": 99999999999}')
    good = tmp_path / "good.json"
    good.write_text('{"runes": {"1:0": ["fire", 1]}}')
    r = subprocess.run([sys.executable, "-m", "rune_env", "battle", str(good), str(bad)], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert_one_line_error(r, "bad.json", "round", f"1..{ROUND_CAP}")


# -- --help -----------------------------------------------------------------------------------
# every script: each option's help names its default or says it is required
HELP_SCRIPTS = sorted(p.stem for p in SCRIPTS.glob("*.py"))


def help_entries(text: str) -> list[str]:
    """Each option of a --help's options section, its lines joined."""
    section = text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    entries: list[list[str]] = []
    for line in section.splitlines():
        if re.match(r"^  -", line):
            entries.append([line])
        elif entries:
            entries[-1].append(line)
    return [" ".join(" ".join(e).split()) for e in entries]


@pytest.mark.parametrize("name", HELP_SCRIPTS)
def test_help_shows_every_default(name):
    r = script(name, "--help", timeout=120)
    assert r.returncode == 0, r.stderr
    entries = [e for e in help_entries(r.stdout) if not e.startswith("-h, --help")]
    assert entries
    for entry in entries:
        assert "default" in entry or "(required)" in entry, entry
    # the description is the script's docstring, whole (not cut after its first line)
    doc = (SCRIPTS / f"{name}.py").read_text().split('"""')[1].strip()
    last_line = doc.splitlines()[-1].strip()
    assert last_line in r.stdout


# -- progress bars -------------------------------------------------------------------------------
def test_progress_bar_on_stderr_when_forced_and_quiet_otherwise(tmp_path):
    args = ["--rank", "apprentice", "--agents", "random", "--runs", "2", "--max-round", "1"]
    r = script("make_opponents", *args, "--out", tmp_path / "a.json", "--progress")
    assert r.returncode == 0, r.stderr
    assert BAR.search(r.stderr) and "drafting random" in r.stderr
    assert not BAR.search(r.stdout) and "\r" not in r.stdout
    for quiet in ([], ["--no-progress"]):       # stderr not a terminal, or asked
        r = script("make_opponents", *args, "--out", tmp_path / f"b{len(quiet)}.json", *quiet)
        assert r.returncode == 0, r.stderr
        assert not BAR.search(r.stderr) and "\r" not in r.stderr
    r = script("make_opponents", *args, "--out", tmp_path / "c.json", "--progress",
               "--no-progress")                 # the last one given wins
    assert r.returncode == 0 and not BAR.search(r.stderr)


JSON_RUNS = {
    "balance_report": ["--battles", "1", "--runs", "1", "--jobs", "1"],
    "calibrate_ranks": ["--agent", "random", "--episodes", "1", "--ranks", "apprentice"],
    "ladder": ["--agents", "random", "--pools", SHIPPED_POOL, "--episodes", "1", "--samples", "1",
               "--out", "{tmp}/ladder"],
    "build_pools": ["--config", "{recipe}", "--out-dir", "{tmp}/built"],
}


@pytest.mark.parametrize("name", list(JSON_RUNS))
def test_progress_never_in_json_output(tmp_path, files, name):
    args = [str(a).format(tmp=tmp_path, recipe=files["recipe"]) for a in JSON_RUNS[name]]
    r = script(name, *args, "--json", "--progress")
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)                        # stdout is the JSON and nothing else
    assert "\r" not in r.stdout and not BAR.search(r.stdout)
    assert BAR.search(r.stderr), r.stderr       # the bar went to stderr


def test_a_closed_output_pipe_is_no_traceback():
    """`script.py | head -1`: the reader closes the pipe while the script still prints. That was
    `BrokenPipeError: [Errno 32] Broken pipe` with its traceback (balance_report.py,
    board_stats.py); a script made with script_parser now stops without a word on stderr.
    Here a script prints 200,000 lines (more than any pipe buffers) and the reader takes one."""
    code = ("import sys\nfrom agents.cli.args import script_parser\nscript_parser(None)\n"
            "for i in range(200_000):\n    print('line', i)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert proc.stdout.readline() == "line 0\n"
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert stderr == "", stderr
    assert proc.returncode == 1


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_is_one_line_and_leaves_no_output(tmp_path):
    """A script stopped by Ctrl-C says `interrupted` (it printed a 35-60 line traceback through
    whatever it was doing), exits as Python does on SIGINT, and writes no half a pool. The
    signal is sent once the progress bar shows, so the script is drafting, not importing."""
    import signal
    import threading
    import time
    out = tmp_path / "pool.json.gz"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "scripts" / "make_opponents.py"), "--rank", "apprentice",
         "--agents", "greedy", "--runs", "50000", "--out", str(out), "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lambda: proc.stderr.read(1), "")))
    reader.start()
    deadline = time.monotonic() + 120
    while "drafting" not in "".join(seen) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    stderr = "".join(seen)
    assert proc.returncode in (-signal.SIGINT, 128 + signal.SIGINT), (proc.returncode, stderr)
    assert "Traceback" not in stderr and stderr.rstrip().endswith("interrupted"), stderr
    assert not out.exists() and not list(tmp_path.iterdir())


def test_ladder_names_policies_as_evaluate_does_and_refuses_one_agent_twice(tmp_path, script_main):
    """A policy file is 'models/apprentice_s0' in the ladder as in evaluate.py and the benchmark
    table (the ladder said 'agents/models/apprentice_s0.pt'); two files that would share that
    name are named by more of their paths (test_labels.py); one file given twice, by two paths,
    is refused before anything is played."""
    shipped = REPO / "agents" / "models" / "apprentice_s0.pt"
    other_path = REPO / "agents" / "models" / ".." / "models" / "apprentice_s0.pt"
    r = script_main("ladder", "--agents", shipped, other_path, "--episodes", "1",
                    "--out", tmp_path / "ladder", "--no-progress")
    assert r.returncode == 2 and r.stderr.strip().endswith(f"--agents: '{other_path}' is given twice")
    out = tmp_path / "ladder2"
    r = script_main("ladder", "--agents", "greedy", shipped, "--episodes", "1", "--samples", "1",
                    "--out", out, "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert {row["name"] for row in json.loads(r.stdout)["ladder"]} == {"greedy",
                                                                      "models/apprentice_s0"}
    # each rating with its bootstrap interval over the drafting runs (one run here: every
    # resample is that run, so the interval is the rating itself)
    for row in json.loads(r.stdout)["ladder"]:
        assert row["rating_ci"] == pytest.approx([row["rating"], row["rating"]])
    # the head-to-head matrix (both ways round) and the agents' equilibrium, in the JSON and
    # as a picture
    data = json.loads(r.stdout)
    names, scores = data["matrix"]["names"], data["matrix"]["scores"]
    assert set(names) == {"greedy", "models/apprentice_s0"}
    assert scores[0][1] + scores[1][0] == pytest.approx(1.0) and scores[0][0] == 0.5
    # the picture draws the diagonal grey, unplayed (it showed ".50" as if played)
    from conftest import script_module
    drawn = script_module("ladder").picture_scores(data)
    assert np.isnan(np.diag(drawn)).all() and drawn[0][1] == scores[0][1]
    assert sum(data["equilibrium"].values()) == pytest.approx(1.0)
    # alpha-Rank of two: pi_a = 1 / (1 + exp(-(m - 1) u)), u = alpha (s_ab - s_ba)
    # (test_alpharank.py), on the matrix the JSON gives
    a, b = names.index("greedy"), names.index("models/apprentice_s0")
    u = 100 * (scores[a][b] - scores[b][a])
    # (1 / (1 + e^-x) as (1 + tanh(x / 2)) / 2, which does not overflow at x = 4900)
    assert data["alpharank"]["greedy"] == pytest.approx((1 + math.tanh(49 * u / 2)) / 2, abs=1e-9)
    assert "alpha-Rank of the same matrix" not in r.stdout          # (the JSON alone)
    assert (out / "matrix.png").stat().st_size > 1000 and (out / "tb" / "matrix").is_dir()
    assert (out / "tb" / "models_apprentice_s0").is_dir()
    # a rerun into the same --out replaces its TensorBoard runs (it added a second event file)
    r = script_main("ladder", "--agents", "greedy", shipped, "--episodes", "1", "--samples", "1",
                    "--out", out, "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    for run in ("greedy", "models_apprentice_s0", "matrix"):
        assert len(list((out / "tb" / run).glob("events.out.tfevents.*"))) == 1, run
