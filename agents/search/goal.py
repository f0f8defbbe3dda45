"""The search player's goal: a strong board of a later round to build towards, across rounds.

A round's target is the best board the run can reach *this* round; some of the strongest boards
(the metagame's bursts: an amplify and a node feeding a lifted rune, mimics copying it) are worth
nothing until they are whole, and cost more than one round's mana and shop. So the player keeps a
**goal**: a board of the metagame (public data) of a round at least `lead` rounds ahead, drawn by
weight from those of its core (any core before the core is chosen: the goal then picks it), from
its own seeded generator, so different runs aim at different boards of the mixture. The goal
shows in two places of the round's search (`agents.search.target`):

- starts: the goal as the player's core plays it, cut to what the run reaches; and the board as
  it stands with the goal's pieces that the shop shows added (`grow_toward`);
- the objective: `goal_weight` x the share of the goal the target holds (`progress`: of the
  goal's grade-I rune units of each kind, and of its artifacts, what the target has, weighed by
  price), so buying a piece of it when the shop shows one is worth something before the board
  is whole.

Once the run holds all of it, and its round has come, the player draws the next goal from a later
round, favouring the boards that share most with what it holds.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from rune_env.rules import Rules, geometry
from rune_env.run.opponents import Pool

from .boards import Layout


def units_of(layout: Layout, rules: Rules) -> tuple[Counter, Counter]:
    """(kind -> grade-I rune units on the board and in the hand, artifact -> count)."""
    return (Counter(_rune_units(layout, rules.spec.grades.merge_count)),
            Counter(layout.artifacts.values()))


def _rune_units(layout, merge_count: int) -> dict[str, int]:
    """kind -> grade-I rune units on the board and in the hand of a layout or a `Board` (a
    plain dict: `progress_of` counts them for every board a search scores)."""
    have: dict[str, int] = {}
    for pieces in (layout.runes.values(), layout.hand):
        for k, g in pieces:
            have[k] = have.get(k, 0) + merge_count ** (g - 1)
    return have


def progress(goal: Layout, layout: Layout, rules: Rules) -> float:
    """The share of the goal's mana (runes by their grade-I units, artifacts) that `layout`
    holds, 0..1 (the module docstring)."""
    return progress_of(goal, rules)(layout)


def progress_of(goal: Layout, rules: Rules):
    """`progress` against one goal as a function of the layout (or of a `Board`: the same
    pieces), the goal's side reckoned once (a search scores thousands of boards against the
    same goal)."""
    want_r, want_a = units_of(goal, rules)
    prices = rules.prices
    arts = rules.spec.artifacts
    total = sum(prices[k] * n for k, n in want_r.items()) + sum(arts[a].price * n
                                                                 for a, n in want_a.items())
    m = rules.spec.grades.merge_count
    # (kind, price) and (artifact, price) of the goal's pieces with the units it wants: the
    # held mana is a sum of whole numbers, so its order does not matter
    wanted_runes = [(k, prices[k], n) for k, n in want_r.items()]
    wanted_arts = [(a, arts[a].price, n) for a, n in want_a.items()]

    def share(layout) -> float:
        if total <= 0:
            return 1.0
        have = _rune_units(layout, m)
        held = 0
        for k, price, n in wanted_runes:
            h = have.get(k, 0)
            held += price * (n if n < h else h)
        if wanted_arts:
            placed = list(layout.artifacts.values())
            for a, price, n in wanted_arts:
                h = placed.count(a)
                held += price * (n if n < h else h)
        return held / total
    return share


def grow_toward(base: Layout, goal: Layout, shop_runes, shop_artifacts, rules: Rules) -> Layout:
    """`base` with each piece of the goal it lacks that the shop shows (a grade-I rune of a kind
    whose units it lacks; an artifact it lacks), on the goal's cell for it where that is free,
    else on the first free cell (casting order)."""
    new = base.copy()
    have_r, have_a = units_of(new, rules)
    want_r, want_a = units_of(goal, rules)
    shown_r = Counter(k for k in shop_runes if k is not None)
    shown_a = Counter(a for a in shop_artifacts if a is not None)
    cells = range(geometry(rules.radius).n_cells)
    for c, (k, _) in sorted(goal.runes.items()):
        if have_r[k] < want_r[k] and shown_r[k] > 0:
            cell = c if c not in new.runes else next((x for x in cells if x not in new.runes), None)
            if cell is None:
                break
            new.runes[cell] = (k, 1)
            have_r[k] += 1
            shown_r[k] -= 1
    for c, a in sorted(goal.artifacts.items()):
        if have_a[a] < want_a[a] and shown_a[a] > 0:
            cell = c if c not in new.artifacts else next((x for x in cells if x not in new.artifacts), None)
            if cell is not None:
                new.artifacts[cell] = a
                have_a[a] += 1
                shown_a[a] -= 1
    return new


class Goals:
    """Draws goals from a pool's boards (the metagame)."""

    def __init__(self, rules: Rules, pool: Pool | None, lead: int):
        self.rules, self.pool, self.lead = rules, pool, lead
        # the rounds with boards (`load_pool` refuses an empty round; a pool built in memory
        # may have one, and a goal is drawn from a round's boards)
        self.rounds = sorted(r for r, g in pool.rounds.items() if g) if pool is not None else []

    def round_for(self, round_: int) -> int | None:
        """The pool's first round at least `lead` rounds ahead of `round_` (its last if none)."""
        if not self.rounds:
            return None
        ahead = [r for r in self.rounds if r >= round_ + self.lead]
        return ahead[0] if ahead else self.rounds[-1]

    def pick(self, round_: int, core: str | None, owned: Layout | None,
             rng: np.random.Generator) -> tuple[Layout, int] | None:
        """A goal for a run in `round_` with `core` (None: not chosen yet) holding `owned`:
        one of the boards of `round_for(round_)` with that core, drawn with probability
        proportional to its count x (1 + 4 x the share of it the run holds). Where that round
        has no board of the core (the metagame leaves some cores out of some rounds): the
        boards of the core in the next round that has some, else the round's boards of every
        core (their runes, played with the run's core). None without a pool."""
        goal_round = self.round_for(round_)
        if goal_round is None:
            return None
        later = [r for r in self.rounds if r >= goal_round]
        options: list[tuple[Layout, int]] = []
        for rnd in later:
            options = [(Layout.of(b), c) for b, c in zip(self.pool.boards(rnd, self.rules),
                                                         self.pool.counts(rnd))
                       if core is None or b.core == core]
            if options:
                goal_round = rnd
                break
        if not options:
            options = [(Layout.of(b), c) for b, c in zip(self.pool.boards(goal_round, self.rules),
                                                         self.pool.counts(goal_round))]
        weights = np.array([c * (1.0 + 4.0 * (progress(g, owned, self.rules) if owned else 0.0))
                            for g, c in options], dtype=np.float64)
        i = int(rng.choice(len(options), p=weights / weights.sum()))
        return options[i][0], goal_round
