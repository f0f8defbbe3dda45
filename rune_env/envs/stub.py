"""A stub with RuneRun-v0's spaces that does no game work: the benchmark's baseline for the
share of training time the env costs (scripts/benchmark.py, `train_fps_stub`).

Constant observation (by default the first observation of a RuneRun-v0 run, not zeros: an
all-zero input with zero rewards drives the network's gradients into denormal floats, which the
CPU computes about 50x slower, so a zero stub would be the slow one), every action legal, reward 0,
and every episode exactly
`episode_length` steps (the benchmark sets it to the mean episode length RuneRun-v0 had in the
same measurement), so MaskablePPO does the same work per step on both.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np


class StubRunEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, observation_space: gym.Space, action_space: gym.spaces.Discrete,
                 episode_length: int, observation: np.ndarray | None = None):
        if episode_length < 1:
            raise ValueError(f"episode_length must be at least 1; got {episode_length}")
        self.observation_space = observation_space
        self.action_space = action_space
        self.episode_length = int(episode_length)
        if observation is None:
            observation = np.zeros(observation_space.shape, dtype=observation_space.dtype)
        self._obs = np.asarray(observation, dtype=observation_space.dtype).copy()
        if self._obs.shape != observation_space.shape:
            raise ValueError(f"observation shape {self._obs.shape} is not the space's "
                             f"{observation_space.shape}")
        self._mask = np.ones(action_space.n, dtype=bool)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._t = 0
        # a new array each call (Gymnasium's contract: callers may keep or modify what they get)
        return self._obs.copy(), {"action_mask": self._mask.copy()}

    def step(self, action):
        self._t += 1
        done = self._t >= self.episode_length
        return self._obs.copy(), 0.0, done, False, {"action_mask": self._mask.copy()}

    def action_masks(self) -> np.ndarray:
        return self._mask
