"""Shared fixtures. Rules tests read the frozen copy tests/data/rules.yaml, or the file named by
RUNE_TEST_RULES (scripts/mutation_check.py points it at a mutated copy)."""
from __future__ import annotations

import atexit
import copy
import importlib.util
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from rune_env.rules import Board, load_rules
from rune_env.rules.config import Rules

# What a test process writes outside pytest's tmp_path lives in one folder of its own, removed
# when the process ends (a test run used to leave a rune-key-* and SB3-* folders in the temp
# directory every time). A worker of a test's SubprocVecEnv or multiprocessing pool imports
# this module too, only to unpickle its target: it makes no folder (it ends without running
# exit handlers, so each left an empty one behind) and keeps the test process's, through the
# variables below, which it inherits. A worker is told by its name, which it has before it
# unpickles its target (`multiprocessing.parent_process()` is set only after).
_PROCESS_TMP: Path | None = None
if multiprocessing.current_process().name == "MainProcess":
    _PROCESS_TMP = Path(tempfile.mkdtemp(prefix="rune-tests-"))
    atexit.register(shutil.rmtree, _PROCESS_TMP, ignore_errors=True)
    # The key that signs the checkpoints the tests save (agents/policy/trust.py): a fresh one per
    # process, never the user's own (~/.config/rune-env/checkpoint.key); the scripts the tests
    # start inherit it.
    os.environ["RUNE_ENV_KEY_FILE"] = str(_PROCESS_TMP / "checkpoint.key")
    # stable-baselines3 makes a log folder (SB3-<time> in the temp directory) for every model
    # that learns without a logger of its own, as the tests' small models do: there, instead.
    os.environ["SB3_LOGDIR"] = str(_PROCESS_TMP / "sb3")
os.environ.pop("RUNE_ENV_TRUST_PICKLE", None)
# torch on one thread in the test processes, as the scripts run it (--torch-threads 1): the tests
# run in one process per core (pytest-xdist), and torch's default of a thread per core spins
# against the other processes. Measured on 2 busy cores: a policy's 10 evaluation runs took 9.4 s
# of CPU on two threads, 2.0 s on one (the RLlib acceptance test's 400 in-process runs, 800 s).
# Set before torch is imported, which reads it then; one set outside is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

TESTS = Path(__file__).parent
REPO = TESTS.parent
SCRIPTS = REPO / "scripts"
FROZEN_RULES = TESTS / "data" / "rules.yaml"


# -- the heavier variants: one switch ------------------------------------------------------------
# Tests marked `heavy` repeat a default test at a larger scale (more boards, a longer walk or
# training run); they are skipped unless the switch is on: `pytest --heavy`, or RUNE_HEAVY=1 in the
# environment (the option's default, for runs started by other tools).
HEAVY_ENV = "RUNE_HEAVY"
_HEAVY = {"on": os.environ.get(HEAVY_ENV) == "1"}


def pytest_addoption(parser):
    parser.addoption("--heavy", action="store_true", default=_HEAVY["on"],
                     help=f"also run the heavier variants (tests marked heavy); {HEAVY_ENV}=1 "
                          "does the same")


def pytest_configure(config):
    _HEAVY["on"] = bool(config.getoption("heavy"))
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        compile_once_before_the_workers()


# -- the compiled code, on a fresh checkout ------------------------------------------------------
# numba compiles the fast engine's kernel and the env's observation on first use and caches the
# machine code beside them (__pycache__): a minute of CPU, once per checkout. With the tests in
# one process per core, every process (and the scripts they start) would reach its first battle
# before any cache was written and compile the same code at the same time. So on a fresh checkout
# the controller compiles it before the test processes start, the two parts side by side (the
# battle kernel 47 s of CPU, the observation 21 s, measured on 2 busy cores).
WARM_UP = ("from rune_env.battle.fast import warm_up; warm_up()",
           "from rune_env.envs.run_env import RuneRunEnv; RuneRunEnv().reset(seed=0)")


def compile_once_before_the_workers() -> None:
    cache = REPO / "rune_env" / "battle" / "fast" / "__pycache__"
    if os.environ.get("NUMBA_CACHE_DIR") or any(cache.glob("kernel.*.nbi")):
        return          # compiled already (or cached elsewhere): each process loads it
    print("compiling the fast engine and the observation once (a fresh checkout; later runs load "
          "them)", file=sys.stderr)
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=REPO) for code in WARM_UP]
    for proc in procs:
        proc.wait()     # a failure shows again, and better, in the tests themselves


def pytest_collection_modifyitems(config, items):
    if heavy_variants():
        return
    skip = pytest.mark.skip(reason=f"heavy variant: run with pytest --heavy (or {HEAVY_ENV}=1)")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)


def heavy_variants() -> bool:
    """Whether the heavier variants run (for a test whose size, not whether it runs, depends on
    the switch). Test modules are imported after pytest_configure, so this is already set."""
    return _HEAVY["on"]


def _rules_path() -> Path:
    return Path(os.environ.get("RUNE_TEST_RULES", FROZEN_RULES))


_RULES = None


def frozen_rules():
    global _RULES
    if _RULES is None:
        _RULES = load_rules(_rules_path())
    return _RULES


@pytest.fixture
def rules():
    return frozen_rules()


def board(runes: dict | None = None, **kw) -> Board:
    """Build a validated board from the file format: board({"1:0": ("fire", 1)}, core="moon")."""
    data = {"runes": {k: list(v) for k, v in (runes or {}).items()}}
    for key, value in kw.items():
        if key == "hand":
            value = [list(v) for v in value]
        if key == "open_sectors" or key in ("relics", "boss_rules"):
            value = list(value)
        data[key] = value
    return Board.from_json(data, frozen_rules(), source="test board")


# -- helpers shared by the hand-worked rule tests ------------------------------------------------
def run(b0, b1=None):
    """A traced battle under the frozen rules; the default opponent is an empty board."""
    from rune_env.battle import battle
    return battle(b0, b1 if b1 is not None else board({}), frozen_rules(), trace=True)


def events(r, type_, **match):
    """The trace's events of one type whose fields equal `match`."""
    return [e for e in r.events
            if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]


def first_cast(r, cell, side=0):
    return events(r, "cast", side=side, cell=cell)[0]


def approx(x):
    return pytest.approx(x, rel=1e-12)


def soak(k=3, sector=5):
    """k grade-III resonators in ring 3 sector `sector` (open it with open_sectors=[sector]):
    the opponent's erosions seal them first, so the runes under test stay unsealed."""
    return {f"3:{3 * sector + j}": ("resonator", 3) for j in range(k)}


# -- shared by the engines' parity, the run invariants and the compiled observation -------------
# The cores a random run picks from (None: no core).
CORES = (None, "sun", "star", "moon", "eclipse", "tree")


def make_battle_fn(state, rng, real_share: float):
    """A battle function: a real battle with probability `real_share`, else a seeded outcome for
    the player's seat (win 45%, loss 35%, draw 20%)."""
    from rune_env.battle.engine import battle
    from rune_env.battle.result import BattleResult
    from rune_env.run.loop import player_seat

    def fn(b0, b1, rules):
        u = rng.random()
        if u < real_share:
            return battle(b0, b1, rules)
        seat = player_seat(state.round)
        v = rng.random()
        winner = seat if v < 0.45 else (1 - seat if v < 0.8 else None)
        return BattleResult(winner=winner, time=60.0, hp=(1.0, 1.0), max_hp=(1.0, 1.0),
                            casts=(0, 0))
    return fn


def retuned_rules() -> Rules:
    """The frozen rules with most battle numbers moved off their values (a radius-4 circle, four
    grades): the engines' parity and the compiled observation are checked on a second rules set,
    so a kernel that hard-coded a frozen number would show."""
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    d = copy.deepcopy(data)
    b = d["battle"]
    b.update(duration_s=45, base_interval_s=0.37, base_hp=80, hp_per_round=40, curse_heal_x=0.3)
    d["rings"]["power_x"] = [1.0, 1.3, 1.6, 1.9]                     # radius 4: 60 cells
    d["grades"]["power_x"] = [1.0, 1.7, 2.9, 4.4]                    # four grades
    r = d["runes"]
    r["light"]["unseals_by_grade"] = [1, 1, 2, 3]
    r["mimic"]["copy_x_by_grade"] = [0.5, 0.7, 0.9, 1.1]
    r["wind"]["hits"] = 3
    r["dark"]["curse_s"] = 2.2
    r["ice"]["freeze_s"] = 1.7
    r["thunder"]["barrier_wear"] = 2.5
    r["delay"].update(period=3, power_x=3.1)
    r["amplify"]["increase"] = 0.6
    r["earth"]["outermost_wards"] = 2
    for f in d["flows"]:
        f["multiplier"] = round(f["multiplier"] * 1.07, 3)
        if f["id"] == "firestorm":
            f.update(erosions=1, storm_delay_s=0.2)
        if f["id"] == "blizzard":
            f.update(extra_casts=1, curse_s=1.1)
        if f["id"] == "drizzle":
            f.update(drizzle_charges=2, reflect=0.15)
        if f["id"] == "discharge":
            f["barrier_strip"] = 0.45
        if f["id"] == "umbra":
            f["freeze_duration_x"] = 1.3
    d["flow_limits"].update(reflect_cap=0.7, drizzle_max_charges=3, drizzle_attack_x=0.65,
                            storm_budget_s=0.9)
    d["attunement"]["multiplier"] = 1.4
    for p in d["resonance"]["patterns"]:
        p["normal"] += 0.1
        p["loose"] += 0.15
    d["opposition"].update(pairs=[["fire", "water"], ["light", "dark"], ["wind", "earth"]],
                           multiplier=0.7)
    d["affinity"].update(slope=0.5, min=0.7, max=1.5)
    d["overdrive"].update(start_s=10, per_second=0.2)
    d["erosion"].update(per_cycle=2, seal_cap_divisor=3)
    d["cores"]["moon"]["power_x_by_kind"] = {"fire": 1.1, "earth": 0.8}
    d["cores"]["sun"]["core_flow_strength"] = 0.4
    d["cores"]["eclipse"]["outermost_power_x"] = 0.75
    d["boss_rules"]["mirror"]["resonance_add"] = 0.1
    d["boss_rules"]["swift"]["power_x"] = 1.05
    d["relics"]["warding_seal"]["unseal_after_s"] = 2.5
    d["relics"]["hourglass"]["seal_cap_divisor"] = 4
    d["artifacts"]["ward_stone"]["wards"] = 2
    d["artifacts"]["scapegoat_doll"]["absorbs"] = 3
    return Rules.from_dict(d, source="retuned test rules")


# -- the scripts' main(argv), in this process ----------------------------------------------------
# A bad-input case checks one `error: ...` line and the exit status; starting a Python process for
# each (importing numpy, numba, the rules) costs far more than the case, so most cases call the
# script's main(argv) here. A few real processes per script stay in the tests (a traceback-free
# stderr of the real process, the progress bars).
_SCRIPT_MODULES: dict = {}


def script_module(name: str):
    """scripts/<name>.py imported by path (once per session; the scripts are not a package)."""
    if name not in _SCRIPT_MODULES:
        path = SCRIPTS / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"script_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module     # pydantic resolves a script's annotations through it
        spec.loader.exec_module(module)
        _SCRIPT_MODULES[name] = module
    return _SCRIPT_MODULES[name]


def _run_main(main, argv0: str, args, capsys, monkeypatch) -> subprocess.CompletedProcess:
    """main(argv) run here as its process runs it, returned as subprocess.run returns it (a
    CompletedProcess with returncode, stdout, stderr). argparse's exit and sys.exit become the exit
    status, as they do in the process; the environment is restored afterwards (a script may set a
    variable for the processes it starts, e.g. --trust-pickle), and so is torch's thread count
    (train.py sets the config's before it loads a checkpoint), if torch was loaded before."""
    argv = [str(a) for a in args]
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "argv", [argv0, *argv])
    environ = dict(os.environ)
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch else None
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    finally:
        os.environ.clear()
        os.environ.update(environ)
        torch = sys.modules.get("torch")
        if torch is not None and threads is not None and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    if isinstance(code, str):       # sys.exit("message"): Python prints it, exit status 1
        print(code, file=sys.stderr)
        code = 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess([argv0, *argv], code or 0, out, err)


@pytest.fixture
def script_main(capsys, monkeypatch):
    """run(name, *args): `python scripts/<name>.py ARGS` from the checkout, as scripts/<name>.py's
    main(argv) run in this process (see _run_main)."""
    def run(name: str, *args) -> subprocess.CompletedProcess:
        return _run_main(script_module(name).main, str(SCRIPTS / f"{name}.py"), args, capsys,
                         monkeypatch)
    return run


@pytest.fixture
def cli_main(capsys, monkeypatch):
    """run(*args): `python -m rune_env ARGS` from the checkout, as rune_env.cli.main(argv) run in
    this process (see _run_main)."""
    from rune_env.cli import main

    def run(*args) -> subprocess.CompletedProcess:
        return _run_main(main, "rune_env", args, capsys, monkeypatch)
    return run


# -- the shared tiny training run of tests/agents/test_train_*.py and test_evaluate.py ------------
@pytest.fixture(scope="session")
def smoke(tmp_path_factory):
    """The shared training run: --seed 1, so the run is named smoke__s1__<time>; the progress bar
    forced on (stderr is a pipe here). Session-scoped, so the three modules that read it share
    one training run; its helpers are tests/agents/test_train_runs.py's (imported here, when the
    first test asks for it, so a checkout without the `train` extra skips only those tests)."""
    from test_train_runs import TRAIN, run, tiny_config

    base = tmp_path_factory.mktemp("train")
    config = tiny_config(base / "tiny.yaml")
    runs = base / "runs"
    r = run(TRAIN, "--config", config, "--seed", 1, "--runs-dir", runs, "--progress")
    dirs = sorted(runs.iterdir()) if runs.is_dir() else []
    return {"result": r, "config": config, "runs": runs, "run_dir": dirs[0] if dirs else None}
