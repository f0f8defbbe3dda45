"""Every module path and dotted name the docs put in backticks resolves in the code base.

The docs (README.md, docs/*.md and the configs' READMEs) name files (`rune_env/run/loop.py`, `scripts/train.py`,
`configs/rules/default.yaml`) and Python names (`rune_env.battle.fast.fresh_module`,
`agents.policy.load_policy`). After a file moves or a function is renamed, a stale name in the docs
sends a newcomer nowhere; this test lists every one that no longer resolves.

What counts: a backticked token that starts with one of the project's top folders and names a
path (checked with the file system), or a dotted name that starts with `rune_env.` or `agents.`
(checked by importing the longest module prefix and following the rest as attributes). Tokens
with placeholders (`<name>`, `*`, `{...}`, `...`) and command lines (a space) are not names.
"""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve()
while not (ROOT / "pyproject.toml").exists():
    ROOT = ROOT.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "configs").rglob("*.md"))]
TOP_FOLDERS = ("rune_env/", "agents/", "scripts/", "configs/", "tests/", "docs/", ".ci/")
DOTTED_ROOTS = ("rune_env.", "agents.")
PLACEHOLDER = re.compile(r"[<>*{}]|\.\.\.|\bN\b|\bX\b")
TICKED = re.compile(r"`([^`\n]+)`")


def _ticked(text: str):
    # code blocks (```) hold commands and output, not references
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in TICKED.finditer(text):
        yield m.group(1).strip()


def _path_part(token: str) -> str:
    """`rune_env/run/loop.py:214` or `scripts/x.py::test` -> the path alone."""
    return re.split(r":", token, maxsplit=1)[0].rstrip(",.;")


def _module_file(parts: list[str]) -> Path | None:
    """The source file of a dotted module name, or None. `rune_env.configs` is the configs/ folder
    (pyproject's package-dir); read statically so optional extras (ray) need not be installed."""
    base = ROOT.joinpath(*parts)
    if parts[:2] == ["rune_env", "configs"]:
        base = ROOT.joinpath("configs", *parts[2:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _defines(body, name: str):
    """The node that defines `name` at the top of `body` (def, class, assignment, import), or None."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id == name:
                        return node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return node
        if isinstance(node, (ast.If, ast.Try)):      # names defined under `if TYPE_CHECKING` / try
            inner = _defines(node.body, name) or _defines(getattr(node, "orelse", []), name)
            if inner is not None:
                return inner
    return None


def _resolves_dotted(name: str) -> bool:
    parts = name.rstrip("()").rstrip(",.;").split(".")
    for cut in range(len(parts), 0, -1):
        source = _module_file(parts[:cut])
        if source is None:
            continue
        body = ast.parse(source.read_text(encoding="utf-8")).body
        for attr in parts[cut:]:
            if _module_file(parts[:cut] + [attr]) is not None and attr == parts[cut]:
                return True      # a submodule the package does not import in its __init__
            node = _defines(body, attr)
            if node is None:
                return False
            if not isinstance(node, ast.ClassDef):
                return True      # an attribute of a function or value: not followed further
            body = node.body
        return True
    return False


def _env_registered(token: str) -> bool:
    """`rune_env/RuneRun-v0` is an environment id: registered with Gymnasium in rune_env/__init__.py
    or with RLlib's registry (the duel) in agents/; either way the code spells it in quotes."""
    quoted = (f'"{token}"', f"'{token}'", f'"{token.split("/", 1)[1]}"')
    return any(q in py.read_text(encoding="utf-8")
               for folder in ("rune_env", "agents") for py in (ROOT / folder).rglob("*.py")
               for q in quoted)


def _references():
    for doc in DOCS:
        for token in _ticked(doc.read_text(encoding="utf-8")):
            if " " in token or PLACEHOLDER.search(token):
                continue
            if re.fullmatch(r"rune_env/Rune\w+-v\d+", token):
                yield doc.name, "env", token
            elif token.startswith(TOP_FOLDERS):
                yield doc.name, "path", token
            elif token.startswith(DOTTED_ROOTS) and re.fullmatch(r"[\w.]+(\(\))?", token):
                yield doc.name, "name", token


def test_docs_name_only_what_exists():
    stale = []
    for doc, kind, token in _references():
        if kind == "env":
            ok = _env_registered(token)
        elif kind == "path":
            path = _path_part(token)
            ok = (ROOT / path).exists() or (path.startswith("rune_env/configs/")
                                            and (ROOT / "configs" / path[len("rune_env/configs/"):]).exists())
        else:
            ok = _resolves_dotted(token)
        if not ok:
            stale.append(f"{doc}: `{token}`")
    assert not stale, "names in the docs that do not resolve:\n" + "\n".join(sorted(set(stale)))


def test_the_docs_name_some_code():
    # the scan itself works: the docs name many files and names (a broken regex would find none)
    kinds = [kind for _doc, kind, _t in _references()]
    assert kinds.count("path") > 50 and kinds.count("name") > 5, (kinds.count("path"), kinds.count("name"))


# The code's own docstrings and comments name modules too ("the method is in
# agents/design/metagame/exploitability.py"); after the house's reorganisation many still named
# the old flat modules (agents/audit/, the trust and sweep modules at agents/'s top), which
# --help printed.
CODE_PATH = re.compile(r"(?<![\w/.-])((?:agents|rune_env|scripts)/[\w/.-]*\.py)\b")
CODE_PLACEHOLDER = re.compile(r"/(?:NAME|[a-z])\.py$")   # scripts/NAME.py, scripts/x.py


def test_code_names_only_modules_that_exist():
    stale = []
    for py in sorted(p for folder in ("rune_env", "agents", "scripts", "tests")
                     for p in (ROOT / folder).rglob("*.py")):
        for n, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1):
            for path in CODE_PATH.findall(line):
                if not CODE_PLACEHOLDER.search(path) and not (ROOT / path).exists():
                    stale.append(f"{py.relative_to(ROOT)}:{n}: {path}")
    assert not stale, "module paths in the code that do not exist:\n" + "\n".join(stale)
