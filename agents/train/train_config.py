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
                     mapping_or_empty, portable, read_yaml, validate_model)
from .pretrain import PretrainConfig


# Upper bounds of PPO's numbers: far past any setting that learns (PPO's are about 3e-4, 0.2, 0.01,
# 0.5, 0.5), short of those that overflow: a learning rate of 1e300 was a torch overflow inside
# Adam after the run directory was written, 1e30 NaN logits.
MAX_LEARNING_RATE = 1.0
MAX_COEF = 100.0            # clip ranges, loss coefficients, the KL target
MAX_GRAD_NORM = 1e6


class PPOConfig(Section):
    """MaskablePPO's keyword arguments; a key left out keeps SB3's default."""
    learning_rate: Number | None = Field(None, gt=0, le=MAX_LEARNING_RATE)
    n_steps: Whole | None = Field(None, ge=1, le=MAX_ROLLOUT)
    batch_size: Whole | None = Field(None, ge=2, le=MAX_ROLLOUT)
    n_epochs: Whole | None = Field(None, ge=1, le=10_000)
    gamma: Number | None = Field(None, ge=0, le=1)
    gae_lambda: Number | None = Field(None, ge=0, le=1)
    clip_range: Number | None = Field(None, gt=0, le=MAX_COEF)
    clip_range_vf: Number | None = Field(None, gt=0, le=MAX_COEF)
    normalize_advantage: StrictBool | None = None
    ent_coef: Number | None = Field(None, ge=0, le=MAX_COEF)
    vf_coef: Number | None = Field(None, ge=0, le=MAX_COEF)
    max_grad_norm: Number | None = Field(None, gt=0, le=MAX_GRAD_NORM)
    target_kl: Number | None = Field(None, gt=0, le=MAX_COEF)
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
        batch = self.ppo.batch_size
        if batch is not None and batch > n_steps * self.n_envs:
            # SB3 would take the whole rollout as one minibatch, not the size asked (left out,
            # SB3's default of 64 does the same with a shorter rollout, as asked for nothing)
            raise ValueError(f"ppo.batch_size {batch} is more than a rollout's n_steps x n_envs "
                             f"= {n_steps} x {self.n_envs} = {n_steps * self.n_envs} steps")
        return self

    def to_yaml(self) -> dict[str, Any]:
        """The config as config.yaml holds it, its run identity reads it and resumes compare it:
        the repository's files by their paths from its root (`portable`)."""
        data = self.model_dump()
        data["ppo"] = self.ppo.kwargs()
        if self.pretrain is None:
            del data["pretrain"]
        return portable(data)


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
    """Build one env of the config, so a bad env_id or env_kwargs fails before anything is
    written; then the learner's size on it (`check_learner_size`)."""
    import gymnasium as gym

    import rune_env  # noqa: F401 - registers the envs
    try:
        env = gym.make(cfg.env_id, **cfg.env_kwargs)
    except gym.error.Error as exc:
        raise ConfigError(f"{source}: env_id {cfg.env_id!r}: {exc}") from None
    except (TypeError, ValueError, OSError) as exc:
        raise ConfigError(f"{source}: env_kwargs: {exc}") from None
    try:
        # the policy class reads the env's observation as it is: a Dict through
        # MultiInputPolicy's CombinedExtractor, a Box through the others (else an AttributeError
        # from inside SB3, after the run directory was made)
        reads_dict = cfg.policy == "MultiInputPolicy"
        if reads_dict != isinstance(env.observation_space, gym.spaces.Dict):
            raise ConfigError(
                f"{source}: policy {cfg.policy} reads "
                + ("a dict observation; this env's is flat (give env_kwargs.obs_mode: dict)"
                   if reads_dict else "a flat observation; this env's is a dict "
                   "(env_kwargs.obs_mode: dict needs policy: MultiInputPolicy with masking: sb3)"))
        check_learner_size(cfg.ppo, cfg.n_envs, cfg.policy_kwargs, env, source)
    finally:
        env.close()


# The rollout buffer's bound: SB3 allocates it whole when the model is built (observations,
# the legal-action masks as float32, rewards and the rest, for n_steps x n_envs steps). 8 GiB
# is a third of this project's machines; the shipped configs use at most 0.3 GiB.
MAX_ROLLOUT_BYTES = 8 * 2**30


def rollout_bytes(steps: int, inputs: int, actions: int) -> int:
    """A rollout's (or a training batch's) memory: float32 observations and masks, and about 64
    bytes of rewards, values, log-probabilities and the rest, a step."""
    return steps * (4 * inputs + 4 * actions + 64)


def check_learner_size(ppo: PPOConfig, n_envs: int, policy_kwargs: dict, env, source: str) -> None:
    """A ConfigError naming `source` unless a MaskablePPO learner of these settings fits on `env`
    (built: its spaces give the sizes): its rollout buffer, n_steps x n_envs x (observation +
    mask + 64 bytes), at most MAX_ROLLOUT_BYTES, and its network (policy_kwargs' net_arch, SB3's
    64 x 64 by default) at most an exported policy's MAX_PARAMETERS. Each counted per se is in
    bounds (n_steps 10^7, 16 layers of 16,384), but together they allocated 22 GiB and 4.3e9
    weights, or trained a policy its own loader refused."""
    from agents.policy.file import MAX_PARAMETERS, flat_size, mlp_parameters
    inputs, actions = flat_size(env.observation_space), int(env.action_space.n)
    n_steps = ppo.n_steps if ppo.n_steps is not None else 2048
    rollout = rollout_bytes(n_steps * n_envs, inputs, actions)
    if rollout > MAX_ROLLOUT_BYTES:
        raise ConfigError(f"{source}: ppo.n_steps x n_envs = {n_steps} x {n_envs}: the rollout "
                          f"buffer would hold {rollout / 2**30:.1f} GiB ({inputs} observation "
                          f"values and {actions} mask entries a step), more than "
                          f"{MAX_ROLLOUT_BYTES // 2**30} GiB")
    arch = policy_kwargs.get("net_arch", {"pi": [64, 64], "vf": [64, 64]})
    pi, vf = (arch.get("pi", []), arch.get("vf", [])) if isinstance(arch, dict) else (arch, arch)
    weights = mlp_parameters(inputs, pi, vf, actions)[1]
    if weights > MAX_PARAMETERS:
        raise ConfigError(f"{source}: policy_kwargs.net_arch: the network would have {weights:,} "
                          f"parameters on this env ({inputs} inputs, {actions} actions), more "
                          f"than an exported policy may ({MAX_PARAMETERS:,})")
