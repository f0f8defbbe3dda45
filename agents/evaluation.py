"""Playing agents through whole runs and summarising them with confidence intervals; what the
training and evaluation scripts write to TensorBoard about an evaluation.

Evaluation run seeds are EVAL_SEED_BASE + offset: at or above the env's TRAINING_SEED_LIMIT, so
an evaluation never replays a run seen in training (training envs draw their run seeds below it).
Evaluation seed s plays run seeds EVAL_SEED_BASE + s * EVAL_SEED_STRIDE + episode, so up to
MAX_EPISODES episodes per seed never overlap another seed's.
"""
from __future__ import annotations

import json
import math
import statistics
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from rune_env.envs.run_env import TRAINING_SEED_LIMIT, RuneRunEnv
from rune_env.rules.config import KINDS

EVAL_SEED_BASE = TRAINING_SEED_LIMIT
EVAL_SEED_STRIDE = 1_000_003
MAX_EPISODES = EVAL_SEED_STRIDE
EVAL_TAGS = ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived", "lamps_left",
             "mean_battle_duration")
BOARD_IMAGES = 4   # runs per evaluation whose final board is drawn into TensorBoard


def eval_run_seed(seed: int, episode: int) -> int:
    """The run seed of evaluation episode `episode` under evaluation seed `seed` (>= 0)."""
    if seed < 0 or episode < 0:
        raise ValueError(f"evaluation seeds and episodes are >= 0 (got seed {seed}, episode {episode})")
    return EVAL_SEED_BASE + seed * EVAL_SEED_STRIDE + episode


def grading(ranks: dict[str, dict]) -> list[str]:
    """What keeps a calibration (`scripts/calibrate_ranks.py`: per rank, easiest first, its
    "pool_win_rate", "pool_ci", "clear_rate") from being graded; [] when it is: each next rank's
    pool win rate lower with the 95% intervals apart (the upper bound below the lower bound of
    the rank before), and the clear rate never rising."""
    problems = []
    names = list(ranks)
    for easy, hard in zip(names, names[1:]):
        e, h = ranks[easy], ranks[hard]
        if not h["pool_win_rate"] < e["pool_win_rate"]:
            problems.append(f"{hard}'s pool win rate {h['pool_win_rate']:.3f} is not below "
                            f"{easy}'s {e['pool_win_rate']:.3f}")
        elif not h["pool_ci"][1] < e["pool_ci"][0]:
            problems.append(f"{easy} and {hard} overlap: [{e['pool_ci'][0]:.3f}, "
                            f"{e['pool_ci'][1]:.3f}] and [{h['pool_ci'][0]:.3f}, "
                            f"{h['pool_ci'][1]:.3f}]")
        if h["clear_rate"] > e["clear_rate"]:
            problems.append(f"the clear rate rises from {easy} ({e['clear_rate']:.3f}) to "
                            f"{hard} ({h['clear_rate']:.3f})")
    return problems


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
             env: RuneRunEnv | None = None, progress=None) -> dict[str, Any]:
    """Play `episodes` runs on evaluation seeds; returns the summary plus the runs.
    `progress` (e.g. a tqdm bar) gets `.update(1)` after each run."""
    env = env or RuneRunEnv(**(env_kwargs or {}))
    runs = []
    for i in range(episodes):
        runs.append(play_run(env, agent, eval_run_seed(seed, i)))
        if progress is not None:
            progress.update(1)
    out = summarise(runs)
    out["runs"] = runs
    return out


# -- what the scripts report about an evaluation -------------------------------------------------
def kind_shares(kinds: dict[str, int]) -> dict[str, float]:
    """Each rune kind's share of the runes on the boards that fought (every kind, 0.0 when absent),
    from a summary's `kinds` counts."""
    total = sum(kinds.values())
    return {k: (kinds.get(k, 0) / total if total else 0.0) for k in KINDS}


def summary_line(summary: dict, label: str) -> str:
    """One line for a log: `label: N runs, battle win rate x [lo, hi], mean wins ..., clear rate ...`."""
    s = summary
    return (f"{label}: {s['episodes']} runs, battle win rate {s['battle_win_rate']:.3f} "
            f"[{s['battle_ci'][0]:.3f}, {s['battle_ci'][1]:.3f}], mean wins {s['mean_wins']:.2f} "
            f"[{s['wins_ci'][0]:.2f}, {s['wins_ci'][1]:.2f}], clear rate {s['clear_rate']:.3f} "
            f"[{s['clear_ci'][0]:.3f}, {s['clear_ci'][1]:.3f}], rounds {s['rounds_survived']:.2f}")


def final_boards(runs: list[dict], rules, count: int = BOARD_IMAGES) -> list:
    """The board each of the first `count` runs took into its last battle."""
    from rune_env.rules import Board
    return [Board.from_json(r["battles"][-1]["board"], rules) for r in runs[:count] if r["battles"]]


def log_evaluation(writer, summary: dict, step: int, rules, *, prefix: str = "eval",
                   image_tag: str | None = "boards/final", cores=None) -> None:
    """An evaluation into TensorBoard at training step `step`: `<prefix>/<tag>` for EVAL_TAGS,
    `<prefix>/kind_share/<kind>` for every kind, with `cores` also `<prefix>/clear_rate_core/<core>`
    and `<prefix>/battle_win_rate_core/<core>` (NaN for a core not played, so that every agent has
    the same tags), and, with `image_tag`, pictures of the first runs' final boards
    (`<image_tag>/<i>`; needs the summary's `runs`). `writer` is a SummaryWriter."""
    for tag in EVAL_TAGS:
        writer.add_scalar(f"{prefix}/{tag}", summary[tag], step)
    for kind, share in kind_shares(summary.get("kinds", {})).items():
        writer.add_scalar(f"{prefix}/kind_share/{kind}", share, step)
    for core in cores or ():
        v = summary["by_core"].get(core, {"clear_rate": float("nan"), "battle_win_rate": float("nan")})
        writer.add_scalar(f"{prefix}/clear_rate_core/{core}", v["clear_rate"], step)
        writer.add_scalar(f"{prefix}/battle_win_rate_core/{core}", v["battle_win_rate"], step)
    if image_tag:
        from rune_env.pictures import board_rgb_array
        for i, board in enumerate(final_boards(summary.get("runs", []), rules)):
            writer.add_image(f"{image_tag}/{i}", board_rgb_array(board, rules, annotate=True), step,
                             dataformats="HWC")
    writer.flush()


def training_step(path: str | Path) -> int | None:
    """How many timesteps a saved policy was trained for, read without loading it: a `.zip`
    checkpoint's `num_timesteps`; for an exported `.pt`, the `timesteps` of the provenance JSON
    beside it (`agents/models/apprentice_s0.json`, a run's `final_policy.json`). None if unknown."""
    path = Path(path)
    try:
        if path.suffix == ".pt":     # torch's own zip: no SB3 data inside
            value = json.loads(path.with_suffix(".json").read_text(encoding="utf-8")).get("timesteps")
        else:
            with zipfile.ZipFile(path) as z:
                value = json.loads(z.read("data")).get("num_timesteps")
    except (OSError, KeyError, ValueError, AttributeError, zipfile.BadZipFile):
        return None
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
