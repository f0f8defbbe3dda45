"""Fan-out of independent runs as Ray tasks (`--ray [ADDRESS]` of the many-run scripts).

Without `--ray` nothing here imports Ray: `run_tasks` plays the tasks in this process, in order.
With it, each task is a Ray task on the local machine (`--ray` alone: a local Ray started for
the script, as many workers as cores) or on the cluster at ADDRESS (`--ray auto`, `--ray
HOST:6379`; docs/SCALE.md). Results come back in task order, and each task rebuilds what it plays
from names and seeds (an agent by name, an env from its keywords), so a fanned-out script's JSON
equals the local one's bit for bit: an evaluation run depends only on its run seed (the agent is
reset with it, the opponent bank drafts from seeds of its own).

The evaluation's tasks are agents.evaluation.runs.evaluate_by_name's.
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

LOCAL = "local"        # --ray with no address: a Ray started on this machine for the script


def add_ray_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ray", nargs="?", const=LOCAL, default=None, metavar="ADDRESS",
                        help="play the independent runs as Ray tasks: on a local Ray started for "
                             "this script (--ray alone), or on the cluster at ADDRESS (auto, or "
                             "HOST:PORT; docs/SCALE.md). Needs the ray extra; the results equal "
                             "a local run's (default: off, everything in this process; Ray is not "
                             "imported)")


def ray_problem() -> str | None:
    """Why Ray cannot be used here (not installed), or None."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return "--ray needs Ray: pip install -e \".[ray]\""
    return None


def _init(address: str) -> Any:
    import ray
    if not ray.is_initialized():
        # "local": a Ray started for this script, even if a `ray start` cluster runs here
        # (address None would join that one)
        ray.init(address=address, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    return ray


def run_tasks(fn: Callable[..., Any], tasks: list[tuple], address: str | None = None,
              progress=None, weights: list[int] | None = None) -> list[Any]:
    """`fn(*task)` for every task, in task order: here (address None) or as Ray tasks.
    `progress` gets `.update(weight)` as each task finishes (weights default to 1)."""
    weights = weights or [1] * len(tasks)
    if address is None:
        out = []
        for task, w in zip(tasks, weights):
            out.append(fn(*task))
            if progress is not None:
                progress.update(w)
        return out
    ray = _init(address)
    remote = ray.remote(num_cpus=1)(fn)
    refs = [remote.remote(*task) for task in tasks]
    weight_of = {ref: w for ref, w in zip(refs, weights)}
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        if progress is not None:
            progress.update(weight_of[done[0]])
    return ray.get(refs)
