"""The step limit of the registered envs: the longest legal episode under each env's own rules.

`gym.make("rune_env/RuneRun-v0", ...)` puts `RulesTimeLimit` outermost (the ids register it as
an additional wrapper). It truncates an episode at `rune_env.max_episode_steps(env's rules)`
steps (1861 a run, 63 a draft with the default rules; a rules file with other caps gets its
own), and the made env's `spec.max_episode_steps` says so. With `gym.make(...,
max_episode_steps=N)` Gymnasium's own `TimeLimit` of N sits beneath it, and this wrapper steps
aside: N governs, longer or shorter than the rules' cap (an episode of illegal actions under
`illegal_action="penalty"` can be longer, since a penalised step is no preparation action).
`gym.make(env.spec)` builds an env of the same limit (Gymnasium then adds a `TimeLimit` of the
spec's limit beneath this wrapper, which steps aside). Why not a `TimeLimit` of the cap at
registration: the ids would carry the default rules' cap, which cuts a longer rules file's runs
short; and a `TimeLimit` made by the entry point itself sat beneath `gym.make`'s, so N could
shorten the episode but never lengthen it.
"""
from __future__ import annotations

from copy import deepcopy

import gymnasium as gym
from gymnasium.wrappers import TimeLimit


def _has_time_limit(env: gym.Env) -> bool:
    while isinstance(env, gym.Wrapper):
        if isinstance(env, TimeLimit):
            return True
        env = env.env
    return False


class RulesTimeLimit(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Truncates at the longest legal episode of the env's rules (the module docstring), unless
    a `TimeLimit` beneath it sets the limit. `draft`: the limit of one round (RuneDraft-v0)."""

    def __init__(self, env: gym.Env, draft: bool = False):
        from rune_env import max_episode_steps
        gym.utils.RecordConstructorArgs.__init__(self, draft=draft)
        gym.Wrapper.__init__(self, env)
        self.limit: int | None = (None if _has_time_limit(env)
                                  else max_episode_steps(env.unwrapped.rules, draft))
        self._elapsed_steps: int | None = None

    def reset(self, **kwargs):
        self._elapsed_steps = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self.limit is not None and self._elapsed_steps is not None:
            self._elapsed_steps += 1
            truncated = truncated or self._elapsed_steps >= self.limit
        return obs, reward, terminated, truncated, info

    @property
    def spec(self):
        """The env's spec with this wrapper in `additional_wrappers` and, when it sets the limit,
        `max_episode_steps` = that limit."""
        if self._cached_spec is not None:
            return self._cached_spec
        spec = super().spec
        if spec is not None and self.limit is not None:
            spec = deepcopy(spec)
            spec.max_episode_steps = self.limit
        self._cached_spec = spec
        return spec
