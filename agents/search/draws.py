"""A search's random draws, the same numbers numpy's `Generator` methods give, at a quarter of
their cost.

The search player's board search (`agents.search.target.TargetMutator`) makes a few draws per
edit and tries hundreds of thousands of edits a run; a call of `Generator.integers(n)` costs
about 0.9 us, most of it argument handling, and was a tenth of a lookahead's time. `Draws` reads
the generator's raw 64-bit outputs a chunk at a time (`BitGenerator.random_raw`) and computes
from them what numpy's own algorithms compute, so a search draws exactly what it drew before,
bit for bit (tests/agents/test_draws.py checks this against numpy on mixed sequences of every
method, and the planner's pinned boards do not move):

- `integers(n)` / `integers(lo, hi)`: numpy's Lemire rejection on 32-bit words
  (`random_bounded_uint64_fill` for a range below 2**32, which draws 32-bit words through the
  bit generator's own half-word buffer: PCG64 hands out a 64-bit output's low half, keeps the
  high half for the next 32-bit draw); a range of one value draws nothing.
- `random()`: a 64-bit output's top 53 bits over 2**53 (`next_double`), which leaves the kept
  half-word alone.
- `choice_two(n)`: `Generator.choice(n, 2, replace=False)`: Floyd's sampling of two distinct
  values, then the shuffle of the pair.

A chunk read ahead moves the generator past the draws used: the generator is the search's own
(each caller seeds one per search and never draws from it again). Another bit generator than
PCG64 (numpy's default) is drawn from through its `Generator` methods as before. Ranges stop
below 2**32 (numpy switches to 64-bit words there; a search's ranges are a few dozen).
"""
from __future__ import annotations

import numpy as np

_MASK32 = 0xFFFFFFFF
_CHUNK = 256                # raw outputs read at a time: a search uses thousands
_DOUBLE = 1.0 / 9007199254740992.0      # 2**-53


class Draws:
    """The draws of a search from `rng` (the module docstring)."""

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._exact = isinstance(rng.bit_generator, np.random.PCG64)
        if self._exact:
            state = rng.bit_generator.state
            self._half_kept = bool(state["has_uint32"])
            self._half = int(state["uinteger"])
        self._raw: list[int] = []
        self._at = 0

    def _next64(self) -> int:
        if self._at >= len(self._raw):
            self._raw = self._rng.bit_generator.random_raw(_CHUNK).tolist()
            self._at = 0
        value = self._raw[self._at]
        self._at += 1
        return value

    def _next32(self) -> int:
        if self._half_kept:
            self._half_kept = False
            return self._half
        value = self._next64()
        self._half_kept, self._half = True, value >> 32
        return value & _MASK32

    def _upto(self, top: int) -> int:
        """Uniform on 0..top (top < 2**32 - 1), as numpy's buffered_bounded_lemire_uint32."""
        if top == 0:
            return 0
        span = top + 1
        m = self._next32() * span
        if (m & _MASK32) < span:
            return self._rejected(top, m)
        return m >> 32

    def _rejected(self, top: int, m: int) -> int:
        """Lemire's rejection after a first word `m` (times the span) whose low half is under
        the span: new words while the low half is under the threshold."""
        span = top + 1
        threshold = (_MASK32 - top) % span
        while (m & _MASK32) < threshold:
            m = self._next32() * span
        return m >> 32

    def integers(self, low: int, high: int | None = None) -> int:
        """`int(Generator.integers(low, high))`: uniform on low..high-1 (0..low-1 without high)."""
        if high is None:
            low, high = 0, low
        if not 0 < high - low <= _MASK32:
            raise ValueError(f"draws: integers needs 0 < high - low <= 2**32 - 1; got {low}, {high}")
        if not self._exact:
            return int(self._rng.integers(low, high))
        span = high - low
        if span == 1:
            return low
        # `_upto(span - 1)` with its first 32-bit word (`_next32`) drawn inline: most draws of a
        # search take one word, and the calls cost more than the arithmetic
        if self._half_kept:
            self._half_kept = False
            word = self._half
        else:
            value = self._next64()
            self._half_kept, self._half = True, value >> 32
            word = value & _MASK32
        m = word * span
        if (m & _MASK32) < span:
            return low + self._rejected(span - 1, m)
        return low + (m >> 32)

    def random(self) -> float:
        """`Generator.random()`: uniform on [0, 1)."""
        if not self._exact:
            return float(self._rng.random())
        return (self._next64() >> 11) * _DOUBLE

    def choice_two(self, n: int) -> tuple[int, int]:
        """`Generator.choice(n, 2, replace=False)`: two distinct values of 0..n-1, n >= 2."""
        if not 2 <= n <= _MASK32:
            raise ValueError(f"draws: choice_two needs 2 <= n <= 2**32 - 1; got {n}")
        if not self._exact:
            a, b = self._rng.choice(n, 2, replace=False)
            return int(a), int(b)
        first = self._upto(n - 2)
        second = self._upto(n - 1)
        if second == first:                 # Floyd: a value drawn twice gives way to n - 1
            second = n - 1
        pair = [first, second]
        j = self._upto(1)                   # the pair's shuffle
        pair[j], pair[1] = pair[1], pair[j]
        return pair[0], pair[1]


__all__ = ["Draws"]
