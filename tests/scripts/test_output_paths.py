"""Output paths and up-front checks of the scripts: an output file or directory that cannot be
written (a directory where a file goes, a path under a regular file, /proc/x: refused even for
root, whom os.access lets through), a chart of a format matplotlib does not write, a repeated
or blank value, or a league config whose duel_kwargs or members do not load, is one `error: ...`
line and exit status 2, checked before any work, and nothing is left behind in tmp_path. Every
--runs-dir is checked by the one agents.cli.args.check_runs_dir; the league members the check
loads are the ones the run plays (each policy file read once).

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


# the scripts that make run directories under --runs-dir, each with the rest of a command line
RUNS_DIR_SCRIPTS = [("train", ["--config", str(TRAIN_CONFIG)]),
                    ("league", ["--config", str(LEAGUE_CONFIG)]),
                    ("exploit", ["--target", "greedy"]),
                    ("train_rllib", ["--config", str(TRAIN_CONFIG)]),
                    ("sweep", ["--config", str(TRAIN_CONFIG)])]

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
    ("exploitability", ["--quick", "--pool", str(POOL), "--players", "greedy", "--holdings",
                        "--gap-chart", "/proc/x/g.png"], ["--gap-chart", "cannot write in /proc"]),
    ("exploitability", ["--quick", "--pool", str(POOL), "--players", "greedy", "--holdings",
                        "--gap-chart", "{tmp}/g.txt"], ["--gap-chart", ".png"]),
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
      for name, extra in RUNS_DIR_SCRIPTS
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


def test_check_runs_dir(tmp_path, capsys):
    """agents.cli.args.check_runs_dir: None for a folder it can write in (made or not yet);
    for a regular file, 2 and the line check_output_dir words, `--runs-dir FILE: not a
    directory`, on stderr."""
    from agents.cli.args import check_runs_dir
    file = tmp_path / "a_file"
    file.write_text("in the way\n")
    assert check_runs_dir(tmp_path) is None and check_runs_dir(tmp_path / "new" / "runs") is None
    assert capsys.readouterr().err == ""
    assert check_runs_dir(file) == 2
    assert capsys.readouterr().err == f"error: --runs-dir {file}: not a directory\n"
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("name,extra", RUNS_DIR_SCRIPTS, ids=[n for n, _ in RUNS_DIR_SCRIPTS])
def test_runs_dir_checked_by_the_shared_check(script_main, monkeypatch, tmp_path, name, extra):
    """Each script that takes --runs-dir checks it with check_runs_dir (one home for the check),
    before any work: a stand-in that refuses every DIR (status 2, its own line), given the DIR as
    typed, is what the script reports, and nothing is made."""
    from conftest import script_module
    seen = []

    def refuse(path):
        seen.append(str(path))
        print("error: refused by the stand-in", file=sys.stderr)
        return 2
    monkeypatch.setattr(script_module(name), "check_runs_dir", refuse)
    r = script_main(name, *extra, "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, "refused by the stand-in")
    assert seen == [str(tmp_path / "runs")]
    assert tree(tmp_path) == []


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
    # the duel learner's rollout: 10^7 steps x 1 env of the duel's 1780 observation values
    ({"ppo": {"n_steps": 10_000_000}}, ["ppo.n_steps x n_envs = 10000000 x 1", "GiB"]),
]


@pytest.mark.parametrize("changes,needles", LEAGUE_CASES,
                         ids=["nan", "negative", "rank", "unknown_key", "agent", "pickled",
                              "rollout"])
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


def test_league_loads_each_member_once(script_main, monkeypatch, tmp_path):
    """The members check_league loads are the ones run_league plays: a policy member's file is
    read once in a whole (tiny) league run, not once by the check and again by the run. The run
    reads three exported policies, each once: the member (the check), and at the end the
    learner's final_policy.pt (the final rating) and the same file again (the final evaluation's
    own PolicyAgent, as before); no snapshot (snapshot_every 10**6 > 64 steps)."""
    import agents.policy
    reads = []
    real = agents.policy.load_policy

    def counted(path, *args, **kwargs):
        reads.append(Path(path).name)
        return real(path, *args, **kwargs)
    monkeypatch.setattr(agents.policy, "load_policy", counted)
    config = _league_config(tmp_path, members=[{"name": "greedy", "agent": "greedy"},
                                               {"name": "a0", "agent": str(POLICY)}],
                            ppo={"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                            policy_kwargs={"net_arch": [16]}, snapshot_every=10**6,
                            rating_games=2, final_eval_games=1)
    r = script_main("league", "--config", config, "--runs-dir", tmp_path / "runs",
                    "--no-progress")
    assert r.returncode == 0, r.stderr
    assert reads.count(POLICY.name) == 1, reads
    assert sorted(reads) == sorted([POLICY.name, "final_policy.pt", "final_policy.pt"])


# -- benchmark.py: the training config's model built before the measurements -----------------------
def test_benchmark_train_config_model_checked_first(script_main, tmp_path):
    cfg = yaml.safe_load(TRAIN_CONFIG.read_text())
    cfg["policy_kwargs"] = {"net_arch": [-1]}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = script_main("benchmark", "--train-config", path, "--train-steps", "10")
    # refused with the config (policy_kwargs are checked as an exported policy keeps them)
    assert_one_line_error(r, "--train-config", "policy_kwargs: net_arch must be a whole number")


def test_an_output_that_is_an_input_is_refused(script_main, tmp_path):
    """board_stats.py --out naming the pool it reads replaced the pool with its report; the same
    file by another path (a symlink) too. Refused in one line, the pool untouched."""
    import shutil
    pool = tmp_path / "pool.json.gz"
    shutil.copy(REPO / "configs" / "opponents" / "apprentice.json.gz", pool)
    before = pool.read_bytes()
    (tmp_path / "link.json.gz").symlink_to(pool)
    for out in (pool, tmp_path / "link.json.gz"):
        r = script_main("board_stats", "--pools", pool, "--out", out, "--no-progress")
        assert r.returncode == 2 and "(it would be overwritten)" in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1
    assert pool.read_bytes() == before


def test_exploit_replaces_only_its_own_results(script_main, tmp_path):
    """exploit.py --run-name NAME deleted whatever NAME was (and NAME.partial) to write its
    result there. An existing NAME is now kept unless --force, and --force replaces only an
    exploit.py result (exploit.json in it); a NAME.partial that is not an unfinished run of its
    own (its .exploit-partial mark) is kept too. All refused before anything trains."""
    thesis = tmp_path / "thesis"
    (thesis / "ch1").mkdir(parents=True)
    r = script_main("exploit", "--target", "greedy", "--runs-dir", tmp_path, "--run-name", "thesis")
    assert r.returncode == 2 and "thesis exists (pass --force to replace it)" in r.stderr, r.stderr
    r = script_main("exploit", "--target", "greedy", "--runs-dir", tmp_path, "--run-name", "thesis",
                    "--force")
    assert r.returncode == 2 and "is not an exploit.py result (no exploit.json in it)" in r.stderr
    (tmp_path / "notes.partial").mkdir()
    r = script_main("exploit", "--target", "greedy", "--runs-dir", tmp_path, "--run-name", "notes")
    assert r.returncode == 2 and "is not an unfinished exploit.py run" in r.stderr, r.stderr
    assert (thesis / "ch1").is_dir() and (tmp_path / "notes.partial").is_dir()


def test_exploit_takes_rules_and_names_a_conflict(script_main, tmp_path):
    """exploit.py was the one design script without --rules (the duels' rules went through a
    copy of its config's duel_kwargs). --rules FILE plays under FILE; a config whose
    duel_kwargs name other rules is refused in one line, before anything trains."""
    import yaml
    variant = tmp_path / "variant.yaml"
    variant.write_text("extends: default.yaml\nbattle:\n  base_hp: 120\n")
    other = tmp_path / "other.yaml"
    other.write_text("extends: default.yaml\nbattle:\n  base_hp: 130\n")
    config = tmp_path / "br.yaml"
    config.write_text(yaml.safe_dump({"duel_kwargs": {"rank": "apprentice", "rules": str(other)}}))
    r = script_main("exploit", "--target", "greedy", "--config", config, "--rules", variant,
                    "--runs-dir", tmp_path / "runs")
    assert r.returncode == 2 and "plays under duel_kwargs.rules" in r.stderr, r.stderr
    assert not (tmp_path / "runs").exists()
