"""Cores, mana spring, boss rules, relics, draws (RULES sections 1, 3, 7-9; D-1, D-9, D-11a,
D-35, D-37).

Static powers are read from `explain` (power = one hit before affinity and overdrive, D-12);
dynamic effects from whole traces. Every expectation is worked by hand from the frozen rules:
fire 6, wind 3 (x2 hits), water heal 5, earth barrier 5, thunder 5, dark 3, light heal 3, ice 3;
grades x1 / x1.8 / x3.2; rings x1 / x1.25 / x1.5. The helpers are
tests/rules/test_rules_resonance_affinity.py's.
"""
import pytest

from conftest import board

from rune_env.battle import battle
from rune_env.battle.explain import explain
from test_rules_resonance_affinity import APPROX, cells, events, fires, power


# --------------------------------------------------------------------------- sun core (D-35)
def test_sun_half_multipliers(rules):
    """The sun flows into ring 1 only, at half effect: m -> 1 + (m - 1)/2.
    Sun fire: wind 1:0 firestorm 2 -> 1.5: 3 x 1.5 = 4.5; fire 1:0 attunement 1.25 -> 1.125: 6.75;
    thunder 1:0 discharge 1.2 -> 1.1: 5.5; wind 2:0 (ring 2): 3 x 1.25 = 3.75, no flow.
    Sun water: earth mud wall 1.5 -> 1.25: 6.25; thunder electrocute 1.3 -> 1.15: 5.75;
    ice deep freeze 1.2 -> 1.1: 3.3. Sun wind: fire fanned flame 1.5 -> 1.25: 7.5; ice blizzard
    1.5 -> 1.25: 3.75; water drizzle 1.2 -> 1.1: 5.5. Sun thunder: wind storm 1.2 -> 1.1: 3.3.
    Sun light: water blessed rain 1.3 -> 1.15: 5.75. Sun earth: fire lava 1.3 -> 1.15: 6.9.

    Covers: core:sun, D-35"""
    def sun(element, kind, cell="1:0"):
        return power(board({cell: (kind, 1)}, core="sun", sun_element=element), cell)

    cases = [("fire", "wind", 4.5), ("fire", "fire", 6.75), ("fire", "thunder", 5.5),
             ("water", "earth", 6.25), ("water", "thunder", 5.75), ("water", "ice", 3.3),
             ("wind", "fire", 7.5), ("wind", "ice", 3.75), ("wind", "water", 5.5),
             ("thunder", "wind", 3.3), ("light", "water", 5.75), ("earth", "fire", 6.9)]
    for element, kind, want in cases:
        assert sun(element, kind) == pytest.approx(want, **APPROX), (element, kind)
    assert sun("fire", "wind", "2:0") == pytest.approx(3.75, **APPROX)


def test_sun_takes_no_part_in_opposition(rules):
    """Sun water next to ring-1 fire: no opposition (fire 6.0; there is no water -> fire flow).
    Sun light with dark 1:0: umbra's multiplier is 1, no opposition: 3.0.

    Covers: core:sun, D-35"""
    assert power(board(fires("1:0"), core="sun", sun_element="water"), "1:0") == \
        pytest.approx(6.0, **APPROX)
    assert power(board({"1:0": ("dark", 1)}, core="sun", sun_element="light"), "1:0") == \
        pytest.approx(3.0, **APPROX)


def test_sun_full_flow_from_a_node_counts(rules):
    """Sun fire, wind 1:0, node 2:0 linking 1:0 with fire 2:1: the wind gets firestorm from the
    sun (x1.5) and from the linked fire at full strength (x2): the full one counts, once:
    3 x 2 = 6.0 (not 4.5, not 3 x 2 x 1.5 = 9).

    Covers: core:sun, D-35"""
    b = board({"1:0": ("wind", 1), "2:0": ("node", 1), "2:1": ("fire", 1)},
              core="sun", sun_element="fire")
    assert power(b, "1:0") == pytest.approx(6.0, **APPROX)


def test_sun_reflect_ten_percent(rules):
    """Sun water, earth 1:0 (mud wall at half: reflect 10%). t = 0.5: side 0's earth gains
    5 x 1.25 = 6.25 barrier; side 1's fire hits 6 (fire vs {earth}: neutral, x1): the barrier
    absorbs 6, and 10% x 6 = 0.6 is reflected to side 1 (HP 100 - 0.6 = 99.4).

    Covers: core:sun, D-35"""
    b0 = board({"1:0": ("earth", 1)}, core="sun", sun_element="water")
    assert explain(b0, rules)["reflect"] == pytest.approx(0.1, **APPROX)
    r = battle(b0, board(fires("1:0")), rules, trace=True)
    assert events(r, "barrier", 0)[0]["value"] == pytest.approx(6.25, **APPROX)
    ref = events(r, "reflect", 1)[0]
    assert ref["t"] == 0.5
    assert ref["value"] == pytest.approx(0.6, **APPROX)
    assert ref["hp"][1] == pytest.approx(99.4, **APPROX)


def test_sun_discharge_fifteen_percent(rules):
    """Sun fire, thunder 1:0 (discharge at half: strip 15%). Side 1's earth gains 5 barrier at
    t = 0.5 (after side 0's turn). At t = 1.0 side 0's thunder first strips 0.15 x 5 = 0.75.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("thunder", 1)}, core="sun", sun_element="fire"),
               board({"1:0": ("earth", 1)}), rules, trace=True)
    strip = events(r, "barrier_strip", 1)[0]
    assert strip["t"] == 1.0
    assert strip["value"] == pytest.approx(0.75, **APPROX)
    assert events(r, "cast", 0)[0]["value"] == pytest.approx(5.5, **APPROX)


def test_sun_storm_delay_150ms(rules):
    """Sun thunder, wind 1:0 (storm at half: 0.15 s). t = 0.5: side 0's wind casts first and
    pushes side 1's due turn from 0.5 to 0.65; side 1 (one rune) casts at 0.65, next due 1.15;
    t = 1.0: pushed to 1.30.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("wind", 1)}, core="sun", sun_element="thunder"),
               board({"1:0": ("water", 1)}), rules, trace=True)
    delays = [(e["t"], e["value"], e["next_turn"]) for e in events(r, "storm_delay", 1)][:2]
    assert delays == [(0.5, 150, pytest.approx(0.65)), (1.0, 150, pytest.approx(1.3))]
    assert [e["t"] for e in events(r, "cast", 1)][:2] == [0.65, 1.3]


def test_sun_deep_freeze_x125(rules):
    """Sun water, ice 1:0: freeze 1.5 s x 1.25 = 1875 ms: side 1's fire frozen at 0.5 until
    2.375 s.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("ice", 1)}, core="sun", sun_element="water"),
               board(fires("1:0")), rules, trace=True)
    fr = events(r, "freeze", 1)[0]
    assert (fr["t"], fr["cell"], fr["until"]) == (0.5, "1:0", pytest.approx(2.375))


def test_sun_umbra_x15(rules):
    """Sun light, dark 1:0: curse 3 s x 1.5 = 4.5 s: cursed at 0.5 until 5.0.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("dark", 1)}, core="sun", sun_element="light"),
               board({"1:0": ("water", 1)}), rules, trace=True)
    cu = events(r, "curse", 1)[0]
    assert (cu["t"], cu["until"]) == (0.5, pytest.approx(5.0))


def test_sun_keeps_drizzle_charge_whole(rules):
    """Sun wind, water 1:0: drizzle at half (x1.1: heal 5.5) but the charge is whole: side 1's
    wind at t = 0.5 (after side 0's water) uses it: both hits 3 x 1 (wind vs {water}: neutral)
    x 0.5 = 1.5.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("water", 1)}, core="sun", sun_element="wind"),
               board({"1:0": ("wind", 1)}), rules, trace=True)
    assert events(r, "cast", 0)[0]["value"] == pytest.approx(5.5, **APPROX)
    assert events(r, "drizzle_use", 1)[0]["t"] == 0.5
    hits = [e["value"] for e in events(r, "hit", 0) if e["t"] == 0.5]
    assert hits == [pytest.approx(1.5, **APPROX)] * 2


def test_sun_keeps_thundercloud_second_cast(rules):
    """Sun wind, thunder 1:0: thundercloud still casts twice: two casts of 5 at t = 0.5.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("thunder", 1)}, core="sun", sun_element="wind"), board({}), rules,
               trace=True)
    at = [e["value"] for e in events(r, "cast", 0) if e["t"] == 0.5]
    assert at == [pytest.approx(5.0, **APPROX)] * 2
    assert [e["value"] for e in events(r, "hit", 1) if e["t"] == 0.5] == [pytest.approx(5.0)] * 2


def test_sun_keeps_lava_erosion_whole(rules):
    """Sun earth, fire 1:0 (lava x1.15: 6.9) still erodes once per cast: at t = 0.5 (side 0's
    cycle of 2 turns is not over) one erosion seals side 1's 1:0 (cap floor(2/2) = 1).

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("fire", 1), "1:3": ("earth", 1)}, core="sun", sun_element="earth"),
               board({"1:0": ("water", 1), "1:3": ("water", 1)}), rules, trace=True)
    assert events(r, "cast", 0)[0]["value"] == pytest.approx(6.9, **APPROX)
    at = [e for e in r.events if e["t"] == 0.5 and e["type"] in ("erosion", "seal")]
    assert [(e["type"], e["side"], e["cell"]) for e in at] == [("erosion", 1, None),
                                                                ("seal", 1, "1:0")]


def test_sun_keeps_black_flame_curse_whole(rules):
    """Sun dark, fire 1:0: black flame's curse lasts the full 3 s: until 3.5.

    Covers: core:sun, D-35"""
    r = battle(board(fires("1:0"), core="sun", sun_element="dark"), board({"1:0": ("water", 1)}),
               rules, trace=True)
    cu = events(r, "curse", 1)[0]
    assert (cu["t"], cu["until"]) == (0.5, pytest.approx(3.5))


def test_sun_keeps_blessed_rain_overflow(rules):
    """Sun light, water 1:0: heal 5 x 1.15 = 5.75 at full HP: all of it overflows to barrier.

    Covers: core:sun, D-35"""
    r = battle(board({"1:0": ("water", 1)}, core="sun", sun_element="light"), board({}), rules,
               trace=True)
    b = events(r, "barrier", 0)[0]
    assert (b["t"], b["value"]) == (0.5, pytest.approx(5.75, **APPROX))


# --------------------------------------------------------------------------- moon, bosses, relics
def test_moon_core_interval_and_power(rules):
    """Moon: interval 0.5 x 0.8 = 400 ms, however many runes; power x0.9: fire 5.4.
    Fire 1:0 and 1:2 (no pattern): casts at 0.4 (1:0), 0.8 (1:2), 1.2 (1:0).

    Covers: core:moon"""
    b = board(fires("1:0", "1:2"), core="moon")
    rep = explain(b, rules)
    assert rep["interval_ms"] == 400
    assert rep["cells"]["1:0"]["power"] == pytest.approx(5.4, **APPROX)
    r = battle(b, board({}), rules, trace=True)
    assert [(e["t"], e["cell"]) for e in events(r, "cast", 0)][:3] == \
        [(0.4, "1:0"), (0.8, "1:2"), (1.2, "1:0")]


def test_swift_boss_interval_425(rules):
    """Swift: 500 x 0.85 = 425 ms: casts at 0.425, 0.85, 1.275.

    Covers: boss:swift"""
    b = board(fires("1:0"), boss_rules=["swift"])
    assert explain(b, rules)["interval_ms"] == 425
    r = battle(b, board({}), rules, trace=True)
    assert [e["t"] for e in events(r, "cast", 0)][:3] == [0.425, 0.85, 1.275]


def test_hourglass_interval_and_products(rules):
    """Hourglass: 500 x 0.9 = 450 ms. Swift + hourglass: 0.5 x 0.85 x 0.9 = 382.5 -> 383 ms
    (half up). Moon + swift + hourglass: 0.5 x 0.8 x 0.85 x 0.9 = 306 ms.

    Covers: relic:hourglass, boss:swift, core:moon"""
    b = board(fires("1:0"), relics=["hourglass"])
    assert explain(b, rules)["interval_ms"] == 450
    r = battle(b, board({}), rules, trace=True)
    assert [e["t"] for e in events(r, "cast", 0)][:2] == [0.45, 0.9]
    assert explain(board(fires("1:0"), relics=["hourglass"], boss_rules=["swift"]),
                   rules)["interval_ms"] == 383
    assert explain(board(fires("1:0"), core="moon", relics=["hourglass"], boss_rules=["swift"]),
                   rules)["interval_ms"] == 306


def test_giant_boss_hp(rules):
    """Giant: max HP x1.3. Round 1: 100 x 1.3 = 130; round 3: (100 + 2 x 25) x 1.3 = 195; a board
    max_hp 80: 80 x 1.3 = 104. A fire (6 per 0.5 s) needs 22 hits for 130 HP (21 x 6 = 126):
    down at t = 11.0 s.

    Covers: boss:giant, D-9"""
    assert explain(board({}, boss_rules=["giant"]), rules)["max_hp"] == pytest.approx(130.0)
    assert explain(board({}, boss_rules=["giant"], round=3), rules)["max_hp"] == \
        pytest.approx(195.0)
    assert explain(board({}, boss_rules=["giant"], round=3, max_hp=80), rules)["max_hp"] == \
        pytest.approx(104.0)
    r = battle(board(fires("1:0")), board({}, boss_rules=["giant"]), rules)
    assert r.max_hp == (100.0, pytest.approx(130.0))
    assert (r.winner, r.time, r.casts[0]) == (0, 11.0, 22)


def test_max_hp_from_round_and_board(rules):
    """Max HP: 100 + 25 x (round - 1): round 4 -> 175; a board's max_hp replaces it.

    Covers: D-9"""
    r = battle(board({}, round=4), board({}, round=2, max_hp=60), rules)
    assert r.max_hp == (pytest.approx(175.0), pytest.approx(60.0))


def test_ember_jar(rules):
    """Fire and thunder x1.2: fire 7.2, thunder 6.0; wind unchanged 3.0.

    Covers: relic:ember_jar"""
    c = cells(board({"1:0": ("fire", 1), "1:2": ("thunder", 1), "1:4": ("wind", 1)},
                    relics=["ember_jar"]))
    assert c["1:0"]["power"] == pytest.approx(7.2, **APPROX)
    assert c["1:2"]["power"] == pytest.approx(6.0, **APPROX)
    assert c["1:4"]["power"] == pytest.approx(3.0, **APPROX)


def test_tide_vessel(rules):
    """Water and light healing x1.3: water 6.5, light 3.9; fire unchanged 6.

    Covers: relic:tide_vessel"""
    c = cells(board({"1:0": ("water", 1), "1:2": ("light", 1), "1:4": ("fire", 1)},
                    relics=["tide_vessel"]))
    assert c["1:0"]["power"] == pytest.approx(6.5, **APPROX)
    assert c["1:2"]["power"] == pytest.approx(3.9, **APPROX)
    assert c["1:4"]["power"] == pytest.approx(6.0, **APPROX)


def test_tide_vessel_before_curse(rules):
    """Side 0 water + tide vessel, side 1 dark. t = 0.5: side 0 heals 6.5 (full HP); side 1's dark
    hits 3 and curses side 0 until 3.5. t = 1.0: heal 5 x 1.3 = 6.5, halved by the curse: 3.25.

    Covers: relic:tide_vessel, D-37"""
    r = battle(board({"1:0": ("water", 1)}, relics=["tide_vessel"]), board({"1:0": ("dark", 1)}),
               rules, trace=True)
    heals = [(e["t"], e["value"]) for e in events(r, "heal", 0)][:2]
    assert heals == [(0.5, pytest.approx(6.5, **APPROX)), (1.0, pytest.approx(3.25, **APPROX))]


def test_bulwark(rules):
    """Earth's barrier x1.4: 5 x 1.4 = 7.0 in battle; fire unchanged.

    Covers: relic:bulwark"""
    b = board({"1:0": ("earth", 1), "1:3": ("fire", 1)}, relics=["bulwark"])
    c = cells(b)
    assert c["1:0"]["power"] == pytest.approx(7.0, **APPROX)
    assert c["1:3"]["power"] == pytest.approx(6.0, **APPROX)
    r = battle(b, board({}), rules, trace=True)
    assert events(r, "barrier", 0)[0]["value"] == pytest.approx(7.0, **APPROX)


def test_focusing_mirror(rules):
    """Amplify's increase x1.5: amplify I 1:0 -> 1 + 0.75 x 1 x 1 x 1.5 = 2.125; fire 2:0:
    6 x 1.25 x 2.125 = 15.9375 (13.125 without). Amplify II: 1 + 0.75 x 1.8 x 1.5 = 3.025.

    Covers: relic:focusing_mirror"""
    c = cells(board({"1:0": ("amplify", 1), "2:0": ("fire", 1)}, relics=["focusing_mirror"]))
    assert c["1:0"]["factor"] == pytest.approx(2.125, **APPROX)
    assert c["2:0"]["power"] == pytest.approx(15.9375, **APPROX)
    assert power(board({"1:0": ("amplify", 1), "2:0": ("fire", 1)}), "2:0") == \
        pytest.approx(13.125, **APPROX)
    c = cells(board({"1:0": ("amplify", 2), "2:0": ("fire", 1)}, relics=["focusing_mirror"]))
    assert c["1:0"]["factor"] == pytest.approx(3.025, **APPROX)


def test_mana_vein(rules):
    """Every flow's increase x1.3: firestorm 2 -> 2.3: wind 2:0 fed by fire 1:0:
    3 x 1.25 x 2.3 = 8.625; attunement 1.25 -> 1.325: fire 2:0 fed by fire 1:0:
    6 x 1.25 x 1.325 = 9.9375. Amplify is no flow: factor stays 1.75.

    Covers: relic:mana_vein"""
    v = dict(relics=["mana_vein"])
    assert power(board({"1:0": ("fire", 1), "2:0": ("wind", 1)}, **v), "2:0") == \
        pytest.approx(8.625, **APPROX)
    assert power(board(fires("1:0", "2:0"), **v), "2:0") == pytest.approx(9.9375, **APPROX)
    assert cells(board({"1:0": ("amplify", 1), "2:0": ("fire", 1)}, **v))["1:0"]["factor"] == \
        pytest.approx(1.75, **APPROX)


def test_mana_vein_with_sun(rules):
    """Both: m -> 1 + (m - 1) x 1.3 / 2. Sun fire into wind 1:0: 1 + 1 x 0.65 = 1.65: 4.95.
    Into fire 1:0 (attunement): 1 + 0.25 x 0.65 = 1.1625: 6.975.

    Covers: D-37, relic:mana_vein, core:sun"""
    v = dict(core="sun", sun_element="fire", relics=["mana_vein"])
    assert power(board({"1:0": ("wind", 1)}, **v), "1:0") == pytest.approx(4.95, **APPROX)
    assert power(board(fires("1:0"), **v), "1:0") == pytest.approx(6.975, **APPROX)


# --------------------------------------------------------------------------- mana spring
def test_mana_spring_grade_plus_one_max_three(rules):
    """A spring at 1:0 reaches 1:0, 1:1, 1:5, 2:0, 2:1, 2:11. Fire I at 2:0 -> grade II:
    6 x 1.8 x 1.25 = 13.5; fire III at 1:1 stays III: 6 x 3.2 = 19.2; fire II at 1:5 -> III:
    19.2; fire I at 2:4 (out of reach): 6 x 1.25 = 7.5. (No patterns: 1:1, 1:5 are not facing.)

    Covers: artifact:mana_spring, D-11a"""
    c = cells(board({"2:0": ("fire", 1), "1:1": ("fire", 3), "1:5": ("fire", 2),
                     "2:4": ("fire", 1)}, artifacts={"1:0": "mana_spring"}))
    assert (c["2:0"]["grade"], c["2:0"]["power"]) == (2, pytest.approx(13.5, **APPROX))
    assert (c["1:1"]["grade"], c["1:1"]["power"]) == (3, pytest.approx(19.2, **APPROX))
    assert (c["1:5"]["grade"], c["1:5"]["power"]) == (3, pytest.approx(19.2, **APPROX))
    assert (c["2:4"]["grade"], c["2:4"]["power"]) == (1, pytest.approx(7.5, **APPROX))


# --------------------------------------------------------------------------- draws (D-1)
def test_identical_boards_draw_at_timeout(rules):
    """Two identical fire boards with 10000 HP: each side takes the same 120 hits; nobody is down
    at 60 s; equal ratios: a draw. Damage each: hits at t = 0.5k, k = 1..120; overdrive extra
    0.1 x (floor(k/2) - 20) for k >= 42: values 21..59 twice each = 0.2 x (1 + ... + 39) = 156,
    plus k = 120 (60 s): 4 -> 6 x (120 + 160) = 1680; HP 10000 - 1680 = 8320 each.

    Covers: D-1"""
    b = board(fires("1:0"), max_hp=10000)
    r = battle(b, b, rules)
    assert r.winner is None and r.reason == "timeout" and r.time == 60.0
    assert r.hp == (pytest.approx(8320.0, rel=1e-9), pytest.approx(8320.0, rel=1e-9))


def test_draw_tolerance_on_ratios(rules):
    """Same boards as above (1680 damage each). Side 1 max HP 10000 + d: its ratio is higher by
    1680 x (1/10000 - 1/(10000 + d)) = 1680 d / (10000 (10000 + d)) ~= 1.68e-5 x d:
    d = 3e-5 -> 5.0e-10 <= 1e-9: a draw; d = 1e-4 -> 1.68e-9 > 1e-9: side 1 wins. Two passive boards (one water each, full HP): ratios 1 = 1: a draw.

    Covers: D-1"""
    a = board(fires("1:0"), max_hp=10000)
    assert battle(a, board(fires("1:0"), max_hp=10000.00003), rules).winner is None
    assert battle(a, board(fires("1:0"), max_hp=10000.0001), rules).winner == 1
    w = board({"1:0": ("water", 1)})
    r = battle(w, board({"1:0": ("water", 1)}, max_hp=300), rules)
    assert r.winner is None and r.hp == (100.0, 300.0)
