"""An agent made of agents by round: `by_round:1=A;3=B` plays A in rounds 1-2 and B from round 3.

A teacher for policy distillation (Rusu et al. 2016, "Policy Distillation"): two trained agents,
each good at one part of the run (an opening learnt against short runs, a middle game learnt in
long ones), are cloned into one network with `pretrain.agent` and DAgger (docs/RESULTS.md). It
reads the round from the observation's `round` scalar (round / round cap, exact for every round
up to the cap), so it plays wherever an agent of the observation does: evaluations,
demonstrations, duels (the duel observation begins with the player's own run). Pools refuse it:
a pool records one policy file per drafter (agents/design/pools/drafting.py).
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Any, Callable

import numpy as np

from agents.names import SCHEDULE_PREFIX as PREFIX
from rune_env.files import ascii_number
from rune_env.envs.observation import SCALARS

_ROUND_SCALAR = SCALARS.index("round")   # the round's place in the dict observation's scalars


def parse_schedule(name: str, round_cap: int) -> list[tuple[int, str]]:
    """`by_round:1=A;3=B` -> [(1, "A"), (3, "B")]: the first round of each agent, increasing,
    the first one 1 (every round has its agent), each between 1 and the round cap. An agent's
    own name may hold ':' and '=' (planner:boards=30), not ';'."""
    body = name[len(PREFIX):]
    schedule: list[tuple[int, str]] = []
    for part in body.split(";"):
        start, sep, agent = part.partition("=")
        if not sep or not agent.strip():
            raise ValueError(f"agent {name!r}: each part of by_round: is ROUND=AGENT, e.g. "
                             f"by_round:1=greedy;3=planner (got {part!r})")
        try:
            first = int(ascii_number(start))
        except ValueError:
            raise ValueError(f"agent {name!r}: {start!r} is not a round number") from None
        if not 1 <= first <= round_cap:
            raise ValueError(f"agent {name!r}: round {first} is not between 1 and the round cap "
                             f"{round_cap}")
        if schedule and first <= schedule[-1][0]:
            raise ValueError(f"agent {name!r}: the rounds must increase ({schedule[-1][0]} then "
                             f"{first})")
        if agent.strip().startswith(PREFIX):
            raise ValueError(f"agent {name!r}: a by_round agent cannot hold another")
        schedule.append((first, agent.strip()))
    if schedule[0][0] != 1:
        raise ValueError(f"agent {name!r}: the first agent must start at round 1 (got "
                         f"{schedule[0][0]})")
    return schedule


class RoundScheduleAgent:
    """Plays the agent whose rounds hold the observation's round. `reset(seed)` resets every
    one with the seed, so the whole is as reproducible as its parts."""

    def __init__(self, schedule: list[tuple[int, Any]], round_index: int, round_cap: int):
        self.starts = [first for first, _ in schedule]
        self.agents = [agent for _, agent in schedule]
        self.round_index = round_index
        self.round_cap = round_cap
        self.needs_state = any(getattr(a, "needs_state", False) for a in self.agents)

    def agent_for(self, round_: int):
        # the last agent starting at or before the round (the first starts at round 1)
        return self.agents[max(0, bisect_right(self.starts, round_) - 1)]

    def observed_round(self, observation) -> int:
        if isinstance(observation, np.ndarray):
            value = observation[self.round_index]
        else:                   # obs_mode="dict": the scalars block alone
            value = observation["scalars"][_ROUND_SCALAR]
        return int(round(float(value) * self.round_cap))

    def reset(self, seed: int | None = None) -> None:
        for agent in self.agents:
            agent.reset(seed)

    def act(self, observation, action_mask: np.ndarray, state=None) -> int:
        agent = self.agent_for(self.observed_round(observation))
        if getattr(agent, "needs_state", False):
            return agent.act(observation, action_mask, state=state)
        return agent.act(observation, action_mask)


def make_schedule_agent(name: str, rules, make: Callable[[str], Any]) -> RoundScheduleAgent:
    """The by_round agent of `name`; `make` builds each part (make_agent with the same rules)."""
    from rune_env.envs.observation import SCALARS, ObservationLayout
    cap = rules.spec.run.round_cap
    schedule = [(first, make(agent)) for first, agent in parse_schedule(name, cap)]
    layout = ObservationLayout.of(rules)
    return RoundScheduleAgent(schedule, layout.slices["scalars"].start + SCALARS.index("round"),
                              cap)
