"""Hand-worked tests of the flows (RULES 5.1), attunement and their side effects (D-21 .. D-23).

Every expected value is worked out by hand from RULES.md and the frozen config
(tests/data/rules.yaml); the computation is written next to it. An opponent with no elemental
runes (empty, or supports only) gives affinity x1 (D-26); damage is checked before 20 s
(overdrive). "Soak" runes: grade-III resonators in ring 3 that the opponent's erosions seal
first (outermost ring, highest grade), so that the runes under test stay unsealed.
"""
import pytest
from conftest import board, run, events, first_cast, approx, soak








# -- the multipliers: inner rune in 1:0, fed rune in 2:0 (ring 2: x1.25) ----------------------

@pytest.mark.parametrize("inner, outer, value, flow", [
    ("fire", "wind", 3 * 1.25 * 2.0, "firestorm"),       # 7.5
    ("wind", "fire", 6 * 1.25 * 1.5, "fanned_flame"),    # 11.25
    ("earth", "fire", 6 * 1.25 * 1.3, "lava"),           # 9.75
    ("water", "earth", 5 * 1.25 * 1.5, "mud_wall"),      # 9.375 barrier
    ("wind", "water", 5 * 1.25 * 1.2, "drizzle"),        # 7.5 heal
    ("fire", "thunder", 5 * 1.25 * 1.2, "discharge"),    # 7.5
    ("wind", "thunder", 5 * 1.25 * 1.0, "thundercloud"),  # 6.25 (x2 casts)
    ("water", "thunder", 5 * 1.25 * 1.3, "electrocute"),  # 8.125
    ("thunder", "wind", 3 * 1.25 * 1.2, "storm"),        # 4.5
    ("light", "water", 5 * 1.25 * 1.3, "blessed_rain"),  # 8.125 heal
    ("dark", "fire", 6 * 1.25 * 1.0, "black_flame"),     # 7.5
    ("light", "dark", 3 * 1.25 * 1.0 * 0.6, "umbra"),    # 2.25 (light next to dark: x0.6)
    ("water", "ice", 3 * 1.25 * 1.2, "deep_freeze"),     # 4.5
    ("wind", "ice", 3 * 1.25 * 1.5, "blizzard"),         # 5.625
    ("fire", "fire", 6 * 1.25 * 1.25, "attunement"),     # 9.375
])
def test_flow_multiplier(inner, outer, value, flow):
    """Covers: flow:firestorm, flow:fanned_flame, flow:lava, flow:mud_wall, flow:drizzle, flow:discharge, flow:thundercloud, flow:electrocute, flow:storm, flow:blessed_rain, flow:black_flame, flow:umbra, flow:deep_freeze, flow:blizzard, attunement, D-12

    The inner rune at 1:0 feeds 2:0 (its outward neighbour): the fed rune's power (its cast value)
    is value x 1.25 (ring 2) x the flow's multiplier (worked out in the table above).
    """
    r = run(board({"1:0": (inner, 1), "2:0": (outer, 1)}))
    assert first_cast(r, "2:0")["value"] == approx(value)
    # the inner rune itself is not fed (ring 1 has nothing inward): base value x ring 1
    base = {"fire": 6, "wind": 3, "earth": 5, "water": 5, "thunder": 5, "light": 3, "dark": 3}
    inner_x = 0.6 if {inner, outer} == {"light", "dark"} else 1.0
    assert first_cast(r, "1:0")["value"] == approx(base[inner] * inner_x)


def test_one_flow_works_once_however_many_give_it():
    """Covers: flow:firestorm, attunement

    Wind 2:1 with two fires inward (1:0, 1:1): firestorm once: 3 x 1.25 x 2 = 7.5 (not x4).
    Fire 2:1 with two fires inward: attunement once: 6 x 1.25 x 1.25 = 9.375 (not x1.25^2).
    """
    r = run(board({"1:0": ("fire", 1), "1:1": ("fire", 1), "2:1": ("wind", 1)}))
    assert first_cast(r, "2:1")["value"] == approx(7.5)
    r = run(board({"1:0": ("fire", 1), "1:1": ("fire", 1), "2:1": ("fire", 1)}))
    assert first_cast(r, "2:1")["value"] == approx(9.375)


def test_flows_multiply_and_power_order():
    """Covers: D-12, flow:fanned_flame, attunement, core:moon, relic:ember_jar, grades, rings

    Moon core (interval 0.5 x 0.8 = 400 ms, power x0.9), ember jar (fire x1.2). Wind 1:0, fire 1:1,
    fire II 2:1 (inward: the wind -> fanned flame x1.5, the fire -> attunement x1.25).
    2:1 = 6 x 1.8 x 1.25 x 1.5 x 1.25 x 0.9 x 1.2 = 27.3375, cast third (t = 1.2 s); against an
    empty board its hit is the power (affinity, overdrive x1). Wind power = one hit =
    3 x 0.9 = 2.7 (the jar is for fire and thunder).
    """
    r = run(board({"1:0": ("wind", 1), "1:1": ("fire", 1), "2:1": ("fire", 2)}, core="moon",
                  relics=["ember_jar"]))
    c = first_cast(r, "2:1")
    assert c["t"] == 1.2
    assert c["value"] == approx(27.3375)
    assert events(r, "hit", side=1, t=1.2)[0]["value"] == approx(27.3375)
    assert [h["value"] for h in events(r, "hit", side=1, t=0.4)] == [approx(2.7), approx(2.7)]


# -- side effects ------------------------------------------------------------------------------

def test_lava_erodes_after_the_damage_at_each_cast():
    """Covers: flow:lava, D-21, erosion

    Side 0: earth 1:0, fire 2:0 (lava). Side 1: six resonators in ring 1 (no turns; n = 6,
    cap 3). Side 0's cycle = 2 turns (earth 0.5, fire 1.0).
    t=0.5: the earth's turn: no erosion (cycle not closed, no lava).
    t=1.0: fire cast, its hit (9.75), then the lava erosion (seal 1:0), then the cycle's erosion
    (seal 1:1).
    """
    r = run(board({"1:0": ("earth", 1), "2:0": ("fire", 1)}),
            board({f"1:{i}": ("resonator", 1) for i in range(6)}))
    assert events(r, "erosion", t=0.5) == []
    at = [(e["type"], e["side"], e["cell"]) for e in r.events if e["t"] == 1.0]
    assert at == [("cast", 0, "2:0"), ("hit", 1, None), ("erosion", 1, None), ("seal", 1, "1:0"),
                  ("erosion", 1, None), ("seal", 1, "1:1")]
    assert events(r, "hit", side=1, t=1.0)[0]["value"] == approx(9.75)


def test_mud_wall_reflects_20_percent_each():
    """Covers: flow:mud_wall, D-22

    Side 1: water 1:0, earths 2:0 and 2:1 (both fed by the water: two mud walls, 2 x 20% = 40%),
    plus three soak resonators (n = 6, cap 3: side 0's erosions at 0.5, 1.0, 1.5 seal them).
    Turns: water 0.5, earth 1.0 (barrier 5 x 1.25 x 1.5 = 9.375), earth 1.5.
    Side 0: fire 1:0. Affinity vs {water 1, earth 2}: 1 - 0.6 x 1/3 = 0.8: hits of 4.8.
    0.5 and 1.0: no barrier yet when the hit arrives: no reflection.
    1.5: barrier 9.375 > 0: side 1 reflects 0.4 x 4.8 = 1.92 to side 0 (no barrier):
    side 0 HP 100 - 1.92 = 98.08.
    """
    b1 = board({"1:0": ("water", 1), "2:0": ("earth", 1), "2:1": ("earth", 1), **soak(3)},
               open_sectors=[5])
    r = run(board({"1:0": ("fire", 1)}), b1)
    assert events(r, "barrier", side=1)[0]["value"] == approx(9.375)
    refl = [e for e in events(r, "reflect") if e["t"] <= 1.5]
    assert len(refl) == 1
    assert refl[0]["t"] == 1.5 and refl[0]["side"] == 0
    assert refl[0]["value"] == approx(1.92)
    assert refl[0]["hp"][0] == approx(98.08)
    assert events(r, "hit", side=1, t=1.5)[0]["value"] == approx(4.8)


def test_mud_wall_reflection_capped_hits_barrier_never_reflected_back():
    """Covers: flow:mud_wall, D-22

    Side 1: water 1:0, earths 2:0, 2:1, 2:11 (three mud walls: 60% -> cap 50%). Turns: water 0.5,
    earths 1.0, 1.5, 2.0 (9.375 barrier each): barrier 18.75 before side 0's hit at 2.0.
    Side 0: fire 1:0, water 1:3, earth 2:6 (its own mud wall). Turns: fire 0.5, water 1.0, earth 1.5
    (barrier 9.375), fire 2.0. Affinity fire vs {water 1, earth 3}: 1 - 0.6 x 0.25 = 0.85:
    hits of 6 x 0.85 = 5.1.
    2.0: reflection 0.5 x 5.1 = 2.55 hits side 0's barrier first: 9.375 - 2.55 = 6.825, HP 100.
    Side 0 has barrier and a mud wall, but reflected damage is never reflected back.
    (Side 1's cycle closes after its turn at 2.0; side 0's erosion at 1.5 spends 2:0's ward.)
    """
    b0 = board({"1:0": ("fire", 1), "1:3": ("water", 1), "2:6": ("earth", 1)})
    b1 = board({"1:0": ("water", 1), "2:0": ("earth", 1), "2:1": ("earth", 1),
                "2:11": ("earth", 1)})
    r = run(b0, b1)
    refl = [e for e in events(r, "reflect") if e["t"] <= 2.0]
    assert len(refl) == 1
    e = refl[0]
    assert e["t"] == 2.0 and e["side"] == 0
    assert e["value"] == approx(2.55)
    assert e["absorbed"] == approx(2.55)
    assert e["barrier"][0] == approx(6.825)
    assert e["hp"][0] == approx(100.0)


def test_drizzle_charges_up_to_two_and_halve_next_attacks():
    """Covers: flow:drizzle, D-21, D-12

    Side 0: wind 1:0, earth 1:3, waters 2:0, 2:1, 2:11 (each fed by the wind: drizzle). Turns:
    wind 0.5, earth 1.0, waters 1.5, 2.0, 2.5: charges given to side 1: 1, 2, 2 (at most 2).
    Side 1: waters 1:0 .. 1:3 (turns 0.5 .. 2.0: not attacks, they use no charge), fires 2:8, 2:9,
    2:10 (turns 2.5, 3.0, 3.5; fire 6 x 1.25 = 7.5, unfed), three soak resonators.
    Affinity fire vs {wind 1, earth 1, water 3}: 1 - 0.6 x 3/5 = 0.64: 7.5 x 0.64 = 4.8 a hit.
    2.5 (after side 0's third water): x0.5 -> 2.4 (1 charge left); 3.0: 2.4 (0 left);
    3.5: full 4.8 (with an uncapped 3rd charge it would be 2.4). The cast value stays the power,
    7.5: drizzle is per hit, not part of power.
    """
    b0 = board({"1:0": ("wind", 1), "1:3": ("earth", 1), "2:0": ("water", 1),
                "2:1": ("water", 1), "2:11": ("water", 1)})
    b1 = board({"1:0": ("water", 1), "1:1": ("water", 1), "1:2": ("water", 1),
                "1:3": ("water", 1), "2:8": ("fire", 1), "2:9": ("fire", 1),
                "2:10": ("fire", 1), **soak(3)}, open_sectors=[5])
    r = run(b0, b1)
    charges = [(e["t"], e["charges"]) for e in events(r, "drizzle_charge", side=1)]
    assert charges[:3] == [(1.5, 1), (2.0, 2), (2.5, 2)]
    hits = [(e["t"], e["value"]) for e in events(r, "hit", side=0) if 2.5 <= e["t"] <= 3.5]
    assert hits == [(2.5, approx(2.4)), (3.0, approx(2.4)), (3.5, approx(4.8))]
    assert first_cast(r, "2:8", side=1)["value"] == approx(7.5)
    assert events(r, "drizzle_use", side=1, t=1.5) == []


def test_drizzle_second_thundercloud_cast_uses_a_charge():
    """Covers: flow:drizzle, flow:thundercloud, D-21, D-20, rune:mimic

    Side 0: wind 1:0, water 2:0 (drizzle), mimic 3:0 (copies the water; sector 0). At 1.0 the
    water and its copy each give side 1 a charge: 1, 2.
    Side 1: wind 1:0, thunder 2:0 (thundercloud: 5 x 1.25 = 6.25, two casts), one soak resonator
    (n = 3, cap 1: side 0's erosion at 1.0 seals it, not the thunder).
    Affinity thunder vs {wind 1, water 1}: 1 + 0.6 x 0.5 = 1.3: 6.25 x 1.3 = 8.125.
    1.0: first cast uses a charge: 8.125 x 0.5 = 4.0625; the second cast is another attack and
    uses the other: 4.0625.
    """
    b0 = board({"1:0": ("wind", 1), "2:0": ("water", 1), "3:0": ("mimic", 1)}, open_sectors=[0])
    b1 = board({"1:0": ("wind", 1), "2:0": ("thunder", 1), **soak(1)}, open_sectors=[5])
    r = run(b0, b1)
    assert [e["charges"] for e in events(r, "drizzle_charge", side=1, t=1.0)] == [1, 2]
    assert len(events(r, "cast", side=1, t=1.0, cell="2:0")) == 2
    assert [h["value"] for h in events(r, "hit", side=0, t=1.0)] == [approx(4.0625),
                                                                      approx(4.0625)]


def test_discharge_strips_30_percent_before_damage():
    """Covers: flow:discharge, D-21, D-13

    Side 0: fire 1:0, thunder 2:0 (discharge: 5 x 1.25 x 1.2 = 7.5), one soak resonator (n = 3,
    cap 1). Side 1: earth III 1:0: barrier 5 x 3.2 = 16 at 0.5 (after side 0's fire: 6 to HP).
    Affinity thunder vs all-earth: 1 - 0.6 = 0.4 -> clamp 0.6: hit 7.5 x 0.6 = 4.5.
    1.0: strip 30% of 16 = 4.8 first (barrier 11.2), then the hit wears 2 x 4.5 = 9: barrier 2.2,
    all 4.5 absorbed, HP stays 94. (Stripping after the hit would leave 0.7 x 7 = 4.9.)
    """
    b0 = board({"1:0": ("fire", 1), "2:0": ("thunder", 1), **soak(1)}, open_sectors=[5])
    r = run(b0, board({"1:0": ("earth", 3)}))
    strip = events(r, "barrier_strip", side=1, t=1.0)
    assert len(strip) == 1 and strip[0]["value"] == approx(4.8)
    hit = events(r, "hit", side=1, t=1.0)[0]
    assert hit["value"] == approx(4.5)
    assert hit["absorbed"] == approx(4.5)
    assert hit["barrier"][1] == approx(2.2)
    assert hit["hp"][1] == approx(94.0)


def test_thundercloud_casts_twice():
    """Covers: flow:thundercloud, D-7

    Wind 1:0, thunder 2:0 (6.25, twice a turn) against an empty board. Each 1 s cycle: wind
    3 + 3 at k + 0.5, thunder 6.25 + 6.25 at k + 1.0: 18.5 a cycle. After 5 cycles (5.0 s): 92.5;
    wind at 5.5: 98.5; thunder's first cast at 6.0: 104.75: down at 6.0 s. Casts count turns:
    12 turns, 12 casts.
    """
    r = run(board({"1:0": ("wind", 1), "2:0": ("thunder", 1)}))
    at = events(r, "cast", side=0, t=1.0)
    assert [(e["cell"], e.get("repeat", 0)) for e in at] == [("2:0", 0), ("2:0", 1)]
    assert r.time == 6.0
    assert r.casts == (12, 0)


def test_storm_delay_and_budget_per_opponent_cycle():
    """Covers: flow:storm, D-21, D-8

    Side 0: thunder 1:0, winds 2:0, 2:1, 2:11 (each a storm: delay 300 ms, budget 600 ms per
    side-1 cycle). Turns: 1:0 0.5, 2:0 1.0, 2:1 1.5, 2:11 2.0, 1:0 2.5, 2:0 3.0, 2:1 3.5, 2:11 4.0.
    Side 1: six waters in ring 1 (a cycle of 6 turns), turns every 0.5 s unless delayed.
    0.5 side 1 (1:0) | 1.0 storm: side 1's turn due at 1.0 -> 1.3 (budget 300 left) |
    1.3 side 1 (1:1), next 1.8 | 1.5 storm -> 2.1 (budget 0) | 2.0 storm: no budget, no delay |
    2.1 (1:2), 2.6 (1:3), 3.1 (1:4) | 3.0, 3.5 storms: no budget | 3.6 (1:5) closes side 1's
    cycle: budget back to 600 | 4.0 storm: 4.1 -> 4.4.
    """
    b0 = board({"1:0": ("thunder", 1), "2:0": ("wind", 1), "2:1": ("wind", 1),
                "2:11": ("wind", 1)})
    b1 = board({f"1:{i}": ("water", 1) for i in range(6)})
    r = run(b0, b1)
    delays = [(e["t"], e["value"], e["next_turn"]) for e in events(r, "storm_delay", side=1)
              if e["t"] <= 4.0]
    assert delays == [(1.0, 300, 1.3), (1.5, 300, 2.1), (4.0, 300, 4.4)]
    assert [e["t"] for e in events(r, "cast", side=1) if e["t"] <= 3.6] == [
        0.5, 1.3, 2.1, 2.6, 3.1, 3.6]
    assert first_cast(r, "2:0")["value"] == approx(4.5)


def test_blessed_rain_overflow_to_barrier():
    """Covers: flow:blessed_rain, D-23

    Light 1:0, water 2:0 (blessed rain: 5 x 1.25 x 1.3 = 8.125) against an empty board.
    0.5: the light heals 3 at full HP: not fed, no barrier. 1.0: the water heals 8.125 at full HP:
    all 8.125 beyond max HP becomes barrier.
    """
    r = run(board({"1:0": ("light", 1), "2:0": ("water", 1)}))
    assert events(r, "barrier", side=0, t=0.5) == []
    b = events(r, "barrier", side=0, t=1.0)
    assert len(b) == 1 and b[0]["value"] == approx(8.125)
    assert b[0]["barrier"][0] == approx(8.125)


def test_curse_halves_before_blessed_rain_overflow():
    """Covers: D-23, flow:blessed_rain, rune:dark

    Side 0: light 1:0, water 2:0 (blessed rain 8.125), one soak resonator (n = 3, cap 1).
    Side 1: dark 1:0. Affinity dark vs {light 1, water 1}: light beats dark: 1 - 0.6 x 0.5 = 0.7.
    0.5: side 0's light heals at full; side 1's dark hits 3 x 0.7 = 2.1 -> 97.9, curses side 0
    until 3.5. 1.0: the water heals 8.125 x 0.5 = 4.0625 (halved first) -> 101.9625: HP 100,
    1.9625 becomes barrier.
    """
    b0 = board({"1:0": ("light", 1), "2:0": ("water", 1), **soak(1)}, open_sectors=[5])
    r = run(b0, board({"1:0": ("dark", 1)}))
    heal = events(r, "heal", side=0, t=1.0)[0]
    assert heal["value"] == approx(4.0625)
    b = events(r, "barrier", side=0, t=1.0)
    assert len(b) == 1 and b[0]["value"] == approx(1.9625)
    assert b[0]["hp"][0] == approx(100.0)


def test_black_flame_curse_three_seconds():
    """Covers: flow:black_flame, D-23, D-14

    Side 0: dark 1:0, fire 2:0 (black flame: 7.5, the fire curses too), one soak resonator.
    Side 1: water 1:0. 0.5: the dark curses until 3.5. 1.0: the fire's curse (3 s) ends at 4.0,
    later than 3.5: the curse now ends at 4.0. The water's heal at 1.0 is halved: 2.5.
    """
    b0 = board({"1:0": ("dark", 1), "2:0": ("fire", 1), **soak(1)}, open_sectors=[5])
    r = run(b0, board({"1:0": ("water", 1)}))
    curse = [(e["t"], e["source"], e["until"]) for e in events(r, "curse", side=1)]
    assert curse[:2] == [(0.5, "1:0", 3.5), (1.0, "2:0", 4.0)]
    assert events(r, "heal", side=1, t=1.0)[0]["value"] == approx(2.5)


def test_unfed_fire_does_not_curse():
    """Covers: flow:black_flame

    A fire with no dark inward does not curse: fire 2:0 with an earth at 1:0 (lava, not black
    flame) never curses.
    """
    r = run(board({"1:0": ("earth", 1), "2:0": ("fire", 1)}))
    assert events(r, "curse") == []


def test_umbra_doubles_curse_duration():
    """Covers: flow:umbra

    Light 1:0, dark 2:0 (umbra; opposition x0.6: 3 x 1.25 x 0.6 = 2.25). The dark casts at 1.0:
    curse 3 s x 2 = 6 s: until 7.0.
    """
    r = run(board({"1:0": ("light", 1), "2:0": ("dark", 1)}))
    c = events(r, "curse", side=1)[0]
    assert c["t"] == 1.0 and c["until"] == 7.0


def test_curse_later_end_wins_not_the_newer():
    """Covers: D-14, flow:umbra, rune:dark

    Light 1:0, dark 1:3 (plain, 3 s), dark 2:0 (umbra, 6 s). Turns: 1:0 0.5, 1:3 1.0, 2:0 1.5,
    1:0 2.0, 1:3 2.5. Curses: 1.0 -> 4.0; 1.5 -> 7.5; 2.5: the new end 5.5 is earlier than 7.5:
    the curse still ends at 7.5 (neither replaced by 5.5 nor stacked).
    """
    r = run(board({"1:0": ("light", 1), "1:3": ("dark", 1), "2:0": ("dark", 1)}))
    curse = [(e["t"], e["until"]) for e in events(r, "curse", side=1)]
    assert curse[:3] == [(1.0, 4.0), (1.5, 7.5), (2.5, 7.5)]


def test_deep_freeze_longer_freeze():
    """Covers: flow:deep_freeze

    Side 0: water 1:0, ice 2:0 (deep freeze: 4.5; freeze 1.5 s x 1.5 = 2.25 s), one soak
    resonator (n = 3, cap 1). Side 1: fire 1:0. The ice casts at 1.0: the fire is frozen until
    1.0 + 2.25 = 3.25.
    """
    b0 = board({"1:0": ("water", 1), "2:0": ("ice", 1), **soak(1)}, open_sectors=[5])
    r = run(b0, board({"1:0": ("fire", 1)}))
    fr = events(r, "freeze", side=1)[0]
    assert fr["t"] == 1.0 and fr["cell"] == "1:0" and fr["until"] == 3.25
    assert first_cast(r, "2:0")["value"] == approx(4.5)
