"""PolicyAgent.act takes predict()'s action without predict()'s per-call overhead
(agents/policy/__init__.py, `_masked_action`): the same action on every state, for shipped
policies of both trainers' distributions, through the numpy path (the legal actions' logits in
float64 from the observation's set entries, `_ActingNet`), through torch's logits (the top
logit clear of the next) and through the distribution (each forced here by a gap no logits
clear)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents.policy as policy_module  # noqa: E402
from agents.policy import PolicyAgent  # noqa: E402
from rune_env.envs.run_env import RuneRunEnv  # noqa: E402

pytestmark = pytest.mark.outside_mutation_check


def _states(agent: PolicyAgent, rank: str, count: int):
    env = RuneRunEnv(rank=rank, opponents="generator")
    out, seed = [], 11
    obs, info = env.reset(options={"run_seed": seed})
    while len(out) < count:
        out.append((obs.copy(), info["action_mask"].copy()))
        a = int(agent.model.predict(obs, action_masks=info["action_mask"], deterministic=True)[0])
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            seed += 1
            obs, info = env.reset(options={"run_seed": seed})
    return out


@pytest.mark.parametrize("path", ["agents/models/expert_s1.pt", "agents/models/apprentice_s0.pt"])
def test_act_is_predicts_action(path, monkeypatch):
    agent = PolicyAgent(path)
    assert agent._masked is not None
    states = _states(agent, "apprentice", 400)
    expected = [int(agent.model.predict(o, action_masks=m, deterministic=True)[0]) for o, m in states]
    assert agent._net is not None            # the shipped MLPs take the numpy path
    assert [agent.act(o, m) for o, m in states] == expected
    # the numpy logits are torch's to float32's rounding (1e-6 here), far inside NUMPY_GAP
    import torch
    policy = agent._masked
    for o, m in states[:50]:
        legal = np.flatnonzero(m)
        with torch.no_grad():
            obs, _ = policy.obs_to_tensor(o)
            features = policy.extract_features(obs, policy.pi_features_extractor)
            want = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()[0]
        assert np.abs(agent._net.logits(o, legal) - want[legal]).max() < 1e-4
    # every state through torch's logits: the same again
    monkeypatch.setattr(policy_module, "NUMPY_GAP", float("inf"))
    assert [agent.act(o, m) for o, m in states] == expected
    # every state through the distribution, as predict() does: the same again
    monkeypatch.setattr(policy_module, "ARGMAX_GAP", float("inf"))
    assert [agent.act(o, m) for o, m in states] == expected
