"""The dice variant's pure arithmetic (RULES.md section 12, D-46..D-49): no engine state here.

    splitmix64(x)                          the 64-bit mixer of D-49
    die_roll(seed, side, stream, n, j, faces)   the counter-based roll: 1 + splitmix64(x) mod faces
    power_level(power, dice)               PL = floor(power / dice.power_per_level)
    dice_rank(pl, dice, strong)            the rank PL reaches on the weak or the strong table
    Die.of_rank(rank, dice)                the die of a rank: faces and plus (D12+1 at rank 7, ...)
    minimal(x), reduced(x)                 floor(sqrt(x) / 2) and floor(sqrt(x)) (D-48)

`dice` is the rules' `dice` section (`rules.spec.dice`); every number comes from it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB

STREAM_CAST = 0      # D-49: casts roll on stream 0
STREAM_CLEANUP = 1   # ... cleanups (mana burns) on stream 1


def splitmix64(x: int) -> int:
    """D-49: z = x + gamma; z = (z ^ z >> 30) * m1; z = (z ^ z >> 27) * m2; z ^ z >> 31 (mod 2^64)."""
    z = (x + GAMMA) & MASK64
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


def roll_key(seed: int, side: int, stream: int, n: int, j: int) -> int:
    """D-49: x = seed * 2^32 + side * 2^24 + stream * 2^20 + n * 2^6 + j, mod 2^64."""
    return (seed * (1 << 32) + side * (1 << 24) + stream * (1 << 20) + n * (1 << 6) + j) & MASK64


def die_roll(seed: int, side: int, stream: int, n: int, j: int, faces: int) -> int:
    """The j-th die of a side's n-th cast (stream 0) or cleanup (stream 1): 1..faces."""
    return 1 + splitmix64(roll_key(seed, side, stream, n, j)) % faces


def power_level(power: float, dice) -> int:
    """D-46: PL = floor(power / power_per_level) (0 for a power below one level)."""
    return max(0, math.floor(power / dice.power_per_level))


def dice_rank(pl: int, dice, strong: bool) -> int:
    """The rank a PL reaches (D-46 table): the highest rank whose needed PL it has; past the last
    rank of the table, +1 rank every `*_pl_per_rank_beyond` PL. PL below the first need: rank 0."""
    needs = dice.strong_pl if strong else dice.weak_pl
    step = dice.strong_pl_per_rank_beyond if strong else dice.weak_pl_per_rank_beyond
    rank = 0
    for r, need in enumerate(needs, start=1):
        if pl >= need:
            rank = r
    if rank == len(needs):
        rank += (pl - needs[-1]) // step
    return rank


@dataclass(frozen=True)
class Die:
    """A power die: `faces`-sided, plus `plus` (D12+1: faces 12, plus 1). Rank 0: faces 0, the
    fixed 1 (never rolled)."""

    rank: int
    faces: int
    plus: int

    @classmethod
    def of_rank(cls, rank: int, dice) -> "Die":
        if rank <= 0:
            return cls(0, 0, 0)
        table = len(dice.faces_by_rank)
        if rank <= table:
            return cls(rank, dice.faces_by_rank[rank - 1], dice.plus_by_rank[rank - 1])
        # each rank past the table: the last die, +plus_per_rank_beyond
        return cls(rank, dice.faces_by_rank[-1],
                   dice.plus_by_rank[-1] + (rank - table) * dice.plus_per_rank_beyond)

    @property
    def mean(self) -> float:
        """The die's expected roll: (faces + 1) / 2 + plus; the fixed 1 of rank 0 has mean 1."""
        if self.faces == 0:
            return 1.0
        return (self.faces + 1) / 2 + self.plus

    def name(self) -> str:
        if self.faces == 0:
            return "1"
        return f"D{self.faces}" + (f"+{self.plus}" if self.plus else "")


def die_for_power(power: float, dice, strong: bool) -> tuple[int, Die]:
    """(PL, die) of a cast of this power: damage on the strong table, heal/barrier on the weak."""
    pl = power_level(power, dice)
    return pl, Die.of_rank(dice_rank(pl, dice, strong), dice)


def _isqrt(x: float) -> int:
    """floor(sqrt(x)) for x >= 0, exact for whole numbers."""
    if x <= 0:
        return 0
    if float(x).is_integer():
        return math.isqrt(int(x))
    return math.floor(math.sqrt(x))


def minimal(x: float) -> int:
    """D-48: the minimal value (極小値), floor(sqrt(x) / 2)."""
    return _isqrt(x) // 2


def reduced(x: float) -> int:
    """D-48: the reduced value (縮小値), floor(sqrt(x))."""
    return _isqrt(x)


def magic_value(round_: int, dice) -> float:
    """D-47: M = magic_base + magic_per_round * (round - 1)."""
    return dice.magic_base + dice.magic_per_round * (round_ - 1)
