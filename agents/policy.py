"""`PolicyAgent`: a saved stable-baselines3 / sb3-contrib model on the agent protocol.

Two formats: a full checkpoint (`.zip`, as SB3 saves it, optimizer included, for resuming) and
an exported policy (`.pt`, the network alone), which is what we commit (< 5 MB)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np


class PolicyLoadError(ValueError):
    """A checkpoint that cannot be loaded; the message names the file and the problem."""


def load_policy(path: str | Path, device: str = "cpu"):
    """Load an exported policy (`.pt`, written by `export_policy`): the network alone, a few MB,
    small enough to commit. A missing or corrupt file raises PolicyLoadError."""
    path = Path(path)
    if not path.is_file():
        raise PolicyLoadError(f"{path}: no such policy file")
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    try:
        return MaskableActorCriticPolicy.load(str(path), device=device)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds on a corrupt file
        raise PolicyLoadError(f"{path}: cannot load the policy ({type(exc).__name__}: {exc})") from None


def export_policy(model, path: str | Path) -> None:
    """Save only the policy network of a model (no optimizer state, no rollout data)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    model.policy.save(str(tmp))
    tmp.replace(path)


def load_model(path: str | Path, device: str = "cpu"):
    """Load a MaskablePPO (or PPO) zip; a missing or corrupt file raises PolicyLoadError."""
    path = Path(path)
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    if not path.is_file():
        raise PolicyLoadError(f"{path}: no such checkpoint file")
    if not zipfile.is_zipfile(path):
        raise PolicyLoadError(f"{path}: not a stable-baselines3 checkpoint (not a zip archive; "
                              f"truncated or corrupt?)")
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    errors = []
    for cls in (MaskablePPO, PPO):
        try:
            return cls.load(path, device=device)
        except Exception as exc:  # noqa: BLE001 - report every loader's reason
            errors.append(f"{cls.__name__}: {type(exc).__name__}: {exc}")
    raise PolicyLoadError(f"{path}: cannot load the checkpoint ({'; '.join(errors)})")


def limit_torch_threads(n: int = 1) -> None:
    """Run torch on `n` threads. The scripts that play policies call it: one observation at a
    time is far too little work to share, and torch's worker threads spin while they wait, so
    on a busy machine a forward pass with the default (one thread per core) can take 100x longer
    (measured: 28 ms instead of 0.2 ms per layer while other jobs ran)."""
    try:
        import torch
    except ImportError:     # without the train extra: no torch, no threads to limit
        return
    torch.set_num_threads(max(1, int(n)))


class PolicyAgent:
    needs_state = False

    def __init__(self, model_or_path, deterministic: bool = True, device: str = "cpu"):
        if isinstance(model_or_path, (str, Path)):
            loader = load_policy if str(model_or_path).endswith(".pt") else load_model
            self.model = loader(model_or_path, device)
        else:
            self.model = model_or_path
        self.deterministic = deterministic
        self.name = str(model_or_path) if isinstance(model_or_path, (str, Path)) else "policy"
        self._seed = None

    def reset(self, seed: int | None = None) -> None:
        # predict() samples from torch's generator when not deterministic
        self._seed = seed
        if seed is not None and not self.deterministic:
            import torch
            torch.manual_seed(seed)

    def act(self, observation, action_mask: np.ndarray, state=None) -> int:
        try:
            action, _ = self.model.predict(observation, action_masks=action_mask,
                                           deterministic=self.deterministic)
        except TypeError:  # a plain PPO has no masks
            action, _ = self.model.predict(observation, deterministic=self.deterministic)
        return int(action)
