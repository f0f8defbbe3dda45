"""Hand-worked tests of the runes (RULES section 4) and D-11a .. D-20.

Every expected value is worked out by hand from RULES.md and the frozen config
(tests/data/rules.yaml); the computation is written next to it. An opponent with no elemental
runes (empty, or supports only) gives affinity x1 (D-26); damage is checked before 20 s
(overdrive). "Soak" runes: grade-III resonators in ring 3 that the opponent's erosions seal
first (outermost ring, highest grade), so that the runes under test stay unsealed.
"""
import pytest
from conftest import board, run, events, first_cast, approx, soak








# -- grades and rings ------------------------------------------------------------------------

@pytest.mark.parametrize("grade, value", [(1, 6.0), (2, 10.8), (3, 19.2)])
def test_fire_grades(grade, value):
    """Covers: grades, rune:fire

    Fire in ring 1: 6 x 1 / 6 x 1.8 = 10.8 / 6 x 3.2 = 19.2; empty opponent: each hit = power.
    """
    r = run(board({"1:0": ("fire", grade)}))
    assert first_cast(r, "1:0")["value"] == approx(value)
    assert events(r, "hit", side=1)[0]["value"] == approx(value)
    assert events(r, "hit", side=1)[0]["hp"][1] == approx(100 - value)


def test_rings():
    """Covers: rings, rune:fire

    Grade-I fires, not adjacent, not fed: 1:0 -> 6 x 1 = 6; 2:6 (inward 1:3, empty) ->
    6 x 1.25 = 7.5; 3:3 (sector 1 open; inward 2:2, empty) -> 6 x 1.5 = 9.
    """
    r = run(board({"1:0": ("fire", 1), "2:6": ("fire", 1), "3:3": ("fire", 1)},
                  open_sectors=[1]))
    assert first_cast(r, "1:0")["value"] == approx(6.0)
    assert first_cast(r, "2:6")["value"] == approx(7.5)
    assert first_cast(r, "3:3")["value"] == approx(9.0)


def test_effective_grade_from_mana_spring():
    """Covers: D-11a, artifact:mana_spring, grades

    A mana spring on 1:0 makes a grade-I fire there count as grade II: 6 x 1.8 = 10.8; a grade-III
    fire stays III: 6 x 3.2 = 19.2.
    """
    r = run(board({"1:0": ("fire", 1)}, artifacts={"1:0": "mana_spring"}))
    assert first_cast(r, "1:0")["value"] == approx(10.8)
    r = run(board({"1:0": ("fire", 3)}, artifacts={"1:0": "mana_spring"}))
    assert first_cast(r, "1:0")["value"] == approx(19.2)


# -- the casting runes -----------------------------------------------------------------------

def test_wind_two_hits_power_is_one_hit():
    """Covers: rune:wind, D-13, D-12, grades

    Wind grade II in ring 1: power = one hit = 3 x 1.8 = 5.4 (not 6 x 1.8); two hits of 5.4 at
    t = 0.5: HP 100 - 10.8 = 89.2.
    """
    r = run(board({"1:0": ("wind", 2)}))
    assert first_cast(r, "1:0")["value"] == approx(5.4)
    hits = events(r, "hit", side=1, t=0.5)
    assert [h["value"] for h in hits] == [approx(5.4), approx(5.4)]
    assert hits[-1]["hp"][1] == approx(89.2)


def test_water_heals_self():
    """Covers: rune:water

    Side 0: water 1:0 (heal 5). Side 1: fire III 1:0 = 19.2; affinity fire vs an all-water board:
    1 - 0.6 = 0.4 -> clamp 0.6: 19.2 x 0.6 = 11.52 a hit.
    t=0.5: water heals 5 at full HP (all overflow); fire -> 100 - 11.52 = 88.48.
    t=1.0: water heals 5 -> 93.48.
    """
    r = run(board({"1:0": ("water", 1)}), board({"1:0": ("fire", 3)}))
    heals = events(r, "heal", side=0)
    assert heals[0]["value"] == approx(5.0) and heals[0]["overflow"] == approx(5.0)
    assert events(r, "hit", side=0)[0]["hp"][0] == approx(88.48)
    assert heals[1]["t"] == 1.0 and heals[1]["value"] == approx(5.0)
    assert heals[1]["hp"][0] == approx(93.48)


def test_earth_barrier_absorbs():
    """Covers: rune:earth

    Side 0: earth 1:0 -> barrier 5 at t = 0.5. Side 1: fire 1:0 (vs an all-earth board: x1) hits
    6 right after: 5 absorbed, HP 100 - 1 = 99, barrier 0.
    """
    r = run(board({"1:0": ("earth", 1)}), board({"1:0": ("fire", 1)}))
    assert events(r, "barrier", side=0)[0]["value"] == approx(5.0)
    hit = events(r, "hit", side=0)[0]
    assert hit["value"] == approx(6.0)
    assert hit["absorbed"] == approx(5.0)
    assert hit["hp"][0] == approx(99.0)
    assert hit["barrier"][0] == 0.0


def test_earth_ward_only_in_outermost_ring():
    """Covers: rune:earth, ward, erosion

    Side 0: earth II 1:0, water 1:3, water 1:4, earth I 2:0 (n = 4, seal cap 2; outermost ring 2:
    only 2:0 holds a ward). Side 1: fire 1:0 erodes once every 0.5 s.
    0.5: target 2:0 (the only ring-2 rune) -> its ward is spent. 1.0: 2:0 sealed. 1.5: ring 2 has
    no unsealed rune -> ring 1, highest grade: earth II 1:0, which holds no ward -> sealed.
    """
    r = run(board({"1:0": ("earth", 2), "1:3": ("water", 1), "1:4": ("water", 1),
                   "2:0": ("earth", 1)}), board({"1:0": ("fire", 1)}))
    got = [(e["t"], e["type"], e["cell"]) for e in r.events
           if e["side"] == 0 and e["type"] in ("ward", "seal")]
    assert got[:3] == [(0.5, "ward", "2:0"), (1.0, "seal", "2:0"), (1.5, "seal", "1:0")]


def test_thunder_wears_barrier_twice_as_fast():
    """Covers: rune:thunder, D-13

    Side 0: thunder 1:0 (5). Side 1: earth 1:0, water 1:3 (not adjacent). Affinity thunder vs
    {earth 1, water 1}: 1 + 0.6 x (0.5 - 0.5) = 1: hits of 5.
    0.5: thunder 5 -> side 1 HP 95; side 0's erosion spends the earth's outermost ward; side 1's
    earth -> barrier 5.
    1.0: thunder 5 against barrier 5: each point removes 2, the barrier absorbs 5 / 2 = 2.5,
    HP 95 - (5 - 2.5) = 92.5, barrier 0.
    """
    r = run(board({"1:0": ("thunder", 1)}), board({"1:0": ("earth", 1), "1:3": ("water", 1)}))
    hit = events(r, "hit", side=1, t=1.0)[0]
    assert hit["value"] == approx(5.0)
    assert hit["absorbed"] == approx(2.5)
    assert hit["hp"][1] == approx(92.5)
    assert hit["barrier"][1] == 0.0


def test_dark_curse_halves_healing_and_does_not_stack():
    """Covers: rune:dark, D-14

    Side 0: dark 1:0 (3 damage, curse 3 s). Side 1: water 1:0 (dark vs water: x1).
    0.5: hit 3 -> 97; curse until 0.5 + 3 = 3.5; the water's heal is halved: 2.5 -> 99.5.
    1.0: hit 3 -> 96.5; the new curse ends at max(3.5, 4.0) = 4.0 (not stacked: not 6.5);
    heal 2.5 -> 99.
    """
    r = run(board({"1:0": ("dark", 1)}), board({"1:0": ("water", 1)}))
    assert [e["until"] for e in events(r, "curse", side=1)][:2] == [3.5, 4.0]
    heals = events(r, "heal", side=1)
    assert [h["value"] for h in heals[:2]] == [approx(2.5), approx(2.5)]
    assert heals[1]["hp"][1] == approx(99.0)


def test_curse_lasts_three_seconds_half_open():
    """Covers: rune:dark, D-6a, D-8

    Side 0: dark 1:0 and seven earths (cycle 8 turns = 4 s: the dark casts at 0.5 and 4.5).
    Side 1: water 1:0 heals every 0.5 s. The curse from 0.5 covers [0.5, 3.5): heals at 0.5 ..
    3.0 are 5 x 0.5 = 2.5; at 3.5 the curse has ended (effects end first): 5; at 4.0: 5.
    (Side 1's erosions hit side 0's ring-2 earths, never the dark in ring 1: n = 8, cap 4, four
    ring-2 earths.)
    """
    b0 = board({"1:0": ("dark", 1), "1:2": ("earth", 1), "1:3": ("earth", 1),
                "1:4": ("earth", 1), "2:4": ("earth", 1), "2:5": ("earth", 1),
                "2:6": ("earth", 1), "2:7": ("earth", 1)})
    r = run(b0, board({"1:0": ("water", 1)}))
    heals = [(h["t"], h["value"]) for h in events(r, "heal", side=1) if h["t"] <= 4.0]
    assert heals == [(0.5, approx(2.5)), (1.0, approx(2.5)), (1.5, approx(2.5)),
                     (2.0, approx(2.5)), (2.5, approx(2.5)), (3.0, approx(2.5)),
                     (3.5, approx(5.0)), (4.0, approx(5.0))]


def _light_board(light_grade, **kw):
    # light 1:0; resonators in ring 2: 2:3 (I), 2:4 (I), 2:6 (II), 2:7 (I), 2:9 (I).
    # n = 6, seal cap 3.
    return board({"1:0": ("light", light_grade), "2:3": ("resonator", 1), "2:4": ("resonator", 1),
                  "2:6": ("resonator", 2), "2:7": ("resonator", 1), "2:9": ("resonator", 1)},
                 **kw)


def _three_erosions():
    # fire 1:0 (one-turn cycle) with corrosion and the thorn crown: 1 + 1 + 1 = 3 erosions a cycle
    return board({"1:0": ("fire", 1)}, boss_rules=["corrosion"], relics=["thorn_crown"])


def test_light_unseals_highest_grade_first():
    """Covers: rune:light, D-16, erosion

    Side 1's three erosions at 0.5 seal side 0's ring-2 runes, highest grade first, then casting
    order: 2:6 (II), 2:3, 2:4 (cap 3 reached).
    At 1.0 side 0's light (grade I: one unseal) heals 3 and unseals the highest grade: 2:6
    (casting order alone would pick 2:3).
    """
    r = run(_light_board(1), _three_erosions())
    assert [(e["t"], e["cell"]) for e in events(r, "seal", side=0)][:3] == [
        (0.5, "2:6"), (0.5, "2:3"), (0.5, "2:4")]
    un = events(r, "unseal", side=0, t=1.0)
    assert [(e["cell"], e["cause"]) for e in un] == [("2:6", "light")]
    assert events(r, "heal", side=0, t=1.0)[0]["value"] == approx(3.0)


def test_light_grade_two_unseals_one():
    """Covers: rune:light, D-16, grades

    As above with a grade-II light: still one unseal (2:6); heal 3 x 1.8 = 5.4.
    """
    r = run(_light_board(2), _three_erosions())
    assert [e["cell"] for e in events(r, "unseal", side=0, t=1.0)] == ["2:6"]
    assert events(r, "heal", side=0, t=1.0)[0]["value"] == approx(5.4)


def test_light_grade_three_unseals_two():
    """Covers: rune:light, D-16

    As above with a grade-III light: at 1.0 it unseals two of the three sealed, highest grade
    first, then casting order: 2:6, then 2:3 (not 2:4). Heal 3 x 3.2 = 9.6.
    """
    r = run(_light_board(3), _three_erosions())
    assert [e["cell"] for e in events(r, "unseal", side=0, t=1.0)] == ["2:6", "2:3"]
    assert events(r, "heal", side=0, t=1.0)[0]["value"] == approx(9.6)


def test_light_effective_grade_three_unseals_two():
    """Covers: D-11a, D-16, rune:light, artifact:mana_spring

    A grade-II light on a mana spring (1:0; the spring reaches 1:0 and its neighbours, not the
    ring-2 resonators) counts as grade III: it unseals two at 1.0 (2:6, 2:3), and heals as grade
    III: 3 x 3.2 = 9.6.
    """
    r = run(_light_board(2, artifacts={"1:0": "mana_spring"}), _three_erosions())
    assert [e["cell"] for e in events(r, "unseal", side=0, t=1.0)] == ["2:6", "2:3"]
    assert events(r, "heal", side=0, t=1.0)[0]["value"] == approx(9.6)


def test_ice_freezes_strongest_ties_by_casting_order():
    """Covers: rune:ice, D-15, flow:discharge

    Side 1: fire I 2:0 (7.5); thunder II 3:1 fed by the fire (discharge x1.2):
    5 x 1.8 x 1.5 x 1.2 = 16.2; fire II 3:9 (unfed): 6 x 1.8 x 1.5 = 16.2. Equal powers (within
    1e-9; in floating point they differ by a few ulps): the earlier in casting order, 3:1, wins.
    Side 0: ice 1:0 casts every 0.5 s (first at each ms), freeze 1.5 s; side 0 erodes side 1
    after each turn (n = 3, cap 1): at 0.5 it seals 3:1 (ring 3, grade II, earliest).
    0.5: freeze 3:1 until 2.0.  1.0: 3:1 sealed and frozen -> 3:9 (until 2.5).
    1.5: only 2:0 left -> 2:0 (until 3.0).  2.0: 3:1's freeze is over but it is sealed; the others
    are frozen: no freeze.
    """
    b1 = board({"2:0": ("fire", 1), "3:1": ("thunder", 2), "3:9": ("fire", 2)},
               open_sectors=[0, 3])
    r = run(board({"1:0": ("ice", 1)}), b1)
    fr = [(e["t"], e["cell"], e["until"]) for e in events(r, "freeze", side=1) if e["t"] <= 2.0]
    assert fr == [(0.5, "3:1", 2.0), (1.0, "3:9", 2.5), (1.5, "2:0", 3.0)]


def test_ice_freezes_highest_power():
    """Covers: rune:ice, D-15

    Side 1: fire I 1:0 (6), fire II 1:3 (10.8): the ice freezes 1:3 first, then (1:3 frozen until
    2.0) 1:0 at 1.0 (until 2.5).
    """
    r = run(board({"1:0": ("ice", 1)}), board({"1:0": ("fire", 1), "1:3": ("fire", 2)}))
    fr = [(e["t"], e["cell"], e["until"]) for e in events(r, "freeze", side=1)]
    assert fr[:2] == [(0.5, "1:3", 2.0), (1.0, "1:0", 2.5)]


# -- the supports ----------------------------------------------------------------------------

def test_amplify_factor_grade_and_stacking():
    """Covers: rune:amplify, D-17

    Amplify II 1:0 -> fire 2:0: 6 x 1.25 x (1 + 0.75 x 1.8) = 7.5 x 2.35 = 17.625.
    Amplifies 1:0 and 1:1 (grade I) -> fire 2:1 (inward of both): 7.5 x 1.75 x 1.75 = 22.96875.
    """
    r = run(board({"1:0": ("amplify", 2), "2:0": ("fire", 1)}))
    assert first_cast(r, "2:0")["value"] == approx(17.625)
    r = run(board({"1:0": ("amplify", 1), "1:1": ("amplify", 1), "2:1": ("fire", 1)}))
    assert first_cast(r, "2:1")["value"] == approx(22.96875)


def test_amplify_resonance_raises_its_factor():
    """Covers: rune:amplify, D-17, resonance:twofold

    Amplifies 1:0 and 1:3 face each other: 2-fold resonance R = 1.2, factor 1 + 0.75 x 1 x 1.2 =
    1.9. Fire 2:0 (outward of 1:0 only): 6 x 1.25 x 1.9 = 14.25.
    """
    r = run(board({"1:0": ("amplify", 1), "1:3": ("amplify", 1), "2:0": ("fire", 1)}))
    assert first_cast(r, "2:0")["value"] == approx(14.25)


def test_amplify_only_casting_runes_not_a_mimic():
    """Covers: rune:amplify, D-17, rune:mimic, D-20

    Fire 1:0, amplify 1:1, mimic 2:1 (inward 1:0 and 1:1). The mimic's source is the fire (the
    amplify does not cast); the amplify does not strengthen the mimic (a support): copy =
    6 x 0.6 = 3.6 (not 6 x 0.6 x 1.75 = 6.3).
    """
    r = run(board({"1:0": ("fire", 1), "1:1": ("amplify", 1), "2:1": ("mimic", 1)}))
    copy = first_cast(r, "2:1")
    assert copy["copy_of"] == "1:0"
    assert copy["value"] == approx(3.6)


def test_resonator_never_casts_and_counts_as_the_kind():
    """Covers: rune:resonator, resonance:resonator

    Fire 1:0 and a resonator 1:3 (facing): 2-fold resonance for the fire: 6 x 1.2 = 7.2. The
    resonator has no turn: the fire casts every 0.5 s and no cast comes from 1:3.
    """
    r = run(board({"1:0": ("fire", 1), "1:3": ("resonator", 1)}))
    assert first_cast(r, "1:0")["value"] == approx(7.2)
    assert [e["t"] for e in events(r, "cast", side=0)][:3] == [0.5, 1.0, 1.5]
    assert events(r, "cast", side=0, cell="1:3") == []


def test_delay_skip_cast_and_x2_5():
    """Covers: rune:delay, D-18, D-7

    Delay 1:0, fire 2:0 (its only turn cell): turns at 0.5 (skip), 1.0 (cast), 1.5 (skip), ...
    Power 6 x 1.25 x 2.5 = 18.75. 5 x 18.75 = 93.75 < 100 <= 6 x 18.75: down at the 6th cast,
    t = 6.0 s; 12 turns, 6 casts.
    """
    r = run(board({"1:0": ("delay", 1), "2:0": ("fire", 1)}))
    assert [e["t"] for e in events(r, "delay_skip", side=0)][:2] == [0.5, 1.5]
    assert [e["t"] for e in events(r, "cast", side=0)][:2] == [1.0, 2.0]
    assert first_cast(r, "2:0")["value"] == approx(18.75)
    assert r.time == 6.0
    assert r.turns == (12, 0)
    assert r.casts == (6, 0)


def test_several_delays_count_once():
    """Covers: rune:delay, D-18

    Delays 1:0 and 1:1, fire 2:1 (inward of both): still x2.5 once: 6 x 1.25 x 2.5 = 18.75, and
    still skip, cast, ...: down at t = 6.0 s with 6 casts in 12 turns.
    """
    r = run(board({"1:0": ("delay", 1), "1:1": ("delay", 1), "2:1": ("fire", 1)}))
    assert first_cast(r, "2:1")["value"] == approx(18.75)
    assert r.time == 6.0
    assert r.casts == (6, 0)
    assert r.turns == (12, 0)


def test_delay_counts_only_unfrozen_turns():
    """Covers: D-18, D-7, rune:delay, rune:ice

    Side 0: delay 1:0, water 1:3, fire 2:0 (delayed: 6 x 1.25 x 2.5 = 18.75) + three soak
    resonators (n = 6, cap 3). Turns: water 0.5, 1.5, 2.5, ...; fire 1.0, 2.0, 3.0, ...
    Side 1: ice 1:0 (after side 0 at each ms) freezes the strongest unfrozen turn rune for 1.5 s.
    0.5 fire (18.75 > water 5) until 2.0 | 1.0 fire frozen; ice -> water until 2.5 |
    1.5 water frozen; ice: none free | 2.0 fire free: 1st counted turn -> skip; ice -> fire
    until 3.5 | 2.5 water free, casts; ice -> water until 4.0 | 3.0 fire frozen | 3.5 ice -> fire
    until 5.0 | 4.0 ice -> water until 5.5 | 5.0 fire free: 2nd counted turn -> cast.
    (Counting the frozen turn at 1.0 would make 2.0 the cast.)
    """
    b0 = board({"1:0": ("delay", 1), "1:3": ("water", 1), "2:0": ("fire", 1), **soak(3)},
               open_sectors=[5])
    r = run(b0, board({"1:0": ("ice", 1)}))
    assert [e["t"] for e in events(r, "delay_skip", side=0) if e["t"] <= 5.0] == [2.0]
    fire = events(r, "cast", side=0, cell="2:0")[0]
    assert fire["t"] == 5.0
    assert fire["value"] == approx(18.75)


def test_node_links_flows_and_amplify():
    """Covers: rune:node, D-19, flow:firestorm, flow:fanned_flame

    Node 1:0 with wind 1:1, fire 1:5 and amplify 2:0 adjacent to it (1:1 and 1:5 are not
    adjacent to each other). Linked: fire -> wind firestorm x2, wind -> fire fanned flame x1.5,
    and the amplify (1.75) strengthens both:
    wind 3 x 2 x 1.75 = 10.5; fire 6 x 1.5 x 1.75 = 15.75.
    """
    r = run(board({"1:0": ("node", 1), "1:1": ("wind", 1), "1:5": ("fire", 1),
                   "2:0": ("amplify", 1)}))
    assert first_cast(r, "1:1")["value"] == approx(10.5)
    assert first_cast(r, "1:5")["value"] == approx(15.75)


def test_nodes_do_not_chain():
    """Covers: rune:node, D-19

    Nodes 1:0 and 1:1 (adjacent). Wind 1:5 is next to node 1:0 only, fire 1:2 next to node 1:1
    only. No chaining: no flow between them: wind 3, fire 6.
    """
    r = run(board({"1:0": ("node", 1), "1:1": ("node", 1), "1:5": ("wind", 1),
                   "1:2": ("fire", 1)}))
    assert first_cast(r, "1:5")["value"] == approx(3.0)
    assert first_cast(r, "1:2")["value"] == approx(6.0)


def test_node_never_links_the_core():
    """Covers: rune:node, D-19, core:sun

    Sun core (fire), node 1:0, wind 2:0 (its inward cell is the node). The core is not linked by
    the node, so no firestorm reaches the wind: 3 x 1.25 = 3.75 (not 3.75 x 1.5 = 5.625).
    """
    r = run(board({"1:0": ("node", 1), "2:0": ("wind", 1)}, core="sun", sun_element="fire"))
    assert first_cast(r, "2:0")["value"] == approx(3.75)


@pytest.mark.parametrize("grade, value", [(1, 3.6), (2, 4.8), (3, 6.0)])
def test_mimic_copy_by_grade(grade, value):
    """Covers: rune:mimic, D-20

    Fire 1:0 (6), mimic 2:0: copy = 6 x 0.6 / 0.8 / 1.0 by the mimic's grade, right after the
    fire's cast, as a fire (one hit).
    """
    r = run(board({"1:0": ("fire", 1), "2:0": ("mimic", grade)}))
    copy = first_cast(r, "2:0")
    assert copy["t"] == 0.5 and copy["kind"] == "fire" and copy["copy_of"] == "1:0"
    assert copy["value"] == approx(value)
    assert [h["value"] for h in events(r, "hit", side=1, t=0.5)] == [approx(6.0), approx(value)]


def test_mimic_copies_not_counted_as_casts():
    """Covers: rune:mimic, D-20, D-7

    Fire 1:0 + mimic III 2:0: 6 + 6 = 12 a turn. After 8 turns 96; the 9th turn's fire hit
    (t = 4.5 s) makes 102: down at 4.5 s. 9 turns, 9 casts (the copies are not counted).
    """
    r = run(board({"1:0": ("fire", 1), "2:0": ("mimic", 3)}))
    assert r.time == 4.5
    assert r.casts == (9, 0)
    assert r.turns == (9, 0)


def test_mimic_source_is_strongest_by_power():
    """Covers: rune:mimic, D-20, D-15

    Mimic 2:1 with inward fire I 1:0 (power 6) and wind II 1:1 (power = one hit = 5.4; 10.8 a
    cast). Strongest = highest power: the fire. Only the fire's casts are copied.
    """
    r = run(board({"1:0": ("fire", 1), "1:1": ("wind", 2), "2:1": ("mimic", 1)}))
    copies = events(r, "cast", side=0, cell="2:1")
    assert copies and all(c["copy_of"] == "1:0" and c["kind"] == "fire" for c in copies)
    assert [c["t"] for c in copies][:2] == [0.5, 1.5]


def test_mimic_copies_lava_erosion():
    """Covers: rune:mimic, D-20, flow:lava, D-21

    Side 0: earth 1:0, fire 2:0 (lava: 6 x 1.25 x 1.3 = 9.75), mimic 3:0 (inward 2:0; sector 0).
    Side 1: six resonators in ring 1 (n = 6, cap 3). At 1.0 the fire casts (lava erosion: seal),
    the mimic copies it (9.75 x 0.6 = 5.85, and its own lava erosion: seal) and the cycle closes
    (one more erosion: seal): three seals at t = 1.0: 1:0, 1:1, 1:2.
    """
    b0 = board({"1:0": ("earth", 1), "2:0": ("fire", 1), "3:0": ("mimic", 1)}, open_sectors=[0])
    b1 = board({f"1:{i}": ("resonator", 1) for i in range(6)})
    r = run(b0, b1)
    assert first_cast(r, "3:0")["value"] == approx(5.85)
    assert [e["cell"] for e in events(r, "seal", side=1, t=1.0)] == ["1:0", "1:1", "1:2"]
    assert events(r, "seal", side=1, t=0.5) == []


def test_mimic_ice_copy_freezes_another_rune():
    """Covers: rune:mimic, D-20, rune:ice

    Side 0: ice 1:0, mimic 2:0. Side 1: fire II 1:0 (10.8), fire I 1:3 (6). At 0.5 the ice
    freezes 1:0 (strongest) until 2.0; the copy freezes the strongest not frozen: 1:3, until 2.0.
    """
    r = run(board({"1:0": ("ice", 1), "2:0": ("mimic", 1)}),
            board({"1:0": ("fire", 2), "1:3": ("fire", 1)}))
    fr = [(e["cell"], e["until"]) for e in events(r, "freeze", side=1, t=0.5)]
    assert fr == [("1:0", 2.0), ("1:3", 2.0)]


def test_mimic_copies_thundercloud_second_cast():
    """Covers: rune:mimic, D-20, flow:thundercloud

    Wind 1:0, thunder 2:1 (thundercloud: casts twice; 5 x 1.25 = 6.25), mimic 3:2 (inward 2:1 and
    2:2; sector 0). At the thunder's turn (t = 1.0): two casts of 6.25, then the copy and its
    second cast at 6.25 x 0.6 = 3.75.
    """
    r = run(board({"1:0": ("wind", 1), "2:1": ("thunder", 1), "3:2": ("mimic", 1)},
                open_sectors=[0]))
    casts = [(e["cell"], e.get("copy_of"), e.get("repeat", 0)) for e in
             events(r, "cast", side=0, t=1.0)]
    assert casts == [("2:1", None, 0), ("2:1", None, 1), ("3:2", "2:1", 0), ("3:2", "2:1", 1)]
    assert [h["value"] for h in events(r, "hit", side=1, t=1.0)] == [
        approx(6.25), approx(6.25), approx(3.75), approx(3.75)]
