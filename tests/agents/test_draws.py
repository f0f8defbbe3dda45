"""A search's draws (agents/search/draws.py): the numbers numpy's Generator methods give, bit for
bit, so the search player's boards are those it found with numpy's own calls."""
from __future__ import annotations

import random

import numpy as np
import pytest

from rune_env.rules import default_rules, geometry
from rune_env.run.loop import new_run

import agents.search.target as target_module
from agents.search.assets import Assets
from agents.search.draws import Draws
from agents.search.reference import Reference, ReferenceSpec
from agents.search.scoring import SeatScorer
from agents.search.target import ClimbSettings, search_target

RULES = default_rules()
GEO = geometry(RULES.radius)


def mixed_draws(seed: int, steps: int, draw_with_numpy: bool) -> list:
    """`steps` draws of every kind the search makes, in an order and with ranges set by `seed`
    (ranges of one value, which draw nothing, ranges near 2**31, pairs of 2..20), from one
    generator seeded [seed, 7], through numpy's methods or through `Draws`."""
    order = random.Random(seed)
    rng = np.random.default_rng([seed, 7])
    draws = Draws(rng)
    out = []
    for _ in range(steps):
        what = order.random()
        if what < 0.45:
            n = order.choice([1, 2, 3, 5, 7, 12, 16, 36, 37, 100, 2**31 + 5])
            out.append(int(rng.integers(n)) if draw_with_numpy else draws.integers(n))
        elif what < 0.55:
            out.append(int(rng.integers(2, 4)) if draw_with_numpy else draws.integers(2, 4))
        elif what < 0.8:
            out.append(float(rng.random()) if draw_with_numpy else draws.random())
        else:
            n = order.choice([2, 3, 5, 9, 20])
            out.append(tuple(int(x) for x in rng.choice(n, 2, replace=False))
                       if draw_with_numpy else draws.choice_two(n))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_draws_are_numpys_bit_for_bit(seed):
    # 2,000 mixed draws a seed: 32-bit draws share a 64-bit output's halves (PCG64 keeps the
    # high half for the next one), random() takes a whole output and leaves the kept half, a
    # range of one value draws nothing, and chunks of 256 outputs are read ahead: any of these
    # done otherwise shifts every later draw
    assert mixed_draws(seed, 2000, draw_with_numpy=False) == mixed_draws(seed, 2000, True)


def test_a_generator_with_a_half_word_kept_goes_on_from_it():
    # one 32-bit draw leaves the high half of a 64-bit output in the generator; Draws made
    # afterwards must hand that half out first, as numpy does
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    a.integers(10)
    b.integers(10)
    draws = Draws(b)
    assert [int(a.integers(1000)) for _ in range(9)] == [draws.integers(1000) for _ in range(9)]


def test_another_bit_generator_draws_through_numpys_methods():
    a = np.random.Generator(np.random.MT19937(5))
    draws = Draws(np.random.Generator(np.random.MT19937(5)))
    assert [int(a.integers(12)) for _ in range(5)] == [draws.integers(12) for _ in range(5)]
    assert float(a.random()) == draws.random()
    assert tuple(int(x) for x in a.choice(9, 2, replace=False)) == draws.choice_two(9)


def test_ranges_it_does_not_draw_are_refused_in_one_line():
    draws = Draws(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"draws: integers needs 0 < high - low <= 2\*\*32 - 1; "
                                         r"got 0, 0"):
        draws.integers(0)
    with pytest.raises(ValueError, match=r"got 0, 4294967296"):
        draws.integers(2**32)
    with pytest.raises(ValueError, match=r"draws: choice_two needs 2 <= n <= 2\*\*32 - 1; got 1"):
        draws.choice_two(1)


class NumpyDraws:
    """The draws as the search made them before `Draws`: numpy's own Generator methods."""

    def __init__(self, rng):
        self.rng = rng

    def integers(self, low, high=None):
        return int(self.rng.integers(low, high))

    def random(self):
        return float(self.rng.random())

    def choice_two(self, n):
        a, b = self.rng.choice(n, 2, replace=False)
        return int(a), int(b)


def search_state(round_: int, mana: int):
    state = new_run(5, RULES, core="moon")
    state.round, state.mana = round_, mana
    state.shop_runes = ["fire", "fire", "wind", "ice", "amplify"]
    state.shop_artifacts = ["mana_spring"]
    state.hand = [("fire", 1)]
    state.board = {GEO.parse("1:0"): ("wind", 2), GEO.parse("2:3"): ("ice", 1)}
    return state


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_whole_search_finds_the_board_it_found_with_numpys_draws(seed, monkeypatch):
    # the search player's target search, 200 boards from 3 starts, on both draws: the same
    # layout and score (every edit, every priced plan and every battle the same)
    state = search_state(round_=3, mana=17)
    assets = Assets.of(state)
    boards, weights = Reference(RULES, ReferenceSpec("meta", size=8), rank=0, seed=0).boards(3)
    scorer = SeatScorer(RULES, boards, weights, seat=0)
    settings = ClimbSettings(boards=200)

    def search():
        return search_target(assets, scorer, [], settings, np.random.default_rng([seed, 11]),
                             rerolls=True)

    found = search()
    monkeypatch.setattr(target_module, "Draws", NumpyDraws)
    assert search() == found
