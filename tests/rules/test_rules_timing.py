"""Hand-worked tests of time and turn order: D-6, D-6a, D-7, D-8, D-9, D-10.

Every expected value is worked out by hand from RULES.md and the frozen config
(tests/data/rules.yaml); the computation is written next to it. Battles stay under 20 s where
damage matters (overdrive starts after 20 s). A side whose opponent has a single rune cannot
seal it (cap floor(1/2) = 0), which keeps erosion out of the way.
"""
from conftest import board, frozen_rules, run, events, approx

from rune_env.battle import battle





def test_turns_only_for_casting_runes_in_casting_order():
    """Covers: D-6, rune:resonator, rings

    Side 0: resonator 1:0 (no turn), water 1:2, fire 2:0. Turn cells in casting order: 1:2 (id 2),
    2:0 (id 6); the resonator has none. Turns every 0.5 s from t = 0.5: water at 0.5, 1.5, ...;
    fire at 1.0, 2.0, ... Fire 2:0 = 6 x 1.25 (ring 2) = 7.5 (not fed: 1:0 is a resonator).
    Empty opponent: affinity x1. 13 x 7.5 = 97.5 < 100 <= 14 x 7.5 = 105: down at the 14th fire
    cast, t = 14.0 s; by then water cast at 0.5 .. 13.5 (14 casts) -> 28 casts, 28 turns.
    (With a turn for the resonator the cycle would be 1.5 s and the fire would land later.)
    """
    r = run(board({"1:0": ("resonator", 1), "1:2": ("water", 1), "2:0": ("fire", 1)}))
    casts = [(e["t"], e["cell"]) for e in events(r, "cast", side=0)]
    assert casts[:4] == [(0.5, "1:2"), (1.0, "2:0"), (1.5, "1:2"), (2.0, "2:0")]
    assert not any(c == "1:0" for _, c in casts)
    assert events(r, "cast", side=0, cell="2:0")[0]["value"] == approx(7.5)
    assert r.winner == 0
    assert r.time == 14.0
    assert r.casts == (28, 0)
    assert r.turns == (28, 0)


def test_turns_happen_at_every_t_up_to_60s_and_no_turn_side_never_acts():
    """Covers: D-6, D-1

    Side 0: one water (heal only). Turns at 0.5, 1.0, ..., 60.0: 60 / 0.5 = 120 turns, all casts
    (t = 60.0 is included: turns at every t <= 60 s). Side 1: one resonator only: no turns, no casts,
    no erosions. Nobody is hurt: both ratios 1 -> a draw at the timeout.
    """
    r = battle(board({"1:0": ("water", 1)}), board({"1:0": ("resonator", 1)}), frozen_rules(),
               trace=True)
    assert r.turns == (120, 0)
    assert r.casts == (120, 0)
    assert events(r, "cast", side=0)[-1]["t"] == 60.0
    assert events(r, "erosion", by=1) == []
    assert r.winner is None
    assert r.time == 60.0
    assert r.reason == "timeout"


def test_interval_is_whole_ms_rounded_half_up():
    """Covers: D-6a, D-6, boss:swift, relic:hourglass

    Interval = 0.5 s x 0.85 (swift) x 0.9 (hourglass) = 0.3825 s = 382.5 ms -> rounded half up to
    383 ms (not 382). First turn at one interval: casts at 0.383, 0.766, 1.149 s.
    """
    r = run(board({"1:0": ("fire", 1)}, boss_rules=["swift"], relics=["hourglass"]))
    assert [e["t"] for e in events(r, "cast", side=0)][:3] == [0.383, 0.766, 1.149]


def test_freeze_covers_t_to_t_plus_d_and_frozen_turns_pass():
    """Covers: D-6a, D-7, D-8, rune:ice, rune:fire, D-26

    Side 0: fire 1:0. Side 1: ice 1:0. Both turn every 0.5 s, side 0 first at each ms.
    Affinity (D-26): fire vs an all-ice board: 1 + 0.6 x 1 = 1.6 -> clamp 1.4: 6 x 1.4 = 8.4 a hit;
    ice vs an all-fire board: 1 - 0.6 = 0.4 -> clamp 0.6: 3 x 0.6 = 1.8 a hit.
    t=0.5: fire casts; ice freezes the fire 1500 ms: [500, 2000).
    t=1.0, 1.5: the fire's turns pass (frozen), take their time, are not casts (D-7).
    t=2.0: the freeze is over at 2000 exactly (D-6a, D-8 step 1 first): the fire casts, then the
    ice (side 1, after side 0) freezes it again until 3500. So fire casts every 1.5 s: 0.5, 2.0,
    3.5, 5.0, ... The 12th cast (t = 0.5 + 11 x 1.5 = 17.0 s) brings 12 x 8.4 = 100.8 >= 100
    (11 x 8.4 = 92.4): side 0 wins at 17.0 s with 34 turns (17.0 / 0.5) and 12 casts. Side 1 had
    33 turns (its turn at 17.0 never comes), all casts: side 0 HP 100 - 33 x 1.8 = 40.6.
    Erosions do nothing: each side has one rune, seal cap floor(1/2) = 0.
    """
    r = run(board({"1:0": ("fire", 1)}), board({"1:0": ("ice", 1)}))
    fr = events(r, "freeze", side=0)
    assert fr[0]["t"] == 0.5 and fr[0]["cell"] == "1:0" and fr[0]["until"] == 2.0
    assert [e["t"] for e in events(r, "cast", side=0)][:4] == [0.5, 2.0, 3.5, 5.0]
    assert events(r, "hit", side=1)[0]["value"] == approx(8.4)
    assert events(r, "hit", side=0)[0]["value"] == approx(1.8)
    assert r.winner == 0
    assert r.time == 17.0
    assert r.turns == (34, 33)
    assert r.casts == (12, 33)
    assert r.hp[0] == approx(40.6)


def test_sealed_turn_passes_and_takes_its_time():
    """Covers: D-7, erosion

    Side 0: fire 1:0, fire 1:2 (n = 2, seal cap 1; no resonance pattern, not adjacent). Side 1: fire 1:0 (one-turn cycle: it erodes
    side 0 after each of its turns). Affinity fire vs fire: x1.
    t=0.5: side 0's 1:0 casts; side 1 casts and erodes: outermost ring 1, highest grade then
    earliest -> 1:0 sealed. Then side 0's turns alternate 1:2 (casts at 1.0, 2.0, ...) and 1:0
    (sealed: the turn passes, taking 0.5 s, no cast at 1.5, 2.5, ...).
    Side 1 hits 6 every 0.5 s: 17 x 6 = 102 >= 100 at t = 8.5 s; side 0 at 8.5 is on 1:0 (sealed).
    Side 0: 17 turns, casts 0.5 and 1.0 .. 8.0 = 9; side 1 HP 100 - 9 x 6 = 46.
    """
    r = run(board({"1:0": ("fire", 1), "1:2": ("fire", 1)}), board({"1:0": ("fire", 1)}))
    assert events(r, "seal", side=0)[0]["t"] == 0.5
    assert events(r, "seal", side=0)[0]["cell"] == "1:0"
    assert [e["t"] for e in events(r, "cast", side=0)][:4] == [0.5, 1.0, 2.0, 3.0]
    assert r.winner == 1
    assert r.time == 8.5
    assert r.turns == (17, 17)
    assert r.casts == (9, 17)
    assert r.hp == (0.0, approx(46.0))


def test_side_0_acts_before_side_1_in_the_same_ms():
    """Covers: D-8

    Fire 1:0 against fire 1:0 (affinity x1): both hit 6 every 0.5 s at the same ms. At t = 8.5 s
    side 0's 17th hit (17 x 6 = 102) comes first and ends the battle; side 1 landed 16 hits:
    side 0 HP 100 - 96 = 4. Swapping the seats swaps the winner.
    """
    f = board({"1:0": ("fire", 1)})
    r = battle(f, f, frozen_rules())
    assert r.winner == 0
    assert r.time == 8.5
    assert r.hp == (approx(4.0), 0.0)
    assert r.casts == (17, 16)


def test_order_within_a_turn_cast_then_mimic_copy_then_erosion():
    """Covers: D-8, D-20, rune:mimic

    Side 0: fire 1:0, mimic 2:0 (inward 1:0). Side 1: resonators 1:0 and 1:3 (no turns, no
    elemental runes: affinity x1; n = 2, cap 1). At t = 0.5 side 0's only turn cell casts (6),
    then the mimic's copy (grade I: 6 x 0.6 = 3.6), then the cycle closes and side 0 erodes:
    side 1's outermost ring 1, earliest -> 1:0 sealed.
    """
    r = run(board({"1:0": ("fire", 1), "2:0": ("mimic", 1)}),
            board({"1:0": ("resonator", 1), "1:3": ("resonator", 1)}))
    at = [e for e in r.events if e["t"] == 0.5]
    assert [e["type"] for e in at] == ["cast", "hit", "cast", "hit", "erosion", "seal"]
    assert at[0]["cell"] == "1:0" and at[0]["value"] == approx(6.0)
    assert at[2]["cell"] == "2:0" and at[2]["copy_of"] == "1:0"
    assert at[2]["value"] == approx(3.6) and at[3]["value"] == approx(3.6)
    assert at[5]["side"] == 1 and at[5]["cell"] == "1:0"


def test_max_hp_from_round_board_and_giant():
    """Covers: D-9, boss:giant

    Round 3: 100 + 25 x (3 - 1) = 150. Round 2 with giant: (100 + 25) x 1.3 = 162.5.
    A board's max_hp replaces the round's: max_hp 80 in round 5 -> 80; max_hp 80 with giant ->
    80 x 1.3 = 104. Empty boards: no turns; both start full (and stay so) at the timeout.
    """
    r = battle(board({}, round=3), board({}, round=2, boss_rules=["giant"]), frozen_rules())
    assert r.max_hp == (approx(150.0), approx(162.5))
    assert r.hp == r.max_hp
    r = battle(board({}, round=5, max_hp=80), board({}, max_hp=80, boss_rules=["giant"]),
               frozen_rules())
    assert r.max_hp == (approx(80.0), approx(104.0))
    assert r.hp == r.max_hp


def test_start_full_with_no_barrier():
    """Covers: D-9

    Round 2: max HP 125 for both. The first event (side 0's water heal at t = 0.5) shows both sides
    at 125 HP with 0 barrier.
    """
    r = run(board({"1:0": ("water", 1)}, round=2), board({}, round=2))
    first = r.events[0]
    assert first["hp"] == [approx(125.0), approx(125.0)]
    assert first["barrier"] == [0.0, 0.0]


def test_downing_hit_ends_battle_before_reflection():
    """Covers: D-10, D-22, flow:mud_wall

    Side 0 (max_hp 2): water 1:0, water 1:1, fire III 1:4, resonator 2:6 (erosion soak). Turns:
    1:0 at 0.5, 1:1 at 1.0, fire at 1.5. Fire = 6 x 3.2 = 19.2.
    Side 1 (max_hp 4): water 1:0, earth 2:0 (mud wall: reflect 20% while barrier > 0).
    Earth barrier = 5 x 1.25 x 1.5 = 9.375 at t = 1.0. Side 1's cycle closing at 1.0 seals side
    0's outermost rune, the resonator 2:6 (cap floor(4/2) = 2), not the fire.
    Affinity fire vs {water, earth}: 1 - 0.6 x 0.5 = 0.7 -> hit 19.2 x 0.7 = 13.44.
    t=1.5: barrier absorbs 9.375, HP 4 - (13.44 - 9.375) = -0.065 <= 0: side 1 loses at 1.5 s.
    Reflection (0.2 x 13.44 = 2.688 > side 0's 2 HP) would down side 0 too, but it comes after the
    check: side 0 wins with its 2 HP.
    """
    b0 = board({"1:0": ("water", 1), "1:1": ("water", 1), "1:4": ("fire", 3),
                "2:6": ("resonator", 1)}, max_hp=2)
    b1 = board({"1:0": ("water", 1), "2:0": ("earth", 1)}, max_hp=4)
    r = run(b0, b1)
    hit = events(r, "hit", side=1)[-1]
    assert hit["t"] == 1.5
    assert hit["value"] == approx(13.44)
    assert hit["absorbed"] == approx(9.375)
    assert r.winner == 0
    assert r.time == 1.5
    assert r.hp == (approx(2.0), 0.0)
