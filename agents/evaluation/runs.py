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
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from rune_env import max_episode_steps
from rune_env.battle.fast import warm_up
from rune_env.envs.run_env import TRAINING_SEED_LIMIT, RuneRunEnv
from rune_env.rules.config import KINDS

EVAL_SEED_BASE = TRAINING_SEED_LIMIT
EVAL_SEED_STRIDE = 1_000_003
# at most a stride of runs under one evaluation seed: one more would be the next seed's first run
# (hence the odd bound the scripts' --episodes show, 1..1000003)
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
    return wilson_share(k / n, n, z)


def wilson_share(p: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval of a share p observed over n (> 0) trials, n not necessarily
    whole (`wilson_mean`'s effective number of runs), kept inside [0, 1]."""
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def wilson_clustered(successes: list[int], trials: list[int],
                     z: float = 1.96) -> tuple[float, float, float]:
    """A rate pooled over clusters (a run's battles: sum of wins / sum of battles) and its 95%
    interval: Wilson's on an effective number of trials, the trials divided by the design effect
    (the ratio estimator's variance across clusters over the binomial variance), never more than
    the trials themselves. A run's battles are not independent (the same board, grown round by
    round), so Wilson on every battle would be too narrow; this widens it by what the runs' own
    spread shows, as `wilson_mean` does for mean wins."""
    k = len(trials)
    total = sum(trials)
    if k == 0 or total == 0:
        return (float("nan"), 0.0, 1.0)
    p = sum(successes) / total
    if k == 1 or p in (0.0, 1.0):
        lo, hi = wilson_share(p, total, z)
        return (p, lo, hi)
    # the cluster-robust variance of a ratio estimator: residuals of each cluster's count
    residual = sum((s - p * t) ** 2 for s, t in zip(successes, trials))
    variance = k / (k - 1) * residual / total**2
    design_effect = variance / (p * (1 - p) / total)
    lo, hi = wilson_share(p, total / max(1.0, design_effect), z)
    return (p, lo, hi)


def wilson_mean(values: list[float], upper: float, z: float = 1.96) -> tuple[float, float, float]:
    """Mean of values in [0, upper] (a run's wins: 0..wins_to_clear) and its 95% interval:
    Wilson's score interval for the mean share m / upper, on an effective number of runs
    n x (the most variance values in [0, upper] with mean m can have, m (upper - m)) / (their
    sample variance), never fewer than n (a design effect, as survey statistics use it).

    Why not Wilson on n alone (this function before the forty-second session): that treats every
    run as all wins or none, the widest spread a mean can have, and at archmage, where a run wins
    0-3 battles, its "95%" interval covered the true mean in every one of thousands of simulated
    samples and was three times as wide as it needed to be (tests/agents/test_intervals.py,
    test_mean_wins_interval_covers_95_percent). With the runs' own spread it covers about 95%
    (92-96% in simulations from 20 runs up, two and three lamps, means from 0.1 to 9.9; 90% at 200
    runs that nearly all clear, a mean of 9.93; where runs bunch at the bound with a few far
    below, resampled from 20 real journeyman runs of sixteen 10s, two 8s and two 0s, 86% at 20
    runs and 93% at 30: a sample with one run off the bound has almost no spread, fifty-first
    session), and
    keeps Wilson's virtues: it stays inside [0, upper] without clipping and leans away from the
    bound a mean is near. When every run is alike (no spread seen, so nothing known of it) the
    worst case stands: 15 runs of 10 wins of 10 give [7.96, 10], not [10, 10]."""
    n = len(values)
    if n == 0:
        return (float("nan"),) * 3
    # as floats: `statistics.variance` keeps numpy integers' type and divides them as integers
    # (the variance of np.int64 [0, 1, 2, 1] comes out 0, not 2/3)
    values = [float(v) for v in values]
    m = statistics.fmean(values)
    p = m / upper
    widest = m * (upper - m)                      # the variance of runs that win all or nothing
    spread = statistics.variance(values) if n > 1 else 0.0
    n_eff = n * widest / spread if 0.0 < spread < widest else n
    lo, hi = wilson_share(p, n_eff, z)
    return (m, upper * lo, upper * hi)


def eval_context(env_kwargs: dict | None, episodes: int, seed: int, rules) -> dict[str, Any]:
    """What an evaluation was played against, for its records (TensorBoard text, CSV, JSON): the
    rank, the opponents (the rank's shipped pool, the budget drafter, a pool file, an agent), the
    rules hash, the runs and the evaluation seed."""
    from rune_env.envs.arguments import check_rank_mix
    from rune_env.envs.run_env import shipped_pool
    kw = dict(env_kwargs or {})
    mix = check_rank_mix(rules, kw.get("rank", "apprentice"))
    names = [rules.spec.ranks[r].id for r in mix]
    # a mix (each run's rank drawn from it by its seed) is named by its ranks joined by "+"
    rank_name = "+".join(names)
    opponents = kw.get("opponents")
    if opponents is None:
        pools = [shipped_pool(rules, r) for r in dict.fromkeys(mix)]
        opponents = ("shipped pool " + ", ".join(p.name for p in pools) if all(pools)
                     else "budget drafter" if not any(pools)
                     else "shipped pools (the budget drafter where none is shipped)")
    elif opponents == "generator":
        opponents = "budget drafter"
    elif not isinstance(opponents, str):
        opponents = type(opponents).__name__
    return {"rank": rank_name, "opponents": str(opponents), "rules_hash": rules.hash,
            "episodes": episodes, "seed": seed}


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
    thinking = 0.0          # CPU seconds in agent.act (the agent's speed, not the game's)
    actions = 0
    for _ in range(max_episode_steps(env.rules)):     # the run env's own TimeLimit
        state = env.state if agent.needs_state else None
        start = time.process_time()
        action = agent.act(obs, info["action_mask"], state=state)
        thinking += time.process_time() - start
        actions += 1
        obs, reward, terminated, truncated, info = env.step(action)
        if info.get("battle") is not None:
            battles.append(info["battle"])
        if terminated or truncated:
            break
    s = env.state
    return {"run_seed": run_seed, "wins": s.wins, "losses": s.losses, "draws": s.draws,
            "cleared": s.cleared, "rounds": len(battles), "lamps": s.lamps, "core": s.core,
            "battles": battles, "actions": actions, "act_seconds": thinking}


def summarise(runs: list[dict], max_wins: int | None = None) -> dict[str, Any]:
    """The runs' rates with 95% intervals: for the battle win rate Wilson's clustered by run
    (`wilson_clustered`, since the fifty-first session; Wilson's on every battle before), for the
    clear rate Wilson's, and for mean wins Wilson's on wins / `max_wins` (a run's most wins, the
    rules' wins_to_clear; default: the most any run had, at least 1) over an effective number of
    runs (`wilson_mean`)."""
    battles = [b for r in runs for b in r["battles"]]
    won_by_run = [sum(b["outcome"] == "win" for b in r["battles"]) for r in runs]
    won = sum(won_by_run)
    # a run's battles share its board, grown round by round: the battle win rate's interval is
    # clustered by run (Wilson's on every battle as if independent was 20-25% too narrow)
    _, battle_lo, battle_hi = wilson_clustered(won_by_run, [len(r["battles"]) for r in runs])
    wins = [r["wins"] for r in runs]
    cleared = sum(r["cleared"] for r in runs)
    upper = max([max_wins or 1, *wins])
    mean_wins, lo, hi = wilson_mean(wins, upper)
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
        "battle_ci": [battle_lo, battle_hi],
        "mean_wins": mean_wins,
        "wins_ci": [lo, hi],
        "clear_rate": cleared / len(runs) if runs else 0.0,
        "clear_ci": list(wilson(cleared, len(runs))),
        "rounds_survived": statistics.fmean(r["rounds"] for r in runs) if runs else 0.0,
        "lamps_left": statistics.fmean(r["lamps"] for r in runs) if runs else 0.0,
        "mean_battle_duration": statistics.fmean(b["time"] for b in battles) if battles else 0.0,
        "by_core": by_core,
        "kinds": dict(sorted(kinds.items())),
    }


def ms_per_action(runs: list[dict]) -> float:
    """The CPU milliseconds an action took the agent to choose over `runs` (play_run's
    `act_seconds` and `actions`). A timing of this machine, so it is not part of `summarise`,
    whose figures are reproducible (training writes them to eval_history.jsonl and eval.json,
    and a resumed run must write the same)."""
    return (1000.0 * sum(r.get("act_seconds", 0.0) for r in runs)
            / max(1, sum(r.get("actions", 0) for r in runs)))


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
    warm_up(env.rules)      # the kernel compiled before the agent's timed actions (`play_run`)
    runs = []
    for i in range(episodes):
        runs.append(play_run(env, agent, eval_run_seed(seed, i)))
        if progress is not None:
            progress.update(1)
    out = summarise(runs, max_wins=env.rules.spec.run.wins_to_clear)
    out["played_against"] = eval_context(env_kwargs, episodes, seed, env.rules)
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
    """The board each of the first `count` runs took into its last battle, labelled with the
    run (its seed, wins and losses) and that battle (its round and outcome): the picture's
    first line, which was blank."""
    from dataclasses import replace

    from rune_env.rules import Board
    out = []
    for r in runs[:count]:
        if not r["battles"]:
            continue
        last = r["battles"][-1]
        label = (f"run {r['run_seed']}: {r['wins']} wins, {r['losses']} losses"
                 + (", cleared" if r["cleared"] else "")
                 + f" · last battle (round {last['round']}): {last['outcome']}")
        out.append(replace(Board.from_json(last["board"], rules), label=label))
    return out


# the interval of each rate with one: <prefix>/<rate>_lo and _hi in TensorBoard, the CSV's columns
INTERVALS = {"battle_win_rate": "battle_ci", "mean_wins": "wins_ci", "clear_rate": "clear_ci"}


def log_evaluation(writer, summary: dict, step: int, rules, *, prefix: str = "eval",
                   image_tag: str | None = "boards/final", cores=None,
                   context: dict | None = None) -> None:
    """An evaluation into TensorBoard at training step `step`: `<prefix>/<tag>` for EVAL_TAGS,
    `<prefix>/<rate>_lo` and `_hi` for the 95% interval of each rate of INTERVALS,
    `<prefix>/kind_share/<kind>` for every kind, with `cores` also `<prefix>/clear_rate_core/<core>`
    and `<prefix>/battle_win_rate_core/<core>` for each core the runs played (none for a core not
    played: no runs, no rate), with `context` (`eval_context`: rank, opponents, rules hash, runs,
    seed) a text `<prefix>/played_against` saying what the evaluation was played against, and,
    with `image_tag`, pictures of the first runs' final boards (`<image_tag>/<i>`; needs the
    summary's `runs`). `writer` is a SummaryWriter."""
    for tag in EVAL_TAGS:
        writer.add_scalar(f"{prefix}/{tag}", summary[tag], step)
    for rate, ci in INTERVALS.items():
        writer.add_scalar(f"{prefix}/{rate}_lo", summary[ci][0], step)
        writer.add_scalar(f"{prefix}/{rate}_hi", summary[ci][1], step)
    if context:
        writer.add_text(f"{prefix}/played_against", " · ".join(
            f"{k}: {v}" for k, v in context.items()), step)
    for kind, share in kind_shares(summary.get("kinds", {})).items():
        writer.add_scalar(f"{prefix}/kind_share/{kind}", share, step)
    for core in cores or ():
        v = summary["by_core"].get(core)
        if v is None:
            continue
        writer.add_scalar(f"{prefix}/clear_rate_core/{core}", v["clear_rate"], step)
        writer.add_scalar(f"{prefix}/battle_win_rate_core/{core}", v["battle_win_rate"], step)
    if image_tag:
        from rune_env.pictures import board_rgb_array
        for i, board in enumerate(final_boards(summary.get("runs", []), rules)):
            writer.add_image(f"{image_tag}/{i}", board_rgb_array(board, rules, annotate=True), step,
                             dataformats="HWC")
    writer.flush()


MAX_CHECKPOINT_DATA = 64 * 2**20     # a checkpoint's `data` part: SB3 writes tens of KB


def training_step(path: str | Path) -> int | None:
    """How many timesteps a saved policy was trained for, read without loading it: a `.zip`
    checkpoint's `num_timesteps`; for an exported `.pt`, the `timesteps` of the provenance JSON
    beside it (`agents/models/apprentice_s0.json`, a run's `final_policy.json`). None if unknown
    (no card, a card without timesteps, a checkpoint that is not readable or whose number is not
    a whole number in 0..MAX_TIMESTEPS). A `.pt`'s card that is there but is not a card (not
    JSON, nested too deep, timesteps NaN, negative or too large, a rules hash not a string)
    raises PolicyFileError (a ValueError), one line naming the card (agents.policy.file.read_card)."""
    from agents.policy.file import MAX_TIMESTEPS, card_path, read_card
    path = Path(path)
    if path.suffix == ".pt":         # the exported file holds no step count: its card does
        return (read_card(card_path(path)) or {}).get("timesteps")
    try:
        with zipfile.ZipFile(path) as z:
            if z.getinfo("data").file_size > MAX_CHECKPOINT_DATA:
                return None
            value = json.loads(z.read("data")).get("num_timesteps")
    except (OSError, KeyError, ValueError, AttributeError, RecursionError, zipfile.BadZipFile):
        return None
    if isinstance(value, float) and value.is_integer():    # as an older SB3 may have written it
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) \
        and 0 <= value <= MAX_TIMESTEPS else None


# -- evaluations fanned out (--ray) -----------------------------------------------------------
DEFAULT_CHUNK = 10     # evaluation runs per task: a few seconds each, many tasks per worker


def _evaluation_chunk(agent_name: str, rules_path: str | None, agent_seed: int, strict: bool,
                      seed: int, env_kwargs: dict, start: int, count: int) -> list[dict]:
    """Runs start .. start+count-1 of an evaluation on seed `seed` (the task of one chunk)."""
    from rune_env.rules.config import default_rules, load_rules

    from agents import make_agent
    from agents.policy import limit_torch_threads
    limit_torch_threads(1)
    rules = load_rules(rules_path) if rules_path else default_rules()
    agent = make_agent(agent_name, rules, seed=agent_seed, strict=strict)
    env = RuneRunEnv(**env_kwargs)
    warm_up(env.rules)      # a fresh worker compiles the kernel here, not in a timed action
    return [play_run(env, agent, eval_run_seed(seed, i)) for i in range(start, start + count)]


def evaluate_by_name(agent_name: str, episodes: int, seed: int, env_kwargs: dict, address: str,
                     rules_path: str | None = None, agent_seed: int = 0, strict: bool = False,
                     progress=None, chunk: int = DEFAULT_CHUNK) -> dict[str, Any]:
    """`evaluate(make_agent(agent_name, ...), episodes, seed, env_kwargs)`, its runs spread over
    Ray tasks of `chunk` runs (agents.cli.fanout): the same summary and runs."""
    from agents.cli.fanout import run_tasks
    from rune_env.rules import default_rules, load_rules
    tasks = [(agent_name, rules_path, agent_seed, strict, seed, env_kwargs, start,
              min(chunk, episodes - start)) for start in range(0, episodes, chunk)]
    chunks = run_tasks(_evaluation_chunk, tasks, address, progress,
                       weights=[t[-1] for t in tasks])
    runs = [r for c in chunks for r in c]
    rules = load_rules(env_kwargs["rules"]) if env_kwargs.get("rules") else (
        load_rules(rules_path) if rules_path else default_rules())
    out = summarise(runs, max_wins=rules.spec.run.wins_to_clear)    # as evaluate's
    out["played_against"] = eval_context(env_kwargs, episodes, seed, rules)
    out["runs"] = runs
    return out
