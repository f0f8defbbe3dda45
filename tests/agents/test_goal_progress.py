"""The share of a goal a board holds (`agents.search.goal.progress`): runes by their grade-I
units, artifacts by count, each capped at what the goal wants, over the goal's whole mana."""
from __future__ import annotations

import pytest

from rune_env.rules import Board, default_rules

from agents.search.boards import Layout
from agents.search.goal import progress, progress_of

RULES = default_rules()
M = RULES.spec.grades.merge_count                  # 3 under the defaults
FIRE, ICE = RULES.prices["fire"], RULES.prices["ice"]          # 2 and 2
WARD = RULES.spec.artifacts["ward_stone"].price                # 5

# the goal: fire I and fire II (1 + 3 = 4 fire units), ice I, one ward stone
GOAL = Layout({0: ("fire", 1), 1: ("fire", 2), 2: ("ice", 1)}, "moon",
              artifacts={7: "ward_stone"})
TOTAL = 4 * FIRE + 1 * ICE + WARD                  # 8 + 2 + 5 = 15


def test_the_worked_shares():
    assert (M, FIRE, ICE, WARD) == (3, 2, 2, 5)        # the values the comments work with
    # nothing held
    assert progress(GOAL, Layout({}, "moon"), RULES) == 0.0
    # fire III (9 units) holds the goal's 4 fire units only, not more: 8 / 15
    assert progress(GOAL, Layout({4: ("fire", 3)}, "moon"), RULES) == pytest.approx(8 / 15)
    # fire I on the board and fire I in the hand (2 units: 4), ice I (2), the ward stone on
    # another cell (5), a second ward stone that the goal does not want: 11 / 15
    held = Layout({3: ("fire", 1), 5: ("ice", 1)}, "moon", artifacts={1: "ward_stone",
                                                                       9: "ward_stone"},
                  hand=[("fire", 1)])
    assert progress(GOAL, held, RULES) == pytest.approx(11 / 15)
    # the goal itself: all of it
    assert progress(GOAL, GOAL, RULES) == 1.0


def test_a_board_scores_as_its_layout():
    # the search scores boards without turning them back into layouts
    share = progress_of(GOAL, RULES)
    layout = Layout({3: ("fire", 2), 5: ("ice", 1)}, "moon", artifacts={1: "ward_stone"},
                    hand=[("fire", 1)])
    board = Board(runes=dict(layout.runes), artifacts=dict(layout.artifacts),
                  hand=tuple(layout.hand), core="moon")
    # fire II + fire I = 4 units (8), ice (2), ward (5): all 15 of 15
    assert share(board) == share(layout) == 1.0


def test_a_goal_worth_nothing_is_held_whole():
    assert progress(Layout({}, "moon"), Layout({0: ("fire", 1)}, "moon"), RULES) == 1.0
