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
