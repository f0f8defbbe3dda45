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


def test_a_dict_observation_policy_acts_on_flat_observations_as_on_its_own():
    """A policy trained with obs_mode "dict" (MultiInputPolicy) given the flat observation that
    evaluate.py, pools and duels hand every agent: PolicyAgent cuts it into the dict parts (the
    flat vector's slices, ObservationLayout) and takes the action predict() takes on the env's
    own dict observation, step for step (it was an IndexError inside the MLP fast path). A
    policy whose parts are not the env's is refused in one line."""
    from sb3_contrib import MaskablePPO

    from agents.policy import PolicyLoadError
    from rune_env.rules import default_rules
    rules = default_rules()
    dict_env = RuneRunEnv(obs_mode="dict", opponents="generator")
    model = MaskablePPO("MultiInputPolicy", dict_env, n_steps=32, batch_size=32, n_epochs=1,
                        seed=0, policy_kwargs={"net_arch": [16]}, device="cpu")
    model.learn(32)
    agent = PolicyAgent(model, rules=rules)
    flat_env = RuneRunEnv(opponents="generator")
    obs_d, _ = dict_env.reset(seed=3)
    obs_f, info = flat_env.reset(seed=3)
    for _ in range(40):
        mask = flat_env.action_masks()
        want, _ = model.predict(obs_d, action_masks=dict_env.action_masks(), deterministic=True)
        got = agent.act(obs_f, mask)
        assert got == int(want)
        obs_d, _, done, _, _ = dict_env.step(got)
        obs_f, _, done_f, _, _ = flat_env.step(got)
        assert done == done_f
        if done:
            break
    with pytest.raises(PolicyLoadError, match="this env gives 12"):
        agent.act(np.zeros(12, np.float32), np.ones(3, bool))
    # in a duel it reads its own run's part of the duel observation, as a flat policy does
    # (its observation_size: all its parts together); it was refused for the duel's length
    from rune_env.duel import RuneDuelEnv
    from rune_env.duel.single import opponent_action
    assert agent.observation_size == flat_env.observation_space.shape[0] == 1031
    duel = RuneDuelEnv()
    obs, _ = duel.reset(seed=0)
    action = opponent_action(agent, obs["player_0"], len(duel.table))
    assert obs["player_0"]["action_mask"][action] == 1
