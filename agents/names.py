"""The words of an agent's name, one home for each: what `agents.make_agent` reads, what the
agents it builds parse the rest of their name by, and what the pool tools check names against."""

BASELINES = ("random", "scripted", "greedy")
PLANNER = "planner"               # agents.search.planner: planner or planner:KEY=VALUE,...
SCHEDULE_PREFIX = "by_round:"     # agents.policy.schedule: agents by round, by_round:1=A;3=B
SAMPLED_PREFIX = "sampled:"       # agents.search.sampled: a policy improved by search at play time

__all__ = ["BASELINES", "PLANNER", "SAMPLED_PREFIX", "SCHEDULE_PREFIX"]
