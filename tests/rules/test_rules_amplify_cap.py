"""The amplify cap of the defaults (RULES D-54, `runes.amplify.max_factor`), hand-worked.

The frozen rules (tests/data/rules.yaml) are the rules as written: no cap. Each test turns the
cap on with an override, and the other balance rules stay off. Numbers used below (the rules as
written): fire 6 damage, thunder 5; grade x [1, 1.8, 3.2]; ring x [1, 1.25, 1.5]; amplify factor
1 + 0.75 x G x R (grade I 1.75, grade II 2.35); focusing mirror x1.5 on the increase; moon x0.9
power and x0.8 interval (400 ms); mimic copies x0.6 at grade I.

The cap applies to the product of the factors: at or under it the factors apply one by one (as
without a cap), over it the power takes the cap once in their place. Every battle here is also
played on the fast engine, which must give the same result.
"""
from __future__ import annotations

import pytest

from conftest import FROZEN_RULES, board, events, first_cast, frozen_rules, approx

from rune_env.battle import battle
from rune_env.battle.fast import fast_battle
from rune_env.battle.explain import explain, format_explain
from rune_env.rules import Rules, RulesError, load_rules


def capped(cap: float | None) -> Rules:
    """The frozen rules (or the mutation check's mutant of them) with the cap at `cap`."""
    data = frozen_rules().to_dict()
    data["runes"]["amplify"]["max_factor"] = cap
    return Rules.from_dict(data, source="frozen rules with the amplify cap")


def both_engines(b0, rules):
    """The traced reference battle against an empty board, checked against the fast engine."""
    empty = board({})
    ref = battle(b0, empty, rules, trace=True)
    fast = fast_battle(b0, empty, rules)
    assert (fast.winner, fast.time, fast.hp, fast.casts, fast.turns) == (
        ref.winner, ref.time, ref.hp, ref.casts, ref.turns)
    return ref


def test_one_amplify_under_the_cap_is_unchanged():
    """Covers: D-54, D-17

    Amplify II 1:0 -> fire 2:0: factor 2.35 <= 5: 6 x 1.25 x 2.35 = 17.625, as without a cap."""
    b = board({"1:0": ("amplify", 2), "2:0": ("fire", 1)})
    assert first_cast(both_engines(b, capped(5.0)), "2:0")["value"] == approx(17.625)
    assert first_cast(both_engines(b, capped(None)), "2:0")["value"] == approx(17.625)


# Amplifies I at 1:0 and 1:1 (inward of 2:1) and at 2:11, which reaches fire 2:1 through node 2:0
# (2:0 is adjacent to 1:0, 2:1 and 2:11; 1:0 counts once, inward and through the node).
THREE = {"1:0": ("amplify", 1), "1:1": ("amplify", 1), "2:11": ("amplify", 1),
         "2:0": ("node", 1), "2:1": ("fire", 1)}


def test_three_amplifies_over_the_cap():
    """Covers: D-54, D-17, D-19

    Product 1.75^3 = 5.359375 > 5: fire 2:1 = 6 x 1.25 x 5 = 37.5 (uncapped 6 x 1.25 x 5.359375
    = 40.1953125). Cap 3 on two of them: 1.75^2 = 3.0625 > 3: 7.5 x 3 = 22.5."""
    b = board(THREE)
    assert first_cast(both_engines(b, capped(None)), "2:1")["value"] == approx(40.1953125)
    assert first_cast(both_engines(b, capped(5.0)), "2:1")["value"] == approx(37.5)
    two = board({"1:0": ("amplify", 1), "1:1": ("amplify", 1), "2:1": ("fire", 1)})
    assert first_cast(both_engines(two, capped(3.0)), "2:1")["value"] == approx(22.5)
    # a cap the product stays under changes nothing: 7.5 x 3.0625 = 22.96875
    assert first_cast(both_engines(two, capped(3.1)), "2:1")["value"] == approx(22.96875)


def test_tower_through_nodes():
    """Covers: D-54, D-19, D-11a

    The tower (moon): thunder II on 2:1 lifted to III by a mana spring (the spring also lifts
    amplifies 1:0 and 1:1, its neighbours, to II: 2.35 each), amplifies I on 2:3 and 2:11 reaching
    it through nodes 2:2 and 2:0 (1.75 each). Product 2.35^2 x 1.75^2 = 16.9130... > 5.
    Uncapped: 5 x 3.2 x 1.25 x 16.91300625 x 0.9 = 304.434...; capped: 5 x 3.2 x 1.25 x 5 x 0.9
    = 90, at the moon's first turn, 0.4 s."""
    b = board({"2:1": ("thunder", 2), "1:0": ("amplify", 1), "1:1": ("amplify", 1),
                "2:0": ("node", 1), "2:11": ("amplify", 1), "2:2": ("node", 1),
                "2:3": ("amplify", 1)}, core="moon", artifacts={"2:1": "mana_spring"})
    product = 2.35 * 2.35 * 1.75 * 1.75
    uncapped = first_cast(both_engines(b, capped(None)), "2:1")
    assert uncapped["value"] == pytest.approx(5 * 3.2 * 1.25 * product * 0.9, rel=1e-9)
    cast = first_cast(both_engines(b, capped(5.0)), "2:1")
    assert (cast["t"], cast["value"]) == (0.4, approx(90.0))


def test_focusing_mirror_counts_in_the_product():
    """Covers: D-54, D-17, relic:focusing_mirror

    Focusing mirror: increase 0.75 x 1.5. Amplify II alone: 1 + 1.125 x 1.8 = 3.025 <= 5: fire 2:0
    = 7.5 x 3.025 = 22.6875. With amplify I too (2.125, fire 2:1 inward of both): 3.025 x 2.125 =
    6.428125 > 5: 7.5 x 5 = 37.5 (without the mirror 2.35 x 1.75 = 4.1125 <= 5: 30.84375)."""
    rules = capped(5.0)
    one = board({"1:0": ("amplify", 2), "2:0": ("fire", 1)}, relics=["focusing_mirror"])
    assert first_cast(both_engines(one, rules), "2:0")["value"] == approx(22.6875)
    runes = {"1:0": ("amplify", 2), "1:1": ("amplify", 1), "2:1": ("fire", 1)}
    two = board(runes, relics=["focusing_mirror"])
    assert first_cast(both_engines(two, rules), "2:1")["value"] == approx(37.5)
    assert first_cast(both_engines(board(runes), rules), "2:1")["value"] == approx(30.84375)


def test_mimic_copies_the_capped_power():
    """Covers: D-54, D-20

    Amplifies I 1:0, 1:1 -> fire 2:1: 3.0625, cap 3: 7.5 x 3 = 22.5. Mimic I on 3:1 (inward 2:0
    and 2:1: the fire is its strongest) copies 0.6 x 22.5 = 13.5 (uncapped 0.6 x 22.96875 =
    13.78125)."""
    b = board({"1:0": ("amplify", 1), "1:1": ("amplify", 1), "2:1": ("fire", 1),
                "3:1": ("mimic", 1)}, open_sectors=[0])
    r = both_engines(b, capped(3.0))
    copy = events(r, "cast", side=0, cell="3:1")[0]
    assert copy["copy_of"] == "2:1" and copy["value"] == approx(13.5)
    r = both_engines(b, capped(None))
    assert events(r, "cast", side=0, cell="3:1")[0]["value"] == approx(13.78125)


def test_explain_shows_a_capped_product():
    """Covers: D-54

    THREE under cap 5: "amplify_cap" x5 in the amplifies' place, their product 5.359375 kept."""
    report = explain(board(THREE), capped(5.0))
    fire = report["cells"]["2:1"]
    assert fire["multipliers"] == {"grade": 1.0, "ring": 1.25, "amplify_cap": 5.0}
    assert fire["amplify_capped"] == {"product": approx(5.359375), "cap": 5.0}
    assert "amplifies x5.359 capped at x5" in format_explain(report)
    under = explain(board(THREE), capped(None))["cells"]["2:1"]
    assert "amplify_capped" not in under and "amplify:1:0" in under["multipliers"]


def test_cap_below_one_is_refused_naming_the_key():
    """Covers: D-54"""
    with pytest.raises(RulesError, match=r"runes\.amplify\.max_factor.*greater than or equal to 1"):
        capped(0.5)


def test_cap_in_the_hash_only_when_on():
    """Covers: D-53, D-54

    No cap is left out of the hash (the rules as written keep their hash, balance_v2.yaml the
    defaults' hash before D-54); a cap is hashed like any number."""
    from rune_env.resources import config_path
    assert capped(None).hash == load_rules(FROZEN_RULES).hash
    assert capped(5.0).hash != capped(None).hash != capped(4.0).hash
    assert load_rules(config_path("rules", "seed_literal.yaml")).hash == "0fd5fa957cdeaf9d"
    v2 = load_rules(config_path("rules", "balance_v2.yaml"))
    assert v2.hash == "69f9e0fd53e3fb7d" and v2.spec.runes.amplify.max_factor is None
    assert load_rules().spec.runes.amplify.max_factor is not None
