"""Expert iteration with sampled search (scripts/expert_iteration.py): a policy taught by its own
search, round after round.

Each iteration: sampled search around the current policy (`sampled:policy=CURRENT,n=N,
temperature=T[,epsilon=P]`, agents/search/sampled.py) plays `runs` runs on demonstration seeds of
`seed + iteration` (training run seeds: never an evaluation's), its steps are recorded
(agents/evaluation/demos.py), and the current policy is fitted to them from its own weights
(masked cross-entropy, `agents.train.pretrain.clone`, the value head left out: the exported
policies have none), then exported as the next current policy. The search's labels are one of
the policy's own rollouts, actions it can represent, so a third or so of the search's gain
reaches the network each time (docs/RESULTS.md, "Sampled search and expert iteration").

Options of the fit: `keep_demos` fits the last K iterations' demonstrations together (DAgger's
aggregation) and `extra_demos` adds files of earlier runs to every iteration's; `holdout` holds a
share of those runs out (whole runs, drawn by the seed) and keeps the epoch whose held-out loss
is lowest, the start policy if none is (early stopping, `patience` epochs after the best): the
search's labels are noisy (it agrees with itself under another seed on about 0.88 of its
actions), and 30 epochs at 1e-3 fit the noise, the held-out loss rising from the first epoch.
Yet those fits raised play at archmage, and with `holdout` at 1e-3 no epoch is kept: the held-out
figures are a measure to watch the fit by, not (at that rate) a rule to stop it by
(docs/RESULTS.md, "Why the iterations stalled, and the core").

Outputs, in `out/`: `iter_<i>/demos.npz` and `iter_<i>/policy.pt` with its card `policy.json`
(start, teacher, rules hash, steps, accuracies, evaluation), `expert_iteration.json` (every
iteration's row, rewritten after each), and TensorBoard `exit/accuracy_before` (how often the
teacher took the policy's own greedy action), `exit/accuracy` (after fitting), `exit/mean_wins`,
`exit/battle_win_rate` (with `eval_episodes`), `exit/val_loss` and `exit/val_accuracy` (with
`holdout`; and `exit/epoch_val_loss` per epoch) at step = the iteration. Deterministic: the same
arguments give the same files (torch seeded from `seed`; the demonstrations are the same for
any `jobs`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.cli.progress import bar, say
from agents.evaluation.demos import collect_demos, load_demos, save_demos

from .config import write_json
from .pretrain import PretrainConfig, accuracy, clone, fit_quality

_TORCH_STREAM = 41      # torch's seed: seed * 1000 + stream + iteration
_HOLDOUT_STREAM = 42    # the held-out runs' draw: [seed, stream, iteration]


@dataclass(frozen=True)
class ExitSettings:
    policy: str                   # the policy to start from (.pt or .zip)
    iterations: int = 1
    runs: int = 3000              # runs of the search per iteration
    rank: str = "archmage"
    seed: int = 0
    jobs: int = 1
    n: int = 16                   # the search's rollouts a round
    temperature: float = 2.0      # its sampled rollouts' temperature
    epsilon: float = 1.0          # the share of a sampled rollout's steps that sample
    core: str | None = None       # the core the search takes at a run's start (None: the policy's)
    waste: float = 0.0            # the search's thrift: mana lost for good, per round's income
    invest: float = 0.0           # and the share of wealth its board holds (sampled.py)
    epochs: int = 30
    batch_size: int = 256
    learning_rate: float = 1e-3
    # the share of the fitted runs held out to measure the fit: with it, each epoch's held-out
    # loss is recorded, the epoch with the lowest is kept (the start if none is lower) and the
    # fitting stops `patience` epochs after it; 0: every epoch, as before
    holdout: float = 0.0
    patience: int = 3
    keep_demos: int = 1           # the last K iterations' demonstrations fitted together
    extra_demos: tuple[str, ...] = ()   # demonstrations files fitted in every iteration too
    eval_episodes: int = 0        # evaluation runs of each new policy (0: none)
    eval_seed: int = 0
    rules: str | None = None      # a rules file (None: the defaults)


def _number(x: float) -> str:
    """`x` as short as it reads back exactly (2.0 -> "2", 0.1 -> "0.1")."""
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


def teacher_name(policy: str, s: ExitSettings) -> str:
    name = f"sampled:policy={policy},n={s.n},temperature={_number(s.temperature)}"
    return (name + (f",epsilon={_number(s.epsilon)}" if s.epsilon < 1 else "")
            + (f",core={s.core}" if s.core is not None else "")
            + (f",waste={_number(s.waste)}" if s.waste > 0 else "")
            + (f",invest={_number(s.invest)}" if s.invest > 0 else ""))


def split_holdout(demos, share: float, seed: int, iteration: int):
    """(fitted, held out): a `share` of the demonstrations' runs (at least one, whole runs, drawn
    from [seed, _HOLDOUT_STREAM, iteration]) held out, the rest fitted."""
    import numpy as np
    runs = np.unique(demos.run_seeds)
    if len(runs) < 2:
        raise ValueError(f"holdout needs at least 2 runs to split, got {len(runs)}")
    count = min(len(runs) - 1, max(1, round(share * len(runs))))
    held = np.random.default_rng([seed, _HOLDOUT_STREAM, iteration]).choice(runs, count,
                                                                             replace=False)
    out = np.isin(demos.run_seeds, held)
    return demos.select(~out), demos.select(out)


def _fit(policy_path: str, demos, own, s: ExitSettings, iteration: int, writer, progress):
    """The policy of `policy_path` fitted to `demos` from its own weights: (policy, its accuracy
    on this iteration's demonstrations `own` before fitting, the fit's numbers: the held-out
    ones with `s.holdout`)."""
    import torch as th

    from agents.policy import load_acting_policy
    th.manual_seed(s.seed * 1000 + _TORCH_STREAM + iteration)     # the value head's new weights
    policy = load_acting_policy(policy_path).float()
    before = accuracy(policy, own)
    cfg = PretrainConfig(demos="(expert iteration)", epochs=s.epochs, batch_size=s.batch_size,
                         learning_rate=s.learning_rate, value=False)
    first = iteration * s.epochs + 1
    if not s.holdout:
        history = clone(policy, demos, cfg, s.seed + iteration, 0.99, writer, progress,
                        first_epoch=first)
        return policy, before, {"fit_steps": len(demos), "epochs_fitted": len(history)}
    fitted, held = split_holdout(demos, s.holdout, s.seed, iteration)
    val_accuracy, val_loss = fit_quality(policy, held)
    best = {"loss": val_loss, "accuracy": val_accuracy, "epoch": 0,
            "state": {k: v.clone() for k, v in policy.state_dict().items()}}
    curve: list[float] = []          # each epoch's held-out loss

    def after_epoch(row):
        row["val_accuracy"], row["val_loss"] = fit_quality(policy, held)
        curve.append(row["val_loss"])
        if writer is not None:
            writer.add_scalar("exit/epoch_val_loss", row["val_loss"], row["epoch"])
        done = row["epoch"] - first + 1
        if row["val_loss"] < best["loss"]:
            best.update(loss=row["val_loss"], accuracy=row["val_accuracy"], epoch=done,
                        state={k: v.clone() for k, v in policy.state_dict().items()})
        return done - best["epoch"] >= s.patience

    clone(policy, fitted, cfg, s.seed + iteration, 0.99, writer, progress, first_epoch=first,
          after_epoch=after_epoch)
    policy.load_state_dict(best["state"])
    policy.set_training_mode(False)
    return policy, before, {"fit_steps": len(fitted), "holdout_runs": int(held.meta["runs"]),
                    "holdout_steps": len(held), "val_accuracy_before": val_accuracy,
                    "val_loss_before": val_loss, "val_accuracy": best["accuracy"],
                    "val_loss": best["loss"], "epochs_fitted": best["epoch"],
                    "epoch_val_losses": curve}


def run_expert_iteration(s: ExitSettings, out: Path, progress: bool = False,
                         lines: bool = True) -> list[dict[str, Any]]:
    """Run `s.iterations` iterations into `out` (created by the caller); returns their rows.
    `lines`: print a line per iteration. Every file is written whole (atomically): a run
    stopped midway leaves the iterations it finished, listed in expert_iteration.json."""
    from torch.utils.tensorboard import SummaryWriter

    from agents.evaluation.runs import evaluate
    from agents.policy import PolicyAgent, export_policy
    from rune_env.envs.run_env import resolve_rules
    rules = resolve_rules(s.rules, None)
    env_kwargs: dict = {"rank": s.rank, **({"rules": s.rules} if s.rules else {})}
    current = s.policy
    rows: list[dict[str, Any]] = []
    extra = None
    for path in s.extra_demos:       # of these rules only (a DemosError names the file)
        d = load_demos(path, rules.hash, strict=True, env_kwargs=env_kwargs)
        extra = d if extra is None else extra.extend(d)
    recent: list = []                # the last keep_demos iterations' demonstrations
    with SummaryWriter(str(out / "tb")) as w:
        for i in range(1, s.iterations + 1):
            start = time.perf_counter()
            folder = out / f"iter_{i}"
            folder.mkdir(parents=True, exist_ok=True)
            teacher = teacher_name(current, s)
            with bar(s.runs, f"iteration {i}: {teacher}", progress) as pb:
                demos = collect_demos(teacher, s.runs, s.seed + i, env_kwargs, s.jobs, pb)
            save_demos(demos, folder / "demos.npz")
            demo_seconds = time.perf_counter() - start
            recent = (recent + [demos])[-s.keep_demos:]
            fitted = recent[0]
            for d in recent[1:] + ([extra] if extra is not None else []):
                fitted = fitted.extend(d)
            with bar(s.epochs, f"iteration {i}: fitting", progress, unit="epoch") as pb:
                policy, before, fit = _fit(current, fitted, demos, s, i,
                                           w if s.holdout else None, pb)
            after = accuracy(policy, demos)
            path = folder / "policy.pt"
            export_policy(policy, path)
            row = {"iteration": i, "start": current, "teacher": teacher, "runs": s.runs,
                   "demo_seed": s.seed + i, "steps": len(demos), "accuracy_before": before,
                   "accuracy": after, **fit, "demo_seconds": demo_seconds,
                   "fit_seconds": time.perf_counter() - start - demo_seconds,
                   "policy": str(path)}
            if s.eval_episodes:
                with bar(s.eval_episodes, f"iteration {i}: evaluation", progress) as pb:
                    res = evaluate(PolicyAgent(str(path)), s.eval_episodes, s.eval_seed,
                                   env_kwargs, progress=pb)
                row["eval"] = {k: res[k] for k in ("episodes", "battle_win_rate", "mean_wins",
                                                   "wins_ci", "clear_rate") if k in res}
                row["eval"]["seed"] = s.eval_seed
                w.add_scalar("exit/mean_wins", res["mean_wins"], i)
                w.add_scalar("exit/battle_win_rate", res["battle_win_rate"], i)
            w.add_scalar("exit/accuracy_before", before, i)
            w.add_scalar("exit/accuracy", after, i)
            for k in ("val_loss", "val_accuracy"):
                if k in fit:
                    w.add_scalar(f"exit/{k}", fit[k], i)
            write_json(path.with_suffix(".json"), {
                "policy": "policy.pt", "format": "exported MaskableActorCriticPolicy; load with "
                "PolicyAgent(path)", "made_by": "scripts/expert_iteration.py",
                "rules_hash": rules.hash, "settings": asdict(s), **row})
            rows.append(row)
            write_json(out / "expert_iteration.json", {"settings": asdict(s),
                                                       "rules_hash": rules.hash,
                                                       "iterations": rows})
            if lines:
                say(f"iteration {i}: {len(demos)} steps, the policy's own action {before:.3f} -> "
                    f"{after:.3f}" + (f"; mean wins {row['eval']['mean_wins']:.3f} over "
                                      f"{s.eval_episodes} runs" if s.eval_episodes else ""))
            current = str(path)
    return rows
