"""Observation encoders: a RunState -> a flat float32 vector, or a dict of arrays.

Every entry lies in [0, 1] (counts are divided by a documented scale and clipped), so the
declared Box bounds always hold. `ObservationLayout.slices` names each slice of the flat vector;
`describe()` prints the layout. The dict mode has the same content, structured:

  board    (36, F)  per cell, in casting order: kind one-hot (13), grade/3, open, artifact one-hot,
                    log-scaled power of the rune now (0 for supports and empty cells)
  hand     (8, 14)  per hand slot: kind one-hot, grade/3 (zeros past the hand)
  shop     (5*13 + 1*4,) rune offers (kind one-hot each) then artifact offers (artifact one-hot)
  inventory (4, A)  artifacts held, not placed
  scalars  (S,)     mana, round, lamps, wins, losses, draws, hand slots, artifact slots, next
                    sector cost, preparation actions used, max-HP bonus, rounds to the next boss,
                    rank
  core     (C+E,)   core one-hot, sun element one-hot
  relics   (R,)     relics held
  bosses   (B,)     boss rules of the next boss round
  pending  (P,)     the pending choice: its kind, core options, reward options, relic options
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..battle.fast import BoardAnalyser, compile_rules, encode_board
from ..rules.config import CASTING_KINDS, KINDS, Rules
from ..rules.geometry import geometry
from ..run.actions import action_table
from ..run.loop import open_cells, sector_cost
from ..run.rewards import REWARD_CATEGORIES, RewardOption
from ..run.state import PENDING_KINDS, RunState

SCALARS = ("mana", "round", "lamps", "wins", "losses", "draws", "hand_slots", "artifact_slots",
           "sector_cost", "prep_actions", "hp_bonus", "rounds_to_boss", "rank")
PENDING_CODE = {kind: i for i, kind in enumerate(PENDING_KINDS)}   # compiled.RUN_PENDING
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
            "shop": (spec.run.shop_rune_offers * len(KINDS)
                     + spec.run.shop_artifact_offers * n_art,),
            "inventory": (spec.run.artifact_slots_max, n_art),
            "scalars": (len(SCALARS),),
            "core": (len(spec.cores) + len(CASTING_KINDS),),
            "relics": (len(spec.relics),),
            "bosses": (len(spec.boss_rules),),
            "pending": (len(PENDING_KINDS) + len(spec.cores)
                        + spec.run.reward_choices * (len(REWARD_CATEGORIES) + n_art)
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


def _check_mods(n_relics: int, t) -> None:
    """The compiled analysis' modifier lists hold the core and the relics: at most t.max_mods."""
    if n_relics + 1 > t.max_mods:
        raise ValueError(f"{n_relics} relics: more than the encoder allows ({t.max_mods - 1})")


def _next_boss_round(state: RunState) -> int | None:
    """The next boss round from this one on (this one included), or None."""
    next_boss = None
    for r in state.boss_schedule:
        if r >= state.round and (next_boss is None or r < next_boss):
            next_boss = r
    return next_boss


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


class CompiledTables(NamedTuple):
    """What the compiled calls need, made once per encoder (`Encoder._compile`): the compiled
    module and the arrays it reads (rune_env/envs/compiled.py describes them), its work arrays,
    and the name tables of the step record."""

    module: Any              # rune_env.envs.compiled, checked (`compiled.load()`)
    rules_i: np.ndarray      # the battle kernel's rules arrays
    rules_f: np.ndarray
    tables_i: np.ndarray     # compiled.py's tables_i, tables_f
    tables_f: np.ndarray
    work: tuple              # compiled.make_work: the analysis' work arrays
    size: int                # of the observation
    n_actions: int
    kind_id: dict            # name -> id in the step record
    core_id: dict            # a core's modifier id
    art_id: dict
    relic_mod: dict          # a relic's modifier id (the board record)
    relic_i: dict            # a relic's index (the pending options)
    boss_i: dict
    cat_i: dict              # a reward category's index
    max_mods: int            # the core and the relics the work arrays allow


class Encoder:
    """Encodes a RunState. The flat vector is written in place, part by part; the board part
    (runes, artifacts, open cells and the runes' powers, the costly one) is remembered per board,
    because most steps (buys, sells, rerolls, choices) leave the board as it was. The powers come
    from the compiled engine (the battle kernel's analysis), equal to the reference analysis bit
    for bit."""

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
        self._powers = None          # BoardAnalyser (of `_board_block_python`), made on use
        self._boards: dict = {}
        self._offsets = {name: s.start for name, s in self.layout.slices.items()}
        self._compiled: CompiledTables | None = None    # made at the first compiled call
        self._record = np.zeros(1024, dtype=np.int32)    # observe's step record (grows)
        self._packers: dict = {}

    def __getstate__(self) -> dict:
        # the compiled helper and the memo are rebuilt on use (envs are pickled for subprocesses)
        return {**self.__dict__, "_powers": None, "_boards": {}, "_compiled": None,
                "_packers": {}}

    def _tables(self) -> CompiledTables:
        t = self._compiled
        if t is None:
            t = self._compiled = self._compile()
        return t

    # -- the compiled path: observation and legal mask in one call ------------------------------
    def observe(self, state: RunState) -> tuple[np.ndarray, np.ndarray]:
        """(flat observation, legal mask) of `state`, written by one compiled call
        (`compiled.observe`) from the state's step record (compiled.py). The same values as
        `encode_flat(state)` and `rune_env.run.loop.legal_mask(state)`, bit for bit (tests
        compare them on every state of long random runs); the env calls this every step."""
        t = self._compiled or self._tables()
        try:
            rec = self._step_record(state, t)
        except KeyError as e:
            raise ValueError(f"the run state names {e} (unknown to these rules): not a state "
                             f"of this env's rules") from None
        # into the encoder's int32 buffer through a struct packer per record length (about
        # half the time of np.array(rec); the kernel reads only the record's own length)
        n = len(rec)
        pack = self._packers.get(n)
        if pack is None:
            if n > len(self._record):
                self._record = np.zeros(2 * n, dtype=np.int32)
            pack = self._packers[n] = struct.Struct(f"{n}i").pack_into
        try:
            pack(self._record, 0, *rec)
        except struct.error as e:
            raise ValueError(f"a value of the run state does not fit the step record ({e})") \
                from None
        out = np.empty(t.size, dtype=np.float32)
        mask = np.empty(t.n_actions, dtype=bool)
        if not t.module.observe(t.rules_i, t.rules_f, *t.work, self._record, t.tables_i,
                                t.tables_f, float(state.hp_bonus), out, mask):
            raise ValueError("board record out of range (an unvalidated board?)")
        return out, mask

    def _step_record(self, state: RunState, t: CompiledTables) -> list[int]:
        """The step record of `state` as a list of ints (compiled.py: the board record, then the
        run record, RUN_*)."""
        kid, core_id, art_id = t.kind_id, t.core_id, t.art_id
        board = state.board
        arts = state.artifacts
        relics = state.relics
        core = state.core
        sun = state.sun_element
        # The board record in compile._records' layout (round 1, no hand, no boss rules),
        # written here rather than by a call to encode_board, which would cost a record per
        # step more (a list, then an array) for the same ints: a deliberate duplicate of these
        # few lines, which tests/envs/test_observe_compiled.py checks against compile._records.
        rec = [1, -1 if core is None else core_id[core], -1 if sun is None else kid[sun],
               len(board), len(arts), 0, 0, len(relics)]
        for c, (k, g) in board.items():
            rec += (c, kid[k], g)
        for c, a in arts.items():
            rec += (c, art_id[a])
        for r in relics:
            rec.append(t.relic_mod[r])
        # the run record (compiled.py, RUN_*)
        hand = state.hand
        shop_runes = state.shop_runes
        shop_arts = state.shop_artifacts
        inv = state.artifact_inventory
        open_sectors = state.open_sectors
        next_boss = _next_boss_round(state)
        bosses = () if next_boss is None else state.boss_schedule[next_boss]
        cost = sector_cost(state)
        pend = state.pending
        kind, options = (None, ()) if pend is None else (pend.kind, pend.options)
        rec += (state.mana, state.round, state.lamps, state.wins, state.losses, state.draws,
                state.hand_slots, state.artifact_slots, state.prep_actions, state.rank,
                1 if state.over else 0, -1 if kind is None else PENDING_CODE[kind],
                -1 if cost is None else cost, -1 if next_boss is None else next_boss, len(hand),
                len(shop_runes), len(shop_arts), len(inv), len(open_sectors), len(bosses),
                len(options))
        for k, g in hand:
            rec += (kid[k], g)
        for o in shop_runes:
            rec.append(-1 if o is None else kid[o])
        for o in shop_arts:
            rec.append(-1 if o is None else art_id[o])
        for a in inv:
            rec.append(art_id[a])
        rec += open_sectors
        for b in bosses:
            rec.append(t.boss_i[b])
        if kind == "core":
            for c in options:
                rec.append(core_id[c])
        elif kind == "reward":
            for opt in options:
                cat, art = RewardOption.parse(opt)
                rec += (t.cat_i[cat], art_id[art] if art else -1)
        elif kind == "relic":
            for r in options:
                rec.append(t.relic_i[r])
        _check_mods(len(relics), t)
        return rec

    def _compile(self) -> CompiledTables:
        """The tables of the compiled calls (compiled.py: tables_i, tables_f) and the work
        arrays of the analysis."""
        from . import compiled as cc
        module = cc.load()
        rules = self.rules
        spec = rules.spec
        run = spec.run
        nk, na = self.n_kinds, self.n_art
        rules_i, rules_f, (_mod_id, art_id, by_group) = compile_rules(rules)
        assert art_id == self.art_i                       # the same column order
        table = action_table(rules)
        if tuple(table.groups) != cc.ACTION_GROUPS:
            raise ValueError(f"the action table's groups {tuple(table.groups)} are not the "
                             f"compiled mask's {cc.ACTION_GROUPS}")
        relic_mod = by_group["relic"]
        relic_mod0 = min(relic_mod.values()) if relic_mod else 0
        assert all(relic_mod[r] - relic_mod0 == i for r, i in self.relic_i.items())
        ti = [0] * cc.T_HEADER
        for key, part in ((cc.OBS_BOARD, "board"), (cc.OBS_HAND, "hand"), (cc.OBS_SHOP, "shop"),
                          (cc.OBS_INVENTORY, "inventory"), (cc.OBS_SCALARS, "scalars"),
                          (cc.OBS_CORE, "core"), (cc.OBS_RELICS, "relics"),
                          (cc.OBS_BOSSES, "bosses"), (cc.OBS_PENDING, "pending")):
            ti[key] = self._offsets[part]
        ti[cc.T_BOARD_WIDTH] = self.layout.shapes["board"][1]
        ti[cc.T_N_CELLS] = self.geo.n_cells
        ti[cc.T_N_ARTS] = na
        ti[cc.T_N_CORES] = len(self.core_i)
        ti[cc.T_N_RELICS] = len(self.relic_i)
        ti[cc.T_N_CATEGORIES] = len(REWARD_CATEGORIES)
        ti[cc.T_REWARD_CHOICES] = run.reward_choices
        ti[cc.T_RELIC_MOD0] = relic_mod0
        ti[cc.T_COL_GRADE], ti[cc.T_COL_OPEN] = nk, nk + 1
        ti[cc.T_COL_ART], ti[cc.T_COL_POWER] = nk + 2, nk + 2 + na
        ti[cc.T_REROLL_COST] = run.reroll_cost
        ti[cc.T_MERGE_COUNT] = spec.grades.merge_count
        ti[cc.T_MAX_GRADE] = rules.max_grade
        # the per-item tables, after the header
        for key, values in (
                (cc.T_PRICES, [rules.prices[k] for k in KINDS]),
                (cc.T_ART_PRICES, [m.price for m in spec.artifacts.values()]),
                (cc.T_FLOWING, [1 if m.core_flow_strength > 0 else 0
                                for m in spec.cores.values()]),
                (cc.T_SECTORS, [int(s) for s in self.geo.sector]),
                (cc.T_ACTION_STARTS, [start for start, _shape in table.groups.values()]),
                (cc.T_ACTION_SIZES, [shape[0] if shape else 1
                                     for _start, shape in table.groups.values()])):
            ti[key] = len(ti)
            ti += values
        tf = [0.0] * cc.TF_HEADER
        tf[cc.TF_MANA] = MANA_SCALE
        tf[cc.TF_ROUND_CAP] = run.round_cap
        tf[cc.TF_LAMPS] = run.lamps
        tf[cc.TF_WINS] = run.wins_to_clear
        tf[cc.TF_HAND_MAX] = run.hand_slots_max
        tf[cc.TF_ART_MAX] = run.artifact_slots_max
        tf[cc.TF_COST_MAX] = max(spec.sectors.open_costs)
        tf[cc.TF_ACTION_CAP] = run.action_cap
        tf[cc.TF_BOSS_EVERY] = run.boss_every
        tf[cc.TF_RANKS] = max(1, len(spec.ranks) - 1)
        tf[cc.TF_MAX_GRADE] = self.max_grade
        tf[cc.TF_LOG_SCALE] = POWER_LOG_SCALE
        # the analysis' work arrays: no hand; the core and every relic as modifiers at most
        max_mods = max(8, len(spec.relics) + 1)
        return CompiledTables(
            module=module, rules_i=rules_i, rules_f=rules_f,
            tables_i=np.array(ti, dtype=np.int64), tables_f=np.array(tf, dtype=np.float64),
            work=cc.make_work(rules_i, max_mods), size=self.layout.size, n_actions=len(table),
            kind_id={k: i for i, k in enumerate(KINDS)}, core_id=by_group["core"],
            art_id=art_id, relic_mod=relic_mod, relic_i=self.relic_i, boss_i=self.boss_i,
            cat_i=self.cat_i, max_mods=max_mods)

    def _board_block(self, state: RunState) -> np.ndarray:
        """The board part, flat (cells x features), remembered per board. Written by one
        compiled call (`compiled.board_features`: the same values as `_board_block_python`,
        tests compare the two), since most steps of a learner change the board."""
        key = (frozenset(state.board.items()), frozenset(state.artifacts.items()),
               frozenset(state.open_sectors), state.core, state.sun_element, tuple(state.relics))
        flat = self._boards.get(key)
        if flat is not None:
            return flat
        t = self._tables()
        _check_mods(len(state.relics), t)
        n, (_, width) = self.geo.n_cells, self.layout.shapes["board"]
        nk, na = self.n_kinds, self.n_art
        flat = np.zeros(n * width, dtype=np.float32)
        view = _BoardView(state.board, state.artifacts, state.core, state.sun_element,
                          tuple(state.relics))
        rules_i, rules_f, enc, _hand_cap, _mods_cap = encode_board(view, self.rules)
        if not t.module.board_features(rules_i, rules_f, *t.work, enc, 0,
                                       open_cells(self.rules, state.open_sectors), flat, width,
                                       nk, nk + 1, nk + 2, nk + 2 + na, self.max_grade,
                                       POWER_LOG_SCALE):
            raise ValueError("board record out of range (an unvalidated board?)")
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
        next_boss = _next_boss_round(state)
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
            ones.append(p + PENDING_CODE[pend.kind])
            off = p + len(PENDING_KINDS)
            if pend.kind == "core":
                for c in pend.options:
                    ones.append(off + self.core_i[c])
            off += len(self.core_i)
            width = len(REWARD_CATEGORIES) + na
            if pend.kind == "reward":
                for i, opt in enumerate(pend.options):
                    cat, art = RewardOption.parse(opt)
                    ones.append(off + i * width + self.cat_i[cat])
                    if art:
                        ones.append(off + i * width + len(REWARD_CATEGORIES) + art_i[art])
            off += run.reward_choices * width
            if pend.kind == "relic":
                for i, opt in enumerate(pend.options):
                    ones.append(off + i * len(self.relic_i) + self.relic_i[opt])
        if ones:
            out[ones] = 1.0
        if at:
            out[at] = values
        return out

    def encode_dict(self, state: RunState) -> dict[str, np.ndarray]:
        """The same content as `encode_flat`, one array per part (views of one flat vector)."""
        return self.split(self.encode_flat(state))

    def split(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """A flat observation as the dict form: one array per part (views of `flat`)."""
        return {name: flat[s].reshape(self.layout.shapes[name])
                for name, s in self.layout.slices.items()}
