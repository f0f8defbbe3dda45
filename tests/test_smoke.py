"""The rules config loads and a battle runs: the floor under every other test."""
from conftest import board

from rune_env.battle import battle


def test_frozen_rules_load(rules):
    assert rules.radius == 3
    assert rules.grade_x == (1.0, 1.8, 3.2)


def test_single_fire_against_empty_board(rules):
    # Fire, grade I, ring 1: 6 damage per turn, one turn every 500 ms from t = 0.5 s.
    # The empty side has no elemental runes: affinity x1. Overdrive starts after 20 s, so
    # 17 turns (t = 0.5 .. 8.5 s) deal 17 x 6 = 102 >= 100: down at t = 8.5 s.
    r = battle(board({"1:0": ("fire", 1)}), board({}), rules)
    assert r.winner == 0
    assert r.time == 8.5
    assert r.casts == (17, 0)
    assert r.hp == (100.0, 0.0)
