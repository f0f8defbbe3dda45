"""The battle kernel is compiled before an agent's actions are timed: in a fresh checkout (or a
Ray worker without the kernel's disk cache) the compilation took about 14 s, and it landed in
the planner's first round (planner_report.py's "s max") and in evaluate.py's CPU ms an action."""
from __future__ import annotations

import numpy as np

import rune_env.battle.fast as fast
from rune_env.run.actions import action_table
from rune_env.rules import default_rules

import agents.evaluation.runs as runs_module
from conftest import script_module

RULES = default_rules()
TABLE = action_table(RULES)


class _RecordingAgent:
    """Readies at once (or takes the first legal action), noting each act in `log`."""

    needs_state = False

    def __init__(self, log: list):
        self.log = log

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask, state=None):
        self.log.append("act")
        ready = TABLE.id("ready")
        return ready if action_mask[ready] else int(np.flatnonzero(action_mask)[0])


def test_evaluate_warms_the_kernel_before_the_first_timed_action(monkeypatch):
    log: list = []
    monkeypatch.setattr(runs_module, "warm_up", lambda rules: log.append("warm"))
    runs_module.evaluate(_RecordingAgent(log), 1, env_kwargs={"rank": "archmage"})
    assert log[0] == "warm" and log.count("warm") == 1 and "act" in log


def test_an_evaluation_chunk_warms_the_kernel_before_its_runs(monkeypatch):
    log: list = []
    monkeypatch.setattr(runs_module, "warm_up", lambda rules: log.append("warm"))
    monkeypatch.setattr("agents.make_agent",
                        lambda name, rules, seed=None, strict=False: _RecordingAgent(log))
    runs_module._evaluation_chunk("greedy", None, 0, False, 0, {"rank": "archmage"}, 0, 1)
    assert log[0] == "warm" and "act" in log


def test_planner_report_warms_the_kernel_before_the_agent_decides(monkeypatch):
    log: list = []
    monkeypatch.setattr(fast, "warm_up", lambda rules: log.append("warm"))
    report = script_module("planner_report")
    monkeypatch.setattr(report, "make_agent", lambda name, rules, seed=None: _RecordingAgent(log))
    runs = report._runs("greedy", None, {"rank": "archmage"}, 0, 0, 1)
    assert len(runs) == 1 and log[0] == "warm" and "act" in log


_FREEZE_PROBE = """
import gc
from rune_env.battle.fast import warm_up, loaded_kernel
assert gc.get_freeze_count() == 0
warm_up()
kernel_loop = loaded_kernel().run_bounded
walked = gc.get_objects()                 # the generations a collection walks
frozen = gc.get_freeze_count()
kept = [[] for _ in range(1000)]          # 1,000 lists made after the first warm-up
warm_up()
print(frozen, len(walked), any(o is kernel_loop for o in walked), gc.get_freeze_count(),
      len(gc.get_objects()) - len(walked))
"""


def test_warm_up_takes_the_loaded_kernel_out_of_the_collectors_walks_once():
    # Loading the kernel brings in ~110k objects of numba's (measured: 135k frozen in all with
    # the imports); a full collection walked them all (~0.12 s). After warm_up they are frozen:
    # the generations hold almost nothing, not the kernel's dispatcher; a second warm_up
    # freezes nothing more, so the 1,000 lists made after the first stay in the walks (1,000
    # more objects than before them, give or take the probe's own few).
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _FREEZE_PROBE], capture_output=True, text=True,
                         check=True).stdout.split()
    frozen, walked, kernel_walked, frozen_after, added = out
    assert int(frozen) > 100_000
    assert int(walked) < 1_000 and kernel_walked == "False"
    assert int(frozen_after) == int(frozen)
    assert 1_000 <= int(added) < 1_100


def test_a_planner_warms_the_kernel_when_it_is_made(monkeypatch):
    # its first decision must not pay the kernel's loading (about a second): that is a round's
    # time
    import agents.search.planner as planner_module
    log: list = []
    monkeypatch.setattr(planner_module, "warm_up", lambda rules: log.append(rules))
    agent = planner_module.PlannerAgent(RULES, seed=0)
    assert log == [agent.rules]


def test_warm_up_compiles_the_board_analysis_greedy_values_boards_with():
    """In a fresh process: the drafter's and greedy's board values (BoardAnalyser, the kernel's
    board_analysis) are compiled by warm_up, not at greedy's first timed action (a fresh
    checkout's first evaluation said 14 CPU ms an action for greedy, then 0.3)."""
    import subprocess
    import sys
    code = ("import rune_env.battle.fast as f\n"
            "k = f.loaded_kernel()\n"
            "before = len(k.board_analysis.signatures)\n"
            "f.warm_up()\n"
            "print(before, len(k.board_analysis.signatures))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = map(int, out.stdout.split())
    assert (before, after) == (0, 1)
