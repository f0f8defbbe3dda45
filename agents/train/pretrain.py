"""Behaviour cloning before PPO: the `pretrain:` section of a training config (`PretrainConfig`;
keys in configs/train/README.md) and `clone`, which fits a MaskablePPO policy to demonstrations
(agents/evaluation/demos.py).

Cloning minimises the cross-entropy of the policy's masked distribution (the one PPO samples
from: illegal actions have probability 0, `agents/train/masking.py`) on the expert's actions, so
it trains the shared feature extractor, the policy's layers and its action head; with `value` it
also fits the value head to each step's Monte-Carlo return (the discounted rewards to the end of
the demonstration's run, with PPO's gamma), so PPO does not start from a critic that knows
nothing, whose first advantages would undo the cloned policy. Each epoch's mean loss and accuracy
(the share of steps whose most likely legal action is the expert's) go to TensorBoard as
`pretrain/loss`, `pretrain/value_loss` and `pretrain/accuracy` (step: the epoch).

Deterministic: the minibatches come from a generator seeded with the config's seed, and nothing
else draws a random number (no dropout), so the same seed and demonstrations give the same
weights on one machine.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from pydantic import Field, StrictBool, model_validator

from agents.cli.args import MAX_RUNS
from agents.evaluation.demos import AGREED, Demos

from .config import Number, Section, Whole

_SHUFFLE = 7       # the seed stream of the minibatches: [seed, _SHUFFLE]
MAX_EPOCHS = 10_000
MAX_BATCH = 1_000_000


class PretrainConfig(Section):
    """Behaviour cloning before PPO: from a demonstrations file (`demos`) or from `runs` runs of
    an agent played now (`agent`, on demonstration seeds of the config's seed)."""
    demos: str | None = None          # a file of scripts/collect_demos.py
    # a policy file (.pt) or saved model (.zip) whose acting weights the policy starts from, so
    # cloning fine-tunes it (expert iteration: a policy taught by its own search)
    init: str | None = None
    agent: str | None = None          # greedy, planner[:KEY=VALUE,...], ... (make_agent's names)
    runs: Whole = Field(20, ge=1, le=MAX_RUNS)
    jobs: Whole = Field(1, ge=1, le=64)          # processes playing the agent's runs
    epochs: Whole = Field(10, ge=1, le=MAX_EPOCHS)
    batch_size: Whole = Field(256, ge=1, le=MAX_BATCH)
    learning_rate: Number = Field(0.001, gt=0, le=1)
    value: StrictBool = True          # also fit the value head to the Monte-Carlo returns
    dagger_rounds: Whole = Field(0, ge=0, le=100)   # with agent: rounds of DAgger after cloning
    dagger_runs: Whole = Field(20, ge=1, le=MAX_RUNS)  # runs the clone plays per round
    # with agent: the rank (or mix of ranks) the demonstration and DAgger runs play, when it is
    # not PPO's (env_kwargs.rank): e.g. teachers shown at every rank, PPO at the top ones
    rank: str | int | list[str | int] | None = None
    strict: StrictBool = False        # refuse a demonstrations file of other rules (else: warn)
    # during PPO: the weight of the cloning loss on the demonstrations in every update, at the
    # start and (linearly) at the end of the run (agents/train/keep.py); 0: PPO alone
    keep: Number = Field(0.0, ge=0, le=100)
    keep_end: Number | None = Field(None, ge=0, le=100)   # default: keep's value throughout

    @model_validator(mode="after")
    def _one_source(self) -> "PretrainConfig":
        if (self.demos is None) == (self.agent is None):
            raise ValueError("give one of demos (a file) and agent (a name), not "
                             + ("both" if self.demos else "neither"))
        if self.rank is not None and self.agent is None:
            raise ValueError("rank needs an agent (a demonstrations file has its own runs)")
        if self.dagger_rounds and self.agent is None:
            raise ValueError("dagger_rounds needs an agent (the expert that labels the runs)")
        return self


def demo_env_kwargs(cfg: PretrainConfig, env_kwargs: dict) -> dict:
    """The env options the agent's demonstration and DAgger runs play under: PPO's, with the
    section's own `rank` when it has one (the rules stay PPO's, so the demonstrations are of the
    rules trained under)."""
    return env_kwargs if cfg.rank is None else {**env_kwargs, "rank": cfg.rank}


def demonstrations(cfg: PretrainConfig, seed: int, env_kwargs: dict, rules_hash: str,
                   progress: bool = False) -> Demos:
    """The section's demonstrations: its file, checked against `rules_hash`, or its agent's runs
    played now (DemosError / ValueError if unusable)."""
    from agents.cli.progress import bar
    from agents.evaluation.demos import collect_demos, load_demos
    if cfg.demos is not None:
        return load_demos(cfg.demos, rules_hash, cfg.strict, env_kwargs)
    with bar(cfg.runs, f"demonstrations ({cfg.agent})", progress) as pb:
        return collect_demos(cfg.agent, cfg.runs, seed, demo_env_kwargs(cfg, env_kwargs),
                             cfg.jobs, pb)


def _forward(policy, obs, legal):
    """(masked distribution, values) of `policy` for a batch."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    dist = policy._get_action_dist_from_latent(latent_pi)
    dist.apply_masking(legal)
    return dist, policy.value_net(latent_vf).flatten()


def cloning_loss(policy, obs, legal, actions):
    """(masked cross-entropy of `policy` on the expert's `actions`, the number of steps whose
    most likely legal action is the expert's, the value head's outputs) for one batch: the loss
    of cloning (`clone`) and of the keep term during PPO (agents/train/keep.py)."""
    dist, values = _forward(policy, obs, legal)
    ce = -dist.log_prob(actions).mean()
    hits = int((dist.distribution.logits.argmax(dim=1) == actions).sum())
    return ce, hits, values


def accuracy(policy, demos: Demos, batch: int = 4096) -> float:
    """The share of the demonstrations' steps whose most likely legal action under `policy` is
    the one taken."""
    return fit_quality(policy, demos, batch)[0]


def fit_quality(policy, demos: Demos, batch: int = 4096) -> tuple[float, float]:
    """(accuracy, mean masked cross-entropy) of `policy` on the demonstrations: the share of
    steps whose most likely legal action is the one taken, and the cloning loss."""
    import torch as th
    legal = demos.legal()
    hits = 0
    loss = 0.0
    with th.no_grad():
        for s in range(0, len(demos), batch):
            dist, _ = _forward(policy, th.as_tensor(demos.obs[s:s + batch]),
                               th.as_tensor(legal[s:s + batch]))
            best = dist.distribution.logits.argmax(dim=1).numpy()
            hits += int((best == demos.actions[s:s + batch]).sum())
            taken = th.as_tensor(demos.actions[s:s + batch].astype(np.int64))
            loss -= float(dist.log_prob(taken).sum())
    return hits / len(demos), loss / len(demos)


def clone(policy, demos: Demos, cfg: PretrainConfig, seed: int, gamma: float,
          writer=None, progress=None, first_epoch: int = 1,
          after_epoch=None) -> list[dict[str, Any]]:
    """Fit `policy` (a MaskableActorCriticPolicy, trained in place) to `demos` for cfg.epochs
    epochs of Adam at cfg.learning_rate in minibatches of cfg.batch_size; each epoch's
    {"epoch", "loss", "value_loss", "accuracy", "seconds"} is returned and, with `writer` (a
    SummaryWriter), logged as pretrain/*. `progress` gets .update(1) per epoch. `after_epoch`,
    if given, is called with each epoch's row (the policy in evaluation mode) and may add to it;
    when it returns True the fitting stops there (early stopping)."""
    import torch as th
    obs = th.as_tensor(demos.obs)
    legal = th.as_tensor(demos.legal())
    actions = th.as_tensor(demos.actions.astype(np.int64))
    returns = th.as_tensor(demos.returns(gamma))
    rng = np.random.default_rng([seed, _SHUFFLE, first_epoch])
    optimizer = th.optim.Adam(policy.parameters(), lr=cfg.learning_rate)
    policy.set_training_mode(True)
    history = []
    start = time.perf_counter()
    n = len(demos)
    for epoch in range(first_epoch, first_epoch + cfg.epochs):
        order = th.as_tensor(rng.permutation(n))
        total = value_total = 0.0
        hits = 0
        for s in range(0, n, cfg.batch_size):
            idx = order[s:s + cfg.batch_size]
            loss, batch_hits, values = cloning_loss(policy, obs[idx], legal[idx], actions[idx])
            value_loss = th.nn.functional.mse_loss(values, returns[idx])
            optimizer.zero_grad()
            (loss + value_loss if cfg.value else loss).backward()
            optimizer.step()
            total += loss.item() * len(idx)
            value_total += value_loss.item() * len(idx)
            hits += batch_hits
        row = {"epoch": epoch, "loss": total / n, "value_loss": value_total / n,
               "accuracy": hits / n, "seconds": time.perf_counter() - start}
        history.append(row)
        stop = False
        if after_epoch is not None:
            policy.set_training_mode(False)
            stop = bool(after_epoch(row))
            policy.set_training_mode(True)
        if writer is not None:
            for k in ("loss", "value_loss", "accuracy"):
                writer.add_scalar(f"pretrain/{k}", row[k], epoch)
        if progress is not None:
            progress.update(1)
        if stop:
            break
    policy.set_training_mode(False)
    return history


def init_from(policy, path: str) -> None:
    """Start `policy` (the model's, before cloning) from the acting weights of the policy file
    `path`: its feature extractor, policy layers and action head; the value head stays the new
    model's (`value` fits it). ValueError naming the file if the networks differ."""
    import torch as th

    from agents.policy import acting_state, load_acting_policy
    try:
        source = acting_state(load_acting_policy(path), "float32")
    except (ValueError, OSError) as exc:
        raise ValueError(f"pretrain.init: {exc}") from None
    target = acting_state(policy, "float32")
    if source.keys() != target.keys() or any(source[k].shape != target[k].shape for k in source):
        shapes = lambda st: ", ".join(f"{k} {tuple(v.shape)}" for k, v in st.items()   # noqa: E731
                                      if k.endswith("weight"))
        raise ValueError(f"pretrain.init: {path}'s network ({shapes(source)}) is not this "
                         f"config's ({shapes(target)}): set policy_kwargs.net_arch to its layers")
    with th.no_grad():
        own = policy.state_dict()
        for k, v in source.items():
            own[k].copy_(v.to(own[k].dtype))


def check_pretrain(cfg: PretrainConfig, env_kwargs: dict, rules_hash: str, source: str) -> Demos | None:
    """Before a run is claimed: the section's demonstrations file, read and checked, or its agent's
    name checked (None); a ConfigError naming `source` and the key otherwise."""
    from agents import make_agent
    from agents.evaluation.demos import DemosError, load_demos
    from rune_env.envs.run_env import resolve_rules

    from .config import ConfigError
    if cfg.init is not None:
        from agents.policy import load_acting_policy
        try:
            load_acting_policy(cfg.init)
        except (ValueError, OSError) as exc:
            raise ConfigError(f"{source}: pretrain.init: {exc}") from None
    if cfg.demos is not None:
        try:
            return load_demos(cfg.demos, rules_hash, cfg.strict, env_kwargs)
        except DemosError as exc:
            raise ConfigError(f"{source}: pretrain.demos: {exc}") from None
    rules = resolve_rules(env_kwargs.get("rules"), env_kwargs.get("rules_overrides"))
    try:
        make_agent(cfg.agent, rules, seed=0)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{source}: pretrain.agent: {exc}") from None
    if cfg.rank is not None:
        from rune_env.envs.arguments import check_rank_mix
        try:
            check_rank_mix(rules, cfg.rank, "pretrain.rank")
        except ValueError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    return None


def pretrain(cfg, model, run_dir, demos: Demos | None, progress: bool = False) -> Demos:
    """The training config `cfg`'s pretrain section on `model`'s policy: its demonstrations
    (`demos`, read by check_pretrain, or its agent's runs played now), cloned; the epochs go to
    TensorBoard (run_dir/tb/pretrain: pretrain/*) and, with the timings, to pretrain.json.
    Returns the demonstrations cloned on (with DAgger's steps), for the keep term."""
    from torch.utils.tensorboard import SummaryWriter

    from agents.cli.progress import bar, say

    from .config import rules_hash, write_json
    p = cfg.pretrain
    start = time.perf_counter()
    if demos is None:
        demos = demonstrations(p, cfg.seed, cfg.env_kwargs, rules_hash(cfg.env_kwargs), progress)
    demo_seconds = time.perf_counter() - start
    gamma = cfg.ppo.gamma if cfg.ppo.gamma is not None else 0.99
    before = accuracy(model.policy, demos)    # of the policy it starts from (init's, or new)
    with SummaryWriter(str(run_dir / "tb" / "pretrain")) as w, \
            bar(p.epochs * (1 + p.dagger_rounds), "cloning", progress) as pb:
        w.add_scalar("pretrain/accuracy", before, 0)
        history = clone(model.policy, demos, p, cfg.seed, gamma, w, pb)
        agreements = []
        for r in range(p.dagger_rounds):
            played = dagger(model, p, cfg.seed, cfg.env_kwargs, run_dir, r)
            # the clone's agreement with its expert on the clone's own states, before it is
            # fitted to them (the DAgger round's labels)
            agreements.append(played.meta[AGREED] / max(1, len(played)))
            w.add_scalar("pretrain/dagger_agreement", agreements[-1], len(history))
            demos = demos.extend(played)
            w.add_scalar("pretrain/dagger_steps", len(demos), len(history))
            history += clone(model.policy, demos, p, cfg.seed, gamma, w, pb, len(history) + 1)
    out = {"agent": demos.meta["agent"], "demos": p.demos, "runs": demos.meta["runs"],
           "steps": len(demos), "rules_hash": demos.meta["rules_hash"],
           "accuracy_before": before, "demo_seconds": demo_seconds,
           "clone_seconds": time.perf_counter() - start - demo_seconds, "epochs": history}
    out["dagger_rounds"] = p.dagger_rounds
    out["dagger_agreement"] = agreements
    write_json(run_dir / "pretrain.json", out)
    last = history[-1]
    say(f"pretrain: {len(demos)} steps of {demos.meta['runs']} runs of {demos.meta['agent']} "
        f"({demo_seconds:.0f} s), {len(history)} epochs ({out['clone_seconds']:.0f} s): accuracy "
        f"{before:.3f} -> {last['accuracy']:.3f}, loss {last['loss']:.3f}")
    return demos


def dagger(model, p: PretrainConfig, seed: int, env_kwargs: dict, run_dir, round_: int) -> Demos:
    """One DAgger round: the clone (exported beside the run, float32) plays `p.dagger_runs` new
    runs (demonstration seeds after the ones already played) and the expert `p.agent` labels
    every state it meets with the action it would take."""
    from agents.evaluation.demos import collect_demos
    from agents.policy import export_policy
    path = run_dir / "pretrain_policy.pt"
    export_policy(model, path, dtype="float32")
    start = p.runs + round_ * p.dagger_runs
    try:
        return collect_demos(p.agent, p.dagger_runs, seed, demo_env_kwargs(p, env_kwargs),
                             p.jobs, start=start,
                             actor=str(path))
    finally:
        path.unlink(missing_ok=True)
        path.with_suffix(".json").unlink(missing_ok=True)
