"""alpha-Rank (agents/evaluation/alpharank.py): worked by hand for two players, the cycle's
symmetry, and OpenSpiel's figures pinned.

The pinned figures: open_spiel 2.0.2's `open_spiel.python.egt.alpharank.compute([M], alpha=A,
m=P)[2]` on the matrix M below (its wheel unpacked, `pyspiel` stubbed: the module reads it only
for game objects), printed to 17 digits once (fifty-first session) and written here. Over 60
random constant-sum matrices of 2-6 players at alpha 0.5-100 and populations 5 and 50, the two
differed by at most 5e-14."""
import math

import numpy as np
import pytest

from agents.evaluation.alpharank import alpha_rank, fixation

CYCLE = np.array([[0.5, 0.6, 0.3],
                  [0.4, 0.5, 0.9],
                  [0.7, 0.1, 0.5]])


def test_two_players_worked_by_hand():
    """A scores 0.6 against B. A switch to A in a population of B has u = alpha (0.6 - 0.4) =
    0.2 alpha; to B in a population of A, -u. The two-state chain spends pi_A / pi_B = rho(u) /
    rho(-u) = [(1 - e^-u) / (1 - e^-mu)] / [(1 - e^u) / (1 - e^mu)] = e^((m - 1) u). With alpha
    1 and m 10: e^1.8 = 6.0496475, pi_A = 6.0496475 / 7.0496475 = 0.8581489."""
    pi = alpha_rank(np.array([[0.5, 0.6], [0.4, 0.5]]), alpha=1.0, population=10)
    assert pi == pytest.approx([0.8581489, 0.1418511], abs=1e-7)
    # the fixation probabilities themselves: rho(0.2) = (1 - e^-0.2) / (1 - e^-2) =
    # 0.1812692 / 0.8646647 = 0.2096411; a neutral switch 1 / m
    assert fixation(0.2, 10) == pytest.approx(0.2096411, abs=1e-7)
    assert fixation(0.0, 10) == 0.1
    assert fixation(-0.2, 10) == pytest.approx(0.2096411 / math.exp(1.8), abs=1e-8)


def test_a_pure_cycle_shares_its_mass_and_a_dominated_player_gets_none():
    """Rock, paper, scissors: by symmetry a third each. A fourth player every other beats 0.9 to
    0.1: a switch to it dies out almost surely (u = -80, rho ~ e^(-49 x 80)), so the population
    spends no time there."""
    rps = np.array([[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]])
    assert alpha_rank(rps) == pytest.approx([1 / 3] * 3, abs=1e-12)
    four = np.full((4, 4), 0.5)
    four[:3, :3] = rps
    four[:3, 3], four[3, :3] = 0.9, 0.1
    pi = alpha_rank(four)
    assert pi[:3] == pytest.approx([1 / 3] * 3, abs=1e-12) and pi[3] < 1e-12


@pytest.mark.parametrize("alpha, population, expected", [
    (1.0, 50, [0.29262086593404935, 0.5321906325012278, 0.1751885015647229]),
    (10.0, 50, [0.3207853777342878, 0.3641989576881217, 0.31501566457759045]),
    (2.0, 10, [0.2979198370752941, 0.49655974867392155, 0.2055204142507843]),
])
def test_as_openspiel_computes_it(alpha, population, expected):
    assert alpha_rank(CYCLE, alpha, population) == pytest.approx(expected, abs=1e-12)


def test_no_overflow_at_the_bounds_and_bad_input_refused():
    """alpha 10^4 with a population of 10^4: OpenSpiel's formula overflows (exp(10^8)); here the
    cycle still gives a distribution, and a strict order puts all mass on its top."""
    pi = alpha_rank(CYCLE, alpha=1e4, population=10_000)
    assert np.isfinite(pi).all() and pi.sum() == pytest.approx(1.0)
    order = np.array([[0.5, 0.8, 0.9], [0.2, 0.5, 0.7], [0.1, 0.3, 0.5]])
    assert alpha_rank(order, alpha=1e4, population=10_000) == pytest.approx([1, 0, 0], abs=1e-12)
    assert alpha_rank(np.array([[0.5]])) == pytest.approx([1.0])
    with pytest.raises(ValueError, match="every pair"):
        alpha_rank(np.array([[0.5, np.nan], [np.nan, 0.5]]))
    with pytest.raises(ValueError, match="square"):
        alpha_rank(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="alpha"):
        alpha_rank(CYCLE, alpha=0.0)
    with pytest.raises(ValueError, match="population"):
        alpha_rank(CYCLE, population=1)
