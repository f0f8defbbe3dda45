"""A masked categorical distribution for MaskablePPO that never takes exp() of a masked logit.

Why: sb3-contrib's `MaskableCategorical` replaces masked logits by -1e8 and lets torch's
logsumexp / softmax exponentiate them. exp() of an argument below about -87 (where float32
underflows) takes torch's slow path, about 75 ns an element instead of 0.3 ns on our machine
(`exp` of a 512 x 593 batch: 6.7 ms instead of 0.1 ms; flushing denormals does not help). In
Rune Circle about 588 of the 593 actions are masked in a typical state, so a PPO minibatch of 512
spent 41 ms instead of 28 ms, about 100 us per environment step at the apprentice config's 4
epochs: a tenth of the training time, spent on actions that cannot be taken.

This distribution computes the same thing over the legal actions only: the log-normaliser from
exp(logit - max) of the legal logits, masked probabilities exactly 0 (so a masked action is never
sampled), masked log-probabilities the same -1e8 constant as sb3-contrib's, masked entropy terms
0, no gradient into masked logits. Its values equal sb3-contrib's to float rounding (tests/
test_masking.py), not bit for bit: probabilities come from exp(log-probability) instead of
torch's softmax kernel, so a run trained with it differs in the last bits from one trained with
sb3-contrib's distribution. Training configs choose with `masking: fast` (the default) or
`masking: sb3` (the distribution the first shipped models were trained with).
"""
from __future__ import annotations

import torch as th
from sb3_contrib.common.maskable.distributions import (MaskableCategorical,
                                                       MaskableCategoricalDistribution)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch.distributions import Categorical, Distribution

MASKED_LOGIT = -1e8        # the log-probability reported for a masked action (sb3-contrib's value)
MASKINGS = ("fast", "sb3")


class FastMaskableCategorical(MaskableCategorical):
    """`MaskableCategorical` whose masking exponentiates legal logits only (module docstring)."""

    def __init__(self, probs=None, logits=None, validate_args=None, masks=None):
        self.masks = None
        # one normalisation of the raw logits (sb3-contrib's does two before masking)
        Categorical.__init__(self, probs, logits, validate_args)
        self._original_logits = self.logits
        if masks is not None:
            self.apply_masking(masks)

    def apply_masking(self, masks) -> None:
        if masks is None:
            super().apply_masking(None)
            return
        raw = self._original_logits
        legal = th.as_tensor(masks, dtype=th.bool, device=raw.device).reshape(raw.shape)
        zero = th.zeros((), dtype=raw.dtype, device=raw.device)
        # a row with no legal action (Rune Circle never has one: `ready` is legal until the run
        # is over) is uniform over all actions, as with sb3-contrib's -1e8 everywhere
        none_legal = ~legal.any(dim=-1, keepdim=True)
        if bool(none_legal.any()):
            raw = th.where(none_legal, zero, raw)
            legal = legal | none_legal
        self.masks = legal
        row_max = th.where(legal, raw, th.tensor(-th.inf, dtype=raw.dtype, device=raw.device)) \
            .amax(dim=-1, keepdim=True).detach()
        shifted = th.where(legal, raw - row_max, zero)          # masked: exp(0), then dropped
        unnormalised = th.where(legal, shifted.exp(), zero)
        total = unnormalised.sum(dim=-1, keepdim=True)
        log_probs = th.where(legal, shifted - total.log(),
                             th.tensor(MASKED_LOGIT, dtype=raw.dtype, device=raw.device))
        self.__dict__["logits"] = log_probs
        self.__dict__["probs"] = unnormalised / total
        self._param = log_probs
        self._num_events = log_probs.size()[-1]
        batch_shape = log_probs.size()[:-1] if log_probs.ndimension() > 1 else th.Size()
        Distribution.__init__(self, batch_shape, validate_args=self._validate_args)


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    def proba_distribution(self, action_logits: th.Tensor):
        self.distribution = FastMaskableCategorical(logits=action_logits.view(-1, self.action_dim))
        return self


class FastMaskablePolicy(MaskableActorCriticPolicy):
    """sb3-contrib's `MaskableActorCriticPolicy` (MlpPolicy) with `FastMaskableCategorical`: the
    same network, parameters and saved form; only the masked distribution's arithmetic differs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not isinstance(self.action_dist, MaskableCategoricalDistribution):
            raise TypeError(f"FastMaskablePolicy needs a Discrete action space; got "
                            f"{self.action_space}")
        self.action_dist = FastMaskableCategoricalDistribution(self.action_dist.action_dim)


def policy_class(policy: str, masking: str):
    """The policy to give MaskablePPO for a training config's `policy` and `masking`."""
    if masking not in MASKINGS:
        raise ValueError(f"masking must be one of {MASKINGS}; got {masking!r}")
    if masking == "sb3":
        return policy
    if policy != "MlpPolicy":
        raise ValueError(f"masking 'fast' is implemented for policy MlpPolicy; got {policy!r} "
                         f"(use masking: sb3)")
    return FastMaskablePolicy
