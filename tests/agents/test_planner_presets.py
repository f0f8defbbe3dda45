"""Named knob sets of the search player (`planner:strong`): the same settings as its knobs
spelled out, knobs given after it win over the preset's, and a wrong name is refused in one line."""
from __future__ import annotations

from dataclasses import replace

import pytest

from rune_env.rules import default_rules

from agents import make_agent
from agents.search.planner import PlannerAgent
from agents.search.settings import PRESETS, PlannerSettings, parse_planner

RULES = default_rules()
# the setting docs/RESULTS.md measures as X, spelled out by hand
X = "planner:roll=8,roll_halving=1,spend_floor=0.87,roll_cap=1,roll_until=3"


def test_strong_is_x_spelled_out():
    assert set(PRESETS) == {"strong"}
    strong = parse_planner("planner:strong", RULES)
    assert strong == parse_planner(X, RULES)
    # and not the default: five knobs moved, every other one as the default has it
    assert strong == replace(PlannerSettings(), roll=8, roll_halving=True, spend_floor=0.87,
                             roll_cap=1, roll_until=3).check(RULES)
    assert strong != PlannerSettings().check(RULES)
    agent = make_agent("planner:strong", RULES, seed=4)
    assert isinstance(agent, PlannerAgent) and agent.settings == strong


def test_knobs_after_a_preset_win_over_its_own():
    s = parse_planner("planner:strong,boards=300,roll=4", RULES)
    # boards from the default's 600, roll from the preset's 8; the preset's others kept
    assert (s.boards, s.roll, s.roll_cap, s.roll_until, s.spend_floor) == (300, 4, 1, 3, 0.87)


@pytest.mark.parametrize("name, words", [
    ("planner:stron", "'stron' is no planner preset; the presets are strong"),
    ("planner:strong,", "planner knobs are KEY=VALUE"),            # a knob missing after it
    ("planner:boards=300,strong", "planner knobs are KEY=VALUE"),  # a preset comes first
    ("planner:strong,roll=2,roll=3", "the knob roll is given twice"),
    ("planner:strong,roll=x", "roll needs a number, got 'x'"),
    ("planner:strong,boards=5", "boards must be in 10..1000000"),
    ("planner:", "planner knobs are KEY=VALUE"),
])
def test_wrong_preset_names_are_refused_in_one_line(name, words):
    with pytest.raises(ValueError, match=words) as caught:
        parse_planner(name, RULES)
    assert "\n" not in str(caught.value)
