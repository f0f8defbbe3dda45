"""The rules of a run from its start to the shop (RULES.md sections 9-10; D-4, D-11, D-38..D-40):
start values, income, sectors, the shop, the hand, selling, merging; one test per rule, with
expected values worked out by hand from the frozen config (tests/data/rules.yaml).

Battles are either real ones against a stub opponent (an empty board: quick and predictable) or,
where only the outcome matters, a stub `battle_fn` that returns the outcome the test wants for the
player's seat. tests/run/test_run_rewards.py and tests/run/test_run_ranks.py reuse these helpers.
"""
from __future__ import annotations

from collections import Counter

import pytest
from conftest import board

from rune_env.battle.result import BattleResult
from rune_env.rules.config import CASTING_KINDS, KINDS
from rune_env.rules.geometry import geometry
from rune_env.run.actions import action_table
from rune_env.run.loop import (IllegalAction, apply, income, legal_actions, new_run, player_seat,
                               why_illegal)
from rune_env.run.state import PendingChoice

GEO = geometry(3)


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
