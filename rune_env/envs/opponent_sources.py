"""Where a RuneRun-v0 or RuneDraft-v0 env gets its opponents: the shipped pool of its rank and
rules (`shipped_pool`), and the `opponents` option resolved into an opponent source
(`resolve_opponents`). `rune_env.envs.run_env` imports them from here."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..rules.config import Rules
from ..run.opponents import BudgetOpponents, PoolOpponents, load_pool, pool_rules_hash
from .arguments import shown

from ..resources import opponents_dir  # (configs/opponents: the checkout's or the wheel's)
SHIPPED_POOLS = opponents_dir()


def shipped_pool(rules: Rules, rank: int) -> Path | None:
    """The shipped pool of a rank for these rules, if there is one: configs/opponents/<rank>.json.gz
    (or .json), the pools of the default rules; where its rules hash is not `rules.hash`, a pool
    of the same rank in a folder below it whose hash is (configs/opponents/seed_literal/ holds
    the pools of the rules as written). None when no pool of the rank is shipped; the default
    rules' pool when none matches (loading it then warns, or fails with strict pools)."""
    name = rules.spec.ranks[rank].id
    files = [f"{name}.json.gz", f"{name}.json"]
    candidates = [p for p in [SHIPPED_POOLS / f for f in files]
                  + [p for f in files for p in sorted(SHIPPED_POOLS.glob(f"*/{f}"))] if p.is_file()]
    if not candidates:
        return None
    return next((p for p in candidates if pool_rules_hash(p) == rules.hash), candidates[0])


def check_opponents(opponents: Any, name: str = "opponents") -> None:
    """The opponents option's type, checked without loading anything: None, a pool path (or
    "generator"), an agent or a callable; else a TypeError naming `name`."""
    if opponents is None or isinstance(opponents, str) \
            or (hasattr(opponents, "act") and hasattr(opponents, "reset")) or callable(opponents):
        return
    raise TypeError(f"{name} must be None, a pool path, a callable or an agent; got "
                    f"{shown(opponents)}")


def resolve_opponents(opponents: Any, rules: Rules, rank: int = 0, strict: bool = False,
                      name: str = "opponents"):
    """None -> the shipped pool of the rank (the budget drafter where a round has no ghosts, or
    where no pool is shipped); "generator" -> the budget drafter; a path -> that pool file; a
    callable -> itself; an object with `act(observation, action_mask)` -> an agent that drafts
    boards (AgentOpponents)."""
    check_opponents(opponents, name)
    if opponents is None:
        pool = shipped_pool(rules, rank)
        if pool is None:
            return BudgetOpponents(rules)
        return PoolOpponents(load_pool(pool, rules, strict=strict), rules, BudgetOpponents(rules))
    if opponents == "generator":
        return BudgetOpponents(rules)
    if isinstance(opponents, str):
        return PoolOpponents(load_pool(opponents, rules, strict=strict), rules, BudgetOpponents(rules))
    if hasattr(opponents, "act") and hasattr(opponents, "reset"):
        from .agent_opponents import AgentOpponents
        return AgentOpponents(opponents, rules)
    return opponents       # a callable (check_opponents)
