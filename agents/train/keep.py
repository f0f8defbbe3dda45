"""Keeping what was cloned: a behaviour-cloning term in every PPO update (`pretrain.keep`).

Why: cloned from the search player, the policy spends its mana as the planner does; PPO against
opponents that a cheap board beats then unlearns the spending, because a sector opened or a
rune bought pays back only over later rounds (docs/RESULTS.md, "Learning from the search
player"). AlphaStar keeps its supervised policy's style by a KL term to it during RL, and DAPG
(Rajeswaran et al. 2018) by adding the demonstrations' log-likelihood to the policy gradient;
this is the second: each PPO gradient step also descends `keep` times the masked cross-entropy
of the policy on a minibatch of the demonstrations it was cloned from, so PPO improves the
policy where the return says so and stays near the expert on the states the expert met.

How: a step pre-hook on the policy's optimizer (sb3-contrib's MaskablePPO.train is left as it
is). PPO's loss has been back-propagated and its gradient clipped to `max_grad_norm` when the
hook runs; the hook adds the term's gradient and clips the sum to `max_grad_norm` again, then
Adam steps on it. The coefficient goes linearly from `keep` at the start of the run to
`keep_end` at its end (SB3's progress, so a resumed run has the same schedule).

Deterministic and resumable: the minibatches are drawn from a generator seeded with (the
config's seed, the model's step count at that update), re-made at each rollout's update, so no
generator state has to be saved and a run resumed from a checkpoint draws what the uninterrupted
run drew. The demonstrations are kept in the run directory (`demos.npz`) for a resumed run.

TensorBoard: `train/keep_loss` (the cross-entropy), `train/keep_accuracy` (the share of
the minibatch's steps whose most likely legal action is the expert's) and `train/keep_coef`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.evaluation.demos import Demos

_KEEP = 11            # the seed stream of the keep term's minibatches: [seed, _KEEP, steps]
DEMOS_FILE = "demos.npz"


class KeepTerm:
    """The behaviour-cloning term of `model`'s PPO updates (module docstring); `install()` hooks
    it into the optimizer, `remove()` takes it out."""

    def __init__(self, model, demos: Demos, keep: float, keep_end: float, batch_size: int,
                 seed: int):
        import torch as th
        if len(demos) == 0:
            raise ValueError("pretrain.keep needs demonstrations with at least one step")
        self.model = model
        self.keep, self.keep_end = float(keep), float(keep_end)
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.obs = th.as_tensor(demos.obs)
        self.legal = th.as_tensor(demos.legal())
        self.actions = th.as_tensor(demos.actions.astype(np.int64))
        self._rng = None
        self._rng_at = None
        self._handle = None

    def coefficient(self) -> float:
        """The term's weight now: `keep` at the start, `keep_end` at the end, linear between."""
        remaining = float(getattr(self.model, "_current_progress_remaining", 1.0))
        return self.keep_end + (self.keep - self.keep_end) * remaining

    def install(self) -> "KeepTerm":
        self._handle = self.model.policy.optimizer.register_step_pre_hook(self._before_step)
        return self

    def remove(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def minibatch(self) -> np.ndarray:
        """The demonstration steps of the next update: drawn without replacement from a generator
        of (seed, the model's step count), so the same update of the same run draws the same."""
        steps = int(self.model.num_timesteps)
        if self._rng_at != steps:
            self._rng = np.random.default_rng([self.seed, _KEEP, steps])
            self._rng_at = steps
        n = len(self.actions)
        return self._rng.choice(n, size=min(self.batch_size, n), replace=False)

    def loss(self, idx):
        """(cross-entropy, accuracy) of the policy's masked distribution on steps `idx`."""
        from .pretrain import cloning_loss
        ce, hits, _ = cloning_loss(self.model.policy, self.obs[idx], self.legal[idx],
                                   self.actions[idx])
        return ce, hits / len(idx)

    def _before_step(self, optimizer, args, kwargs) -> None:
        import torch as th
        coef = self.coefficient()
        logger = self.model.logger
        logger.record("train/keep_coef", coef)
        if coef <= 0:
            return
        idx = self.minibatch()
        ce, hits = self.loss(idx)
        (coef * ce).backward()
        th.nn.utils.clip_grad_norm_(self.model.policy.parameters(), self.model.max_grad_norm)
        logger.record_mean("train/keep_loss", ce.item())
        logger.record_mean("train/keep_accuracy", hits)


def _keep_end(p) -> float:
    """The keep term's coefficient at the end of training (keep_end, else keep all along)."""
    return p.keep if p.keep_end is None else p.keep_end


def keep_on(cfg) -> bool:
    """Whether training config `cfg` has a keep term."""
    p = cfg.pretrain
    return p is not None and (p.keep != 0 or _keep_end(p) != 0)


def resumed_demos(cfg, run_dir: Path) -> Demos | None:
    """The demonstrations a resumed run's keep term fits (run_dir/demos.npz, saved when the run
    started), read and checked against the run's env; None without a keep term. A DemosError
    naming the file if they cannot be used: raised before the resume writes anything."""
    if not keep_on(cfg):
        return None
    from agents.evaluation.demos import load_demos
    return load_demos(Path(run_dir) / DEMOS_FILE, env_kwargs=cfg.env_kwargs)


def keep_term(cfg, model, run_dir: Path, demos: Demos | None = None) -> KeepTerm | None:
    """The keep term of training config `cfg` for `model`, installed (None without one): on the
    demonstrations given (a new run: those it was cloned on, saved as run_dir/demos.npz; a
    resumed run: `resumed_demos`), else on run_dir/demos.npz."""
    if not keep_on(cfg):
        return None
    p = cfg.pretrain
    from agents.evaluation.demos import save_demos
    path = Path(run_dir) / DEMOS_FILE
    if demos is None:
        demos = resumed_demos(cfg, run_dir)
    elif not path.exists():
        save_demos(demos, path)
    return KeepTerm(model, demos, p.keep, _keep_end(p), p.batch_size, cfg.seed).install()
