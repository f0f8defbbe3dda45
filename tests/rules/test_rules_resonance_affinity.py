"""Resonance, opposition, affinity, overdrive (RULES sections 5.2-5.5; D-24 .. D-27).

Static powers are read from `explain` (power = one hit before affinity and overdrive, D-12);
dynamic effects from whole traces. Every expectation is worked by hand from the frozen rules:
fire 6, wind 3 (x2 hits), water heal 5, earth barrier 5, thunder 5, dark 3, light heal 3, ice 3;
grades x1 / x1.8 / x3.2; rings x1 / x1.25 / x1.5. The cores, mana spring, boss rules, relics and
draws are tested in tests/rules/test_rules_cores_relics.py, which reuses this module's helpers.
"""
import pytest

from conftest import board, frozen_rules

from rune_env.battle import battle
from rune_env.battle.analysis import overdrive_multiplier
from rune_env.battle.explain import explain

APPROX = dict(rel=1e-12)


def cells(b, against=None):
    return explain(b, frozen_rules(), against)["cells"]


def power(b, cell):
    return cells(b)[cell]["power"]


def events(result, type_, side=None):
    return [e for e in result.events if e["type"] == type_ and (side is None or e["side"] == side)]


def fires(*names, grade=1):
    return {n: ("fire", grade) for n in names}


# --------------------------------------------------------------------------- resonance (5.2)
def test_twofold_resonance(rules):
    """Two facing runes of a kind (i, i+3k) grow x1.2; a non-facing pair does not.
    Ring 1: 1:0 + 1:3: 6 x 1.2 = 7.2. Ring 2: 2:0 + 2:6: 6 x 1.25 x 1.2 = 9.0.
    1:0 + 1:2 are not facing: 6 each.

    Covers: resonance:twofold"""
    c = cells(board(fires("1:0", "1:3")))
    assert c["1:0"]["power"] == pytest.approx(7.2, **APPROX)
    assert c["1:3"]["power"] == pytest.approx(7.2, **APPROX)
    assert c["1:0"]["multipliers"]["resonance"] == pytest.approx(1.2, **APPROX)
    c = cells(board(fires("2:0", "2:6")))
    assert c["2:0"]["power"] == pytest.approx(9.0, **APPROX)
    assert c["2:6"]["power"] == pytest.approx(9.0, **APPROX)
    c = cells(board(fires("1:0", "1:2")))
    assert c["1:0"]["power"] == pytest.approx(6.0, **APPROX)
    assert "resonance" not in c["1:0"]["multipliers"]


def test_threefold_resonance(rules):
    """Three at 120 degrees (i, i+2k, i+4k) grow x1.5. Ring 1: 1:0, 1:2, 1:4: 6 x 1.5 = 9.0.
    Ring 2: 2:1, 2:5, 2:9: 6 x 1.25 x 1.5 = 11.25.

    Covers: resonance:threefold"""
    c = cells(board(fires("1:0", "1:2", "1:4")))
    for n in ("1:0", "1:2", "1:4"):
        assert c[n]["power"] == pytest.approx(9.0, **APPROX)
    c = cells(board(fires("2:1", "2:5", "2:9")))
    for n in ("2:1", "2:5", "2:9"):
        assert c[n]["power"] == pytest.approx(11.25, **APPROX)
    # two of a triple are no pattern (2:1 and 2:5 are not facing either): 6 x 1.25 = 7.5
    assert power(board(fires("2:1", "2:5")), "2:1") == pytest.approx(7.5, **APPROX)


def test_sixfold_resonance_ring1_and_only_strongest_counts(rules):
    """The whole ring 1 of fire: every rune x2.0 (the 2- and 3-fold patterns inside it do not
    multiply in): 6 x 2.0 = 12.0, not 6 x 2.0 x 1.5 x 1.2 = 21.6.

    Covers: resonance:sixfold, D-24"""
    c = cells(board(fires("1:0", "1:1", "1:2", "1:3", "1:4", "1:5")))
    for i in range(6):
        assert c[f"1:{i}"]["power"] == pytest.approx(12.0, **APPROX)
        assert c[f"1:{i}"]["multipliers"]["resonance"] == pytest.approx(2.0, **APPROX)


def test_sixfold_resonance_ring2_needs_all_twelve_cells(rules):
    """Ring 2's whole ring is 12 cells: all fire -> 6 x 1.25 x 2.0 = 15.0 each.
    With 2:5 empty (11 fires) no six-fold: 2:0 is in the pair {0,6} (x1.2) and the triple {0,4,8}
    (x1.5): strongest x1.5 -> 11.25; 2:1's triple {1,5,9} is broken, its pair {1,7} holds:
    6 x 1.25 x 1.2 = 9.0; 2:11's pair {5,11} is broken, its triple {3,7,11} holds: 11.25.

    Covers: resonance:sixfold, D-24"""
    ring2 = [f"2:{i}" for i in range(12)]
    c = cells(board(fires(*ring2)))
    for n in ring2:
        assert c[n]["power"] == pytest.approx(15.0, **APPROX)
    c = cells(board(fires(*[n for n in ring2 if n != "2:5"])))
    assert c["2:0"]["power"] == pytest.approx(11.25, **APPROX)
    assert c["2:1"]["power"] == pytest.approx(9.0, **APPROX)
    assert c["2:9"]["power"] == pytest.approx(9.0, **APPROX)   # pair {3,9}
    assert c["2:11"]["power"] == pytest.approx(11.25, **APPROX)
    # a resonator fills the gap: six-fold again (fires 15.0)
    runes = fires(*[n for n in ring2 if n != "2:5"])
    runes["2:5"] = ("resonator", 1)
    c = cells(board(runes))
    assert c["2:0"]["power"] == pytest.approx(15.0, **APPROX)
    assert c["2:11"]["power"] == pytest.approx(15.0, **APPROX)


def test_sixfold_resonance_ring3_eighteen_cells(rules):
    """Ring 3 needs all 6 sectors open: 18 fires -> 6 x 1.5 x 2.0 = 18.0 each; with 3:0 empty,
    3:1 keeps its triple {1,7,13}: 6 x 1.5 x 1.5 = 13.5.

    Covers: resonance:sixfold, D-24"""
    ring3 = [f"3:{i}" for i in range(18)]
    c = cells(board(fires(*ring3), open_sectors=range(6)))
    for n in ring3:
        assert c[n]["power"] == pytest.approx(18.0, **APPROX)
    c = cells(board(fires(*ring3[1:]), open_sectors=range(6)))
    assert c["3:1"]["power"] == pytest.approx(13.5, **APPROX)


def test_overlapping_patterns_strongest_counts(rules):
    """1:0, 1:2, 1:4 (triple, x1.5) plus 1:3 (pair with 1:0, x1.2): 1:0 takes only the stronger
    x1.5 -> 9.0 (not 6 x 1.5 x 1.2 = 10.8); 1:3 has only the pair: 7.2; 1:2: 9.0.

    Covers: D-24, resonance:twofold, resonance:threefold"""
    c = cells(board(fires("1:0", "1:2", "1:3", "1:4")))
    assert c["1:0"]["power"] == pytest.approx(9.0, **APPROX)
    assert c["1:3"]["power"] == pytest.approx(7.2, **APPROX)
    assert c["1:2"]["power"] == pytest.approx(9.0, **APPROX)


def test_resonator_counts_as_any_kind_and_never_grows(rules):
    """Fire 1:0 + resonator 1:3: a pair, fire 7.2; the resonator gets no resonance itself.
    Fire 1:0, 1:2 + resonator 1:4: a triple, 9.0 each. Resonators alone (no rune of a kind)
    make no pattern. Fire 1:0 + wind 1:3: two kinds, no pattern (6 and 3).

    Covers: resonance:resonator, D-24"""
    c = cells(board({"1:0": ("fire", 1), "1:3": ("resonator", 1)}))
    assert c["1:0"]["power"] == pytest.approx(7.2, **APPROX)
    assert "resonance" not in c["1:3"]["multipliers"]
    c = cells(board({"1:0": ("fire", 1), "1:2": ("fire", 1), "1:4": ("resonator", 2)}))
    assert c["1:0"]["power"] == pytest.approx(9.0, **APPROX)
    assert c["1:2"]["power"] == pytest.approx(9.0, **APPROX)
    c = cells(board({"1:0": ("resonator", 1), "1:3": ("resonator", 1), "2:0": ("fire", 1)}))
    assert c["1:0"]["multipliers"] == {} and c["1:3"]["multipliers"] == {}
    assert c["2:0"]["power"] == pytest.approx(7.5, **APPROX)  # 6 x 1.25, nothing else
    c = cells(board({"1:0": ("fire", 1), "1:3": ("wind", 1)}))
    assert c["1:0"]["power"] == pytest.approx(6.0, **APPROX)
    assert c["1:3"]["power"] == pytest.approx(3.0, **APPROX)


def test_amplify_resonance_with_resonator_raises_its_factor(rules):
    """Amplify 1:0 + resonator 1:3: the amplifies' pair, R = 1.2: factor 1 + 0.75 x 1 x 1.2 = 1.9;
    fire 2:0 (outward of 1:0): 6 x 1.25 x 1.9 = 14.25.

    Covers: D-24, resonance:resonator"""
    c = cells(board({"1:0": ("amplify", 1), "1:3": ("resonator", 1), "2:0": ("fire", 1)}))
    assert c["1:0"]["factor"] == pytest.approx(1.9, **APPROX)
    assert c["2:0"]["power"] == pytest.approx(14.25, **APPROX)


def test_sealed_rune_breaks_the_pattern(rules):
    """Side 0: fire 1:0 + 1:3 (pair, 7.2). Side 1's single water ends a cycle every turn and
    erodes at t = 0.5: side 0's outermost ring is 1, both grade I -> 1:0 (earliest) is sealed
    (cap floor(2/2) = 1). Side 0's casts: t = 0.5 1:0 at 7.2 (before the seal), t = 1.0 1:3 at
    6.0: the pattern is gone.

    Covers: D-24, resonance:twofold"""
    r = battle(board(fires("1:0", "1:3")), board({"1:0": ("water", 1)}), rules, trace=True)
    casts = [(e["t"], e["cell"], e["value"]) for e in events(r, "cast", 0)][:2]
    assert casts[0] == (0.5, "1:0", pytest.approx(7.2, **APPROX))
    assert casts[1] == (1.0, "1:3", pytest.approx(6.0, **APPROX))
    seals = events(r, "seal", 0)
    assert (seals[0]["t"], seals[0]["cell"]) == (0.5, "1:0")


def test_loose_resonance_star_core(rules):
    """Star core: x1.6 / x2.0 / x2.5. Pair 1:0 + 1:3: 6 x 1.6 = 9.6; triple 1:0, 1:2, 1:4:
    6 x 2.0 = 12.0; whole ring 1: 6 x 2.5 = 15.0.

    Covers: resonance:loose, core:star"""
    assert power(board(fires("1:0", "1:3"), core="star"), "1:0") == pytest.approx(9.6, **APPROX)
    assert power(board(fires("1:0", "1:2", "1:4"), core="star"), "1:2") == \
        pytest.approx(12.0, **APPROX)
    ring1 = [f"1:{i}" for i in range(6)]
    assert power(board(fires(*ring1), core="star"), "1:5") == pytest.approx(15.0, **APPROX)
    # no pattern, no change: a lone fire stays 6
    assert power(board(fires("1:0"), core="star"), "1:0") == pytest.approx(6.0, **APPROX)


def test_loose_resonance_mirror_boss(rules):
    """Mirror boss: resonance as the star core: pair in ring 2 (2:0, 2:6): 6 x 1.25 x 1.6 = 12.0;
    triple 2:0, 2:4, 2:8: 6 x 1.25 x 2.0 = 15.0; whole ring 1: 6 x 2.5 = 15.0.

    Covers: boss:mirror, resonance:loose"""
    assert power(board(fires("2:0", "2:6"), boss_rules=["mirror"]), "2:6") == \
        pytest.approx(12.0, **APPROX)
    assert power(board(fires("2:0", "2:4", "2:8"), boss_rules=["mirror"]), "2:4") == \
        pytest.approx(15.0, **APPROX)
    ring1 = [f"1:{i}" for i in range(6)]
    assert power(board(fires(*ring1), boss_rules=["mirror"]), "1:0") == pytest.approx(15.0, **APPROX)


def test_resonance_mirror_relic_adds_point_two(rules):
    """Every resonance multiplier +0.2: pair 1.2 -> 1.4: 6 x 1.4 = 8.4; triple 1.5 -> 1.7: 10.2;
    whole ring 2.0 -> 2.2: 13.2; with the star core the pair is 1.6 + 0.2 = 1.8: 10.8.

    Covers: relic:resonance_mirror"""
    rm = dict(relics=["resonance_mirror"])
    assert power(board(fires("1:0", "1:3"), **rm), "1:0") == pytest.approx(8.4, **APPROX)
    assert power(board(fires("1:0", "1:2", "1:4"), **rm), "1:0") == pytest.approx(10.2, **APPROX)
    ring1 = [f"1:{i}" for i in range(6)]
    assert power(board(fires(*ring1), **rm), "1:0") == pytest.approx(13.2, **APPROX)
    assert power(board(fires("1:0", "1:3"), core="star", **rm), "1:0") == \
        pytest.approx(10.8, **APPROX)
    # no pattern: nothing added
    assert power(board(fires("1:0"), **rm), "1:0") == pytest.approx(6.0, **APPROX)


# --------------------------------------------------------------------------- opposition (5.3)
def test_opposition_fire_water(rules):
    """Fire next to water: both x0.6 (same ring or across rings); not adjacent: nothing.
    Fire 1:0 + water 1:1: 6 x 0.6 = 3.6 and 5 x 0.6 = 3.0. Fire 1:0 + water 2:0 (adjacent across
    rings): 3.6 and 5 x 1.25 x 0.6 = 3.75. Fire 1:0 + water 1:2 (not adjacent): 6 and 5.

    Covers: opposition:fire-water"""
    c = cells(board({"1:0": ("fire", 1), "1:1": ("water", 1)}))
    assert c["1:0"]["power"] == pytest.approx(3.6, **APPROX)
    assert c["1:1"]["power"] == pytest.approx(3.0, **APPROX)
    c = cells(board({"1:0": ("fire", 1), "2:0": ("water", 1)}))
    assert c["1:0"]["power"] == pytest.approx(3.6, **APPROX)
    assert c["2:0"]["power"] == pytest.approx(3.75, **APPROX)
    c = cells(board({"1:0": ("fire", 1), "1:2": ("water", 1)}))
    assert c["1:0"]["power"] == pytest.approx(6.0, **APPROX)
    assert c["1:2"]["power"] == pytest.approx(5.0, **APPROX)


def test_opposition_light_dark_and_not_other_pairs(rules):
    """Light 1:0 + dark 1:1: 3 x 0.6 = 1.8 each. Fire 1:0 + dark 1:1, light 1:0 + water 1:1:
    no opposition (6 / 3 and 3 / 5).

    Covers: opposition:light-dark"""
    c = cells(board({"1:0": ("light", 1), "1:1": ("dark", 1)}))
    assert c["1:0"]["power"] == pytest.approx(1.8, **APPROX)
    assert c["1:1"]["power"] == pytest.approx(1.8, **APPROX)
    c = cells(board({"1:0": ("fire", 1), "1:1": ("dark", 1)}))
    assert (c["1:0"]["power"], c["1:1"]["power"]) == (pytest.approx(6.0), pytest.approx(3.0))
    c = cells(board({"1:0": ("light", 1), "1:1": ("water", 1)}))
    assert (c["1:0"]["power"], c["1:1"]["power"]) == (pytest.approx(3.0), pytest.approx(5.0))


def test_opposition_once_per_rune(rules):
    """Fire 1:0 with three waters next to it (1:1, 1:5, 2:0): x0.6 once: 3.6 (not 6 x 0.216).
    Dark 1:0 with light 1:1 and 1:5: 3 x 0.6 = 1.8.

    Covers: D-25, opposition:fire-water, opposition:light-dark"""
    c = cells(board({"1:0": ("fire", 1), "1:1": ("water", 1), "1:5": ("water", 1),
                     "2:0": ("water", 1)}))
    assert c["1:0"]["power"] == pytest.approx(3.6, **APPROX)
    assert c["1:0"]["multipliers"]["opposition"] == pytest.approx(0.6, **APPROX)
    c = cells(board({"1:0": ("dark", 1), "1:1": ("light", 1), "1:5": ("light", 1)}))
    assert c["1:0"]["power"] == pytest.approx(1.8, **APPROX)


# --------------------------------------------------------------------------- affinity (5.4)
# One rune of every attacking kind, far enough apart that the board's details do not matter:
# explain gives each kind's affinity factor against the opponent.
ATTACKERS = board({"1:0": ("fire", 1), "1:2": ("wind", 1), "1:4": ("thunder", 1),
                   "2:3": ("dark", 1), "2:9": ("ice", 1)})
ATTACK_CELLS = {"fire": "1:0", "wind": "1:2", "thunder": "1:4", "dark": "2:3", "ice": "2:9"}


def affinity(opponent_runes, **kw):
    c = cells(ATTACKERS, board(opponent_runes, **kw))
    return {k: c[cell]["multipliers"]["affinity"] for k, cell in ATTACK_CELLS.items()}


def expect(**changed):
    out = {k: 1.0 for k in ATTACK_CELLS}
    out.update(changed)
    return {k: pytest.approx(v, **APPROX) for k, v in out.items()}


# The opponent holds the element under test (grade I) and a dark (grade I). Dark beats nothing
# and only light beats it, so against dark every attacking kind is neutral: each share is 1/2.
# A kind that beats the element: 1 + 0.6 x (1/2 - 0) = 1.3; a kind it beats: 1 - 0.3 = 0.7.
def test_affinity_fire_beats_ice(rules):
    """Opponent {ice, dark}: fire beats ice: 1.3; ice beats wind: wind 0.7.
    Opponent {fire, dark}: fire beats ice: ice 0.7.

    Covers: affinity:fire>ice, D-26"""
    assert affinity({"1:0": ("ice", 1), "1:3": ("dark", 1)}) == expect(fire=1.3, wind=0.7)
    assert affinity({"1:0": ("fire", 1), "1:3": ("dark", 1)}) == expect(ice=0.7)


def test_affinity_ice_beats_wind(rules):
    """Opponent {wind, dark}: ice 1.3 (wind beats only earth, which does not attack).

    Covers: affinity:ice>wind, D-26"""
    assert affinity({"1:0": ("wind", 1), "1:3": ("dark", 1)}) == expect(ice=1.3)


def test_affinity_wind_beats_earth(rules):
    """Opponent {earth, dark}: wind beats earth 1.3; earth beats thunder: thunder 0.7.

    Covers: affinity:wind>earth, D-26"""
    assert affinity({"1:0": ("earth", 1), "1:3": ("dark", 1)}) == expect(wind=1.3, thunder=0.7)


def test_affinity_earth_beats_thunder(rules):
    """Opponent {earth, thunder}: thunder: beaten 1/2 (its own kind is neutral), beating (earth)
    1/2 -> 1 - 0.3 = 0.7; wind beats earth: 1.3.

    Covers: affinity:earth>thunder, D-26"""
    assert affinity({"1:0": ("earth", 1), "1:3": ("thunder", 1)}) == expect(wind=1.3, thunder=0.7)


def test_affinity_thunder_beats_water(rules):
    """Opponent {water, dark}: thunder 1.3; water beats fire: fire 0.7.

    Covers: affinity:thunder>water, D-26"""
    assert affinity({"1:0": ("water", 1), "1:3": ("dark", 1)}) == expect(thunder=1.3, fire=0.7)


def test_affinity_water_beats_fire(rules):
    """Opponent {water, thunder} (thunder is neutral to every attacker too): fire 0.7,
    thunder 1.3.

    Covers: affinity:water>fire, D-26"""
    assert affinity({"1:0": ("water", 1), "1:3": ("thunder", 1)}) == expect(thunder=1.3, fire=0.7)


def test_affinity_light_beats_dark(rules):
    """Opponent {light, thunder}: dark 0.7 (light beats it); nothing attacking beats light.

    Covers: affinity:light>dark, D-26"""
    assert affinity({"1:0": ("light", 1), "1:3": ("thunder", 1)}) == expect(dark=0.7)


def test_affinity_seed_examples_and_clamp(rules):
    """Seed: thunder against a board 40% water: x1.24 (1 + 0.6 x 0.4); 40% earth: x0.76.
    Clamp: all water: 1 + 0.6 = 1.6 -> 1.4; all earth: 1 - 0.6 = 0.4 -> 0.6.
    Water III + dark I: 1 + 0.6 x 3.2/4.2 = 1.457 -> 1.4.

    Covers: D-26, affinity:thunder>water, affinity:earth>thunder"""
    two_of_five = {"1:0": "water", "1:3": "water", "2:0": "dark", "2:4": "dark", "2:8": "dark"}
    assert affinity({c: (k, 1) for c, k in two_of_five.items()})["thunder"] == \
        pytest.approx(1.24, **APPROX)
    two_of_five.update({"1:0": "earth", "1:3": "earth"})
    assert affinity({c: (k, 1) for c, k in two_of_five.items()})["thunder"] == \
        pytest.approx(0.76, **APPROX)
    assert affinity({"1:0": ("water", 1)})["thunder"] == pytest.approx(1.4, **APPROX)
    assert affinity({"1:0": ("earth", 1)})["thunder"] == pytest.approx(0.6, **APPROX)
    assert affinity({"1:0": ("water", 3), "1:3": ("dark", 1)})["thunder"] == \
        pytest.approx(1.4, **APPROX)


def test_affinity_grade_weighting_and_supports(rules):
    """Shares weighted by grade: opponent {water II, earth I}: thunder
    1 + 0.6 x (1.8 - 1)/2.8 = 1.171428...; ice vs {wind III, fire I}: 1 + 0.6 x (3.2 - 1)/4.2.
    Supports never count: {water I, dark I, amplify III, resonator III}: thunder still 1.3.
    No elemental runes: x1 for every kind.

    Covers: D-26, affinity:thunder>water, affinity:earth>thunder, affinity:ice>wind, affinity:fire>ice"""
    assert affinity({"1:0": ("water", 2), "1:3": ("earth", 1)})["thunder"] == \
        pytest.approx(1 + 0.6 * 0.8 / 2.8, **APPROX)
    assert affinity({"1:0": ("wind", 3), "1:3": ("fire", 1)})["ice"] == \
        pytest.approx(1 + 0.6 * 2.2 / 4.2, **APPROX)
    assert affinity({"1:0": ("water", 1), "1:3": ("dark", 1), "2:0": ("amplify", 3),
                     "2:6": ("resonator", 3)})["thunder"] == pytest.approx(1.3, **APPROX)
    assert affinity({"1:0": ("amplify", 3), "1:3": ("node", 1)}) == expect()
    assert affinity({}) == expect()


def test_affinity_uses_effective_grade(rules):
    """A mana spring on the opponent's water makes it grade II for the shares: {water II, dark I}:
    thunder 1 + 0.6 x 1.8/2.8. (The spring at 1:0 reaches 1:0, 1:1, 1:5, 2:0, 2:1, 2:11, not 1:3.)

    Covers: D-26, D-11a, artifact:mana_spring"""
    got = affinity({"1:0": ("water", 1), "1:3": ("dark", 1)}, artifacts={"1:0": "mana_spring"})
    assert got["thunder"] == pytest.approx(1 + 0.6 * 1.8 / 2.8, **APPROX)


def test_affinity_applies_per_hit_in_battle(rules):
    """Thunder 1:0 (power 5) against {water I, dark I}: each hit 5 x 1.3 = 6.5; the cast's value
    (its power) stays 5.

    Covers: D-26, affinity:thunder>water"""
    r = battle(board({"1:0": ("thunder", 1)}),
               board({"1:0": ("water", 1), "1:3": ("dark", 1)}, max_hp=1000), rules, trace=True)
    assert events(r, "cast", 0)[0]["value"] == pytest.approx(5.0, **APPROX)
    hit = events(r, "hit", 1)[0]
    assert (hit["t"], hit["value"]) == (0.5, pytest.approx(6.5, **APPROX))
    assert hit["hp"][1] == pytest.approx(1000 - 6.5, **APPROX)


# --------------------------------------------------------------------------- overdrive (5.5)
def test_overdrive_multiplier_at_whole_seconds(rules):
    """x(1 + 0.1 x max(0, floor(t) - 20)): 20.999 s -> x1.0; 21.000 s -> x1.1; 21.999 -> 1.1;
    22.0 -> 1.2; 60.0 -> 1 + 0.1 x 40 = 5.0.

    Covers: overdrive, D-27"""
    assert overdrive_multiplier(rules, 20999) == pytest.approx(1.0, **APPROX)
    assert overdrive_multiplier(rules, 21000) == pytest.approx(1.1, **APPROX)
    assert overdrive_multiplier(rules, 21999) == pytest.approx(1.1, **APPROX)
    assert overdrive_multiplier(rules, 22000) == pytest.approx(1.2, **APPROX)
    assert overdrive_multiplier(rules, 60000) == pytest.approx(5.0, **APPROX)
    assert overdrive_multiplier(rules, 0) == pytest.approx(1.0, **APPROX)


def test_overdrive_on_hits_in_battle(rules):
    """Fire 1:0 against an empty board of 10000 HP: hits at every 0.5 s.
    20.5 s: 6 x 1.0 = 6.0; 21.0 s: 6 x 1.1 = 6.6; 21.5 s: 6.6; 22.0 s: 7.2; 60.0 s: 6 x 5 = 30.

    Covers: overdrive, D-27"""
    r = battle(board(fires("1:0")), board({}, max_hp=10000), rules, trace=True)
    hits = {e["t"]: e["value"] for e in events(r, "hit", 1)}
    assert hits[20.5] == pytest.approx(6.0, **APPROX)
    assert hits[21.0] == pytest.approx(6.6, **APPROX)
    assert hits[21.5] == pytest.approx(6.6, **APPROX)
    assert hits[22.0] == pytest.approx(7.2, **APPROX)
    assert hits[60.0] == pytest.approx(30.0, **APPROX)


def test_overdrive_floors_the_second(rules):
    """Swift boss: interval 425 ms; hits at 425n ms: 20.825 s (n = 49) is still x1.0 (floor 20),
    21.25 s (n = 50) x1.1; 22.1 s (n = 52) x1.2.

    Covers: overdrive, D-27, boss:swift"""
    r = battle(board(fires("1:0"), boss_rules=["swift"]), board({}, max_hp=10000), rules,
               trace=True)
    hits = {e["t"]: e["value"] for e in events(r, "hit", 1)}
    assert hits[20.825] == pytest.approx(6.0, **APPROX)
    assert hits[21.25] == pytest.approx(6.6, **APPROX)
    assert hits[22.1] == pytest.approx(7.2, **APPROX)


def test_overdrive_is_for_attack_damage_only(rules):
    """Side 0's water heals 5 at every turn, also after 20 s; side 1's fire hits 6 x 0.6
    (affinity: water beats fire, share 1 -> 0.4 -> clamp 0.6) x 1.5 (t = 25.0: floor 25 - 20 = 5)
    = 5.4 at t = 25.0.

    Covers: overdrive"""
    r = battle(board({"1:0": ("water", 1)}, max_hp=10000), board(fires("1:0"), max_hp=10000),
               rules, trace=True)
    heals = {e["t"]: e["value"] for e in events(r, "heal", 0)}
    assert heals[25.0] == pytest.approx(5.0, **APPROX)
    assert heals[59.5] == pytest.approx(5.0, **APPROX)
    hits = {e["t"]: e["value"] for e in events(r, "hit", 0)}
    assert hits[25.0] == pytest.approx(5.4, **APPROX)
