"""Playing agents through whole runs and summarising them with confidence intervals.

Evaluation run seeds are EVAL_SEED_BASE + offset: at or above the env's TRAINING_SEED_LIMIT, so
an evaluation never replays a run seen in training (training envs draw their run seeds below it).
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

from rune_env.envs.run_env import TRAINING_SEED_LIMIT, RuneRunEnv

EVAL_SEED_BASE = TRAINING_SEED_LIMIT


def eval_run_seed(seed: int, episode: int) -> int:
    """The run seed of evaluation episode `episode` under evaluation seed `seed` (>= 0)."""
    if seed < 0 or episode < 0:
        raise ValueError(f"evaluation seeds and episodes are >= 0 (got seed {seed}, episode {episode})")
    return EVAL_SEED_BASE + seed * 1_000_003 + episode


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_ci(values: list[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean and normal-approximation 95% interval."""
    n = len(values)
    if n == 0:
        return (float("nan"),) * 3
    m = statistics.fmean(values)
    if n == 1:
        return (m, m, m)
    half = z * statistics.stdev(values) / math.sqrt(n)
    return (m, m - half, m + half)


def play_run(env: RuneRunEnv, agent, run_seed: int) -> dict[str, Any]:
    """One whole run; returns its summary and the summaries of its battles."""
    obs, info = env.reset(options={"run_seed": run_seed})
    agent.reset(run_seed)
    battles = []
    max_steps = env.rules.spec.run.round_cap * (env.rules.spec.run.action_cap + 2) + 1
    for _ in range(max_steps):
        state = env.state if getattr(agent, "needs_state", False) else None
        action = agent.act(obs, info["action_mask"], state=state)
        obs, reward, terminated, truncated, info = env.step(action)
        if info.get("battle") is not None:
            battles.append(info["battle"])
        if terminated or truncated:
            break
    s = env.state
    return {"run_seed": run_seed, "wins": s.wins, "losses": s.losses, "draws": s.draws,
            "cleared": s.cleared, "rounds": len(battles), "lamps": s.lamps, "core": s.core,
            "battles": battles}


def summarise(runs: list[dict]) -> dict[str, Any]:
    battles = [b for r in runs for b in r["battles"]]
    won = sum(b["outcome"] == "win" for b in battles)
    wins = [r["wins"] for r in runs]
    cleared = sum(r["cleared"] for r in runs)
    mean_wins, lo, hi = mean_ci(wins)
    by_core: dict[str, dict] = {}
    for core, group in _group(runs, "core").items():
        bs = [b for r in group for b in r["battles"]]
        by_core[core] = {"runs": len(group),
                         "battle_win_rate": sum(b["outcome"] == "win" for b in bs) / len(bs) if bs else 0.0,
                         "clear_rate": sum(r["cleared"] for r in group) / len(group)}
    kinds = Counter(k for b in battles for k in b.get("kinds", []))
    return {
        "episodes": len(runs),
        "battles": len(battles),
        "battle_win_rate": won / len(battles) if battles else 0.0,
        "battle_ci": list(wilson(won, len(battles))),
        "mean_wins": mean_wins,
        "wins_ci": [max(0.0, lo), hi],
        "clear_rate": cleared / len(runs) if runs else 0.0,
        "clear_ci": list(wilson(cleared, len(runs))),
        "rounds_survived": statistics.fmean(r["rounds"] for r in runs) if runs else 0.0,
        "lamps_left": statistics.fmean(r["lamps"] for r in runs) if runs else 0.0,
        "mean_battle_duration": statistics.fmean(b["time"] for b in battles) if battles else 0.0,
        "by_core": by_core,
        "kinds": dict(sorted(kinds.items())),
    }


def _group(runs: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in runs:
        out.setdefault(str(r[key]), []).append(r)
    return dict(sorted(out.items()))


def evaluate(agent, episodes: int, seed: int = 0, env_kwargs: dict | None = None,
             env: RuneRunEnv | None = None) -> dict[str, Any]:
    """Play `episodes` runs on evaluation seeds; returns the summary plus the runs."""
    env = env or RuneRunEnv(**(env_kwargs or {}))
    runs = [play_run(env, agent, eval_run_seed(seed, i)) for i in range(episodes)]
    out = summarise(runs)
    out["runs"] = runs
    return out
