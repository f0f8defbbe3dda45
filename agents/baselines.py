"""Baseline agents on the protocol `act(observation, action_mask) -> action`, `reset(seed)`.

- `RandomAgent`: uniform over the legal actions.
- `ScriptedAgent`: takes the first option of any choice, buys the first offer it can afford,
  places hand runes in the first free cells (casting order), then readies: the floor any learner
  must clear. It reads only the mask and the action table.
- `GreedyAgent`: the run loop's heuristic drafter. It needs the run state, which the env exposes:
  `GreedyAgent(rules)` is given it through `act(obs, mask, state=...)`; the evaluation loop and
  the opponent tools pass it (agents with `needs_state = True`).
"""
from __future__ import annotations

import numpy as np

from rune_env.rules.config import Rules, default_rules
from rune_env.run.actions import action_table
from rune_env.run.drafter import HeuristicDrafter


class RandomAgent:
    needs_state = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask: np.ndarray, state=None) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 0:
            raise ValueError("no legal action")
        return int(legal[int(self.rng.integers(len(legal)))])


class ScriptedAgent:
    needs_state = False
    # in order of preference: the first legal action of the first kind listed
    ORDER = ("choose_core", "choose_relic", "choose_reward", "buy_rune", "place", "ready")

    def __init__(self, rules: Rules | None = None, seed: int | None = None):
        self.table = action_table(rules or default_rules())
        self.ranges = {k: (start, start + int(np.prod(shape)) if shape else start + 1)
                       for k, (start, shape) in self.table.groups.items()}

    def reset(self, seed: int | None = None) -> None:
        pass  # deterministic

    def act(self, observation, action_mask: np.ndarray, state=None) -> int:
        for kind in self.ORDER:
            lo, hi = self.ranges[kind]
            legal = np.flatnonzero(action_mask[lo:hi])
            if len(legal):
                return int(lo + legal[0])
        legal = np.flatnonzero(action_mask)
        if len(legal) == 0:
            raise ValueError("no legal action")
        return int(legal[0])


class GreedyAgent:
    needs_state = True

    def __init__(self, rules: Rules | None = None, seed: int | None = 0, noise: float = 0.0):
        self.rules = rules or default_rules()
        self.noise = noise
        self.drafter = HeuristicDrafter(self.rules, noise=noise, seed=seed or 0)

    def reset(self, seed: int | None = None) -> None:
        self.drafter.reset(seed or 0)

    def act(self, observation, action_mask: np.ndarray, state=None) -> int:
        if state is None:
            raise ValueError("GreedyAgent needs the run state: act(obs, mask, state=env.unwrapped.state)")
        return self.drafter.act(state)
