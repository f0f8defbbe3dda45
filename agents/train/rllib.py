"""RLlib for rune-env (the ray extra): the envs registered for RLlib, the RLModule that masks
illegal actions, the PPO config of a configs/rllib/<name>.yaml, and the export of a trained
module as a policy the project's agents load (scripts/train_rllib.py is the command).

Nothing else in the project imports this module, so without `--ray` or train_rllib.py nothing
imports Ray (docs/SCALE.md).

**The envs** (RLlib names; `register_envs()` registers them, each worker process again):

- `rune_env/RuneRun-v0` and `rune_env/RuneDraft-v0`: Gymnasium's registered env (its time
  limit included) under `MaskedObservation`, whose observation is
  `Dict(observation=<the env's flat Box>, action_mask=Box(0, 1, (N,), int8))`: RLlib's current
  API stack has no `action_masks()` method to call, so the mask travels in the observation.
- `rune_env/RuneDuel-v0`: the PettingZoo duel (`rune_env.duel.parallel_env`) through RLlib's
  `ParallelPettingZooEnv`, a multi-agent env. Its observation already is that dict (PettingZoo's
  convention for masked games). Self-play: both seats map to the one policy `main`
  (`policy_mapping`), which learns from both sides of every duel.

**The module**, `MaskedActorCritic`: two MLPs of the same shape, the policy (`pi_body`,
`pi_head`: the logits) and the value (`vf_body`, `vf_head`), on the `observation` part; the
logits of actions the `action_mask` marks illegal are set to the most negative float, so the
categorical distribution RLlib builds on them gives them probability 0 (sampling, the
log-likelihoods of training, the entropy and argmax alike). Its layers are those of
sb3-contrib's `MaskableActorCriticPolicy` with `net_arch=dict(pi=H, vf=H)` (orthogonal
initialisation with SB3's gains included), so `export_module` copies the weights into that
policy and writes the project's exported `.pt`: `PolicyAgent(path)` plays it in evaluate.py,
ladders, pools and duels like an SB3-trained drafter. A duel module's `wait` logit is dropped in
the export (wait is legal only when it is the only legal action, and the players of
rune_env/duel/single.py and agents/evaluation/duels.py wait for the agent), which gives the 593 actions
and 1780 inputs of the league's policies.
"""
from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from torch import nn

from .rllib_config import DUEL_ENV, ENV_IDS, RUN_ENVS, RLlibConfig
from .config import read_json, write_json

MAIN_POLICY = "main"             # the one policy of self-play in the duel
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


# -- the envs ------------------------------------------------------------------------------------
class MaskedObservation(gym.ObservationWrapper):
    """A RuneRun-v0 / RuneDraft-v0 env whose observation carries its action mask:
    `{"observation": <the env's observation>, "action_mask": int8 0/1 per action}`."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise ValueError("MaskedObservation needs a Discrete action space")
        self.observation_space = gym.spaces.Dict({
            "observation": env.observation_space,
            "action_mask": gym.spaces.Box(0, 1, (int(env.action_space.n),), np.int8)})

    def observation(self, observation):
        return {"observation": observation,
                "action_mask": self.env.unwrapped.action_masks().astype(np.int8)}


def make_env(env_id: str, env_kwargs: dict):
    """One env of `env_id` as RLlib plays it (see the module docstring)."""
    if env_id == DUEL_ENV:
        from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

        from rune_env.duel import parallel_env
        return ParallelPettingZooEnv(parallel_env(**env_kwargs))
    if env_id not in RUN_ENVS:
        raise ValueError(f"env_id must be one of {', '.join(ENV_IDS)}; got {env_id!r}")
    import rune_env  # noqa: F401  (registers the Gymnasium ids)
    return MaskedObservation(gym.make(env_id, **env_kwargs))


def register_envs() -> None:
    """Register ENV_IDS with RLlib's (Tune's) env registry."""
    from ray.tune.registry import register_env
    for env_id in ENV_IDS:
        register_env(env_id, lambda env_config, _id=env_id: make_env(_id, dict(env_config)))


def policy_mapping(agent_id, episode=None, **kwargs) -> str:
    """Self-play: both players of a duel are the one learning policy."""
    return MAIN_POLICY


# -- the module ----------------------------------------------------------------------------------
def _mlp(sizes: list[int], activation) -> nn.Sequential:
    layers: list = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


def _orthogonal(module: nn.Module, gain: float) -> None:
    # SB3's ActorCriticPolicy initialisation (ortho_init): orthogonal weights, zero biases
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=gain)
            m.bias.data.fill_(0.0)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """PPO's actor-critic on `observation`, the illegal actions' logits masked (see the module
    docstring). model_config: `net_arch` (hidden sizes, default [256, 256]), `activation`
    ("tanh", the default, or "relu")."""

    def setup(self):
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or set(space.spaces) != {"observation", "action_mask"}:
            raise ValueError("MaskedActorCritic needs a Dict observation space with the keys "
                             f"'observation' and 'action_mask'; got {space}")
        size = int(np.prod(space["observation"].shape))
        n = int(self.action_space.n)
        hidden = [int(h) for h in self.model_config.get("net_arch", [256, 256])]
        act = ACTIVATIONS[self.model_config.get("activation", "tanh")]
        self.pi_body = _mlp([size] + hidden, act)
        self.vf_body = _mlp([size] + hidden, act)
        self.pi_head = nn.Linear(hidden[-1], n)
        self.vf_head = nn.Linear(hidden[-1], 1)
        for part, gain in ((self.pi_body, np.sqrt(2)), (self.vf_body, np.sqrt(2)),
                           (self.pi_head, 0.01), (self.vf_head, 1.0)):
            _orthogonal(part, gain)

    def logits(self, obs: dict) -> torch.Tensor:
        """The masked logits: FLOAT_MIN (the most negative float32) where the mask is 0."""
        raw = self.pi_head(self.pi_body(obs["observation"]))
        return torch.where(obs["action_mask"] > 0, raw, torch.full_like(raw, FLOAT_MIN))

    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: self.logits(batch[Columns.OBS])}

    def _forward_train(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: self.logits(batch[Columns.OBS])}

    def compute_values(self, batch, embeddings=None):
        return self.vf_head(self.vf_body(batch[Columns.OBS]["observation"])).squeeze(-1)


# -- the algorithm -------------------------------------------------------------------------------
def ppo_config(cfg: RLlibConfig):
    """RLlib's `PPOConfig` for a config: the env, the module, the runners, the seed."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    register_envs()
    p = cfg.ppo
    spec = RLModuleSpec(module_class=MaskedActorCritic,
                        model_config={"net_arch": list(cfg.model.net_arch),
                                      "activation": cfg.model.activation})
    algo = (PPOConfig()
            # RLlib's env check steps the duel with unmasked random actions, which it refuses
            # (IllegalAction); the envs pass Gymnasium's and PettingZoo's own API tests instead
            .environment(cfg.env_id, env_config=dict(cfg.env_kwargs), disable_env_checking=True)
            .framework("torch", torch_compile_learner=False)
            .env_runners(num_env_runners=cfg.num_env_runners,
                         num_envs_per_env_runner=cfg.num_envs_per_env_runner,
                         rollout_fragment_length="auto",
                         # the sub-envs step one after another in the runner's process (RLlib
                         # seeds each from the config's seed, the runner and its index)
                         gym_env_vectorize_mode="sync")
            .learners(num_learners=0)
            .training(lr=p.lr, gamma=p.gamma, lambda_=p.lambda_, clip_param=p.clip_param,
                      vf_clip_param=p.vf_clip_param, entropy_coeff=p.entropy_coeff,
                      vf_loss_coeff=p.vf_loss_coeff, grad_clip=p.grad_clip,
                      grad_clip_by="global_norm", use_kl_loss=p.use_kl_loss, kl_coeff=p.kl_coeff,
                      kl_target=p.kl_target, train_batch_size_per_learner=p.train_batch_size,
                      minibatch_size=p.minibatch_size, num_epochs=p.num_epochs)
            .debugging(seed=int(cfg.seed), log_level="ERROR")
            .reporting(metrics_num_episodes_for_smoothing=100))
    if cfg.duel:
        algo = (algo.multi_agent(policies={MAIN_POLICY}, policy_mapping_fn=policy_mapping,
                                 policies_to_train=[MAIN_POLICY])
                .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN_POLICY: spec})))
    else:
        algo = algo.rl_module(rl_module_spec=spec)
    return algo


def learning_module(algo):
    """The trained module of an Algorithm (the duel's `main`)."""
    from ray.rllib.core import DEFAULT_MODULE_ID
    learner_group = algo.learner_group
    module_id = MAIN_POLICY if MAIN_POLICY in learner_group._learner.module.keys() \
        else DEFAULT_MODULE_ID
    return learner_group._learner.module[module_id]


# -- the export ----------------------------------------------------------------------------------
def to_sb3_policy(module, drop_wait: bool):
    """The module's weights in sb3-contrib's MaskableActorCriticPolicy (the same layers), on the
    observation Box; with `drop_wait`, without the last action (the duel's `wait`)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    obs_space = module.observation_space["observation"]
    n = int(module.action_space.n) - (1 if drop_wait else 0)
    hidden = [m.out_features for m in module.pi_body if isinstance(m, nn.Linear)]
    act = type(next(m for m in module.pi_body if not isinstance(m, nn.Linear)))
    policy = MaskableActorCriticPolicy(
        observation_space=gym.spaces.Box(0.0, 1.0, obs_space.shape, np.float32),
        action_space=gym.spaces.Discrete(n), lr_schedule=lambda _: 0.0,
        net_arch=dict(pi=hidden, vf=hidden), activation_fn=act)
    own = module.state_dict()
    state = {}
    for key, value in own.items():
        part, rest = key.split(".", 1)
        target = {"pi_body": "mlp_extractor.policy_net.", "vf_body": "mlp_extractor.value_net.",
                  "pi_head": "action_net.", "vf_head": "value_net."}[part] + rest
        if drop_wait and part == "pi_head":
            value = value[:n]
        state[target] = value.detach().cpu().to(torch.float32).clone()
    policy.load_state_dict(state)
    policy.set_training_mode(False)
    return policy


def export_module(module, path: str | Path, drop_wait: bool, dtype: str = "float16") -> None:
    """Write the module as the project's exported policy (`agents.policy.export_policy`)."""
    from agents.policy import export_policy
    export_policy(to_sb3_policy(module, drop_wait), path, dtype=dtype)


# -- training ------------------------------------------------------------------------------------
CHECKPOINT = re.compile(r"algo_(\d+)")
HISTORY = "eval_history.jsonl"


def start_ray(address: str | None, num_cpus: int | None = None):
    """Ray for the run: the cluster at `address` ("auto", HOST:PORT), else a local one with
    `num_cpus` CPUs (None: every core). Quiet: no dashboard, workers' logs stay in Ray's files."""
    import logging

    import ray
    # RLlib's and Ray's notices (the new API stack is the default, GPU monitoring, deprecations
    # inside RLlib's own checkpoint code) would bury the run's lines; errors still show
    logging.getLogger("ray").setLevel(logging.ERROR)
    if not ray.is_initialized():
        kwargs = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
        if address:
            ray.init(address=address, **kwargs)
        else:       # "local": a new Ray for this run, even if a `ray start` cluster runs here
            ray.init(address="local", num_cpus=num_cpus, **kwargs)
    return ray


def latest_algo_checkpoint(run_dir: Path) -> tuple[Path | None, int]:
    """The newest `checkpoints/algo_<steps>` of a run and its steps (None, 0 if none)."""
    found = [(int(m.group(1)), d) for d in (run_dir / "checkpoints").glob("algo_*")
             if d.is_dir() and (m := CHECKPOINT.fullmatch(d.name))]
    if not found:
        return None, 0
    steps, d = max(found)
    return d, steps


def _scalars(prefix: str, values: dict, out: dict) -> None:
    for key, value in values.items():
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
                and np.isfinite(value):
            out[f"{prefix}/{key}"] = float(value)


def iteration_scalars(result: dict, module_id: str) -> dict[str, float]:
    """TensorBoard's scalars of one `algo.train()` result: the runners' episode statistics
    (rllib/*) and the learner's losses, entropy and KL (learner/*)."""
    out: dict[str, float] = {}
    runners = result.get("env_runners", {})
    _scalars("rllib", {k: runners[k] for k in ("episode_return_mean", "episode_return_min",
                                               "episode_return_max", "episode_len_mean",
                                               "num_episodes") if k in runners}, out)
    _scalars("learner", result.get("learners", {}).get(module_id, {}), out)
    return out


def evaluate_policy(cfg: RLlibConfig, policy, episodes: int, progress=None) -> dict:
    """The exported (or in-memory SB3) `policy` evaluated as the config says: for a run env the
    project's evaluation (battle win rate, mean wins, clear rate with 95% intervals), for the duel
    a match of `episodes` duels against `cfg.eval.opponent`."""
    from agents import make_agent
    from agents.policy import PolicyAgent
    agent = PolicyAgent(policy)
    if cfg.duel:
        from agents.evaluation.duels import play_match
        res = play_match(agent, make_agent(cfg.eval.opponent), episodes, cfg.eval.seed,
                         dict(cfg.env_kwargs), progress=progress)
        res["opponent"] = cfg.eval.opponent
        return res
    from agents.evaluation.runs import evaluate
    from .config import run_env_kwargs
    return evaluate(agent, episodes, cfg.eval.seed, run_env_kwargs(cfg.env_kwargs),
                    progress=progress)


def log_eval(writer, cfg: RLlibConfig, res: dict, steps: int, image_tag: str) -> None:
    """An evaluation into TensorBoard: for a run env train.py's own tags and board pictures
    (`agents.evaluation.runs.log_evaluation`), for the duel the match's rates (eval/win_rate, ...)."""
    if cfg.duel:
        for key in ("win_rate", "loss_rate", "score"):
            if res.get(key) is not None:
                writer.add_scalar(f"eval/{key}", float(res[key]), steps)
        return
    from rune_env.envs.run_env import resolve_rules

    from agents.evaluation.runs import log_evaluation
    rules = resolve_rules(cfg.env_kwargs.get("rules"), cfg.env_kwargs.get("rules_overrides"))
    log_evaluation(writer, res, steps, rules, image_tag=image_tag, cores=list(rules.spec.cores))


def eval_line(cfg: RLlibConfig, res: dict, steps: int) -> str:
    if cfg.duel:
        lo, hi = res["win_ci"]
        return (f"evaluation at {steps} steps: win rate {res['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] "
                f"against {res['opponent']} in {res['games']} duels")
    from agents.evaluation.runs import summary_line
    return summary_line(res, f"evaluation at {steps} steps")


def train_rllib(cfg: RLlibConfig, run_dir: Path, resume: bool = False, progress: bool = True) -> dict:
    """Train PPO as `cfg` says in `run_dir` (Ray already started): TensorBoard under tb/,
    checkpoints/algo_<steps>/ every checkpoint_every steps, the periodic evaluations
    (eval_history.jsonl), then final_policy.pt (+ final_policy.json) and eval.json. Returns
    eval.json's content."""
    from torch.utils.tensorboard import SummaryWriter

    from agents.cli.progress import bar, say
    from .config import rules_hash

    torch.set_num_threads(cfg.torch_threads)
    algo = ppo_config(cfg).build_algo()
    steps = 0
    if resume:
        ckpt, steps = latest_algo_checkpoint(run_dir)
        if ckpt is not None:
            from agents.policy.trust import check_checkpoint_dir
            check_checkpoint_dir(ckpt)         # pickles: only this machine's, or --trust-pickle
            algo.restore_from_path(str(ckpt.resolve()))
            say(f"resumed from {ckpt} ({steps} steps)")
    module_id = MAIN_POLICY if cfg.duel else "default_policy"
    clock = time.perf_counter()
    seconds = float(read_json(run_dir / "train_seconds.json").get(str(steps), 0.0)) if steps else 0.0
    next_ckpt = (steps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
    every = cfg.eval.every
    next_eval = (steps // every + 1) * every if every else None
    writer = SummaryWriter(str(run_dir / "tb"))
    try:
        with bar(cfg.total_timesteps, "training", progress, unit="step") as pb:
            pb.update(min(steps, cfg.total_timesteps))
            while steps < cfg.total_timesteps:
                t0 = time.perf_counter()
                result = algo.train()
                new = int(result.get("env_runners", {}).get("num_env_steps_sampled", 0))
                if new <= 0:
                    raise RuntimeError("an RLlib iteration sampled no env steps")
                steps += new
                pb.update(min(new, max(0, cfg.total_timesteps - (steps - new))))
                took = time.perf_counter() - t0
                for tag, value in iteration_scalars(result, module_id).items():
                    writer.add_scalar(tag, value, steps)
                writer.add_scalar("time/steps_per_second", new / took, steps)
                if steps >= next_ckpt or steps >= cfg.total_timesteps:
                    _save(algo, run_dir, steps, seconds + time.perf_counter() - clock)
                    next_ckpt = (steps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
                if next_eval is not None and steps >= next_eval:
                    policy = to_sb3_policy(learning_module(algo), drop_wait=cfg.duel)
                    res = evaluate_policy(cfg, policy, cfg.eval.episodes)
                    log_eval(writer, cfg, res, steps, "boards/eval")
                    row = {"timesteps": steps, **{k: v for k, v in res.items() if k != "runs"
                                                  and not isinstance(v, dict)}}
                    with open(run_dir / HISTORY, "a", encoding="utf-8") as f:
                        f.write(json.dumps(row) + "\n")
                    say(eval_line(cfg, res, steps))
                    next_eval = (steps // every + 1) * every
        seconds += time.perf_counter() - clock
        module = learning_module(algo)
        export_module(module, run_dir / "final_policy.pt", drop_wait=cfg.duel)
        res: dict = {}
        if cfg.final_eval_episodes:
            with bar(cfg.final_eval_episodes, "final evaluation", progress) as pb:
                res = evaluate_policy(cfg, run_dir / "final_policy.pt", cfg.final_eval_episodes, pb)
            log_eval(writer, cfg, res, steps, "boards/final")
            say(eval_line(cfg, res, steps) + " (final)")
        res.pop("runs", None)
        res.update(timesteps=steps, train_seconds=seconds)
        write_json(run_dir / "eval.json", res)
        write_json(run_dir / "final_policy.json", {
            "policy": "final_policy.pt",
            "format": "exported MaskableActorCriticPolicy (agents.policy.export_policy) of an "
                      "RLlib PPO module (agents.train.rllib.MaskedActorCritic); load with PolicyAgent(path)",
            "trainer": "rllib", "ray_version": _ray_version(), "env_id": cfg.env_id,
            "checkpoint": f"checkpoints/algo_{steps}", "config": "config.yaml", "seed": cfg.seed,
            "rules_hash": rules_hash(dict(cfg.env_kwargs)), "timesteps": steps,
            "train_seconds": seconds,
            "final_eval": {k: res[k] for k in ("episodes", "games", "battle_win_rate", "mean_wins",
                                               "clear_rate", "win_rate", "loss_rate") if k in res}})
        return res
    finally:
        writer.close()
        algo.stop()


def _save(algo, run_dir: Path, steps: int, seconds: float) -> None:
    """checkpoints/algo_<steps>/ (RLlib's checkpoint; written beside, then renamed, so a killed
    run never leaves half a checkpoint under the name --resume reads) and its train seconds."""
    final = run_dir / "checkpoints" / f"algo_{steps}"
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    algo.save_to_path(str(tmp.resolve()))
    from agents.policy.trust import sign_directory
    sign_directory(tmp, final)            # its files as saved: --resume restores only these
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    times = read_json(run_dir / "train_seconds.json")
    times[str(steps)] = seconds
    write_json(run_dir / "train_seconds.json", times)


def _ray_version() -> str:
    import ray
    return ray.__version__
