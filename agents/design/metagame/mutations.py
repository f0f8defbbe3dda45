"""The best-response search's mutations, built for speed and for counters.

`FastMutator` makes the audit's edits (`agents.design.audit.Mutator`, the same random draws and
so the same mutants) but checks a mutant's cost, slots and novelty on the layout, before any
`Board` is built, and builds the board without re-validating it (the edits only ever write known
kinds, grades 1..max_grade, cells of the circle and the sectors those cells need; a test
validates thousands of mutants). Profiled on a round-6 metagame, the audit's path spent 80% of
the time building, validating and keying boards that were then thrown away (over budget, or seen
before), and 10% playing battles.

`CounterMutator` adds the edits a counter-board needs at a full budget, where most single edits
of the audit's set (add a rune, raise a grade) no longer fit; with probability `extra` a mutation
is one of these, otherwise one of the audit's:

- `trade`: remove a rune, from the board or the hand (or lower its grade), then add a rune or
  raise a grade elsewhere on the board, so the mana moves instead of growing;
- `element`: every casting rune of one kind, on the board and in the hand, becomes another
  casting kind (the same structure in another element: the usual counter of a burst board);
- `recast`: one casting rune becomes another casting kind, grade kept;
- `cluster`: a rune with its rune neighbours turned 60 degrees about the core, where the cells
  it lands on are free (a support cluster moved whole, casting order changed);
- `double`: two of the audit's edits at once (a step across a valley of one-edit boards).

The audit's hill climb (`agents.design.audit.hill_climb`) climbs with these mutators as with
its own: `children` adds the parent's layout key to the climb's `seen` set, which then holds
layout keys beside the start's JSON key.
"""
from __future__ import annotations

import numpy as np

from rune_env.rules import KINDS, Board, Rules, geometry
from rune_env.run.loop import units

from agents.design.audit import Layout, Mutator, hand_slots
from agents.search.boards import fast_key, layout_key  # noqa: F401  (re-exported)




class FastMutator(Mutator):
    """The audit's mutator, checking cost, slots and novelty before a board is built."""

    def __init__(self, rules: Rules, round_: int, budget: int, rng: np.random.Generator):
        super().__init__(rules, round_, budget, rng)
        spec = rules.spec
        self.geo = geometry(rules.radius)
        self._price = {(k, g): rules.prices[k] * units(rules, g)
                       for k in KINDS for g in range(1, rules.max_grade + 1)}
        self._artifact_price = {a: s.price for a, s in spec.artifacts.items()}
        costs = list(spec.sectors.open_costs)
        self._sector_cost = [sum(costs[:n]) for n in range(len(costs) + 1)]
        self._hand_slots = {core: hand_slots(rules, core) for core in spec.cores}

    def sectors(self, layout: Layout) -> frozenset[int]:
        sector = self.geo.sector
        return frozenset(sector[c] for c in (*layout.runes, *layout.artifacts) if sector[c] >= 0)

    def cost(self, layout: Layout) -> int:
        """What `board_cost` says of the layout's board."""
        price = self._price
        runes = sum(price[r] for r in layout.runes.values()) + sum(price[r] for r in layout.hand)
        arts = sum(self._artifact_price[a] for a in layout.artifacts.values())
        return runes + arts + self._sector_cost[len(self.sectors(layout))]

    def fits(self, layout: Layout) -> bool:
        """What `legal` says of the layout's board."""
        slots = self._hand_slots.get(layout.core, hand_slots(self.rules, layout.core))
        return (len(layout.artifacts) <= self.rules.spec.run.artifact_slots
                and len(layout.hand) <= slots and self.cost(layout) <= self.budget)

    def build(self, layout: Layout) -> Board:
        """`layout.board(rules, round)` without the re-validation."""
        return Board(runes=dict(layout.runes), artifacts=dict(layout.artifacts),
                     hand=tuple(layout.hand), core=layout.core, sun_element=layout.sun_element,
                     open_sectors=self.sectors(layout), round=self.round)

    def children(self, parent: Layout, count: int, seen: set) -> list[Board]:
        """Up to `count` legal mutants whose layout keys are not in `seen` (added to it)."""
        out: list[Board] = []
        seen.add(layout_key(parent))
        for _ in range(count * 20):          # the audit's bound on tries
            if len(out) >= count:
                break
            layout = self.mutate(parent)
            if layout is None or not self.fits(layout):
                continue
            key = layout_key(layout)
            if key in seen:
                continue
            seen.add(key)
            out.append(self.build(layout))
        return out


class CounterMutator(FastMutator):
    """`FastMutator` with the counter edits of the module docstring, drawn with probability
    `extra` (0: exactly the audit's edits)."""

    EXTRA_OPS = ("trade", "element", "recast", "cluster", "double")

    def __init__(self, rules: Rules, round_: int, budget: int, rng: np.random.Generator,
                 extra: float = 0.0):
        super().__init__(rules, round_, budget, rng)
        self.extra = extra
        self.casting = [k for k in KINDS if k in rules.casting_kinds]

    def mutate(self, layout: Layout) -> Layout | None:
        if self.extra <= 0 or self.rng.random() >= self.extra:
            return super().mutate(layout)
        op = self._pick(self.EXTRA_OPS)
        return getattr(self, f"_{op}")(layout)

    def _trade(self, layout: Layout) -> Layout | None:
        filled = sorted(layout.runes)
        if len(filled) < 2:
            return None
        new = layout.copy()
        cell = -1
        if new.hand and self.rng.random() < 0.25:
            new.hand.pop(int(self.rng.integers(len(new.hand))))
        else:
            cell = self._pick(filled)
            kind, grade = new.runes[cell]
            if grade > 1 and self.rng.random() < 0.5:
                new.runes[cell] = (kind, grade - 1)
            else:
                del new.runes[cell]
        free = [c for c in self.cells if c not in new.runes]
        up = [c for c in new.runes if c != cell and new.runes[c][1] < self.rules.max_grade]
        if up and (not free or self.rng.random() < 0.5):
            target = self._pick(sorted(up))
            k, g = new.runes[target]
            new.runes[target] = (k, g + 1)
        elif free:
            new.runes[self._pick(free)] = (self._pick(KINDS), self._grade())
        return new

    def _element(self, layout: Layout) -> Layout | None:
        present = sorted({k for k, _ in (*layout.runes.values(), *layout.hand)
                          if k in self.rules.casting_kinds})
        if not present:
            return None
        old = self._pick(present)
        kind = self._pick([k for k in self.casting if k != old])
        new = layout.copy()
        new.runes = {c: ((kind, g) if k == old else (k, g)) for c, (k, g) in new.runes.items()}
        new.hand = [((kind, g) if k == old else (k, g)) for k, g in new.hand]
        return new

    def _recast(self, layout: Layout) -> Layout | None:
        cells = sorted(c for c, (k, _) in layout.runes.items() if k in self.rules.casting_kinds)
        if not cells:
            return None
        new = layout.copy()
        cell = self._pick(cells)
        kind, grade = new.runes[cell]
        new.runes[cell] = (self._pick([k for k in self.casting if k != kind]), grade)
        return new

    def _cluster(self, layout: Layout) -> Layout | None:
        if not layout.runes:
            return None
        seed = self._pick(sorted(layout.runes))
        group = [seed] + [c for c in self.geo.neighbors[seed] if c in layout.runes]
        turns = int(self.rng.integers(1, 6))
        target = []
        for c in group:
            for _ in range(turns):
                c = self.geo.rotate[c]
            target.append(c)
        if any(t in layout.runes and t not in group for t in target):
            return None
        new = layout.copy()
        moved = {t: layout.runes[c] for c, t in zip(group, target)}
        for c in group:
            del new.runes[c]
        new.runes.update(moved)
        return new

    def _double(self, layout: Layout) -> Layout | None:
        first = super().mutate(layout)
        return None if first is None else super().mutate(first)
