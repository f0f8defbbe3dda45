"""The compiled battle loop: the reference engine (`rune_env/battle/engine.py`) step for step.

Every function mirrors the reference with the same order of operations, so that the floating
point comes out bit for bit the same (power factors multiplied in the D-12 order, flow
multipliers as `1 + (m - 1) * s * v`, milliseconds as `floor(x * 1000 + 0.5 + 1e-9)`):

    reference (engine.py / analysis.py)     here
    SideSetup.of, Mods.of, _new_side        setup_side
    affinity_multipliers                    affinity
    analyse (cached, dropped on a change)   analyse (S_DIRTY: recomputed at the next read)
    _erode, _reserve                        erode
    _cast with its extra casts, _hit,       cast
      _absorb, _heal, _light_unseal,
      _unseal, _curse, _freeze, _strongest
    Battle.run, _next_time, _end_effects,   play
      _turn, _mimic_copies, _judge_timeout

Rules come as two flat arrays `ri` / `rf` (see compile.py). The state of a battle is four arrays,
preallocated once per worker thread and reused for every battle it plays (no allocation, no
Python object in the loop):

    C   int64   [2 + 2M, N, cols]  rows 0, 1: per side and cell (C_* columns): occupant, seal,
                               wards, timers, scratch lists; rows 2..: the analyses, M = MEMO
                               per side (A_* columns: delay, acting flows)
    CF  float64 [2 + 2M, N, cols]  rows 0, 1: the analysis' scratch per side and cell (CF_*:
                               amplify factor, resonance, the feeders' best strength per kind);
                               rows 2..: the analyses (AF_*: power, the acting flows' strengths)
    X   int64   [2, rows, W]   per side (X_* rows): scalars (row X_S, S_* columns), modifier list,
                               hand, scheduled unseals, turn cells, occupied cells, live kinds,
                               resonance orbits, scratch; the battle's clock and outcome are
                               side 0's S_T, S_OVER, S_ERROR
    XF  float64 [2, rows, WF]  per side (XF_* rows): float scalars (SF_*), affinity, resonance
                               multipliers, the cast snapshot, scratch

A knockout sets S_OVER to the winner and the code returns at once (the reference raises
`BattleOver`). The analysis is recomputed only when a seal, an unseal or a reserve changed the
side's board (S_DIRTY), at the next read, like the reference's cached `Analysis`; and as seals
and unseals often go back and forth, the last MEMO analyses of each side stay in their rows,
keyed by the sealed runes and the count of reserves: a hit makes its row the current one again
(S_AROW; exactly what a recomputation gives). The erosion target is cached the same way
(S_TARGET_OK). A cast first copies its rune's acting flows into a snapshot (the reference passes
them as arguments): a light's unseal in the middle of the cast may recompute the analysis, and
the rest of the cast and its second cast must still use the old flows. The set of occupied cells
never changes in a battle (a reserve only replaces the occupant), so the analysis and the
erosion walk only those.

Speed and compile time shape the code. The functions that run in the loop are compiled without
numba's reference counting (`_nrt=False`: they allocate nothing), because a call between compiled
functions would otherwise incref and decref every array argument, atomic operations that cost more
than the battle itself; for the same reason no array views are made in the loop. A call between
compiled functions stays a call (numba compiles each on its own; the machine code does not inline
across them) and passes every array as about a dozen words on the stack: `cast`, which runs about a
hundred times a battle, is inlined into `play` by numba itself (`inline='always'`: about a tenth of
the battle's time saved, some seconds of cold compile spent), and so are the small helpers (`_ms`,
`_max`, ... in place of numba's `int`, `max` and `min`, which are calls too; `_erodes`, which
spares the calls of most erosions; `_recall`, the memo lookup of `analyse`, at the turn's read of
the analysis, where most reads hit). `erode` stays a call: inlined at its two places it would cost
about ten more seconds of cold compile for a few percent. There are few functions, because numba
links and re-optimizes every callee into each caller (the cold compile time grows with the call
tree); `play` reaches `cast` from one place only (the turn's cast and the mimics' copies are one
loop), so its body is compiled once. Integer literals are never passed to a compiled function
(numba would compile one version per literal value). What the rules fix is looked up rather than
recomputed (compile.py): the overdrive multiplier of every second (RF_OD), the opposites of a kind
as a bit mask (K_OPPM: no branch per neighbour); and cell masks skip loops that would find
nothing: a side's mimic cells (S_MIMIC) against the cell's outward ones (G_OUTM) before the
mimics' scan, the occupied cells against each resonance orbit (RI_ORBM) at the set-up.

Besides battles, the kernel analyses boards for the drafter and the observation
(`board_analysis`, `board_features`) and writes the env's whole observation and legal mask from
one step record (`observe`, at the end of this file; compile.py RS_*, OT_*, OF_*).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .compile import (AI_ABS, AI_BONUS, AI_WARDS, AIW, F_AFF_MAX, F_AFF_MIN, F_AFF_SLOPE,
                      F_AMP_INC, F_ATTUNE, F_BASE_HP, F_BASE_INTERVAL_S, F_CURSE_HEAL_X, F_DEATH,
                      F_DELAY_X, F_DRAW_TOL, F_DRIZZLE_X, F_DURATION_S, F_HP_PER_ROUND, F_OPP_MULT,
                      F_REFLECT_CAP, F_STORM_BUDGET_S, F_STRONG_TOL, FF_CDX, FF_CURSE, FF_FDX,
                      FF_MULT, FF_REFL, FF_STORM, FF_STRIP, FFW, FI_DRIZ, FI_EROS, FI_EXTRA,
                      FI_FROM, FI_OVER, FIW, G_IN, G_INN, G_NB, G_NBN, G_OUT, G_OUTM, G_OUTN,
                      G_RING, GW, HEADER, K_ATTACK, K_BEATEN, K_BEATS, K_HITS, K_INTO_N, K_OPPM,
                      KF_BASE, KF_CURSE, KF_FREEZE, KF_WEAR, KFW, KIND_ID, KW, LAYOUT_SIGNATURE,
                      MASK_BITS, MF_AMP,
                      MF_CFS, MF_FLOW, MF_HP, MF_INT, MF_POWX, MF_RADD, MF_UNS, MFW, MI_ANY,
                      MI_DIV, MI_EXTRA, MI_LOOSE, MI_OWARDS, MIW, N_CASTING, N_KINDS, O_CELLS,
                      O_LEN, O_PAT, RF_CX, RF_FLOW, RF_GX, RF_KIND, RF_MOD, RF_OD, RF_PL, RF_PN,
                      RF_RX, RI_ART, RI_CAP_MIN, RI_DELAY_PERIOD, RI_DIVISOR, RI_DRIZZLE_MAX,
                      RI_EARTH_WARDS, RI_F, RI_FLOW, RI_G, RI_GEO, RI_INTO, RI_KIND, RI_MAX_FROZEN,
                      RI_MIN_CYCLE, RI_MOD, RI_N, RI_O, RI_ORB, RI_ORBM, RI_OW, RI_P,
                      RI_PER_CYCLE, RI_UNS)
from .compile import (OF_ACTION_CAP, OF_ART_MAX, OF_BOSS_EVERY, OF_COST_MAX, OF_HAND_MAX,
                      OF_LAMPS, OF_LOG_SCALE, OF_MANA, OF_MAX_GRADE, OF_RANKS, OF_ROUND_CAP,
                      OF_WINS, OT_A_BUY_ART, OT_A_BUY_RUNE, OT_A_CORE, OT_A_MERGE_BOARD,
                      OT_A_MERGE_HAND, OT_A_OPEN, OT_A_PICK_UP, OT_A_PICK_UP_ART, OT_A_PLACE,
                      OT_A_PLACE_ART, OT_A_READY, OT_A_RELIC, OT_A_REROLL, OT_A_REWARD,
                      OT_A_SELL, OT_A_SELL_ART, OT_A_SUN, OT_ART_PRICE, OT_BOARD, OT_BOSSES,
                      OT_COL_ART, OT_COL_GRADE, OT_COL_OPEN, OT_COL_POWER, OT_CORE, OT_FLOWING,
                      OT_HAND, OT_INV, OT_MAX_GRADE, OT_MERGE_COUNT,
                      OT_N_RELIC_IDS, OT_N_REWARD_IDS, OT_N_SECTOR_IDS, OT_NA, OT_NCAT,
                      OT_NCELLS, OT_NCORES, OT_NRELICS, OT_PENDING, OT_PRICE, OT_RELIC_MOD0,
                      OT_RELICS, OT_REROLL_COST, OT_REWARD_CHOICES, OT_SCALARS, OT_SECTOR,
                      OT_SHOP, OT_WIDTH, RS_ART_SLOTS, RS_DRAWS, RS_HAND_SLOTS, RS_HDR,
                      RS_LAMPS, RS_LOSSES, RS_MANA, RS_NBOSS, RS_NEXT_BOSS, RS_NHAND, RS_NINV,
                      RS_NOPEN, RS_NOPTIONS, RS_NSHOP_ARTS, RS_NSHOP_RUNES, RS_OVER, RS_PENDING,
                      RS_PREP, RS_RANK, RS_ROUND, RS_SECTOR_COST, RS_WINS)

# kind ids (fixed by the code: rules.config.KINDS)
K_WATER = KIND_ID["water"]
K_EARTH = KIND_ID["earth"]
K_LIGHT = KIND_ID["light"]
K_ICE = KIND_ID["ice"]
K_AMPLIFY = KIND_ID["amplify"]
K_RESONATOR = KIND_ID["resonator"]
K_DELAY = KIND_ID["delay"]
K_NODE = KIND_ID["node"]
K_MIMIC = KIND_ID["mimic"]
NC = N_CASTING   # kinds 0..NC-1 cast
NK = N_KINDS

# C columns of a side's rows C[0], C[1] (C_AMPL..: a list per cell)
(C_KIND, C_GRADE, C_EGRADE, C_BONUS, C_SEALED, C_WARDS, C_SERIAL, C_FROZEN, C_DCOUNT, C_AMPN,
 C_OIDX, C_AMPL) = range(12)
AMP_CAP = 18                 # distinct amplifiers of one cell: all lie within distance 2 (18)
CW = C_AMPL + AMP_CAP
# CF columns of a side's rows (analysis scratch)
CF_AMPF, CF_RES, CF_BEST = 0, 1, 2
CFW = CF_BEST + NC
# The analyses: entry e of side s is C[2 + s * MEMO + e] (per cell: delayed, number of acting
# flows, the acting flows, A_* columns) and CF[2 + s * MEMO + e] (power, the acting flows'
# strengths, AF_* columns), for the live casting runes; X[s, X_S, S_AROW] is the side's current
# one. (Which runes have a power needs no analysis: the live casting runes, see `_casts`.)
A_DELAYED, A_ACTN, A_ACTF = 0, 1, 2
AF_POWER, AF_ACTS = 0, 1
MEMO = 8                     # analyses remembered per side (see `analyse`)
MEMO_OCC = 62                # memo only for boards of at most this many runes (a 64-bit mask)
# X rows (X_TURN: the turn cells in casting order; X_LIVE: per cell the kind of its live rune, -1
# if none or sealed, as of the set-up, then of the last analysis computed)
(X_S, X_MODS, X_HK, X_HG, X_HU, X_PT, X_PC, X_PS, X_DUE, X_LNK, X_SNAPF, X_OCC, X_ORBS,
 X_MKEY, X_MEPOCH, X_LIVE, X_TURN, N_XR) = range(18)
# XF rows
XF_S, XF_AFF, XF_RESM, XF_SNAPS, XF_WTS, XF_MREFL, N_XFR = range(7)
# side int scalars (X[s, X_S, ...]); S_T, S_OVER and S_ERROR are used in side 0's row only
(S_INTERVAL, S_DOLL, S_SEAL_CAP, S_EROSIONS, S_OUTER, S_UNSEAL_MS, S_ANY_KIND, S_SUN, S_NTURN,
 S_NMODS, S_NHAND, S_CURSE, S_DRIZZLE, S_BUDGET, S_BUDGET_MAX, S_TURN_POS, S_NEXT, S_CASTS,
 S_TURNS, S_SEALED, S_UNSEALED, S_NPEND, S_DIRTY, S_OFF, S_NOCC, S_NORB, S_TARGET,
 S_TARGET_OK, S_MASK, S_EPOCH, S_MNEXT, S_MUSED, S_MEMO_ON, S_AROW, S_MIMIC, S_CYCLE, S_RESTS,
 S_T, S_OVER, S_ERROR, N_SI) = range(41)
# S_CYCLE: the turns of a cycle, rest turns included (D-50; 0 without turn cells); S_RESTS: rest
# turns taken
# side float scalars (XF[s, XF_S, ...])
SF_MAXHP, SF_HP, SF_BARRIER, SF_AMP_X, SF_FLOW_X, SF_CFS, SF_REFLECT, N_SF = range(8)

NOT_OVER = -1
PEND_CAP = 256   # warding-seal unseals pending at once on one side (beyond: status 1)
# status of a battle (S_ERROR): 0 played; 1 more unseals pending than PEND_CAP; 2 a board
# record out of range. Not 0: `fast_battles` replays that battle with the reference engine.


@njit(cache=True)
def layout_signature():
    """compile.LAYOUT_SIGNATURE as compiled into this kernel (a stale disk cache returns an old
    one: see `rune_env.battle.fast._kernel`)."""
    return LAYOUT_SIGNATURE


def make_state(ri, hand_cap, mods_cap):
    """The four state arrays of one worker (see the module docstring)."""
    N = ri[RI_N]
    F = ri[RI_F]
    W = max(N_SI, mods_cap, hand_cap, PEND_CAP, N, F, ri[RI_O], MEMO, 8)
    WF = max(N_SF, NK, ri[RI_P], F, MEMO, 1)
    C = np.zeros((2 + 2 * MEMO, N, max(CW, A_ACTF + F)), np.int64)
    CF = np.zeros((2 + 2 * MEMO, N, max(CFW, AF_ACTS + F)), np.float64)
    X = np.zeros((2, N_XR, W), np.int64)
    XF = np.zeros((2, N_XFR, WF), np.float64)
    return C, CF, X, XF


make_state_jit = njit(cache=True)(make_state)


# Small helpers, inlined where they are used. numba's builtins `int`, `min` and `max` are calls
# to functions compiled apart (never inlined into the loop), each costing more than the
# comparison itself; these are written out (numba's math.floor of a float is already an int64).

@njit(cache=True, inline='always')
def _ms(seconds):
    """Rules.ms: whole milliseconds, rounded half up (D-6a)."""
    return math.floor(seconds * 1000.0 + 0.5 + 1e-9)


@njit(cache=True, inline='always')
def _cell_bit(c):
    """Cell c's bit in a cell mask (compile.MASK_BITS: the cells from MASK_BITS on share one)."""
    return 1 << (c if c < MASK_BITS else MASK_BITS)


@njit(cache=True, inline='always')
def _max(a, b):
    """Python's max(a, b): the first of equal values."""
    return b if b > a else a


@njit(cache=True, inline='always')
def _min(a, b):
    """Python's min(a, b): the first of equal values."""
    return b if b < a else a


# -- set-up -------------------------------------------------------------------------------------

@njit(cache=True, _nrt=False)
def setup_side(ri, rf, C, X, XF, s, enc, off, max_hp_given):
    """SideSetup.of + Mods.of + Battle._new_side for side s from its board record at `off`.
    False if the record holds a cell or grade out of range (a board that skipped validation):
    the battle is then left to the reference engine."""
    N = ri[RI_N]
    geo = ri[RI_GEO]
    xs = X[s, X_S]
    xf = XF[s, XF_S]
    rnd = enc[off]
    core = enc[off + 1]
    nr = enc[off + 3]
    na = enc[off + 4]
    nh = enc[off + 5]
    nb = enc[off + 6]
    nrel = enc[off + 7]
    p_runes = off + HEADER
    p_arts = p_runes + 3 * nr
    p_hand = p_arts + 2 * na
    p_boss = p_hand + 2 * nh
    p_rel = p_boss + nb
    mods = X[s, X_MODS]
    nm = 0
    if core >= 0:
        mods[nm] = core
        nm += 1
    for i in range(nb):
        mods[nm] = enc[p_boss + i]
        nm += 1
    for i in range(nrel):
        mods[nm] = enc[p_rel + i]
        nm += 1
    # Mods.of: products, sums and switches in the order core, boss rules, relics
    interval_x = 1.0
    hp_x = 1.0
    amp_x = 1.0
    flow_x = 1.0
    extra = 0
    out_wards = 0
    loose = False
    any_kind = False
    res_add = 0.0
    divisor = -1
    cfs = 0.0
    unseal_s = -1.0
    mi0 = ri[RI_MOD]
    mf0 = ri[RF_MOD]
    for j in range(nm):
        mi = mi0 + mods[j] * MIW
        mf = mf0 + mods[j] * MFW
        interval_x *= rf[mf + MF_INT]
        hp_x *= rf[mf + MF_HP]
        amp_x *= rf[mf + MF_AMP]
        flow_x *= rf[mf + MF_FLOW]
        extra += ri[mi + MI_EXTRA]
        out_wards += ri[mi + MI_OWARDS]
        if ri[mi + MI_LOOSE]:
            loose = True
        if ri[mi + MI_ANY]:
            any_kind = True
        res_add += rf[mf + MF_RADD]
        d = ri[mi + MI_DIV]
        if d >= 0 and d > divisor:
            divisor = d
        if rf[mf + MF_CFS] > cfs:
            cfs = rf[mf + MF_CFS]
        u = rf[mf + MF_UNS]
        if u >= 0.0 and (unseal_s < 0.0 or u < unseal_s):
            unseal_s = u
    if divisor < 0:
        divisor = ri[RI_DIVISOR]
    if max_hp_given == max_hp_given:     # not NaN: the board's max_hp
        max_hp = max_hp_given
    else:
        max_hp = rf[F_BASE_HP] + rf[F_HP_PER_ROUND] * (rnd - 1)
    max_hp *= hp_x

    Cs = C[s]
    live = X[s, X_LIVE]
    for c in range(N):
        # read for every cell (the others are read for occupied cells only, set below)
        Cs[c, C_KIND] = -1
        live[c] = -1
    outer = 0
    max_grade = ri[RI_G]
    occ = 0      # the occupied cells (a mask, see MASK_BITS)
    for i in range(nr):
        c = enc[p_runes + 3 * i]
        g = enc[p_runes + 3 * i + 2]
        if c < 0 or c >= N or g < 1 or g > max_grade:
            return False
        occ |= _cell_bit(c)
        Cs[c, C_KIND] = enc[p_runes + 3 * i + 1]
        live[c] = Cs[c, C_KIND]     # nothing is sealed yet
        Cs[c, C_GRADE] = enc[p_runes + 3 * i + 2]
        Cs[c, C_BONUS] = 0
        Cs[c, C_SEALED] = 0
        Cs[c, C_WARDS] = 0
        Cs[c, C_SERIAL] = 0
        Cs[c, C_FROZEN] = 0
        Cs[c, C_DCOUNT] = 0
        r = ri[geo + c * GW + G_RING]
        if r > outer:
            outer = r
    doll = 0
    a0 = ri[RI_ART]
    for i in range(na):
        cell = enc[p_arts + 2 * i]
        if cell < 0 or cell >= N:
            return False
        a = a0 + enc[p_arts + 2 * i + 1] * AIW
        doll += ri[a + AI_ABS]
        for j in range(-1, ri[geo + cell * GW + G_NBN]):
            c = cell if j < 0 else ri[geo + cell * GW + G_NB + j]
            if ri[a + AI_BONUS] > Cs[c, C_BONUS]:
                Cs[c, C_BONUS] = ri[a + AI_BONUS]
            if Cs[c, C_KIND] >= 0:
                Cs[c, C_WARDS] += ri[a + AI_WARDS]
    nturn = 0
    nocc = 0
    mimics = 0     # the cells holding a mimic (a mask, see MASK_BITS; `erode` keeps it)
    for c in range(N):
        k = Cs[c, C_KIND]
        if k < 0:
            continue
        g = Cs[c, C_GRADE] + Cs[c, C_BONUS]
        Cs[c, C_EGRADE] = g if g < max_grade else max_grade
        if ri[geo + c * GW + G_RING] == outer:
            Cs[c, C_WARDS] += out_wards
            if k == K_EARTH:
                Cs[c, C_WARDS] += ri[RI_EARTH_WARDS]
        if k < NC:
            X[s, X_TURN, nturn] = c
            nturn += 1
        if k == K_MIMIC:
            mimics |= _cell_bit(c)
        X[s, X_OCC, nocc] = c
        Cs[c, C_OIDX] = nocc
        nocc += 1
    for i in range(nh):
        if enc[p_hand + 2 * i + 1] < 1 or enc[p_hand + 2 * i + 1] > max_grade:
            return False
        X[s, X_HK, i] = enc[p_hand + 2 * i]
        X[s, X_HG, i] = enc[p_hand + 2 * i + 1]
        X[s, X_HU, i] = 0
    # the resonance orbits that could ever complete: every cell occupied (no cell is ever
    # emptied or filled during a battle, a reserve only replaces the occupant)
    norb = 0
    orb = ri[RI_ORB]
    ow = 2 + ri[RI_OW]
    orbm = ri[RI_ORBM]
    for o in range(ri[RI_O]):
        if ri[orbm + o] & ~occ:
            continue
        full = True
        for j in range(ri[orb + o * ow + O_LEN]):
            if live[ri[orb + o * ow + O_CELLS + j]] < 0:
                full = False
                break
        if full:
            X[s, X_ORBS, norb] = o
            norb += 1
    pn = ri[RF_PN]
    pl = ri[RF_PL]
    for p in range(ri[RI_P]):
        XF[s, XF_RESM, p] = (rf[pl + p] if loose else rf[pn + p]) + res_add

    interval = _ms(rf[F_BASE_INTERVAL_S] * interval_x)
    xs[S_INTERVAL] = interval
    xs[S_DOLL] = doll
    xs[S_SEAL_CAP] = _max(ri[RI_CAP_MIN], nr // divisor)     # D-32 with D-51's floor
    xs[S_EROSIONS] = ri[RI_PER_CYCLE] + extra
    xs[S_OUTER] = outer
    xs[S_UNSEAL_MS] = _ms(unseal_s) if unseal_s >= 0.0 else -1
    xs[S_ANY_KIND] = 1 if any_kind else 0
    xs[S_SUN] = enc[off + 2]
    xs[S_NTURN] = nturn
    xs[S_CYCLE] = _max(nturn, ri[RI_MIN_CYCLE]) if nturn > 0 else 0     # D-50
    xs[S_RESTS] = 0
    xs[S_NMODS] = nm
    xs[S_NHAND] = nh
    xs[S_CURSE] = 0
    xs[S_DRIZZLE] = 0
    xs[S_BUDGET_MAX] = _ms(rf[F_STORM_BUDGET_S])
    xs[S_BUDGET] = xs[S_BUDGET_MAX]
    xs[S_TURN_POS] = 0
    xs[S_NEXT] = interval if nturn > 0 else -1
    xs[S_CASTS] = 0
    xs[S_TURNS] = 0
    xs[S_SEALED] = 0
    xs[S_UNSEALED] = 0
    xs[S_NPEND] = 0
    xs[S_DIRTY] = 1
    xs[S_OFF] = off
    xs[S_NOCC] = nocc
    xs[S_NORB] = norb
    xs[S_TARGET_OK] = 0
    xs[S_MASK] = 0
    xs[S_EPOCH] = 0
    xs[S_MNEXT] = 0
    xs[S_MUSED] = 0
    xs[S_MEMO_ON] = 1 if nocc <= MEMO_OCC else 0
    xs[S_AROW] = 2 + s * MEMO
    xs[S_MIMIC] = mimics
    xf[SF_MAXHP] = max_hp
    xf[SF_HP] = max_hp
    xf[SF_BARRIER] = 0.0
    xf[SF_AMP_X] = amp_x
    xf[SF_FLOW_X] = flow_x
    xf[SF_CFS] = cfs
    xf[SF_REFLECT] = 0.0
    return True


@njit(cache=True, _nrt=False)
def affinity(ri, rf, C, X, XF, s, enc):
    """affinity_multipliers: side s's factor per attack kind against the other side's board at
    battle start. The weights are summed in the order of the opponent's `Board.runes`."""
    o = 1 - s
    off = X[o, X_S, S_OFF]
    nr = enc[off + 3]
    wts = XF[s, XF_WTS]
    for k in range(NK):
        wts[k] = 0.0
    gx = ri[RF_GX]
    total = 0.0
    for i in range(nr):
        c = enc[off + HEADER + 3 * i]
        k = enc[off + HEADER + 3 * i + 1]
        if k < NC:
            w = rf[gx + C[o, c, C_EGRADE] - 1]
            wts[k] = wts[k] + w
            total += w
    for k in range(NK):
        kt = ri[RI_KIND] + k * KW
        if ri[kt + K_ATTACK] == 0 or total <= 0:
            XF[s, XF_AFF, k] = 1.0
            continue
        # the weights of the kinds k beats, and of those beating k, each in table order
        beaten = 0.0
        for j in range(ri[kt + K_BEATS]):
            beaten += wts[ri[kt + K_BEATS + 1 + j]]
        beating = 0.0
        for j in range(ri[kt + K_BEATEN]):
            beating += wts[ri[kt + K_BEATEN + 1 + j]]
        beaten = beaten / total
        beating = beating / total
        v = 1.0 + rf[F_AFF_SLOPE] * (beaten - beating)
        v = _max(rf[F_AFF_MIN], v)
        XF[s, XF_AFF, k] = _min(rf[F_AFF_MAX], v)


# -- the analysis -------------------------------------------------------------------------------

@njit(cache=True, _nrt=False, inline='always')
def _casts(C, s, c):
    """The rune at c is a live casting rune: it has a power (a key of the reference's
    `Analysis.powers`)."""
    k = C[s, c, C_KIND]
    return k >= 0 and k < NC and C[s, c, C_SEALED] == 0


@njit(cache=True, _nrt=False, inline='always')
def _feed(C, CF, s, a, ka, c):
    """Live rune a (kind ka) flows into cell c (inward, or linked by a node): a casting kind
    raises c's best feeding strength of that kind to 1; an amplify joins c's set of amplifiers."""
    if ka < NC:
        if 1.0 > CF[s, c, CF_BEST + ka]:
            CF[s, c, CF_BEST + ka] = 1.0
    elif ka == K_AMPLIFY:
        n = C[s, c, C_AMPN]
        for q in range(n):
            if C[s, c, C_AMPL + q] == a:
                return
        C[s, c, C_AMPL + n] = a
        C[s, c, C_AMPN] = n + 1


@njit(cache=True, _nrt=False, inline='always')
def _recall(X, XF, s):
    """The memo lookup of `analyse`: True if the analysis of side s's board is remembered, its
    row then made the current one (inlined where most reads happen: a hit costs no call)."""
    if X[s, X_S, S_MEMO_ON] != 1:
        return False
    key = X[s, X_S, S_MASK]
    epoch = X[s, X_S, S_EPOCH]
    for e in range(X[s, X_S, S_MUSED]):
        if X[s, X_MKEY, e] == key and X[s, X_MEPOCH, e] == epoch:
            X[s, X_S, S_AROW] = 2 + s * MEMO + e
            XF[s, XF_S, SF_REFLECT] = XF[s, XF_MREFL, e]
            X[s, X_S, S_DIRTY] = 0
            return True
    return False


@njit(cache=True, _nrt=False)
def analyse(ri, rf, C, CF, X, XF, s):
    """analysis.analyse for side s: powers, acting flows, delay, amplify factors, reflect share,
    into analysis row X[s, X_S, S_AROW] (A_* / AF_* columns) and SF_REFLECT.

    Power (D-12) = base x grade x ring x flows (table order) x attunement x resonance x
    amplifies (casting order) x opposition x delay x core x boss rules x relics.
    Only occupied cells are visited (in casting order); a row holds the live casting runes'."""
    F = ri[RI_F]
    no = X[s, X_S, S_NOCC]
    memo = X[s, X_S, S_MEMO_ON] == 1
    e = 0     # without the memo: always entry 0
    if memo:
        # the analysis is a function of the board: the sealed runes (S_MASK, a bit per occupied
        # cell) and the occupants (S_EPOCH counts the reserves). Seals and unseals often go back
        # and forth (the warding seal, light), so the last MEMO analyses stay in their rows: a
        # hit only makes its row the current one again (exactly what the computation below
        # would produce). A miss computes into the oldest row, which may be the current one: a
        # cast keeps its own copy of its acting flows (see `cast`).
        if _recall(X, XF, s):
            return
        e = X[s, X_S, S_MNEXT]
        key = X[s, X_S, S_MASK]
        epoch = X[s, X_S, S_EPOCH]
        X[s, X_S, S_MNEXT] = (e + 1) % MEMO
        if X[s, X_S, S_MUSED] < MEMO:
            X[s, X_S, S_MUSED] += 1
        X[s, X_MKEY, e] = key
        X[s, X_MEPOCH, e] = epoch
    r = 2 + s * MEMO + e
    X[s, X_S, S_AROW] = r
    geo = ri[RI_GEO]
    for i in range(no):
        c = X[s, X_OCC, i]
        # the live runes' kinds, in one dense row: the loops below read them for every
        # neighbour (the empty cells stay -1 from setup_side)
        X[s, X_LIVE, c] = C[s, c, C_KIND] if C[s, c, C_SEALED] == 0 else -1
        CF[s, c, CF_RES] = 0.0
        C[s, c, C_AMPN] = 0
        for k in range(NC):
            CF[s, c, CF_BEST + k] = 0.0
    # resonance: every cell of the orbit holds a live rune of one kind or a resonator, and one
    # rune of the kind itself; the strongest complete pattern counts; resonators never grow
    orb = ri[RI_ORB]
    ow = 2 + ri[RI_OW]
    for oi in range(X[s, X_S, S_NORB]):
        base = orb + X[s, X_ORBS, oi] * ow
        L = ri[base + O_LEN]
        ok = True
        k1 = -1
        for j in range(L):
            k = X[s, X_LIVE, ri[base + O_CELLS + j]]
            if k < 0:
                ok = False
                break
            if k != K_RESONATOR:
                if k1 < 0:
                    k1 = k
                elif k != k1:
                    ok = False
                    break
        if not ok or k1 < 0:
            continue
        mult = XF[s, XF_RESM, ri[base + O_PAT]]
        for j in range(L):
            c = ri[base + O_CELLS + j]
            if X[s, X_LIVE, c] != K_RESONATOR and mult > CF[s, c, CF_RES]:
                CF[s, c, CF_RES] = mult
    # feeders (the best strength per feeding kind) and amplifiers (a set per cell)
    sun = X[s, X_S, S_SUN]
    cfs = XF[s, XF_S, SF_CFS]
    has_node = False
    for i in range(no):
        c = X[s, X_OCC, i]
        kc = X[s, X_LIVE, c]
        if kc < 0:
            continue
        if kc == K_NODE:
            has_node = True
        g = geo + c * GW
        for j in range(ri[g + G_INN]):
            a = ri[g + G_IN + j]
            ka = X[s, X_LIVE, a]
            if ka >= 0:
                _feed(C, CF, s, a, ka, c)
        if ri[g + G_RING] == 1 and cfs > 0 and sun >= 0:
            if cfs > CF[s, c, CF_BEST + sun]:
                CF[s, c, CF_BEST + sun] = cfs
    if has_node:
        for i in range(no):
            node = X[s, X_OCC, i]
            if X[s, X_LIVE, node] != K_NODE:
                continue
            # D-19: the live non-node runes next to a node feed and amplify each other
            g = geo + node * GW
            nl = 0
            for j in range(ri[g + G_NBN]):
                c = ri[g + G_NB + j]
                kc = X[s, X_LIVE, c]
                if kc >= 0 and kc != K_NODE:
                    X[s, X_LNK, nl] = c
                    nl += 1
            for ia in range(nl):
                a = X[s, X_LNK, ia]
                ka = X[s, X_LIVE, a]
                for ib in range(nl):
                    if ia == ib:
                        continue
                    _feed(C, CF, s, a, ka, X[s, X_LNK, ib])
    gx = ri[RF_GX]
    amp_x = XF[s, XF_S, SF_AMP_X]
    for i in range(no):
        c = X[s, X_OCC, i]
        if X[s, X_LIVE, c] == K_AMPLIFY:
            res = CF[s, c, CF_RES] if CF[s, c, CF_RES] > 0.0 else 1.0
            CF[s, c, CF_AMPF] = 1.0 + rf[F_AMP_INC] * rf[gx + C[s, c, C_EGRADE] - 1] * res * amp_x
    # powers
    flow_x = XF[s, XF_S, SF_FLOW_X]
    outer = X[s, X_S, S_OUTER]
    nm = X[s, X_S, S_NMODS]
    kt = ri[RI_KIND]
    into = ri[RI_INTO]
    fl = ri[RI_FLOW]
    ffl = ri[RF_FLOW]
    kf = ri[RF_KIND]
    rx = ri[RF_RX]
    mf0 = ri[RF_MOD]
    reflect = 0.0
    for i in range(no):
        c = X[s, X_OCC, i]
        k = X[s, X_LIVE, c]
        if k < 0 or k >= NC:
            continue
        g = geo + c * GW
        ring = ri[g + G_RING]
        p = rf[kf + k * KFW + KF_BASE]
        p *= rf[gx + C[s, c, C_EGRADE] - 1]
        p *= rf[rx + ring - 1]
        na = 0
        for j in range(ri[kt + k * KW + K_INTO_N]):
            f = ri[into + k * F + j]
            strength = CF[s, c, CF_BEST + ri[fl + f * FIW + FI_FROM]]
            if strength > 0:
                C[r, c, A_ACTF + na] = f
                CF[r, c, AF_ACTS + na] = strength
                na += 1
                # analysis.flow_multiplier
                p *= 1.0 + (rf[ffl + f * FFW + FF_MULT] - 1.0) * strength * flow_x
        C[r, c, A_ACTN] = na
        if CF[s, c, CF_BEST + k] > 0:
            p *= 1.0 + (rf[F_ATTUNE] - 1.0) * CF[s, c, CF_BEST + k] * flow_x
        if CF[s, c, CF_RES] > 0.0:
            p *= CF[s, c, CF_RES]
        n_a = C[s, c, C_AMPN]
        if n_a > 0:
            # the amplifies in casting order (insertion sort of a short list)
            for q in range(1, n_a):
                v = C[s, c, C_AMPL + q]
                j = q - 1
                while j >= 0 and C[s, c, C_AMPL + j] > v:
                    C[s, c, C_AMPL + j + 1] = C[s, c, C_AMPL + j]
                    j -= 1
                C[s, c, C_AMPL + j + 1] = v
            for q in range(n_a):
                p *= CF[s, C[s, c, C_AMPL + q], CF_AMPF]
        # a live opposite kind next to it, a live delay inward, without a branch per neighbour (a
        # neighbour's live kind km, -1 if none, is bit km + 1 of the opposites' mask, bit 0 is 0)
        opp = 0
        oppm = ri[kt + k * KW + K_OPPM]
        for j in range(ri[g + G_NBN]):
            opp |= oppm >> (X[s, X_LIVE, ri[g + G_NB + j]] + 1)
        if opp & 1:
            p *= rf[F_OPP_MULT]
        dl = 0
        for j in range(ri[g + G_INN]):
            dl |= X[s, X_LIVE, ri[g + G_IN + j]] == K_DELAY
        C[r, c, A_DELAYED] = dl
        if dl:
            p *= rf[F_DELAY_X]
        isout = 1 if ring == outer else 0
        for j in range(nm):
            p *= rf[mf0 + X[s, X_MODS, j] * MFW + MF_POWX + 2 * k + isout]
        CF[r, c, AF_POWER] = p
        for j in range(na):
            reflect += rf[ffl + C[r, c, A_ACTF + j] * FFW + FF_REFL] * CF[r, c, AF_ACTS + j]
    XF[s, XF_S, SF_REFLECT] = _min(reflect, rf[F_REFLECT_CAP])
    if memo:
        XF[s, XF_MREFL, e] = XF[s, XF_S, SF_REFLECT]
    X[s, X_S, S_DIRTY] = 0


# -- erosion ------------------------------------------------------------------------------------

@njit(cache=True, _nrt=False, inline='always')
def _erodes(C, X, v):
    """False if an erosion against v would change nothing, as `erode` would find: no doll, the
    target known (S_TARGET_OK) and without a ward, and the seal cap reached. Once the cap is
    reached that is most erosions of a battle, which then cost no call."""
    if X[v, X_S, S_DOLL] > 0 or X[v, X_S, S_TARGET_OK] == 0:
        return True
    target = X[v, X_S, S_TARGET]
    if target < 0:
        return False
    return (C[v, target, C_WARDS] > 0
            or X[v, X_S, S_SEALED] - X[v, X_S, S_UNSEALED] < X[v, X_S, S_SEAL_CAP])


@njit(cache=True, _nrt=False)
def erode(ri, C, X, v):
    """Battle._erode against the victim v (D-31): doll, target, ward, cap, seal; then
    Battle._reserve: a hand rune takes the sealed cell (D-33)."""
    if X[v, X_S, S_DOLL] > 0:
        X[v, X_S, S_DOLL] -= 1
        return
    if X[v, X_S, S_TARGET_OK] == 0:
        # the outermost ring holding unsealed runes, the highest effective grade, the earliest
        geo = ri[RI_GEO]
        target = -1
        t_ring = 0
        t_g = 0
        for i in range(X[v, X_S, S_NOCC]):
            c = X[v, X_OCC, i]
            if C[v, c, C_SEALED]:
                continue
            r = ri[geo + c * GW + G_RING]
            g = C[v, c, C_EGRADE]
            if target < 0 or r > t_ring or (r == t_ring and g > t_g):
                target = c
                t_ring = r
                t_g = g
        X[v, X_S, S_TARGET] = target
        X[v, X_S, S_TARGET_OK] = 1
    target = X[v, X_S, S_TARGET]
    if target < 0:
        return
    if C[v, target, C_WARDS] > 0:
        C[v, target, C_WARDS] -= 1
        return
    if X[v, X_S, S_SEALED] - X[v, X_S, S_UNSEALED] >= X[v, X_S, S_SEAL_CAP]:
        return
    C[v, target, C_SEALED] = 1
    X[v, X_S, S_MASK] ^= 1 << C[v, target, C_OIDX]
    X[v, X_S, S_SEALED] += 1
    C[v, target, C_SERIAL] += 1
    X[v, X_S, S_DIRTY] = 1
    X[v, X_S, S_TARGET_OK] = 0
    if X[v, X_S, S_UNSEAL_MS] >= 0:
        q = X[v, X_S, S_NPEND]
        if q >= PEND_CAP:
            X[0, X_S, S_ERROR] = 1
        else:
            X[v, X_PT, q] = X[0, X_S, S_T] + X[v, X_S, S_UNSEAL_MS]
            X[v, X_PC, q] = target
            X[v, X_PS, q] = C[v, target, C_SERIAL]
            X[v, X_S, S_NPEND] = q + 1
    # the reserve: same kind (tree: any kind, same kind first), highest grade, lowest slot
    k = C[v, target, C_KIND]
    any_kind = X[v, X_S, S_ANY_KIND]
    best = -1
    best_same = False
    best_g = 0
    for i in range(X[v, X_S, S_NHAND]):
        if X[v, X_HU, i]:
            continue
        same = X[v, X_HK, i] == k
        if not (same or any_kind):
            continue
        g = X[v, X_HG, i]
        if best < 0 or (same and not best_same) or (same == best_same and g > best_g):
            best = i
            best_same = same
            best_g = g
    if best >= 0:
        X[v, X_HU, best] = 1
        bit = _cell_bit(target)
        if k == K_MIMIC and target < MASK_BITS:     # a shared bit may stand for other mimics
            X[v, X_S, S_MIMIC] &= ~bit
        C[v, target, C_KIND] = X[v, X_HK, best]
        if C[v, target, C_KIND] == K_MIMIC:
            X[v, X_S, S_MIMIC] |= bit
        C[v, target, C_GRADE] = best_g
        eg = best_g + C[v, target, C_BONUS]
        mg = ri[RI_G]
        C[v, target, C_EGRADE] = eg if eg < mg else mg
        C[v, target, C_SEALED] = 0
        X[v, X_S, S_MASK] ^= 1 << C[v, target, C_OIDX]
        X[v, X_S, S_EPOCH] += 1
        C[v, target, C_WARDS] = 0
        C[v, target, C_FROZEN] = 0
        C[v, target, C_DCOUNT] = 0
        C[v, target, C_SERIAL] += 1


# -- one cast -----------------------------------------------------------------------------------

@njit(cache=True, _nrt=False, inline='always')
def cast(ri, rf, C, CF, X, XF, s, cell, kind, power, grade, od):
    """Battle._cast with repeat 0, for the rune at `cell` (for a mimic's copy: the source's
    cell) with `kind`, `power`, `grade` and `od`, the overdrive multiplier at the battle's time:
    the acting flows of `cell` are copied into the snapshot, then the cast (steps 1-10 of E-3)
    runs once, and once more for each extra cast its flows give (a thundercloud's second cast is
    the same cast again). True if the battle is over.
    """
    o = 1 - s
    r = X[s, X_S, S_AROW]
    na = C[r, cell, A_ACTN]
    fl = ri[RI_FLOW]
    ffl = ri[RF_FLOW]
    n_cast = 1
    for j in range(na):
        X[s, X_SNAPF, j] = C[r, cell, A_ACTF + j]
        XF[s, XF_SNAPS, j] = CF[r, cell, AF_ACTS + j]
        n_cast += ri[fl + X[s, X_SNAPF, j] * FIW + FI_EXTRA]
    flow_x = XF[s, XF_S, SF_FLOW_X]
    t = X[0, X_S, S_T]
    kt = ri[RI_KIND] + kind * KW
    kf = ri[RF_KIND] + kind * KFW
    death = rf[F_DEATH]
    over = False
    for _rep in range(n_cast):
        if ri[kt + K_ATTACK]:
            factor = 1.0
            if X[s, X_S, S_DRIZZLE] > 0:
                X[s, X_S, S_DRIZZLE] -= 1
                factor = rf[F_DRIZZLE_X]
            for j in range(na):
                strip = rf[ffl + X[s, X_SNAPF, j] * FFW + FF_STRIP]
                if strip > 0 and XF[o, XF_S, SF_BARRIER] > 0:
                    removed = XF[o, XF_S, SF_BARRIER] * strip * XF[s, XF_SNAPS, j]
                    XF[o, XF_S, SF_BARRIER] -= removed
            wear = rf[kf + KF_WEAR]
            for _h in range(ri[kt + K_HITS]):
                # Battle._hit (_absorb, the check, then the reflection)
                damage = power * XF[s, XF_AFF, kind] * od * factor
                reflect = 0.0
                if XF[o, XF_S, SF_BARRIER] > 0:
                    if X[o, X_S, S_DIRTY]:
                        analyse(ri, rf, C, CF, X, XF, o)
                    reflect = XF[o, XF_S, SF_REFLECT]
                barrier = XF[o, XF_S, SF_BARRIER]
                if damage * wear >= barrier:
                    absorbed = barrier / wear
                    XF[o, XF_S, SF_BARRIER] = 0.0
                else:
                    absorbed = damage
                    XF[o, XF_S, SF_BARRIER] = barrier - damage * wear
                XF[o, XF_S, SF_HP] -= damage - absorbed
                if XF[o, XF_S, SF_HP] <= death:
                    X[0, X_S, S_OVER] = s
                    over = True
                    break
                if reflect > 0:
                    back = reflect * damage
                    barrier = XF[s, XF_S, SF_BARRIER]
                    if back * 1.0 >= barrier:
                        absorbed = barrier / 1.0
                        XF[s, XF_S, SF_BARRIER] = 0.0
                    else:
                        absorbed = back
                        XF[s, XF_S, SF_BARRIER] = barrier - back * 1.0
                    XF[s, XF_S, SF_HP] -= back - absorbed
                    if XF[s, XF_S, SF_HP] <= death:
                        X[0, X_S, S_OVER] = o
                        over = True
                        break
            if over:
                break
        if kind == K_WATER or kind == K_LIGHT:
            # Battle._heal
            overflow = False
            for j in range(na):
                if ri[fl + X[s, X_SNAPF, j] * FIW + FI_OVER]:
                    overflow = True
            amount = power
            if X[s, X_S, S_CURSE] > t:
                amount *= rf[F_CURSE_HEAL_X]
            hp = XF[s, XF_S, SF_HP] + amount
            max_hp = XF[s, XF_S, SF_MAXHP]
            over_hp = _max(0.0, hp - max_hp)
            XF[s, XF_S, SF_HP] = _min(hp, max_hp)
            if overflow and over_hp > 0:
                XF[s, XF_S, SF_BARRIER] += over_hp
            if kind == K_LIGHT:
                # Battle._light_unseal: the highest effective grade first, ties by casting order
                for _u in range(ri[ri[RI_UNS] + grade - 1]):
                    best = -1
                    best_g = 0
                    for i in range(X[s, X_S, S_NOCC]):
                        c = X[s, X_OCC, i]
                        if C[s, c, C_SEALED] and (best < 0 or C[s, c, C_EGRADE] > best_g):
                            best = c
                            best_g = C[s, c, C_EGRADE]
                    if best < 0:
                        break
                    # Battle._unseal
                    C[s, best, C_SEALED] = 0
                    X[s, X_S, S_MASK] ^= 1 << C[s, best, C_OIDX]
                    X[s, X_S, S_UNSEALED] += 1
                    X[s, X_S, S_DIRTY] = 1
                    X[s, X_S, S_TARGET_OK] = 0
        elif kind == K_EARTH:
            XF[s, XF_S, SF_BARRIER] += power
        # the curse: the longer of the rune's own and its flows', x every curse-duration flow
        curse_s = rf[kf + KF_CURSE]
        for j in range(na):
            curse_s = _max(curse_s, rf[ffl + X[s, X_SNAPF, j] * FFW + FF_CURSE])
        if curse_s > 0:
            x = 1.0
            for j in range(na):
                x *= 1.0 + (rf[ffl + X[s, X_SNAPF, j] * FFW + FF_CDX] - 1.0) * XF[s, XF_SNAPS, j] \
                    * flow_x
            until = t + _ms(curse_s * x)
            if until > X[o, X_S, S_CURSE]:
                X[o, X_S, S_CURSE] = until
        if kind == K_ICE:
            # Battle._freeze: the opponent's strongest turn rune, neither sealed nor frozen
            x = 1.0
            for j in range(na):
                x *= 1.0 + (rf[ffl + X[s, X_SNAPF, j] * FFW + FF_FDX] - 1.0) * XF[s, XF_SNAPS, j] \
                    * flow_x
            duration = _ms(rf[kf + KF_FREEZE] * x)
            # D-52: no freeze while max_frozen of the opponent's cells are frozen, sealed or not
            # (only turn cells are ever frozen; a reserve's cell is thawed)
            limit = ri[RI_MAX_FROZEN]
            n_frozen = 0
            if limit > 0:
                for i in range(X[o, X_S, S_NTURN]):
                    if C[o, X[o, X_TURN, i], C_FROZEN] > t:
                        n_frozen += 1
            if limit == 0 or n_frozen < limit:
                if X[o, X_S, S_DIRTY]:
                    analyse(ri, rf, C, CF, X, XF, o)
                tol = rf[F_STRONG_TOL]
                ro = X[o, X_S, S_AROW]
                victim = -1
                best_p = 0.0
                for i in range(X[o, X_S, S_NTURN]):
                    c = X[o, X_TURN, i]
                    if _casts(C, o, c) and C[o, c, C_FROZEN] <= t:
                        p = CF[ro, c, AF_POWER]
                        if victim < 0:
                            victim = c
                            best_p = p
                        elif p > best_p and abs(p - best_p) > tol * _max(abs(p), abs(best_p)):
                            victim = c
                            best_p = p
                if victim >= 0:
                    C[o, victim, C_FROZEN] = t + duration
        for j in range(na):
            for _e in range(ri[fl + X[s, X_SNAPF, j] * FIW + FI_EROS]):
                if _erodes(C, X, o):
                    erode(ri, C, X, o)
        for j in range(na):
            storm = rf[ffl + X[s, X_SNAPF, j] * FFW + FF_STORM]
            if storm > 0 and X[o, X_S, S_NEXT] >= 0:
                delay = _min(_ms(storm * XF[s, XF_SNAPS, j]), X[o, X_S, S_BUDGET])
                if delay > 0:
                    X[o, X_S, S_BUDGET] -= delay
                    X[o, X_S, S_NEXT] += delay
        for j in range(na):
            dz = ri[fl + X[s, X_SNAPF, j] * FIW + FI_DRIZ]
            if dz > 0:
                X[o, X_S, S_DRIZZLE] = _min(ri[RI_DRIZZLE_MAX], X[o, X_S, S_DRIZZLE] + dz)
    return over


# -- the battle ---------------------------------------------------------------------------------

@njit(cache=True, _nrt=False)
def play(ri, rf, C, CF, X, XF, enc, off0, off1, hp0, hp1):
    """Battle.__init__ + Battle.run. Returns (winner or -1, time in ms, knockout, error)."""
    geo = ri[RI_GEO]
    X[0, X_S, S_T] = 0
    X[0, X_S, S_OVER] = NOT_OVER
    X[0, X_S, S_ERROR] = 0
    for s in range(2):
        if not setup_side(ri, rf, C, X, XF, s, enc, off0 if s == 0 else off1,
                          hp0 if s == 0 else hp1):
            X[0, X_S, S_ERROR] = 2
            return NOT_OVER, 0, False, 2
    for s in range(2):
        affinity(ri, rf, C, X, XF, s, enc)
    duration = _ms(rf[F_DURATION_S])
    tol = rf[F_STRONG_TOL]
    period = ri[RI_DELAY_PERIOD]
    cx = ri[RF_CX]
    odt = ri[RF_OD]
    over = False
    while True:
        # Battle._next_time: the earliest turn or scheduled unseal
        t = -1
        for s in range(2):
            nt = X[s, X_S, S_NEXT]
            if nt >= 0 and (t < 0 or nt < t):
                t = nt
            for i in range(X[s, X_S, S_NPEND]):
                pt = X[s, X_PT, i]
                if t < 0 or pt < t:
                    t = pt
        if t < 0 or t > duration:
            break
        X[0, X_S, S_T] = t
        # overdrive_multiplier at t, for every hit at t: from the table of compile_rules
        # (t // 1000 is floor(t / 1000) exactly, without a division's latency)
        od = rf[odt + t // 1000]
        # Battle._end_effects (no trace): due warding-seal unseals in (t, cell, serial) order,
        # each acting only if its seal is still the cell's newest
        for s in range(2):
            q = X[s, X_S, S_NPEND]
            if q == 0:
                continue
            nd = 0
            for i in range(q):
                if X[s, X_PT, i] <= t:
                    X[s, X_DUE, nd] = i
                    nd += 1
            if nd == 0:
                continue
            for i in range(1, nd):
                v = X[s, X_DUE, i]
                j = i - 1
                while j >= 0:
                    u = X[s, X_DUE, j]
                    if X[s, X_PT, u] != X[s, X_PT, v]:
                        after = X[s, X_PT, u] > X[s, X_PT, v]
                    elif X[s, X_PC, u] != X[s, X_PC, v]:
                        after = X[s, X_PC, u] > X[s, X_PC, v]
                    else:
                        after = X[s, X_PS, u] > X[s, X_PS, v]
                    if not after:
                        break
                    X[s, X_DUE, j + 1] = u
                    j -= 1
                X[s, X_DUE, j + 1] = v
            for i in range(nd):
                e = X[s, X_DUE, i]
                c = X[s, X_PC, e]
                if C[s, c, C_SEALED] and C[s, c, C_SERIAL] == X[s, X_PS, e]:
                    C[s, c, C_SEALED] = 0          # Battle._unseal
                    X[s, X_S, S_MASK] ^= 1 << C[s, c, C_OIDX]
                    X[s, X_S, S_UNSEALED] += 1
                    X[s, X_S, S_DIRTY] = 1
                    X[s, X_S, S_TARGET_OK] = 0
            keep = 0
            for i in range(q):
                if X[s, X_PT, i] > t:
                    X[s, X_PT, keep] = X[s, X_PT, i]
                    X[s, X_PC, keep] = X[s, X_PC, i]
                    X[s, X_PS, keep] = X[s, X_PS, i]
                    keep += 1
            X[s, X_S, S_NPEND] = keep
        for s in range(2):
            if X[s, X_S, S_NEXT] != t:
                continue
            # Battle._turn
            pos = X[s, X_S, S_TURN_POS]
            if pos < X[s, X_S, S_NTURN]:
                # Battle._rune_turn
                cell = X[s, X_TURN, pos]
                X[s, X_S, S_TURNS] += 1
                k = C[s, cell, C_KIND]
                can = (k >= 0 and k < NC and C[s, cell, C_SEALED] == 0
                       and C[s, cell, C_FROZEN] <= t)
            else:
                # D-50: a rest turn, after the turn cells: it casts nothing
                X[s, X_S, S_RESTS] += 1
                cell = X[s, X_TURN, 0]
                k = -1
                can = False
            if can:
                if X[s, X_S, S_DIRTY] and not _recall(X, XF, s):
                    analyse(ri, rf, C, CF, X, XF, s)
                if C[X[s, X_S, S_AROW], cell, A_DELAYED]:
                    # D-18: affected turns alternate skip, cast
                    C[s, cell, C_DCOUNT] += 1
                    if C[s, cell, C_DCOUNT] % period != 0:
                        can = False
            if can:
                X[s, X_S, S_CASTS] += 1
                # the cast, then Battle._mimic_copies: each unsealed mimic outward of the cell (in
                # casting order) whose strongest unsealed inward casting rune is this one copies
                # it; one loop, one call site of cast (the mimics are looked for only if a cell
                # outward holds one: S_MIMIC & G_OUTM)
                power = CF[X[s, X_S, S_AROW], cell, AF_POWER]
                gs = geo + cell * GW
                jm = 0
                while True:
                    if cast(ri, rf, C, CF, X, XF, s, cell, k, power, C[s, cell, C_EGRADE], od):
                        over = True
                        break
                    found = False
                    while X[s, X_S, S_MIMIC] & ri[gs + G_OUTM] and jm < ri[gs + G_OUTN]:
                        m = ri[gs + G_OUT + jm]
                        jm += 1
                        if C[s, m, C_KIND] != K_MIMIC or C[s, m, C_SEALED]:
                            continue
                        if X[s, X_S, S_DIRTY]:
                            analyse(ri, rf, C, CF, X, XF, s)
                        r = X[s, X_S, S_AROW]
                        gm = geo + m * GW
                        src = -1
                        best_p = 0.0
                        for j in range(ri[gm + G_INN]):
                            c = ri[gm + G_IN + j]
                            if _casts(C, s, c):
                                p = CF[r, c, AF_POWER]
                                if src < 0:
                                    src = c
                                    best_p = p
                                elif p > best_p and abs(p - best_p) > tol * _max(abs(p),
                                                                                 abs(best_p)):
                                    src = c
                                    best_p = p
                        if src == cell:
                            power = CF[r, cell, AF_POWER] * rf[cx + C[s, m, C_EGRADE] - 1]
                            k = C[s, cell, C_KIND]
                            found = True
                            break
                    if not found:
                        break
                if over:
                    break
            X[s, X_S, S_TURN_POS] += 1
            X[s, X_S, S_NEXT] = t + X[s, X_S, S_INTERVAL]
            if X[s, X_S, S_TURN_POS] == X[s, X_S, S_CYCLE]:
                # the end of the cycle (after its rest turns): the storm budget refills, the
                # erosions
                X[s, X_S, S_TURN_POS] = 0
                X[s, X_S, S_BUDGET] = X[s, X_S, S_BUDGET_MAX]
                for _ in range(X[s, X_S, S_EROSIONS]):
                    if _erodes(C, X, 1 - s):
                        erode(ri, C, X, 1 - s)
        if over or X[0, X_S, S_ERROR]:
            break
    if over:
        return X[0, X_S, S_OVER], t, True, X[0, X_S, S_ERROR]
    # Battle._judge_timeout
    r0 = XF[0, XF_S, SF_HP] / XF[0, XF_S, SF_MAXHP]
    r1 = XF[1, XF_S, SF_HP] / XF[1, XF_S, SF_MAXHP]
    if abs(r0 - r1) <= rf[F_DRAW_TOL]:
        w = -1
    elif r0 > r1:
        w = 0
    else:
        w = 1
    return w, duration, False, X[0, X_S, S_ERROR]


@njit(cache=True, _nrt=False)
def play_into(ri, rf, C, CF, X, XF, enc, offs, maxhp, a, b, j, winner, time, hp, max_hp, casts,
              turns, seals, rests, knockout, status):
    """Play pair j (board records a and b) and write its results in row j."""
    w, t_ms, ko, err = play(ri, rf, C, CF, X, XF, enc, offs[a], offs[b], maxhp[a], maxhp[b])
    death = rf[F_DEATH]
    winner[j] = w
    time[j] = t_ms / 1000.0
    knockout[j] = ko
    status[j] = err
    for s in range(2):
        h = XF[s, XF_S, SF_HP]
        hp[j, s] = 0.0 if h <= death else h    # Battle._reported_hp
        max_hp[j, s] = XF[s, XF_S, SF_MAXHP]
        casts[j, s] = X[s, X_S, S_CASTS]
        turns[j, s] = X[s, X_S, S_TURNS]
        seals[j, s] = X[s, X_S, S_SEALED] - X[s, X_S, S_UNSEALED]
        rests[j, s] = X[s, X_S, S_RESTS]


@njit(cache=True, nogil=True)
def run_serial(ri, rf, enc, offs, maxhp, i0, i1, hand_cap, mods_cap, winner, time, hp, max_hp,
               casts, turns, seals, rests, knockout, status):
    """Play every pair (i0[j], i1[j]) into row j of the outputs, on this thread. Releases the GIL:
    `fast_battles` runs it on several threads at once, each on its own slice of the batch."""
    C, CF, X, XF = make_state_jit(ri, hand_cap, mods_cap)
    for j in range(i0.shape[0]):
        play_into(ri, rf, C, CF, X, XF, enc, offs, maxhp, i0[j], i1[j], j, winner, time, hp,
                  max_hp, casts, turns, seals, rests, knockout, status)


@njit(cache=True, nogil=True)
def board_analysis(ri, rf, C, CF, X, XF, enc, off, power, info):
    """`analysis.analyse` of the board record at `off` at battle start (no seals), for the
    observation encoder and the heuristic drafter. Per cell c: power[c] = the power of a casting
    rune, or -1.0; info[c] = (delayed, effective grade (0: empty), number of acting flows, the
    acting flows' ids in table order...). C, CF, X, XF are a worker state from `make_state`.
    Returns the side's interval in ms, or -1 if the record is out of range (a board that skipped
    validation: the caller then uses the reference)."""
    N = ri[RI_N]
    if not setup_side(ri, rf, C, X, XF, 0, enc, off, np.nan):
        return -1
    analyse(ri, rf, C, CF, X, XF, 0)
    r = X[0, X_S, S_AROW]
    for c in range(N):
        if C[0, c, C_KIND] < 0:
            power[c] = -1.0
            info[c, 0] = 0
            info[c, 1] = 0
            info[c, 2] = 0
            continue
        info[c, 1] = C[0, c, C_EGRADE]
        if _casts(C, 0, c):
            power[c] = CF[r, c, AF_POWER]
            info[c, 0] = C[r, c, A_DELAYED]
            na = C[r, c, A_ACTN]
            info[c, 2] = na
            for j in range(na):
                info[c, 3 + j] = C[r, c, A_ACTF + j]
        else:
            power[c] = -1.0
            info[c, 0] = 0
            info[c, 2] = 0
    return X[0, X_S, S_INTERVAL]


@njit(cache=True, nogil=True)
def board_features(ri, rf, C, CF, X, XF, enc, off, open_cells, out, width, col_grade, col_open,
                   col_art, col_power, max_grade, log_scale):
    """The observation's board part (rune_env/envs/observation.py) for the board record at
    `off`, written into `out` (float32, n_cells x width, zeroed by the caller): per cell the
    kind one-hot (kind id = column), grade / max_grade, open, the artifact one-hot from
    `col_art`, and min(1, log1p(power) / log_scale) for a casting rune, its power from `analyse`
    at battle start. The same arithmetic as the Python encoder, in one compiled call. Returns
    False if the record is out of range."""
    N = ri[RI_N]
    if not setup_side(ri, rf, C, X, XF, 0, enc, off, np.nan):
        return False
    analyse(ri, rf, C, CF, X, XF, 0)
    r = X[0, X_S, S_AROW]
    for c in range(N):
        out[c * width + col_open] = open_cells[c]
    nr = enc[off + 3]
    na = enc[off + 4]
    p_runes = off + HEADER
    for i in range(nr):
        c = enc[p_runes + 3 * i]
        out[c * width + enc[p_runes + 3 * i + 1]] = 1.0
        out[c * width + col_grade] = enc[p_runes + 3 * i + 2] / max_grade
        if _casts(C, 0, c):
            v = math.log1p(CF[r, c, AF_POWER]) / log_scale
            out[c * width + col_power] = 1.0 if v > 1.0 else v
    p_arts = p_runes + 3 * nr
    for i in range(na):
        out[enc[p_arts + 2 * i] * width + col_art + enc[p_arts + 2 * i + 1]] = 1.0
    return True


# -- The env's observation and legal mask (rune_env/envs/observation.py) ------------------------
# Here rather than in a module of the env layer because numba's disk cache is keyed by one
# file's text: a compiled function calling into another cached module would not see that
# module's changes. The Python definitions stay the readable ones: `Encoder.encode_flat` and
# `rune_env.run.loop.legal_mask`; tests compare this with both on every state of long random
# runs, bit for bit.

@njit(cache=True, inline='always')
def _clip01(v):
    return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


@njit(cache=True, inline='always')
def _slot_rows(mask, is_open, rec, p_items, stride, n_items, place, sell, n_slots):
    """loop._slot_rows: the (slot, cell) placing rows of the first `n_slots` slots, the open
    cells not taken by the record's items (cell first, `stride` ints each); and their sell ids."""
    N = is_open.shape[0]
    free = is_open.copy()
    for i in range(n_items):
        free[rec[p_items + stride * i]] = False
    for j in range(n_slots):
        for c in range(N):
            mask[place + j * N + c] = free[c]
        mask[sell + j] = True


@njit(cache=True, nogil=True)
def observe(ri, rf, C, CF, X, XF, rec, ot, of, hp_bonus, out, mask):
    """The observation (`out`, float32) and the legal mask (`mask`, bool) of a run state, from
    its step record `rec` (compile.py: the board record at 0, the run record after it). Every
    entry of both is written. Returns False if the board record is out of range."""
    N = ot[OT_NCELLS]
    nk = N_KINDS
    na = ot[OT_NA]
    width = ot[OT_WIDTH]
    out[:] = 0.0
    mask[:] = False
    # where the run record starts: after the board record's runes, artifacts and relics
    nr = rec[3]
    nart = rec[4]
    nrel = rec[7]
    p_runes = HEADER
    p_arts = p_runes + 3 * nr
    p_rel = p_arts + 2 * nart
    r0 = p_rel + nrel
    p = r0 + RS_HDR
    p_hand = p
    p += 2 * rec[r0 + RS_NHAND]
    p_shop_runes = p
    p += rec[r0 + RS_NSHOP_RUNES]
    p_shop_arts = p
    p += rec[r0 + RS_NSHOP_ARTS]
    p_inv = p
    p += rec[r0 + RS_NINV]
    p_open = p
    p += rec[r0 + RS_NOPEN]
    p_boss = p
    p += rec[r0 + RS_NBOSS]
    p_opts = p
    n_hand = rec[r0 + RS_NHAND]
    n_inv = rec[r0 + RS_NINV]
    n_open = rec[r0 + RS_NOPEN]
    n_opts = rec[r0 + RS_NOPTIONS]
    pending = rec[r0 + RS_PENDING]
    mana = rec[r0 + RS_MANA]
    max_grade = of[OF_MAX_GRADE]

    # the open cells (Python: open_cells)
    sec = ot[OT_SECTOR]
    is_open = np.zeros(N, np.bool_)
    for c in range(N):
        s = ot[sec + c]
        if s < 0:
            is_open[c] = True
        else:
            for i in range(n_open):
                if rec[p_open + i] == s:
                    is_open[c] = True
                    break

    # -- observation (Encoder.encode_flat, in its order) --
    if not board_features(ri, rf, C, CF, X, XF, rec, 0, is_open, out[ot[OT_BOARD]:], width,
                          ot[OT_COL_GRADE], ot[OT_COL_OPEN], ot[OT_COL_ART], ot[OT_COL_POWER],
                          max_grade, of[OF_LOG_SCALE]):
        return False
    base = ot[OT_HAND]
    hw = nk + 1
    for h in range(n_hand):
        out[base + h * hw + rec[p_hand + 2 * h]] = 1.0
        out[base + h * hw + nk] = rec[p_hand + 2 * h + 1] / max_grade
    base = ot[OT_SHOP]
    for i in range(rec[r0 + RS_NSHOP_RUNES]):
        k = rec[p_shop_runes + i]
        if k >= 0:
            out[base + i * nk + k] = 1.0
    base += rec[r0 + RS_NSHOP_RUNES] * nk
    for i in range(rec[r0 + RS_NSHOP_ARTS]):
        a = rec[p_shop_arts + i]
        if a >= 0:
            out[base + i * na + a] = 1.0
    base = ot[OT_INV]
    for i in range(n_inv):
        out[base + i * na + rec[p_inv + i]] = 1.0
    rnd = rec[r0 + RS_ROUND]
    cost = rec[r0 + RS_SECTOR_COST]
    nb = rec[r0 + RS_NEXT_BOSS]
    s0 = ot[OT_SCALARS]
    out[s0] = _clip01(mana / of[OF_MANA])
    out[s0 + 1] = _clip01(rnd / of[OF_ROUND_CAP])
    out[s0 + 2] = _clip01(rec[r0 + RS_LAMPS] / of[OF_LAMPS])
    out[s0 + 3] = _clip01(rec[r0 + RS_WINS] / of[OF_WINS])
    out[s0 + 4] = _clip01(rec[r0 + RS_LOSSES] / of[OF_ROUND_CAP])
    out[s0 + 5] = _clip01(rec[r0 + RS_DRAWS] / of[OF_ROUND_CAP])
    out[s0 + 6] = _clip01(rec[r0 + RS_HAND_SLOTS] / of[OF_HAND_MAX])
    out[s0 + 7] = _clip01(rec[r0 + RS_ART_SLOTS] / of[OF_ART_MAX])
    out[s0 + 8] = _clip01(cost / of[OF_COST_MAX]) if cost >= 0 else 1.0
    out[s0 + 9] = _clip01(rec[r0 + RS_PREP] / of[OF_ACTION_CAP])
    out[s0 + 10] = _clip01(hp_bonus)
    out[s0 + 11] = _clip01((nb - rnd) / of[OF_BOSS_EVERY]) if nb > 0 else 1.0
    out[s0 + 12] = _clip01(rec[r0 + RS_RANK] / of[OF_RANKS])
    core = rec[1]
    sun = rec[2]
    base = ot[OT_CORE]
    if core >= 0:
        out[base + core] = 1.0
    if sun >= 0:
        out[base + ot[OT_NCORES] + sun] = 1.0
    base = ot[OT_RELICS]
    for i in range(nrel):
        out[base + rec[p_rel + i] - ot[OT_RELIC_MOD0]] = 1.0
    base = ot[OT_BOSSES]
    for i in range(rec[r0 + RS_NBOSS]):
        out[base + rec[p_boss + i]] = 1.0
    if pending >= 0:
        base = ot[OT_PENDING]
        out[base + pending] = 1.0
        off = base + 3
        if pending == 0:
            for i in range(n_opts):
                out[off + rec[p_opts + i]] = 1.0
        off += ot[OT_NCORES]
        w = ot[OT_NCAT] + na
        if pending == 1:
            for i in range(n_opts):
                out[off + i * w + rec[p_opts + 2 * i]] = 1.0
                a = rec[p_opts + 2 * i + 1]
                if a >= 0:
                    out[off + i * w + ot[OT_NCAT] + a] = 1.0
        off += ot[OT_REWARD_CHOICES] * w
        if pending == 2:
            for i in range(n_opts):
                out[off + i * ot[OT_NRELICS] + rec[p_opts + i]] = 1.0

    # -- legal mask (rune_env.run.loop.legal_mask, in its order) --
    if rec[r0 + RS_OVER]:
        return True
    if pending >= 0:
        if pending == 0:
            for i in range(n_opts):
                mask[ot[OT_A_CORE] + rec[p_opts + i]] = True
        else:
            n_ids = ot[OT_N_REWARD_IDS] if pending == 1 else ot[OT_N_RELIC_IDS]
            start = ot[OT_A_REWARD] if pending == 1 else ot[OT_A_RELIC]
            for i in range(n_ids if n_ids < n_opts else n_opts):
                mask[start + i] = True
        return True
    mask[ot[OT_A_READY]] = True
    if core >= 0 and ot[ot[OT_FLOWING] + core]:
        for e in range(N_CASTING):
            if e != sun:
                mask[ot[OT_A_SUN] + e] = True
    if n_hand < rec[r0 + RS_HAND_SLOTS]:
        start = ot[OT_A_BUY_RUNE]
        for i in range(rec[r0 + RS_NSHOP_RUNES]):
            k = rec[p_shop_runes + i]
            if k >= 0 and mana >= ot[ot[OT_PRICE] + k]:
                mask[start + i] = True
        start = ot[OT_A_PICK_UP]
        for i in range(nr):
            mask[start + rec[p_runes + 3 * i]] = True
    if nart + n_inv < rec[r0 + RS_ART_SLOTS]:
        start = ot[OT_A_BUY_ART]
        for i in range(rec[r0 + RS_NSHOP_ARTS]):
            a = rec[p_shop_arts + i]
            if a >= 0 and mana >= ot[ot[OT_ART_PRICE] + a]:
                mask[start + i] = True
    if mana >= ot[OT_REROLL_COST]:
        mask[ot[OT_A_REROLL]] = True
    if n_hand > 0:
        # place (hand slot, cell): the open cells free of runes, for each held rune
        _slot_rows(mask, is_open, rec, p_runes, 3, nr, ot[OT_A_PLACE], ot[OT_A_SELL], n_hand)
    # D-11 merges: a rune merges when hand and board hold at least merge_count runes of its kind
    # and grade in all (itself included), below the highest grade
    if n_hand > 0 or nr > 0:
        need = ot[OT_MERGE_COUNT]
        top = ot[OT_MAX_GRADE]
        counts = np.zeros((nk, top + 1), np.int64)
        # (grades above the highest never merge: not counted, so never out of the table)
        for h in range(n_hand):
            g = rec[p_hand + 2 * h + 1]
            if 0 <= g <= top:
                counts[rec[p_hand + 2 * h], g] += 1
        for i in range(nr):
            g = rec[p_runes + 3 * i + 2]
            if 0 <= g <= top:
                counts[rec[p_runes + 3 * i + 1], g] += 1
        start = ot[OT_A_MERGE_HAND]
        for h in range(n_hand):
            k = rec[p_hand + 2 * h]
            g = rec[p_hand + 2 * h + 1]
            if g < top and counts[k, g] >= need:
                mask[start + h] = True
        start = ot[OT_A_MERGE_BOARD]
        for i in range(nr):
            k = rec[p_runes + 3 * i + 1]
            g = rec[p_runes + 3 * i + 2]
            if g < top and counts[k, g] >= need:
                mask[start + rec[p_runes + 3 * i]] = True
    if cost >= 0 and mana >= cost:
        start = ot[OT_A_OPEN]
        for s in range(ot[OT_N_SECTOR_IDS]):
            taken = False
            for i in range(n_open):
                if rec[p_open + i] == s:
                    taken = True
            if not taken:
                mask[start + s] = True
    if n_inv > 0:
        # place_artifact (inventory slot, cell): the open cells free of artifacts, each held one
        _slot_rows(mask, is_open, rec, p_arts, 2, nart, ot[OT_A_PLACE_ART], ot[OT_A_SELL_ART],
                   n_inv)
    start = ot[OT_A_PICK_UP_ART]
    for i in range(nart):
        mask[start + rec[p_arts + 2 * i]] = True
    return True
