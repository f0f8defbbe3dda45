"""Observation encoders: a RunState -> a flat float32 vector, or a dict of arrays.

Every entry lies in [0, 1] (counts are divided by a documented scale and clipped), so the
declared Box bounds always hold. `ObservationLayout.slices` names each slice of the flat vector;
`describe()` prints the layout. The dict mode has the same content, structured:

  board    (36, F)  per cell, in casting order: kind one-hot (13), grade/3, open, artifact one-hot,
                    log-scaled power of the rune now (0 for supports and empty cells)
  hand     (8, 14)  per hand slot: kind one-hot, grade/3 (zeros past the hand)
  shop     (5*13 + 1*4,) rune offers (kind one-hot each) then artifact offers (artifact one-hot)
  inventory (4, A)  artifacts held, not placed
  scalars  (S,)     mana, round, lamps, wins, losses, draws, hand slots, artifact slots, next sector
                    cost, preparation actions used, max-HP bonus, rounds to the next boss, rank
  core     (C+E,)   core one-hot, sun element one-hot
  relics   (R,)     relics held
  bosses   (B,)     boss rules of the next boss round
  pending  (P,)     the pending choice: its kind, core options, reward options, relic options
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..rules.config import CASTING_KINDS, KINDS, Rules
from ..rules.geometry import geometry
from ..run.loop import open_cells, sector_cost
from ..run.state import RunState

REWARD_CATEGORIES = ("artifact", "mana", "hand_slot", "artifact_slot", "base_stat")
SCALARS = ("mana", "round", "lamps", "wins", "losses", "draws", "hand_slots", "artifact_slots",
           "sector_cost", "prep_actions", "hp_bonus", "rounds_to_boss", "rank")
MANA_SCALE = 100.0       # mana / 100, clipped to 1
POWER_LOG_SCALE = 8.0    # log1p(power) / 8, clipped to 1 (power 3000 -> 1)


@dataclass(frozen=True)
class ObservationLayout:
    rules: Rules
    shapes: dict             # name -> shape, in flat order
    slices: dict             # name -> slice of the flat vector
    size: int

    @classmethod
    def of(cls, rules: Rules) -> "ObservationLayout":
        spec = rules.spec
        geo = geometry(rules.radius)
        n_art = len(spec.artifacts)
        cell_f = len(KINDS) + 2 + n_art + 1
        shapes = {
            "board": (geo.n_cells, cell_f),
            "hand": (spec.run.hand_slots_max, len(KINDS) + 1),
            "shop": (spec.run.shop_rune_offers * len(KINDS) + spec.run.shop_artifact_offers * n_art,),
            "inventory": (spec.run.artifact_slots_max, n_art),
            "scalars": (len(SCALARS),),
            "core": (len(spec.cores) + len(CASTING_KINDS),),
            "relics": (len(spec.relics),),
            "bosses": (len(spec.boss_rules),),
            "pending": (3 + len(spec.cores) + spec.run.reward_choices * (len(REWARD_CATEGORIES) + n_art)
                        + spec.run.relic_choices * len(spec.relics),),
        }
        slices = {}
        start = 0
        for name, shape in shapes.items():
            n = int(np.prod(shape))
            slices[name] = slice(start, start + n)
            start += n
        return cls(rules, shapes, slices, start)

    def describe(self) -> str:
        return "\n".join(f"{name:<10} {str(self.shapes[name]):<12} [{s.start}:{s.stop}]"
                         for name, s in self.slices.items())


class _BoardView(NamedTuple):
    """What the compiled analysis reads of a board, straight from a RunState (no `Board`)."""

    runes: dict
    artifacts: dict
    core: str | None
    sun_element: str | None
    relics: tuple
    hand: tuple = ()
    boss_rules: tuple = ()
    round: int = 1
    max_hp: float | None = None


class Encoder:
    """Encodes a RunState. The flat vector is written in place, part by part; the board part
    (runes, artifacts, open cells and the runes' powers, the costly one) is remembered per board,
    because most steps (buys, sells, rerolls, choices) leave the board as it was. The powers come
    from the compiled engine (`BoardAnalyser`), equal to the reference analysis bit for bit."""

    BOARD_MEMO = 4096    # boards remembered (a dict cleared when full)

    def __init__(self, rules: Rules):
        self.rules = rules
        self.layout = ObservationLayout.of(rules)
        spec = rules.spec
        self.geo = geometry(rules.radius)
        self.kind_i = {k: i for i, k in enumerate(KINDS)}
        self.art_i = {a: i for i, a in enumerate(spec.artifacts)}
        self.core_i = {c: i for i, c in enumerate(spec.cores)}
        self.elem_i = {e: i for i, e in enumerate(CASTING_KINDS)}
        self.relic_i = {r: i for i, r in enumerate(spec.relics)}
        self.boss_i = {b: i for i, b in enumerate(spec.boss_rules)}
        self.cat_i = {c: i for i, c in enumerate(REWARD_CATEGORIES)}
        self.n_kinds = len(KINDS)
        self.n_art = len(spec.artifacts)
        self.max_grade = float(rules.max_grade)
        self._powers = None          # BoardAnalyser, made at the first board with runes
        self._boards: dict = {}
        self._offsets = {name: s.start for name, s in self.layout.slices.items()}

    def __getstate__(self) -> dict:
        # the compiled helper and the memo are rebuilt on use (envs are pickled for subprocesses)
        return {**self.__dict__, "_powers": None, "_boards": {}}

    def _board_block(self, state: RunState) -> np.ndarray:
        """The board part, flat (cells x features), remembered per board. Written by one
        compiled call (`BoardAnalyser.features`: the same values as `_board_block_python`,
        tests compare the two), since most steps of a learner change the board."""
        key = (frozenset(state.board.items()), frozenset(state.artifacts.items()),
               frozenset(state.open_sectors), state.core, state.sun_element, tuple(state.relics))
        flat = self._boards.get(key)
        if flat is not None:
            return flat
        if self._powers is None:
            from ..battle.fast import BoardAnalyser
            self._powers = BoardAnalyser(self.rules)
        n, (_, width) = self.geo.n_cells, self.layout.shapes["board"]
        nk, na = self.n_kinds, self.n_art
        flat = np.zeros(n * width, dtype=np.float32)
        view = _BoardView(state.board, state.artifacts, state.core, state.sun_element,
                          tuple(state.relics))
        self._powers.features(view, open_cells(self.rules, state.open_sectors), flat, width,
                              nk, nk + 1, nk + 2, nk + 2 + na, self.max_grade, POWER_LOG_SCALE)
        if len(self._boards) >= self.BOARD_MEMO:
            self._boards.clear()
        self._boards[key] = flat
        return flat

    def _board_block_python(self, state: RunState) -> np.ndarray:
        """The board part computed in Python from the compiled analysis' powers (the readable
        definition of `_board_block`)."""
        n, (_, width) = self.geo.n_cells, self.layout.shapes["board"]
        nk, na = self.n_kinds, self.n_art
        block = np.zeros((n, width), dtype=np.float32)
        block[:, nk + 1] = open_cells(self.rules, state.open_sectors)
        for c, (k, g) in state.board.items():
            block[c, self.kind_i[k]] = 1.0
            block[c, nk] = g / self.max_grade
        for c, art in state.artifacts.items():
            block[c, nk + 2 + self.art_i[art]] = 1.0
        if state.board:
            if self._powers is None:
                from ..battle.fast import BoardAnalyser
                self._powers = BoardAnalyser(self.rules)
            view = _BoardView(state.board, state.artifacts, state.core, state.sun_element,
                              tuple(state.relics))
            powers = self._powers(view)[0]
            for c in state.board:
                p = float(powers[c])
                if p >= 0.0:
                    block[c, nk + 2 + na] = min(1.0, math.log1p(p) / POWER_LOG_SCALE)
        return block.reshape(-1)

    def encode_flat(self, state: RunState) -> np.ndarray:
        """The flat observation. One-hot entries are gathered as indices and written at once;
        the few other values likewise (a numpy write per entry costs more than the list)."""
        L = self.layout
        spec = self.rules.spec
        run = spec.run
        out = np.zeros(L.size, dtype=np.float32)
        o = self._offsets
        nk, na = self.n_kinds, self.n_art
        out[L.slices["board"]] = self._board_block(state)
        ones: list[int] = []
        at: list[int] = []
        values: list[float] = []
        kind_i, art_i = self.kind_i, self.art_i
        base = o["hand"]
        width = nk + 1
        for h, (k, g) in enumerate(state.hand):
            ones.append(base + h * width + kind_i[k])
            at.append(base + h * width + nk)
            values.append(g / self.max_grade)
        base = o["shop"]
        for i, offer in enumerate(state.shop_runes):
            if offer is not None:
                ones.append(base + i * nk + kind_i[offer])
        base += len(state.shop_runes) * nk
        for i, offer in enumerate(state.shop_artifacts):
            if offer is not None:
                ones.append(base + i * na + art_i[offer])
        base = o["inventory"]
        for i, art in enumerate(state.artifact_inventory):
            ones.append(base + i * na + art_i[art])
        next_boss = None
        for r in state.boss_schedule:
            if r >= state.round and (next_boss is None or r < next_boss):
                next_boss = r
        cost = sector_cost(state)
        scalars = (
            state.mana / MANA_SCALE,
            state.round / run.round_cap,
            state.lamps / run.lamps,
            state.wins / run.wins_to_clear,
            state.losses / run.round_cap,
            state.draws / run.round_cap,
            state.hand_slots / run.hand_slots_max,
            state.artifact_slots / run.artifact_slots_max,
            (cost / max(spec.sectors.open_costs)) if cost is not None else 1.0,
            state.prep_actions / run.action_cap,
            state.hp_bonus,
            ((next_boss - state.round) / run.boss_every) if next_boss else 1.0,
            state.rank / max(1, len(spec.ranks) - 1),
        )   # in SCALARS order, clipped to [0, 1]
        s0 = o["scalars"]
        out[s0:s0 + len(scalars)] = [0.0 if v < 0.0 else (1.0 if v > 1.0 else v) for v in scalars]
        base = o["core"]
        if state.core is not None:
            ones.append(base + self.core_i[state.core])
        if state.sun_element is not None:
            ones.append(base + len(self.core_i) + self.elem_i[state.sun_element])
        base = o["relics"]
        for r in state.relics:
            ones.append(base + self.relic_i[r])
        if next_boss is not None:
            base = o["bosses"]
            for b in state.boss_schedule[next_boss]:
                ones.append(base + self.boss_i[b])
        pend = state.pending
        if pend is not None:
            p = o["pending"]
            ones.append(p + ("core", "reward", "relic").index(pend["kind"]))
            off = p + 3
            if pend["kind"] == "core":
                for c in pend["options"]:
                    ones.append(off + self.core_i[c])
            off += len(self.core_i)
            width = len(REWARD_CATEGORIES) + na
            if pend["kind"] == "reward":
                for i, opt in enumerate(pend["options"]):
                    cat, _, art = opt.partition(":")
                    ones.append(off + i * width + self.cat_i[cat])
                    if art:
                        ones.append(off + i * width + len(REWARD_CATEGORIES) + art_i[art])
            off += run.reward_choices * width
            if pend["kind"] == "relic":
                for i, opt in enumerate(pend["options"]):
                    ones.append(off + i * len(self.relic_i) + self.relic_i[opt])
        if ones:
            out[ones] = 1.0
        if at:
            out[at] = values
        return out

    def encode_dict(self, state: RunState) -> dict[str, np.ndarray]:
        """The same content as `encode_flat`, one array per part (views of one flat vector)."""
        flat = self.encode_flat(state)
        return {name: flat[s].reshape(self.layout.shapes[name])
                for name, s in self.layout.slices.items()}
