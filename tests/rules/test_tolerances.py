"""The three tolerances of the battle rules, each tested at a gap the tolerance decides.

Each test builds a case whose outcome flips if its tolerance moved from 1e-9 to 1.1e-9 (the
mutation check's +10%), with the arithmetic worked out by hand below.
"""
import pytest
from conftest import _rules_path, board

from rune_env.battle import battle
from rune_env.rules import load_rules


def test_death_threshold_decides_the_knockout(rules):
    """A hit leaving 1.05e-9 HP does not down a side (threshold 1e-9); the next one does.
    Covers: D-10

    Fire, grade I, ring 1, against an empty board (affinity x1): 6 per hit at t = 0.5, 1.0, ...
    Side 1 has max HP 6 + 1.05e-9: after the first hit 1.05e-9 > 1e-9 left, alive; the second
    hit at t = 1.0 s downs it. (With a threshold of 1.1e-9 the first hit would.)"""
    r = battle(board({"1:0": ("fire", 1)}), board({}, max_hp=6 + 1.05e-9), rules)
    assert r.winner == 0
    assert r.time == 1.0
    assert r.casts == (2, 0)


def test_draw_tolerance_separates_a_win_from_a_draw(rules):
    """HP ratios 1.05e-9 apart at the timeout: a win, not a draw (tolerance 1e-9).
    Covers: D-1

    Side 0: one fire rune (6 per hit); side 1: no runes, so side 0 keeps ratio 1 exactly.
    Turns at t = 0.5 .. 60.0 s (120). Overdrive x(1 + 0.1 (floor(t) - 20)):
      41 turns with floor(t) <= 20 (t = 0.5 .. 20.5): x1 each           -> 41
      floor(t) = k in 21..59, two turns each: 2 * sum(1 + 0.1 (k - 20)) = 2 * (39 + 0.1 * 780) -> 234
      t = 60.0: x5                                                      -> 5
    sum of factors 280, damage D = 6 * 280 = 1680. Side 1's max HP M = D / 1.05e-9 = 1.6e12, so
    its ratio is 1 - 1.05e-9: side 0 wins on ratio. (A tolerance of 1.1e-9 makes it a draw.)"""
    m = 1680 / 1.05e-9
    r = battle(board({"1:0": ("fire", 1)}), board({}, max_hp=m), rules)
    assert r.reason == "timeout"
    assert r.hp[1] == pytest.approx(m - 1680, rel=1e-12)
    assert r.winner == 0


def test_strongest_tolerance_picks_the_truly_stronger_rune():
    """Powers 1.05e-9 apart (relative) are not equal (tolerance 1e-9): ice freezes the stronger,
    later rune, not the earlier one. Covers: D-15

    Rules with wind damage 6 * (1 + 1.05e-9): wind's power (one hit) is 6 * (1 + 1.05e-9),
    fire's 6 (both grade I, ring 1, no flows: 1:0 and 1:2 are not adjacent). Side 0's ice at 1:0
    casts first at t = 0.5 s and freezes side 1's strongest: wind at 1:2 (casting order 2), since
    6.0000000063 > 6 by more than 1e-9 relative. (With 1.1e-9 they tie and fire at 1:0 is frozen.)"""
    rules = load_rules(_rules_path(), {"runes.wind.damage": 6 * (1 + 1.05e-9)})
    r = battle(board({"1:0": ("ice", 1)}), board({"1:0": ("fire", 1), "1:2": ("wind", 1)}), rules,
               trace=True)
    freezes = [e for e in r.events if e["type"] == "freeze"]
    assert freezes[0]["t"] == 0.5
    assert freezes[0]["cell"] == "1:2"
