"""Shared fixtures. Rules tests read the frozen copy tests/data/rules.yaml, or the file named by
RUNE_TEST_RULES (scripts/mutation_check.py points it at a mutated copy)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from rune_env.rules import Board, load_rules

# The key that signs the checkpoints the tests save (agents/trust.py): a fresh one per session,
# never the user's own (~/.config/rune-env/checkpoint.key); the scripts the tests start inherit it.
os.environ["RUNE_ENV_KEY_FILE"] = str(Path(tempfile.mkdtemp(prefix="rune-key-")) / "checkpoint.key")
os.environ.pop("RUNE_ENV_TRUST_PICKLE", None)

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
