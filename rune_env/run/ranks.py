"""Ranks: each includes every easier one, so their effects accumulate; and the opponent budget
they give (D-44)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ..rules.config import Rules


@dataclass(frozen=True)
class RankEffects:
    rank: int
    name: str
    opponent_extra_runes: int
    income_delta: int
    opponent_budget_x: float
    boss_rule_count: int
    lamps: int


def rank_index(rules: Rules, rank: int | str) -> int:
    names = [r.id for r in rules.spec.ranks]
    if isinstance(rank, str):
        if rank not in names:
            raise ValueError(f"unknown rank {rank!r} (one of {', '.join(names)})")
        return names.index(rank)
    if not 0 <= rank < len(names):
        raise ValueError(f"rank {rank} out of range 0..{len(names) - 1}")
    return rank


def rank_effects(rules: Rules, rank: int | str) -> RankEffects:
    """The effects of `rank` and every easier rank, combined (immutable; remembered per rules
    and rank, since the run loop asks for them at every income and battle)."""
    r = rank_index(rules, rank)
    return _rank_effects(rules.hash, rules, r)


@lru_cache(maxsize=64)
def _rank_effects(rules_hash: str, rules: Rules, r: int) -> RankEffects:
    specs = rules.spec.ranks[: r + 1]
    budget_x = 1.0
    for s in specs:
        budget_x *= s.opponent_budget_x
    lamps = [s.lamps for s in specs if s.lamps is not None]
    return RankEffects(
        rank=r, name=specs[-1].id,
        opponent_extra_runes=sum(s.opponent_extra_runes for s in specs),
        income_delta=sum(s.income_delta for s in specs),
        opponent_budget_x=budget_x,
        boss_rule_count=max(s.boss_rule_count for s in specs),
        lamps=min(lamps) if lamps else rules.spec.run.lamps,
    )


def player_budget(rules: Rules, round_: int) -> int:
    """The mana a player has had by round r without rewards, furnaces, relics or the rank's
    income delta (the run's start mana and r - 1 incomes: 10, 20, 30, ... at the defaults; E-36),
    the budget the opponent budget scales (D-44)."""
    run = rules.spec.run
    return run.start_mana + run.income * (round_ - 1)


def opponent_budget(rules: Rules, round_: int, effects: RankEffects) -> int:
    """D-44: the mana an opponent of round `round_` drafts with: what a player would have had
    (E-36: 10, 20, 30, ... with the defaults), times the rank's budget factor."""
    run = rules.spec.run
    return int(math.floor((run.opponent_budget_base + run.opponent_budget_per_round * (round_ - 1))
                          * effects.opponent_budget_x + 1e-9))
