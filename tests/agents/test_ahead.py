"""Looking a round ahead (agents/search/ahead.py, the planner's `ahead` knob): the board to build
picked among the search's finalists by this round's value plus the next round's.

Numbers worked by hand from configs/rules/default.yaml: a round's income is 10 at apprentice (no
rank delta, no furnace, no relic), fire and wind cost 2.
"""
from __future__ import annotations

import numpy as np
import pytest

from rune_env.rules import Board, default_rules, geometry
from rune_env.run.actions import action_table
from rune_env.run.legal import legal_mask
from rune_env.run.loop import apply, new_run

from agents import make_agent
from agents.search.ahead import finalists, holdings, next_round, pick_ahead
from agents.search.boards import Layout
from agents.search.settings import parse_planner
from agents.search.scoring import SeatScore

RULES = default_rules()
TABLE = action_table(RULES)
GEO = geometry(RULES.radius)
A, B = GEO.parse("1:2"), GEO.parse("1:4")


def test_the_rules_numbers_the_hand_worked_values_use():
    assert (RULES.spec.run.income, RULES.prices["fire"], RULES.prices["wind"]) == (10, 2, 2)


def moon_run(seed=3):
    state = new_run(seed, RULES, rank="apprentice")
    apply(state, TABLE.id("choose_core", TABLE.cores.index("moon")))
    return state


def board(runes, hand=()):
    return Board(runes=runes, artifacts={}, hand=tuple(hand), core="moon")


def score(value):
    return SeatScore(value, 0.0, value)


def test_holdings_are_what_a_board_leaves_not_where_it_stands():
    fire_a = board({A: ("fire", 1)}, [("wind", 1)])
    fire_b = board({B: ("fire", 1)}, [("wind", 1)])
    assert holdings(fire_a, 4) == holdings(fire_b, 4)              # moved: the same holdings
    assert holdings(fire_a, 4) != holdings(fire_a, 6)              # more mana spent: not
    assert holdings(fire_a, 4) != holdings(board({A: ("wind", 1)}, [("wind", 1)]), 4)


def test_finalists_are_the_best_boards_of_distinct_holdings_best_first():
    one, moved = board({A: ("fire", 1)}), board({B: ("fire", 1)})
    two = board({A: ("fire", 1), B: ("fire", 1)})
    wind = board({A: ("wind", 1)})
    scored = [(one, score(0.2), 2), (moved, score(0.3), 2), (two, score(0.25), 4),
              (wind, score(0.1), 2)]
    got = finalists(scored, count=2)
    # `moved` and `one` hold the same: only the better (moved, 0.3) stands; then two (0.25)
    assert [(f[0], f[1].value, f[2]) for f in got] == \
        [(Layout.of(moved), 0.3, 2), (Layout.of(two), 0.25, 4)]
    assert len(finalists(scored, count=10)) == 3


def test_the_next_round_is_a_private_copy_with_the_holdings_income_and_a_view():
    state = moon_run()
    state.mana = 10
    before = state.rng.bit_generator.state
    layout = Layout({A: ("fire", 1)}, "moon", None, {}, [("wind", 1)])
    view = (("ice",) * RULES.spec.run.shop_rune_offers, ("mana_spring",))
    nxt = next_round(state, layout, 4, view)
    # 10 - 4 spent + 10 income = 16, in round 2, with the view on display
    assert (nxt.round, nxt.mana, nxt.prep_actions) == (2, 16, 0)
    assert nxt.board == {A: ("fire", 1)} and nxt.hand == [("wind", 1)]
    assert (tuple(nxt.shop_runes), tuple(nxt.shop_artifacts)) == view
    assert nxt.rng is None                                   # no generator to preview draws
    assert (state.round, state.mana, state.board) == (1, 10, {})     # the run untouched
    assert state.rng.bit_generator.state == before


def test_it_picks_the_finalist_whose_next_round_pays_and_not_with_the_last_lamp_at_stake():
    state = moon_run()
    state.mana = 10
    two = board({A: ("fire", 1), B: ("fire", 1)})      # 0.30 now, spends 4
    one = board({A: ("fire", 1)})                       # 0.28 now, spends 2
    scored = [(two, score(0.30), 4), (one, score(0.28), 2)]

    def next_value(nxt, tail):      # the next round worth 0.02 a mana it starts with
        return score(0.02 * nxt.mana)

    views = [(("ice",) * 5, ("mana_spring",))] * 2
    # two lamps: two 0.30 + 0.02 x 16 = 0.62; one 0.28 + 0.02 x 18 = 0.64 -> one
    assert state.lamps > 1
    assert pick_ahead(state, scored, next_value, views)[0] == Layout.of(one)
    # the last lamp: the next round counts as likely as this one is won:
    # two 0.30 + 0.30 x 0.32 = 0.396; one 0.28 + 0.28 x 0.36 = 0.3808 -> two
    state.lamps = 1
    assert pick_ahead(state, scored, next_value, views)[0] == Layout.of(two)
    # no views, or the run's last round: this round's best
    state.lamps = 2
    assert pick_ahead(state, scored, next_value, [])[0] == Layout.of(two)
    state.round = RULES.spec.run.round_cap
    assert pick_ahead(state, scored, next_value, views)[0] == Layout.of(two)
    assert pick_ahead(state, [], next_value, views) is None


def test_the_ahead_knobs_and_their_bounds():
    assert parse_planner("planner:ahead=4,ahead_share=0.5", RULES).ahead == 4
    assert parse_planner("planner", RULES).ahead == 0
    for name, words in (("planner:ahead=33", "ahead must be in 0..32"),
                        ("planner:ahead=-1", "ahead must be in 0..32"),
                        ("planner:ahead_share=0", r"ahead_share is a share of boards in \(0, 1\]"),
                        ("planner:ahead_share=2", r"ahead_share is a share of boards in \(0, 1\]")):
        with pytest.raises(ValueError, match=words):
            make_agent(name, RULES)


def _prepare(agent, state):
    """The player's actions on `state` up to ready or its first reroll."""
    taken = []
    for _ in range(RULES.spec.run.action_cap):
        a = agent.act(None, legal_mask(state), state=state)
        taken.append(a)
        if a in (TABLE.id("ready"), TABLE.id("reroll")):
            return taken
        apply(state, a)
    return taken


def test_a_planner_looking_ahead_searches_the_next_round_fairly_and_repeats_itself(monkeypatch):
    import agents.search.planner as planner_module

    rounds = []
    real = planner_module.search_target

    def recording(assets, scorer, starts, settings, *args):
        rounds.append((assets.round, settings.boards))
        return real(assets, scorer, starts, settings, *args)

    monkeypatch.setattr(planner_module, "search_target", recording)
    base = moon_run(11)
    agent = make_agent("planner:boards=60,ahead=2,ahead_share=0.5", RULES, seed=5)
    first = _prepare(agent, base.clone())
    # round 2's searches, each with int(60 x 0.5) = 30 boards: 2 views for each finalist
    ahead = [r for r in rounds if r[0] == 2]
    assert len(ahead) >= 2 and {b for _, b in ahead} == {30}
    # the run's generator (the shops to come) is hidden: another one changes nothing
    other = base.clone()
    other.rng = np.random.default_rng(999)
    agent.reset(5)
    assert _prepare(agent, other) == first
    agent.reset(5)
    assert _prepare(agent, base.clone()) == first
