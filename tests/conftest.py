"""Shared fixtures. Rules tests read the frozen copy tests/data/rules.yaml, or the file named by
RUNE_TEST_RULES (scripts/mutation_check.py points it at a mutated copy)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rune_env.rules import Board, load_rules

TESTS = Path(__file__).parent
FROZEN_RULES = TESTS / "data" / "rules.yaml"


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
