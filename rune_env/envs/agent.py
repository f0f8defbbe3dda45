"""The agent protocol the whole project uses (baselines, trained policies, opponent pools)."""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Chooses one action id from an observation and the legal-action mask.

    `reset(seed)` makes its own randomness reproducible: the same seed and the same observations
    give the same actions."""

    def act(self, observation: Any, action_mask: np.ndarray) -> int: ...

    def reset(self, seed: int | None = None) -> None: ...
