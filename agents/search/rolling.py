"""Rolling by lookahead: whether one more view of the shop pays its price, judged on views the
player draws itself (the planner's `roll` knob).

The planner's own reroll plans (`Assets.reach`) price a view by how many views a target's missing
kinds need on average, and weigh that price against a round's income (`waste_weight`). At
archmage it rolled 0.0 times a round in round 1 and 0.1 in round 2, and its boards won what a
clairvoyant that never rolls wins there, where one that foresees its views wins far more
(docs/DESIGNERS.md, "For a player who meets the shop"). With `roll=N` the player instead asks, at
each view of the shop it meets:

- **stand**: the best board it can build with what it holds and what is on display, no reroll;
- **roll**: build a *commit* first (nothing; or the best board it could stand with, keeping back
  one reroll's price and 0, 1, .. `COMMITS` - 1 of the cheapest rune's price more for the next
  view's offers), pay the reroll, then stand with what the next view shows, averaged over N
  views drawn from the shop's public odds (`rune_env.run.loop.draw_view`: `run.shop_rune_offers`
  runes uniformly from the unlocked kinds, the artifacts uniformly from the rules') by its own
  generator, less the reroll's price in the objective's waste term (`agents.search.scoring`);

and it rolls, with the better commit, when that average beats standing. Both commits face the
same N views (common draws, so the comparison between them is not luck). It is a one-step
lookahead: at the next view it asks again, so it rolls for as long as one more view pays.

With `halving` (the planner's `roll_halving`) the commits race over the views instead of each
facing all N (successive halving, `halving_schedule`): all of them on the first quarter of the
views, the better half of them on the first half, and the best one on all N, which is then
weighed against standing as before. Each (commit, view) search is the same search with the same
seed either way, so the decision is the full one's whenever the full one's best commit survives
the cuts; it costs about half the searches (4 commits, 8 views: 16 view searches, not 32), the
most of a roll decision's time (the searches are the planner's own, scored against its reference).

Fair: the views it weighs are its own draws, never the run's; the commits are built on private
copies of the run that carry no generator (`private_copy`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from rune_env.run.legal import legal_mask
from rune_env.rules import Rules
from rune_env.run.loop import apply, draw_view
from rune_env.run.state import RunState

from .assets import Assets, private_copy
from .boards import Layout
from .execute import Executor
from .scoring import Objective, SeatScore

ROLL_MAX = 64           # views a roll decision may draw (the `roll` knob's bound)
LAST_ACTIONS = 2        # a round's actions a roll leaves before the cap: the reroll and the ready
# Commits of a roll decision besides "nothing": boards built before the reroll, keeping back the
# reroll's price and 0, 1, 2 cheapest runes' prices more. In round 1 (10 mana, runes of 2) a roll
# after a 9-mana board buys nothing from the next view; the views a clairvoyant foresees pay by
# combining offers of two views (DESIGNERS.md, "For a player who meets the shop").
COMMITS = 3
# A search of the lookahead: (assets, the tail of its generator's seed) -> the best layout found
# with no rerolls, and its score. The planner's target search with its reference and goal.
Search = Callable[[Assets, tuple], tuple[Layout, SeatScore]]


@dataclass(frozen=True)
class RollChoice:
    """A view's decision: `roll`, and the layout to build now (the stand board, or the commit
    to build before the reroll); the objective's value standing and, where a reroll is
    affordable, the best commit's average after it."""

    roll: bool
    target: Layout
    stand: float
    rolled: float | None


def draw_views(rules: Rules, kinds: Sequence[str], count: int, rng: np.random.Generator
               ) -> list[tuple[list[str], list[str]]]:
    """`count` views of the shop, one after another from `rng`, each as the run draws one
    (`draw_view`): a player's own draws of views it has not seen (the planner's `roll`, the shop
    ceiling's clairvoyant)."""
    return [draw_view(rules, kinds, rng) for _ in range(count)]


def own_views(state: RunState, count: int, rng: np.random.Generator
              ) -> list[tuple[tuple, tuple]]:
    """`count` views of the run's shop as the run would draw them, from `rng` (the player's
    own), as the (runes, artifacts) tuples of `Assets`."""
    return [(tuple(runes), tuple(artifacts))
            for runes, artifacts in draw_views(state.rules, list(state.unlocked), count, rng)]


def build_on_copy(state: RunState, layout: Layout, executor: Executor) -> RunState:
    """A private copy of `state` (no generator) with `layout` built as far as the display and the
    mana allow (the executor's steps, no rerolls), stopping short of the round's action cap."""
    trial = private_copy(state)
    last = state.rules.spec.run.action_cap - LAST_ACTIONS
    while trial.prep_actions < last:
        action = executor.next_action(trial, layout, legal_mask(trial), rerolls=False)
        if action is None:
            break
        apply(trial, action)
    return trial


def halving_schedule(views: int) -> list[int]:
    """The views the commits have faced after each stage of successive halving: a quarter, a
    half, all (8 -> [2, 4, 8]; 2 -> [1, 2]; 1 -> [1]), each stage at least one view more."""
    stages = []
    for upto in (max(1, views // 4), max(1, views // 2), views):
        if not stages or upto > stages[-1]:
            stages.append(upto)
    return stages


def roll_choice(state: RunState, search: Search, executor: Executor, objective: Objective,
                views: Sequence[tuple[tuple, tuple]], halving: bool = False,
                weigh: Search | None = None) -> RollChoice:
    """Stand or roll at this view (the module docstring), with `views` the player's own draws;
    `halving`: the commits race over the views (successive halving) instead of each facing all.
    `weigh` (default `search`): the search that weighs standing and each view after a reroll,
    where `search` finds the commits: the two sides of the comparison search alike, and the
    boards built may be searched harder than the values weighed."""
    weigh = search if weigh is None else weigh
    run = state.rules.spec.run
    assets = Assets.of(state)
    stand, stand_score = weigh(assets, (0,))
    price = run.reroll_cost
    if not views or state.mana < price or state.prep_actions >= run.action_cap - LAST_ACTIONS:
        return RollChoice(False, stand, stand_score.value, None)
    waste = objective.waste_weight * price / max(1, run.income)
    commits = [assets.layout()]
    step = min(state.rules.prices[k] for k in state.unlocked)
    for j in range(COMMITS):
        held_back = price + j * step
        if held_back > assets.mana:
            break
        kept, _ = search(assets.varied(mana=assets.mana - held_back), (1, j))
        if kept not in commits:
            commits.append(kept)
    bases: dict[int, Assets] = {}                # commit number -> its assets after the reroll
    for c, commit in enumerate(commits):
        after = build_on_copy(state, commit, executor) if c else private_copy(state)
        if after.mana < price:
            continue
        after.mana -= price
        after.prep_actions += 1                  # the reroll is an action of the round
        bases[c] = Assets.of(after)
    totals = {c: 0.0 for c in bases}
    done = 0                                     # views every remaining commit has faced
    for upto in (halving_schedule(len(views)) if halving else [len(views)]):
        if done:                                 # after a stage: the better half goes on
            ranked = sorted(totals, key=lambda c: (-totals[c], c))
            totals = {c: totals[c] for c in ranked[: (len(ranked) + 1) // 2]}
        for c in totals:
            for s in range(done, upto):
                runes, artifacts = views[s]
                _, score = weigh(bases[c].varied(shop_runes=runes, shop_artifacts=artifacts),
                                 (2, c, s))
                totals[c] += score.value
        done = upto
    best: tuple[float, Layout] | None = None
    for c in sorted(totals):
        value = totals[c] / len(views) - waste
        if best is None or value > best[0] + 1e-12:
            best = (value, commits[c])
    if best is None or best[0] <= stand_score.value + 1e-12:
        return RollChoice(False, stand, stand_score.value,
                          None if best is None else best[0])
    return RollChoice(True, best[1], stand_score.value, best[0])


__all__ = ["LAST_ACTIONS", "ROLL_MAX", "RollChoice", "build_on_copy", "draw_views",
           "halving_schedule", "own_views", "roll_choice"]
