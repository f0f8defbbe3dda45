"""The two battle engines behind one name, and the process-wide default.

    battle_function("fast")       -> rune_env.battle.fast.fast_battle (compiled; the default)
    battle_function("reference")  -> rune_env.battle.battle (readable, with a trace)
    battle_function(None)         -> the default: $RUNE_ENGINE if set, else "fast"

Both take `(board0, board1, rules, seed=..., variant=...)` and give the same results (the fast
engine is checked against the reference on every golden battle and thousands of random pairs;
`scripts/parity_check.py`). The switch back to the reference is the env's `engine="reference"`,
a script's `--engine reference`, or `RUNE_ENGINE=reference` for a whole process tree (vectorised
envs in subprocesses inherit it).
"""
from __future__ import annotations

import os
from typing import Callable

ENGINES = ("fast", "reference")
ENGINE_VARIABLE = "RUNE_ENGINE"


def default_engine() -> str:
    name = os.environ.get(ENGINE_VARIABLE, "fast") or "fast"
    if name not in ENGINES:
        raise ValueError(f"${ENGINE_VARIABLE}={name!r}: the battle engine is one of {', '.join(ENGINES)}")
    return name


def battle_function(name: str | None = None) -> Callable:
    """The battle function of an engine by name (None: the default)."""
    name = default_engine() if name is None else name
    if name == "fast":
        from .fast import fast_battle
        return fast_battle
    if name == "reference":
        from .engine import battle
        return battle
    raise ValueError(f"unknown battle engine {name!r} (one of {', '.join(ENGINES)})")


def add_engine_argument(parser) -> None:
    """The scripts' switch: `--engine fast|reference` (default: $RUNE_ENGINE, else fast)."""
    parser.add_argument("--engine", choices=ENGINES, default=None,
                        help="battle engine (default: $RUNE_ENGINE, else fast; both play the "
                             "same battles, the reference is the readable one)")


def use_engine(name: str | None) -> None:
    """Make `name` this process's default engine, and its children's (subprocess envs)."""
    if name is not None:
        if name not in ENGINES:
            raise ValueError(f"unknown battle engine {name!r} (one of {', '.join(ENGINES)})")
        os.environ[ENGINE_VARIABLE] = name
