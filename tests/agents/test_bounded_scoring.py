"""Bounded scoring (agents/search/scoring.py, `SeatScorer.bounded`): the search player's climbs
stop playing a child once it cannot beat its parent, and score every other board exactly as
before, so the searches find the same boards with fewer battles."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rune_env.rules import default_rules

import agents.search.scoring as scoring_module
from agents.search.assets import Assets
from agents.search.reference import Reference, ReferenceSpec
from agents.search.scoring import SeatScorer
from agents.search.target import ClimbSettings, search_target
from test_draws import search_state    # a moon run: a shop, two runes on the board, one in hand

RULES = default_rules()
MARGIN_WEIGHT = 0.25          # the objective's default margin weight


def reference_and_candidates():
    """The reference boards of round 3 (16 + 16 drawn from the metagame's and the rank's parts:
    25 distinct), and the metagame's boards of rounds 1-6 from another seed (4 a round: 18
    distinct) as candidates, weak and strong against them."""
    boards, weights = Reference(RULES, ReferenceSpec("meta+rank", size=16), rank=0,
                                seed=0).boards(3)
    other = Reference(RULES, ReferenceSpec("meta", size=4), rank=0, seed=1)
    candidates = [b for r in range(1, 7) for b in other.boards(r)[0]]
    return boards, weights, candidates


def values(results) -> list[float]:
    return [p + MARGIN_WEIGHT * m for p, m in results]


def test_a_board_is_cut_only_below_its_floor_and_scored_to_the_last_bit_otherwise():
    boards, weights, candidates = reference_and_candidates()
    full = SeatScorer(RULES, boards, weights, seat=0)(candidates)
    # floors drawn over the whole range of payoff + margin / 4 (at most 1.25)
    floors = np.random.default_rng(3).uniform(0.0, 1.25, len(candidates))
    bounded = SeatScorer(RULES, boards, weights, seat=0).bounded(candidates, floors,
                                                                  MARGIN_WEIGHT)
    cut = [i for i, r in enumerate(bounded) if r is None]
    kept = [i for i, r in enumerate(bounded) if r is not None]
    assert cut and kept                      # both happen on these floors
    for i in cut:
        assert values([full[i]])[0] < floors[i]
    for i in kept:
        assert bounded[i] == full[i]         # the same floats: (payoff, margin) bit for bit


def test_a_board_at_its_own_value_is_never_cut():
    # each candidate's floor a hair under its own value: every candidate plays every board (a
    # bound that took a win at full HP for less than 1.25 would cut the boards that win their
    # last battles with HP to spare)
    boards, weights, candidates = reference_and_candidates()
    full = SeatScorer(RULES, boards, weights, seat=1)(candidates)
    floors = [v - 1e-9 for v in values(full)]
    scorer = SeatScorer(RULES, boards, weights, seat=1)
    assert scorer.bounded(candidates, floors, MARGIN_WEIGHT) == full
    assert scorer.battles == len(candidates) * len(boards)


def test_battles_played():
    boards, weights, candidates = reference_and_candidates()
    n, n_o = len(candidates), len(boards)          # 18 candidates, 25 reference boards
    assert (n, n_o) == (18, 25)
    # floors no board can reach (above 1.25): after its first battle a candidate's bound is at
    # most 1.25, so each stops there: 18 battles, and none is remembered
    scorer = SeatScorer(RULES, boards, weights, seat=0)
    assert scorer.bounded(candidates, [2.0] * n, MARGIN_WEIGHT) == [None] * n
    assert scorer.battles == 18
    scorer(candidates)                             # all played afresh: 18 + 18 x 25 = 468
    assert scorer.battles == 468
    # floors no board can fall below: every battle, 18 x 25 = 450
    scorer = SeatScorer(RULES, boards, weights, seat=0)
    scorer.bounded(candidates, [-2.0] * n, MARGIN_WEIGHT)
    assert scorer.battles == 450
    # a board remembered from a bounded call is not played again
    scorer(candidates)
    assert scorer.battles == 450


def spy_on_orders(scorer: SeatScorer) -> list:
    """The column order of each of the scorer's bounded kernel calls, from now on."""
    orders = []
    play_bounded = scorer._grid.play_bounded

    def spy(rows, seat, order, *args):
        orders.append(list(order))
        return play_bounded(rows, seat, order, *args)

    scorer._grid.play_bounded = spy
    return orders


def test_the_parents_worst_reference_boards_come_first():
    boards, weights, candidates = reference_and_candidates()
    scorer = SeatScorer(RULES, boards, weights, seat=0)
    parent = candidates[10]
    scorer([parent])                               # its row by reference board, remembered
    points, margins = scorer._rows[scoring_module.fast_key(parent)]
    worst = np.argsort(points + MARGIN_WEIGHT * margins, kind="stable")
    assert points[worst[0]] <= points[worst[-1]]
    orders = spy_on_orders(scorer)
    scorer.bounded(candidates[:3], [2.0] * 3, MARGIN_WEIGHT, parent=parent)
    assert orders == [list(worst)]
    # no parent: the heaviest reference boards first
    scorer.bounded(candidates[3:4], [2.0], MARGIN_WEIGHT)
    assert orders[1] == list(np.argsort(-weights, kind="stable"))


def test_both_seats_are_never_cut():
    # a scorer of both seats (a duel's first round) scores every candidate in full
    boards, weights, candidates = reference_and_candidates()
    scorer = SeatScorer(RULES, boards, weights, seat=None)
    got = scorer.bounded(candidates[:4], [2.0] * 4, MARGIN_WEIGHT)
    assert got == SeatScorer(RULES, boards, weights, seat=None)(candidates[:4])
    assert None not in got


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_search_finds_the_same_board_with_fewer_battles(seed, monkeypatch):
    # the search player's target search, 300 boards, with bounded climbs and with every child
    # scored in full: the same layout and score, and fewer battles bounded
    state = search_state(round_=3, mana=17)
    assets = Assets.of(state)
    boards, weights = Reference(RULES, ReferenceSpec("meta+rank", size=16), rank=0,
                                seed=0).boards(3)
    settings = ClimbSettings(boards=300)

    def search():
        scorer = SeatScorer(RULES, boards, weights, seat=1)
        found = search_target(assets, scorer, [], settings, np.random.default_rng([seed, 5]),
                              rerolls=True)
        return found, scorer.battles

    bounded, bounded_battles = search()
    monkeypatch.setattr(SeatScorer, "bounded",
                        lambda self, candidates, floors, margin_weight, parent=None:
                        list(self(candidates)))
    full, full_battles = search()
    assert bounded == full
    assert bounded_battles < full_battles
    assert math.isfinite(bounded[1].value)
