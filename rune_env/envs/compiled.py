"""The env's observation and legal mask, compiled (numba): one call per step.

`Encoder.observe` (observation.py) writes a run state's step record and calls `observe`, which
writes the whole observation and the whole legal mask; `Encoder._board_block` calls
`board_features` for the board part alone. The Python definitions stay the readable ones
(`Encoder.encode_flat`, `rune_env.run.loop.legal_mask`): tests compare these with them bit for
bit on every state of long random runs and on fuzzed states (tests/envs/test_observe_compiled.py).
The board's powers come from the battle kernel's analysis, the one the battles use.

The layouts (the constants below name every index):

The step record (int32): the player's board record in the battle kernel's layout
(rune_env.battle.fast.BOARD_RECORD), at offset 0: round 1, no hand, no boss rules, so the
powers are those at battle start. Then, where the board record ends, the run record: RUN_HEADER
ints (RUN_*: mana, round, lamps, wins, losses, draws, hand slots, artifact slots, preparation
actions, rank, over, the pending choice's kind (-1: none, else its index in PENDING_KINDS), the
next sector's cost (-1: none), the next boss round (-1: none), then the lengths of the lists
that follow), then n_hand x (kind, grade), n_shop_runes x (kind or -1), n_shop_artifacts x
(artifact or -1), n_inventory x artifact, n_open x sector, the next boss round's boss rules
(index in the config's boss_rules), the pending options: a core choice's core indices, a reward
choice's (category index, artifact or -1) pairs, a relic choice's relic indices.

tables_i (int64), made once per encoder: OBS_* the offsets of the observation's parts, T_* the
numbers and columns it needs, then per-item tables at the offsets T_PRICES (per kind id, its
price), T_ART_PRICES (per artifact, its price), T_FLOWING (per core, 1 if it has a sun flow: an
element to choose), T_SECTORS (per cell, its outer-ring sector or -1), T_ACTION_STARTS and
T_ACTION_SIZES (per action group in `ACTION_GROUPS` order, the action table's: its first action
id, its first dimension). The compiled code names a group by its index, `GROUP.<name>`.

tables_f (float64): TF_* the divisors of the observation's scalars, the grade and power scales.

numba keys the disk cache of this file by this file alone, yet it compiles in the battle
kernel's constants and links the kernel's `setup_side` and `analyse`: `SIGNATURE` hashes the
sources of this file and of the battle kernel (`rune_env.battle.fast.signature_with_kernel`;
and the kinds, the action groups and the pending kinds it compiles in), and `load()` recompiles
this module's functions when the cached ones were compiled from other sources
(`rune_env.battle.fast.fresh_module`).
"""
from __future__ import annotations

import math
import sys
from collections import namedtuple
from pathlib import Path

import numpy as np
from numba import njit

from ..battle.fast import (ANALYSIS_LAYOUT, BOARD_RECORD, analyse, fresh_module, loaded_kernel,
                           make_state, setup_side, signature_with_kernel)
from ..rules.config import CASTING_KINDS, KINDS, default_rules
from ..run.actions import action_table
from ..run.state import PENDING_KINDS

N_KINDS = len(KINDS)             # kind ids 0..N_KINDS-1, the casting kinds first
N_CASTING = len(CASTING_KINDS)

# -- the run record -----------------------------------------------------------------------------
(RUN_MANA, RUN_ROUND, RUN_LAMPS, RUN_WINS, RUN_LOSSES, RUN_DRAWS, RUN_HAND_SLOTS, RUN_ART_SLOTS,
 RUN_PREP, RUN_RANK, RUN_OVER, RUN_PENDING, RUN_SECTOR_COST, RUN_NEXT_BOSS, RUN_N_HAND,
 RUN_N_SHOP_RUNES, RUN_N_SHOP_ARTS, RUN_N_INVENTORY, RUN_N_OPEN, RUN_N_BOSSES, RUN_N_OPTIONS,
 RUN_HEADER) = range(22)
PENDING_CORE, PENDING_REWARD, PENDING_RELIC = (PENDING_KINDS.index(k)
                                               for k in ("core", "reward", "relic"))
N_PENDING_KINDS = len(PENDING_KINDS)

# -- tables_i -----------------------------------------------------------------------------------
(OBS_BOARD, OBS_HAND, OBS_SHOP, OBS_INVENTORY, OBS_SCALARS, OBS_CORE, OBS_RELICS, OBS_BOSSES,
 OBS_PENDING, T_BOARD_WIDTH, T_N_CELLS, T_N_ARTS, T_N_CORES, T_N_RELICS, T_N_CATEGORIES,
 T_REWARD_CHOICES, T_RELIC_MOD0, T_COL_GRADE, T_COL_OPEN, T_COL_ART, T_COL_POWER, T_REROLL_COST,
 T_MERGE_COUNT, T_MAX_GRADE, T_PRICES, T_ART_PRICES, T_FLOWING, T_SECTORS, T_ACTION_STARTS,
 T_ACTION_SIZES, T_HEADER) = range(31)
# the action groups in the action table's order (the same for every rules: `tables` checks it);
# GROUP.<name> is a group's index (a constant in the compiled code)
ACTION_GROUPS = tuple(action_table(default_rules()).groups)
GROUP = namedtuple("ActionGroup", ACTION_GROUPS)(*range(len(ACTION_GROUPS)))
# the group that takes each kind of pending choice, by the kind's code
CHOICE_GROUP = tuple(ACTION_GROUPS.index("choose_" + kind) for kind in PENDING_KINDS)

# -- tables_f -----------------------------------------------------------------------------------
(TF_MANA, TF_ROUND_CAP, TF_LAMPS, TF_WINS, TF_HAND_MAX, TF_ART_MAX, TF_COST_MAX, TF_ACTION_CAP,
 TF_BOSS_EVERY, TF_RANKS, TF_MAX_GRADE, TF_LOG_SCALE, TF_HEADER) = range(13)

SIGNATURE = signature_with_kernel((Path(__file__).resolve(),),
                                  (KINDS, CASTING_KINDS, ACTION_GROUPS, PENDING_KINDS))


_CHECKED = False


def load():
    """This module, its compiled functions checked against their sources (once per process,
    after the battle kernel's own check)."""
    global _CHECKED
    module = sys.modules[__name__]
    if not _CHECKED:
        loaded_kernel()
        fresh_module(module, SIGNATURE, stem="compiled")
        _CHECKED = True
    return module


def make_work(rules_i, max_mods: int) -> tuple:
    """The work arrays of `observe` and `board_features`: the battle kernel's state for a board
    without a hand and with at most `max_mods` modifiers."""
    return make_state(rules_i, 8, max_mods)


@njit(cache=True)
def compiled_signature():
    """SIGNATURE as compiled into this module (a stale disk cache returns an old one)."""
    return SIGNATURE


@njit(cache=True, nogil=True)
def board_features(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, off, open_cells, out,
                   width, col_grade, col_open, col_art, col_power, max_grade, log_scale):
    """The observation's board part for the board record at `off`, into `out` (float32,
    n_cells x width, zeroed by the caller): per cell the kind one-hot (kind id = column),
    grade / max_grade, open, the artifact one-hot from `col_art`, and min(1, log1p(power) /
    log_scale) for a casting rune, its power at battle start (the kernel's `setup_side` and
    `analyse`, as `board_analysis` reads them). False if the record is out of range."""
    if not setup_side(rules_i, rules_f, cells, sides, sides_f, 0, enc, off, np.nan):
        return False
    analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, 0)
    r = sides[0, ANALYSIS_LAYOUT.scalars_row, ANALYSIS_LAYOUT.analysis_row]
    for c in range(rules_i[ANALYSIS_LAYOUT.n_cells]):
        out[c * width + col_open] = open_cells[c]
    nr = enc[off + BOARD_RECORD.n_runes]
    p_runes = off + BOARD_RECORD.lists
    for i in range(nr):
        c = enc[p_runes + 3 * i]
        k = enc[p_runes + 3 * i + 1]
        out[c * width + k] = 1.0
        out[c * width + col_grade] = enc[p_runes + 3 * i + 2] / max_grade
        if k < N_CASTING:     # a casting rune: unsealed at battle start, so it has a power
            v = math.log1p(cells_f[r, c, ANALYSIS_LAYOUT.power]) / log_scale
            out[c * width + col_power] = 1.0 if v > 1.0 else v
    p_arts = p_runes + 3 * nr
    for i in range(enc[off + BOARD_RECORD.n_arts]):
        out[enc[p_arts + 2 * i] * width + col_art + enc[p_arts + 2 * i + 1]] = 1.0
    return True


@njit(cache=True, inline='always')
def _clip01(v):
    return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


@njit(cache=True, inline='always')
def _run_record(rec):
    """Where the run record's parts start: (the run record, hand, shop runes, shop artifacts,
    inventory, open sectors, boss rules, pending options)."""
    r0 = BOARD_RECORD.lists + 3 * rec[BOARD_RECORD.n_runes] + 2 * rec[BOARD_RECORD.n_arts] \
        + rec[BOARD_RECORD.n_relics]
    p_hand = r0 + RUN_HEADER
    p_shop_runes = p_hand + 2 * rec[r0 + RUN_N_HAND]
    p_shop_arts = p_shop_runes + rec[r0 + RUN_N_SHOP_RUNES]
    p_inv = p_shop_arts + rec[r0 + RUN_N_SHOP_ARTS]
    p_open = p_inv + rec[r0 + RUN_N_INVENTORY]
    p_boss = p_open + rec[r0 + RUN_N_OPEN]
    p_opts = p_boss + rec[r0 + RUN_N_BOSSES]
    return r0, p_hand, p_shop_runes, p_shop_arts, p_inv, p_open, p_boss, p_opts


@njit(cache=True, inline='always')
def _is_open(tables_i, rec, p_open, n_open):
    """A bool per cell: open (Python: open_cells), from the record's open sectors."""
    n = tables_i[T_N_CELLS]
    sec = tables_i[T_SECTORS]
    is_open = np.zeros(n, np.bool_)
    for c in range(n):
        s = tables_i[sec + c]
        if s < 0:
            is_open[c] = True
        else:
            for i in range(n_open):
                if rec[p_open + i] == s:
                    is_open[c] = True
                    break
    return is_open


@njit(cache=True, inline='always')
def _observe_items(tables_i, tables_f, rec, parts, out):
    """The hand, shop and inventory parts of the observation."""
    r0, p_hand, p_shop_runes, p_shop_arts, p_inv, _, _, _ = parts
    nk = N_KINDS
    na = tables_i[T_N_ARTS]
    base = tables_i[OBS_HAND]
    for h in range(rec[r0 + RUN_N_HAND]):
        out[base + h * (nk + 1) + rec[p_hand + 2 * h]] = 1.0
        out[base + h * (nk + 1) + nk] = rec[p_hand + 2 * h + 1] / tables_f[TF_MAX_GRADE]
    base = tables_i[OBS_SHOP]
    for i in range(rec[r0 + RUN_N_SHOP_RUNES]):
        k = rec[p_shop_runes + i]
        if k >= 0:
            out[base + i * nk + k] = 1.0
    base += rec[r0 + RUN_N_SHOP_RUNES] * nk
    for i in range(rec[r0 + RUN_N_SHOP_ARTS]):
        a = rec[p_shop_arts + i]
        if a >= 0:
            out[base + i * na + a] = 1.0
    base = tables_i[OBS_INVENTORY]
    for i in range(rec[r0 + RUN_N_INVENTORY]):
        out[base + i * na + rec[p_inv + i]] = 1.0


@njit(cache=True, inline='always')
def _observe_scalars(tables_i, tables_f, rec, parts, hp_bonus, out):
    """The scalars part (observation.SCALARS order), each clipped to [0, 1]."""
    r0 = parts[0]
    rnd = rec[r0 + RUN_ROUND]
    cost = rec[r0 + RUN_SECTOR_COST]
    nb = rec[r0 + RUN_NEXT_BOSS]
    s0 = tables_i[OBS_SCALARS]
    out[s0] = _clip01(rec[r0 + RUN_MANA] / tables_f[TF_MANA])
    out[s0 + 1] = _clip01(rnd / tables_f[TF_ROUND_CAP])
    out[s0 + 2] = _clip01(rec[r0 + RUN_LAMPS] / tables_f[TF_LAMPS])
    out[s0 + 3] = _clip01(rec[r0 + RUN_WINS] / tables_f[TF_WINS])
    out[s0 + 4] = _clip01(rec[r0 + RUN_LOSSES] / tables_f[TF_ROUND_CAP])
    out[s0 + 5] = _clip01(rec[r0 + RUN_DRAWS] / tables_f[TF_ROUND_CAP])
    out[s0 + 6] = _clip01(rec[r0 + RUN_HAND_SLOTS] / tables_f[TF_HAND_MAX])
    out[s0 + 7] = _clip01(rec[r0 + RUN_ART_SLOTS] / tables_f[TF_ART_MAX])
    out[s0 + 8] = _clip01(cost / tables_f[TF_COST_MAX]) if cost >= 0 else 1.0
    out[s0 + 9] = _clip01(rec[r0 + RUN_PREP] / tables_f[TF_ACTION_CAP])
    out[s0 + 10] = _clip01(hp_bonus)
    out[s0 + 11] = _clip01((nb - rnd) / tables_f[TF_BOSS_EVERY]) if nb > 0 else 1.0
    out[s0 + 12] = _clip01(rec[r0 + RUN_RANK] / tables_f[TF_RANKS])


@njit(cache=True, inline='always')
def _observe_choices(tables_i, rec, parts, out):
    """The core, relics, bosses and pending parts of the observation."""
    r0, _, _, _, _, _, p_boss, p_opts = parts
    core = rec[BOARD_RECORD.core]
    sun = rec[BOARD_RECORD.sun]
    base = tables_i[OBS_CORE]
    if core >= 0:
        out[base + core] = 1.0
    if sun >= 0:
        out[base + tables_i[T_N_CORES] + sun] = 1.0
    base = tables_i[OBS_RELICS]
    p_rel = r0 - rec[BOARD_RECORD.n_relics]
    for i in range(rec[BOARD_RECORD.n_relics]):
        out[base + rec[p_rel + i] - tables_i[T_RELIC_MOD0]] = 1.0
    base = tables_i[OBS_BOSSES]
    for i in range(rec[r0 + RUN_N_BOSSES]):
        out[base + rec[p_boss + i]] = 1.0
    pending = rec[r0 + RUN_PENDING]
    if pending < 0:
        return
    n_opts = rec[r0 + RUN_N_OPTIONS]
    base = tables_i[OBS_PENDING]
    out[base + pending] = 1.0
    off = base + N_PENDING_KINDS
    if pending == PENDING_CORE:
        for i in range(n_opts):
            out[off + rec[p_opts + i]] = 1.0
    off += tables_i[T_N_CORES]
    w = tables_i[T_N_CATEGORIES] + tables_i[T_N_ARTS]
    if pending == PENDING_REWARD:
        for i in range(n_opts):
            out[off + i * w + rec[p_opts + 2 * i]] = 1.0
            a = rec[p_opts + 2 * i + 1]
            if a >= 0:
                out[off + i * w + tables_i[T_N_CATEGORIES] + a] = 1.0
    off += tables_i[T_REWARD_CHOICES] * w
    if pending == PENDING_RELIC:
        for i in range(n_opts):
            out[off + i * tables_i[T_N_RELICS] + rec[p_opts + i]] = 1.0


@njit(cache=True, inline='always')
def _slot_rows(mask, is_open, rec, p_items, stride, n_items, place, sell, n_slots):
    """legal._slot_rows: the (slot, cell) placing rows of the first `n_slots` slots, the open
    cells not taken by the record's items (cell first, `stride` ints each); and their sell ids."""
    n = is_open.shape[0]
    free = is_open.copy()
    for i in range(n_items):
        free[rec[p_items + stride * i]] = False
    for j in range(n_slots):
        for c in range(n):
            mask[place + j * n + c] = free[c]
        mask[sell + j] = True


@njit(cache=True, inline='always')
def _mask_merges(tables_i, rec, parts, mask):
    """D-11 merges: a rune merges when hand and board hold at least merge_count runes of its
    kind and grade in all (itself included), below the highest grade."""
    r0, p_hand, _, _, _, _, _, _ = parts
    starts = tables_i[T_ACTION_STARTS]
    n_hand = rec[r0 + RUN_N_HAND]
    nr = rec[BOARD_RECORD.n_runes]
    need = tables_i[T_MERGE_COUNT]
    top = tables_i[T_MAX_GRADE]
    counts = np.zeros((N_KINDS, top + 1), np.int64)
    # (grades above the highest never merge: not counted, so never out of the table)
    for h in range(n_hand):
        g = rec[p_hand + 2 * h + 1]
        if 0 <= g <= top:
            counts[rec[p_hand + 2 * h], g] += 1
    for i in range(nr):
        g = rec[BOARD_RECORD.lists + 3 * i + 2]
        if 0 <= g <= top:
            counts[rec[BOARD_RECORD.lists + 3 * i + 1], g] += 1
    start = tables_i[starts + GROUP.merge_hand]
    for h in range(n_hand):
        k = rec[p_hand + 2 * h]
        g = rec[p_hand + 2 * h + 1]
        if g < top and counts[k, g] >= need:
            mask[start + h] = True
    start = tables_i[starts + GROUP.merge_board]
    for i in range(nr):
        k = rec[BOARD_RECORD.lists + 3 * i + 1]
        g = rec[BOARD_RECORD.lists + 3 * i + 2]
        if g < top and counts[k, g] >= need:
            mask[start + rec[BOARD_RECORD.lists + 3 * i]] = True


@njit(cache=True, inline='always')
def _mask_preparation(tables_i, rec, parts, is_open, mask):
    """The legal mask during preparation (no pending choice), in `legal_mask`'s order, but the
    merges (`_mask_merges`)."""
    r0, _, p_shop_runes, p_shop_arts, _, p_open, _, _ = parts
    starts = tables_i[T_ACTION_STARTS]
    n_hand = rec[r0 + RUN_N_HAND]
    n_inv = rec[r0 + RUN_N_INVENTORY]
    n_open = rec[r0 + RUN_N_OPEN]
    nr = rec[BOARD_RECORD.n_runes]
    nart = rec[BOARD_RECORD.n_arts]
    p_arts = BOARD_RECORD.lists + 3 * nr
    mana = rec[r0 + RUN_MANA]
    core = rec[BOARD_RECORD.core]
    mask[tables_i[starts + GROUP.ready]] = True
    if core >= 0 and tables_i[tables_i[T_FLOWING] + core]:
        for e in range(N_CASTING):
            if e != rec[BOARD_RECORD.sun]:
                mask[tables_i[starts + GROUP.set_sun_element] + e] = True
    if n_hand < rec[r0 + RUN_HAND_SLOTS]:
        start = tables_i[starts + GROUP.buy_rune]
        for i in range(rec[r0 + RUN_N_SHOP_RUNES]):
            k = rec[p_shop_runes + i]
            if k >= 0 and mana >= tables_i[tables_i[T_PRICES] + k]:
                mask[start + i] = True
        start = tables_i[starts + GROUP.pick_up]
        for i in range(nr):
            mask[start + rec[BOARD_RECORD.lists + 3 * i]] = True
    if nart + n_inv < rec[r0 + RUN_ART_SLOTS]:
        start = tables_i[starts + GROUP.buy_artifact]
        for i in range(rec[r0 + RUN_N_SHOP_ARTS]):
            a = rec[p_shop_arts + i]
            if a >= 0 and mana >= tables_i[tables_i[T_ART_PRICES] + a]:
                mask[start + i] = True
    if mana >= tables_i[T_REROLL_COST]:
        mask[tables_i[starts + GROUP.reroll]] = True
    if n_hand > 0:
        # place (hand slot, cell): the open cells free of runes, for each held rune
        _slot_rows(mask, is_open, rec, BOARD_RECORD.lists, 3, nr, tables_i[starts + GROUP.place],
                   tables_i[starts + GROUP.sell], n_hand)
    cost = rec[r0 + RUN_SECTOR_COST]
    if cost >= 0 and mana >= cost:
        start = tables_i[starts + GROUP.open_sector]
        for s in range(tables_i[tables_i[T_ACTION_SIZES] + GROUP.open_sector]):
            taken = False
            for i in range(n_open):
                if rec[p_open + i] == s:
                    taken = True
            if not taken:
                mask[start + s] = True
    if n_inv > 0:
        # place_artifact (inventory slot, cell): the open cells free of artifacts, each held one
        _slot_rows(mask, is_open, rec, p_arts, 2, nart, tables_i[starts + GROUP.place_artifact],
                   tables_i[starts + GROUP.sell_artifact], n_inv)
    start = tables_i[starts + GROUP.pick_up_artifact]
    for i in range(nart):
        mask[start + rec[p_arts + 2 * i]] = True


@njit(cache=True, nogil=True)
def observe(rules_i, rules_f, cells, cells_f, sides, sides_f, rec, tables_i, tables_f, hp_bonus,
            out, mask):
    """The observation (`out`, float32) and the legal mask (`mask`, bool) of a run state from
    its step record `rec`, on work arrays from `make_work`. Every entry of both is written.
    False if the board record is out of range."""
    out[:] = 0.0
    mask[:] = False
    parts = _run_record(rec)
    r0, _, _, _, _, p_open, _, p_opts = parts
    is_open = _is_open(tables_i, rec, p_open, rec[r0 + RUN_N_OPEN])
    # -- the observation (Encoder.encode_flat, in its order)
    if not board_features(rules_i, rules_f, cells, cells_f, sides, sides_f, rec, 0, is_open,
                          out[tables_i[OBS_BOARD]:], tables_i[T_BOARD_WIDTH],
                          tables_i[T_COL_GRADE], tables_i[T_COL_OPEN], tables_i[T_COL_ART],
                          tables_i[T_COL_POWER], tables_f[TF_MAX_GRADE],
                          tables_f[TF_LOG_SCALE]):
        return False
    _observe_items(tables_i, tables_f, rec, parts, out)
    _observe_scalars(tables_i, tables_f, rec, parts, hp_bonus, out)
    _observe_choices(tables_i, rec, parts, out)
    # -- the legal mask (rune_env.run.loop.legal_mask, in its order)
    if rec[r0 + RUN_OVER]:
        return True
    pending = rec[r0 + RUN_PENDING]
    if pending < 0:
        _mask_preparation(tables_i, rec, parts, is_open, mask)
        if rec[r0 + RUN_N_HAND] > 0 or rec[BOARD_RECORD.n_runes] > 0:
            _mask_merges(tables_i, rec, parts, mask)
        return True
    n_opts = rec[r0 + RUN_N_OPTIONS]
    group = CHOICE_GROUP[pending]
    start = tables_i[tables_i[T_ACTION_STARTS] + group]
    if pending == PENDING_CORE:
        for i in range(n_opts):
            mask[start + rec[p_opts + i]] = True
    else:
        n_ids = tables_i[tables_i[T_ACTION_SIZES] + group]
        for i in range(n_ids if n_ids < n_opts else n_opts):
            mask[start + i] = True
    return True
