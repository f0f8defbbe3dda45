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

import numpy as np

from ..battle.analysis import SideSetup, analyse
from ..rules.config import CASTING_KINDS, KINDS, Rules
from ..rules.geometry import geometry
from ..run.loop import is_open, sector_cost
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


class Encoder:
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

    def encode_dict(self, state: RunState) -> dict[str, np.ndarray]:
        L = self.layout
        spec = self.rules.spec
        out = {name: np.zeros(shape, dtype=np.float32) for name, shape in L.shapes.items()}
        nk, na = self.n_kinds, self.n_art
        max_g = float(self.rules.max_grade)
        board = out["board"]
        powers = {}
        if state.board:
            b = state.to_board()
            setup = SideSetup.of(b, self.rules)
            n = self.geo.n_cells
            an = analyse(setup, [b.runes.get(c) for c in range(n)], [False] * n)
            powers = {c: rp.power for c, rp in an.powers.items()}
        for c in range(self.geo.n_cells):
            rune = state.board.get(c)
            if rune is not None:
                board[c, self.kind_i[rune[0]]] = 1.0
                board[c, nk] = rune[1] / max_g
            board[c, nk + 1] = 1.0 if is_open(state, c) else 0.0
            art = state.artifacts.get(c)
            if art is not None:
                board[c, nk + 2 + self.art_i[art]] = 1.0
            if c in powers:
                board[c, nk + 2 + na] = min(1.0, math.log1p(powers[c]) / POWER_LOG_SCALE)
        for h, (k, g) in enumerate(state.hand):
            out["hand"][h, self.kind_i[k]] = 1.0
            out["hand"][h, nk] = g / max_g
        shop = out["shop"]
        for i, offer in enumerate(state.shop_runes):
            if offer is not None:
                shop[i * nk + self.kind_i[offer]] = 1.0
        base = len(state.shop_runes) * nk
        for i, offer in enumerate(state.shop_artifacts):
            if offer is not None:
                shop[base + i * na + self.art_i[offer]] = 1.0
        for i, art in enumerate(state.artifact_inventory):
            out["inventory"][i, self.art_i[art]] = 1.0
        run = spec.run
        boss_rounds = [r for r in state.boss_schedule if r >= state.round]
        next_boss = min(boss_rounds) if boss_rounds else None
        cost = sector_cost(state)
        values = {
            "mana": state.mana / MANA_SCALE,
            "round": state.round / run.round_cap,
            "lamps": state.lamps / run.lamps,
            "wins": state.wins / run.wins_to_clear,
            "losses": state.losses / run.round_cap,
            "draws": state.draws / run.round_cap,
            "hand_slots": state.hand_slots / run.hand_slots_max,
            "artifact_slots": state.artifact_slots / run.artifact_slots_max,
            "sector_cost": (cost / max(spec.sectors.open_costs)) if cost is not None else 1.0,
            "prep_actions": state.prep_actions / run.action_cap,
            "hp_bonus": state.hp_bonus,
            "rounds_to_boss": ((next_boss - state.round) / run.boss_every) if next_boss else 1.0,
            "rank": state.rank / max(1, len(spec.ranks) - 1),
        }
        out["scalars"][:] = np.clip([values[s] for s in SCALARS], 0.0, 1.0)
        if state.core is not None:
            out["core"][self.core_i[state.core]] = 1.0
        if state.sun_element is not None:
            out["core"][len(self.core_i) + self.elem_i[state.sun_element]] = 1.0
        for r in state.relics:
            out["relics"][self.relic_i[r]] = 1.0
        if next_boss is not None:
            for b in state.boss_schedule[next_boss]:
                out["bosses"][self.boss_i[b]] = 1.0
        pend = state.pending
        if pend is not None:
            p = out["pending"]
            p[("core", "reward", "relic").index(pend["kind"])] = 1.0
            off = 3
            if pend["kind"] == "core":
                for c in pend["options"]:
                    p[off + self.core_i[c]] = 1.0
            off += len(self.core_i)
            width = len(REWARD_CATEGORIES) + na
            if pend["kind"] == "reward":
                for i, opt in enumerate(pend["options"]):
                    cat, _, art = opt.partition(":")
                    p[off + i * width + self.cat_i[cat]] = 1.0
                    if art:
                        p[off + i * width + len(REWARD_CATEGORIES) + self.art_i[art]] = 1.0
            off += run.reward_choices * width
            if pend["kind"] == "relic":
                for i, opt in enumerate(pend["options"]):
                    p[off + i * len(self.relic_i) + self.relic_i[opt]] = 1.0
        return out

    def encode_flat(self, state: RunState) -> np.ndarray:
        d = self.encode_dict(state)
        return np.concatenate([d[name].reshape(-1) for name in self.layout.shapes])
