"""Expert iteration with sampled search (scripts/expert_iteration.py): a policy taught by its own
search, round after round.

Each iteration: sampled search around the current policy (`sampled:policy=CURRENT,n=N,
temperature=T`, agents/search/sampled.py) plays `runs` runs on demonstration seeds of
`seed + iteration` (training run seeds: never an evaluation's), its steps are recorded
(agents/evaluation/demos.py), and the current policy is fitted to them from its own weights
(masked cross-entropy, `agents.train.pretrain.clone`, the value head left out: the exported
policies have none), then exported as the next current policy. The search's labels are one of
the policy's own rollouts, actions it can represent, so a third or so of the search's gain
reaches the network each time (docs/RESULTS.md, "Sampled search and expert iteration").

Outputs, in `out/`: `iter_<i>/demos.npz` and `iter_<i>/policy.pt` with its card `policy.json`
(start, teacher, rules hash, steps, accuracies, evaluation), `expert_iteration.json` (every
iteration's row, rewritten after each), and TensorBoard `exit/accuracy_before` (how often the
teacher took the policy's own greedy action), `exit/accuracy` (after fitting), `exit/mean_wins`,
`exit/battle_win_rate` (with `eval_episodes`) at step = the iteration. Deterministic: the same
arguments give the same files (torch seeded from `seed`; the demonstrations are the same for
any `jobs`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.cli.progress import bar, say
from agents.evaluation.demos import collect_demos, save_demos

from .config import write_json
from .pretrain import PretrainConfig, accuracy, clone

_TORCH_STREAM = 41      # torch's seed: seed * 1000 + stream + iteration


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
    epochs: int = 30
    batch_size: int = 256
    learning_rate: float = 1e-3
    eval_episodes: int = 0        # evaluation runs of each new policy (0: none)
    eval_seed: int = 0
    rules: str | None = None      # a rules file (None: the defaults)


def _number(x: float) -> str:
    """`x` as short as it reads back exactly (2.0 -> "2", 0.1 -> "0.1")."""
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


def teacher_name(policy: str, s: ExitSettings) -> str:
    name = f"sampled:policy={policy},n={s.n},temperature={_number(s.temperature)}"
    return name + (f",epsilon={_number(s.epsilon)}" if s.epsilon < 1 else "")


def _fit(policy_path: str, demos, s: ExitSettings, iteration: int, writer, progress):
    """The policy of `policy_path` fitted to `demos` from its own weights: (policy, accuracy
    before, accuracy after)."""
    import torch as th

    from agents.policy import load_acting_policy
    th.manual_seed(s.seed * 1000 + _TORCH_STREAM + iteration)     # the value head's new weights
    policy = load_acting_policy(policy_path).float()
    before = accuracy(policy, demos)
    cfg = PretrainConfig(demos="(expert iteration)", epochs=s.epochs, batch_size=s.batch_size,
                         learning_rate=s.learning_rate, value=False)
    clone(policy, demos, cfg, s.seed + iteration, 0.99, writer, progress,
          first_epoch=iteration * s.epochs + 1)
    return policy, before, accuracy(policy, demos)


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
            with bar(s.epochs, f"iteration {i}: fitting", progress, unit="epoch") as pb:
                policy, before, after = _fit(current, demos, s, i, None, pb)
            path = folder / "policy.pt"
            export_policy(policy, path)
            row = {"iteration": i, "start": current, "teacher": teacher, "runs": s.runs,
                   "demo_seed": s.seed + i, "steps": len(demos), "accuracy_before": before,
                   "accuracy": after, "demo_seconds": demo_seconds,
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
