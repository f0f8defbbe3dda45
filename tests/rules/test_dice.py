"""The dice variant (RULES.md section 12: D-46 power dice, D-47 stored mana, D-48 minimal and
reduced values, D-49 counter-based rolls), hand-worked from the frozen config's `dice` section:

    faces_by_rank [3, 4, 6, 8, 10, 12, 12], plus_by_rank [0, 0, 0, 0, 0, 0, 1], +1 per rank beyond;
    weak_pl [1, 3, 5, 7, 9, 11, 13] then +1 rank every 3 PL; strong_pl [1, 2, 3, 4, 5, 6, 8] then
    +1 rank every 2 PL; PL = floor(power / 4); M = 100 + 50 (round - 1); bands x2 / x5;
    sickness x0.9, poisoning x0.75; burns in D6.

Every expected roll is computed here with an independent SplitMix64 (numpy uint64 arithmetic,
written from the published algorithm, checked against the published reference outputs), never
read from the engine. The engine's variant is chosen with battle(..., variant="dice").
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import board, frozen_rules

from rune_env.battle import battle
from rune_env.battle.dice import (Die, dice_rank, die_for_power, die_roll, minimal, power_level,
                                  reduced, splitmix64)
from rune_env.battle.explain import explain
from rune_env.rules.config import Rules

BIG = 1e9   # max HP of a passive side that must not fall


# -- an independent SplitMix64 (numpy uint64 wraps modulo 2^64) ------------------------------------
def ref_splitmix64(x: int) -> int:
    with np.errstate(over="ignore"):
        z = np.array([x % 2**64], dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return int(z[0])


def ref_roll(seed: int, side: int, stream: int, n: int, j: int, faces: int) -> int:
    """D-49: 1 + splitmix64(seed*2^32 + side*2^24 + stream*2^20 + n*2^6 + j mod 2^64) mod faces."""
    x = (seed * 2**32 + side * 2**24 + stream * 2**20 + n * 2**6 + j) % 2**64
    return 1 + ref_splitmix64(x) % faces


def events(r, type_):
    return [e for e in r.events if e["type"] == type_]


# -- D-49: splitmix64 and the counter-based key -------------------------------------------------
def test_splitmix64_reference_values():
    """D-49: splitmix64 is the standard SplitMix64 output function. The published generator,
    seeded with s, outputs mix(s + k*gamma) for k = 1, 2, ...; our splitmix64(x) = mix(x + gamma),
    so its values at s + (k-1)*gamma are the published sequence."""
    gamma = 0x9E3779B97F4A7C15
    seed0 = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F, 0xF88BB8A8724C81EC,
             0x1B39896A51A8749B]
    seed1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423,
                   4593380528125082431, 16408922859458223821]
    for k in range(5):
        assert splitmix64((k * gamma) % 2**64) == seed0[k]
        assert ref_splitmix64(k * gamma) == seed0[k]
        assert splitmix64((1234567 + k * gamma) % 2**64) == seed1234567[k]
        assert ref_splitmix64(1234567 + k * gamma) == seed1234567[k]
    # and the two implementations agree on arbitrary 64-bit inputs
    rng = np.random.default_rng(7)
    for x in rng.integers(0, 2**63, 200, dtype=np.int64):
        x = int(x) * 2 + 1
        assert splitmix64(x % 2**64) == ref_splitmix64(x)


def test_die_roll_key_layout():
    """D-49: x = seed*2^32 + side*2^24 + stream*2^20 + n*2^6 + j (mod 2^64); roll in 1..faces."""
    for seed, side, stream, n, j, faces in [(0, 0, 0, 0, 0, 6), (3, 1, 1, 5, 2, 6),
                                            (12345, 0, 0, 1000, 0, 12), (2**40 + 3, 1, 0, 7, 0, 3),
                                            (-1, 1, 1, 3, 9, 4)]:
        assert die_roll(seed, side, stream, n, j, faces) == ref_roll(seed, side, stream, n, j, faces)
    # the key itself: seed 1, side 1, stream 1, n 1, j 1 -> 2^32 + 2^24 + 2^20 + 2^6 + 1
    x = 2**32 + 2**24 + 2**20 + 2**6 + 1
    assert die_roll(1, 1, 1, 1, 1, 1000) == 1 + ref_splitmix64(x) % 1000
    assert all(1 <= die_roll(9, 0, 0, n, 0, 3) <= 3 for n in range(200))


# -- D-46: the dice-rank tables, PL; D-48: minimal and reduced -----------------------------------
WEAK = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 8: 4, 9: 5, 10: 5, 11: 6, 12: 6,
        13: 7, 14: 7, 15: 7, 16: 8, 17: 8, 18: 8, 19: 9, 21: 9, 22: 10, 40: 16}
# weak beyond rank 7: PL 13 + 3 per rank: 16 -> 8, 19 -> 9, 22 -> 10, 40 = 13 + 27 -> 7 + 9 = 16
STRONG = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 6, 8: 7, 9: 7, 10: 8, 11: 8, 12: 9,
          13: 9, 14: 10, 30: 18}
# strong beyond rank 7: PL 8 + 2 per rank: 10 -> 8, 12 -> 9, 14 -> 10, 30 = 8 + 22 -> 7 + 11 = 18


@pytest.mark.parametrize("pl,rank", sorted(WEAK.items()))
def test_weak_table(rules, pl, rank):
    """D-46 weak table (変動・弱): ranks 1..7 need PL 1, 3, 5, 7, 9, 11, 13; +1 rank every 3 PL."""
    assert dice_rank(pl, rules.spec.dice, strong=False) == rank


@pytest.mark.parametrize("pl,rank", sorted(STRONG.items()))
def test_strong_table(rules, pl, rank):
    """D-46 strong table (変動・強): ranks 1..7 need PL 1, 2, 3, 4, 5, 6, 8; +1 rank every 2 PL."""
    assert dice_rank(pl, rules.spec.dice, strong=True) == rank


def test_dice_of_each_rank(rules):
    """D-46: rank 0 the fixed 1; D3, D4, D6, D8, D10, D12, D12+1; each rank past 7 adds +1."""
    d = rules.spec.dice
    expected = {0: ("1", 1.0), 1: ("D3", 2.0), 2: ("D4", 2.5), 3: ("D6", 3.5), 4: ("D8", 4.5),
                5: ("D10", 5.5), 6: ("D12", 6.5), 7: ("D12+1", 7.5), 8: ("D12+2", 8.5),
                9: ("D12+3", 9.5), 16: ("D12+10", 16.5)}
    for rank, (name, mean) in expected.items():
        die = Die.of_rank(rank, d)
        assert (die.name(), die.mean) == (name, mean)   # mean of Dn+k = (n + 1) / 2 + k


def test_power_level_and_die_for_power(rules):
    """D-46: PL = floor(power / 4); damage on the strong table, healing/barrier on the weak."""
    d = rules.spec.dice
    assert [power_level(p, d) for p in (0.0, 3.999, 4.0, 7.99, 12.15, 38.4)] == [0, 0, 1, 1, 3, 9]
    # power 10.8 -> PL 2: strong rank 2 (D4), weak rank 1 (D3)
    assert die_for_power(10.8, d, strong=True)[1].name() == "D4"
    assert die_for_power(10.8, d, strong=False)[1].name() == "D3"
    # power 35 -> PL 8: strong rank 7 (D12+1), weak rank 4 (D8)
    assert die_for_power(35.0, d, strong=True)[1].name() == "D12+1"
    assert die_for_power(35.0, d, strong=False)[1].name() == "D8"


def test_minimal_and_reduced():
    """D-48: minimal(x) = floor(sqrt(x) / 2), reduced(x) = floor(sqrt(x))."""
    assert [minimal(x) for x in (0, 3, 4, 15, 16, 99, 100, 147, 150, 200)] == \
        [0, 0, 1, 1, 2, 4, 5, 6, 6, 7]   # sqrt: 0, 1.73, 2, 3.87, 4, 9.95, 10, 12.12, 12.25, 14.14
    assert [reduced(x) for x in (0, 3, 4, 233, 289, 528, 529)] == [0, 1, 2, 15, 17, 22, 23]
    assert minimal(100.0) == 5 and reduced(12.5) == 3


# -- D-46 in battle: one roll per cast, weak and strong, value = power x roll / mean ---------------
def test_each_cast_rolls_on_its_table(rules):
    """D-46, D-49: fire II (6 x 1.8 = 10.8, PL 2) rolls the strong D4; water II (5 x 1.8 = 9, PL 2)
    and earth II (9, PL 2) the weak D3. Casting order 1:0, 1:2, 1:4 = casts n 0, 1, 2 of side 0,
    stream 0; value = power x roll / mean; the fire's hit, the heal and the barrier use it."""
    seed = 11
    a = board({"1:0": ("fire", 2), "1:2": ("water", 2), "1:4": ("earth", 2)})
    r = battle(a, board({}, max_hp=BIG), rules, trace=True, seed=seed, variant="dice")
    rolls = events(r, "roll")
    expect = [("1:0", 10.8, 4, 2.5, "D4"), ("1:2", 9.0, 3, 2.0, "D3"), ("1:4", 9.0, 3, 2.0, "D3")]
    for n, (cell, power, faces, mean, name) in enumerate(expect):
        roll = ref_roll(seed, 0, 0, n, 0, faces)
        e = rolls[n]
        assert (e["cell"], e["pl"], e["die"], e["roll"]) == (cell, 2, name, roll)
        assert e["value"] == pytest.approx(power * roll / mean, rel=1e-12)
    hit = events(r, "hit")[0]        # the empty side has no elements: affinity x1; t < 20 s
    assert hit["value"] == pytest.approx(10.8 * ref_roll(seed, 0, 0, 0, 0, 4) / 2.5, rel=1e-12)
    heal = events(r, "heal")[0]
    assert heal["value"] == pytest.approx(9.0 * ref_roll(seed, 0, 0, 1, 0, 3) / 2.0, rel=1e-12)
    barrier = events(r, "barrier")[0]
    assert barrier["value"] == pytest.approx(9.0 * ref_roll(seed, 0, 0, 2, 0, 3) / 2.0, rel=1e-12)
    # the next cycle's fire is cast n = 3
    assert rolls[3]["roll"] == ref_roll(seed, 0, 0, 3, 0, 4)


def test_second_cast_and_copy_roll_their_own(rules):
    """D-46, D-49: a thundercloud's second cast and a mimic's copy are casts of their own (each
    its own n), against a passive side (no turns, so no erosion changes the board).
    Thundercloud: wind I at 1:0 (power 3, PL 0: rank 0, not rolled, but a cast: n = 0), thunder I
    at 2:0 fed by it (5 x 1.25 = 6.25, PL 1, D3): n = 1, its second cast n = 2; then 3, 4, 5.
    Mimic: fire II at 1:0 (10.8, PL 2, D4): n = 0, mimic III at 2:0 copies it at x1.0: n = 1; ..."""
    seed = 5
    r = battle(board({"1:0": ("wind", 1), "2:0": ("thunder", 1)}), board({}, max_hp=BIG), rules,
               trace=True, seed=seed, variant="dice")
    rolls = events(r, "roll")[:6]
    for n, e in enumerate(rolls):
        if n % 3 == 0:   # the wind: rank 0, the fixed 1, value = power
            assert (e["cell"], e["rank"], e["die"], e["roll"], e["value"]) == ("1:0", 0, "1", 1, 3.0)
        else:
            roll = ref_roll(seed, 0, 0, n, 0, 3)
            assert (e["cell"], e["die"], e["roll"]) == ("2:0", "D3", roll)
            assert e["value"] == pytest.approx(6.25 * roll / 2.0, rel=1e-12)
    assert [e.get("repeat") for e in events(r, "cast")[:3]] == [None, None, 1]
    # the stored mana counts every PL: 0 + 1 + 1 after the first cycle's casts
    assert rolls[2]["stored"] == 2

    r = battle(board({"1:0": ("fire", 2), "2:0": ("mimic", 3)}), board({}, max_hp=BIG), rules,
               trace=True, seed=seed, variant="dice")
    rolls = events(r, "roll")[:4]
    for n, e in enumerate(rolls):
        roll = ref_roll(seed, 0, 0, n, 0, 4)
        assert (e["cell"], e["die"], e["roll"]) == (("1:0", "2:0")[n % 2], "D4", roll)
        assert e["value"] == pytest.approx(10.8 * roll / 2.5, rel=1e-12)
    assert [e.get("copy_of") for e in events(r, "cast")[:2]] == [None, "1:0"]


def test_rolls_are_mean_preserving(rules):
    """D-46: value = power x roll / mean(die), so a cast's expected value is its power. Fire III in
    ring 2: 6 x 3.2 x 1.25 = 24, PL 6, strong rank 6: D12 (mean 6.5). Round 2: M = 150, purge
    minimal(150) = 6 per cycle = the PL of the one cast per cycle: the store stays 0, no band. Over
    40 seeds x 120 casts the mean value is within 4 standard errors of 24 (sd of one value =
    24 x sqrt((144 - 1) / 12) / 6.5 = 12.74; se = 12.74 / sqrt(4800) = 0.184)."""
    values, faces = [], []
    a = board({"2:0": ("fire", 3)}, round=2)
    for seed in range(40):
        r = battle(a, board({}, max_hp=BIG), rules, trace=True, seed=seed, variant="dice")
        rolls = events(r, "roll")
        assert len(rolls) == 120 and all(e["die"] == "D12" for e in rolls)
        assert not events(r, "band")
        values += [e["value"] for e in rolls]
        faces += [e["roll"] for e in rolls]
    se = 24 * math.sqrt(143 / 12) / 6.5 / math.sqrt(len(values))
    assert abs(np.mean(values) - 24.0) < 4 * se
    # every face shows up, each about 1/12 of the time (400 expected, sd ~19)
    counts = np.bincount(faces, minlength=13)[1:]
    assert counts.min() > 300 and counts.max() < 500
    # the deterministic battle's cast value is the same power
    det = battle(a, board({}, max_hp=BIG), rules, trace=True)
    assert events(det, "cast")[0]["value"] == pytest.approx(24.0, rel=1e-12)


# -- D-47: stored mana, purge, bands, burns, burst -----------------------------------------------
def test_purge_never_below_zero_and_m_by_round(rules):
    """D-47: M = 100 + 50 x (round - 1): round 3 -> 200, purge minimal(200) = 7. A fire I (PL 1)
    stores 1 per cycle; the purge takes it back to 0 (the store is never negative)."""
    a = board({"1:0": ("fire", 1)}, round=3)
    r = battle(a, board({}, max_hp=BIG), rules, trace=True, seed=0, variant="dice")
    cleanups = events(r, "cleanup")
    assert len(cleanups) == 120
    assert all(e["magic"] == 200 and e["stored"] == 0 and e["purge"] == 1 and e["band"] == "none"
               for e in cleanups)


RING1_FIRE = {f"1:{i}": ("fire", 3) for i in range(6)}


def test_bands_burns_and_burst(rules):
    """D-47 end to end with the frozen numbers. Six fire III in ring 1: 6 x 3.2 x 2.0 (six-fold) =
    38.4 each, PL 9; one cycle = 6 turns = 3 s; round 1: M = 100, purge minimal(100) = 5.
    Store after each cleanup (k = cycle):
      k1: 54 - 5 = 49 none; k2: 49 + 54 - 5 = 98 none;
      k3: 147 > 100: sickness (power 38.4 x 0.9 = 34.56, PL 8), burn minimal(147) = 6 D6;
      k4: 147 + 48 - 5 = 190 sickness, burn minimal(190) = 6 D6;
      k5: 233 > 200: poisoning (38.4 x 0.75 = 28.8, PL 7), burn reduced(233) = 15 D6;
      k6..k12: +42 - 5 = +37: 270, 307, 344, 381, 418, 455, 492, burns reduced = 16..22 D6;
      k13: 529 > 500: burst at t = 13 x 3 = 39 s; side 0 loses (HP 0), reason "burst".
    Burn k (cleanup n = k - 1, stream 1): the sum of its dice j = 0.."""
    seed = 3
    a = board(RING1_FIRE, max_hp=10_000)
    r = battle(a, board({}, max_hp=BIG), rules, trace=True, seed=seed, variant="dice")
    stored = [49, 98, 147, 190, 233, 270, 307, 344, 381, 418, 455, 492]
    cleanups = events(r, "cleanup")
    assert [e["stored"] for e in cleanups] == stored + [529]
    assert [e["purge"] for e in cleanups] == [5] * 13
    assert [e["band"] for e in cleanups] == ["none"] * 2 + ["sickness"] * 2 + ["poisoning"] * 8 \
        + ["burst"]
    assert [e["t"] for e in cleanups] == [3.0 * k for k in range(1, 14)]
    bands = events(r, "band")
    assert [(e["t"], e["previous"], e["band"]) for e in bands] == \
        [(9.0, "none", "sickness"), (15.0, "sickness", "poisoning")]
    # power: 38.4, then x0.9 after the k3 cleanup, then x0.75 after k5
    casts = events(r, "cast")
    assert casts[0]["value"] == pytest.approx(38.4, rel=1e-12)
    assert [c["value"] for c in casts if 9.0 < c["t"] <= 15.0] == \
        pytest.approx([34.56] * 12, rel=1e-12)
    assert [c["value"] for c in casts if c["t"] > 15.0] == pytest.approx([28.8] * 48, rel=1e-12)
    assert {e["pl"] for e in events(r, "roll") if e["t"] > 15.0} == {7}
    # burns: minimal(stored) D6 under sickness, reduced(stored) D6 under poisoning
    counts = [6, 6, 15, 16, 17, 18, 19, 20, 21, 22]
    burns = events(r, "burn")
    assert [e["dice"] for e in burns] == counts
    hp = 10_000.0
    for k, (e, count) in enumerate(zip(burns, counts), start=3):
        expected = sum(ref_roll(seed, 0, 1, k - 1, j, 6) for j in range(count))
        assert e["value"] == expected and e["t"] == 3.0 * k
        hp -= expected
        assert e["hp"][0] == pytest.approx(hp, rel=1e-12)   # burns hit HP directly (no barrier)
    burst = events(r, "burst")
    assert len(burst) == 1 and burst[0]["t"] == 39.0 and burst[0]["stored"] == 529
    assert (r.winner, r.reason, r.time, r.hp[0]) == (1, "burst", 39.0, 0.0)


def test_a_burn_can_end_the_battle(rules):
    """D-47: a burn leaving HP <= 1e-9 is a loss for the burnt side (reason "burn"). The board of
    the previous test with max HP 25: the first burn (k3, t = 9 s) is 6 D6 (6..36), the second
    (k4, t = 12 s) 6 D6 again. With seed 3 the two burns are hand-checked below against 25."""
    seed = 3
    b1 = sum(ref_roll(seed, 0, 1, 2, j, 6) for j in range(6))
    b2 = sum(ref_roll(seed, 0, 1, 3, j, 6) for j in range(6))
    max_hp = b1 + b2 - 0.5          # survives the first burn, falls to the second
    assert b1 < max_hp
    a = board(RING1_FIRE, max_hp=max_hp)
    r = battle(a, board({}, max_hp=BIG), rules, trace=True, seed=seed, variant="dice")
    assert (r.winner, r.reason, r.time, r.hp[0]) == (1, "burn", 12.0, 0.0)
    assert r.events[-1]["type"] == "burn"


def test_band_judged_afresh_each_cleanup(rules):
    """D-47: the band is judged afresh at each cleanup: a store purged back under M ends the
    sickness and the power returns. A fire I (power 6) side, round 1 (M = 100, purge 5), its store
    set by hand between two cleanups: 110 -> 105 (sickness, power 6 x 0.9 = 5.4, burn minimal(105)
    = 5 D6 on cleanup n = 0), then 95 -> 90 (none, power 6, no burn)."""
    from rune_env.battle.engine import Battle
    bt = Battle(board({"1:0": ("fire", 1)}, max_hp=BIG), board({}, max_hp=BIG), rules,
                trace=True, seed=0, variant="dice")
    side = bt.sides[0]
    side.stored = 110                  # 110 - 5 = 105: sickness
    bt._cleanup(side)
    assert (side.stored, side.band) == (105, 1)
    assert side.analysis.powers[0].power == pytest.approx(6 * 0.9, rel=1e-12)
    side.stored = 95                   # 95 - 5 = 90 <= 100: none again, power back to 6
    bt._cleanup(side)
    assert (side.stored, side.band) == (90, 0)
    assert side.analysis.powers[0].power == pytest.approx(6.0, rel=1e-12)
    assert [e["band"] for e in bt.events if e["type"] == "band"] == ["sickness", "none"]
    # the first cleanup (n = 0) burnt minimal(105) = 5 D6, the second none
    burns = [e for e in bt.events if e["type"] == "burn"]
    assert len(burns) == 1
    assert burns[0]["value"] == sum(ref_roll(0, 0, 1, 0, j, 6) for j in range(5))


# -- determinism, seeds, off by default ----------------------------------------------------------
def test_same_seed_same_battle_different_seeds_differ(rules):
    """D-49: the rolls depend only on (seed, side, stream, n, j): a seed replays exactly; other
    seeds give other rolls."""
    a = board({"1:0": ("fire", 2), "2:0": ("wind", 1), "1:3": ("water", 1)})
    b = board({"1:0": ("thunder", 2), "1:1": ("earth", 1)})
    r1 = battle(a, b, rules, trace=True, seed=42, variant="dice")
    r2 = battle(a, b, rules, trace=True, seed=42, variant="dice")
    assert r1 == r2 and r1.trace_hash() == r2.trace_hash()
    hashes = {battle(a, b, rules, trace=True, seed=s, variant="dice").trace_hash() for s in range(8)}
    assert len(hashes) == 8


def test_dice_off_by_default(rules):
    """The variant is off by default (`variant: deterministic`): the seed is ignored, no rolls, the
    deterministic result; `variant: dice` in the rules file turns it on."""
    assert rules.spec.variant == "deterministic"
    a = board({"1:0": ("fire", 2), "2:0": ("wind", 1)})
    b = board({"1:0": ("thunder", 2), "1:1": ("earth", 1)})
    det = battle(a, b, rules, trace=True)
    assert battle(a, b, rules, trace=True, seed=99).trace_hash() == det.trace_hash()
    assert battle(a, b, rules, trace=True, variant="deterministic", seed=9) == det
    assert not [e for e in det.events if e["type"] in ("roll", "cleanup", "burn", "band")]
    dice_rules = Rules.from_dict({**frozen_rules().to_dict(), "variant": "dice"})
    on = battle(a, b, dice_rules, trace=True, seed=4)
    assert on == battle(a, b, rules, trace=True, seed=4, variant="dice")
    assert events(on, "roll")


# -- explain, CLI, env ---------------------------------------------------------------------------
def test_explain_shows_power_level_and_die(rules):
    """D-46 in explain: fire II (10.8, PL 2) strong D4; water II (9, PL 2) weak D3."""
    rep = explain(board({"1:0": ("fire", 2), "1:2": ("water", 2)}), rules, variant="dice")
    assert rep["cells"]["1:0"]["dice"] == {"pl": 2, "rank": 2, "die": "D4", "table": "strong",
                                           "mean": 2.5}
    assert rep["cells"]["1:2"]["dice"] == {"pl": 2, "rank": 1, "die": "D3", "table": "weak",
                                           "mean": 2.0}
    assert rep["magic"] == 100
    assert "dice" not in explain(board({"1:0": ("fire", 2)}), rules)["cells"]["1:0"]


def test_cli_battle_variant_dice(tmp_path, capsys, rules):
    """`battle A B --variant dice --seed N` prints the dice battle of that seed."""
    from rune_env.cli import main
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"runes": {"1:0": ["fire", 2], "2:0": ["wind", 1]}}))
    b.write_text(json.dumps({"runes": {"1:0": ["thunder", 2], "1:1": ["earth", 1]}}))
    rules_file = tmp_path / "rules.yaml"
    import yaml
    rules_file.write_text(yaml.safe_dump(frozen_rules().to_dict()))
    ba = board({"1:0": ("fire", 2), "2:0": ("wind", 1)})
    bb = board({"1:0": ("thunder", 2), "1:1": ("earth", 1)})
    for argv, expected in (
            (["--variant", "dice", "--seed", "7"], battle(ba, bb, rules, seed=7, variant="dice")),
            ([], battle(ba, bb, rules))):
        assert main(["battle", str(a), str(b), "--rules", str(rules_file), *argv]) == 0
        assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected.to_json()))


def test_env_variant_dice_seeds_each_battle_from_the_run():
    """RuneDraftEnv(variant="dice"): the battle gets seed= (drawn from the run's generator, below
    2^32) and variant="dice"; the same run seed gives the same dice seed."""
    from rune_env.envs.run_env import RuneDraftEnv
    calls = []

    def spy(b0, b1, rules, **kw):
        calls.append(kw)
        return battle(b0, b1, rules, **kw)

    for run_seed in (1, 1, 2):
        env = RuneDraftEnv(rules=frozen_rules(), opponents="generator", core="sun",
                           battle_fn=spy, variant="dice")
        _, info = env.reset(options={"run_seed": run_seed})
        ready = env.action_names().index("ready")
        env.step(ready)
    assert [c["variant"] for c in calls] == ["dice"] * 3
    assert all(0 <= c["seed"] < 2**32 for c in calls)
    assert calls[0]["seed"] == calls[1]["seed"] != calls[2]["seed"]
