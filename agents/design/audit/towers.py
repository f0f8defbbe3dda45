"""The balance audit's fast_kill family: tower boards built greedily, and the fast-kill hill
climb. What a fast kill is, and why towers, is in the package docstring
(`agents/design/audit/__init__.py`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rune_env.battle.fast import BoardAnalyser
from rune_env.rules import ATTACK_KINDS, KINDS, Board, Rules, geometry
from rune_env.run.loop import units

from agents.search.boards import (Layout, Mutator, acting_elements, artifacts_by_effect,
                                  core_variants, hill_climb)

from .scoring import (_FAST_STREAM, AuditError, AuditSettings, Evaluator, FastKillScore,
                      Opponents, board_key)

# The damage a tower is built for: its side's first casts, the turns it takes before the
# opponent's second turn. Two: with the moon core (0.4 s) against a 0.5-s side, turns at 0.4 and
# 0.8 s come before the opponent's second turn at 1.0 s; a third never does (1.2 s).
TOWER_TURNS = 2


def tower_cells(rules: Rules) -> list[int]:
    """The start cells of the towers, one per rotation class of each ring: the first k cells of
    ring k. A 60-degree turn moves cell i of ring k to cell i + k, so every other cell has the
    same neighbourhood turned; what a turn changes is the casting order (by cell id), which the
    greedy's own edits around the start choose anyway (the hill climb then moves runes)."""
    geo = geometry(rules.radius)
    return [geo.ring_cells[ring][i] for ring in range(1, rules.radius + 1) for i in range(ring)]


@dataclass(frozen=True)
class _Tower:
    """A tower under construction: its runes, artifacts, and its targets (the amplified casting
    runes; the first one's kind and grade is every target's)."""

    runes: dict[int, tuple[str, int]]
    artifacts: dict[int, str]
    targets: tuple[int, ...]
    core: str | None = None
    sun: str | None = None

    def plus(self, runes: dict | None = None, artifacts: dict | None = None,
             target: int | None = None) -> "_Tower":
        return _Tower({**self.runes, **(runes or {})}, {**self.artifacts, **(artifacts or {})},
                      self.targets + ((target,) if target is not None else ()), self.core,
                      self.sun)


class TowerBuilder:
    """Builds towers by a greedy climb on the damage of the first TOWER_TURNS casts, computed by
    the compiled board analysis (`BoardAnalyser`, about 12 us a board, no battle), with the core
    `build` is given (the family then plays every core on each tower). At each step it takes
    the edit with the most damage gained per mana (log of the damage per mana, so a x2 is worth
    the same at any size) that fits the budget, until no edit gains:

    - an amplify (grade I) on a free cell that reaches a target: inward of it, or beside a node
      beside it (D-19: the runes around one node amplify each other);
    - a node beside a target together with an amplify beside the node (a node alone gains
      nothing, so the greedy would never take it);
    - an amplify, a target, a feeder or a mimic one grade up;
    - resonators filling the last one or two free cells of a resonance orbit that holds an
      amplify or a target (an amplify's resonance grows its increase);
    - a mana spring (the artifact with a grade bonus) on a target, a node or an amplify, while
      artifact slots remain (it lifts every rune it reaches);
    - a feeder: a grade-I rune of a kind that flows into the targets' kind, or of that kind
      (attunement), on a cell that flows into a target;
    - a mimic (grade I) outward of a target: it copies its strongest inward casting rune
      in the same turn (D-20), thundercloud's extra cast included;
    - another target on a free cell an amplify already reaches.
    Feeders and targets together stay within `max_casters` casting runes."""

    def __init__(self, rules: Rules, round_: int, budget: int, max_casters: int,
                 analyser: BoardAnalyser | None = None):
        self.rules, self.round, self.budget, self.max_casters = rules, round_, budget, max_casters
        self.analyser = analyser or BoardAnalyser(rules)
        self.geo = geometry(rules.radius)
        springs = sorted(artifacts_by_effect(rules)["grade_bonus"],
                         key=lambda a: (rules.spec.artifacts[a].price, a))
        self.spring = springs[0] if springs else None
        self.extra_casts = [f.extra_casts for f in rules.flows]
        self.hits = {k: rules.rune_specs[k].hits for k in ATTACK_KINDS}
        self.copy_x = rules.spec.runes.mimic.copy_x_by_grade
        # board_cost's terms, looked up once: the greedy prices thousands of boards
        self.prices = {(k, g): rules.prices[k] * units(rules, g) for k in KINDS
                       for g in range(1, rules.max_grade + 1)}
        self.opened = np.concatenate([[0], np.cumsum(rules.spec.sectors.open_costs)]).tolist()

    # -- measuring ------------------------------------------------------------------------------
    def cost(self, board: Board) -> int:
        """`board_cost` of a tower (no hand), from the tables."""
        artifacts = sum(self.rules.spec.artifacts[a].price for a in board.artifacts.values())
        return (sum(self.prices[r] for r in board.runes.values()) + artifacts
                + self.opened[len(board.open_sectors)])

    def board(self, tower: _Tower) -> Board:
        """The tower as an unvalidated board (its moves keep it valid)."""
        sectors = frozenset(self.geo.sector[c] for c in (*tower.runes, *tower.artifacts)
                            if self.geo.sector[c] >= 0)
        return Board(runes=tower.runes, artifacts=tower.artifacts, open_sectors=sectors,
                     core=tower.core, sun_element=tower.sun, round=self.round)

    def damage(self, board: Board) -> float:
        """The damage of the side's first TOWER_TURNS turns at battle start: each attacking
        rune's power x hits x (1 + a thundercloud's extra casts), and as much again x the copy
        factor for each mimic that copies it (D-20: its strongest inward casting rune); a
        delayed rune skips its first turn (D-18), other kinds deal nothing."""
        power, info, _ = self.analyser(board)
        runes = board.runes
        casters = sorted(c for c, (k, _) in runes.items() if k in self.rules.casting_kinds)
        total = 0.0
        for c in casters[:TOWER_TURNS]:
            kind = runes[c][0]
            if kind not in self.hits or power[c] < 0 or info[c, 0]:
                continue
            casts = 1 + sum(self.extra_casts[f] for f in info[c, 3:3 + info[c, 2]])
            copies = sum(self.copy_x[info[m, 1] - 1] for m in self.geo.outward[c]
                         if runes.get(m, ("",))[0] == "mimic" and self._strongest(m, power) == c)
            total += power[c] * self.hits[kind] * casts * (1 + copies)
        return total

    def _strongest(self, mimic: int, power: np.ndarray) -> int | None:
        """The casting rune a mimic copies: its strongest inward one, the first on ties (the
        engine's tolerance aside: the greedy only ranks towers)."""
        inward = [c for c in self.geo.inward[mimic] if power[c] >= 0]
        return max(inward, key=lambda c: (power[c], -c)) if inward else None

    # -- the edits -------------------------------------------------------------------------------
    def _reach(self, tower: _Tower) -> tuple[set[int], dict[int, list[int]]]:
        """Cells whose amplify would reach a target, and each target's nodes."""
        geo, runes = self.geo, tower.runes
        nodes = {t: [n for n in geo.neighbors[t] if runes.get(n, ("",))[0] == "node"]
                 for t in tower.targets}
        reach = set()
        for t in tower.targets:
            reach.update(geo.inward[t])
            for n in nodes[t]:
                reach.update(geo.neighbors[n])
        return reach - set(tower.targets), nodes

    def moves(self, tower: _Tower) -> list[_Tower]:
        geo, runes = self.geo, tower.runes
        reach, nodes = self._reach(tower)
        free = [c for c in range(geo.n_cells) if c not in runes]
        out = [tower.plus({c: ("amplify", 1)}) for c in sorted(reach) if c not in runes]
        for t in tower.targets:
            for x in geo.neighbors[t]:
                if x not in runes:
                    out += [tower.plus({x: ("node", 1), y: ("amplify", 1)})
                            for y in geo.neighbors[x] if y != t and y not in runes]
        amps = sorted(c for c, (k, _) in runes.items() if k == "amplify")
        graded = amps + sorted(c for c, (k, _) in runes.items()
                               if k in self.rules.casting_kinds or k == "mimic")
        out += [tower.plus({c: (runes[c][0], runes[c][1] + 1)}) for c in graded
                if runes[c][1] < self.rules.max_grade]
        out += [tower.plus({m: ("mimic", 1)}) for t in tower.targets for m in geo.outward[t]
                if m not in runes]
        out += self._resonator_moves(tower, amps)
        if self.spring is not None and len(tower.artifacts) < self.rules.spec.run.artifact_slots:
            spots = sorted({*tower.targets, *amps, *(n for ns in nodes.values() for n in ns)})
            out += [tower.plus(artifacts={c: self.spring}) for c in spots
                    if c not in tower.artifacts]
        casters = sum(k in self.rules.casting_kinds for k, _ in runes.values())
        if casters < self.max_casters:
            out += self._caster_moves(tower, reach, nodes, amps, free)
        return out

    def _resonator_moves(self, tower: _Tower, amps: list[int]) -> list[_Tower]:
        out = []
        members = set(amps) | set(tower.targets)
        for orbits in self.geo.patterns.values():
            for _, cells in orbits:
                empty = [c for c in cells if c not in tower.runes]
                if 1 <= len(empty) <= 2 and members & set(cells):
                    out.append(tower.plus({c: ("resonator", 1) for c in empty}))
        return out

    def _caster_moves(self, tower: _Tower, reach: set[int], nodes: dict[int, list[int]],
                      amps: list[int], free: list[int]) -> list[_Tower]:
        geo, rules = self.geo, self.rules
        kind, grade = tower.runes[tower.targets[0]]
        feeders = sorted({f.from_ for f in rules.flows_into[kind]} | {kind})
        out = []
        feed_cells = sorted(c for c in reach if c not in tower.runes)
        for k in feeders:
            out += [tower.plus({c: (k, 1)}) for c in feed_cells]
        amp_set = set(amps)
        for c in free:
            by_node = any(amp_set & set(geo.neighbors[n]) for n in geo.neighbors[c]
                          if tower.runes.get(n, ("",))[0] == "node")
            if amp_set & set(geo.inward[c]) or by_node:
                out.append(tower.plus({c: (kind, grade)}, target=c))
        return out

    # -- the climb ----------------------------------------------------------------------------
    def build(self, cell: int, kind: str, grade: int, core: str | None = None,
              sun: str | None = None) -> tuple[float, Layout] | None:
        """The greedy tower grown from one target, valued with the core `core` (the sun flowing
        as `sun`); None if the target alone is over budget. The layout has no core."""
        tower = _Tower({cell: (kind, grade)}, {}, (cell,), core, sun)
        board = self.board(tower)
        cost = self.cost(board)
        value = self.damage(board)
        if cost > self.budget or value <= 0:
            return None
        while True:
            best = None
            for move in self.moves(tower):
                b = self.board(move)
                c = self.cost(b)
                if c > self.budget or c <= cost:
                    continue
                v = self.damage(b)
                if v <= value * (1 + 1e-9):
                    continue
                gain = (math.log(v) - math.log(value)) / (c - cost)
                if best is None or gain > best[0]:
                    best = (gain, move, c, v)
            if best is None:
                break
            _, tower, cost, value = best
        return value, Layout(dict(tower.runes), None, None, dict(tower.artifacts))


def build_cores(rules: Rules, kind: str, ring: int) -> list[tuple[str | None, str | None]]:
    """The cores a tower of `kind` with its target in `ring` is built with: none (the cores that
    scale every rune alike or act on time, as the moon does, build the same tower), each core
    that changes how runes combine (resonance, amplify or flow increases: the star), and, for a
    ring-1 target, the flowing core with each element that acts on the kind (`acting_elements`,
    the idle one left out: it is the no-core tower)."""
    out: list[tuple[str | None, str | None]] = [(None, None)]
    for core, mod in rules.spec.cores.items():
        if (mod.loose_resonance or mod.resonance_add or mod.amplify_increase_x != 1
                or mod.flow_increase_x != 1):
            out.append((core, None))
        elif mod.core_flow_strength > 0 and ring == 1:
            out += [(core, e) for e in acting_elements(rules, [kind])[:-1]]
    return out


def tower_boards(rules: Rules, round_: int, budget: int, settings: AuditSettings,
                 analyser: BoardAnalyser | None = None) -> list[Board]:
    """The family's towers: from every target cell (`tower_cells`) of every attack kind and
    small grade, the greedy tower (`TowerBuilder`) valued with each of `build_cores`; per kind
    the `tower_structures` most damaging (distinct damage), each with every core (the sun with
    each element that acts on its ring-1 casting runes, `core_variants`). All within the
    budget."""
    builder = TowerBuilder(rules, round_, budget, settings.tower_casters, analyser)
    grades = [g for g in settings.small_grades if g <= rules.max_grade]
    geo = geometry(rules.radius)
    out: list[Board] = []
    seen: set[str] = set()
    for kind in ATTACK_KINDS:
        built = [builder.build(cell, kind, g, core, sun) for cell in tower_cells(rules)
                 for core, sun in build_cores(rules, kind, geo.ring[cell]) for g in grades]
        ranked = sorted((b for b in built if b is not None), key=lambda vb: -vb[0])  # stable
        kept: list[Layout] = []
        values: set[float] = set()
        for value, layout in ranked:
            if value not in values and len(kept) < settings.tower_structures:
                values.add(value)
                kept.append(layout)
        for layout in kept:
            ring1 = [k for c, (k, _) in layout.runes.items()
                     if geo.ring[c] == 1 and k in rules.casting_kinds]
            for core, sun in core_variants(rules, ring1):
                variant = layout.copy()
                variant.core, variant.sun_element = core, sun
                board = variant.board(rules, round_)
                key = board_key(board, rules)
                if key not in seen:
                    seen.add(key)
                    out.append(board)
    return out


def fast_kill_search(evaluator: Evaluator, choose: Opponents, starts: Sequence[Board],
                     round_: int, budget: int,
                     settings: AuditSettings) -> tuple[Board, FastKillScore, int]:
    """The open search's hill climb (`hill_climb`, the same mutations) on the fast-kill
    objective (`FastKillScore.key`), from `starts`, until a board fast-kills every battle; its
    own seed stream [seed, round, 5]. Returns the best board, its choose-set objective and the
    number of boards scored."""
    mutator = Mutator(evaluator.rules, round_, budget,
                      np.random.default_rng([settings.seed, round_, _FAST_STREAM]))
    # every battle a fast kill and every opponent down by its second turn: nothing beats it
    best = hill_climb(lambda boards: evaluator.fast_kill_scores(boards, choose), starts, mutator,
                      settings.fast_generations, settings.fast_mutants, settings.fast_patience,
                      ceiling=(1.0, 1.0))
    if best is None:
        raise AuditError(f"round {round_}: no start of the fast-kill search fits the budget "
                         f"{budget}")
    return best


def distinct_fast(boards: Sequence[Board], scores: Sequence[FastKillScore], count: int,
                  rules: Rules) -> list[Board]:
    """The `count` best boards by the fast-kill objective, one per distinct board content."""
    order = sorted(range(len(boards)), key=lambda i: scores[i].key(), reverse=True)  # stable
    out, seen = [], set()
    for i in order:
        key = board_key(boards[i], rules)
        if key not in seen:
            seen.add(key)
            out.append(boards[i])
        if len(out) >= count:
            break
    return out
