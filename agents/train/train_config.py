"""The training config of scripts/train.py: `TrainConfig` (with `PPOConfig`, `EvalConfig`), strict
pydantic models of configs/train/*.yaml (keys in configs/train/README.md); `read_config` reads a
file with the command line's overrides, `validate_config` a mapping; a problem is a `ConfigError`
naming the file and the key. `check_env` builds one env of a config."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, StrictBool, model_validator

from agents.cli.args import MAX_ENVS, MAX_ROLLOUT, MAX_STEPS, MAX_THREADS, SEED_MAX
from agents.evaluation.runs import MAX_EPISODES

from .config import (RUN_NAME, ConfigError, Mapping, Number, PolicyKwargs, Section, Whole,
                     mapping_or_empty, read_yaml, validate_model)
from .pretrain import PretrainConfig


class PPOConfig(Section):
    """MaskablePPO's keyword arguments; a key left out keeps SB3's default."""
    learning_rate: Number | None = Field(None, gt=0)
    n_steps: Whole | None = Field(None, ge=1, le=MAX_ROLLOUT)
    batch_size: Whole | None = Field(None, ge=2, le=MAX_ROLLOUT)
    n_epochs: Whole | None = Field(None, ge=1, le=10_000)
    gamma: Number | None = Field(None, ge=0, le=1)
    gae_lambda: Number | None = Field(None, ge=0, le=1)
    clip_range: Number | None = Field(None, gt=0)
    clip_range_vf: Number | None = Field(None, gt=0)
    normalize_advantage: StrictBool | None = None
    ent_coef: Number | None = Field(None, ge=0)
    vf_coef: Number | None = Field(None, ge=0)
    max_grad_norm: Number | None = Field(None, gt=0)
    target_kl: Number | None = Field(None, gt=0)
    stats_window_size: Whole | None = Field(None, ge=1, le=MAX_ROLLOUT)

    def kwargs(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class EvalConfig(Section):
    """The periodic evaluation during training."""
    every: Whole = Field(0, ge=0, le=MAX_STEPS)    # timesteps between evaluations; 0: none
    episodes: Whole = Field(20, ge=1, le=MAX_EPISODES)
    seed: Whole = Field(0, ge=0, le=SEED_MAX)      # the evaluation seed (the final one's too)


class TrainConfig(Section):
    """A training config (configs/train/*.yaml; keys and meanings in configs/train/README.md)."""
    name: str | None = Field(None, pattern="^" + RUN_NAME.pattern + "$")
    env_id: str = "rune_env/RuneRun-v0"
    env_kwargs: Mapping = {}
    n_envs: Whole = Field(2, ge=1, le=MAX_ENVS)
    vec_env: Literal["dummy", "subproc"] = "dummy"
    seed: Whole = Field(0, ge=0, le=SEED_MAX)
    total_timesteps: Whole = Field(10000, ge=1, le=MAX_STEPS)
    torch_threads: Whole = Field(1, ge=1, le=MAX_THREADS)
    policy: Literal["MlpPolicy", "MultiInputPolicy", "CnnPolicy"] = "MlpPolicy"
    masking: Literal["fast", "sb3"] = "fast"       # the masked distribution (agents/train/masking.py)
    ppo: Annotated[PPOConfig, BeforeValidator(mapping_or_empty)] = PPOConfig()
    policy_kwargs: PolicyKwargs = {}
    checkpoint_every: Whole = Field(10000, ge=1, le=MAX_STEPS)
    metrics_every: Whole = Field(2048, ge=1, le=MAX_STEPS)
    eval: Annotated[EvalConfig, BeforeValidator(mapping_or_empty)] = EvalConfig()
    final_eval_episodes: Whole = Field(20, ge=0, le=MAX_EPISODES)
    pretrain: PretrainConfig | None = None     # behaviour cloning before PPO (agents/train/pretrain.py)

    @model_validator(mode="after")
    def _consistent(self) -> "TrainConfig":
        if self.masking == "fast" and self.policy != "MlpPolicy":
            raise ValueError(f"masking 'fast' is implemented for policy MlpPolicy; got "
                             f"{self.policy!r} (use masking: sb3)")
        n_steps = self.ppo.n_steps if self.ppo.n_steps is not None else 2048
        if n_steps * self.n_envs < 2:
            raise ValueError(f"ppo.n_steps x n_envs must be > 1 (got {n_steps} x {self.n_envs})")
        return self

    def to_yaml(self) -> dict[str, Any]:
        data = self.model_dump()
        data["ppo"] = self.ppo.kwargs()
        if self.pretrain is None:
            del data["pretrain"]
        return data


SECTIONS: dict[tuple, type[BaseModel]] = {(): TrainConfig, ("ppo",): PPOConfig, ("eval",): EvalConfig,
                                          ("pretrain",): PretrainConfig}


def validate_config(data: Any, source: str) -> TrainConfig:
    return validate_model(TrainConfig, data, source, "a training config", SECTIONS)


def read_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """A config file, with the command line's overrides (None: not given), validated."""
    path = Path(path)
    data = read_yaml(path, overrides)
    data = {} if data is None else data
    if isinstance(data, dict):
        if data.get("name") is None:
            data["name"] = re.sub(r"[^A-Za-z0-9._+=-]+", "_", path.stem).lstrip("._+=-") or "run"
    return validate_config(data, str(path))


def check_env(cfg: TrainConfig, source: str) -> None:
    """Build one env of the config, so a bad env_id or env_kwargs fails before anything is written."""
    import gymnasium as gym

    import rune_env  # noqa: F401 - registers the envs
    try:
        env = gym.make(cfg.env_id, **cfg.env_kwargs)
    except gym.error.Error as exc:
        raise ConfigError(f"{source}: env_id {cfg.env_id!r}: {exc}") from None
    except (TypeError, ValueError, OSError) as exc:
        raise ConfigError(f"{source}: env_kwargs: {exc}") from None
    env.close()
