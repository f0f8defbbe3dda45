"""Agents on the protocol of rune_env.envs.Agent: baselines, the search player, trained policies,
and a factory from names ("random", "scripted", "greedy", "planner", or a model path)."""
from __future__ import annotations

from rune_env.files import ascii_number
from rune_env.rules import default_rules

from .baselines import GreedyAgent, RandomAgent, ScriptedAgent
from .names import BASELINES, PLANNER, SAMPLED_PREFIX, SCHEDULE_PREFIX


def is_builtin(name: str) -> bool:
    """A name make_agent builds without a file: a baseline, greedy:NOISE or the planner."""
    return (name in BASELINES or name.startswith("greedy:") or name == PLANNER
            or name.startswith(PLANNER + ":"))


def make_agent(name: str, rules=None, seed: int | None = 0, strict: bool = False):
    """An agent by name: random, scripted, greedy, greedy:NOISE, planner, planner:KEY=VALUE,...,
    planner:strong (the search player, `agents.search.planner`, and its strong preset),
    by_round:1=A;3=B (A in rounds 1-2, B from round 3: `agents.policy.schedule`),
    sampled:policy=PATH,KEY=VALUE,... (a policy improved by search at play time:
    `agents.search.sampled`), or the path of a saved model (.zip) or exported policy (.pt). A
    policy trained under other rules than `rules` (its card says so) warns, or is refused with
    `strict` (ValueError), as a pool of other rules is."""
    if name == "random":
        return RandomAgent(seed)
    if name == "scripted":
        return ScriptedAgent(rules, seed)
    if name == "greedy":
        return GreedyAgent(rules, seed)
    if name.startswith("greedy:"):      # greedy:0.2 = greedy with 20% random actions
        try:
            noise = float(ascii_number(name.split(":", 1)[1]))
        except ValueError:
            raise ValueError(f"agent {name!r}: greedy:NOISE needs a number, e.g. greedy:0.2") from None
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"agent {name!r}: the noise is a share between 0 and 1")
        return GreedyAgent(rules, seed, noise=noise)
    if name == PLANNER or name.startswith(PLANNER + ":"):
        from .search.planner import PlannerAgent
        from .search.settings import parse_planner
        rules = rules or default_rules()
        return PlannerAgent(rules, seed, parse_planner(name, rules))
    if name.startswith(SAMPLED_PREFIX):
        from .search.sampled import SampledSearchAgent, parse_sampled
        settings = parse_sampled(name)
        try:
            return SampledSearchAgent(rules or default_rules(), seed, settings)
        except ValueError as exc:        # a knob the rules refuse (core=...), named in one line
            raise ValueError(f"agent {name!r}: {exc}") from None
    if name.startswith(SCHEDULE_PREFIX):
        from .policy.schedule import make_schedule_agent
        rules = rules or default_rules()
        return make_schedule_agent(name, rules, lambda part: make_agent(part, rules, seed, strict))
    from pathlib import Path
    if not (name.endswith((".zip", ".pt")) or Path(name).exists()):
        raise ValueError(f"unknown agent {name!r}: use random, scripted, greedy, greedy:NOISE, "
                         f"planner, planner:KEY=VALUE,..., planner:strong, by_round:1=A;3=B, sampled:policy=PATH,... or the path of a saved model (.zip) or exported policy (.pt)")
    from .policy import PolicyAgent, check_model_rules
    check_model_rules(name, rules, strict)
    return PolicyAgent(name, rules=rules)


__all__ = ["BASELINES", "PLANNER", "SAMPLED_PREFIX", "SCHEDULE_PREFIX", "is_builtin", "GreedyAgent", "RandomAgent", "ScriptedAgent", "make_agent"]
