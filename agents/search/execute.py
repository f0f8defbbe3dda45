"""The search player's hands: the next preparation action towards a target layout, with the shop
it meets.

`next_action(state, target, mask)` returns the first of these that applies and is legal (or
None: the target is reached, or nothing more can be done towards it with what the shop shows and
the mana left; the player then re-plans or readies):

1. the sun's element, if the target's differs;
2. a sector the target's cells need;
3. artifacts: pick up one on a cell where the target has another or none; place one from the
   inventory on its target cell; sell one the target does not use;
4. a hand rune onto an empty target cell that wants exactly it;
5. a merge that makes a rune the target still lacks (`_merge`): onto a copy already on a target
   cell that wants the merged rune, else onto a copy in the hand;
6. a board rune the target does not want on its cell, picked up (when the hand has room): one
   in the way (on a cell the target wants for another rune) first; one on a cell the target
   leaves empty (a rune parked there, step 9) only once no rune the target needs can be bought
   from the display, or the hand keeps a slot free for it;
7. a hand rune the target has no use for, sold, when the hand is full;
8. a rune on display that the target still needs bought (grade-I runes short, per kind, by the
   plan of `assets.build_runes`); an artifact likewise;
9. with the hand full and a rune to buy (on display, affordable) or a board rune in the way: a
   hand rune parked on an empty cell the target leaves empty. A bought rune passes through the
   hand, so a target that fills the hand with reserves needs a slot lent for each purchase and
   each move; the parked rune comes back by step 6 when the buying is done. (Without it the
   player readied with the target unbuilt and its mana unspent: a late-round board of 9 runes
   for a target of 13, 20-50 mana kept.)
10. hand runes the target has no use for, sold;
11. a reroll, when runes or artifacts are still short and none is on display, rerolls are
    allowed, and the mana left pays for the reroll and for all that is short.

It reads the state as the player sees it (its own runes, mana, shop) and never the run's
generator.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from rune_env.rules import CASTING_KINDS, Rules, geometry
from rune_env.run.actions import action_table
from rune_env.run.state import RunState

from .assets import build_runes
from .boards import Layout


class Executor:
    """`next_action(state, target, mask, rerolls)`: the module docstring's rules."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.table = action_table(rules)
        self.merge_count = rules.spec.grades.merge_count
        self.cells = list(range(geometry(rules.radius).n_cells))

    def _ok(self, mask: np.ndarray, kind: str, *args: int) -> int | None:
        a = self.table.id(kind, *args)
        return a if mask[a] else None

    def next_action(self, state: RunState, target: Layout, mask: np.ndarray,
                    rerolls: bool = True) -> int | None:
        for step in (self._element, self._sector, self._artifact, self._place, self._merge,
                     self._pick_up, self._make_room, self._buy, self._park, self._sell_spare,
                     self._reroll):
            a = step(state, target, mask, rerolls)
            if a is not None:
                return a
        return None

    # -- needs ------------------------------------------------------------------------------------
    def needs(self, state: RunState, target: Layout) -> dict[str, Counter]:
        """Per kind: grade -> how many runes of that grade the target still needs made or bought,
        counting merges (a rune of grade g short needs merge_count of grade g - 1)."""
        want: dict[str, Counter] = {}
        for k, g in (*target.runes.values(), *target.hand):
            want.setdefault(k, Counter())[g] += 1
        have: dict[str, Counter] = {}
        for k, g in (*state.board.values(), *state.hand):
            have.setdefault(k, Counter())[g] += 1
        out = {}
        for kind, demand in want.items():
            supply = have.get(kind, Counter())
            need: Counter = Counter()
            carry = 0
            for g in range(self.rules.max_grade, 0, -1):
                need[g] = demand[g] + carry
                carry = self.merge_count * max(0, need[g] - supply[g])
            out[kind] = need
        return out

    def spare(self, state: RunState, target: Layout) -> Counter:
        """(kind, grade) -> runes owned beyond what the target needs, made or as parts."""
        needs = self.needs(state, target)
        have = Counter([*state.board.values(), *state.hand])
        return Counter({r: n - needs.get(r[0], Counter())[r[1]] for r, n in have.items()
                        if n > needs.get(r[0], Counter())[r[1]]})

    def to_buy(self, state: RunState, target: Layout) -> Counter:
        """Kind -> grade-I runes the target still needs bought."""
        out: Counter = Counter()
        want: dict[str, list[int]] = {}
        for k, g in (*target.runes.values(), *target.hand):
            want.setdefault(k, []).append(g)
        have: dict[str, Counter] = {}
        for k, g in (*state.board.values(), *state.hand):
            have.setdefault(k, Counter())[g] += 1
        for kind, grades in want.items():
            n, _ = build_runes(grades, have.setdefault(kind, Counter()), self.merge_count)
            if n:
                out[kind] = n
        return out

    # -- the steps ----------------------------------------------------------------------------------
    def _element(self, state, target, mask, rerolls):
        e = target.sun_element
        if e is None or e == state.sun_element or e not in CASTING_KINDS:
            return None
        return self._ok(mask, "set_sun_element", CASTING_KINDS.index(e))

    def _sector(self, state, target, mask, rerolls):
        for s in sorted(target.sectors(self.rules) - set(state.open_sectors)):
            a = self._ok(mask, "open_sector", s)
            if a is not None:
                return a
        return None

    def _artifact(self, state, target, mask, rerolls):
        for c, art in sorted(state.artifacts.items()):
            if target.artifacts.get(c) != art:
                a = self._ok(mask, "pick_up_artifact", c)
                if a is not None:
                    return a
        for c, art in sorted(target.artifacts.items()):
            if state.artifacts.get(c) is None and art in state.artifact_inventory:
                a = self._ok(mask, "place_artifact", state.artifact_inventory.index(art), c)
                if a is not None:
                    return a
        wanted = Counter(target.artifacts.values()) - Counter(state.artifacts.values())
        for i, art in enumerate(state.artifact_inventory):
            if wanted[art] > 0:
                wanted[art] -= 1
            else:
                a = self._ok(mask, "sell_artifact", i)
                if a is not None:
                    return a
        return None

    def _place(self, state, target, mask, rerolls):
        for c, rune in sorted(target.runes.items()):
            if c in state.board:
                continue
            for h, held in enumerate(state.hand):
                if held == rune:
                    a = self._ok(mask, "place", h, c)
                    if a is not None:
                        return a
        return None

    def _merge(self, state, target, mask, rerolls):
        needs = self.needs(state, target)
        have = Counter([*state.board.values(), *state.hand])
        m = self.merge_count
        for kind, need in sorted(needs.items()):
            for g in range(self.rules.max_grade, 1, -1):
                part = (kind, g - 1)
                if need[g] <= have[(kind, g)] or have[part] < m:
                    continue
                # onto a copy on a cell that wants the merged rune, else onto one in the hand
                for c, r in sorted(state.board.items()):
                    if r == part and target.runes.get(c) == (kind, g):
                        a = self._ok(mask, "merge_board", c)
                        if a is not None:
                            return a
                for h, r in enumerate(state.hand):
                    if r == part:
                        a = self._ok(mask, "merge_hand", h)
                        if a is not None:
                            return a
                for c, r in sorted(state.board.items()):
                    if r == part and target.runes.get(c) != part:
                        a = self._ok(mask, "merge_board", c)
                        if a is not None:
                            return a
        return None

    def _pick_up(self, state, target, mask, rerolls):
        free = state.hand_slots - len(state.hand)
        if free <= 0:
            return None
        in_the_way = [c for c, rune in sorted(state.board.items())
                      if target.runes.get(c) not in (None, rune)]
        stray = [c for c in sorted(state.board) if target.runes.get(c) is None]
        if free == 1 and self._buy_pending(state, target):
            stray = []          # the last free slot is for the purchase; a parked rune waits
        for c in (*in_the_way, *stray):
            a = self._ok(mask, "pick_up", c)
            if a is not None:
                return a
        return None

    def _buy_pending(self, state: RunState, target: Layout) -> bool:
        """A rune the target still needs is on display and the mana pays for it."""
        short = self.to_buy(state, target)
        return any(k is not None and short[k] > 0 and self.rules.prices[k] <= state.mana
                   for k in state.shop_runes)

    def _park(self, state, target, mask, rerolls):
        if len(state.hand) < state.hand_slots:
            return None
        in_the_way = any(target.runes.get(c) not in (None, rune)
                         for c, rune in state.board.items())
        if not (in_the_way or self._buy_pending(state, target)):
            return None
        empty = [c for c in self.cells if c not in state.board and c not in target.runes]
        for h in range(len(state.hand) - 1, -1, -1):
            for c in empty:
                a = self._ok(mask, "place", h, c)
                if a is not None:
                    return a
        return None

    def _sell_one(self, state, target, mask) -> int | None:
        spare = self.spare(state, target)
        keep = Counter(target.hand)
        # the last hand slots first, and never a rune the target keeps in its hand
        for h in range(len(state.hand) - 1, -1, -1):
            rune = state.hand[h]
            if spare[rune] > 0 and keep[rune] < Counter(state.hand)[rune]:
                a = self._ok(mask, "sell", h)
                if a is not None:
                    return a
        return None

    def _make_room(self, state, target, mask, rerolls):
        if len(state.hand) < state.hand_slots:
            return None
        return self._sell_one(state, target, mask)

    def _buy(self, state, target, mask, rerolls):
        short = self.to_buy(state, target)
        for i, offer in enumerate(state.shop_runes):
            if offer is not None and short[offer] > 0:
                a = self._ok(mask, "buy_rune", i)
                if a is not None:
                    return a
        wanted = Counter(target.artifacts.values()) - Counter(
            [*state.artifacts.values(), *state.artifact_inventory])
        for i, offer in enumerate(state.shop_artifacts):
            if offer is not None and wanted[offer] > 0:
                a = self._ok(mask, "buy_artifact", i)
                if a is not None:
                    return a
        return None

    def _sell_spare(self, state, target, mask, rerolls):
        if len(state.hand) <= len(target.hand) and not self.spare(state, target):
            return None
        return self._sell_one(state, target, mask)

    def _reroll(self, state, target, mask, rerolls):
        if not rerolls:
            return None
        short = self.to_buy(state, target)
        arts = Counter(target.artifacts.values()) - Counter(
            [*state.artifacts.values(), *state.artifact_inventory])
        if not short and not arts:
            return None
        shown = set(state.shop_runes) | set(state.shop_artifacts)
        if any(k in shown for k in short) or any(a in shown for a in arts):
            return None          # what is short is on display (the hand or slots are full)
        spec = self.rules.spec
        cost = (sum(self.rules.prices[k] * n for k, n in short.items())
                + sum(spec.artifacts[a].price * n for a, n in arts.items()))
        needed = target.sectors(self.rules) - set(state.open_sectors)
        n = len(state.open_sectors)
        cost += sum(spec.sectors.open_costs[n:n + len(needed)])
        # only while the mana left pays for the reroll and all that is short: a plan that the
        # shop's luck has made too dear is re-planned with what is on display instead
        if state.mana - spec.run.reroll_cost < cost:
            return None
        return self._ok(mask, "reroll")

    def spend_down(self, state: RunState, mask: np.ndarray) -> int | None:
        """With the round's target built: a rune on display of a kind the board holds, into a
        free hand slot (a reserve in this battle, a merge in a later round), the kinds with the
        most copies owned first (the nearest merge). Mana kept buys nothing in battle; the next
        round's search decides what the copies become (they count as owned there)."""
        if len(state.hand) >= state.hand_slots:
            return None
        owned = Counter(k for k, _ in (*state.board.values(), *state.hand))
        offers = [(i, k) for i, k in enumerate(state.shop_runes) if k is not None and owned[k]]
        for i, _ in sorted(offers, key=lambda ik: (-owned[ik[1]], ik[0])):
            a = self._ok(mask, "buy_rune", i)
            if a is not None:
                return a
        return None
