"""Rolling by lookahead (agents/search/rolling.py, the planner's `roll` knob): stand or roll at a
view of the shop, judged on views the player draws itself.

Numbers worked by hand from configs/rules/default.yaml: a reroll costs 1 mana, a round's income is
10, fire costs 2; the planner's objective weighs waste 0.5 a round's income, so one reroll costs
0.5 x 1 / 10 = 0.05 of the objective's value.
"""
from __future__ import annotations

import numpy as np
import pytest

from rune_env.rules import default_rules, geometry
from rune_env.run.actions import action_table
from rune_env.run.loop import apply, new_run

from agents import make_agent
from agents.search.boards import Layout
from agents.search.execute import Executor
from agents.search.planner import parse_planner
from agents.search.rolling import own_views, roll_choice
from agents.search.scoring import Objective, SeatScore

RULES = default_rules()
CELL = geometry(RULES.radius).parse("1:2")


def test_the_rules_numbers_the_hand_worked_values_use():
    run = RULES.spec.run
    assert (run.reroll_cost, run.income, RULES.prices["fire"], Objective().waste_weight) == \
        (1, 10, 2, 0.5)


def shop_state(mana=10, shop=("fire", "wind", "wind", "wind", "wind")):
    state = new_run(3, RULES, core="moon")
    state.mana, state.shop_runes, state.shop_artifacts = mana, list(shop), ["mana_spring"]
    return state


def view(*runes):
    return (tuple(runes), ("mana_spring",))


def fire_search(kept: Layout | None = None):
    """A search whose value is 0.1 a fire on display, or 0.5 once a fire is owned; with the
    mana kept back for a reroll (9 of 10) it answers `kept` (the commit), else the holdings."""
    def search(assets, tail):
        owned = any(k == "fire" for k, _ in assets.owned_runes())
        value = 0.5 if owned else 0.1 * sum(k == "fire" for k in assets.shop_runes)
        layout = kept if kept is not None and assets.mana == 9 and not owned \
            else assets.layout()
        return layout, SeatScore(value, 0.0, value)
    return search


def test_it_rolls_when_the_views_mean_less_the_price_beats_standing():
    state = shop_state()
    # stand: one fire on display, 0.1; roll with nothing committed: views of 3 and 1 fires,
    # (0.3 + 0.1) / 2 - 0.05 = 0.15 > 0.1
    choice = roll_choice(state, fire_search(), Executor(RULES), Objective(),
                         [view("fire", "fire", "fire", "wind", "wind"),
                          view("fire", "wind", "wind", "wind", "wind")])
    assert choice.roll and choice.stand == pytest.approx(0.1)
    assert choice.rolled == pytest.approx(0.15)
    assert choice.target == Layout({}, "moon", None, {}, [])      # nothing bought first


def test_it_stands_when_a_view_is_not_worth_its_price():
    state = shop_state()
    # views of one fire each: 0.1 - 0.05 = 0.05 < 0.1
    choice = roll_choice(state, fire_search(), Executor(RULES), Objective(),
                         [view("fire", "wind", "wind", "wind", "wind")] * 2)
    assert not choice.roll and choice.rolled == pytest.approx(0.05)
    # no mana for a reroll: stand, nothing weighed
    broke = roll_choice(shop_state(mana=0), fire_search(), Executor(RULES), Objective(),
                        [view("fire", "fire", "fire", "fire", "fire")])
    assert not broke.roll and broke.rolled is None


def test_the_better_commit_is_built_before_the_reroll():
    state = shop_state()
    kept = Layout({CELL: ("fire", 1)}, "moon", None, {}, [])
    # committing nothing: (0.3 + 0.1) / 2 - 0.05 = 0.15; buying the fire on display first (2 of
    # the 10 mana, 7 left after the reroll): 0.5 in every view, 0.5 - 0.05 = 0.45; stand 0.1
    choice = roll_choice(state, fire_search(kept), Executor(RULES), Objective(),
                         [view("fire", "fire", "fire", "wind", "wind"),
                          view("fire", "wind", "wind", "wind", "wind")])
    assert choice.roll and choice.target == kept
    assert choice.rolled == pytest.approx(0.45)


def test_its_views_are_its_own_draws_from_the_unlocked_kinds():
    state = new_run(5, RULES)
    before = state.rng.bit_generator.state
    views = own_views(state, 6, np.random.default_rng(1))
    assert state.rng.bit_generator.state == before          # the run's generator untouched
    assert views == own_views(state, 6, np.random.default_rng(1))
    assert len(views) == 6
    for runes, artifacts in views:
        assert len(runes) == RULES.spec.run.shop_rune_offers
        assert set(runes) <= set(state.unlocked)
        assert set(artifacts) <= set(RULES.spec.artifacts)


def test_the_roll_knob_and_its_bounds():
    assert parse_planner("planner:roll=8", RULES).roll == 8
    assert parse_planner("planner", RULES).roll == 0
    for name, words in (("planner:roll=65", "roll must be in 0..64"),
                        ("planner:roll=-1", "roll must be in 0..64"),
                        ("planner:roll=x", "roll needs a number"),
                        ("planner:roll_share=0", r"roll_share is a share of boards in \(0, 1\]"),
                        ("planner:roll_share=1.5", r"roll_share is a share of boards in \(0, 1\]")):
        with pytest.raises(ValueError, match=words):
            make_agent(name, RULES)


def test_every_search_of_a_roll_decision_has_roll_share_of_the_budget(monkeypatch):
    # boards=200, roll_share=0.1: each search may score int(200 x 0.1) = 20 boards; the stand, the
    # commits and the views alike (so the stand is not favoured by a larger search)
    import agents.search.planner as planner_module

    budgets = []
    real = planner_module.search_target

    def recording(assets, scorer, starts, settings, *args):
        budgets.append(settings.boards)
        return real(assets, scorer, starts, settings, *args)

    monkeypatch.setattr(planner_module, "search_target", recording)
    state = new_run(11, RULES, rank="apprentice")
    apply(state, action_table(RULES).id("choose_core", action_table(RULES).cores.index("moon")))
    agent = make_agent("planner:boards=200,roll=2,roll_share=0.1", RULES, seed=5)
    agent.reset(5)
    agent._roll_choice(state)
    # a stand, at least one commit and two views for each commit
    assert len(budgets) >= 1 + 1 + 2
    assert set(budgets) == {20}
