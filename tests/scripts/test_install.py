"""Installing without `-e`: a wheel carries the shipped configs (the rules, the opponent pools, the
example boards, the training configs, the ranks) as package data, `rune_env/configs/`, and works
from any directory; the checkout (the editable install) reads the live files of `configs/`.

The wheel test builds a wheel, installs it into a fresh virtual environment (with the system's
site-packages, so numpy, numba and gymnasium need not download) and runs the CLI and the env from
a directory that is not the checkout; then it imports the package from the wheel as a zip file.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import rune_env
from rune_env import resources
from rune_env.envs.run_env import SHIPPED_POOLS
from rune_env.rules.config import DEFAULT_RULES_PATH, load_rules

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
FROM_CHECKOUT = Path(rune_env.__file__).resolve().parent == REPO / "rune_env"
DATA_SUFFIXES = (".yaml", ".json", ".gz")   # pyproject.toml's package-data globs


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")   # Python 3.11+
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _shipped_files() -> set[str]:
    """The files of configs/ the wheel must carry, relative to configs/."""
    return {p.relative_to(CONFIGS).as_posix() for p in CONFIGS.rglob("*")
            if p.is_file() and p.suffix in DATA_SUFFIXES and "__pycache__" not in p.parts}


def test_pyproject_lists_every_package():
    """pyproject.toml lists the packages by name (the shipped configs need a package-dir entry,
    which automatic discovery does not take): a new subpackage must be added there, or a wheel
    would go without it."""
    tool = _pyproject()["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(REPO).parts)
             for top in ("rune_env", "agents") for p in (REPO / top).rglob("__init__.py")}
    assert set(tool["packages"]) == found | {"rune_env.configs"}
    assert tool["package-dir"] == {"rune_env.configs": "configs"}
    assert set(tool["package-data"]["rune_env.configs"]) == {f"**/*{s}" for s in DATA_SUFFIXES}


@pytest.mark.skipif(not FROM_CHECKOUT, reason="rune_env is not imported from this checkout")
def test_the_checkout_reads_the_live_configs():
    """The editable install (and the source tree) read configs/ itself, which designers edit."""
    assert not (REPO / "rune_env" / "configs").exists()   # no copy inside the package shadows it
    assert resources.configs() == CONFIGS.resolve()
    assert resources.configs_dir() == CONFIGS.resolve()
    assert DEFAULT_RULES_PATH == CONFIGS.resolve() / "rules" / "default.yaml"
    assert SHIPPED_POOLS == CONFIGS.resolve() / "opponents"
    assert resources.ranks_path().is_file() and resources.boards_dir().is_dir()
    assert (resources.train_configs_dir() / "quick.yaml").is_file()
    assert load_rules().source == str(DEFAULT_RULES_PATH)


# -- the wheel ------------------------------------------------------------------------------------
def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _run(cmd: list, cwd: Path, env: dict | None = None) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env or _env(), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                                  f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def _version(dist: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in metadata.version(dist).split(".")[:2] if x.isdigit())
    except metadata.PackageNotFoundError:
        return ()


def _build_wheel(tmp: Path) -> Path:
    # Built from a copy of the sources, so the build's build/ and *.egg-info/ do not land in the
    # checkout (which other test runs and editors share).
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pt", "*.egg-info")
    for name in ("rune_env", "agents", "configs"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    out = tmp / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", src, "--no-deps", "-q", "-w", out]
    # With the installed setuptools when it can build the wheel (no download), else pip's
    # isolated build (it fetches setuptools).
    st = _version("setuptools")
    if st >= (70, 1) or (st >= (62, 3) and _version("wheel")):
        cmd.append("--no-build-isolation")
    _run(cmd, cwd=tmp)
    wheels = sorted(out.glob("rune_env-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _reuse_compiled_code(installed: Path) -> int:
    """The checkout's numba cache (the compiled kernel and observation: rune_env/**/__pycache__/
    *.nbi, *.nbc) copied beside the wheel's copies of the same sources; returns how many files.
    numba keys a cache entry by the source's content (a hash), the function's bytecode and the
    machine, so the wheel's processes load the machine code rather than compile it again: a
    minute of CPU, which was most of this test, spent on what the checkout's tests compiled
    already (compiling is what the first battle of any test does). Entries of a source that
    differs, or missing ones, are compiled as before. The checkout's kernel and observation are
    compiled (or loaded) first, so there is something to copy when this test runs first. (With
    NUMBA_CACHE_DIR set the checkout's cache is elsewhere: nothing is copied, the wheel compiles.)"""
    from rune_env.battle.fast import warm_up
    from rune_env.envs.run_env import RuneRunEnv
    warm_up()
    RuneRunEnv().reset(seed=0)
    copied = 0
    for cache in (REPO / "rune_env").rglob("__pycache__"):
        into = installed / cache.parent.relative_to(REPO / "rune_env") / "__pycache__"
        for f in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            source = f.name.split(".")[0] + ".py"
            if (into.parent / source).is_file() and \
                    (into.parent / source).read_bytes() == (cache.parent / source).read_bytes():
                into.mkdir(exist_ok=True)
                shutil.copy2(f, into / f.name)
                copied += 1
    return copied


def _venv_python(tmp: Path) -> tuple[Path, Path]:
    home = tmp / "venv"
    venv.create(home, system_site_packages=True, with_pip=False, symlinks=os.name != "nt")
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return home, python


ENV_SCRIPT = textwrap.dedent("""
    import json, sys
    import gymnasium as gym
    import rune_env
    from rune_env import resources
    from rune_env.envs.run_env import SHIPPED_POOLS, shipped_pool
    from rune_env.rules.config import DEFAULT_RULES_PATH, default_rules, load_rules

    seed_literal = load_rules(resources.config_path("rules", "seed_literal.yaml"))  # extends: default.yaml
    env = gym.make("rune_env/RuneRun-v0")
    obs, info = env.reset(seed=0)
    run_env = env.unwrapped
    prefer = ["choose_core", "choose_relic", "choose_reward", "buy_rune", "place", "ready"]
    steps, battle = 0, None
    while battle is None and steps < 20:
        mask = run_env.action_masks()
        legal = [a for a in run_env.table.actions if mask[a.id] and a.kind in prefer]
        action = min(legal, key=lambda a: (prefer.index(a.kind), a.id))
        obs, reward, terminated, truncated, info = env.step(action.id)
        assert env.observation_space.contains(obs)
        battle = info.get("battle")
        steps += 1
    print(json.dumps({
        "file": rune_env.__file__,
        "configs": str(resources.configs_dir()),
        "default_rules": str(DEFAULT_RULES_PATH),
        "default_hash": default_rules().hash,
        "seed_literal_hash": seed_literal.hash,
        "shipped_pools": str(SHIPPED_POOLS),
        "pool": str(shipped_pool(run_env.rules, run_env.rank)),
        "opponents": type(run_env.opponents).__name__,
        "steps": steps,
        "battle": battle is not None,
        "round": info["round"],
    }))
""")

ZIP_SCRIPT = textwrap.dedent("""
    import json
    import rune_env
    from rune_env import resources
    from rune_env.rules.config import DEFAULT_RULES_PATH, default_rules, load_rules
    configs = resources.configs_dir()
    print(json.dumps({
        "file": rune_env.__file__,
        "traversable": type(resources.configs()).__name__,
        "configs": str(configs),
        "default_rules": str(DEFAULT_RULES_PATH),
        "default_hash": default_rules().hash,
        "seed_literal_hash": load_rules(configs / "rules" / "seed_literal.yaml").hash,
        "pools": sorted(p.name for p in resources.opponents_dir().glob("*.json.gz")),
    }))
""")


@pytest.mark.outside_mutation_check
def test_a_wheel_ships_the_configs_and_runs_from_anywhere(tmp_path):
    """`pip install .` (a wheel, not editable): the default rules, `extends: default.yaml`, the
    shipped pools and the CLI work from a directory that is not the checkout."""
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    prefix = "rune_env/configs/"
    assert {n[len(prefix):] for n in names if n.startswith(prefix)} == _shipped_files()
    assert "rune_env/resources.py" in names and "agents/__init__.py" in names

    home, python = _venv_python(tmp_path)
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
          "--no-index", "--ignore-installed", wheel], cwd=tmp_path)
    site = json.loads(_run([python, "-c", "import json, sysconfig; "
                            "print(json.dumps(sysconfig.get_paths()['purelib']))"], cwd=tmp_path))
    _reuse_compiled_code(Path(site) / "rune_env")      # (none with NUMBA_CACHE_DIR set: then it compiles)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(CONFIGS / "boards" / "sun_firestorm.json", elsewhere / "A.json")
    shutil.copy(CONFIGS / "boards" / "tree_reserves.json", elsewhere / "B.json")
    expected = {"default_hash": load_rules(CONFIGS / "rules" / "default.yaml").hash,
                "seed_literal_hash": load_rules(CONFIGS / "rules" / "seed_literal.yaml").hash}

    result = json.loads(_run([python, "-m", "rune_env", "battle", "A.json", "B.json"],
                             cwd=elsewhere))
    assert result["winner"] in (0, 1, None) and result["time"] > 0 and len(result["hp"]) == 2

    info = json.loads(_run([python, "-c", ENV_SCRIPT], cwd=elsewhere).strip().splitlines()[-1])
    installed = Path(info["file"]).resolve().parent
    assert installed.is_relative_to(home.resolve()), info["file"]   # the wheel's, not the checkout's
    assert not installed.is_relative_to(REPO)
    assert Path(info["configs"]) == installed / "configs"
    assert Path(info["default_rules"]) == installed / "configs" / "rules" / "default.yaml"
    assert Path(info["shipped_pools"]) == installed / "configs" / "opponents"
    assert Path(info["pool"]) == installed / "configs" / "opponents" / "apprentice.json.gz"
    assert info["opponents"] == "PoolOpponents"
    assert {k: info[k] for k in expected} == expected
    assert info["battle"] and info["steps"] <= 20

    # imported from the wheel as a zip file: the configs are copied out, extends still resolves
    env = _env()
    env["PYTHONPATH"] = str(wheel)
    zipped = json.loads(_run([sys.executable, "-c", ZIP_SCRIPT], cwd=elsewhere,
                             env=env).strip().splitlines()[-1])
    assert Path(zipped["file"]).is_relative_to(wheel), zipped["file"]
    assert zipped["traversable"] != "PosixPath" and zipped["traversable"] != "WindowsPath"
    assert Path(zipped["default_rules"]) == Path(zipped["configs"]) / "rules" / "default.yaml"
    assert not Path(zipped["configs"]).exists()   # the copy is removed at exit
    assert {k: zipped[k] for k in expected} == expected
    assert zipped["pools"] == sorted(p.name for p in (CONFIGS / "opponents").glob("*.json.gz"))
