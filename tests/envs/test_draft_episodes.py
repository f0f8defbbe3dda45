"""RuneDraft-v0's episodes, pinned: seeded episodes of random masked actions give the same
observations, rewards, terminated / truncated flags, infos and final run states as when the pins
were made (tests/data/draft_episodes.json, one digest per episode).

The pins guard a restructuring of how the draft episode ends (its end is the loop's, not a patch
of the step's result): they must not move. To remake them after a deliberate change of the
env's behaviour: `RUNE_REPIN=1 python -m pytest tests/envs/test_draft_episodes.py` (then review the
diff of the JSON file).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from rune_env.envs.run_env import RuneDraftEnv

pytestmark = pytest.mark.outside_mutation_check

PINS = Path(__file__).resolve().parents[1] / "data" / "draft_episodes.json"

# (name, env keywords, reset seed): reward modes, a fixed and a chosen core, a later round, a
# budget, observation modes, and max_rounds (a truncation beside the termination)
EPISODES = [
    ("battle", {"engine": "reference"}, 0),
    ("margin_core", {"reward_mode": "margin", "core": "moon"}, 1),
    ("round5_budget", {"round": 5, "budget": 40}, 2),
    ("dict_round3", {"round": 3, "obs_mode": "dict"}, 3),
    ("max_rounds", {"round": 2, "max_rounds": 2}, 4),
    ("boss_round", {"round": 4, "reward_mode": "margin"}, 5),
]


def _value(value):
    """A JSON-able stand-in of an observation or info value (arrays by their bytes' digest)."""
    if isinstance(value, np.ndarray):
        return ["ndarray", str(value.dtype), list(value.shape),
                hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()]
    if isinstance(value, dict):
        return [[str(k), _value(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if isinstance(value, float):
        return ["float", value.hex()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return value


def episode_digest(kwargs: dict, seed: int) -> dict:
    """Play one episode (actions drawn uniformly among the legal ones, seeded) and digest every
    step's (obs, reward, terminated, truncated, info) and the final state."""
    env = RuneDraftEnv(**kwargs)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    digest.update(json.dumps([_value(obs), _value(info)]).encode())
    steps = 0
    while True:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        digest.update(json.dumps([_value(obs), _value(float(reward)), bool(terminated),
                                  bool(truncated), _value(info)]).encode())
        if terminated or truncated:
            break
    digest.update(json.dumps(env.state.to_json(), sort_keys=True).encode())
    return {"steps": steps, "terminated": bool(terminated), "truncated": bool(truncated),
            "sha256": digest.hexdigest()}


@pytest.mark.parametrize("name, kwargs, seed", EPISODES, ids=[e[0] for e in EPISODES])
def test_draft_episode_matches_its_pin(name, kwargs, seed):
    got = episode_digest(kwargs, seed)
    if os.environ.get("RUNE_REPIN"):
        pins = json.loads(PINS.read_text()) if PINS.exists() else {}
        pins[name] = got
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
    assert got == json.loads(PINS.read_text())[name]
