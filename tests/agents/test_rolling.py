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
from agents.search.settings import parse_planner
from agents.search.rolling import halving_schedule, own_views, roll_choice
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


def roll_decision_budgets(monkeypatch, name: str) -> list[int]:
    """The boards each search of one roll decision may score, in order, for the planner `name`
    at an apprentice run's first view (moon core, seed 5)."""
    import agents.search.planner as planner_module

    budgets = []
    real = planner_module.search_target

    def recording(assets, scorer, starts, settings, *args):
        budgets.append(settings.boards)
        return real(assets, scorer, starts, settings, *args)

    monkeypatch.setattr(planner_module, "search_target", recording)
    state = new_run(11, RULES, rank="apprentice")
    apply(state, action_table(RULES).id("choose_core", action_table(RULES).cores.index("moon")))
    agent = make_agent(name, RULES, seed=5)
    agent.reset(5)
    agent._roll_choice(state)
    return budgets


def test_every_search_of_a_roll_decision_has_roll_share_of_the_budget(monkeypatch):
    # boards=200, roll_share=0.1: each search may score int(200 x 0.1) = 20 boards; the stand, the
    # commits and the views alike (so the stand is not favoured by a larger search)
    budgets = roll_decision_budgets(monkeypatch, "planner:boards=200,roll=2,roll_share=0.1")
    # a stand, at least one commit and two views for each commit
    assert len(budgets) >= 1 + 1 + 2
    assert set(budgets) == {20}


def test_roll_view_share_weighs_the_stand_and_the_views_and_leaves_the_commits(monkeypatch):
    # boards=200, roll_share=0.3, roll_view_share=0.1: the commits may score int(200 x 0.3) = 60
    # boards, the stand and every view int(200 x 0.1) = 20; in roll_choice's order: the stand,
    # the commits (1 to 3), then the views (2 a commit that can pay the reroll)
    budgets = roll_decision_budgets(
        monkeypatch, "planner:boards=200,roll=2,roll_share=0.3,roll_view_share=0.1")
    commits = [b for b in budgets[1:] if b == 60]
    assert budgets[0] == 20
    assert 1 <= len(commits) <= 3 and budgets[1:1 + len(commits)] == commits
    views = budgets[1 + len(commits):]
    assert len(views) >= 2 and len(views) % 2 == 0 and set(views) == {20}


def test_roll_view_share_equal_to_roll_share_is_the_lookahead_without_it():
    # the knob set to roll_share itself gives every search the same budget and seed as before
    def decisions(name):
        state = new_run(11, RULES, rank="apprentice")
        apply(state, action_table(RULES).id("choose_core",
                                            action_table(RULES).cores.index("moon")))
        agent = make_agent(name, RULES, seed=3)
        agent.reset(3)
        choice = agent._roll_choice(state)
        return choice.roll, choice.target, choice.stand, choice.rolled

    assert decisions("planner:boards=120,roll=2,roll_share=0.2,roll_view_share=0.2") == \
        decisions("planner:boards=120,roll=2,roll_share=0.2")


def test_the_roll_view_share_knob():
    assert parse_planner("planner", RULES).roll_view_share is None
    assert parse_planner("planner:roll_view_share=0.1", RULES).roll_view_share == 0.1
    assert parse_planner("planner:roll_view_share=none", RULES).roll_view_share is None
    for name, words in (("planner:roll_view_share=0", r"roll_view_share is a share of boards in "
                                                     r"\(0, 1\] or none; got 0.0"),
                        ("planner:roll_view_share=2", r"in \(0, 1\] or none; got 2.0"),
                        ("planner:roll_view_share=x", "roll_view_share needs a number or none")):
        with pytest.raises(ValueError, match=words):
            make_agent(name, RULES)


def test_the_halving_schedule_is_a_quarter_a_half_and_all_of_the_views():
    # 8 views: 8 // 4 = 2, 8 // 2 = 4, then 8; a stage that adds no view is dropped (3: 1, 1, 3)
    assert halving_schedule(8) == [2, 4, 8]
    assert halving_schedule(4) == [1, 2, 4]
    assert halving_schedule(3) == [1, 3]
    assert halving_schedule(2) == [1, 2]
    assert halving_schedule(1) == [1]


# Four commits (nothing; and the boards kept back with 9, 7 and 5 of the 10 mana: a fire, a wind
# and a wind elsewhere) over four views, each (commit, view) search worth VALUES[c][s]. Means:
# 0.2, 0.15, 0.2875 and 0.675: the last commit is the best, but the worst on the first view.
VALUES = [[0.2, 0.2, 0.2, 0.2], [0.3, 0.1, 0.1, 0.1], [0.25, 0.3, 0.3, 0.3], [0.0, 0.9, 0.9, 0.9]]
KEPT = {9: Layout({CELL: ("fire", 1)}, "moon", None, {}, []),
        7: Layout({CELL: ("wind", 1)}, "moon", None, {}, []),
        5: Layout({geometry(RULES.radius).parse("1:3"): ("wind", 1)}, "moon", None, {}, [])}


def table_search(values, calls):
    """Stand 0.1; a commit's search answers KEPT by the mana left it; a view's search its value
    in `values` (recording the (commit, view) of each)."""
    def search(assets, tail):
        if tail[0] == 2:
            calls.append(tail[1:])
            value = values[tail[1]][tail[2]]
            return assets.layout(), SeatScore(value, 0.0, value)
        layout = KEPT[assets.mana] if tail[0] == 1 else assets.layout()
        return layout, SeatScore(0.1, 0.0, 0.1)
    return search


def test_halving_races_the_commits_over_the_views():
    views = [view("fire", "wind", "wind", "wind", "wind")] * 4
    full_calls, halved_calls = [], []
    full = roll_choice(shop_state(), table_search(VALUES, full_calls), Executor(RULES),
                       Objective(), views)
    halved = roll_choice(shop_state(), table_search(VALUES, halved_calls), Executor(RULES),
                         Objective(), views, halving=True)
    # all four commits face all four views: 16 searches; the last commit, 0.675 - 0.05 = 0.625
    assert len(full_calls) == 16
    assert full.roll and full.target == KEPT[5] and full.rolled == pytest.approx(0.625)
    # halving, views [1, 2, 4]: on view 0 the commits have 0.2, 0.3, 0.25 and 0.0, so commits 1
    # and 2 go on; on view 1 they have 0.4 and 0.55, so commit 2 faces views 2 and 3:
    # 4 + 2 + 2 = 8 searches, and commit 2's mean 1.15 / 4 - 0.05 = 0.2375 beats standing (0.1)
    assert halved_calls == [(0, 0), (1, 0), (2, 0), (3, 0), (1, 1), (2, 1), (2, 2), (2, 3)]
    assert halved.roll and halved.target == KEPT[7] and halved.rolled == pytest.approx(0.2375)


def test_halving_decides_as_the_full_lookahead_when_the_best_commit_survives():
    # commit 3 best on view 0 too (1.0): it survives every cut, and the decision is the same
    values = [row[:] for row in VALUES]
    values[3][0] = 1.0
    views = [view("fire", "wind", "wind", "wind", "wind")] * 4
    full = roll_choice(shop_state(), table_search(values, []), Executor(RULES), Objective(),
                       views)
    halved = roll_choice(shop_state(), table_search(values, []), Executor(RULES), Objective(),
                         views, halving=True)
    assert halved == full
    assert full.target == KEPT[5] and full.rolled == pytest.approx((1.0 + 2.7) / 4 - 0.05)


def test_the_roll_halving_knob():
    assert parse_planner("planner:roll=8,roll_halving=1", RULES).roll_halving is True
    assert parse_planner("planner", RULES).roll_halving is False
    for bad in ("2", "yes", "0.5"):
        with pytest.raises(ValueError, match="roll_halving needs 0 or 1"):
            make_agent(f"planner:roll_halving={bad}", RULES)


def test_a_halving_planner_repeats_itself_for_a_seed():
    state = new_run(11, RULES, rank="apprentice")
    apply(state, action_table(RULES).id("choose_core", action_table(RULES).cores.index("moon")))
    choices = []
    for _ in range(2):
        agent = make_agent("planner:boards=100,roll=4,roll_halving=1", RULES, seed=5)
        agent.reset(5)
        choices.append(agent._roll_choice(state.clone()))
    assert choices[0] == choices[1]
