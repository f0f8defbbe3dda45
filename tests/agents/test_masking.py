"""The fast masked distribution (agents/train/masking.py) against sb3-contrib's MaskableCategorical.

Both are the same distribution: over the legal actions, softmax of the logits; masked actions
probability 0, log-probability -1e8, no entropy, no gradient. The fast one never exponentiates a
masked logit (torch's exp is about 75x slower per element on underflowing arguments). Values are
compared to float32 rounding (1e-6), masked entries exactly. Not battle-rule tests.
"""
from __future__ import annotations

import pytest

th = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.distributions import MaskableCategorical  # noqa: E402

from agents.train.masking import (MASKED_LOGIT, FastMaskableCategorical,  # noqa: E402
                                  FastMaskablePolicy, policy_class)


def batch(seed: int = 0, rows: int = 64, n: int = 593, legal_share: float = 0.02):
    """Random logits (spread 3) and masks: a few legal actions a row like Rune Circle's, plus a
    row with every action legal and a row with none."""
    g = th.Generator().manual_seed(seed)
    logits = th.randn(rows, n, generator=g) * 3.0
    masks = th.rand(rows, n, generator=g) < legal_share
    masks[:, 0] |= ~masks.any(dim=1)          # at least one legal action a row ...
    masks[1] = True                           # ... one row all legal
    masks[2] = False                          # ... and one with none (both: uniform over all)
    return logits, masks


def both(logits, masks):
    a = logits.clone().requires_grad_(True)
    b = logits.clone().requires_grad_(True)
    ref = MaskableCategorical(logits=a)
    ref.apply_masking(masks)
    fast = FastMaskableCategorical(logits=b)
    fast.apply_masking(masks)
    return a, ref, b, fast


def test_same_distribution_as_sb3_contrib():
    logits, masks = batch()
    _, ref, _, fast = both(logits, masks)
    assert th.allclose(fast.probs, ref.probs, rtol=1e-5, atol=1e-7)
    assert th.allclose(fast.probs[2], th.full((593,), 1 / 593))   # no legal action: uniform
    legal = masks.clone()
    legal[2] = True
    assert th.all(fast.probs[~legal] == 0.0)  # masked: exactly 0, never sampled
    keep = th.arange(len(logits)) != 2        # sb3-contrib's row 2 is degenerate (-1e8 - -1e8)
    fast_logits, ref_logits, legal = fast.logits[keep], ref.logits[keep], legal[keep]
    assert th.allclose(fast.probs.sum(dim=1), th.ones(len(logits)), atol=1e-5)
    # log-probabilities of the legal actions, and the masked constant
    assert th.allclose(fast_logits[legal], ref_logits[legal], rtol=1e-6, atol=1e-5)
    assert th.all(fast_logits[~legal] == MASKED_LOGIT)
    assert th.allclose(fast.entropy()[keep], ref.entropy()[keep], rtol=1e-5, atol=1e-6)
    # row 1, every action legal: the plain categorical's entropy
    plain = th.distributions.Categorical(logits=logits[1])
    assert fast.entropy()[1].item() == pytest.approx(plain.entropy().item(), rel=1e-5)


def test_log_prob_and_gradients_match():
    logits, masks = batch(seed=1)
    a, ref, b, fast = both(logits, masks)
    actions = th.stack([th.nonzero(m)[0, 0] if m.any() else th.tensor(0) for m in masks])
    keep = th.arange(len(logits)) != 2        # the degenerate no-legal row (see above)
    assert th.allclose(fast.log_prob(actions)[keep], ref.log_prob(actions)[keep], rtol=1e-6,
                       atol=1e-5)
    assert fast.log_prob(actions)[2].item() == pytest.approx(-float(th.log(th.tensor(593.0))))
    (ref.log_prob(actions).sum() + 0.01 * ref.entropy().sum()).backward()
    (fast.log_prob(actions).sum() + 0.01 * fast.entropy().sum()).backward()
    assert th.allclose(b.grad[keep], a.grad[keep], rtol=1e-4, atol=1e-6)
    # no gradient into masked logits: in both, only the float32 residue (up to ~1e-7) of the
    # first normalisation over all logits, which the masked one cancels exactly in real numbers
    assert float(b.grad[keep][~masks[keep]].abs().max()) < 1e-6
    assert float(a.grad[keep][~masks[keep]].abs().max()) < 1e-6


def test_sampling_never_draws_a_masked_action():
    """A legal action far less likely than the rest still appears, a masked one never: the legal
    logits span 30 nats, the masked ones are the largest raw logits of all."""
    n = 593
    logits = th.full((1, n), 50.0)
    masks = th.zeros(1, n, dtype=th.bool)
    masks[0, :5] = True
    logits[0, :5] = th.tensor([0.0, -2.0, -4.0, -20.0, -30.0])
    dist = FastMaskableCategorical(logits=logits)
    dist.apply_masking(masks)
    th.manual_seed(0)
    draws = dist.sample(th.Size([20000])).flatten()
    assert int(draws.max()) < 5
    assert set(draws.tolist()) >= {0, 1, 2}


def test_no_masks_is_the_plain_categorical():
    logits, _ = batch(seed=2)
    dist = FastMaskableCategorical(logits=logits)
    dist.apply_masking(None)
    plain = th.distributions.Categorical(logits=logits)
    assert th.allclose(dist.logits, plain.logits, atol=1e-6) and dist.masks is None


def test_policy_class_choices():
    assert policy_class("MlpPolicy", "sb3") == "MlpPolicy"
    assert policy_class("MlpPolicy", "fast") is FastMaskablePolicy
    with pytest.raises(ValueError, match="masking must be one of"):
        policy_class("MlpPolicy", "quick")
    with pytest.raises(ValueError, match="MlpPolicy"):
        policy_class("CnnPolicy", "fast")


def test_fast_policy_trains_reproducibly_and_acts_legally():
    """Two MaskablePPO runs with the fast policy and one seed give the same network, bit for
    bit; the trained policy only picks legal actions."""
    import gymnasium as gym
    import numpy as np
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    import rune_env  # noqa: F401 - registers the envs

    th.set_num_threads(1)

    def train():
        venv = DummyVecEnv([lambda: gym.make("rune_env/RuneRun-v0", opponents="generator")])
        venv.seed(3)
        model = MaskablePPO(FastMaskablePolicy, venv, seed=3, n_steps=64, batch_size=32,
                            n_epochs=2, policy_kwargs={"net_arch": [16]}, device="cpu")
        model.learn(total_timesteps=128)
        return model

    m1, m2 = train(), train()
    s1, s2 = m1.policy.state_dict(), m2.policy.state_dict()
    assert s1.keys() == s2.keys() and all(th.equal(s1[k], s2[k]) for k in s1)
    env = gym.make("rune_env/RuneRun-v0", opponents="generator")
    obs, info = env.reset(seed=5)
    for _ in range(50):
        action, _ = m1.predict(obs, action_masks=info["action_mask"], deterministic=False)
        assert info["action_mask"][int(action)]
        obs, _, term, trunc, info = env.step(int(action))
        if term or trunc:
            obs, info = env.reset()
