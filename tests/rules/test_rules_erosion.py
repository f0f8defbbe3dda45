"""Erosion, wards, reserves, seal caps and what changes them (RULES section 6, D-28 .. D-34, D-36,
D-37; eclipse and tree cores, ward stone, scapegoat doll, ironwall and corrosion bosses, thorn
crown and warding seal relics).

The eroder is usually side 1 with one casting rune (a water at 1:0): its cycle is one turn, so
it ends a cycle, and erodes side 0, at every t = 0.5 k s (after side 0's turn in that ms, D-8).
Side 1 then has one rune, so its own seal cap is floor(1/2) = 0: side 0's erosions never change
it. Every expected sequence is worked out by hand from D-31: doll, else the target (outermost
ring with unsealed runes, highest effective grade, earliest in casting order = lowest index
ring by ring), its ward, the cap, the reserve.
"""
import pytest

from conftest import board, frozen_rules

from rune_env.battle import battle
from rune_env.battle.explain import explain

APPROX = dict(rel=1e-12)
ERODER = board({"1:0": ("water", 1)}, max_hp=10000)


def log(result, side=0, types=("doll", "ward", "seal", "seal_capped", "reserve", "unseal"),
        until=None):
    """(t, type, cell) of side's erosion-related events, in order."""
    return [(e["t"], e["type"], e["cell"]) for e in result.events
            if e["type"] in types and e["side"] == side and (until is None or e["t"] <= until)]


def run(b0, b1=ERODER):
    return battle(b0, b1, frozen_rules(), trace=True)


def test_erosion_at_each_cycle_end(rules):
    """Side 1 has two casting runes (turns 0.5, 1.0, 1.5, ...): its cycles end at 1.0, 2.0, 3.0 and
    it erodes then, once each. Side 0: fire 2:0, fire 2:6, amplify 1:0, 1:3 (n = 4, cap 2): the
    outermost ring 2 first, grade I tie -> 2:0 at 1.0, 2:6 at 2.0; at 3.0 the cap of 2 is reached:
    nothing is sealed (the target would be the ring-1 amplify 1:0).

    Covers: erosion, D-31, D-32"""
    b0 = board({"2:0": ("fire", 1), "2:6": ("fire", 1), "1:0": ("amplify", 1),
                "1:3": ("amplify", 1)})
    b1 = board({"1:0": ("water", 1), "1:3": ("water", 1)}, max_hp=10000)
    r = run(b0, b1)
    assert [e["t"] for e in r.events if e["type"] == "erosion" and e["side"] == 0][:3] == \
        [1.0, 2.0, 3.0]
    assert log(r, until=3.0) == [(1.0, "seal", "2:0"), (2.0, "seal", "2:6"),
                                 (3.0, "seal_capped", "1:0")]
    assert r.seals[0] == 2


def test_sealed_rune_does_not_cast(rules):
    """A sealed rune's turns pass without a cast: side 0 fire 1:0 + fire 2:0 (n = 2, cap 1);
    2:0 is sealed at 0.5, so side 0 casts at 0.5 (1:0), not at 1.0 (2:0), at 1.5 (1:0).

    Covers: erosion, D-28"""
    r = run(board({"1:0": ("fire", 1), "2:0": ("fire", 1)}))
    assert [(e["t"], e["cell"]) for e in r.events if e["type"] == "cast" and e["side"] == 0][:2] \
        == [(0.5, "1:0"), (1.5, "1:0")]


def test_target_choice_outermost_highest_grade_casting_order(rules):
    """Side 0, n = 10 (cap 5): ring 1: fire I 1:0, wind I 1:1, fire III 1:2, earth I 1:3,
    fire III 1:4, water I 1:5; ring 2: fire I 2:3, wind II 2:5, amplify II 2:7, resonator I 2:9.
    Ring 2 first, any kind, highest grade then earliest: 2:5 (II), 2:7 (II), 2:3 (I), 2:9 (I);
    ring 2 has no unsealed rune left -> ring 1: 1:2 (III, before 1:4); then the cap (5) holds:
    capped on 1:4. The ring-1 earth holds no ward (ring 2 was outermost at the start).

    Covers: erosion, D-31, D-34"""
    b0 = board({"1:0": ("fire", 1), "1:1": ("wind", 1), "1:2": ("fire", 3), "1:3": ("earth", 1),
                "1:4": ("fire", 3), "1:5": ("water", 1), "2:3": ("fire", 1), "2:5": ("wind", 2),
                "2:7": ("amplify", 2), "2:9": ("resonator", 1)})
    r = run(b0)
    assert log(r, until=3.0) == [(0.5, "seal", "2:5"), (1.0, "seal", "2:7"), (1.5, "seal", "2:3"),
                                 (2.0, "seal", "2:9"), (2.5, "seal", "1:2"),
                                 (3.0, "seal_capped", "1:4")]


def test_target_uses_effective_grade(rules):
    """A mana spring at 2:6 makes the fire there grade II: it is eroded before the fire I at 2:0,
    though 2:0 is earlier in casting order.

    Covers: D-31, D-11a, artifact:mana_spring"""
    b0 = board({"2:0": ("fire", 1), "2:6": ("fire", 1), "1:0": ("fire", 1)},
               artifacts={"2:6": "mana_spring"})
    r = run(b0)
    assert log(r)[0] == (0.5, "seal", "2:6")


def test_earth_ward_in_outermost_ring_spent(rules):
    """Earth in the outermost ring (2) holds a ward. Side 0: earth 2:0, fire 2:6, fire 1:0 (n = 3,
    cap 1). 0.5: target 2:0 (grade I tie, earliest): its ward is spent, nothing sealed;
    1.0: 2:0 again, no ward left: sealed; 1.5: capped (target 2:6).

    Covers: ward, erosion, D-31"""
    b0 = board({"2:0": ("earth", 1), "2:6": ("fire", 1), "1:0": ("fire", 1)})
    assert explain(b0, rules)["cells"]["2:0"]["wards"] == 1
    assert "wards" not in explain(b0, rules)["cells"]["2:6"]
    r = run(b0)
    assert log(r, until=1.5) == [(0.5, "ward", "2:0"), (1.0, "seal", "2:0"),
                                 (1.5, "seal_capped", "2:6")]


def test_earth_ward_only_in_outermost_ring_at_start(rules):
    """Earth II at 1:0 with fire 2:0 on the board: ring 2 is the outermost at battle start, so the
    earth has no ward, even when 2:0 is sealed and ring 1 becomes the outermost ring with unsealed
    runes. Side 0 (n = 4, cap 2): 0.5 seal 2:0; 1.0 seal 1:0 (grade II) with no ward event.

    Covers: D-34, ward"""
    b0 = board({"2:0": ("fire", 1), "1:0": ("earth", 2), "1:3": ("fire", 1),
                "1:1": ("amplify", 1)})
    assert "wards" not in explain(b0, rules)["cells"]["1:0"]
    r = run(b0)
    assert log(r, until=1.0) == [(0.5, "seal", "2:0"), (1.0, "seal", "1:0")]


def test_ward_stone_and_wards_add_up(rules):
    """A ward stone at 2:0 wards the runes on and next to it (2:0's neighbours: 3:0, 3:1, 2:1,
    1:0, 2:11, 3:17): earth 2:0 holds 1 (outermost earth) + 1 (stone) = 2; fire 2:1 holds 1;
    fire 2:3 (not adjacent) none. Side 0 also has amplifies 1:2, 1:3, 1:4 (n = 6, cap 3).
    Erosions, grade I everywhere, earliest first: 0.5 ward 2:0; 1.0 ward 2:0; 1.5 seal 2:0;
    2.0 ward 2:1; 2.5 seal 2:1; 3.0 seal 2:3; 3.5 capped (ring 1: 1:2).

    Covers: artifact:ward_stone, ward, D-29, D-31"""
    b0 = board({"2:0": ("earth", 1), "2:1": ("fire", 1), "2:3": ("fire", 1),
                "1:2": ("amplify", 1), "1:3": ("amplify", 1), "1:4": ("amplify", 1)},
               artifacts={"2:0": "ward_stone"})
    c = explain(b0, rules)["cells"]
    assert (c["2:0"]["wards"], c["2:1"]["wards"]) == (2, 1)
    assert "wards" not in c["2:3"] and "wards" not in c["1:2"]
    r = run(b0)
    assert log(r, until=3.5) == [(0.5, "ward", "2:0"), (1.0, "ward", "2:0"), (1.5, "seal", "2:0"),
                                 (2.0, "ward", "2:1"), (2.5, "seal", "2:1"), (3.0, "seal", "2:3"),
                                 (3.5, "seal_capped", "1:2")]


def test_scapegoat_doll_absorbs_two_first(rules):
    """The doll takes the first 2 erosions even though the target holds a ward; then the ward,
    then the seal. Side 0: earth 2:0 (ward), fire 1:0, fire 1:3, doll at 1:3 (n = 3, cap 1):
    0.5 doll; 1.0 doll; 1.5 ward 2:0; 2.0 seal 2:0; 2.5 capped (ring 1: 1:0).

    Covers: artifact:scapegoat_doll, D-31, ward"""
    b0 = board({"2:0": ("earth", 1), "1:0": ("fire", 1), "1:3": ("fire", 1)},
               artifacts={"1:3": "scapegoat_doll"})
    r = run(b0)
    assert log(r, until=2.5) == [(0.5, "doll", None), (1.0, "doll", None), (1.5, "ward", "2:0"),
                                 (2.0, "seal", "2:0"), (2.5, "seal_capped", "1:0")]


def test_ironwall_wards_every_outermost_rune(rules):
    """Ironwall: +1 ward on every rune of the outermost ring (2) at the start: fire 2:0 holds 1,
    earth 2:6 holds 2 (ironwall + earth), fire II 1:0 none. n = 5 (amplifies 1:2, 1:4): cap 2.
    0.5 ward 2:0; 1.0 seal 2:0; 1.5 ward 2:6; 2.0 ward 2:6; 2.5 seal 2:6; 3.0 capped on 1:0.

    Covers: boss:ironwall, ward, D-29"""
    b0 = board({"2:0": ("fire", 1), "2:6": ("earth", 1), "1:0": ("fire", 2),
                "1:2": ("amplify", 1), "1:4": ("amplify", 1)}, boss_rules=["ironwall"])
    c = explain(b0, rules)["cells"]
    assert (c["2:0"]["wards"], c["2:6"]["wards"]) == (1, 2)
    assert "wards" not in c["1:0"]
    r = run(b0)
    assert log(r, until=3.0) == [(0.5, "ward", "2:0"), (1.0, "seal", "2:0"), (1.5, "ward", "2:6"),
                                 (2.0, "ward", "2:6"), (2.5, "seal", "2:6"),
                                 (3.0, "seal_capped", "1:0")]


def test_seal_cap_half_including_supports(rules):
    """Cap = floor(n/2) with n counting supports: fires 2:0, 2:3, 2:6 + amplifies 1:0, 1:3:
    n = 5, cap 2 (not floor(3/2) = 1, not 3): seals at 0.5 (2:0), 1.0 (2:3); capped at 1.5
    (2:6), and the count stays 2.

    Covers: D-32, erosion"""
    b0 = board({"2:0": ("fire", 1), "2:3": ("fire", 1), "2:6": ("fire", 1),
                "1:0": ("amplify", 1), "1:3": ("amplify", 1)})
    assert explain(b0, rules)["seal_cap"] == 2
    r = run(b0)
    assert log(r, until=1.5) == [(0.5, "seal", "2:0"), (1.0, "seal", "2:3"),
                                 (1.5, "seal_capped", "2:6")]
    assert r.seals[0] == 2


def test_tree_seal_cap_third(rules):
    """Tree: cap floor(n/3): fires 2:0, 2:3, 2:6, 2:9 + amplifies 1:0, 1:2, 1:4: n = 7, cap 2
    (floor(7/2) = 3 without the tree): seals 0.5 (2:0), 1.0 (2:3), capped at 1.5 (2:6).

    Covers: core:tree, D-32"""
    runes = {"2:0": ("fire", 1), "2:3": ("fire", 1), "2:6": ("fire", 1), "2:9": ("fire", 1),
             "1:0": ("amplify", 1), "1:2": ("amplify", 1), "1:4": ("amplify", 1)}
    assert explain(board(runes), rules)["seal_cap"] == 3
    b0 = board(runes, core="tree")
    assert explain(b0, rules)["seal_cap"] == 2
    r = run(b0)
    assert log(r, until=1.5) == [(0.5, "seal", "2:0"), (1.0, "seal", "2:3"),
                                 (1.5, "seal_capped", "2:6")]


def test_seal_count_is_seals_minus_unseals(rules):
    """Side 0: light 1:0, fire 2:0, fire 2:6 (n = 3, cap 1); side 0's turns: 1:0, 2:0, 2:6, ...
    0.5: 2:0 sealed (count 1); 1.0 and 1.5: capped (target 2:6); 2.0: side 0's light unseals 2:0
    (count 0), then side 1's erosion seals 2:0 again (below the cap once more).

    Covers: D-32, D-31"""
    b0 = board({"1:0": ("light", 1), "2:0": ("fire", 1), "2:6": ("fire", 1)})
    r = run(b0)
    assert log(r, until=2.0) == [(0.5, "seal", "2:0"), (1.0, "seal_capped", "2:6"),
                                 (1.5, "seal_capped", "2:6"), (2.0, "unseal", "2:0"),
                                 (2.0, "seal", "2:0")]


def test_reserve_choice_and_no_ward(rules):
    """Side 0: earth 2:0 (ward), fire 2:6, fire 1:0, fire 1:3 (n = 4, cap 2); hand: fire II,
    earth I, earth II, earth II (slots 0..3).
    0.5: ward of 2:0 spent. 1.0: 2:0 sealed; a reserve of its kind, highest grade, lowest slot:
    earth II from slot 2 takes the cell. 1.5: target 2:0 (earth II now the highest grade), which
    enters with no ward: sealed at once (count 2, the replaced rune included); earth II from
    slot 3 takes the cell. 2.0: cap reached: capped on 2:0.

    Covers: reserve, D-33, D-31, D-32"""
    b0 = board({"2:0": ("earth", 1), "2:6": ("fire", 1), "1:0": ("fire", 1), "1:3": ("fire", 1)},
               hand=[("fire", 2), ("earth", 1), ("earth", 2), ("earth", 2)])
    r = run(b0)
    assert log(r, until=2.0) == [(0.5, "ward", "2:0"), (1.0, "seal", "2:0"),
                                 (1.0, "reserve", "2:0"), (1.5, "seal", "2:0"),
                                 (1.5, "reserve", "2:0"), (2.0, "seal_capped", "2:0")]
    res = [(e["kind"], e["grade"], e["slot"]) for e in r.events if e["type"] == "reserve"]
    assert res == [("earth", 2, 2), ("earth", 2, 3)]
    assert r.seals[0] == 2


def test_reserve_enters_without_ward_stone_ward(rules):
    """A ward stone at 2:0 gives the fire there a ward at battle start only: after 2 erosions
    (0.5 ward, 1.0 seal) the reserve fire enters 2:0 with no ward and is sealed at 1.5.
    n = 5 (fires 2:0, 1:2, 1:3, 1:4 + amplify 2:6): cap 2.

    Covers: reserve, D-33, D-29, artifact:ward_stone"""
    b0 = board({"2:0": ("fire", 2), "2:6": ("amplify", 1), "1:2": ("fire", 1),
                "1:3": ("fire", 1), "1:4": ("fire", 1)},
               artifacts={"2:0": "ward_stone"}, hand=[("fire", 2)])
    r = run(b0)
    assert log(r, until=1.5) == [(0.5, "ward", "2:0"), (1.0, "seal", "2:0"),
                                 (1.0, "reserve", "2:0"), (1.5, "seal", "2:0")]


def test_tree_reserve_any_kind_same_kind_first(rules):
    """Tree: fire 2:0, wind 2:6, amplifies 1:0..1:3 (n = 6, cap floor(6/3) = 2); hand: water III,
    earth II, fire I. 0.5: 2:0 sealed; same kind first: fire I (slot 2), not the water III.
    1.0: 2:0 (fire I, tie with wind I, earliest) sealed; no fire left: any kind, highest grade:
    water III (slot 0). 1.5: capped.

    Covers: core:tree, reserve, D-33"""
    b0 = board({"2:0": ("fire", 1), "2:6": ("wind", 1), "1:0": ("amplify", 1),
                "1:1": ("amplify", 1), "1:2": ("amplify", 1), "1:3": ("amplify", 1)},
               core="tree", hand=[("water", 3), ("earth", 2), ("fire", 1)])
    r = run(b0)
    res = [(e["t"], e["cell"], e["kind"], e["grade"], e["slot"]) for e in r.events
           if e["type"] == "reserve"]
    assert res == [(0.5, "2:0", "fire", 1, 2), (1.0, "2:0", "water", 3, 0)]
    assert log(r, types=("seal_capped",))[0] == (1.5, "seal_capped", "2:0")
    # without the tree a water never replaces a fire: one reserve only (the fire I)
    plain = run(board({"2:0": ("fire", 1), "2:6": ("wind", 1)},
                      hand=[("water", 3), ("earth", 2), ("fire", 1)]))
    assert [(e["kind"], e["slot"]) for e in plain.events if e["type"] == "reserve"] == \
        [("fire", 2)]


def test_warding_seal_unseals_after_4s_and_counts(rules):
    """Warding seal on side 0: fire 2:0, fire 2:6, fire 1:0 (n = 3, cap 1). 0.5: 2:0 sealed;
    1.0 .. 4.0: capped (7 times, target 2:6); 4.5 = 0.5 + 4: 2:0 unsealed (start of the ms), so
    the count is 0 and side 1's erosion at 4.5 seals 2:0 again.

    Covers: relic:warding_seal, D-37, D-32"""
    b0 = board({"2:0": ("fire", 1), "2:6": ("fire", 1), "1:0": ("fire", 1)},
               relics=["warding_seal"])
    r = run(b0)
    got = log(r, until=4.5)
    assert got[0] == (0.5, "seal", "2:0")
    assert got[1:8] == [(0.5 * k, "seal_capped", "2:6") for k in range(2, 9)]
    assert got[8:] == [(4.5, "unseal", "2:0"), (4.5, "seal", "2:0")]
    unseal = [e for e in r.events if e["type"] == "unseal"][0]
    assert unseal["cause"] == "warding_seal"


def test_eclipse_outermost_power_and_extra_erosion(rules):
    """Eclipse: runes of the outermost ring at battle start x0.85: 2:3 fire 6 x 1.25 x 0.85 =
    6.375; 1:0 fire 6. In battle side 1 seals 2:3 at 0.5 (cap 1), and 1:0 still casts 6.0 at
    1.5 (ring 1 does not become "outermost"). Side 0's cycle (2 turns) ends at 1.0 with
    1 + 1 = 2 erosions.

    Covers: core:eclipse, D-36, D-34, D-30"""
    b0 = board({"1:0": ("fire", 1), "2:3": ("fire", 1)}, core="eclipse")
    c = explain(b0, rules)["cells"]
    assert c["2:3"]["power"] == pytest.approx(6.375, **APPROX)
    assert c["1:0"]["power"] == pytest.approx(6.0, **APPROX)
    # with ring 1 alone, ring 1 is the outermost: 6 x 0.85 = 5.1
    assert explain(board({"1:0": ("fire", 1)}, core="eclipse"), rules)["cells"]["1:0"]["power"] \
        == pytest.approx(5.1, **APPROX)
    r = run(b0)
    assert log(r)[0] == (0.5, "seal", "2:3")
    casts = [(e["t"], e["cell"], e["value"]) for e in r.events
             if e["type"] == "cast" and e["side"] == 0][:2]
    assert casts == [(0.5, "1:0", pytest.approx(6.0, **APPROX)),
                     (1.5, "1:0", pytest.approx(6.0, **APPROX))]
    by0 = [e["t"] for e in r.events if e["type"] == "erosion" and e["by"] == 0]
    assert by0[:4] == [1.0, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("mods,per_cycle", [
    ({}, 1),
    ({"core": "eclipse"}, 2),
    ({"boss_rules": ["corrosion"]}, 2),
    ({"relics": ["thorn_crown"]}, 2),
    ({"core": "eclipse", "boss_rules": ["corrosion"], "relics": ["thorn_crown"]}, 4),
])
def test_erosions_per_cycle(rules, mods, per_cycle):
    """E = 1 + eclipse + corrosion + thorn crown. The eroder (one water, cycle ends at every turn)
    erodes side 0 (8 fires in ring 2, cap 4) E times at t = 0.5: the first E seals are 2:0 ..
    in casting order (all grade I).

    Covers: D-30, core:eclipse, boss:corrosion, relic:thorn_crown, erosion"""
    eroder = board({"1:0": ("water", 1)}, max_hp=10000, **mods)
    assert explain(eroder, rules)["erosions_per_cycle"] == per_cycle
    b0 = board({f"2:{i}": ("fire", 1) for i in range(8)})
    r = run(b0, eroder)
    at = [e for e in r.events if e["t"] == 0.5 and e["type"] == "erosion" and e["by"] == 1]
    assert len(at) == per_cycle
    assert log(r, until=0.5) == [(0.5, "seal", f"2:{i}") for i in range(per_cycle)]


def test_frozen_rune_keeps_its_effects_sealed_loses_them(rules):
    """D-28. Frozen: side 0 fire I 1:0 next to water III 1:1 (opposition: fire 3.6, water
    5 x 3.2 x 0.6 = 9.6). Side 1: ice 1:0, water 1:2, water 1:4 (cycle ends at 1.5, after side 0's
    turn). At 0.5 the ice freezes side 0's strongest, the water (9.6 > 3.6), until 2.0; at 1.5
    side 0's fire still casts 3.6: a frozen water still opposes it.
    Sealed: fire 1:0 + water 2:0 (fire 3.6); the eroder seals 2:0 at 0.5 (n = 2, cap 1): the
    fire's next cast (1.5) is 6.0, a sealed water opposes nothing.

    Covers: D-28"""
    r = run(board({"1:0": ("fire", 1), "1:1": ("water", 3)}),
            board({"1:0": ("ice", 1), "1:2": ("water", 1), "1:4": ("water", 1)}, max_hp=10000))
    fr = [e for e in r.events if e["type"] == "freeze" and e["side"] == 0][0]
    assert (fr["t"], fr["cell"]) == (0.5, "1:1")
    casts = [(e["t"], e["cell"], e["value"]) for e in r.events
             if e["type"] == "cast" and e["side"] == 0][:2]
    assert casts == [(0.5, "1:0", pytest.approx(3.6, **APPROX)),
                     (1.5, "1:0", pytest.approx(3.6, **APPROX))]
    r = run(board({"1:0": ("fire", 1), "2:0": ("water", 1)}))
    casts = [(e["t"], e["cell"], e["value"]) for e in r.events
             if e["type"] == "cast" and e["side"] == 0][:2]
    assert casts == [(0.5, "1:0", pytest.approx(3.6, **APPROX)),
                     (1.5, "1:0", pytest.approx(6.0, **APPROX))]
