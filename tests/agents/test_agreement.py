"""The agreement of two agents on the first one's states (agents/evaluation/agreement.py,
scripts/agreement.py): the measuring stick of how clonable a teacher is."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from agents import make_agent
from agents.evaluation.agreement import agreement
from agents.evaluation.runs import eval_run_seed, play_run
from rune_env.envs.run_env import RuneRunEnv

REPO = Path(__file__).resolve().parents[2]


class _Lowest:
    """The legal action of the lowest id, or with `even` the lowest even one (the lowest when
    none is even); counts the steps it meets and those whose lowest legal id is even or whose
    legal ids are all odd (`same`: where the two kinds of agent take the same action)."""

    needs_state = False

    def __init__(self, even: bool = False):
        self.even, self.steps, self.same = even, 0, 0

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask, state=None):
        legal = np.flatnonzero(action_mask)
        evens = legal[legal % 2 == 0]
        self.steps += 1
        self.same += bool(legal[0] % 2 == 0 or len(evens) == 0)
        return int(evens[0] if self.even and len(evens) else legal[0])


def test_two_agents_agree_exactly_where_their_rules_give_the_same_action():
    # lowest-id against lowest-even-id: they agree on a step if and only if the lowest legal id
    # is even or no legal id is, so the agreement is that count over the steps of the same runs
    # played by the lowest-id agent alone (its runs do not depend on who labels them)
    env = RuneRunEnv(rank="apprentice")
    alone = _Lowest()
    for i in range(3):
        play_run(env, alone, eval_run_seed(4, i))
    out = agreement(_Lowest(), _Lowest(even=True), env, runs=3, seed=4)
    assert out["overall"]["steps"] == alone.steps
    assert out["overall"]["agreement"] == alone.same / alone.steps
    assert 0 < alone.same < alone.steps         # neither all nor none: the count is informative
    lo, hi = out["overall"]["ci"]
    assert lo <= out["overall"]["agreement"] <= hi
    # the parts add up to the whole, by kind and by round
    for part in ("by_kind", "by_round"):
        assert sum(s["steps"] for s in out[part].values()) == alone.steps


def test_a_deterministic_agent_agrees_with_itself_on_every_step_under_its_own_seed():
    # greedy draws its core from its seed: under the run's own seed (labeller_seed 0) it agrees
    # with itself on every step, and the interval of all-agreeing runs is [1, 1]
    env = RuneRunEnv(rank="apprentice")
    out = agreement(make_agent("greedy", env.rules), make_agent("greedy", env.rules), env,
                    runs=2, seed=0, labeller_seed=0)
    assert out["overall"]["agreement"] == 1.0 and out["overall"]["ci"] == [1.0, 1.0]
    # the same seed twice gives the same numbers (the bootstrap's generator is seeded)
    again = agreement(make_agent("greedy", env.rules), make_agent("greedy", env.rules), env,
                      runs=2, seed=0, labeller_seed=0)
    assert again == out
    # under another seed (the default, run seed + 1) it draws other cores: pinned from one run,
    # both runs' core choices differ and every other step agrees (greedy's rules are the same)
    other = agreement(make_agent("greedy", env.rules), make_agent("greedy", env.rules), env,
                      runs=2, seed=0)
    assert other["by_kind"]["choose_core"]["agreement"] == 0.0
    assert other["overall"]["steps"] - 2 == round(other["overall"]["agreement"]
                                                  * other["overall"]["steps"])


def test_the_script_prints_json_and_refuses_a_bad_agent_in_one_line():
    script = [sys.executable, str(REPO / "scripts" / "agreement.py")]
    r = subprocess.run([*script, "--actor", "greedy", "--labeller", "greedy", "--rank",
                        "apprentice", "--runs", "2", "--labeller-seed", "0", "--json",
                        "--no-progress"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["overall"]["agreement"] == 1.0 and out["runs"] == 2 and out["rules_hash"]
    r = subprocess.run([*script, "--actor", "gredy", "--labeller", "greedy"], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert "unknown agent 'gredy'" in r.stderr
