"""The search player's target: the board it wants to field this round, found by a hill climb over
the boards its run can reach (`Assets.reach`), scored against the round's reference boards in
the run's seat (`SeatScorer`).

Starts: the board as it stands (the hand as its reserves), the last target (what the player was
building), and each reference board as the player's core would play it (runes, artifacts and
hand), cut down to what the assets reach: runes and artifacts the player does not own are dropped
one by one, dearest first, until the rest is reachable. The best `climbs` distinct starts are
climbed, and always the board as it stands; each climb spends an equal share of the boards left
to score (`boards` in all), in
generations of `mutants` edits, and stops after `patience` generations without a better board.
(Boards, not battles, are the budget: scoring a board against the reference's 2-16 boards costs
less than building and checking it, so time follows boards.) A child is played against the
reference boards only until it cannot beat its parent (`SeatScorer.bounded`): the climb keeps
a child only if it does, so it climbs the same way with fewer battles.

Edits (`TargetMutator`): add a rune (a kind on display in the shop half the time, any unlocked
kind otherwise; grade I mostly), remove one, move one, swap two, change a rune's kind or grade,
keep an owned rune the target had dropped, the sun's element (a flowing core), add, move or remove
an artifact, add or remove a hand reserve, buy a copy of a board rune's kind that the shop shows
(a reserve now, a merge later), and merge a board rune with copies of it. An edit is kept only if its target is reachable.
Every draw comes from the generator the caller passes, so a search is reproducible.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rune_env.rules import CASTING_KINDS, Board, Rules, geometry

from .assets import Assets
from .boards import Layout, artifacts_by_effect, board_cost, fast_key, hill_climb, layout_key
from .draws import Draws
from .goal import grow_toward, progress_of
from .scoring import Objective, SeatScore, SeatScorer


# A board's score where the bounded scorer showed it below its parent (`search_target`): below
# every score, so a climb never keeps it.
BELOW = SeatScore(-math.inf, -math.inf, -math.inf)
BOUND_SLACK = 1e-7      # (`search_target`'s score: the bound's margin for float error)


@dataclass(frozen=True)
class ClimbSettings:
    """How hard one target search looks (the player's knobs, not rules of the game)."""

    boards: int = 600           # candidate boards the search may score
    mutants: int = 12           # edits a generation
    patience: int = 8           # generations without a better board before a climb stops
    climbs: int = 2             # best distinct starts climbed
    objective: Objective = Objective()


class TargetMutator:
    """Random single edits of a target layout that keep it reachable from the assets; the
    `Mutator` protocol of `agents.search.boards.hill_climb` (`legal`, `children`, `rules`)."""

    def __init__(self, assets: Assets, rng: np.random.Generator, rerolls: bool = True):
        self.assets, self.rerolls = assets, rerolls
        # numpy's draws from the search's own generator, bit for bit, without numpy's per-call cost
        self.rng = Draws(rng)
        self.plans: dict[tuple, tuple[int, int]] = {}   # board key -> its plan's (waste, mana)
        # layout -> its plan's (waste, mana), or None when out of reach: a search tries the same
        # edit of the same parent many times, and `reach` is most of a search's time
        self._reaches: dict[tuple, tuple[int, int] | None] = {}
        self.rules: Rules = assets.rules
        geo = geometry(self.rules.radius)
        self.cells = list(range(geo.n_cells))
        self.kinds = list(assets.unlocked)
        self.on_show = sorted({k for k in assets.shop_runes if k is not None})
        effects = artifacts_by_effect(self.rules)
        self.artifacts = sorted({a for names in effects.values() for a in names})
        flows = self.rules.spec.cores[assets.core].core_flow_strength > 0
        self.elements = list(CASTING_KINDS) if flows else []
        self.ops = [self._add, self._add, self._remove, self._move, self._swap, self._rekind,
                    self._regrade, self._keep, self._add_artifact, self._move_artifact,
                    self._remove_artifact, self._hand_add, self._hand_remove, self._copy,
                    self._merge]
        if self.elements:
            self.ops.append(self._element)
        # what the edits read of the assets, counted once a search
        self._owned_runes = Counter(assets.owned_runes())
        self._owned_rune_kinds = sorted(self._owned_runes)
        self._owned_artifact_list = assets.owned_artifacts()
        self._owned_artifacts = Counter(self._owned_artifact_list)
        self._merge_need = self.rules.spec.grades.merge_count - 1
        self._max_grade = self.rules.max_grade

    # -- the protocol of hill_climb --------------------------------------------------------------
    def legal(self, board: Board) -> bool:
        return self._plan(Layout.of(board)) is not None

    @staticmethod
    def key(board: Board) -> tuple:
        return fast_key(board)

    def plan_of(self, board: Board) -> tuple[int, int]:
        """(waste, mana) of the board's plan (`Reach`)."""
        key = fast_key(board)
        if key not in self.plans:
            self.plans[key] = self._plan(Layout.of(board))
        return self.plans[key]

    def _plan(self, layout: Layout, key: tuple | None = None) -> tuple[int, int] | None:
        """(waste, mana) of reaching `layout` (`Assets.reach`, remembered), None if out of
        reach. The key (`layout_key`, given or computed) holds everything `reach` reads of a
        layout (its runes, core, element, artifacts and hand in order), so a remembered answer
        is the answer."""
        if key is None:
            key = layout_key(layout)
        if key not in self._reaches:
            self._reaches[key] = self.assets.price(layout, self.rerolls)
        return self._reaches[key]

    def children(self, parent: Layout, count: int, seen: set[str]) -> list[Board]:
        out: list[Board] = []
        for _ in range(count * 20):
            if len(out) >= count:
                break
            layout = parent.copy()
            if not self._pick(self.ops)(layout):
                continue
            shape = layout_key(layout)
            plan = self._plan(layout, shape)
            if plan is None:
                continue
            # the board's key before the board: most reachable edits were seen before
            sectors = self.assets.fielded_sectors(layout)
            key = self.assets.fielded_key(shape, sectors)
            if key in seen:
                continue
            seen.add(key)
            self.plans[key] = plan
            out.append(self.assets.board_of(layout, sectors))
        return out

    # -- edits: each changes the layout in place and says whether it did --------------------------
    def _pick(self, seq):
        return seq[self.rng.integers(len(seq))]

    def _kind(self) -> str:
        if self.on_show and self.rng.random() < 0.5:
            return self._pick(self.on_show)
        return self._pick(self.kinds)

    def _grade(self) -> int:
        # grade I mostly: higher grades cost merge_count times more each
        return 1 if self.rng.random() < 0.7 else self.rng.integers(2, self.rules.max_grade + 1)

    def _free(self, layout: Layout) -> list[int]:
        return [c for c in self.cells if c not in layout.runes]

    def _add(self, layout: Layout) -> bool:
        free = self._free(layout)
        if not free:
            return False
        layout.runes[self._pick(free)] = (self._kind(), self._grade())
        return True

    def _remove(self, layout: Layout) -> bool:
        if not layout.runes:
            return False
        del layout.runes[self._pick(sorted(layout.runes))]
        return True

    def _move(self, layout: Layout) -> bool:
        free = self._free(layout)
        if not layout.runes or not free:
            return False
        layout.runes[self._pick(free)] = layout.runes.pop(self._pick(sorted(layout.runes)))
        return True

    def _swap(self, layout: Layout) -> bool:
        cells = sorted(layout.runes)
        if len(cells) < 2:
            return False
        a, b = (cells[i] for i in self.rng.choice_two(len(cells)))
        if layout.runes[a] == layout.runes[b]:
            return False
        layout.runes[a], layout.runes[b] = layout.runes[b], layout.runes[a]
        return True

    def _rekind(self, layout: Layout) -> bool:
        if not layout.runes:
            return False
        cell = self._pick(sorted(layout.runes))
        layout.runes[cell] = (self._kind(), layout.runes[cell][1])
        return True

    def _regrade(self, layout: Layout) -> bool:
        if not layout.runes:
            return False
        cell = self._pick(sorted(layout.runes))
        kind, grade = layout.runes[cell]
        step = 1 if grade == 1 else (-1 if grade == self.rules.max_grade else self._pick((-1, 1)))
        layout.runes[cell] = (kind, grade + step)
        return True

    def _keep(self, layout: Layout) -> bool:
        """An owned rune the layout does not use, back on a free cell (or in the hand)."""
        if not self._owned_runes:
            return False
        used = Counter(layout.runes.values())
        used.update(layout.hand)
        unused = [r for r in self._owned_rune_kinds if self._owned_runes[r] > used[r]]
        if not unused:
            return False
        rune = self._pick(unused)
        free = self._free(layout)
        if free and self.rng.random() < 0.7:
            layout.runes[self._pick(free)] = rune
        else:
            layout.hand.append(rune)
        return True

    def _element(self, layout: Layout) -> bool:
        element = self._pick(self.elements)
        if element == layout.sun_element:
            return False
        layout.sun_element = element
        return True

    def _add_artifact(self, layout: Layout) -> bool:
        cell = self._pick(self.cells)
        if not self.artifacts or cell in layout.artifacts:
            return False
        owned = []
        if self._owned_artifacts:
            have, placed = self._owned_artifacts, Counter(layout.artifacts.values())
            owned = [a for a in self._owned_artifact_list if have[a] > placed[a]]
        layout.artifacts[cell] = self._pick(owned) if owned and self.rng.random() < 0.7 \
            else self._pick(self.artifacts)
        return True

    def _move_artifact(self, layout: Layout) -> bool:
        target = self._pick(self.cells)
        if not layout.artifacts or target in layout.artifacts:
            return False
        layout.artifacts[target] = layout.artifacts.pop(self._pick(sorted(layout.artifacts)))
        return True

    def _remove_artifact(self, layout: Layout) -> bool:
        if not layout.artifacts:
            return False
        del layout.artifacts[self._pick(sorted(layout.artifacts))]
        return True

    def _hand_add(self, layout: Layout) -> bool:
        on_board = sorted(set(layout.runes.values()))
        rune = self._pick(on_board) if on_board and self.rng.random() < 0.7 \
            else (self._kind(), 1)
        layout.hand.append(rune)
        return True

    def _copy(self, layout: Layout) -> bool:
        """A grade-I copy of a board rune's kind that the shop shows, into the hand: a reserve
        now, a merge later (copies seen in later rounds' shops cost no reroll)."""
        kinds = sorted({k for k, _ in layout.runes.values()} & set(self.on_show))
        if not kinds:
            return False
        layout.hand.append((self._pick(kinds), 1))
        return True

    def _merge(self, layout: Layout) -> bool:
        """A board rune one grade up, from merge_count - 1 copies of it in the layout (the hand's
        first), as the merge action does: what copies bought earlier are for."""
        need = self._merge_need
        # copies of a cell's rune: in the hand, and on the board's other cells (its count less 1)
        copies = Counter(layout.hand)
        copies.update(layout.runes.values())
        cells = [c for c, (k, g) in sorted(layout.runes.items()) if g < self._max_grade
                 and copies[(k, g)] - 1 >= need]
        if not cells:
            return False
        cell = self._pick(cells)
        rune = layout.runes[cell]
        left = need
        for i in range(len(layout.hand) - 1, -1, -1):
            if left and layout.hand[i] == rune:
                layout.hand.pop(i)
                left -= 1
        for c in sorted(layout.runes, reverse=True):
            if left and c != cell and layout.runes[c] == rune:
                del layout.runes[c]
                left -= 1
        layout.runes[cell] = (rune[0], rune[1] + 1)
        return True

    def _hand_remove(self, layout: Layout) -> bool:
        if not layout.hand:
            return False
        layout.hand.pop(self.rng.integers(len(layout.hand)))
        return True


def cut_to_reach(assets: Assets, layout: Layout, rerolls: bool = True) -> Layout | None:
    """The layout with runes and artifacts the assets do not own dropped one at a time, dearest
    first (grade, then price), until it is reachable; None if even the owned part is not."""
    new = layout.copy()
    new.core = assets.core
    if new.sun_element is not None and assets.rules.spec.cores[assets.core].core_flow_strength <= 0:
        new.sun_element = None
    elif assets.rules.spec.cores[assets.core].core_flow_strength > 0 and new.sun_element is None:
        new.sun_element = assets.sun_element
    new.hand = new.hand[: assets.hand_slots]
    prices = assets.rules.prices
    owned = Counter(assets.owned_runes())
    while assets.price(new, rerolls) is None:     # price: reach, its rune plan remembered
        extra = sorted((c for c, r in new.runes.items() if owned[r] == 0),
                       key=lambda c: (-new.runes[c][1], -prices[new.runes[c][0]], c))
        if new.hand:
            new.hand.pop()
        elif extra:
            del new.runes[extra[0]]
        elif new.artifacts:
            del new.artifacts[sorted(new.artifacts)[-1]]
        elif new.runes:
            del new.runes[sorted(new.runes)[-1]]
        else:
            return None
    return new


def search_target(assets: Assets, scorer: SeatScorer, starts: Sequence[Layout],
                  settings: ClimbSettings, rng: np.random.Generator,
                  rerolls: bool = True, goal: Layout | None = None,
                  scored: list | None = None) -> tuple[Layout, SeatScore]:
    """The best reachable layout found from `starts` (the module docstring). The assets' own
    layout is always a start (and always climbed), so there is always an answer. `goal`: a board
    to build towards (`agents.search.goal`): a start too, and its share held is part of the objective.
    `scored`: a list that gets (board, score, mana its plan spends) of every board scored (the
    finalists of a look a round ahead, `agents.search.ahead`)."""
    rules = assets.rules
    if goal is not None:
        grown = [grow_toward(base, goal, assets.shop_runes, assets.shop_artifacts, rules)
                 for base in (assets.layout(), *starts[:1])]
        starts = [*grown, *starts, Layout(dict(goal.runes), assets.core, goal.sun_element,
                                          dict(goal.artifacts), list(goal.hand))]
    mutator = TargetMutator(assets, rng, rerolls)
    candidates, seen = [], set()
    for layout in [assets.layout(), *starts]:
        cut = cut_to_reach(assets, layout, rerolls)
        if cut is None:
            continue
        board = assets.board_of(cut)
        key = fast_key(board)
        if key not in seen:
            seen.add(key)
            candidates.append(board)

    income = rules.spec.run.income
    objective = settings.objective
    wealth = max(1, assets.mana + board_cost(assets.board_of(assets.layout()), rules))

    held_of = progress_of(goal, rules) if goal is not None else None

    def score(boards: list[Board], floor: SeatScore | None = None,
              parent: Board | None = None) -> list[SeatScore]:
        """The boards' scores; with `floor` (the climb's parent's score), a board shown to score
        below it gets `BELOW` instead of its score (`SeatScorer.bounded`): the climb keeps a
        child only if it beats the parent, so its choices are the same."""
        parts = []
        for b in boards:
            waste, mana = mutator.plan_of(b)
            held = held_of(b) if held_of is not None else 0.0
            parts.append((waste, 1.0 - (assets.mana - mana) / wealth, held, mana))
        if floor is None or scored is not None:
            results = scorer(boards)
        else:
            # the value without its battles' part: a board's floor for payoff + margin_weight x
            # margin is the parent's value less that, less a slack above the float error of the
            # sums and the keys' rounding (9 places): a board cut off has a key below the
            # parent's, so the climb would not have kept it
            rest = [objective.score(0.0, 0.0, w, income, inv, held).value
                    for w, inv, held, _ in parts]
            results = scorer.bounded(boards, [floor.value - BOUND_SLACK - r for r in rest],
                                     objective.margin_weight, parent)
        out = []
        for b, result, (waste, invested, held, mana) in zip(boards, results, parts):
            if result is None:
                out.append(BELOW)
                continue
            p, m = result
            out.append(objective.score(p, m, waste, income, invested, held))
            if scored is not None:
                scored.append((b, out[-1], mana))
        return out

    scores = score(candidates)
    order = sorted(range(len(candidates)), key=lambda i: scores[i].key(), reverse=True)
    # the best starts, and always the board as it stands (candidates[0]): a start that scores
    # better now may be far from it, and the small changes to the board itself (a rune more)
    # are then never tried
    climbed = [candidates[i] for i in order[: settings.climbs] if i != 0][: settings.climbs - 1]
    climbed.append(candidates[0])
    left = max(0, settings.boards - len(candidates))
    generations = max(1, left // (settings.mutants * max(1, len(climbed))))
    best_board, best_score = candidates[order[0]], scores[order[0]]
    for start in climbed:
        found = hill_climb(score, [start], mutator, generations, settings.mutants,
                           settings.patience, bounded=True)
        if found is not None and found[1].key() > best_score.key():
            best_board, best_score = found[0], found[1]
    return Layout.of(best_board), best_score


def align_target(assets: Assets, target: Layout, scorer: SeatScorer, floor: float) -> Layout:
    """The target with its pieces moved onto the cells where the board already holds them, each
    move kept when the board so changed still scores `floor` battle points against the reference
    (`scorer`). The planner passes its plan's points less its `align` tolerance, so the moves of
    a whole preparation never cost more than the tolerance.

    A rune (or artifact) on a cell that the target gives to something else, while the target
    wants a copy of it on a cell the board has not filled with it yet, trades cells with that
    copy: the target keeps what stands instead of asking for it to be picked up and put down
    elsewhere. Only moves are tried: what the target holds is unchanged.

    Why: a layout is one of many near-equal ones, picked by a seeded search. A player labelling
    another's states (DAgger) would otherwise undo every placement that is not its own pick, and
    a learner of such labels learns to undo its own: the clone of docs/RESULTS.md ("Cloning the
    planner itself") picked its runes up and put them down until the round's action cap readied
    it."""
    current = target
    for pieces, standing in (("runes", assets.board), ("artifacts", assets.artifacts)):
        for cell, piece in sorted(standing.items()):
            wanted = getattr(current, pieces)
            if wanted.get(cell) == piece:
                continue
            # the target's copy of this piece on a cell the board has not filled with it yet
            copies = [c for c, p in sorted(wanted.items())
                      if p == piece and standing.get(c) != piece]
            if not copies:
                continue
            moved = current.copy()
            slots = getattr(moved, pieces)
            other, displaced = copies[0], slots.get(cell)
            slots[cell] = piece
            if displaced is None:
                del slots[other]
            else:
                slots[other] = displaced
            points = scorer([assets.board_of(moved)])[0][0]
            if points >= floor:
                current = moved
    return current
