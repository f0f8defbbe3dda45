"""How often one agent takes the action another would take, on the states the first one meets.

`agreement(actor, labeller, env, runs, seed)` plays `runs` whole runs with the actor and, at every
step, asks the labeller what it would do there (its answer is never played). It counts the steps
on which the two agree, overall, by the kind of action the labeller asks for and by round.

Two uses in expert iteration (docs/RESULTS.md, "How clonable is the planner"):

- a teacher against itself under another seed (`labeller_seed` > 0): the share of its actions a
  student that sees only the observation could match at best. A search player whose near-equal
  plans are drawn from its seed agrees with itself on few steps, and a clone of it averages plans;
- a student against its teacher on the student's own states (DAgger's states): how far the
  student is from the teacher where it matters, which training accuracy (on the teacher's states)
  does not show.

Intervals are 95% percentile intervals of a bootstrap over runs (the steps of one run are not
independent), from a generator seeded by `seed`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from rune_env.run.actions import action_table

from .runs import eval_run_seed, play_run

BOOTSTRAP_RESAMPLES = 1000
# The labeller's seed is the run's seed plus this, by default: another seed than the actor's, so
# that a teacher against itself measures the spread of its own plans, not its determinism.
LABELLER_SEED_OFFSET = 1


class _Labelled:
    """The actor on the agent protocol, asking the labeller at every step and recording both."""

    def __init__(self, actor, labeller, offset: int, table):
        self.actor, self.labeller, self.offset, self.table = actor, labeller, offset, table
        self.needs_state = (getattr(actor, "needs_state", False)
                            or getattr(labeller, "needs_state", False))
        self.steps: list[tuple[int, str, bool]] = []      # (round, labeller's kind, agreed)

    def reset(self, seed: int | None = None) -> None:
        self.actor.reset(seed)
        self.labeller.reset(None if seed is None else seed + self.offset)

    def act(self, observation, action_mask, state=None) -> int:
        wanted = int(self.labeller.act(observation, action_mask, state=state))
        action = int(self.actor.act(observation, action_mask, state=state))
        round_ = state.round if state is not None else -1
        self.steps.append((round_, self.table.actions[wanted].kind, action == wanted))
        return action


def _share(per_run: list[tuple[int, int]], rng: np.random.Generator) -> dict[str, Any]:
    """Agreed / steps over runs given as (agreed, steps) pairs, with a bootstrap interval over the
    runs (None when no run has a step)."""
    agreed = np.array([a for a, _ in per_run], dtype=np.float64)
    steps = np.array([n for _, n in per_run], dtype=np.float64)
    total = steps.sum()
    if total == 0:
        return {"steps": 0, "agreement": None, "ci": None}
    picks = rng.integers(0, len(per_run), size=(BOOTSTRAP_RESAMPLES, len(per_run)))
    num, den = agreed[picks].sum(axis=1), steps[picks].sum(axis=1)
    ratios = num[den > 0] / den[den > 0]
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return {"steps": int(total), "agreement": float(agreed.sum() / total),
            "ci": [float(lo), float(hi)]}


def agreement(actor, labeller, env, runs: int, seed: int,
              labeller_seed: int = LABELLER_SEED_OFFSET, progress=None) -> dict[str, Any]:
    """`runs` runs of `actor` on `env` (evaluation run seeds of `seed`), each state labelled by
    `labeller` reset with the run seed plus `labeller_seed` (0: the actor's own seed). Returns
    {"overall": share, "by_kind": {kind: share}, "by_round": {round: share}}, each share
    {"steps", "agreement", "ci"}. `progress` gets .update(1) per run."""
    table = action_table(env.rules)
    wrapped = _Labelled(actor, labeller, labeller_seed, table)
    per_run: list[list[tuple[int, str, bool]]] = []
    for i in range(runs):
        wrapped.steps = []
        play_run(env, wrapped, eval_run_seed(seed, i))
        per_run.append(wrapped.steps)
        if progress is not None:
            progress.update(1)
    rng = np.random.default_rng([seed, 0xA6])
    # the shares draw from `rng` in this order: all steps, the kinds (sorted), the rounds
    overall = _share([(sum(ok for *_, ok in run), len(run)) for run in per_run], rng)
    kinds = _tally(per_run, lambda step: step[1])
    shares = {k: _share(kinds[k], rng) for k in sorted(kinds)}
    rounds = _tally(per_run, lambda step: step[0])
    return {"overall": overall,
            # the kinds the labeller asked for most first (ties: the first one met first)
            "by_kind": {k: shares[k] for k in sorted(kinds, key=lambda k: -shares[k]["steps"])},
            "by_round": {r: _share(rounds[r], rng) for r in sorted(rounds)}}


def _tally(per_run: list[list[tuple[int, str, bool]]], key) -> dict:
    """key(step) -> a list of (agreed, steps) per run, over every run (zeros where a run has no
    such step)."""
    out: dict = {}
    for i, run in enumerate(per_run):
        for step in run:
            counts = out.setdefault(key(step), [(0, 0)] * len(per_run))
            agreed, steps = counts[i]
            counts[i] = (agreed + step[2], steps + 1)
    return out

__all__ = ["agreement", "LABELLER_SEED_OFFSET"]
