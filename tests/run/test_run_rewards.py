"""The rules of a run between its battles and at its end (RULES.md sections 1, 9; D-1, D-2,
D-41..D-43): rewards, bosses, relics, lamps, draws, clearing, the caps and the seats; one test per
rule, with expected values worked out by hand from the frozen config (tests/data/rules.yaml).

Battles are either real ones against a stub opponent (an empty board: quick and predictable) or,
where only the outcome matters (lamps, clears, caps, rewards by round), a stub `battle_fn` that
returns the outcome the test wants for the player's seat (tests/run/test_run_shop.py's helpers).
"""
from __future__ import annotations

import pytest
from conftest import _rules_path, board

from rune_env.rules.config import CASTING_KINDS, load_rules
from rune_env.run.actions import action_table
from rune_env.run.loop import IllegalAction, legal_mask, new_run, player_seat
from test_run_shop import act, c, clear_choices, play_round

ALL_RELICS = ["resonance_mirror", "ember_jar", "tide_vessel", "bulwark", "hourglass", "thorn_crown",
              "warding_seal", "coin_purse", "focusing_mirror", "mana_vein", "big_bag",
              "phoenix_feather"]
BOSS_RULES = {"ironwall", "swift", "giant", "mirror", "corrosion"}
REWARD_CATEGORIES = {"artifact", "mana", "hand_slot", "artifact_slot", "base_stat"}


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
