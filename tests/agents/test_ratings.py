"""Bradley-Terry ratings and their bootstrap intervals (agents/evaluation/ratings.py; the ladder's
and the league's ratings), worked by hand."""
import math

import pytest

from agents.evaluation.ratings import fit_bradley_terry, rating_intervals

pytestmark = pytest.mark.outside_mutation_check


def test_ratings_worked_by_hand():
    """Without the prior, A scoring 3 of 4 against B fits strengths with a : b = 3 : 1 (the
    maximum likelihood of Bradley-Terry), geometric mean 1: a = sqrt(3), b = 1 / sqrt(3); on the
    Elo scale 1500 +- 400 log10(sqrt(3)) = 1500 +- 95.424. An even score is 1500 each, prior or
    not."""
    results = [("A", "B", 1.0)] * 3 + [("A", "B", 0.0)]
    r = fit_bradley_terry(results, prior_games=0.0)
    assert r["A"] == pytest.approx(1500 + 200 * math.log10(3), abs=1e-6)
    assert r["B"] == pytest.approx(1500 - 200 * math.log10(3), abs=1e-6)
    assert r["A"] - r["B"] == pytest.approx(190.849, abs=1e-3)
    even = fit_bradley_terry([("A", "B", 1.0), ("A", "B", 0.0)])
    assert even == pytest.approx({"A": 1500.0, "B": 1500.0})
    # the prior (one half-won game against a virtual 1500 player) keeps an unbeaten side finite
    # and pulls the 3:1 gap in
    with_prior = fit_bradley_terry(results)
    assert 0 < with_prior["A"] - with_prior["B"] < 190.849
    assert math.isfinite(fit_bradley_terry([("A", "B", 1.0)])["A"])


def test_intervals_resample_whole_clusters():
    """One cluster: every resample is that cluster, so the interval is the rating itself. Two
    clusters, A winning the one game of the first and losing that of the second: a resample is
    both of one (A 2-0 or 0-2, a quarter of the time each) or one of each (1-1, a half), so the
    95% interval runs from A's rating at 0-2 to its rating at 2-0, which mirror each other
    around 1500 (the point estimate, 1-1)."""
    one = [[("A", "B", 1.0), ("A", "B", 0.0), ("A", "B", 1.0)]]
    point = fit_bradley_terry(one[0])
    ci = rating_intervals(one, 50, seed=3)
    assert ci["A"] == pytest.approx((point["A"], point["A"]))
    assert ci["B"] == pytest.approx((point["B"], point["B"]))

    clusters = [[("A", "B", 1.0)], [("A", "B", 0.0)]]
    won = fit_bradley_terry([("A", "B", 1.0)] * 2)["A"]
    lost = fit_bradley_terry([("A", "B", 0.0)] * 2)["A"]
    assert won + lost == pytest.approx(3000.0)
    ci = rating_intervals(clusters, 400, seed=0)
    assert ci["A"] == pytest.approx((lost, won)) and ci["B"] == pytest.approx((lost, won))
    assert fit_bradley_terry(clusters[0] + clusters[1])["A"] == pytest.approx(1500.0)


def test_intervals_are_seeded():
    clusters = [[("A", "B", float(i % 3 == 0)), ("B", "C", float(i % 2 == 0)),
                 ("A", "C", 1.0)] for i in range(12)]
    assert rating_intervals(clusters, 100, seed=7) == rating_intervals(clusters, 100, seed=7)
    assert rating_intervals(clusters, 100, seed=7) != rating_intervals(clusters, 100, seed=8)
    assert rating_intervals(clusters, 0, seed=7) == {}


def test_the_head_to_head_matrix_and_its_equilibrium():
    """Rock, paper, scissors (each beats the next once): every score 0 or 1 off the diagonal,
    0.5 on it; the equilibrium mixes all three equally (a third each beats no one on average).
    A dominant player (A beats B, and C 3 of 4 times; B and C draw even) takes all the weight.
    A pair that never met is NaN, and the equilibrium refuses a matrix with one."""
    import numpy as np
    from agents.design.metagame.solver import symmetric_equilibrium as equilibrium
    from agents.evaluation.ratings import score_matrix
    rps = [("R", "S", 1.0), ("S", "P", 1.0), ("P", "R", 1.0)]
    m, games = score_matrix(rps, ["R", "P", "S"])
    assert m.tolist() == [[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]]
    assert games.tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    assert equilibrium(m) == pytest.approx([1 / 3] * 3, abs=1e-6)
    dominant = [("A", "B", 1.0)] + [("A", "C", 1.0)] * 3 + [("A", "C", 0.0), ("B", "C", 0.5)]
    m, _ = score_matrix(dominant, ["A", "B", "C"])
    assert m[0, 2] == 0.75 and m[2, 0] == 0.25
    assert equilibrium(m) == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)
    m, _ = score_matrix([("A", "B", 1.0)], ["A", "B", "pool"])
    assert np.isnan(m[0, 2]) and np.isnan(m[2, 1])
    with pytest.raises(ValueError, match="every pair"):
        equilibrium(m)
