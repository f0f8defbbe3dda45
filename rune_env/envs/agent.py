"""The agent protocol the whole project uses (baselines, trained policies, opponent pools)."""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Chooses one action id from an observation and the legal-action mask.

    `needs_state` says whether the agent reads the run itself: callers that have the run's
    `RunState` (the env, the opponent tools, duels) pass it as `state=` only to agents whose
    `needs_state` is true (the greedy drafter plans from the shop and board, which the
    observation encodes only in part); every other agent is called as `act(observation, mask)`.
    `reset(seed)` makes its own randomness reproducible: the same seed and the same observations
    give the same actions."""

    needs_state: bool

    def act(self, observation: Any, action_mask: np.ndarray, state: Any = None) -> int: ...

    def reset(self, seed: int | None = None) -> None: ...


class StatelessAgent:
    """A base for agents that choose from the observation alone (`needs_state = False`)."""

    needs_state = False
