"""Resonance, opposition, affinity, overdrive, cores, mana spring, boss rules, relics, draws
(RULES sections 1, 3, 5.2-5.5, 7-9; D-1, D-9, D-11a, D-24 .. D-27, D-35, D-37).

Static powers are read from `explain` (power = one hit before affinity and overdrive, D-12);
dynamic effects from whole traces. Every expectation is worked by hand from the frozen rules:
fire 6, wind 3 (x2 hits), water heal 5, earth barrier 5, thunder 5, dark 3, light heal 3, ice 3;
grades x1 / x1.8 / x3.2; rings x1 / x1.25 / x1.5.
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
