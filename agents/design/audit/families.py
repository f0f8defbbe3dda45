"""The balance audit's candidate boards: the families (one rune, two runes, mono-kind, tricks) and
the open search (the shared hill climb of `agents.search.boards`). Each family and why it is
complete is described in the package docstring (`agents/design/audit/__init__.py`).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from rune_env.rules import ATTACK_KINDS, CASTING_KINDS, KINDS, Board, Rules, geometry

from agents.search.boards import (Layout, Mutator, acting_elements, artifacts_by_effect,  # noqa: F401
                                  core_variants, hill_climb, open_ring_cells, open_rings)

from .scoring import (_SEARCH_STREAM, AuditError, AuditSettings, Evaluator, Opponents, Score,
                      hand_slots)


# -- building candidate boards ----------------------------------------------------------------
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
    effects = artifacts_by_effect(rules)
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
