"""A player's max HP: the one place its formula lives (the run, both battle engines, the board
analysis and the terminal's explanation all ask here)."""
from __future__ import annotations

from typing import NamedTuple

from .config import Rules


class MaxHpTerms(NamedTuple):
    """The terms of the formula, for words that explain a max HP: `base` + `rounds_after_first`
    x `per_round`, times (1 + the bonus)."""
    base: float
    rounds_after_first: int
    per_round: float


def max_hp_terms(rules: Rules, round_: int) -> MaxHpTerms:
    b = rules.spec.battle
    return MaxHpTerms(b.base_hp, round_ - 1, b.hp_per_round)


def round_max_hp(rules: Rules, round_, hp_bonus: float = 0.0):
    """Max HP in round `round_` before the modifiers' hp_x: `battle.base_hp`, plus
    `battle.hp_per_round` for each round after the first, times (1 + `hp_bonus`), the run's
    base-stat rewards. `round_` may be a numpy array of rounds (the fast engine fills a whole
    batch's records in one call): the arithmetic is the same, element by element."""
    b = rules.spec.battle
    return (b.base_hp + b.hp_per_round * (round_ - 1)) * (1.0 + hp_bonus)
