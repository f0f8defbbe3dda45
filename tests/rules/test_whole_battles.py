"""Whole battles played to the end, every expectation worked out BY HAND from RULES.md and the
frozen config (tests/data/rules.yaml), step by step in the comments.

Each battle mixes several rules; the boards are small so the hand computation stays tractable.
Unless said otherwise: interval 500 ms (first turn at t = 0.5 s), max HP 100, overdrive only
from t = 21 s on (never reached before it is mentioned), side 0 moves before side 1 at the same
millisecond (D-8), and a side's erosions come at the end of each of its cycles (D-30).

Numbers used again and again (frozen config):
  fire 6, wind 3 x2 hits, water heal 5, earth barrier 5, thunder 5 (wears barrier x2), dark 3
  (curse 3 s), light heal 3, ice 3 (freeze 1.5 s); grades x1 / x1.8 / x3.2; rings x1 / x1.25 /
  x1.5; amplify 1 + 0.75 G R; delay x2.5 every other turn; affinity clamp(1 + 0.6 (beaten -
  beating), 0.6, 1.4); seal cap floor(n / 2); sun core: half effect, 1 + (m - 1) / 2.
"""
from __future__ import annotations

import pytest
from conftest import board

from rune_env.battle import battle


def approx(x):
    return pytest.approx(x, rel=1e-12, abs=1e-9)


def play(b0, b1, rules):
    return battle(b0, b1, rules, trace=True)


def of_type(result, *types):
    return [e for e in result.events if e["type"] in types]


def check(r, *, winner, time, hp, casts, reason="knockout", turns=None, seals=None):
    assert r.winner == winner
    assert r.reason == reason
    assert r.time == approx(time)
    assert r.hp[0] == approx(hp[0])
    assert r.hp[1] == approx(hp[1])
    assert r.casts == casts
    if turns is not None:
        assert r.turns == turns
    if seals is not None:
        assert r.seals == seals


# ---------------------------------------------------------------------------------------------
def test_b01_grades_rings_firestorm_against_barrier(rules):
    """Fire II feeds a ring-2 wind (firestorm) against a lone earth that stacks barrier; side 1's
    erosion spends the ward of side 0's grade-II earth, then seals it, then is capped.

    Covers: grades, rings, flow:firestorm, rune:fire, rune:wind, rune:earth, D-13,
    affinity:wind>earth, erosion, ward, D-31, D-32, D-7, D-10, D-12
    """
    # Side 0: fire II 1:0, wind I 2:0 (inward 1:0 = fire: firestorm), earth II 2:6 (a decoy).
    #   fire  = 6 x 1.8 (II) x 1 (ring 1)              = 10.8
    #   wind  = 3 x 1 (I) x 1.25 (ring 2) x 2 (storm)  = 7.5 a hit, two hits
    #   earth II sits in the outermost ring (2): holds 1 ward. cap = floor(3/2) = 1.
    # Side 1: earth I 1:0, barrier 5 a turn; outermost ring 1 -> 1 ward; cap = floor(1/2) = 0.
    # Affinity of side 0 vs {earth}: fire x1 (beats ice, beaten by water: neither there);
    #   wind beats earth: 1 + 0.6 x 1 = 1.6 -> clamp 1.4: a wind hit = 7.5 x 1.4 = 10.5.
    # Turn cells: side 0 [1:0, 2:0, 2:6] (cycle 1.5 s), side 1 [1:0] (cycle 0.5 s).
    #   t    side 0                         side 1 (hp1, b1 after)           erosions
    #   0.5  fire 10.8 -> hp1 89.2           +5 -> b1 5                       S1: earth II (grade
    #                                                                          first) ward spent
    #   1.0  wind 10.5: 5 absorbed, 5.5 hp;  +5 -> b1 5                       S1: earth II sealed
    #        10.5 -> hp1 73.2                                                  (seals 1 = cap)
    #   1.5  earth sealed: passes            +5 -> b1 10                      S0: S1 earth ward
    #                                                                          spent; S1: wind capped
    #   2.0  fire 10.8: 10 absorbed -> 72.4  b1 5
    #   2.5  wind: 5.5 + 10.5 -> 56.4        b1 5
    #   3.0  pass                            b1 10                            S0: capped (cap 0)
    # From 1.5 s on a 1.5 s period: hp1 -0.8 (fire) then -16 (wind).
    #   3.5 55.6 | 4.0 39.6 | 5.0 38.8 | 5.5 22.8 | 6.5 22.0 | 7.0 6.0 | 8.0 5.2
    #   8.5: wind hit 1: 5 absorbed, 5.5 to hp: 5.2 - 5.5 = -0.3 -> side 1 down at 8.5 s.
    # Casts: side 0 17 turns (0.5..8.5) minus 5 sealed-earth turns (1.5, 3.0, 4.5, 6.0, 7.5) = 12;
    # side 1 16 turns (0.5..8.0; its 8.5 turn never comes), all casts. Side 1 never attacks.
    r = play(board({"1:0": ("fire", 2), "2:0": ("wind", 1), "2:6": ("earth", 2)}),
             board({"1:0": ("earth", 1)}), rules)
    check(r, winner=0, time=8.5, hp=(100.0, 0.0), casts=(12, 16), turns=(17, 16), seals=(1, 0))
    seals = of_type(r, "seal", "ward")
    assert [(e["t"], e["type"], e["side"], e["cell"]) for e in seals] == [
        (0.5, "ward", 0, "2:6"), (1.0, "seal", 0, "2:6"), (1.5, "ward", 1, "1:0")]
    # the wind's first hit at 1.0 s: 5 absorbed, hp1 89.2 - 5.5 = 83.7
    hit = [e for e in of_type(r, "hit") if e["t"] == 1.0][0]
    assert hit["value"] == approx(10.5) and hit["absorbed"] == approx(5.0)
    assert hit["hp"][1] == approx(83.7)


def test_b02_thunder_against_barrier_with_sun_discharge(rules):
    """A thunder fed by a sun core (fire: discharge at half effect) with an ember jar, against
    an earth that renews 5 barrier each turn: every thunder point costs 2 barrier.

    Covers: rune:thunder, D-13, flow:discharge, core:sun, D-35, relic:ember_jar,
    affinity:earth>thunder, rune:earth, ward, D-32, D-9
    """
    # Side 0: thunder I 1:0, sun core as fire: discharge at half: x(1 + 0.2/2) = x1.1, strips
    #   0.3/2 = 15% of the opponent's barrier before the damage. Ember jar x1.2.
    #   power = 5 x 1.1 x 1.2 = 6.6. One rune: cap 0, never sealed.
    # Side 1: earth I 1:0 (ward 1, cap 0), max HP 30 from the board file.
    # Affinity thunder vs {earth}: earth beats thunder: 1 - 0.6 = 0.4 -> clamp 0.6: hit 3.96.
    # t=0.5: no barrier yet: hp1 30 - 3.96 = 26.04. S0 erosion: earth's ward spent. S1: b1 5.
    # t=1.0: strip 15% of 5 = 0.75 -> b1 4.25; hit 3.96 would wear 7.92 >= 4.25, so it absorbs
    #   4.25 / 2 = 2.125 and 3.96 - 2.125 = 1.835 reaches HP: 24.205. S0 erosion: capped (cap 0).
    #   S1: b1 5 again. Every later turn is the same: -1.835.
    # hp1 after t = 1.0 + 0.5 n: 24.205 - 1.835 n; n = 13 (7.5 s): 0.35; n = 14 (8.0 s): -1.485.
    # (With wear 1 the barrier would absorb every hit whole: no knockout at all.)
    r = play(board({"1:0": ("thunder", 1)}, core="sun", sun_element="fire", relics=["ember_jar"]),
             board({"1:0": ("earth", 1)}, max_hp=30), rules)
    check(r, winner=0, time=8.0, hp=(100.0, 0.0), casts=(16, 15), seals=(0, 0))
    assert r.max_hp == (100.0, 30.0)
    strip = [e for e in of_type(r, "barrier_strip") if e["t"] == 1.0][0]
    assert strip["value"] == approx(0.75)
    hit = [e for e in of_type(r, "hit") if e["t"] == 1.0][0]
    assert hit["value"] == approx(3.96) and hit["absorbed"] == approx(2.125)
    assert hit["hp"][1] == approx(24.205) and hit["barrier"][1] == 0.0


def test_b03_black_flame_curse_halves_tide_vessel_healing(rules):
    """A fire fed by a sun core as dark (black flame: the fire curses) against a light healer
    with a tide vessel: the curse is renewed every turn, the healing halved after the vessel.

    Covers: flow:black_flame, core:sun, D-35, D-23, D-14, rune:light, relic:tide_vessel, D-37,
    rune:fire, D-10
    """
    # Side 0: fire I 1:0; the sun as dark gives black flame (x1, kept whole at half effect): the
    #   fire curses side 1 for 3 s at every cast. Fire 6; affinity vs {light}: x1. Cap 0.
    # Side 1: light II 1:0: heal 3 x 1.8 = 5.4, tide vessel x1.3 = 7.02; cursed: x0.5 = 3.51
    #   (the vessel applies before the curse halves, D-37). Cap 0.
    # Each 0.5 s: side 0 hits 6 and (re)curses to t + 3 s (later end wins), then side 1 heals
    #   3.51: net -2.49 per turn. Turn 1: 100 - 6 = 94, +3.51 = 97.51.
    # hp1 before turn n's hit = 100 - 2.49 (n - 1); n = 38: 7.87 -> 1.87 -> 5.38;
    #   n = 39 (19.5 s): 5.38 - 6 = -0.62: down. (Uncursed, 7.02 > 6: side 1 would never fall.)
    r = play(board({"1:0": ("fire", 1)}, core="sun", sun_element="dark"),
             board({"1:0": ("light", 2)}, relics=["tide_vessel"]), rules)
    check(r, winner=0, time=19.5, hp=(100.0, 0.0), casts=(39, 38))
    heals = of_type(r, "heal")
    assert len(heals) == 38
    assert all(e["value"] == approx(3.51) for e in heals)
    curses = of_type(r, "curse")
    assert [c["until"] for c in curses[:3]] == [3.5, 4.0, 4.5]


def test_b04_eclipse_double_erosion_breaks_a_resonance(rules):
    """An eclipse core erodes twice a cycle: the first erosion spends an earth's ward, the second
    seals it, then a resonant ring-1 fire is sealed and the three-fold pattern breaks.

    Covers: core:eclipse, D-30, D-36, erosion, ward, D-31, D-32, D-34, resonance:threefold,
    D-24, D-28, D-7
    """
    # Side 0 (eclipse): fire I 1:0; its outermost ring is 1, so the fire is x0.85: 5.1. Two
    #   erosions per cycle (1 turn = one cycle). Cap 0. Affinity vs fires/earth: x1.
    # Side 1: fire I at 1:0, 1:2, 1:4 (three-fold in ring 1: x1.5 -> 9) and earth I 2:6
    #   (outermost ring 2: 1 ward). Cap floor(4/2) = 2. Turn cells [1:0, 1:2, 1:4, 2:6].
    # t=0.5: S0 hits 5.1 (hp1 94.9); erosion 1: ring 2 first -> earth's ward; erosion 2: earth
    #   sealed (seals 1). S1 1:0 casts 9 (pattern intact) -> hp0 91.
    # t=1.0: S0 -> 89.8; erosion 1: ring 2 has no unsealed rune -> ring 1, all grade I, earliest
    #   1:0 sealed (seals 2 = cap); erosion 2: 1:2 capped. S1 1:2: pattern broken -> 6 -> hp0 85.
    # t=1.5: S1 1:4 6 -> 79. t=2.0: S1 2:6 sealed: passes; its erosion of side 0 capped (cap 0).
    # Then side 1 casts only at its turns k = 4j+2, 4j+3 (1:2, 1:4): 6 each.
    # Side 0 needs 100 / 5.1 -> 20 hits (19 x 5.1 = 96.9, hp1 3.1): down at 20 x 0.5 = 10.0 s.
    # Side 1's turns k = 1..19 (its 10.0 turn never comes): casts k = 1, 2, 3, 6, 7, 10, 11, 14,
    #   15, 18, 19 = 11; damage 9 + 10 x 6 = 69 -> hp0 31.
    r = play(board({"1:0": ("fire", 1)}, core="eclipse"),
             board({"1:0": ("fire", 1), "1:2": ("fire", 1), "1:4": ("fire", 1),
                    "2:6": ("earth", 1)}), rules)
    check(r, winner=0, time=10.0, hp=(31.0, 0.0), casts=(20, 11), turns=(20, 19), seals=(0, 2))
    s1_casts = [e["value"] for e in of_type(r, "cast") if e["side"] == 1]
    assert s1_casts[:3] == [approx(9.0), approx(6.0), approx(6.0)]
    assert of_type(r, "cast")[0]["value"] == approx(5.1)


def test_b05_overdrive_decides_an_otherwise_endless_duel(rules):
    """A fire that a water healer out-heals for 20 s: overdrive makes the fire win.

    Covers: overdrive, D-27, affinity:water>fire, rune:water, rune:fire, D-9, D-10
    """
    # Side 0: fire I 1:0; affinity vs {water}: water beats fire: 1 - 0.6 = 0.4 -> clamp 0.6:
    #   3.6 a hit, times overdrive 1 + 0.1 x max(0, floor(t) - 20).
    # Side 1: water I 1:0, max HP 10: heals 5 each turn (capped at 10), no overdrive on healing.
    # Each 0.5 s: hit, then heal. While the hit is < 5 side 1 is back at 10 after each turn:
    #   t <= 20.5: 3.6 | 21.x: 3.96 | 22.x: 4.32 | 23.x: 4.68   (all healed back to 10)
    #   24.0: 5.04 -> 4.96 -> 9.96    24.5: 4.92 -> 9.92
    #   25.0: 5.4  -> 4.52 -> 9.52    25.5: 4.12 -> 9.12
    #   26.0: 5.76 -> 3.36 -> 8.36    26.5: 2.60 -> 7.60
    #   27.0: 6.12 -> 1.48 -> 6.48    27.5: 0.36 -> 5.36
    #   28.0: 6.48 -> 5.36 - 6.48 = -1.12: down at 28.0 s.
    # Without overdrive: both full at 60 s, a draw.
    r = play(board({"1:0": ("fire", 1)}), board({"1:0": ("water", 1)}, max_hp=10), rules)
    check(r, winner=0, time=28.0, hp=(100.0, 0.0), casts=(56, 55))
    hits = {e["t"]: e["value"] for e in of_type(r, "hit")}
    assert hits[20.5] == approx(3.6)
    assert hits[21.0] == approx(3.96)
    assert hits[27.5] == approx(6.12)
    heal = [e for e in of_type(r, "heal") if e["t"] == 27.5][0]
    assert heal["hp"][1] == approx(5.36)


def test_b06_draw_at_the_timeout_with_equal_ratios(rules):
    """Each side lands one amplified hit before erosion seals its attacker; the HP ratios are
    equal at 60 s (round 5's 200 HP vs 100 HP): a draw.

    Covers: D-1, D-9, D-17, rune:amplify, boss:ironwall, ward, erosion, D-31, D-32, D-8, rune:dark
    """
    # Side 0 (round 5: max HP 100 + 25 x 4 = 200): dark I 2:0 with amplify I 1:0 inward:
    #   3 x 1.25 x (1 + 0.75 x 1 x 1) = 3 x 1.25 x 1.75 = 6.5625. Cap floor(2/2) = 1, no ward.
    # Side 1 (max HP 100, ironwall: its outermost-ring runes hold a ward): fire I 2:0 + amplify
    #   I 1:0: 6 x 1.25 x 1.75 = 13.125. Cap 1. Affinities: x1 both ways.
    # t=0.5: S0 dark hits 6.5625 -> hp1 93.4375; S0 erosion: S1 fire's ironwall ward spent.
    #        S1 fire hits 13.125 -> hp0 186.875; S1 erosion: S0 dark sealed.
    # t=1.0: S0 dark sealed (pass); erosion: S1 fire sealed. S1 fire sealed (pass); erosion: the
    #        amplify (ring 1) capped. Nothing else ever happens.
    # At 60 s: 186.875 / 200 = 0.934375 = 93.4375 / 100: within 1e-9 -> a draw.
    r = play(board({"2:0": ("dark", 1), "1:0": ("amplify", 1)}, round=5),
             board({"2:0": ("fire", 1), "1:0": ("amplify", 1)}, boss_rules=["ironwall"]), rules)
    check(r, winner=None, time=60.0, hp=(186.875, 93.4375), casts=(1, 1), reason="timeout",
          turns=(120, 120), seals=(1, 1))
    assert r.max_hp == (200.0, 100.0)


def test_b07_moon_core_against_swift_hourglass(rules):
    """A moon core (400 ms, x0.9) races a side with the swift boss rule and an hourglass
    (0.5 x 0.85 x 0.9 s = 382.5 ms -> 383 ms): the faster side wins by its 17th hit.

    Covers: core:moon, boss:swift, relic:hourglass, D-6, D-6a, rune:fire
    """
    # Side 0 (moon): interval 500 x 0.8 = 400 ms; fire 6 x 0.9 = 5.4 a hit.
    # Side 1 (swift, hourglass): 500 x 0.85 x 0.9 = 382.5 ms -> rounded half up: 383 ms; fire 6.
    # Side 1 needs 17 hits (16 x 6 = 96 < 100): at 17 x 383 = 6511 ms.
    # Side 0 needs 19 hits (18 x 5.4 = 97.2): at 19 x 400 = 7600 ms: too late.
    # By 6511 ms side 0 has hit 16 times (6400 ms): hp1 = 100 - 86.4 = 13.6.
    r = play(board({"1:0": ("fire", 1)}, core="moon"),
             board({"1:0": ("fire", 1)}, relics=["hourglass"], boss_rules=["swift"]), rules)
    check(r, winner=1, time=6.511, hp=(0.0, 13.6), casts=(16, 17))
    s1_times = [e["t"] for e in of_type(r, "cast") if e["side"] == 1]
    assert s1_times[:3] == [0.383, 0.766, 1.149]


def test_b08_mud_wall_reflection_downs_the_attacker(rules):
    """A fire II against water -> earth (mud wall): while side 1 has barrier, 20% of every hit
    comes back; a grade-III resonator decoy takes the seal, the earth's ward the next erosion,
    and the seal cap protects the mud wall. The reflection downs the attacker.

    Covers: flow:mud_wall, D-22, D-10, rune:resonator, D-31, D-32, ward, erosion,
    affinity:water>fire, rune:water, rune:earth
    """
    # Side 0: fire II 1:0, max HP 20: 10.8; vs {water I, earth I}: water beats fire with share
    #   0.5: 1 - 0.3 = 0.7 -> a hit 7.56. One rune: cap 0.
    # Side 1: water I 1:0 (heal 5), earth I 2:0 (inward water: mud wall x1.5): 5 x 1.25 x 1.5 =
    #   9.375 barrier; reflects 20% while barrier > 0. Resonator III 2:4 (in no pattern with a
    #   rune). Cap floor(3/2) = 1; outermost ring 2: the earth holds a ward.
    # t=0.5: hit 7.56 -> hp1 92.44 (no barrier, no reflection). S0 erosion: ring 2, highest
    #   grade: resonator III sealed (seals 1 = cap). S1 water +5 -> 97.44.
    # t=1.0: hit -> 89.88. S0 erosion: earth's ward spent. S1 earth: b1 9.375. S1 erosion: capped.
    # t=1.5: hit 7.56 all absorbed (b1 1.815); reflect 0.2 x 7.56 = 1.512 -> hp0 18.488.
    #   S0 erosion: earth capped (forever). S1 heal -> 94.88.
    # t=2.0: hit: 1.815 absorbed, 5.745 to hp -> 89.135; b1 was > 0: reflect 1.512 -> 16.976.
    #   S1 earth: b1 9.375.
    # Every turn from 1.5 s reflects 1.512: hp0 = 20 - 1.512 n at t = 1.0 + 0.5 n;
    #   n = 13 (7.5 s): 0.344; n = 14 (8.0 s): -1.168: side 0 down by its own hit's reflection.
    # hp1 each second: -5.745 + 5 = -0.745: at 8.0 s (after the hit) 89.135 - 6 x 0.745 = 84.665.
    r = play(board({"1:0": ("fire", 2)}, max_hp=20),
             board({"1:0": ("water", 1), "2:0": ("earth", 1), "2:4": ("resonator", 3)}), rules)
    check(r, winner=1, time=8.0, hp=(0.0, 84.665), casts=(16, 15), seals=(0, 1))
    refl = of_type(r, "reflect")
    assert len(refl) == 14
    assert all(e["value"] == approx(1.512) for e in refl)
    assert refl[0]["t"] == 1.5
    assert [(e["t"], e["cell"]) for e in of_type(r, "seal")] == [(0.5, "2:4")]


def test_b09_reserve_takes_the_sealed_cell_and_flips_the_battle(rules):
    """A twofold pair of fires; erosion seals one, the higher-grade fire from the hand takes
    its cell at once (same kind only, highest grade), keeps the resonance and wins.

    Covers: reserve, D-33, D-31, D-32, resonance:twofold, D-6, D-24, grades, erosion
    """
    # Side 0: fire I 1:0: 6 a hit (x1 vs fires). Cap 0.
    # Side 1: fire I 1:0 and 1:3 (facing in ring 1: twofold x1.2 -> 7.2), hand [water I, fire I,
    #   fire II]. Cap floor(2/2) = 1. Turn cells [1:0, 1:3].
    # t=0.5: S0 hits 6 (hp1 94). S0 erosion: ring 1, both grade I -> 1:0 sealed (seals 1);
    #   reserve: kind fire only, highest grade: fire II (slot 2) enters unsealed.
    #   S1's turn belongs to cell 1:0: fire II, still twofold: 6 x 1.8 x 1.2 = 12.96 -> hp0 87.04.
    # t=1.0: S0 -> 88; erosion: fire II (highest grade) but seals 1 >= cap 1: capped.
    #   S1 1:3: 7.2 -> 79.84.
    # Side 1 deals 20.16 a second: after 4.0 s hp0 19.36, 4.5 s 6.4, 5.0 s: S0 hits first
    #   (hp1 100 - 10 x 6 = 40), then 1:3's 7.2: 6.4 - 7.2 = -0.8: side 0 down at 5.0 s.
    # (No reserve: side 1 would keep one unresonant fire I, 6 a second, and lose.)
    r = play(board({"1:0": ("fire", 1)}),
             board({"1:0": ("fire", 1), "1:3": ("fire", 1)},
                   hand=[("water", 1), ("fire", 1), ("fire", 2)]), rules)
    check(r, winner=1, time=5.0, hp=(0.0, 40.0), casts=(10, 10), seals=(0, 1))
    res = of_type(r, "reserve")
    assert len(res) == 1
    assert (res[0]["t"], res[0]["cell"], res[0]["kind"], res[0]["grade"], res[0]["slot"]) == \
        (0.5, "1:0", "fire", 2, 2)
    first = [e for e in of_type(r, "cast") if e["side"] == 1][0]
    assert first["value"] == approx(12.96)


def test_b10_delay_alternates_and_wins_by_moving_first(rules):
    """A delayed fire (skip, cast, ... at x2.5, with an ember jar) against a fire II: the
    delayed fire's 5th cast lands at 5.0 s, before side 1's turn of that millisecond.

    Covers: rune:delay, D-18, D-7, D-8, relic:ember_jar, rune:resonator, D-31, D-32, erosion
    """
    # Side 0: delay I 1:0, fire I 2:0 (outward of the delay), resonator III 2:3 (a decoy, in no
    #   pattern with 2:0). Fire = 6 x 1.25 (ring 2) x 2.5 (delay) x 1.2 (ember jar) = 22.5.
    #   Cap floor(3/2) = 1. One turn cell (2:0).
    # Side 1: fire II 1:0: 10.8. Cap 0. Affinities x1 (supports never count).
    # Side 0 turns: 0.5 skip, 1.0 cast, 1.5 skip, 2.0 cast, ... (skip first).
    # Side 1's first erosion (0.5 s) seals the resonator III (highest grade in ring 2); then the
    #   fire is the target but the cap is reached: capped.
    # hp1: 77.5 (1.0), 55 (2.0), 32.5 (3.0), 10 (4.0), 5.0 s: -12.5: down at 5.0 s, side 0 moving
    #   first. hp0: side 1 hit at 0.5..4.5 s: 9 x 10.8 = 97.2 -> 2.8.
    # (Cast-first alternation would end it at 4.5 s with hp0 13.6; no delay: 9 a turn, side 1 wins.)
    r = play(board({"1:0": ("delay", 1), "2:0": ("fire", 1), "2:3": ("resonator", 3)},
                   relics=["ember_jar"]),
             board({"1:0": ("fire", 2)}), rules)
    check(r, winner=0, time=5.0, hp=(2.8, 0.0), casts=(5, 9), turns=(10, 9), seals=(1, 0))
    skips = of_type(r, "delay_skip")
    assert [e["t"] for e in skips] == [0.5, 1.5, 2.5, 3.5, 4.5]
    assert [(e["t"], e["cell"]) for e in of_type(r, "seal")] == [(0.5, "2:3")]


def test_b11_deep_freeze_locks_out_a_faster_fire(rules):
    """An ice fed by a sun core as water (deep freeze at half: x1.1, freeze x1.25 = 1875 ms)
    against an hourglass fire (450 ms): the fire can only cast in the windows between a thaw and
    the next ice turn.

    Covers: rune:ice, flow:deep_freeze, core:sun, D-35, D-6a, D-7, D-28, D-15, relic:hourglass,
    affinity:fire>ice
    """
    # Side 0: ice I 1:0, sun as water: 3 x 1.1 = 3.3; vs {fire}: fire beats ice -> 0.6: 1.98.
    #   Freeze 1.5 s x 1.25 = 1875 ms. Cap 0.
    # Side 1: fire I 1:0, hourglass: 450 ms; max HP 60. vs {ice}: fire beats ice: 1.4 -> 8.4.
    # Freezes: 0.5 s until 2.375 s; ice turns at 1.0..2.0 find nothing unfrozen; 2.5 s until
    #   4.375 s; ... a freeze at 0.5 + 2 j s until 2.375 + 2 j s. Side 1 casts at 450 m ms only
    #   before the first freeze (m = 1) or in [2375 + 2000 j, 2500 + 2000 j) (at 2500 + 2000 j the
    #   ice moves first and freezes again): 450 m mod 2000 in {400, 450} -> 9 m = 8 or 9 (mod 40)
    #   -> m = 1, 32, 41, ... -> 0.45 s and 14.4 s.
    # Side 1 is down at the ice's 31st hit (30 x 1.98 = 59.4 < 60): 15.5 s.
    # hp0 = 100 - 2 x 8.4 = 83.2. Side 1's turns by then: 450 m <= 15500 -> 34.
    r = play(board({"1:0": ("ice", 1)}, core="sun", sun_element="water"),
             board({"1:0": ("fire", 1)}, relics=["hourglass"], max_hp=60), rules)
    check(r, winner=0, time=15.5, hp=(83.2, 0.0), casts=(31, 2), turns=(31, 34))
    freezes = of_type(r, "freeze")
    assert [(e["t"], e["until"]) for e in freezes[:3]] == [(0.5, 2.375), (2.5, 4.375),
                                                         (4.5, 6.375)]
    assert [e["t"] for e in of_type(r, "cast") if e["side"] == 1] == [0.45, 14.4]


def test_b12_warding_seal_unseals_and_the_cap_lets_erosion_seal_again(rules):
    """A three-fold ring of fires (3-turn cycle) against a warding-seal side: its sealed fire II
    comes back 4 s later, casts once in the window before the next erosion, and is sealed again.

    Covers: relic:warding_seal, D-37, D-32, erosion, resonance:threefold, D-24, D-28, D-7, D-31
    """
    # Side 0: fire I at 1:0, 1:2, 1:4 (three-fold: 9 each), cycle 1.5 s, cap 1.
    # Side 1 (warding seal): fire II 2:0 = 6 x 1.8 x 1.25 = 13.5, fire I 2:3 = 6 x 1.25 = 7.5
    #   (2:3 is in no pattern with 2:0); cap 1; turns: 2:0 at 0.5, 1.5, ...; 2:3 at 1.0, 2.0, ...
    # t=0.5: S0 9 (hp1 91); S1 fire II 13.5 (hp0 86.5).
    # t=1.0: S0 1:2 9 (82); S1 2:3 7.5 (79); S1 erosion: S0's 1:0 sealed (cap reached):
    #   the pattern breaks, side 0's fires now 6.
    # t=1.5: S0 1:4 6 (76); S0 erosion: fire II sealed, unseal due at 5.5 s. S1 2:0 passes.
    # S0 erosions at 3.0 and 4.5 s: fire II is sealed, the target is 2:3: capped.
    # t=5.5: the warding seal unseals fire II (seals 0) before the turns; it casts 13.5.
    # t=6.0: S0 erosion seals it again (unseal due at 10.0 s); 7.5 and 9.0: capped.
    # Side 0 casts at turns k = 1, 2 (9 each) and then every turn but those of the sealed 1:0
    #   (k = 4, 7, 10, ...): by 10.0 s (k = 20): 2 x 9 + 12 x 6 = 90 -> hp1 10.
    # Side 1: fire II at 0.5 and 5.5 s (27), fire I at every even turn 1.0..9.0 (9 x 7.5 = 67.5):
    #   hp0 5.5 before 10.0 s; at 10.0 s fire II is unsealed but the turn is 2:3's: 7.5: down.
    r = play(board({"1:0": ("fire", 1), "1:2": ("fire", 1), "1:4": ("fire", 1)}),
             board({"2:0": ("fire", 2), "2:3": ("fire", 1)}, relics=["warding_seal"]), rules)
    check(r, winner=1, time=10.0, hp=(0.0, 10.0), casts=(14, 12), turns=(20, 20), seals=(1, 0))
    changes = [(e["t"], e["type"], e["side"], e["cell"]) for e in of_type(r, "seal", "unseal")]
    assert changes == [(1.0, "seal", 0, "1:0"), (1.5, "seal", 1, "2:0"),
                       (5.5, "unseal", 1, "2:0"), (6.0, "seal", 1, "2:0"),
                       (10.0, "unseal", 1, "2:0")]
    assert [e["t"] for e in of_type(r, "cast") if e["side"] == 1 and e["cell"] == "2:0"] == \
        [0.5, 5.5]


def test_b13_light_unseals_what_erosion_sealed(rules):
    """Erosion seals a fire II every second; the light right after it unseals it each time, so
    the fire II casts at every one of its turns and wins.

    Covers: rune:light, D-16, erosion, D-31, D-32, resonance:twofold, D-24, grades, rings
    """
    # Side 0: fire I 1:0 and 1:3 (twofold: 7.2 each), cycle 1 s, cap 1.
    # Side 1: fire II 2:0 (13.5), light I 2:6 (heal 3 x 1.25 = 3.75, unseals one); cap 1;
    #   turns 2:0 at 0.5, 1.5, ...; 2:6 at 1.0, 2.0, ...; no pattern (two kinds).
    # t=0.5: S0 7.2 (hp1 92.8); S1 13.5 (hp0 86.5).
    # t=1.0: S0 1:3 7.2 (85.6); S0 erosion: fire II (highest grade) sealed. S1 light: +3.75
    #   (89.35), unseals fire II. S1 erosion: S0's 1:0 sealed (cap): side 0's 1:3 alone: 6.
    # Every next second: S0 1:0 passes, 1:3 hits 6, seals fire II; the light heals 3.75 and
    #   unseals it; fire II casts 13.5 at every odd half-second.
    # hp0 = 100 - 13.5 n at t = n - 0.5 s: 8 x 13.5 = 108 >= 100 > 94.5: down at 7.5 s.
    # hp1 at 7.0 s: 85.6 + 3.75 + 6 x (3.75 - 6) = 75.85.
    r = play(board({"1:0": ("fire", 1), "1:3": ("fire", 1)}),
             board({"2:0": ("fire", 2), "2:6": ("light", 1)}), rules)
    check(r, winner=1, time=7.5, hp=(0.0, 75.85), casts=(8, 15), seals=(1, 0))
    unseals = of_type(r, "unseal")
    assert [e["t"] for e in unseals] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert all(e["cause"] == "light" and e["cell"] == "2:0" for e in unseals)


def test_b14_thundercloud_against_sun_storm_delays(rules):
    """A thunder that casts twice (sun core as wind: thundercloud kept whole) against a wind
    whose sun core as thunder gives a half storm: each wind cast delays the thunder by 150 ms.

    Covers: flow:thundercloud, flow:storm, core:sun, D-35, D-21, D-8, D-10, rune:thunder,
    rune:wind, D-13
    """
    # Side 0: thunder I 1:0, sun as wind: thundercloud (x1, second cast): 5 + 5 a turn
    #   (affinity vs {wind}: x1). Cap 0, a cycle is one turn (storm budget 600 ms per turn).
    # Side 1: wind I 1:0, sun as thunder: storm at half: x1.1 -> 3.3 a hit, two hits: 6.6 a turn;
    #   each cast delays side 0's next turn by 0.15 s. Max HP 97.
    # Side 0's turns (next = last + 500, + 150 per side-1 cast at 0.5 s steps before it):
    #   0.5 -> 1.0 +0.15 (0.5) +0.15 (1.0) = 1.3 -> 1.8 +0.15 (1.5) = 1.95 -> 2.45 +0.3 = 2.75
    #   -> 3.25 +0.15 = 3.4 -> 3.9 +0.3 = 4.2 -> 4.7 +0.15 = 4.85 -> 5.35 +0.15 (5.0) = 5.5
    #   (side 0 moves first at 5.5) -> 6.0 +0.3 (5.5, 6.0) = 6.3 -> 6.8 +0.15 = 6.95.
    # hp1 = 97 - 10 per turn: 7 after 9 turns; the 10th (6.95 s): 5 -> 2, its second cast: -3.
    # hp0: side 1 casts at 0.5..6.5 s: 13 x 6.6 = 85.8 -> 14.2.
    # (No storm: side 0 would win at 5.0 s.)
    r = play(board({"1:0": ("thunder", 1)}, core="sun", sun_element="wind"),
             board({"1:0": ("wind", 1)}, core="sun", sun_element="thunder", max_hp=97), rules)
    check(r, winner=0, time=6.95, hp=(14.2, 0.0), casts=(10, 13), turns=(10, 13))
    s0_turns = sorted({e["t"] for e in of_type(r, "cast") if e["side"] == 0})
    assert s0_turns == [0.5, 1.3, 1.95, 2.75, 3.4, 4.2, 4.85, 5.5, 6.3, 6.95]
    delays = of_type(r, "storm_delay")
    assert all(e["value"] == 150 for e in delays)
    last = of_type(r, "cast")[-1]
    assert last["side"] == 0 and last.get("repeat") == 1
