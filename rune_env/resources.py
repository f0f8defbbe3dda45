"""The config files the package ships: the rules, the opponent pools, the example boards, the
training configs and the ranks' recipes.

They live in the repository's top-level `configs/` (designers edit them there). pyproject.toml
maps the package `rune_env.configs` onto that folder, so a wheel (`pip install .`, `pip wheel .`)
carries them as package data, `rune_env/configs/...`. `configs()` finds them in either install:

- installed from a wheel: `importlib.resources.files("rune_env") / "configs"`, the package data;
- a checkout (the editable install `pip install -e .`, or the source tree on `sys.path`): there
  is no `rune_env/configs/`, so the live folder `configs/` next to the package is read.

(`importlib.resources.files("rune_env.configs")` is not used: setuptools' editable finder does not
map a nested package without an `__init__.py`, and `configs/` is a folder of data, not a package.)

`config_path(*parts)` is a plain file-system path, which `load_rules` and the pool loader read and
against which `extends: default.yaml` resolves. When the package is imported from a zip file the
files are not on disk: the whole tree is then copied once into a temporary directory (what
`importlib.resources.as_file` does for one file, here for the folder), so the relative references
among the files still resolve.

This module imports nothing of rune_env; every layer may use it.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path

try:
    from importlib.resources.abc import Traversable
except ImportError:  # Python 3.10
    from importlib.abc import Traversable

__all__ = ["configs", "configs_dir", "config_path", "default_rules_path", "opponents_dir",
           "boards_dir", "train_configs_dir", "ranks_path"]

# The checkout's configs/: <repository>/rune_env/resources.py -> <repository>/configs
_CHECKOUT_CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def configs() -> Traversable:
    """The shipped configs folder as a Traversable: the wheel's package data if there is any,
    else the checkout's `configs/` (a `Path`)."""
    shipped = resources.files(__package__ or "rune_env") / "configs"
    if shipped.is_dir():
        return shipped
    return _CHECKOUT_CONFIGS


@lru_cache(maxsize=None)
def configs_dir() -> Path:
    """The shipped configs folder on disk (extracted to a temporary directory if need be)."""
    root = configs()
    if isinstance(root, Path):
        return root.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="rune_env_configs_"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    _copy_tree(root, tmp)
    return tmp


def _copy_tree(src: Traversable, dst: Path) -> None:
    for item in src.iterdir():
        if item.is_dir():
            (dst / item.name).mkdir()
            _copy_tree(item, dst / item.name)
        elif item.is_file():
            (dst / item.name).write_bytes(item.read_bytes())


def config_path(*parts: str) -> Path:
    """A shipped config file or folder, e.g. ``config_path("rules", "default.yaml")``."""
    return configs_dir().joinpath(*parts)


def default_rules_path() -> Path:
    """configs/rules/default.yaml, the rules every command and env uses by default."""
    return config_path("rules", "default.yaml")


def opponents_dir() -> Path:
    """configs/opponents/, the shipped opponent pool of each rank (<rank id>.json)."""
    return config_path("opponents")


def boards_dir() -> Path:
    """configs/boards/, the example boards."""
    return config_path("boards")


def train_configs_dir() -> Path:
    """configs/train/, the training configs (quick.yaml, apprentice.yaml)."""
    return config_path("train")


def ranks_path() -> Path:
    """configs/ranks.yaml, the recipes of the shipped opponent pools."""
    return config_path("ranks.yaml")
