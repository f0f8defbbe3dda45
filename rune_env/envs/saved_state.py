"""The check of a saved env state (`RuneRunEnv.get_state`'s dict) before `set_state` applies it:
a dict from a caller (a search, a file) is read whole first, so a refused one leaves the env as it
was, and each problem is a one-line ValueError naming its key."""
from __future__ import annotations

import copy

import numpy as np

from ..rules.config import Rules
from ..run.state import RunState, RunStateError
from .arguments import check_core, check_int, shown

# the keys of get_state's dict that set_state needs (env_version is informative)
SAVED_STATE_KEYS = ("run", "np_random", "rank", "core", "rules_hash")


def check_saved_state(saved: object, rules: Rules, generator_kind: type
                      ) -> tuple[int, str | None, dict, RunState | None]:
    """(rank, core, the generator's state, the run or None) of a `get_state` dict made under
    `rules`, for an env whose generator is a `generator_kind` (gymnasium's: PCG64); ValueError
    naming the key otherwise."""
    if not isinstance(saved, dict):
        raise ValueError(f"saved env state must be a dict (as get_state returns); got "
                         f"{shown(saved)}")
    missing = [k for k in SAVED_STATE_KEYS if k not in saved]
    if missing:
        raise ValueError(f"saved env state lacks {', '.join(map(repr, missing))} (get_state "
                         f"saves {', '.join(SAVED_STATE_KEYS)} and env_version)")
    unknown = sorted(map(shown, set(saved) - set(SAVED_STATE_KEYS) - {"env_version"}))
    if unknown:
        raise ValueError(f"saved env state has unknown keys: {', '.join(unknown)}")
    if not isinstance(saved["rules_hash"], str) or saved["rules_hash"] != rules.hash:
        raise ValueError("saved env state was made under other rules (its 'rules_hash' is "
                         f"{shown(saved['rules_hash'])}, not {rules.hash!r})")
    rank = check_int("saved env state 'rank'", saved["rank"], 0, len(rules.spec.ranks) - 1)
    core = check_core(rules, saved["core"], "saved env state 'core'")
    # a fresh generator of the env's kind takes the saved state first
    bit_generator = generator_kind()
    try:
        bit_generator.state = copy.deepcopy(saved["np_random"])
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise ValueError(f"saved env state 'np_random' is not a {type(bit_generator).__name__} "
                         f"state: {type(exc).__name__}: {shown(str(exc), 120)}") from None
    run = saved["run"]
    state = None
    if run is not None:
        try:
            state = RunState.from_json(run, rules)
        except RunStateError as exc:
            raise ValueError(f"saved env state 'run': {exc}") from None
        if state.rank != rank:
            raise ValueError(f"saved env state 'rank' is {rank}, but its run's rank is "
                             f"{state.rank}")
    return rank, core, bit_generator.state, state
