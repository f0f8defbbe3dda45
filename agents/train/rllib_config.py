"""The config of an RLlib training run (configs/rllib/<name>.yaml; keys in
configs/rllib/README.md), read and checked without Ray, so a bad config is one `error: ...` line
whether or not the ray extra is installed. agents/train/rllib.py builds RLlib's PPO from it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agents.cli.args import MAX_CPUS, MAX_ENVS, MAX_ROLLOUT, MAX_STEPS, MAX_THREADS, SEED_MAX
from agents.evaluation.runs import MAX_EPISODES
from agents.policy.file import MAX_LAYERS, MAX_WIDTH

from .config import (RUN_NAME, ConfigError, Mapping, Number, Section, Whole, read_yaml,
                     validate_model)
from .train_config import MAX_COEF, MAX_GRAD_NORM, MAX_LEARNING_RATE

RUN_ENVS = ("rune_env/RuneRun-v0", "rune_env/RuneDraft-v0")
DUEL_ENV = "rune_env/RuneDuel-v0"
ENV_IDS = RUN_ENVS + (DUEL_ENV,)


# -- the config ----------------------------------------------------------------------------------
class RLlibPPOConfig(Section):
    """RLlib PPO's training settings (`PPOConfig.training`), with RLlib's names."""
    lr: Number = Field(3e-4, gt=0, le=MAX_LEARNING_RATE)
    gamma: Number = Field(0.99, ge=0, le=1)
    lambda_: Number = Field(0.95, ge=0, le=1)
    clip_param: Number = Field(0.2, gt=0, le=MAX_COEF)
    vf_clip_param: Number = Field(10.0, gt=0, le=MAX_GRAD_NORM)
    entropy_coeff: Number = Field(0.01, ge=0, le=MAX_COEF)
    vf_loss_coeff: Number = Field(0.5, ge=0, le=MAX_COEF)
    grad_clip: Number | None = Field(0.5, gt=0, le=MAX_GRAD_NORM)
    use_kl_loss: bool = False
    kl_coeff: Number = Field(0.2, ge=0, le=MAX_COEF)
    kl_target: Number = Field(0.01, gt=0, le=MAX_COEF)
    train_batch_size: Whole = Field(2048, ge=2, le=MAX_ROLLOUT)     # env steps per training iteration
    minibatch_size: Whole = Field(256, ge=2, le=MAX_ROLLOUT)
    num_epochs: Whole = Field(4, ge=1, le=10_000)

    @model_validator(mode="after")
    def _minibatch(self) -> "RLlibPPOConfig":
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= "
                             f"train_batch_size ({self.train_batch_size})")
        return self


class ModelConfig(Section):
    """The module's two MLPs (policy and value, the same hidden sizes), within the bounds of an
    exported policy's network (agents/policy/file.py: at most MAX_LAYERS layers of MAX_WIDTH):
    a config of a million-wide layer would otherwise allocate its weights in every worker."""
    net_arch: list[Whole] = Field([256, 256], min_length=1, max_length=MAX_LAYERS)
    activation: Literal["tanh", "relu"] = "tanh"

    @model_validator(mode="after")
    def _sizes(self) -> "ModelConfig":
        if any(not 1 <= h <= MAX_WIDTH for h in self.net_arch):
            raise ValueError(f"net_arch sizes must be in 1..{MAX_WIDTH}; got {self.net_arch}")
        return self


class RLlibEvalConfig(Section):
    """The evaluation of the exported policy during and after training: RuneRun-v0 runs on the
    evaluation seeds (the measure train.py reports), or for the duel, duels against `opponent`."""
    every: Whole = Field(0, ge=0, le=MAX_STEPS)                 # env steps between evaluations; 0: none
    episodes: Whole = Field(20, ge=1, le=MAX_EPISODES)
    seed: Whole = Field(0, ge=0, le=SEED_MAX)
    opponent: str = "greedy"                        # the duel's evaluation opponent (an agent name)


class RLlibConfig(Section):
    """An RLlib training config (configs/rllib/*.yaml; keys in configs/rllib/README.md)."""
    name: str | None = Field(None, pattern="^" + RUN_NAME.pattern + "$")
    env_id: Literal[ENV_IDS] = "rune_env/RuneRun-v0"
    env_kwargs: Mapping = {}
    seed: Whole = Field(0, ge=0, le=SEED_MAX)
    total_timesteps: Whole = Field(100_000, ge=1, le=MAX_STEPS)
    num_env_runners: Whole = Field(0, ge=0, le=MAX_CPUS)       # 0: the driver samples (reproducible)
    num_envs_per_env_runner: Whole = Field(4, ge=1, le=MAX_ENVS)
    torch_threads: Whole = Field(1, ge=1, le=MAX_THREADS)
    ppo: RLlibPPOConfig = RLlibPPOConfig()
    model: ModelConfig = ModelConfig()
    checkpoint_every: Whole = Field(50_000, ge=1, le=MAX_STEPS)
    eval: RLlibEvalConfig = RLlibEvalConfig()
    final_eval_episodes: Whole = Field(100, ge=0, le=MAX_EPISODES)

    @property
    def duel(self) -> bool:
        return self.env_id == DUEL_ENV

    def to_yaml(self) -> dict[str, Any]:
        from .config import portable
        return portable(self.model_dump())     # the repository's files from its root


SECTIONS = {(): RLlibConfig, ("ppo",): RLlibPPOConfig, ("model",): ModelConfig,
            ("eval",): RLlibEvalConfig}


def read_rllib_config(path: str | Path, overrides: dict | None = None) -> RLlibConfig:
    """A configs/rllib YAML with the command line's overrides, validated (one ConfigError naming
    the file and the key). The name defaults to the file's stem."""
    data = read_yaml(path, overrides)
    data = {} if data is None else data
    if isinstance(data, dict) and data.get("name") is None:
        data["name"] = Path(path).stem
    return validate_model(RLlibConfig, data, str(path), "an RLlib config", SECTIONS)


def check_env(cfg: RLlibConfig, source: str) -> None:
    """Build one env of the config, so a bad env_kwargs fails before Ray starts or anything is
    written (ConfigError naming the config)."""
    try:
        if cfg.duel:
            from rune_env.duel import parallel_env
            env = parallel_env(**cfg.env_kwargs)
            agent = env.possible_agents[0]
            obs_space, actions = env.observation_space(agent), env.action_space(agent)
        else:
            import gymnasium as gym

            import rune_env  # noqa: F401  (registers the Gymnasium ids)
            env = gym.make(cfg.env_id, **cfg.env_kwargs)
            obs_space, actions = env.observation_space, env.action_space
        env.close()
    except (TypeError, ValueError, KeyError) as exc:
        raise ConfigError(f"{source}: env_kwargs: {exc}") from None
    from agents.policy.file import flat_size

    from .train_config import MAX_ROLLOUT_BYTES, rollout_bytes
    values = flat_size(obs_space)
    batch = rollout_bytes(cfg.ppo.train_batch_size, values, int(actions.n))
    if batch > MAX_ROLLOUT_BYTES:      # RLlib holds a whole training batch
        raise ConfigError(f"{source}: ppo.train_batch_size {cfg.ppo.train_batch_size}: a batch "
                          f"would hold {batch / 2**30:.1f} GiB ({values} observation values a "
                          f"step), more than {MAX_ROLLOUT_BYTES // 2**30} GiB")
    if cfg.duel:                       # the evaluation opponent, before anything trains
        from agents import make_agent
        from rune_env.envs.run_env import resolve_rules
        try:
            make_agent(cfg.eval.opponent, resolve_rules(cfg.env_kwargs.get("rules"),
                                                        cfg.env_kwargs.get("rules_overrides")))
        except (ValueError, OSError) as exc:
            raise ConfigError(f"{source}: eval.opponent: {' '.join(str(exc).split())}") from None
