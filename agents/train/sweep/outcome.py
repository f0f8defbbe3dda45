"""The outcome of a sweep: `trial_record`, `sweep_summary` (sweep.json's content, with the best
trial), `format_table`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import REPORTED_METRICS, STATUSES, SweepConfig, TIME_ATTR
from .trials import Trial


# -- the outcome ---------------------------------------------------------------------------------
def error_line(error: BaseException) -> str:
    """A trial's error as one line: the original exception's message (Ray wraps it)."""
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}".strip()


def trial_record(trial: Trial, result, stopped_by_asha: bool, sweep_dir: Path) -> dict:
    """What sweep.json says about a trial: its values, status, last reported metrics, where its
    files are. `result` is its Tune Result (None if Tune has none)."""
    metrics = dict(result.metrics or {}) if result is not None else {}
    error = result.error if result is not None else None
    if error is not None:
        status = "error"
    elif metrics.get("final"):
        status = "finished"
    elif stopped_by_asha:
        status = "stopped_early"
    elif metrics.get(TIME_ATTR) is not None:
        status = "interrupted"
    else:
        status = "not_started"
    record = {"trial": trial.name, "values": trial.values, "status": status,
              "timesteps": metrics.get(TIME_ATTR), "final": bool(metrics.get("final")),
              "evaluations": metrics.get("training_iteration", 0)}
    record.update({k: metrics.get(k) for k in REPORTED_METRICS})
    record.update({
        "eval_episodes": metrics.get("eval_episodes"),
        "train_seconds": metrics.get("train_seconds"),
        "run_dir": f"trials/{trial.name}", "tune_dir": f"tune/{trial.name}",
        "log": f"logs/{trial.name}.log",
        "error": error_line(error) if error is not None else None})
    return record


def best_trial(records: list[dict], metric: str, mode: str) -> dict | None:
    """The best trial by its last `metric`: among the finished trials (their final evaluation),
    else among all that reported it; the first in trial order on a tie."""
    scored = [r for r in records if isinstance(r.get(metric), (int, float))]
    finished = [r for r in scored if r["status"] == "finished"]
    pool = finished or scored
    if not pool:
        return None
    sign = 1 if mode == "max" else -1
    return max(pool, key=lambda r: sign * r[metric])        # max keeps the first of equals


def sweep_summary(sweep: SweepConfig, source: str, sweep_dir: Path, records: list[dict],
                  settings: dict | None, wall_seconds: float) -> dict:
    """sweep.json's content."""
    best = best_trial(records, sweep.metric, sweep.mode)
    counts = {s: sum(r["status"] == s for r in records) for s in STATUSES}
    return {
        "name": sweep.name, "config": source, "sweep_dir": str(sweep_dir), "base": sweep.base,
        "metric": sweep.metric, "mode": sweep.mode, "scheduler": sweep.scheduler, "asha": settings,
        "num_samples": sweep.num_samples, "search_seed": sweep.search_seed,
        "space": sweep.to_yaml()["space"], "overrides": sweep.overrides,
        "cpus_per_trial": sweep.cpus_per_trial,
        "wall_seconds": round(wall_seconds, 1),
        "counts": {s: n for s, n in counts.items() if n},
        "best": None if best is None else {
            "trial": best["trial"], "values": best["values"], sweep.metric: best[sweep.metric],
            "timesteps": best["timesteps"], "status": best["status"], "run_dir": best["run_dir"]},
        "trials": records,
    }


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def _measure(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def format_table(summary: dict) -> str:
    """The trials, best first as `best_trial` ranks them: the finished ones by the sweep's metric
    (their final evaluation), then the others that reported it (stopped early or cut short: a
    value from fewer steps, not comparable with a final one), then those without it, in trial
    order among equals; `*` marks the best trial, the top row when there is one."""
    metric, mode = summary["metric"], summary["mode"]
    records = summary["trials"]
    keys = list(summary["space"])
    sign = -1 if mode == "max" else 1

    def order(r):
        value = r.get(metric)
        if not isinstance(value, (int, float)):
            return (2, 0)
        return (0 if r["status"] == "finished" else 1, sign * value)

    rows = sorted(records, key=order)              # stable: trial order among equals
    best = (summary.get("best") or {}).get("trial")
    measures = ["battle_win_rate", "mean_wins", "clear_rate"]
    if metric not in measures:
        measures.append(metric)
    header = ["trial", "status", *keys, "timesteps", *measures]
    table = [header]
    for r in rows:
        mark = " *" if r["trial"] == best else ""
        table.append([r["trial"] + mark, r["status"], *(_shown(r["values"].get(k)) for k in keys),
                      _shown(r["timesteps"]), *(_measure(r.get(k)) for k in measures)])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    if best is not None:
        b = summary["best"]
        lines.append(f"best: {best} ({metric} {_measure(b[metric])} at {b['timesteps']} steps, "
                     f"{b['status']}): {Path(summary['sweep_dir']) / b['run_dir']}")
    else:
        lines.append(f"best: none (no trial reported {metric})")
    lines += [f"{r['trial']}: {r['error']}" for r in records if r.get("error")]
    return "\n".join(lines)
