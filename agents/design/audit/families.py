"""The balance audit's candidate boards: the families (one rune, two runes, mono-kind, tricks) and
the open search's hill climb. Each family and why it is complete is described in the package
docstring (`agents/audit/__init__.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from rune_env.rules import ATTACK_KINDS, CASTING_KINDS, KINDS, Board, Rules, geometry

from .scoring import (_SEARCH_STREAM, AuditError, AuditSettings, Evaluator, Opponents, Score,
                      board_cost, board_key, hand_slots)


# -- building candidate boards ----------------------------------------------------------------
@dataclass
class Layout:
    """A board under construction: what the families and mutations edit, turned into a validated
    `Board` (with the ring-3 sectors its cells need) by `board`."""

    runes: dict[int, tuple[str, int]]
    core: str
    sun_element: str | None = None
    artifacts: dict[int, str] = field(default_factory=dict)
    hand: list[tuple[str, int]] = field(default_factory=list)

    @classmethod
    def of(cls, board: Board) -> "Layout":
        return cls(dict(board.runes), board.core, board.sun_element, dict(board.artifacts),
                   list(board.hand))

    def copy(self) -> "Layout":
        return Layout(dict(self.runes), self.core, self.sun_element, dict(self.artifacts),
                      list(self.hand))

    def board(self, rules: Rules, round_: int) -> Board:
        geo = geometry(rules.radius)
        sectors = frozenset(geo.sector[c] for c in (*self.runes, *self.artifacts)
                            if geo.sector[c] >= 0)
        return Board(runes=dict(self.runes), artifacts=dict(self.artifacts), hand=tuple(self.hand),
                     core=self.core, sun_element=self.sun_element, open_sectors=sectors,
                     round=round_).validate(rules)


def open_rings(rules: Rules) -> range:
    """The rings open from the start of a run: all but the outermost, which opens by sectors."""
    return range(1, rules.radius)


def open_ring_cells(rules: Rules) -> list[int]:
    geo = geometry(rules.radius)
    return [c for ring in open_rings(rules) for c in geo.ring_cells[ring]]


def acting_elements(rules: Rules, ring1_kinds: Iterable[str]) -> list[str]:
    """The elements a flowing core (the sun) may flow as that differ for runes of `ring1_kinds` in
    ring 1: each that feeds one of the kinds (a flow into it, or attunement with its own kind),
    and one that feeds none, standing for all of those. The sun's element does nothing else (the
    core is no rune: no affinity, opposition or resonance) and reaches ring 1 only, so the elements
    left out play exactly the battles of the one kept."""
    kinds = set(ring1_kinds)
    acting = [e for e in CASTING_KINDS
              if e in kinds or any(f.from_ == e for k in kinds for f in rules.flows_into[k])]
    idle = [e for e in CASTING_KINDS if e not in acting]
    return acting + idle[:1]


def core_variants(rules: Rules, ring1_kinds: Iterable[str] | None = None
                  ) -> list[tuple[str, str | None]]:
    """Every (core, sun element): a core that flows once per casting element, or, given the kinds
    of the runes in ring 1, once per element that acts differently on them (`acting_elements`)."""
    out = []
    for core, mod in rules.spec.cores.items():
        if mod.core_flow_strength <= 0:
            out.append((core, None))
            continue
        elements = CASTING_KINDS if ring1_kinds is None else acting_elements(rules, ring1_kinds)
        out.extend((core, e) for e in elements)
    return out


def one_rune_boards(rules: Rules, round_: int, grades: Sequence[int]) -> list[Board]:
    geo = geometry(rules.radius)
    # one cell per ring: a lone rune plays the same from any cell of it (the package docstring)
    cells = [geo.ring_cells[ring][0] for ring in open_rings(rules)]
    return [Layout({cell: (kind, g)}, core, sun).board(rules, round_)
            for kind in ATTACK_KINDS for g in grades for cell in cells
            for core, sun in core_variants(rules, [kind] if geo.ring[cell] == 1 else [])]


def two_rune_boards(rules: Rules, round_: int, parents: Sequence[Board],
                    grades: Sequence[int]) -> list[Board]:
    cells = open_ring_cells(rules)
    out = []
    for parent in parents:
        for cell in cells:
            if cell in parent.runes:
                continue
            for kind in KINDS:
                for g in grades:
                    layout = Layout.of(parent)
                    layout.runes[cell] = (kind, g)
                    out.append(layout.board(rules, round_))
    return out


def mono_placements(rules: Rules, sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Ring-1 cell sets of each size: the first n cells, and each fold's symmetric orbits (a
    resonance pattern, then the fold's other orbits) filled up to n in casting order."""
    geo = geometry(rules.radius)
    ring1 = geo.ring_cells[1]
    out: list[tuple[int, ...]] = []
    for n in sizes:
        if n > len(ring1):
            continue
        sets = [tuple(ring1[:n])]
        for fold, orbits in geo.patterns.items():
            in_ring1 = [cells for ring, cells in orbits if ring == 1]
            if not in_ring1 or len(in_ring1[0]) > n:
                continue
            chosen: list[int] = []
            for cell in [c for orbit in in_ring1 for c in orbit] + list(ring1):
                if len(chosen) < n and cell not in chosen:
                    chosen.append(cell)
            sets.append(tuple(sorted(chosen)))
        for s in sets:
            if s not in out:
                out.append(s)
    return out


def mono_kind_boards(rules: Rules, round_: int, grades: Sequence[int],
                     sizes: Sequence[int]) -> list[Board]:
    return [Layout({c: (kind, g) for c in cells}, core, sun).board(rules, round_)
            for kind in CASTING_KINDS for g in grades for cells in mono_placements(rules, sizes)
            for core, sun in core_variants(rules, [kind])]


def _artifacts_by_effect(rules: Rules) -> dict[str, list[str]]:
    """The artifacts that act in battle, by what they do."""
    out: dict[str, list[str]] = {"wards": [], "absorbs": [], "grade_bonus": []}
    for name, spec in rules.spec.artifacts.items():
        for effect in out:
            if getattr(spec, effect) > 0:
                out[effect].append(name)
    return out


def _trick_edits(rules: Rules, base: Board) -> list[tuple[str, Callable[[Layout], Layout | None]]]:
    """(category, edit) pairs for a small board; an edit returns a new layout or None."""
    geo = geometry(rules.radius)
    rune_cells = sorted(base.runes)
    # an empty cell whose reach covers the most runes (for a stone next to, not on, the runes)
    empty = [c for c in open_ring_cells(rules) if c not in base.runes]
    beside = max(empty, key=lambda c: sum(r in geo.reach(c) for r in rune_cells))
    edits: list[tuple[str, Callable[[Layout], Layout | None]]] = []

    def with_hand(runes: list[tuple[str, int]], core: str | None = None):
        def edit(layout: Layout) -> Layout | None:
            new = layout.copy()
            if core is not None:
                new.core, new.sun_element = core, None
            new.hand = list(runes)
            return new if len(new.hand) <= hand_slots(rules, new.core) else None
        return edit

    def with_artifact(name: str, cell: int):
        def edit(layout: Layout) -> Layout | None:
            if cell in layout.artifacts or len(layout.artifacts) >= rules.spec.run.artifact_slots:
                return None
            new = layout.copy()
            new.artifacts[cell] = name
            return new
        return edit

    on_board = sorted({r for r in base.runes.values() if r[0] in rules.casting_kinds})
    for kind, g in on_board:
        for grade in sorted({1, g}):
            for n in range(1, hand_slots(rules, base.core) + 1):
                edits.append(("reserve", with_hand([(kind, grade)] * n)))
    for core, mod in rules.spec.cores.items():
        if not mod.reserve_any_kind:
            continue
        edits.append(("any_reserve", with_hand([], core)))
        reserves = sorted({(k, 1) for k in CASTING_KINDS} | set(on_board))
        for rune in reserves:
            for n in range(1, hand_slots(rules, core) + 1):
                edits.append(("any_reserve", with_hand([rune] * n, core)))
    effects = _artifacts_by_effect(rules)
    for name in effects["wards"] + effects["grade_bonus"]:
        for cell in rune_cells + [beside]:
            edits.append((name, with_artifact(name, cell)))
    for name in effects["absorbs"]:       # a doll acts wherever it stands
        edits.append((name, with_artifact(name, rune_cells[0])))
    return edits


def trick_boards(rules: Rules, round_: int, bases: Sequence[Board]) -> list[Board]:
    """Each base with each trick, and with two tricks of different categories."""
    out = []
    for base in bases:
        edits = _trick_edits(rules, base)
        start = Layout.of(base)
        singles = [(cat, edit, edit(start)) for cat, edit in edits]
        singles = [(cat, edit, lay) for cat, edit, lay in singles if lay is not None]
        out.extend(lay.board(rules, round_) for _, _, lay in singles)
        for i, (cat, _, lay) in enumerate(singles):
            for cat2, edit2, _ in singles[i + 1:]:
                if cat2 == cat or {cat, cat2} == {"reserve", "any_reserve"}:
                    continue          # the any-reserve core brings its own hand
                both = edit2(lay)
                if both is not None:
                    out.append(both.board(rules, round_))
    return out


# -- the open search --------------------------------------------------------------------------
class Mutator:
    """Random single edits of a layout that keep it budget-legal and within a fresh run's slots."""

    OPS = ("add", "remove", "move", "swap", "rekind", "regrade", "core", "add_artifact",
           "move_artifact", "remove_artifact", "hand_add", "hand_remove")

    def __init__(self, rules: Rules, round_: int, budget: int, rng: np.random.Generator):
        self.rules, self.round, self.budget, self.rng = rules, round_, budget, rng
        geo = geometry(rules.radius)
        self.cells = list(range(geo.n_cells))
        effects = _artifacts_by_effect(rules)
        self.artifacts = sorted({a for names in effects.values() for a in names})
        self.cores = core_variants(rules)

    def _pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def _grade(self) -> int:
        return int(self.rng.integers(1, self.rules.max_grade + 1))

    def legal(self, board: Board) -> bool:
        return (board_cost(board, self.rules) <= self.budget
                and len(board.artifacts) <= self.rules.spec.run.artifact_slots
                and len(board.hand) <= hand_slots(self.rules, board.core))

    def mutate(self, layout: Layout) -> Layout | None:
        new = layout.copy()
        op = self._pick(self.OPS)
        free = [c for c in self.cells if c not in new.runes]
        filled = sorted(new.runes)
        if op == "add" and free:
            new.runes[self._pick(free)] = (self._pick(KINDS), self._grade())
        elif op == "remove" and len(filled) > 1:
            del new.runes[self._pick(filled)]
        elif op == "move" and filled and free:
            new.runes[self._pick(free)] = new.runes.pop(self._pick(filled))
        elif op == "swap" and len(filled) > 1:
            a, b = (filled[int(i)] for i in self.rng.choice(len(filled), 2, replace=False))
            new.runes[a], new.runes[b] = new.runes[b], new.runes[a]
        elif op == "rekind" and filled:
            cell = self._pick(filled)
            new.runes[cell] = (self._pick(KINDS), new.runes[cell][1])
        elif op == "regrade" and filled:
            cell = self._pick(filled)
            new.runes[cell] = (new.runes[cell][0], self._grade())
        elif op == "core":
            new.core, new.sun_element = self._pick(self.cores)
        elif op == "add_artifact" and self.artifacts:
            new.artifacts[self._pick(self.cells)] = self._pick(self.artifacts)
        elif op == "move_artifact" and new.artifacts:
            cell = self._pick(sorted(new.artifacts))
            target = self._pick(self.cells)
            if target in new.artifacts:
                return None
            new.artifacts[target] = new.artifacts.pop(cell)
        elif op == "remove_artifact" and new.artifacts:
            del new.artifacts[self._pick(sorted(new.artifacts))]
        elif op == "hand_add":
            new.hand.append((self._pick(KINDS), self._grade()))
        elif op == "hand_remove" and new.hand:
            new.hand.pop(int(self.rng.integers(len(new.hand))))
        else:
            return None
        return new

    def children(self, parent: Layout, count: int, seen: set[str]) -> list[Board]:
        """Up to `count` legal mutants not in `seen` (their keys are added to it)."""
        out: list[Board] = []
        for _ in range(count * 20):          # most edits are legal; give up on a cramped board
            if len(out) >= count:
                break
            layout = self.mutate(parent)
            if layout is None:
                continue
            board = layout.board(self.rules, self.round)
            key = board_key(board, self.rules)
            if key in seen or not self.legal(board):
                continue
            seen.add(key)
            out.append(board)
        return out


def hill_climb(score: Callable[[list[Board]], list], starts: Sequence[Board], mutator: Mutator,
               generations: int, mutants: int, patience: int, ceiling: tuple | None = None):
    """A (1 + lambda) hill climb from each legal start (the package docstring's open search) on
    `score` (boards -> scores with a `key()`, higher better). Returns (the best board, its
    score, the number of boards scored), or None if no start is legal. `ceiling`: a key no
    board can beat; a board that reaches it ends the climb (nothing after could replace it)."""
    rules = mutator.rules
    seen: set[str] = set()
    best: tuple[Board, object] | None = None
    for start in starts:
        if best is not None and ceiling is not None and best[1].key() >= ceiling:
            break
        if not mutator.legal(start):
            continue
        seen.add(board_key(start, rules))
        current, current_score = start, score([start])[0]
        idle = 0
        for _ in range(generations):
            if ceiling is not None and current_score.key() >= ceiling:
                break
            kids = mutator.children(Layout.of(current), mutants, seen)
            if not kids:
                break
            scores = score(kids)
            i = max(range(len(kids)), key=lambda j: scores[j].key())
            if scores[i].key() > current_score.key():
                current, current_score, idle = kids[i], scores[i], 0
            else:
                idle += 1
                if idle >= patience:
                    break
        if best is None or current_score.key() > best[1].key():
            best = (current, current_score)
    return None if best is None else (best[0], best[1], len(seen))


def open_search(evaluator: Evaluator, choose: Opponents, starts: Sequence[Board], round_: int,
                budget: int, settings: AuditSettings) -> tuple[Board, Score, int]:
    """The hill climb of the package docstring; returns the best board, its choose score and the
    number of boards scored."""
    mutator = Mutator(evaluator.rules, round_, budget,
                      np.random.default_rng([settings.seed, round_, _SEARCH_STREAM]))
    best = hill_climb(lambda boards: evaluator.scores(boards, choose), starts, mutator,
                      settings.search_generations, settings.search_mutants,
                      settings.search_patience)
    if best is None:
        raise AuditError(f"round {round_}: no start of the open search fits the budget {budget}")
    return best
