"""The house's rules, checked on the code as it stands (docs/ARCHITECTURE.md, "Layers"):

- agents/ keeps at its root only the agents (the package `__init__` with `make_agent`, the
  baselines), the `policy/` package and `search/` (the board search and the search player, which
  `make_agent` builds, so it sits at the root's layer); everything else lives in a sub-package named for what it is;
- no source file over 600 lines except the numba kernel, no function over 100 lines, in the
  package, the agents, the scripts and the tests;
- no script edits `sys.path` (the README's install makes the packages importable);
- the max-HP formula reads `hp_per_round` in one module, `rune_env/rules/hp.py`, and the reward
  options' written form (`artifact:<id>`) is spelled in one, `rune_env/run/rewards.py`;
- imports inside agents/ go downward only (the layer order below).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("rune_env", "agents", "scripts", "tests")
KERNEL = Path("rune_env/battle/fast/kernel.py")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 100
# agents/ bottom to top: a module may import its own layer and those below, never one above
AGENT_LAYERS = {"policy": 0, "search": 0, "": 0, "cli": 1, "evaluation": 2, "train": 3, "design": 3, "devtools": 4}


def _sources(*dirs: str):
    for d in dirs:
        for path in sorted((ROOT / d).rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield path, path.relative_to(ROOT)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_agents_root_holds_only_the_agents():
    root_modules = sorted(p.name for p in (ROOT / "agents").glob("*.py"))
    # the factory, the baseline agents and the words of agent names (which the policy and search
    # packages below the factory parse their names by)
    assert root_modules == ["__init__.py", "baselines.py", "names.py"], root_modules
    packages = sorted(p.name for p in (ROOT / "agents").iterdir() if (p / "__init__.py").exists())
    assert packages == ["cli", "design", "devtools", "evaluation", "policy", "search", "train"], packages


def test_no_file_over_600_lines_but_the_kernel():
    long = [f"{rel}: {n} lines" for path, rel in _sources(*SOURCE_DIRS)
            if rel != KERNEL and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES]
    assert not long, long


def test_no_function_over_100_lines():
    long = []
    for path, rel in _sources(*SOURCE_DIRS):
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{rel}:{node.lineno} {node.name}: {n} lines")
    assert not long, long


def test_no_script_edits_sys_path():
    editing = [str(rel) for path, rel in _sources("scripts")
               if any(isinstance(n, ast.Attribute) and n.attr == "path" and isinstance(n.value, ast.Name)
                      and n.value.id == "sys" for n in ast.walk(_tree(path)))]
    assert not editing, editing


def test_max_hp_formula_has_one_home():
    # the formula's per-round term is read in rules/hp.py only (the schema declares the key)
    readers = sorted({str(rel) for path, rel in _sources("rune_env", "agents", "scripts")
                      for n in ast.walk(_tree(path))
                      if isinstance(n, ast.Attribute) and n.attr in ("hp_per_round", "base_hp")})
    assert readers == ["rune_env/rules/hp.py"], readers


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def test_reward_option_strings_have_one_home():
    spelling = []
    for path, rel in _sources("rune_env", "agents", "scripts"):
        tree = _tree(path)
        skip = _docstrings(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip \
                    and n.value.startswith("artifact:"):
                spelling.append(str(rel))
    # rewards.py spells the separator (the ARTIFACT category and ':'), not necessarily this literal
    assert set(spelling) <= {"rune_env/run/rewards.py"}, spelling
    text = (ROOT / "rune_env/run/rewards.py").read_text(encoding="utf-8")
    assert "class RewardOption" in text and "REWARD_CATEGORIES" in text


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "agents":
        return None
    sub = parts[1] if len(parts) > 1 and parts[1] in AGENT_LAYERS else ""
    return AGENT_LAYERS[sub]


def _absolute(rel: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = list(rel.parent.parts)     # a module's package, or an __init__'s own
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def test_agents_import_downward_only():
    upward = []
    for path, rel in _sources("agents"):
        own = _layer(".".join(rel.with_suffix("").parts))
        for node in ast.walk(_tree(path)):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _absolute(rel, node)
                names = [target] + ([f"{target}.{a.name}" for a in node.names] if target == "agents" else [])
            for name in names:
                layer = _layer(name)
                if layer is not None and own is not None and layer > own:
                    upward.append(f"{rel}:{node.lineno} imports {name}")
                sides = {rel.parts[1] if len(rel.parts) > 2 else "", *name.split(".")[1:2]}
                if sides == {"train", "design"}:
                    upward.append(f"{rel}:{node.lineno} imports {name} (train and design side by side)")
    assert not upward, upward


def test_the_checks_see_the_code():
    # a broken walk would pass every check above vacuously
    assert sum(1 for _ in _sources("agents")) > 40 and sum(1 for _ in _sources("scripts")) > 15
    assert _layer("agents.train.ppo") == 3 and _layer("agents.cli.args") == 1 and _layer("agents") == 0
