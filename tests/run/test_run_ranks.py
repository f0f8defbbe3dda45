"""The rules of a run across runs and for every action (RULES.md section 10; D-44, D-45): ranks,
achievements and the profile, illegal actions, and one statement of legality and one effect per
action group; expected values worked out by hand from the frozen config (tests/data/rules.yaml).

Battles are either real ones against a stub opponent (an empty board) or a stub `battle_fn` that
returns the outcome the test wants for the player's seat (tests/run/test_run_shop.py's helpers).
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import board

from rune_env.rules.config import CASTING_KINDS, KINDS
from rune_env.run.actions import action_table
from rune_env.rules.board import Board
from rune_env.run.legal import CHOICE_GROUPS, RULES
from rune_env.run.loop import (EFFECTS, IllegalAction, apply, field_opponent, legal_mask, new_draft,
                               new_run, why_illegal)
from rune_env.run.opponents import opponent_budget
from rune_env.terminal.profile import Profile
from rune_env.run.ranks import rank_effects
from rune_env.run.state import PENDING_KINDS, PendingChoice
from test_run_shop import act, c, empty_opponent, play_round


# -- ranks (section 10, D-44) -----------------------------------------------------------------------
def test_rank_effects_accumulate(rules):
    """Section 10: each rank includes every easier one."""
    table = {  # rank: (extra runes, income delta, budget x, boss rules, lamps)
        "apprentice": (0, 0, 1.0, 1, 3), "journeyman": (1, 0, 1.0, 1, 3),
        "sorcerer": (1, -1, 1.0, 1, 3), "mentor": (1, -1, 1.15, 1, 3),
        "sage": (1, -1, 1.15, 2, 3), "archmage": (1, -1, 1.15, 2, 2)}
    for name, (extra, inc, bx, boss, lamps) in table.items():
        e = rank_effects(rules, name)
        assert (e.opponent_extra_runes, e.income_delta, e.boss_rule_count, e.lamps) == \
            (extra, inc, boss, lamps), name
        assert e.opponent_budget_x == pytest.approx(bx, rel=1e-12)


def test_opponent_budget_and_mentor(rules):
    """D-44: budget in round n = 10 + 10 (n - 1); from mentor up x1.15 (whole mana, floored):
    round 1: 10 / 11.5 -> 11; round 2: 20 / 23; round 3: 30 / 34.5 -> 34; round 5: 50 / 57.5 -> 57."""
    for rank, expected in [("apprentice", [10, 20, 30, 50]), ("sorcerer", [10, 20, 30, 50]),
                           ("mentor", [11, 23, 34, 57]), ("archmage", [11, 23, 34, 57])]:
        e = rank_effects(rules, rank)
        assert [opponent_budget(rules, n, e) for n in (1, 2, 3, 5)] == expected, rank


def test_journeyman_extra_opponent_rune(rules):
    """Section 10 journeyman (D-44): the fielded opponent has one more rune: grade I, a casting kind
    (loop DECISION), in a free open cell. Apprentice opponents are fielded as drafted."""
    kinds = set()
    for seed in range(8):
        s = new_run(seed, rules, rank="journeyman", core="moon")
        info = act(s, "ready", outcome="draw")
        runes = info.battle.opponent["runes"]
        assert len(runes) == 1
        (cell, (kind, grade)), = runes.items()
        assert grade == 1 and kind in CASTING_KINDS
        assert int(cell.split(":")[0]) in (1, 2)       # the empty stub opens no sector
        kinds.add(kind)
    assert len(kinds) > 1                                # seeded-random kinds
    s = new_run(0, rules, rank="sage", core="moon")      # sage includes journeyman
    assert len(act(s, "ready", outcome="draw").battle.opponent["runes"]) == 1
    s = new_run(0, rules, rank="apprentice", core="moon")
    assert act(s, "ready", outcome="draw").battle.opponent["runes"] == {}


def test_journeyman_rune_goes_to_a_free_open_cell(rules):
    """D-44: with rings 1-2 full and only sector 2 of ring 3 open, the extra rune can only go to
    3:6, 3:7 or 3:8; with no free open cell none is added."""
    full = {f"{k}:{i}": ("water", 1) for k, n in ((1, 6), (2, 12)) for i in range(n)}
    opp = board(full, open_sectors=[2])
    e = rank_effects(rules, "journeyman")
    for seed in range(6):
        fielded = field_opponent(opp, e, rules, np.random.default_rng(seed))
        added = set(fielded.runes) - set(opp.runes)
        assert len(added) == 1 and added <= {c("3:6"), c("3:7"), c("3:8")}
        assert fielded.runes[added.pop()][1] == 1
    closed = board(full)
    assert field_opponent(closed, e, rules, np.random.default_rng(0)).runes == closed.runes
    assert field_opponent(opp, rank_effects(rules, "apprentice"), rules,
                          np.random.default_rng(0)).runes == opp.runes


# -- achievements and profile (D-45) ------------------------------------------------------------
def test_profile_unlocks(rules):
    """D-45: delay unlocks by clearing a run, node by a win with a 6-fold resonance, mimic by a
    boss win; research runs default to everything unlocked."""
    base = [k for k in KINDS if k not in ("delay", "node", "mimic")]
    assert Profile().unlocked(rules) == base
    assert set(Profile(achievements=["clear_run"]).unlocked(rules)) == set(base) | {"delay"}
    assert set(Profile(achievements=["sixfold_win"]).unlocked(rules)) == set(base) | {"node"}
    assert set(Profile(achievements=["boss_win"]).unlocked(rules)) == set(base) | {"mimic"}
    assert new_run(0, rules, core="moon").unlocked == list(KINDS)


def test_open_ranks_follow_clears(rules):
    """Section 1 / 10: 10 wins open the next rank; the first rank is always open."""
    assert Profile().open_ranks(rules) == ["apprentice"]
    assert Profile(cleared_ranks=["apprentice"]).open_ranks(rules) == ["apprentice", "journeyman"]
    assert Profile(cleared_ranks=["apprentice", "journeyman"]).open_ranks(rules) == \
        ["apprentice", "journeyman", "sorcerer"]


def test_cleared_run_unlocks_delay_and_next_rank(rules):
    """D-45 + section 1: a cleared apprentice run earns clear_run (delay) and opens journeyman."""
    s = new_run(0, rules, core="moon")
    for _ in range(10):
        play_round(s, "win", prefer="mana")
    assert s.cleared
    p = Profile()
    new = p.record_run(s)
    assert "clear_run" in new and "cleared:apprentice" in new
    assert "boss_win" in p.achievements                       # round 5 and 10 were boss wins
    assert {"delay", "mimic"} <= set(p.unlocked(rules)) and "node" not in p.unlocked(rules)
    assert p.open_ranks(rules) == ["apprentice", "journeyman"]


def test_boss_win_achievement_only_on_boss_rounds(rules):
    """D-45: mimic unlocks by beating a boss: wins in rounds 1-4 earn nothing, a round-5 loss
    nothing, a round-5 win boss_win."""
    s = new_run(0, rules, core="moon")
    for _ in range(4):
        play_round(s, "win", prefer="mana")
    assert s.achievements == []
    t = s.clone()
    play_round(t, "loss")
    assert t.achievements == []
    play_round(s, "win")
    assert s.achievements == ["boss_win"]
    p = Profile()
    p.record_run(s)
    assert "mimic" in p.unlocked(rules) and "cleared:apprentice" not in p.cleared_ranks


def test_sixfold_win_achievement(rules):
    """D-45: node unlocks by winning with a 6-fold resonance on the board (real battles against an
    empty board): six fires fill ring 1 (the whole ring: 6-fold); five fires do not; a 6-fold
    board that does not win earns nothing."""
    s = new_run(0, rules, core="moon")
    s.board = {i: ("fire", 1) for i in range(6)}
    assert act(s, "ready").battle.outcome == "win"
    assert "sixfold_win" in s.achievements
    t = new_run(0, rules, core="moon")
    t.board = {i: ("fire", 1) for i in range(5)}
    assert act(t, "ready").battle.outcome == "win"
    assert "sixfold_win" not in t.achievements
    u = new_run(0, rules, core="moon")
    u.board = {i: ("fire", 1) for i in range(6)}
    act(u, "ready", outcome="draw")
    assert "sixfold_win" not in u.achievements


# -- illegal actions ----------------------------------------------------------------------------
def test_illegal_actions_raise_with_reason_and_change_nothing(rules):
    """An illegal action raises IllegalAction whose message says why; the state is unchanged."""
    table = action_table(rules)
    s = new_run(0, rules)
    with pytest.raises(IllegalAction, match="a core choice is pending"):
        act(s, "buy_rune", 0)
    act(s, "choose_core", table.cores.index("moon"))
    s.unlocked = ["fire"]
    s.shop_runes = ["fire"] * 5
    before = s.dumps()
    cases = [
        (table.id("choose_reward", 0), "no reward choice is pending"),
        (table.id("choose_relic", 2), "no relic choice is pending"),
        (table.id("place", 0, c("1:0")), "hand slot 0 is empty"),
        (table.id("sell", 3), "hand slot 3 is empty"),
        (table.id("merge_hand", 0), "hand slot 0 is empty"),
        (table.id("pick_up", c("2:3")), "cell 2:3 holds no rune"),
        (table.id("merge_board", c("1:1")), "cell 1:1 holds no rune"),
        (table.id("place_artifact", 0, c("1:0")), "artifact slot 0 is empty"),
        (table.id("pick_up_artifact", c("1:0")), "cell 1:0 holds no artifact"),
        (table.id("sell_artifact", 1), "artifact slot 1 is empty"),
        (table.id("choose_core", 0), "no core choice is pending"),
        (len(table), "outside the table"),
        (-1, "outside the table"),
    ]
    for a, reason in cases:
        assert reason in why_illegal(s, a)
        with pytest.raises(IllegalAction, match=reason):
            apply(s, a, empty_opponent)
        assert s.dumps() == before
    s.mana = 1
    with pytest.raises(IllegalAction, match="fire costs 2 mana; you have 1"):
        act(s, "buy_rune", 0)
    with pytest.raises(IllegalAction, match="opening a sector costs 3 mana; you have 1"):
        act(s, "open_sector", 0)
    s.mana = 10
    act(s, "buy_rune", 0)
    act(s, "place", 0, c("1:0"))
    act(s, "buy_rune", 1)
    with pytest.raises(IllegalAction, match="cell 1:0 already holds a rune"):
        act(s, "place", 0, c("1:0"))
    s.artifact_inventory = ["ward_stone", "ward_stone"]
    act(s, "place_artifact", 0, c("1:0"))
    with pytest.raises(IllegalAction, match="cell 1:0 already holds an artifact"):
        act(s, "place_artifact", 0, c("1:0"))
    # a pending reward blocks preparation and ready
    s.pending = PendingChoice("reward", ["mana", "base_stat"])
    with pytest.raises(IllegalAction, match="a reward choice is pending"):
        act(s, "ready")
    with pytest.raises(IllegalAction, match="has only 2 options"):
        act(s, "choose_reward", 2)
    assert issubclass(IllegalAction, ValueError)


# -- one statement of legality and one effect per action group ----------------------------------
def test_every_action_group_has_one_legality_row_and_one_effect(rules):
    """The action table, the legality (legal.RULES) and the effects (loop.EFFECTS) name the same
    groups; the choice groups are "choose_" + each pending kind."""
    groups = set(action_table(rules).groups)
    assert set(RULES) == groups and set(EFFECTS) == groups
    assert set(CHOICE_GROUPS) == {PendingChoice(k, []).group for k in PENDING_KINDS} <= groups


def test_a_core_not_offered_is_illegal_and_masked(rules):
    """A core choice that offers some cores: choosing another is illegal, with the reason; the
    mask says the same."""
    table = action_table(rules)
    s = new_run(0, rules)
    s.pending = PendingChoice("core", ["moon", "tree"])
    mask = legal_mask(s)
    for i, core in enumerate(table.cores):
        a = table.id("choose_core", i)
        reason = why_illegal(s, a)
        assert bool(mask[a]) == (reason is None) == (core in ("moon", "tree")), core
        assert reason is None or f"does not offer {core}" in reason


def test_a_battle_needs_an_opponent_source(rules):
    """The loop fights with the opponent source its caller gives: without one, an action that
    fights (ready, or the round's last preparation action, D-41) raises TypeError before
    anything changes; other actions need none."""
    table = action_table(rules)
    s = new_run(0, rules, core="moon")
    for prep, action in ((0, "ready"), (rules.spec.run.action_cap - 1, "reroll")):
        s.prep_actions = prep
        before = s.dumps()
        with pytest.raises(TypeError, match="opponent source"):
            apply(s, table.id(action))
        assert s.dumps() == before
    s.prep_actions = 0
    apply(s, table.id("reroll"))
    assert s.prep_actions == 1 and not s.battles


def test_new_draft_moves_a_new_run_to_the_round(rules):
    """new_draft: a new run at round r with the budget (default: the round's opponent budget at
    the rank, D-44) and a fresh shop; from a board, its runes, artifacts, sectors, relics, hand
    (as many as the hand holds) and core and element, unless a core is given."""
    d = new_draft(5, rules, 4, 33)
    assert (d.round, d.mana, d.pending.kind, d.prep_actions) == (4, 33, "core", 0)
    assert len(d.boss_schedule) == rules.spec.run.round_cap // rules.spec.run.boss_every
    assert new_draft(5, rules, 4, rank="mentor").mana == \
        opponent_budget(rules, 4, rank_effects(rules, "mentor")) == 46
    b = Board(runes={0: ("fire", 2)}, artifacts={0: "ward_stone"}, hand=(("wind", 1),) * 6,
              core="sun", sun_element="water", open_sectors=frozenset({2}), relics=("coin_purse",))
    d = new_draft(5, rules, 5, 10, board=b, later_bosses=False)
    assert (d.board, d.artifacts, d.open_sectors, d.relics) == ({0: ("fire", 2)},
                                                                {0: "ward_stone"}, [2],
                                                                ["coin_purse"])
    assert (d.core, d.sun_element, d.pending, d.hand) == ("sun", "water", None, [("wind", 1)] * 4)
    assert list(d.boss_schedule) == [5]
    d = new_draft(5, rules, 5, 10, core="tree", board=b)
    assert (d.core, d.sun_element, len(d.hand)) == ("tree", None, 5)    # the tree's extra slot
