"""by_round:1=A;3=B (agents.policy.schedule): the agent of each round, the name's checks, and a
whole run played by the right part in each round."""
from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.evaluation.runs import eval_run_seed
from agents.policy.schedule import RoundScheduleAgent, parse_schedule
from rune_env.envs.run_env import RuneRunEnv


def test_parse_schedule_reads_rounds_and_names_with_colons_and_equals():
    # the planner's own options hold ':' and '=': only the first '=' of a part splits it
    assert parse_schedule("by_round:1=greedy;3=planner:boards=30", 30) == [
        (1, "greedy"), (3, "planner:boards=30")]


@pytest.mark.parametrize("name, problem", [
    ("by_round:2=greedy", "must start at round 1"),
    ("by_round:1=greedy;3=random;3=scripted", "must increase"),
    ("by_round:1=greedy;2=random;1=scripted", "must increase"),
    ("by_round:1greedy", "ROUND=AGENT"),
    ("by_round:1=", "ROUND=AGENT"),
    ("by_round:x=greedy", "not a round number"),
    ("by_round:1=greedy;31=random", "between 1 and the round cap 30"),
    ("by_round:1=by_round:1=greedy", "cannot hold another"),
])
def test_bad_schedules_are_one_clear_error(name, problem):
    with pytest.raises(ValueError, match=problem):
        make_agent(name)


def test_an_unknown_part_is_make_agents_own_error():
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        make_agent("by_round:1=greedy;4=nobody")


class Recorder:
    """A part that only records its resets (agent_for is checked directly, no act is called)."""

    needs_state = False

    def __init__(self):
        self.seeds: list[int | None] = []

    def reset(self, seed=None):
        self.seeds.append(seed)

    def act(self, observation, action_mask, state=None):
        return -1


def test_each_round_goes_to_its_agent():
    # rounds 1-2 -> a, 3-6 -> b, 7 on -> c; the round scalar is round / cap (cap 30 here)
    a, b, c = Recorder(), Recorder(), Recorder()
    agent = RoundScheduleAgent([(1, a), (3, b), (7, c)], round_index=5, round_cap=30)
    picks = []
    for rnd in range(1, 12):
        obs = np.zeros(10, dtype=np.float32)
        obs[5] = np.float32(rnd / 30)
        assert agent.observed_round(obs) == rnd       # float32 round / 30, back to the round
        picks.append("abc"[[a, b, c].index(agent.agent_for(agent.observed_round(obs)))])
    assert "".join(picks) == "aabbbbccccc"
    agent.reset(7)
    assert a.seeds == b.seeds == c.seeds == [7]


def test_a_whole_run_plays_each_part_in_its_rounds():
    # greedy in rounds 1-2 and random from round 3: every action of rounds 1-2 is greedy's
    # (it needs the state, so the whole does too), every later one random's, in the env's order
    env = RuneRunEnv(rank="apprentice")
    agent = make_agent("by_round:1=greedy;3=random", env.rules, seed=3)
    greedy, random = agent.agents
    assert agent.needs_state
    calls = []
    real_g, real_r = greedy.act, random.act
    greedy.act = lambda o, m, state=None: calls.append(("g", state.round)) or real_g(o, m, state=state)
    random.act = lambda o, m, state=None: calls.append(("r", env.state.round)) or real_r(o, m)
    obs, info = env.reset(seed=eval_run_seed(0, 0))
    agent.reset(5)
    done = False
    while not done:
        action = agent.act(obs, info["action_mask"], state=env.state)
        obs, _, term, trunc, info = env.step(action)
        done = term or trunc
    assert {who for who, rnd in calls if rnd <= 2} == {"g"}
    assert {who for who, rnd in calls if rnd >= 3} == {"r"}
    assert any(rnd >= 3 for _, rnd in calls)              # the run got past round 2
