"""Boards as a search edits them, what a run pays for them, and the hill climb: the primitives
every board search of the project shares (the balance audit, the metagame's best-response oracle
and the search player, `agents.search.planner`).

- `Layout`: a board under construction (runes, core, sun element, artifacts, hand), turned into a
  validated `Board` with the ring-3 sectors its cells need.
- `board_cost`: the mana a run pays for a board (RULES section 16; merged grades count their grade-I
  runes, sectors in opening order); `hand_slots`: a fresh run's hand slots with a core.
- `board_key`: a board's content as one string (equal boards, equal keys).
- `core_variants` / `acting_elements`: every (core, sun element) that plays differently.
- `Mutator`: random single edits of a layout that keep it legal (by default budget-legal within a
  fresh run's slots; a subclass states its own legality and edits, as the search player does).
- `hill_climb`: a (1 + lambda) climb from each start on any score with a `key()`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import chain
from typing import Callable, Iterable, Sequence

import numpy as np

from rune_env.rules import CASTING_KINDS, KINDS, Board, Rules, geometry
from rune_env.run.loop import units

_flat = chain.from_iterable


@dataclass(slots=True)
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

    def in_core(self, core: str) -> "Layout":
        """This layout as `core` plays it (a start for a search in another core: the pool's and
        the metagame's boards, whatever their own core); its pieces are shared, not copied."""
        return Layout(self.runes, core, self.sun_element, self.artifacts, self.hand)

    def sectors(self, rules: Rules) -> frozenset[int]:
        """The outer ring's sectors its runes and artifacts stand in (each must be open)."""
        sector = geometry(rules.radius).sector         # -1 for a cell of an inner ring
        found = {sector[c] for c in self.runes}
        if self.artifacts:
            found.update([sector[c] for c in self.artifacts])
        found.discard(-1)
        return frozenset(found)

    def board(self, rules: Rules, round_: int) -> Board:
        return Board(runes=dict(self.runes), artifacts=dict(self.artifacts), hand=tuple(self.hand),
                     core=self.core, sun_element=self.sun_element,
                     open_sectors=self.sectors(rules), round=round_).validate(rules)


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



def artifacts_by_effect(rules: Rules) -> dict[str, list[str]]:
    """The artifacts that act in battle, by what they do."""
    out: dict[str, list[str]] = {"wards": [], "absorbs": [], "grade_bonus": []}
    for name, spec in rules.spec.artifacts.items():
        for effect in out:
            if getattr(spec, effect) > 0:
                out[effect].append(name)
    return out



def board_key(board: Board, rules: Rules) -> str:
    """A board's content as one string (equal boards, equal keys)."""
    return json.dumps(board.to_json(rules), sort_keys=True)


def fast_key(board: Board) -> tuple:
    """A board's content as a hashable tuple (what `board_key` says, without JSON: a twentieth
    of its time, for the searches that key every mutant): its `layout_key` with the board's
    core, then its open sectors (their number, then each), relics, max HP, boss rules, round
    and label."""
    key = _pieces_key(board.core, board.sun_element, board.runes, board.artifacts, board.hand)
    key += board_fields_key(board.open_sectors, board.relics, board.max_hp, board.boss_rules,
                            board.round, board.label)
    return tuple(key)


def board_fields_key(open_sectors, relics, max_hp, boss_rules, round_: int, label: str) -> tuple:
    """The part of `fast_key` after a board's pieces: its open sectors (their number, then
    each), relics, max HP, boss rules, round and label (`Assets.fielded_key` builds a board's
    key from a layout's with it)."""
    return (len(open_sectors), *sorted(open_sectors), relics, max_hp, boss_rules, round_, label)


def layout_key(layout: "Layout") -> tuple:
    """A layout's content as a hashable tuple (equal layouts of one round, equal keys): its core
    and sun element, then its runes (their number, then cell and rune, by cell), artifacts (the
    same) and hand (its number, then the runes in order), in one flat tuple. One tuple, not one
    per piece: a search keeps a key for every edit it prices, and the garbage collector walks
    every tuple kept until it finds it holds no container (a key of nested tuples made a tenth
    of a search's time)."""
    return tuple(_pieces_key(layout.core, layout.sun_element, layout.runes, layout.artifacts,
                             layout.hand))


def _pieces_key(core: str, sun: str | None, runes: dict, artifacts: dict, hand) -> list:
    # (cell, piece) pairs sorted by cell (cells are unique, so the pieces are never compared),
    # flattened in C: a search keys every edit it tries
    return [core, sun, len(runes), *_flat(sorted(runes.items())), len(artifacts),
            *_flat(sorted(artifacts.items())), len(hand), *hand]


def board_cost(board: Board, rules: Rules) -> int:
    """Mana a run pays for the board: runes on it and in the hand (merged grades count their
    grade-I runes), artifacts, and the ring-3 sectors it has open, in opening order."""
    return holdings_price(rules, (*board.runes.values(), *board.hand), board.artifacts.values(),
                          len(board.open_sectors))


def holdings_price(rules: Rules, runes: Iterable, artifacts: Iterable[str], sectors: int) -> int:
    """Mana a run pays for these runes ((kind, grade): a merged grade counts its grade-I runes),
    artifacts and `sectors` ring-3 sectors opened (in opening order): `board_cost`'s sum, for
    holdings that are not a board (`agents.search.spending`: the inventory too)."""
    spec = rules.spec
    return (sum(rules.prices[k] * units(rules, g) for k, g in runes)
            + sum(spec.artifacts[a].price for a in artifacts)
            + sum(spec.sectors.open_costs[:sectors]))


def hand_slots(rules: Rules, core: str | None) -> int:
    """The hand slots a fresh run with this core has (D-40)."""
    run = rules.spec.run
    extra = rules.spec.cores[core].hand_slots if core is not None else 0
    return min(run.hand_slots_max, run.hand_slots + extra)



# -- the climb -------------------------------------------------------------------------------
class Mutator:
    """Random single edits of a layout that keep it budget-legal and within a fresh run's slots."""

    OPS = ("add", "remove", "move", "swap", "rekind", "regrade", "core", "add_artifact",
           "move_artifact", "remove_artifact", "hand_add", "hand_remove")

    def __init__(self, rules: Rules, round_: int, budget: int, rng: np.random.Generator):
        self.rules, self.round, self.budget, self.rng = rules, round_, budget, rng
        geo = geometry(rules.radius)
        self.cells = list(range(geo.n_cells))
        effects = artifacts_by_effect(rules)
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

    def key(self, board: Board):
        """A board's key in a climb's `seen` set (the same key for the same board, whatever
        the mutator; the audit's is the JSON key)."""
        return board_key(board, self.rules)

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


def hill_climb(score: Callable[..., list], starts: Sequence[Board], mutator: Mutator,
               generations: int, mutants: int, patience: int, ceiling: tuple | None = None,
               bounded: bool = False):
    """A (1 + lambda) hill climb from each legal start (the package docstring's open search) on
    `score` (boards -> scores with a `key()`, higher better). Returns (the best board, its
    score, the number of boards scored), or None if no start is legal. `ceiling`: a key no
    board can beat; a board that reaches it ends the climb (nothing after could replace it).
    `bounded`: the children are scored as `score(kids, floor=parent's score, parent=parent)`, a
    score that may stop short for a child that cannot beat its parent (and give it a key below
    the parent's): only a child that beats the parent is kept, so the climb is the same."""
    seen: set = set()
    best: tuple[Board, object] | None = None
    for start in starts:
        if best is not None and ceiling is not None and best[1].key() >= ceiling:
            break
        if not mutator.legal(start):
            continue
        seen.add(mutator.key(start))
        current, current_score = start, score([start])[0]
        idle = 0
        for _ in range(generations):
            if ceiling is not None and current_score.key() >= ceiling:
                break
            kids = mutator.children(Layout.of(current), mutants, seen)
            if not kids:
                break
            scores = score(kids, floor=current_score, parent=current) if bounded \
                else score(kids)
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


