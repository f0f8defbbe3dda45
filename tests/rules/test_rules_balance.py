"""The balance rules of the defaults (RULES section 13: D-50 minimum cycle, D-51 seal cap floor,
D-52 one freeze at a time), hand-worked.

The frozen rules (tests/data/rules.yaml) are the rules as written: min_cycle_turns 1,
seal_cap_min 0, max_frozen 0. Each test here turns on the one balance rule it is about with an
override (`balance(...)`), so the other two stay out of the way, and most compare with the rules
as written too. The default interval is 500 ms (moon x0.8: 400 ms). Water runes heal and deal no
damage, which keeps knockouts out of the timing tests; large max HP does the same elsewhere.

D-50 arithmetic: a side with n turn cells and min_cycle_turns m > n has cycles of m turns; its
turn cells take turns 1..n of each cycle, turns n+1..m are rest turns, and the cycle (its
erosions, the storm budget's refill, the dice cleanup) ends with turn m. With interval I the
k-th turn of the battle is at k x I (without storm delays).
"""
from __future__ import annotations

import pytest

from conftest import FROZEN_RULES, board, events, frozen_rules, soak

from rune_env.battle import battle
from rune_env.battle.explain import explain, format_explain
from rune_env.rules import RulesError, load_rules

BIG = 10000.0


def balance(min_cycle: int | None = None, cap_min: int | None = None,
            max_frozen: int | None = None):
    """The frozen rules with the named balance rules on (the others as written)."""
    overrides = {}
    if min_cycle is not None:
        overrides["battle.min_cycle_turns"] = min_cycle
    if cap_min is not None:
        overrides["erosion.seal_cap_min"] = cap_min
    if max_frozen is not None:
        overrides["freeze.max_frozen"] = max_frozen
    return load_rules(FROZEN_RULES, overrides)


def times(r, type_, **match):
    return [e["t"] for e in events(r, type_, **match)]


WATERS = ["1:0", "1:1", "1:2", "1:3", "1:4"]


# -- D-50: the minimum cycle ---------------------------------------------------------------------

@pytest.mark.parametrize("n, casts, rests, erosions", [
    # 1 rune: cast 0.5; rests 1.0 1.5 2.0; the cycle ends at 2.0; cast 2.5; ... erosion at 4.0
    (1, [0.5, 2.5, 4.5], [1.0, 1.5, 2.0, 3.0, 3.5, 4.0], [2.0, 4.0, 6.0]),
    # 2 runes: casts 0.5 1.0; rests 1.5 2.0; casts 2.5 3.0; rests 3.5 4.0
    (2, [0.5, 1.0, 2.5, 3.0], [1.5, 2.0, 3.5, 4.0], [2.0, 4.0, 6.0]),
    # 3 runes: casts 0.5 1.0 1.5; rest 2.0; casts 2.5 3.0 3.5; rest 4.0
    (3, [0.5, 1.0, 1.5, 2.5, 3.0, 3.5], [2.0, 4.0], [2.0, 4.0, 6.0]),
    # 4 runes: no rest turn; the cycle of 4 turns ends at 2.0 as without the rule
    (4, [0.5, 1.0, 1.5, 2.0, 2.5, 3.0], [], [2.0, 4.0, 6.0]),
    # 5 runes: longer than the minimum: no rest, the cycle ends at 2.5
    (5, [0.5, 1.0, 1.5, 2.0, 2.5, 3.0], [], [2.5, 5.0, 7.5]),
])
def test_min_cycle_turn_and_erosion_times(n, casts, rests, erosions):
    """Side 0: n waters in ring 1; side 1: empty (no turns: it never acts). min_cycle_turns 4.
    The expected times are worked out in the parameter comments (interval 0.5 s).

    Covers: D-50, D-6, D-30"""
    r = battle(board({c: ("water", 1) for c in WATERS[:n]}), board({}), balance(min_cycle=4),
               trace=True)
    k = len(casts)
    assert times(r, "cast", side=0)[:k] == casts
    assert times(r, "rest", side=0)[:len(rests)] == rests
    assert times(r, "erosion", by=0)[:3] == erosions
    assert all(e["cell"] is None for e in events(r, "rest"))
    assert times(r, "rest", side=1) == []          # a side with no turns never rests either


def test_rest_turns_count_apart_from_turns_and_casts():
    """One water, 60 s, interval 0.5 s: 120 turn slots (0.5 .. 60.0); cycles of 4 turns, one of
    them the water's: 30 turns and 30 casts, 90 rest turns. As written (cycle of 1): 120 turns
    and casts, no rest.

    Covers: D-50, D-7"""
    b = board({"1:0": ("water", 1)})
    r = battle(b, board({}), balance(min_cycle=4))
    assert (r.turns[0], r.casts[0], r.rests[0]) == (30, 30, 90)
    r = battle(b, board({}), frozen_rules())
    assert (r.turns[0], r.casts[0], r.rests[0]) == (120, 120, 0)


def test_moon_core_rest_turns():
    """Moon: interval 0.5 x 0.8 = 0.4 s. One water: cast 0.4; rests 0.8 1.2 1.6; the cycle and
    its erosion end at 1.6; cast 2.0; rests 2.4 2.8 3.2; erosion 3.2. min_cycle_turns 4.

    Covers: D-50, core:moon"""
    r = battle(board({"1:0": ("water", 1)}, core="moon"), board({}), balance(min_cycle=4),
               trace=True)
    assert times(r, "cast", side=0)[:2] == [0.4, 2.0]
    assert times(r, "rest", side=0)[:6] == [0.8, 1.2, 1.6, 2.4, 2.8, 3.2]
    assert times(r, "erosion", by=0)[:2] == [1.6, 3.2]


def test_storm_delay_lands_on_a_rest_turn():
    """Side 1: thunder 1:0 and wind 2:0 (outward of it: the storm flow, delay 0.3 s, budget
    0.6 s per cycle of side 0). Side 1's turns: thunder 0.5, wind 1.0 (storm), rests 1.5 2.0;
    thunder 2.5, wind 3.0 (storm), rests 3.5 4.0; thunder 4.5, wind 5.0 (storm). Side 0: one
    water, min_cycle_turns 4.
      0.5 cast; next turn 1.0 (rest 1), at 1.0 side 0 acts first (D-8): rest, next 1.5; then
      side 1's storm pushes it to 1.8: rest 2 at 1.8, rest 3 at 2.3, which ends the cycle: side
      0's erosion at 2.3 (the budget refills);
      cast 2.8; next 3.3, pushed at 3.0 to 3.6 (rest 1); rests 4.1, 4.6; erosion at 4.6;
      next turn (a cast) 5.1, pushed at 5.0 to 5.4.
    Big max HP on both sides: no knockout. Side 0's erosions seal side 1's three ring-3
    resonators (n = 5, cap 2), never its storm.

    Covers: D-50, flow:storm, D-21"""
    a = board({"1:0": ("water", 1)}, max_hp=BIG)
    b = board({"1:0": ("thunder", 1), "2:0": ("wind", 1), **soak(3)}, open_sectors=[5],
              max_hp=BIG)
    r = battle(a, b, balance(min_cycle=4), trace=True)
    delays = [(e["t"], e["next_turn"]) for e in events(r, "storm_delay", side=0)]
    assert delays[:3] == [(1.0, 1.8), (3.0, 3.6), (5.0, 5.4)]
    assert times(r, "rest", side=0)[:6] == [1.0, 1.8, 2.3, 3.6, 4.1, 4.6]
    assert times(r, "erosion", by=0)[:2] == [2.3, 4.6]
    assert times(r, "cast", side=0)[:3] == [0.5, 2.8, 5.4]


def test_delay_alternation_ignores_rest_turns():
    """Delay 1:0 (no turn) and fire 2:0 outward of it: the fire is the only turn cell. With
    min_cycle_turns 4 its turns are at 0.5, 2.5, 4.5, 6.5 (rests between). Its affected turns
    alternate skip, cast (D-18) counting only its own turns: skip 0.5, cast 2.5, skip 4.5, cast
    6.5. (Were rest turns counted, every fire turn would be an odd count: never a cast.)

    Covers: D-50, D-18, rune:delay"""
    r = battle(board({"1:0": ("delay", 1), "2:0": ("fire", 1)}), board({}, max_hp=BIG),
               balance(min_cycle=4), trace=True)
    assert times(r, "delay_skip", side=0)[:2] == [0.5, 4.5]
    assert times(r, "cast", side=0)[:2] == [2.5, 6.5]


def test_dice_cleanup_comes_after_the_rest_turns():
    """Dice variant, one water, min_cycle_turns 4: the cycle ends with the last rest turn, at
    2.0, 4.0, ...: the erosion and then the cleanup at those times (as written: every 0.5 s).

    Covers: D-50"""
    a = board({"1:0": ("water", 1)})
    r = battle(a, board({}, max_hp=BIG), balance(min_cycle=4), trace=True, seed=3,
               variant="dice")
    assert times(r, "cleanup", side=0)[:3] == [2.0, 4.0, 6.0]
    at_2 = [e["type"] for e in r.events if e["t"] == 2.0 and e["side"] in (0, 1)]
    assert at_2.index("rest") < at_2.index("erosion") < at_2.index("cleanup")
    r = battle(a, board({}, max_hp=BIG), frozen_rules(), trace=True, seed=3, variant="dice")
    assert times(r, "cleanup", side=0)[:3] == [0.5, 1.0, 1.5]


def test_explain_names_the_rest_turns():
    """One fire with min_cycle_turns 4: 1 turn cell, 3 rest turns a cycle (4 runes: none).

    Covers: D-50"""
    rules = balance(min_cycle=4)
    rep = explain(board({"1:0": ("fire", 1)}), rules=rules)
    assert (rep["cycle_turns"], rep["rest_turns"]) == (4, 3)
    assert "3 rest turns" in format_explain(rep)
    four = board({c: ("fire", 1) for c in WATERS[:4]})
    assert explain(four, rules=rules)["rest_turns"] == 0


# -- D-51: the seal cap floor ---------------------------------------------------------------------

ERODER = board({"1:0": ("water", 1)}, max_hp=BIG)   # one turn: erodes at every 0.5 s (cycle of 1)


def seal_log(r, side=0):
    return [(e["t"], e["type"], e["cell"]) for e in r.events
            if e["side"] == side and e["type"] in ("seal", "seal_capped", "reserve", "ward")]


def test_seal_cap_floor_one_rune():
    """One fire: floor(1/2) = 0; with seal_cap_min 1 the cap is max(1, 0) = 1: sealed at 0.5 by
    the eroder (after side 0's cast at 0.5, D-8); later erosions find no unsealed rune. As
    written: capped at 0.5, and the fire casts all battle.

    Covers: D-51, D-32"""
    b = board({"1:0": ("fire", 1)}, max_hp=BIG)
    r = battle(b, ERODER, balance(cap_min=1), trace=True)
    assert seal_log(r) == [(0.5, "seal", "1:0")]      # then no unsealed rune is left to target
    assert r.seals[0] == 1
    assert times(r, "cast", side=0) == [0.5]          # sealed, it never casts again
    r = battle(b, ERODER, frozen_rules(), trace=True)
    assert seal_log(r)[:1] == [(0.5, "seal_capped", "1:0")]
    assert r.seals[0] == 0


def test_seal_cap_floor_tree_core_two_runes():
    """Tree core, two fires (ring 1 and ring 2): floor(2/3) = 0, with the floor 1: the outermost
    fire 2:0 is sealed at 0.5; at 1.0 the cap holds (the target now 1:0). As written: never.

    Covers: D-51, core:tree"""
    b = board({"1:0": ("fire", 1), "2:0": ("fire", 1)}, core="tree", max_hp=BIG)
    r = battle(b, ERODER, balance(cap_min=1), trace=True)
    assert seal_log(r)[:2] == [(0.5, "seal", "2:0"), (1.0, "seal_capped", "1:0")]
    r = battle(b, ERODER, frozen_rules(), trace=True)
    assert seal_log(r)[:1] == [(0.5, "seal_capped", "2:0")]


def test_reserve_after_the_only_seal():
    """One fire with a fire in hand, cap max(1, 0) = 1: at 0.5 the fire is sealed and the
    reserve takes 1:0 (unsealed); the count stays 1 (a replaced rune still counts, D-32), so at
    1.0 the erosion of the reserve is capped, and the reserve casts at every turn from 1.0 on.

    Covers: D-51, D-33, reserve"""
    b = board({"1:0": ("fire", 1)}, hand=[("fire", 1)], max_hp=BIG)
    r = battle(b, ERODER, balance(cap_min=1), trace=True)
    assert seal_log(r)[:3] == [(0.5, "seal", "1:0"), (0.5, "reserve", "1:0"),
                               (1.0, "seal_capped", "1:0")]
    assert times(r, "cast", side=0)[:3] == [0.5, 1.0, 1.5]
    assert r.seals[0] == 1


# -- D-52: one freeze at a time ----------------------------------------------------------------

# side 1: fire II 1:0 (power 6 x 1.8 = 10.8: the strongest), water I 1:3 (5), and three
# resonators in ring 3 sector 5 that side 0's erosions seal first (n = 5, cap 2). Side 0's
# boards carry the same three resonators, so side 1's erosions never seal its ices.
TARGETS = board({"1:0": ("fire", 2), "1:3": ("water", 1), **soak(3)}, open_sectors=[5],
                max_hp=BIG)


def icer(runes: dict):
    return board({**runes, **soak(3)}, open_sectors=[5], max_hp=BIG)


def freezes(r):
    return [(e["t"], e["cell"]) for e in events(r, "freeze", side=1)]


def test_freeze_limit_with_two_ices():
    """Side 0: ices at 1:0 and 1:3 (turns 0.5 / 1.0 / 1.5 / ... alternately; freeze 1.5 s).
    max_frozen 1:  0.5 freezes fire 1:0 until 2.0; 1.0 and 1.5 freeze nothing (1:0 frozen);
    2.0: the freeze ended at 2.0 ([t, t + d)), so 1:0 (the strongest) again, until 3.5; 2.5 and
    3.0 nothing; 3.5 again 1:0. Every ice cast still hits (6 hits by 3.0).
    As written: 0.5 1:0 (until 2.0), 1.0 1:3 (until 2.5), 1.5 none left, 2.0 1:0, 2.5 1:3.

    Covers: D-52, rune:ice, D-15"""
    a = icer({"1:0": ("ice", 1), "1:3": ("ice", 1)})
    r = battle(a, TARGETS, balance(max_frozen=1), trace=True)
    assert freezes(r)[:3] == [(0.5, "1:0"), (2.0, "1:0"), (3.5, "1:0")]
    assert len([t for t in times(r, "hit", side=1) if t <= 3.0]) == 6
    r = battle(a, TARGETS, frozen_rules(), trace=True)
    assert freezes(r)[:4] == [(0.5, "1:0"), (1.0, "1:3"), (2.0, "1:0"), (2.5, "1:3")]


def test_freeze_limit_with_an_ice_copied_by_a_mimic():
    """Side 0: ice 1:0 and a mimic 2:0 outward of it (it copies the ice at 0.6 x its power).
    max_frozen 1: at 0.5 the ice freezes 1:0; the mimic's copy (same turn) freezes nothing, but
    its hit lands. As written the copy freezes the next strongest, water 1:3.

    Covers: D-52, rune:mimic"""
    a = icer({"1:0": ("ice", 1), "2:0": ("mimic", 1)})
    r = battle(a, TARGETS, balance(max_frozen=1), trace=True)
    assert [f for f in freezes(r) if f[0] == 0.5] == [(0.5, "1:0")]
    copies = [e for e in events(r, "cast", side=0, cell="2:0") if e["t"] == 0.5]
    assert copies and copies[0]["copy_of"] == "1:0"
    assert [e["t"] for e in events(r, "hit", side=1) if e["source"] == "2:0"][:1] == [0.5]
    r = battle(a, TARGETS, frozen_rules(), trace=True)
    assert [f for f in freezes(r) if f[0] == 0.5] == [(0.5, "1:0"), (0.5, "1:3")]


def test_freeze_refused_while_a_sealed_cell_is_frozen():
    """Side 1: fire II 1:0 and water I 1:3 only (n = 2, cap 1). Side 0: ices 1:0 and 1:3
    (a cycle of 2 turns: side 0 erodes at 1.0, 2.0, ...). max_frozen 1:
      0.5 ice freezes fire 1:0 until 2.0; 1.0 refused; at 1.0 side 0's erosion seals the fire
      (outermost ring 1, highest grade), frozen and sealed; 1.5 refused: the sealed fire's
      freeze still counts, although the water is free; 2.0 the fire's freeze is over: the
      water 1:3 (the only unsealed turn rune) is frozen until 3.5.

    Covers: D-52, D-28"""
    a = icer({"1:0": ("ice", 1), "1:3": ("ice", 1)})
    b = board({"1:0": ("fire", 2), "1:3": ("water", 1)}, max_hp=BIG)
    r = battle(a, b, balance(max_frozen=1), trace=True)
    assert [(e["t"], e["cell"]) for e in events(r, "seal", side=1)][:1] == [(1.0, "1:0")]
    assert freezes(r)[:2] == [(0.5, "1:0"), (2.0, "1:3")]


# -- the keys themselves ----------------------------------------------------------------------

@pytest.mark.parametrize("key, value", [("battle.min_cycle_turns", 0),
                                        ("erosion.seal_cap_min", -1),
                                        ("freeze.max_frozen", -1)])
def test_bad_balance_values_are_refused_by_key(key, value):
    """A minimum cycle below 1, a negative cap floor or freeze limit: refused, naming the key.

    Covers: D-53"""
    with pytest.raises(RulesError, match=key.replace(".", r"\.")):
        load_rules(FROZEN_RULES, {key: value})
