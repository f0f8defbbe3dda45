"""The fast engine's door: the rest of the package reaches `rune_env.battle.fast` only through
the names of its `__all__` (its `__init__` docstring lists them), never its modules
(compile.py's tables, kernel.py) directly. So the engine's inside can change without the envs.

Allowed to import the inside directly: the fast engine's own package, and the test and parity
tooling that checks the kernel against its sources (tests/, agents/devtools/, scripts/).
"""
from __future__ import annotations

import ast
from pathlib import Path

import rune_env.battle.fast as fast

REPO = Path(__file__).resolve().parents[2]
FAST = "rune_env.battle.fast"
FAST_DIR = REPO / "rune_env" / "battle" / "fast"
# where an import of the engine's own modules is allowed
INSIDE_ALLOWED = (FAST_DIR, REPO / "tests", REPO / "agents" / "devtools", REPO / "scripts")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path):
    """(absolute module, imported names) of every import in the file, relative ones resolved."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield module, tuple(alias.name for alias in node.names)


def _sources():
    for top in ("rune_env", "agents", "scripts"):
        yield from (p for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts)


def test_envs_import_only_the_public_names_of_the_fast_engine():
    public = set(fast.__all__)
    for path in (REPO / "rune_env" / "envs").glob("*.py"):
        for module, names in _imports(path):
            assert not module.startswith(FAST + "."), \
                f"{path.relative_to(REPO)} imports {module}: use {FAST}'s public names"
            if module == FAST:
                assert set(names) <= public, \
                    f"{path.relative_to(REPO)} imports {sorted(set(names) - public)} from {FAST}"


def test_only_the_engine_and_its_tooling_import_its_modules():
    offenders = []
    for path in _sources():
        if any(path.is_relative_to(d) for d in INSIDE_ALLOWED):
            continue
        for module, names in _imports(path):
            inside = module.startswith(FAST + ".") or (
                module == FAST and set(names) & {"compile", "kernel"})
            if inside:
                offenders.append(f"{path.relative_to(REPO)}: {module} {names}")
    assert not offenders, offenders


def test_the_public_names_exist_and_the_docstring_lists_them():
    for name in fast.__all__:
        assert getattr(fast, name) is not None, name
        assert name in fast.__doc__, f"{name} is public but not in {FAST}'s docstring"
    # the layouts are namedtuples of ints: compiled code reads their fields as constants
    for layout in (fast.BOARD_RECORD, fast.ANALYSIS_LAYOUT):
        assert all(type(v) is int for v in layout)
