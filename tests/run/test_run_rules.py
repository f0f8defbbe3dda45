"""The rules of a run (RULES.md sections 9-10; D-2, D-11, D-38..D-45), one test per rule, with
expected values worked out by hand from the frozen config (tests/data/rules.yaml).

Battles are either real ones against a stub opponent (an empty board: quick and predictable) or,
where only the outcome matters (lamps, clears, caps, rewards by round), a stub `battle_fn` that
returns the outcome the test wants for the player's seat.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import _rules_path, board

from rune_env.battle.result import BattleResult
from rune_env.rules.config import CASTING_KINDS, KINDS, load_rules
from rune_env.rules.geometry import geometry
from rune_env.run.actions import action_table
from rune_env.rules.board import Board
from rune_env.run.legal import CHOICE_GROUPS, RULES
from rune_env.run.loop import (EFFECTS, IllegalAction, apply, field_opponent, income,
                               legal_actions, legal_mask, new_draft, new_run, player_seat,
                               why_illegal)
from rune_env.run.opponents import opponent_budget
from rune_env.terminal.profile import Profile
from rune_env.run.ranks import rank_effects
from rune_env.run.state import PENDING_KINDS, PendingChoice

GEO = geometry(3)
ALL_RELICS = ["resonance_mirror", "ember_jar", "tide_vessel", "bulwark", "hourglass", "thorn_crown",
              "warding_seal", "coin_purse", "focusing_mirror", "mana_vein", "big_bag",
              "phoenix_feather"]
BOSS_RULES = {"ironwall", "swift", "giant", "mirror", "corrosion"}
REWARD_CATEGORIES = {"artifact", "mana", "hand_slot", "artifact_slot", "base_stat"}


def c(name: str) -> int:
    """Cell id of a "ring:index" name."""
    return GEO.parse(name)


def empty_opponent(rnd, effects, boss, rng):
    return board({})


def stub_battle(state, outcome: str):
    """A battle_fn giving the player (seat of this round) a win, loss or draw."""
    seat = player_seat(state.round)
    winner = None if outcome == "draw" else (seat if outcome == "win" else 1 - seat)

    def fn(b0, b1, rules):
        return BattleResult(winner=winner, time=60.0, hp=(1.0, 1.0), max_hp=(1.0, 1.0),
                            casts=(0, 0))
    return fn


def act(state, kind: str, *args, outcome: str | None = None, opponents=empty_opponent):
    """Apply one action by kind; `outcome` stubs the battle if the action fights one."""
    fn = stub_battle(state, outcome) if outcome is not None else None
    return apply(state, action_table(state.rules).id(kind, *args), opponents, fn)


def clear_choices(state, prefer=None):
    """Take any pending choices (option 0, or the named one if offered)."""
    while state.pending is not None:
        opts = state.pending.options
        i = opts.index(prefer) if prefer in opts else 0
        act(state, state.pending.group, i)


def play_round(state, outcome: str, prefer=None):
    clear_choices(state, prefer)
    return act(state, "ready", outcome=outcome)


# -- start of a run ------------------------------------------------------------------------------
def test_run_start_values(rules):
    """D-38 start: 10 mana; D-40 4 hand slots; section 8 two artifact slots; section 1 three lamps;
    rings 1-2 open and no sector of ring 3 (D-4); a pending core choice when no core is given."""
    s = new_run(3, rules)
    assert (s.round, s.mana, s.hand_slots, s.artifact_slots, s.lamps) == (1, 10, 4, 2, 3)
    assert s.open_sectors == [] and s.hand == [] and s.board == {}
    assert s.pending.kind == "core"
    assert set(s.pending.options) == {"sun", "star", "moon", "eclipse", "tree"}
    # only core choices are legal while it is pending
    table = action_table(rules)
    assert {table.actions[a].kind for a in legal_actions(s)} == {"choose_core"}
    assert len(legal_actions(s)) == 5
    act(s, "choose_core", table.cores.index("star"))
    assert s.core == "star" and s.pending is None
    assert s.prep_actions == 0      # the core choice is no preparation action (D-41)


def test_sun_element_starts_first_and_changes(rules):
    """Section 7 sun: the element may change any time during preparation; loop DECISION: it starts
    as the first element (fire). Other cores have no element."""
    s = new_run(0, rules, core="sun")
    assert s.sun_element == CASTING_KINDS[0] == "fire"
    act(s, "set_sun_element", CASTING_KINDS.index("water"))
    assert s.sun_element == "water"
    with pytest.raises(IllegalAction, match="already water"):
        act(s, "set_sun_element", CASTING_KINDS.index("water"))
    m = new_run(0, rules, core="moon")
    assert m.sun_element is None
    with pytest.raises(IllegalAction, match="only a core that flows"):
        act(m, "set_sun_element", 1)


# -- income (D-38) -------------------------------------------------------------------------------
def test_income_base_and_carry_over(rules):
    """D-38: +10 income each later round; unspent mana carries over."""
    s = new_run(0, rules, core="moon", unlocked=["fire"])
    assert income(s) == 10
    act(s, "buy_rune", 0)                      # fire costs 2: 10 - 2 = 8
    assert s.mana == 8
    play_round(s, "draw")
    assert (s.round, s.mana) == (2, 18)        # 8 carried + 10 income
    play_round(s, "draw")
    assert (s.round, s.mana) == (3, 28)        # 18 + 10


def test_income_mana_furnace(rules):
    """Section 8 mana furnace: +1 income per round for every 2 runes on or next to it (D-38)."""
    s = new_run(0, rules, core="moon")
    # a furnace at 1:0 reaches 1:0, 1:1, 1:5, 2:0, 2:1, 2:11 (its cell and neighbours; the core
    # is no cell)
    s.artifacts = {c("1:0"): "mana_furnace"}
    assert income(s) == 10                                       # 0 runes reached: +0
    s.board = {c("1:0"): ("fire", 1)}
    assert income(s) == 10                                       # 1 // 2 = 0
    s.board[c("2:11")] = ("water", 3)
    assert income(s) == 11                                       # 2 // 2 = +1 (grade irrelevant)
    s.board[c("1:1")] = ("amplify", 1)
    assert income(s) == 11                                       # 3 // 2 = +1
    s.board[c("1:3")] = ("fire", 1)                              # not reached: 1:3 is two away
    s.board[c("2:6")] = ("fire", 1)                              # nor the far side of ring 2
    assert income(s) == 11
    s.board[c("2:1")] = ("wind", 1)
    assert income(s) == 12                                       # 4 // 2 = +2
    # a furnace in the inventory (not placed) does nothing
    s.artifact_inventory = ["mana_furnace"]
    assert income(s) == 12
    # a second furnace at 1:3 reaches 1:3 (1 rune) and 1:2, 1:4, 2:5, 2:6, 2:7 (2:6 holds 1):
    # 2 // 2 = +1 more
    s.artifacts[c("1:3")] = "mana_furnace"
    assert income(s) == 13
    # and it is paid at the next round's start: 10 (start) + 13
    play_round(s, "draw")
    assert s.mana == 23


def test_income_coin_purse_and_sorcerer(rules):
    """D-38: coin purse +2; from the sorcerer rank up -1 (ranks include the easier ones)."""
    s = new_run(0, rules, core="moon")
    s.relics = ["coin_purse"]
    assert income(s) == 12                                      # 10 + 2
    for rank, expected in [("apprentice", 10), ("journeyman", 10), ("sorcerer", 9),
                           ("mentor", 9), ("sage", 9), ("archmage", 9)]:
        r = new_run(0, rules, rank=rank, core="moon")
        assert income(r) == expected, rank
    r = new_run(0, rules, rank="sorcerer", core="moon")
    r.relics = ["coin_purse"]
    assert income(r) == 11                                      # 10 + 2 - 1
    r.relics = []
    play_round(r, "draw")
    assert r.mana == 19                                          # 10 + (10 - 1)


# -- sectors (D-4) ------------------------------------------------------------------------------
def test_sector_costs_in_opening_order(rules):
    """D-4: opening costs 3, 4, 5, 6, 7, 8 in the order sectors are opened, whichever sector."""
    s = new_run(0, rules, core="moon")
    s.mana = 25
    act(s, "open_sector", 4)
    assert s.mana == 22                       # 1st opening: 3
    act(s, "open_sector", 0)
    assert s.mana == 18                       # 2nd: 4
    act(s, "open_sector", 2)
    assert s.mana == 13                       # 3rd: 5
    act(s, "open_sector", 5)
    assert s.mana == 7                        # 4th: 6
    act(s, "open_sector", 1)
    assert s.mana == 0                        # 5th: 7
    assert s.open_sectors == [4, 0, 2, 5, 1]
    with pytest.raises(IllegalAction, match="costs 8 mana; you have 0"):
        act(s, "open_sector", 3)             # 6th: 8
    with pytest.raises(IllegalAction, match="sector 4 is already open"):
        act(s, "open_sector", 4)
    s.mana = 8
    act(s, "open_sector", 3)
    assert s.mana == 0


def test_closed_sector_cells_refuse_runes(rules):
    """D-4: runes only on open cells; sector s of ring 3 = indices 3s..3s+2."""
    s = new_run(0, rules, core="moon", unlocked=["fire"])
    act(s, "buy_rune", 0)
    with pytest.raises(IllegalAction, match="cell 3:3 is in a closed sector"):
        act(s, "place", 0, c("3:3"))
    act(s, "open_sector", 1)                 # sector 1 = 3:3, 3:4, 3:5
    with pytest.raises(IllegalAction, match="closed sector"):
        act(s, "place", 0, c("3:6"))         # sector 2 stays closed
    act(s, "place", 0, c("3:5"))
    assert s.board == {c("3:5"): ("fire", 1)}
    # rings 1 and 2 are open from the start
    assert why_illegal(s, action_table(rules).id("place", 0, c("2:11"))) == "hand slot 0 is empty"


# -- shop (D-39) --------------------------------------------------------------------------------
def test_shop_offers_and_buying(rules):
    """D-39: 5 rune offers of grade I and 1 artifact offer; a bought rune goes to the hand at grade
    I for its price; a bought artifact goes to the inventory for its price."""
    s = new_run(5, rules, core="moon", unlocked=["light"])
    assert len(s.shop_runes) == 5 and len(s.shop_artifacts) == 1
    assert s.shop_runes == ["light"] * 5
    act(s, "buy_rune", 2)
    assert s.hand == [("light", 1)] and s.mana == 7          # light costs 3: 10 - 3
    assert s.shop_runes[2] is None
    with pytest.raises(IllegalAction, match="already bought"):
        act(s, "buy_rune", 2)
    act(s, "buy_rune", 0)
    act(s, "buy_rune", 1)
    assert s.mana == 1                                        # 10 - 3 x 3
    with pytest.raises(IllegalAction, match="light costs 3 mana; you have 1"):
        act(s, "buy_rune", 3)
    prices = {"ward_stone": 5, "mana_furnace": 5, "mana_spring": 7, "scapegoat_doll": 4}
    s.mana = 20
    art = s.shop_artifacts[0]
    act(s, "buy_artifact", 0)
    assert s.artifact_inventory == [art] and s.mana == 20 - prices[art]


def test_artifact_slots_limit_buying(rules):
    """D-39: buying an artifact needs a free artifact slot; placed artifacts use slots too."""
    s = new_run(0, rules, core="moon")
    s.mana = 50
    s.artifacts = {c("1:0"): "ward_stone"}
    s.artifact_inventory = ["scapegoat_doll"]                # 2 of 2 slots in use
    with pytest.raises(IllegalAction, match="no free artifact slot"):
        act(s, "buy_artifact", 0)
    act(s, "sell_artifact", 0)                                # one slot free again
    act(s, "buy_artifact", 0)
    assert len(s.artifact_inventory) == 1


def test_reroll_costs_one_and_redraws_all(rules):
    """D-39: a reroll costs 1 mana and redraws all 6 offers (bought ones come back)."""
    s = new_run(11, rules, core="moon")
    act(s, "buy_rune", 0)
    s.shop_artifacts[0] = None                                # as if bought
    s.mana = 8
    seen = [(tuple(s.shop_runes), tuple(s.shop_artifacts))]
    for _ in range(8):
        act(s, "reroll")
        assert len(s.shop_runes) == 5 and len(s.shop_artifacts) == 1
        assert None not in s.shop_runes and None not in s.shop_artifacts
        seen.append((tuple(s.shop_runes), tuple(s.shop_artifacts)))
    assert s.mana == 0                                        # 1 mana each
    assert len(set(seen)) > 1                                 # the offers are redrawn
    with pytest.raises(IllegalAction, match="a reroll costs 1 mana; you have 0"):
        act(s, "reroll")


def test_shop_uniform_over_unlocked_kinds(rules):
    """D-39: rune offers are uniform over the unlocked kinds (supports included) and the artifact
    offer over the four artifacts. 600 rerolls = 3000 rune offers: 3000 / 13 = 230.8 expected per
    kind (sd ~ 14.6), 600 / 4 = 150 per artifact (sd ~ 10.6); bounds at about 5 sd."""
    s = new_run(2, rules, core="moon")
    s.mana = 600
    runes, arts = Counter(s.shop_runes), Counter(s.shop_artifacts)
    for _ in range(599):
        act(s, "reroll")
        s.prep_actions = 0                                    # stay clear of the D-41 cap
        runes.update(s.shop_runes)
        arts.update(s.shop_artifacts)
    assert set(runes) == set(KINDS)
    assert all(160 <= n <= 305 for n in runes.values()), runes
    assert set(arts) == {"ward_stone", "mana_furnace", "mana_spring", "scapegoat_doll"}
    assert all(95 <= n <= 205 for n in arts.values()), arts
    # a restricted list (a profile's unlocked kinds) is all the shop offers
    r = new_run(2, rules, core="moon", unlocked=["fire", "delay"])
    r.mana = 50
    offered = set(r.shop_runes)
    for _ in range(50):
        act(r, "reroll")
        offered |= set(r.shop_runes)
    assert offered == {"fire", "delay"}


# -- hand (D-40) ----------------------------------------------------------------------------------
def test_hand_slots_four_tree_five(rules):
    """D-40: 4 hand slots; the tree core +1 (section 7)."""
    s = new_run(0, rules, core="moon", unlocked=["fire"])
    for i in range(4):
        act(s, "buy_rune", i)
    assert len(s.hand) == 4 and s.mana == 2
    with pytest.raises(IllegalAction, match=r"the hand is full \(4 slots\)"):
        act(s, "buy_rune", 4)
    act(s, "place", 0, c("1:0"))
    act(s, "buy_rune", 4)                                     # a slot was freed by placing
    with pytest.raises(IllegalAction, match="hand is full"):
        act(s, "pick_up", c("1:0"))                           # picking up needs a free slot too
    t = new_run(0, rules, core="tree", unlocked=["fire"])
    assert t.hand_slots == 5
    for i in range(5):
        act(t, "buy_rune", i)
    assert len(t.hand) == 5


def test_hand_slots_capped_at_eight(rules):
    """D-40: 8 hand slots at most, whatever adds them (big bag +2 on 7 gives 8)."""
    s = new_run(0, rules, core="tree")
    s.hand_slots = 7
    s.pending = PendingChoice("relic", ["big_bag", "ember_jar", "hourglass"])
    act(s, "choose_relic", 0)
    assert s.hand_slots == 8                                  # min(8, 7 + 2)
    s.pending = PendingChoice("reward", ["hand_slot", "mana", "base_stat"])
    act(s, "choose_reward", 0)
    assert s.hand_slots == 8


def test_place_and_pick_up_are_free(rules):
    """D-40: placing and picking up (runes and artifacts) cost no mana."""
    s = new_run(0, rules, core="moon", unlocked=["fire"])
    act(s, "buy_rune", 0)
    s.artifact_inventory = ["ward_stone"]
    mana = s.mana
    act(s, "place", 0, c("2:4"))
    act(s, "pick_up", c("2:4"))
    act(s, "place", 0, c("1:2"))
    act(s, "place_artifact", 0, c("1:2"))                     # an artifact may sit under a rune
    act(s, "pick_up_artifact", c("1:2"))
    assert s.mana == mana
    assert s.board == {c("1:2"): ("fire", 1)} and s.artifact_inventory == ["ward_stone"]


# -- selling (D-40) -----------------------------------------------------------------------------
def test_sell_rune_by_grade(rules):
    """D-40: selling a hand rune gives 1 mana per grade-I rune it was made of: I 1, II 3, III 9."""
    s = new_run(0, rules, core="moon", unlocked=["fire"])
    for i in range(3):
        act(s, "buy_rune", i)
    assert s.mana == 4                                        # 10 - 3 x 2
    act(s, "merge_hand", 0)
    assert s.hand == [("fire", 2)]
    act(s, "sell", 0)
    assert s.mana == 7 and s.hand == []                       # 4 + 3
    s.hand = [("water", 1), ("dark", 3)]
    act(s, "sell", 1)
    assert s.mana == 16                                       # 7 + 9
    act(s, "sell", 0)
    assert s.mana == 17                                       # 16 + 1


def test_sell_artifact_half_price_rounded_down(rules):
    """D-40: an artifact sells for half its price, rounded down: spring 7 -> 3, doll 4 -> 2,
    ward stone 5 -> 2, furnace 5 -> 2."""
    s = new_run(0, rules, core="moon")
    s.artifact_slots = 4
    s.artifact_inventory = ["mana_spring", "scapegoat_doll", "ward_stone", "mana_furnace"]
    gains = []
    for _ in range(4):
        before = s.mana
        act(s, "sell_artifact", 0)
        gains.append(s.mana - before)
    assert gains == [3, 2, 2, 2]
    assert s.artifact_inventory == []


# -- merging (D-11) -------------------------------------------------------------------------------
def test_merge_hand_consumes_lowest_slots_first(rules):
    """D-11: partners come from the hand, lowest slot first; the merged rune stays where the
    target was (its place among the remaining hand runes)."""
    s = new_run(0, rules, core="moon")
    s.hand_slots = 5
    s.hand = [("fire", 1), ("water", 1), ("fire", 1), ("fire", 1), ("fire", 1)]
    act(s, "merge_hand", 3)                  # target slot 3; partners slots 0 and 2
    # left: water (was 1), fire II (the target, was 3), fire I (was 4)
    assert s.hand == [("water", 1), ("fire", 2), ("fire", 1)]


def test_merge_board_takes_hand_then_latest_board_runes(rules):
    """D-11: hand first (lowest slot), then the board, latest in casting order first; the merged
    rune stays on the target's cell."""
    s = new_run(0, rules, core="moon")
    s.hand = [("water", 1), ("fire", 1)]
    s.board = {c("1:0"): ("fire", 1), c("1:1"): ("fire", 1), c("1:3"): ("fire", 1),
               c("2:5"): ("fire", 1)}
    act(s, "merge_board", c("1:1"))
    # partners: hand slot 1 (the only fire in hand), then the latest board fire in casting
    # order: 2:5 (ring 2 casts after ring 1)
    assert s.hand == [("water", 1)]
    assert s.board == {c("1:0"): ("fire", 1), c("1:1"): ("fire", 2), c("1:3"): ("fire", 1)}


def test_merge_hand_target_with_board_partners(rules):
    """D-11: a hand target with no hand partners takes the latest two board runes in casting
    order; the merged rune stays in the hand."""
    s = new_run(0, rules, core="moon")
    s.hand = [("ice", 2)]
    s.board = {c("1:4"): ("ice", 2), c("1:5"): ("ice", 2), c("2:0"): ("ice", 2),
               c("1:2"): ("ice", 1)}
    act(s, "merge_hand", 0)
    # casting order: 1:4 (id 4), 1:5 (id 5), 2:0 (id 6): the latest two are 2:0 and 1:5;
    # the grade-I ice is no partner
    assert s.hand == [("ice", 3)]
    assert s.board == {c("1:4"): ("ice", 2), c("1:2"): ("ice", 1)}


def test_merge_needs_two_of_kind_and_grade_below_max(rules):
    """Section 4: three of one kind and grade merge into the next grade; III is the highest."""
    s = new_run(0, rules, core="moon")
    s.hand = [("fire", 1), ("fire", 2), ("fire", 1), ("wind", 1)]
    with pytest.raises(IllegalAction, match="merging needs 2 more fire of grade 1; there are 1"):
        act(s, "merge_hand", 0)
    s.board = {c("1:0"): ("fire", 1)}
    act(s, "merge_hand", 2)                   # partners: hand slot 0, then board 1:0
    assert s.hand == [("fire", 2), ("fire", 2), ("wind", 1)] and s.board == {}
    s.hand = [("fire", 3), ("fire", 3), ("fire", 3)]
    with pytest.raises(IllegalAction, match="already grade 3, the highest"):
        act(s, "merge_hand", 0)


# -- rewards (D-42) -------------------------------------------------------------------------------
def test_rewards_offered_at_rounds_4_7_10_13(rules):
    """D-42: a reward choice at the start of rounds 4, 7, 10, 13, ... and no other; 3 options of
    distinct categories."""
    for seed in range(4):
        s = new_run(seed, rules, core="moon")
        offered = []
        while s.round <= 14:
            if s.pending is not None:
                assert s.pending.kind == "reward"
                opts = s.pending.options
                cats = [o.split(":")[0] for o in opts]
                assert len(opts) == 3 and len(set(cats)) == 3, opts
                assert set(cats) <= REWARD_CATEGORIES
                offered.append(s.round)
                # take mana or base stat so that every category stays applicable
                pick = next((i for i, o in enumerate(opts) if o in ("mana", "base_stat")), 0)
                act(s, "choose_reward", pick)
            act(s, "ready", outcome="draw")
        assert offered == [4, 7, 10, 13]


def test_reward_categories_vary_with_seed(rules):
    """D-42: the three categories are drawn by the seeded generator: over many seeds every one of
    the five categories is offered and different triples occur."""
    seen, triples = set(), set()
    for seed in range(30):
        s = new_run(seed, rules, core="moon")
        for _ in range(3):
            act(s, "ready", outcome="draw")
        cats = tuple(o.split(":")[0] for o in s.pending.options)
        seen |= set(cats)
        triples.add(cats)
    assert seen == REWARD_CATEGORIES
    assert len(triples) > 1


def test_reward_only_applicable_categories(rules):
    """D-42 with the loop's DECISION: a category that cannot apply is not offered: with 8 hand
    slots and 4 artifact slots only artifact, mana and base stat remain (all three offered); with
    every artifact slot full too, only mana and base stat."""
    s = new_run(0, rules, core="moon")
    s.hand_slots, s.artifact_slots = 8, 4
    for _ in range(3):
        act(s, "ready", outcome="draw")
    assert s.round == 4
    assert sorted(o.split(":")[0] for o in s.pending.options) == ["artifact", "base_stat", "mana"]
    t = new_run(0, rules, core="moon")
    t.hand_slots, t.artifact_slots = 8, 4
    t.artifact_inventory = ["ward_stone"] * 4
    for _ in range(3):
        act(t, "ready", outcome="draw")
    assert sorted(t.pending.options) == ["base_stat", "mana"]


def _at_reward(rules, options):
    s = new_run(0, rules, core="moon")
    for _ in range(3):
        act(s, "ready", outcome="draw")
    assert s.round == 4 and s.pending.kind == "reward"
    s.pending.options = options
    return s


def test_reward_effects(rules):
    """D-42 / section 10: +6 mana, +1 hand slot, +1 artifact slot, an artifact (free)."""
    s = _at_reward(rules, ["mana", "hand_slot", "artifact_slot"])
    mana = s.mana
    assert mana == 40                                         # 10 + 3 x 10, nothing spent
    act(s, "choose_reward", 0)
    assert s.mana == 46 and s.pending is None                 # 40 + 6
    s = _at_reward(rules, ["mana", "hand_slot", "artifact_slot"])
    act(s, "choose_reward", 1)
    assert (s.hand_slots, s.mana) == (5, 40)                  # 4 + 1
    s = _at_reward(rules, ["mana", "hand_slot", "artifact_slot"])
    act(s, "choose_reward", 2)
    assert (s.artifact_slots, s.mana) == (3, 40)              # 2 + 1
    s = _at_reward(rules, ["artifact:mana_spring", "mana", "base_stat"])
    act(s, "choose_reward", 0)
    assert s.artifact_inventory == ["mana_spring"] and s.mana == 40


def test_reward_base_stat_ten_percent_max_hp(rules):
    """D-42: "base stat" = +10% max HP. D-9: max HP in round 4 = 100 + 25 x 3 = 175; with the
    reward the player's is 175 x 1.1 = 192.5, the opponent's stays 175 (real battle, empty
    boards: a timeout with both full)."""
    s = _at_reward(rules, ["base_stat", "mana", "hand_slot"])
    act(s, "choose_reward", 0)
    assert s.max_hp == pytest.approx(192.5, rel=1e-12)
    info = act(s, "ready")
    assert info.battle.max_hp[0] == pytest.approx(192.5, rel=1e-12)
    assert info.battle.max_hp[1] == pytest.approx(175.0, rel=1e-12)


# -- bosses (D-43, section 9) -------------------------------------------------------------------
def test_boss_schedule_drawn_at_start_and_visible(rules):
    """D-43: the boss rules of rounds 5, 10, ... (to the 30-round cap) are drawn when the run starts
    and are visible from the start; one rule each below sage."""
    s = new_run(4, rules, core="moon")
    assert sorted(s.boss_schedule) == [5, 10, 15, 20, 25, 30]
    for rnd, rule_list in s.boss_schedule.items():
        assert len(rule_list) == 1 and rule_list[0] in BOSS_RULES
    assert s.to_json()["boss_schedule"] == {str(k): v for k, v in s.boss_schedule.items()}
    schedule = {k: list(v) for k, v in s.boss_schedule.items()}
    # playing (rerolls draw from the same generator) does not change it
    s.mana = 30
    for _ in range(7):
        act(s, "reroll")
    for _ in range(6):
        play_round(s, "draw", prefer="mana")
    assert s.boss_schedule == schedule
    # the schedule differs between seeds somewhere
    assert any(new_run(k, rules, core="moon").boss_schedule != schedule for k in range(10))


def test_boss_rules_reach_the_boss_opponent(rules):
    """Section 9: every 5th round the opponent has the round's boss rules; other rounds none."""
    s = new_run(4, rules, core="moon")
    seen = {}

    def source(rnd, effects, boss, rng):
        seen[rnd] = list(boss)
        return board({})

    for _ in range(5):
        clear_choices(s, "mana")
        info = act(s, "ready", outcome="draw", opponents=source)
    assert info.battle.round == 5
    assert seen == {1: [], 2: [], 3: [], 4: [], 5: s.boss_schedule[5]}
    assert list(info.battle.boss_rules) == s.boss_schedule[5]
    assert info.battle.opponent["boss_rules"] == s.boss_schedule[5]


def test_sage_bosses_have_two_rules(rules):
    """Section 10 ranks: from sage up bosses have 2 (distinct) rules."""
    for rank, n in [("apprentice", 1), ("mentor", 1), ("sage", 2), ("archmage", 2)]:
        for seed in range(3):
            s = new_run(seed, rules, rank=rank, core="moon")
            for rule_list in s.boss_schedule.values():
                assert len(rule_list) == n and len(set(rule_list)) == n, (rank, rule_list)
                assert set(rule_list) <= BOSS_RULES


# -- relics (section 9) ---------------------------------------------------------------------------
def test_relic_choice_after_a_boss_win_only(rules):
    """Section 9: beating a boss offers a choice of three relics (distinct, not already held);
    beating a normal opponent or losing to a boss offers none."""
    s = new_run(0, rules, core="moon")
    for _ in range(4):
        play_round(s, "win", prefer="mana")
    assert s.round == 5 and s.pending is None                 # round-4 win: no relic
    play_round(s, "win")
    assert s.round == 6 and s.pending.kind == "relic"
    opts = s.pending.options
    assert len(opts) == 3 and len(set(opts)) == 3 and set(opts) <= set(ALL_RELICS)
    act(s, "choose_relic", 1)
    assert s.relics == [opts[1]] and s.pending is None
    # a boss loss: no relic
    t = new_run(0, rules, core="moon")
    for _ in range(4):
        play_round(t, "draw", prefer="mana")
    play_round(t, "loss")
    assert t.round == 6 and t.pending is None


def test_relic_options_exclude_held_relics(rules):
    """Section 9: relics are kept for the run, so the three offered are ones not held: holding all
    but three, exactly those three are offered."""
    s = new_run(0, rules, core="moon")
    rest = ["coin_purse", "big_bag", "phoenix_feather"]
    s.relics = [r for r in ALL_RELICS if r not in rest]
    for _ in range(4):
        play_round(s, "draw", prefer="mana")
    play_round(s, "win")
    assert sorted(s.pending.options) == sorted(rest)


def test_relic_and_reward_in_one_round(rules):
    """A boss win in round 15 and the reward of round 16 ((16 - 4) % 3 = 0): the relic choice comes
    first, then the reward; neither is a preparation action."""
    s = new_run(0, rules, core="moon")
    for _ in range(14):
        play_round(s, "draw", prefer="mana")
    play_round(s, "win")
    assert s.round == 16 and s.pending.kind == "relic"
    assert [q.kind for q in s.pending.queue] == ["reward"]
    act(s, "choose_relic", 0)
    assert s.pending.kind == "reward"
    act(s, "choose_reward", 0)
    assert s.pending is None and s.prep_actions == 0


def test_big_bag_adds_two_hand_slots_at_once(rules):
    """Section 9 big bag: hand slots +2, at once (4 -> 6 before the next battle)."""
    s = new_run(0, rules, core="moon")
    s.relics = [r for r in ALL_RELICS if r not in ("big_bag", "ember_jar", "hourglass")]
    for _ in range(4):
        play_round(s, "draw", prefer="mana")
    play_round(s, "win")
    act(s, "choose_relic", s.pending.options.index("big_bag"))
    assert s.hand_slots == 6 and s.round == 6


def test_phoenix_feather_saves_one_lamp_once(rules):
    """Section 9 phoenix feather: once, a loss costs no lamp. With it 4 losses end the run."""
    s = new_run(0, rules, core="moon")
    s.relics = [r for r in ALL_RELICS if r not in ("phoenix_feather", "ember_jar", "hourglass")]
    for _ in range(4):
        play_round(s, "draw", prefer="mana")
    play_round(s, "win")
    act(s, "choose_relic", s.pending.options.index("phoenix_feather"))
    assert s.lamp_saves == 1
    info = play_round(s, "loss", prefer="mana")
    assert (s.lamps, s.losses, s.lamp_saves) == (3, 1, 0)       # saved
    assert info.battle.lamp_saved is True
    play_round(s, "loss", prefer="mana")
    assert (s.lamps, s.losses) == (2, 2)                        # only once
    play_round(s, "loss", prefer="mana")
    assert s.lamps == 1 and not s.over
    play_round(s, "loss", prefer="mana")
    assert s.lamps == 0 and s.over and not s.cleared


# -- lamps, draws, clearing, caps (section 1, D-1, D-2) --------------------------------------------
def test_three_lamps_three_losses_end_the_run(rules):
    """Section 1: a loss puts out one lamp; with all 3 out the run ends (not cleared)."""
    s = new_run(0, rules, core="moon")
    play_round(s, "loss")
    play_round(s, "loss")
    assert (s.lamps, s.over) == (1, False)
    play_round(s, "loss")
    assert (s.lamps, s.losses, s.over, s.cleared) == (0, 3, True, False)
    assert s.round == 3
    assert not legal_mask(s).any()
    with pytest.raises(IllegalAction, match="the run is over"):
        act(s, "ready")


def test_archmage_has_two_lamps(rules):
    """Section 10 ranks: archmage has only 2 lamps; 2 losses end the run."""
    s = new_run(0, rules, rank="archmage", core="moon")
    assert s.lamps == 2
    play_round(s, "loss")
    assert not s.over
    play_round(s, "loss")
    assert s.over and s.lamps == 0
    assert new_run(0, rules, rank="sage", core="moon").lamps == 3


def test_draw_costs_no_lamp_and_is_no_win(rules):
    """D-1: a draw costs no lamp and is no win."""
    s = new_run(0, rules, core="moon")
    for _ in range(5):
        play_round(s, "draw", prefer="mana")
    assert (s.lamps, s.wins, s.losses, s.draws, s.over) == (3, 0, 0, 5, False)


def test_real_draw_between_empty_boards(rules):
    """D-1 with a real battle: two empty boards never cast; at 60 s both ratios are 1: a draw."""
    s = new_run(0, rules, core="moon")
    info = act(s, "ready")
    assert info.battle.outcome == "draw" and info.battle.time == 60
    assert (s.lamps, s.draws, s.round) == (3, 1, 2)


def test_run_cleared_at_tenth_win(rules):
    """D-2: a run is cleared, and ends, at its 10th win (losses and draws between)."""
    s = new_run(0, rules, core="moon")
    for outcome in ["win"] * 9 + ["loss", "draw", "loss", "draw"]:
        play_round(s, outcome, prefer="mana")
    assert not s.over and s.wins == 9 and s.lamps == 1
    play_round(s, "win", prefer="mana")
    assert (s.over, s.cleared, s.wins, s.round) == (True, True, 10, 14)
    assert "clear_run" in s.achievements
    assert not legal_mask(s).any()


def test_endless_plays_on_after_ten_wins(rules):
    """D-2: with `endless: true` the run plays on past the 10th win until the lamps are out."""
    endless = load_rules(_rules_path(), overrides={"run.endless": True})
    s = new_run(0, endless, core="moon")
    for _ in range(11):
        play_round(s, "win", prefer="mana")
    assert (s.over, s.cleared, s.wins, s.round) == (False, False, 11, 12)
    for _ in range(3):
        play_round(s, "loss", prefer="mana")
    assert s.over and not s.cleared


def test_thirty_round_cap(rules):
    """D-2: safety cap of 30 rounds: 30 draws end the run, not cleared, lamps intact."""
    s = new_run(0, rules, core="moon")
    for _ in range(29):
        play_round(s, "draw", prefer="mana")
    assert not s.over and s.round == 30
    play_round(s, "draw", prefer="mana")
    assert (s.over, s.cleared, s.round, s.draws, s.lamps) == (True, False, 30, 30, 3)
    assert len(s.battles) == 30


# -- the preparation cap (D-41) -----------------------------------------------------------------
def test_sixtieth_preparation_action_forces_ready(rules):
    """D-41: a round's preparation ends by itself after 60 actions (ready is forced); choices
    (core, reward) do not count."""
    s = new_run(0, rules)
    act(s, "choose_core", action_table(rules).cores.index("sun"))
    fire, wind = CASTING_KINDS.index("fire"), CASTING_KINDS.index("wind")
    for i in range(59):
        info = act(s, "set_sun_element", wind if i % 2 == 0 else fire)
        assert info.battle is None and not info.forced_ready
    assert (s.round, s.prep_actions) == (1, 59)
    info = act(s, "set_sun_element", wind if s.sun_element == "fire" else fire)
    assert info.forced_ready and info.battle.round == 1
    assert (s.round, s.prep_actions, len(s.battles)) == (2, 0, 1)
    # round 4: the reward choice is no preparation action
    act(s, "ready", outcome="draw")
    act(s, "ready", outcome="draw")
    assert s.round == 4 and s.pending.kind == "reward"
    act(s, "choose_reward", 0)
    assert s.prep_actions == 0
    for i in range(59):
        assert not act(s, "set_sun_element", wind if s.sun_element != "wind" else fire).forced_ready
    assert act(s, "set_sun_element", wind if s.sun_element != "wind" else fire).forced_ready
    assert s.round == 5


# -- seats ----------------------------------------------------------------------------------------
def test_player_seat_alternates_and_outcome_is_the_players(rules):
    """Loop DECISION: the player is side 0 in odd rounds and side 1 in even ones; the outcome is
    from the player's view. Round 2, a fire at 1:0 against an empty board: the player (side 1)
    wins with full HP 100 + 25 = 125, the opponent at 0."""
    assert [player_seat(r) for r in (1, 2, 3, 4)] == [0, 1, 0, 1]
    s = new_run(0, rules, core="moon")
    act(s, "ready")
    s.board = {c("1:0"): ("fire", 1)}
    info = act(s, "ready")
    b = info.battle
    assert (b.round, b.seat, b.outcome) == (2, 1, "win")
    assert b.hp == (125.0, 0.0) and b.max_hp == (125.0, 125.0)
    assert s.wins == 1


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
