"""Checking what a user passes to the envs: integers, reals, actions, ranks (one or a mix), cores
and unlocked kinds, each to a ValueError or TypeError that names the argument and what it must be.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..files import shown  # noqa: F401  (the envs' error lines; re-exported)

from ..rules.config import KINDS, Rules

def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None,
              allow_none: bool = False, none_means: str = "") -> int | None:
    """`value` as an int in lo..hi (None allowed with `allow_none`), else a ValueError naming
    `name`."""
    if value is None and allow_none:
        return None
    if not _is_int(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        if lo is not None and hi is not None:
            want = f"an integer in {lo}..{hi}"
        elif lo is not None:
            want = f"an integer >= {lo}"
        else:
            want = "an integer"
        if allow_none:
            want += f", or None{none_means}"
        raise ValueError(f"{name} must be {want}; got {value!r}")
    return int(value)


def as_action(value: Any, name: str = "action") -> int:
    """An action as an int: a Python or numpy integer, or a 0-d integer array (what a policy's
    predict returns for one observation). Anything else is a TypeError naming the value and its
    type: int() would play 1.5 as action 1, "1" as 1 and True as 1, and an agent's bug (a float
    from arithmetic, a mask row instead of an index) would pass unseen."""
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        return int(value)
    if _is_int(value):
        return int(value)
    raise TypeError(f"{name} must be an integer (a Python or numpy integer, or a 0-d integer "
                    f"array); got {shown(value)} of type {type(value).__name__}")


def check_real(name: str, value: Any, lo: float | None = None, hi: float | None = None) -> float:
    """`value` as a finite float in [lo, hi], else a ValueError naming `name`."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) \
        and math.isfinite(value) and (lo is None or value >= lo) and (hi is None or value <= hi)
    if not ok:
        want = "a finite number" + (f" >= {lo:g}" if lo is not None else "") \
            + (f" <= {hi:g}" if hi is not None else "")
        raise ValueError(f"{name} must be {want}; got {value!r}")
    return float(value)


def check_rank(rules: Rules, rank: Any, name: str = "rank") -> int:
    """A rank given by name ("apprentice") or by number (0..5 with the default rules; an int or a
    string of ASCII digits, as the command line passes it) -> its index; else a ValueError naming
    `name` and listing the ranks. Other digits (Arabic-Indic, superscripts) are not numbers
    here, and a string of digits longer than RANK_DIGITS_MAX is out of range without being
    converted (int() of thousands of digits is Python's own error, or slow)."""
    names = [r.id for r in rules.spec.ranks]
    value = rank.strip() if isinstance(rank, str) else rank
    if isinstance(value, str) and value.isascii() and value.isdigit() \
            and len(value) <= RANK_DIGITS_MAX:
        value = int(value)
    if isinstance(value, str) and value in names:
        return names.index(value)
    if _is_int(value) and 0 <= value < len(names):
        return int(value)
    raise ValueError(f"{name} must be a rank name ({', '.join(names)}) or a number "
                     f"0..{len(names) - 1}; got {shown(rank)}")


RANK_DIGITS_MAX = 20   # a rank as a string of digits: longer ones are refused unconverted


MAX_RANK_MIX = 64      # ranks listed in one mix (a rank listed twice is drawn twice as often)


def check_rank_mix(rules: Rules, rank: Any, name: str = "rank") -> tuple[int, ...]:
    """A rank (as `check_rank` takes it) -> a one-rank tuple, or a non-empty list of ranks -> the
    tuple of their indices, a mix each run draws its rank from (`run_rank`); else a ValueError
    naming `name`."""
    if isinstance(rank, (list, tuple)):
        if not 1 <= len(rank) <= MAX_RANK_MIX:
            raise ValueError(f"{name} as a list must name 1..{MAX_RANK_MIX} ranks; got "
                             f"{len(rank)}")
        return tuple(check_rank(rules, r, f"{name}[{i}]") for i, r in enumerate(rank))
    return (check_rank(rules, rank, name),)


# the tag of the generator that draws a run's rank from a mix, so no other draw shares its stream
RANK_MIX_TAG = 0x72616e6b


def run_rank(mix: tuple[int, ...], run_seed: int) -> int:
    """The rank a run of this seed plays in a mix: drawn uniformly from the mix by a generator
    seeded with the run seed (so a run's rank depends on its seed alone: the same runs in any
    order, any number of envs, training or evaluation). A one-rank mix is that rank."""
    if len(mix) == 1:
        return mix[0]
    return mix[int(np.random.default_rng([run_seed, RANK_MIX_TAG]).integers(len(mix)))]


def check_core(rules: Rules, core: Any, name: str = "core") -> str | None:
    """None (the first step chooses the core) or a core of the rules; else a ValueError naming
    `name` and listing the cores."""
    if core is None or (isinstance(core, str) and core in rules.spec.cores):
        return core
    raise ValueError(f"{name} must be one of the cores ({', '.join(rules.spec.cores)}) or None "
                     f"(the first step chooses it); got {shown(core)}")


def check_unlocked(unlocked: Any) -> list[str] | None:
    if unlocked is None:
        return None
    if isinstance(unlocked, str) or not hasattr(unlocked, "__iter__"):
        raise ValueError(f"unlocked must be a list of rune kinds ({', '.join(KINDS)}) or None "
                         f"(all); got {unlocked!r}")
    kinds = list(unlocked)
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise ValueError(f"unlocked must name at least one rune kind, each one of "
                         f"{', '.join(KINDS)}; got {unlocked!r}")
    return kinds


def check_choice(name: str, value: Any, choices: tuple[str, ...],
                 none_means: str = "") -> str | None:
    """None (the default, with `none_means` saying what it is) or one of `choices` (strings);
    else a ValueError naming `name`. Only None is the default: 0, "" and False are refused,
    not read as "not given"."""
    if value is None or (isinstance(value, str) and value in choices):
        return value
    raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, or None"
                     f"{none_means}; got {shown(value)}")


def check_engine(engine: Any) -> str | None:
    """None (the default: $RUNE_ENGINE, else "fast") or one of the battle engines; else a
    ValueError naming engine. Only None is the default ("" and False are refused)."""
    from ..battle.engines import ENGINES
    if engine is None or (isinstance(engine, str) and engine in ENGINES):
        return engine
    raise ValueError(f"engine must be one of {', '.join(ENGINES)}, or None ($RUNE_ENGINE, "
                     f"else 'fast'): unknown battle engine {shown(engine)}")


def check_rules_overrides(overrides: Any, name: str = "rules_overrides") -> dict | None:
    """None or a mapping of dotted rules paths (strings, e.g. "run.lamps") to values, as a
    dict; else a ValueError naming `name` (whether each path names a rule is the rules'
    check, `load_rules`)."""
    if overrides is None:
        return None
    if not isinstance(overrides, Mapping):
        raise ValueError(f"{name} must be a mapping of dotted rules paths to values (e.g. "
                         f"{{'run.lamps': 5}}) or None; got {shown(overrides)}")
    bad = [k for k in overrides if not isinstance(k, str)]
    if bad:
        raise ValueError(f"{name}'s keys must be dotted rules paths (strings, e.g. "
                         f"'run.lamps'); got {shown(bad[0])}")
    return dict(overrides)
