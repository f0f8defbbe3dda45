"""Agents on the protocol of rune_env.envs.Agent: baselines, trained policies, and a factory
from names ("random", "scripted", "greedy", or a model path)."""
from __future__ import annotations

from .baselines import GreedyAgent, RandomAgent, ScriptedAgent

BASELINES = ("random", "scripted", "greedy")


def make_agent(name: str, rules=None, seed: int | None = 0):
    if name == "random":
        return RandomAgent(seed)
    if name == "scripted":
        return ScriptedAgent(rules, seed)
    if name == "greedy":
        return GreedyAgent(rules, seed)
    if name.startswith("greedy:"):      # greedy:0.2 = greedy with 20% random actions
        return GreedyAgent(rules, seed, noise=float(name.split(":", 1)[1]))
    from .policy import PolicyAgent
    return PolicyAgent(name)


__all__ = ["BASELINES", "GreedyAgent", "RandomAgent", "ScriptedAgent", "make_agent"]
