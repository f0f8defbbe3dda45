"""The compiled battle loop: the reference engine (`rune_env/battle/engine.py`) step for step.

Every function mirrors the reference with the same order of operations, so that the floating
point comes out bit for bit the same (power factors multiplied in the D-12 order, flow
multipliers as `1 + (m - 1) * s * v`, milliseconds as `floor(x * 1000 + 0.5 + 1e-9)`):

    reference (engine.py / analysis.py)     here (and its inlined parts)
    SideSetup.of, Mods.of, _new_side        setup_side (_mods_of, _place_runes, _side_cells,
                                              _complete_orbits)
    affinity_multipliers                    affinity
    analyse (cached, dropped on a change)   analyse (S_DIRTY: recomputed at the next read;
                                              _resonance, _feeders, _power)
    _erode, _reserve                        erode (_reserve)
    Battle.run, _next_time, _end_effects,   play (_end_effects, _next_mimic; a turn's cast and
      _turn, _mimic_copies, _judge_timeout    the mimics' copies are play's cast loop)
    _cast with its extra casts, _hit,       play's cast loop (_snapshot, _attack, _absorb, _heal,
      _absorb, _heal, _light_unseal,          _light_unseal, _unseal, _curse, _duration_x,
      _unseal, _curse, _freeze, _strongest    _freeze, _stronger, _flow_effects)

Rules come as two flat arrays, `rules_i` and `rules_f`, and boards as records in one int32
array. The state of a battle is four arrays, `cells`, `cells_f`, `sides` and `sides_f`,
preallocated once per worker thread (`make_state`) and reused for every battle it plays (no
allocation, no Python object in the loop). compile.py describes the layout of all of them.

A knockout sets S_WINNER and the code returns at once (the reference raises `BattleOver`). The
analysis is recomputed only when a seal, an unseal or a reserve changed the side's board
(S_DIRTY), at the next read, like the reference's cached `Analysis`; as seals and unseals often go
back and forth, the last MEMO analyses of each side stay in their rows, keyed by the sealed runes
and the count of reserves, and a hit makes its row the current one again (S_ANALYSIS). The
erosion target is cached the same way (S_TARGET_OK). A cast first copies its rune's acting flows
into a snapshot: a light's unseal in the middle of the cast may recompute the analysis, and the
rest of the cast must still use the old flows. The occupied cells never change in a battle (a
reserve only replaces the occupant), so the analysis and the erosion walk only those.

Speed and compile time shape the code (docs/PERFORMANCE.md has the measurements). The loop's
functions are compiled without reference counting (`_nrt=False`: they allocate nothing), else a
call would incref and decref every array argument. A call between compiled functions stays a
call, passing every array as about a dozen words, and numba links and re-optimizes every callee
into each caller (the cold compile time grows with the call tree): so the parts of `setup_side`,
`analyse`, `erode` and `play` are helpers numba inlines (`inline='always'`) at their one call
site (a cast's parts too: the turn's cast and the mimics' copies are one loop of `play`), and so
are the small helpers (`_ms`, `_max`, ... in place of numba's `int`, `max` and `min`, which
are calls; `_erodes`, which spares most erosions' calls; `_recall`, the memo lookup, at the
turn's read of the analysis). numba's front end runs again on every inlined callee, its own
inlined callees included, so the cold compile grows with the depth of the inlining: no more than
two levels under `play`. `erode` and `analyse` stay calls (inlined where they are called they
would cost much cold compile for a few percent). Integer literals are never passed to a
compiled function (one version per literal). What the rules fix is looked up (compile.py), and
cell masks skip loops that would find nothing (a side's mimics against a cell's outward cells,
the occupied cells against each resonance orbit).

Besides battles, `board_analysis` analyses a board at battle start (powers, delays, effective
grades, acting flows, interval) for the callers that value boards.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .compile import *  # noqa: F403 (the layouts' constants: compile.py's upper-case names)

# kind ids (fixed by the code: rules.config.KINDS); kinds 0..N_CASTING-1 cast
WATER, EARTH, LIGHT, ICE, AMPLIFY, RESONATOR, DELAY, NODE, MIMIC = (KIND_ID[k] for k in (
    "water", "earth", "light", "ice", "amplify", "resonator", "delay", "node", "mimic"))

NOT_OVER = -1
UNSEAL_CAP = 256   # warding-seal unseals scheduled at once on one side
# a battle's S_STATUS: 0 played; 1 more unseals scheduled than UNSEAL_CAP; 2 a board record out
# of range. Not 0: `fast_battles` replays that battle with the reference engine.


@njit(cache=True)
def compiled_signature():
    """compile.KERNEL_SIGNATURE as compiled in (a stale cache's is old: `fast.fresh_module`)."""
    return KERNEL_SIGNATURE


def make_state(rules_i, hand_cap, mods_cap):
    """The four state arrays of one worker (see the module docstring)."""
    n = rules_i[RI_N_CELLS]
    n_flows = rules_i[RI_N_FLOWS]
    width = max(N_S, mods_cap, hand_cap, UNSEAL_CAP, n, n_flows, rules_i[RI_N_ORBITS], MEMO, 8)
    width_f = max(N_SF, N_KINDS, rules_i[RI_N_PATTERNS], n_flows, MEMO, 1)
    cells = np.zeros((2 + 2 * MEMO, n, max(CELL_WIDTH, AN_FLOWS + n_flows)), np.int64)
    cells_f = np.zeros((2 + 2 * MEMO, n, max(CELLF_WIDTH, ANF_STRENGTHS + n_flows)), np.float64)
    sides = np.zeros((2, N_ROWS, width), np.int64)
    sides_f = np.zeros((2, N_ROWS_F, width_f), np.float64)
    return cells, cells_f, sides, sides_f


make_state_jit = njit(cache=True)(make_state)


# Small helpers, inlined: numba's `int`, `min` and `max` are calls to functions compiled apart,
# each costing more than the comparison (numba's math.floor of a float is already an int64).

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

@njit(cache=True, _nrt=False, inline='always')
def _mods_of(rules_i, rules_f, sides, sides_f, s, enc, off, max_hp_before_mods):
    """Mods.of for side s: its modifiers (core, boss rules, relics) into ROW_MODS, combined in
    that order into the side's scalars (interval, max HP, erosions, unseal delay, factors).
    Returns (outermost wards, loose resonance, resonance add, seal-cap divisor)."""
    xs = sides[s, ROW_SCALARS]
    xf = sides_f[s, ROWF_SCALARS]
    core = enc[off + REC_CORE]
    # the boss rules' then the relics' ids, one after the other at the record's end
    p_boss = (off + REC_HEADER + 3 * enc[off + REC_N_RUNES] + 2 * enc[off + REC_N_ARTS]
              + 2 * enc[off + REC_N_HAND])
    mods = sides[s, ROW_MODS]
    nm = 0
    if core >= 0:
        mods[nm] = core
        nm += 1
    for i in range(enc[off + REC_N_BOSSES] + enc[off + REC_N_RELICS]):
        mods[nm] = enc[p_boss + i]
        nm += 1
    interval_x = hp_x = amp_x = flow_x = 1.0
    extra = out_wards = 0
    loose = any_kind = False
    res_add = cfs = 0.0
    divisor = -1
    unseal_s = -1.0
    mi0 = rules_i[AT_MODS]
    mf0 = rules_i[AT_MODS_F]
    for j in range(nm):
        mi = mi0 + mods[j] * MOD_WIDTH
        mf = mf0 + mods[j] * MODF_WIDTH
        interval_x *= rules_f[mf + MODF_INTERVAL_X]
        hp_x *= rules_f[mf + MODF_HP_X]
        amp_x *= rules_f[mf + MODF_AMPLIFY_X]
        flow_x *= rules_f[mf + MODF_FLOW_X]
        extra += rules_i[mi + MOD_EROSIONS]
        out_wards += rules_i[mi + MOD_OUTER_WARDS]
        loose = loose or rules_i[mi + MOD_LOOSE] != 0
        any_kind = any_kind or rules_i[mi + MOD_ANY_KIND] != 0
        res_add += rules_f[mf + MODF_RESONANCE_ADD]
        d = rules_i[mi + MOD_SEAL_DIVISOR]
        if d >= 0 and d > divisor:
            divisor = d
        if rules_f[mf + MODF_CORE_FLOW] > cfs:
            cfs = rules_f[mf + MODF_CORE_FLOW]
        u = rules_f[mf + MODF_UNSEAL_S]
        if u >= 0.0 and (unseal_s < 0.0 or u < unseal_s):
            unseal_s = u
    if divisor < 0:
        divisor = rules_i[RI_SEAL_DIVISOR]
    max_hp = max_hp_before_mods * hp_x
    xs[S_N_MODS] = nm
    # at least 1 ms by construction, as SideSetup.of: every turn moves the clock on
    xs[S_INTERVAL] = max(1, _ms(rules_f[F_BASE_INTERVAL_S] * interval_x))
    xs[S_EROSIONS] = rules_i[RI_EROSIONS] + extra
    xs[S_UNSEAL_MS] = _ms(unseal_s) if unseal_s >= 0.0 else -1
    xs[S_ANY_KIND] = 1 if any_kind else 0
    xf[SF_MAX_HP] = max_hp
    xf[SF_HP] = max_hp
    xf[SF_AMP_X] = amp_x
    xf[SF_FLOW_X] = flow_x
    xf[SF_CORE_FLOW] = cfs
    return out_wards, loose, res_add, divisor


@njit(cache=True, _nrt=False, inline='always')
def _place_runes(rules_i, cells, sides, s, enc, off):
    """The record's runes and artifacts on side s's cells. Returns (the occupied cells' mask,
    the outermost ring of a rune or -1 for a cell or grade out of range, the doll's uses)."""
    n = rules_i[RI_N_CELLS]
    geo = rules_i[AT_GEOMETRY]
    cs = cells[s]
    live = sides[s, ROW_LIVE]
    for c in range(n):
        # read for every cell (the others are read for occupied cells only, set below)
        cs[c, CELL_KIND] = -1
        live[c] = -1
    outer = 0
    max_grade = rules_i[RI_MAX_GRADE]
    occ = 0      # the occupied cells (a mask, see MASK_BITS)
    nr = enc[off + REC_N_RUNES]
    p_runes = off + REC_HEADER
    for i in range(nr):
        c = enc[p_runes + 3 * i]
        g = enc[p_runes + 3 * i + 2]
        if c < 0 or c >= n or g < 1 or g > max_grade:
            return 0, -1, 0
        occ |= _cell_bit(c)
        cs[c, CELL_KIND] = enc[p_runes + 3 * i + 1]
        live[c] = cs[c, CELL_KIND]     # nothing is sealed yet
        cs[c, CELL_GRADE] = enc[p_runes + 3 * i + 2]
        for col in range(CELL_BONUS, CELL_DELAY_COUNT + 1):     # bonus .. delay counter: 0
            cs[c, col] = 0
        r = rules_i[geo + c * GEO_WIDTH + GEO_RING]
        if r > outer:
            outer = r
    doll = 0
    a0 = rules_i[AT_ARTS]
    p_arts = p_runes + 3 * nr
    for i in range(enc[off + REC_N_ARTS]):
        cell = enc[p_arts + 2 * i]
        if cell < 0 or cell >= n:
            return 0, -1, 0
        a = a0 + enc[p_arts + 2 * i + 1] * ART_WIDTH
        doll += rules_i[a + ART_ABSORBS]
        g = geo + cell * GEO_WIDTH
        for j in range(-1, rules_i[g + GEO_N_NEIGHBOURS]):
            c = cell if j < 0 else rules_i[g + GEO_NEIGHBOURS + j]
            if rules_i[a + ART_GRADE_BONUS] > cs[c, CELL_BONUS]:
                cs[c, CELL_BONUS] = rules_i[a + ART_GRADE_BONUS]
            if cs[c, CELL_KIND] >= 0:
                cs[c, CELL_WARDS] += rules_i[a + ART_WARDS]
    return occ, outer, doll


@njit(cache=True, _nrt=False, inline='always')
def _side_cells(rules_i, cells, sides, s, outer, out_wards):
    """Per occupied cell of side s, in casting order: the effective grade, the outermost ring's
    wards; the turn cells, the occupied cells (with each one's index) and the mimics' mask."""
    geo = rules_i[AT_GEOMETRY]
    max_grade = rules_i[RI_MAX_GRADE]
    cs = cells[s]
    nturn = nocc = mimics = 0
    for c in range(rules_i[RI_N_CELLS]):
        k = cs[c, CELL_KIND]
        if k < 0:
            continue
        g = cs[c, CELL_GRADE] + cs[c, CELL_BONUS]
        cs[c, CELL_EGRADE] = g if g < max_grade else max_grade
        if rules_i[geo + c * GEO_WIDTH + GEO_RING] == outer:
            cs[c, CELL_WARDS] += out_wards
            if k == EARTH:
                cs[c, CELL_WARDS] += rules_i[RI_EARTH_WARDS]
        if k < N_CASTING:
            sides[s, ROW_TURN, nturn] = c
            nturn += 1
        if k == MIMIC:
            mimics |= _cell_bit(c)
        sides[s, ROW_OCCUPIED, nocc] = c
        cs[c, CELL_OCC_INDEX] = nocc
        nocc += 1
    sides[s, ROW_SCALARS, S_N_TURN] = nturn
    sides[s, ROW_SCALARS, S_N_OCC] = nocc
    sides[s, ROW_SCALARS, S_MIMICS] = mimics


@njit(cache=True, _nrt=False, inline='always')
def _complete_orbits(rules_i, rules_f, sides, sides_f, s, occ, loose, res_add):
    """The resonance orbits that could ever complete (every cell occupied: a battle never
    empties or fills a cell), and each pattern's multiplier for the side."""
    norb = 0
    orb = rules_i[AT_ORBITS]
    ow = 2 + rules_i[RI_ORBIT_LEN]
    orbm = rules_i[AT_ORBIT_MASKS]
    live = sides[s, ROW_LIVE]
    for o in range(rules_i[RI_N_ORBITS]):
        if rules_i[orbm + o] & ~occ:
            continue
        full = True
        for j in range(rules_i[orb + o * ow + ORBIT_LEN]):
            if live[rules_i[orb + o * ow + ORBIT_CELLS + j]] < 0:
                full = False
                break
        if full:
            sides[s, ROW_ORBITS, norb] = o
            norb += 1
    sides[s, ROW_SCALARS, S_N_ORBITS] = norb
    pn = rules_i[AT_PATTERN_X]
    pl = rules_i[AT_LOOSE_X]
    for p in range(rules_i[RI_N_PATTERNS]):
        sides_f[s, ROWF_RESONANCE_X, p] = (rules_f[pl + p] if loose else rules_f[pn + p]) + res_add


@njit(cache=True, _nrt=False)
def setup_side(rules_i, rules_f, cells, sides, sides_f, s, enc, off, max_hp_before_mods):
    """SideSetup.of + Mods.of + Battle._new_side for side s from its board record at `off`, with
    `max_hp_before_mods` the board's max HP before its modifiers' hp_x (`encode_pairs` gives it;
    NaN where nothing reads HP: the board analyses). False for a cell or grade out of range (an
    unvalidated board: left to the reference)."""
    xs = sides[s, ROW_SCALARS]
    for i in range(S_TIME):     # every scalar but side 0's clock and outcome (the last ones)
        xs[i] = 0
    out_wards, loose, res_add, divisor = _mods_of(rules_i, rules_f, sides, sides_f, s, enc, off,
                                                  max_hp_before_mods)
    occ, outer, doll = _place_runes(rules_i, cells, sides, s, enc, off)
    if outer < 0:
        return False
    _side_cells(rules_i, cells, sides, s, outer, out_wards)
    nr = enc[off + REC_N_RUNES]
    p_hand = off + REC_HEADER + 3 * nr + 2 * enc[off + REC_N_ARTS]
    nh = enc[off + REC_N_HAND]
    max_grade = rules_i[RI_MAX_GRADE]
    for i in range(nh):
        if enc[p_hand + 2 * i + 1] < 1 or enc[p_hand + 2 * i + 1] > max_grade:
            return False
        sides[s, ROW_HAND_KIND, i] = enc[p_hand + 2 * i]
        sides[s, ROW_HAND_GRADE, i] = enc[p_hand + 2 * i + 1]
        sides[s, ROW_HAND_USED, i] = 0
    _complete_orbits(rules_i, rules_f, sides, sides_f, s, occ, loose, res_add)
    nturn = xs[S_N_TURN]
    xs[S_DOLL_USES] = doll
    xs[S_SEAL_CAP] = _max(rules_i[RI_SEAL_CAP_MIN], nr // divisor)     # D-32 with D-51's floor
    xs[S_OUTER_RING] = outer
    xs[S_SUN] = enc[off + REC_SUN]
    xs[S_CYCLE_LEN] = _max(nturn, rules_i[RI_MIN_CYCLE]) if nturn > 0 else 0     # D-50
    xs[S_N_HAND] = nh
    xs[S_BUDGET_MAX] = _ms(rules_f[F_STORM_BUDGET_S])
    xs[S_BUDGET] = xs[S_BUDGET_MAX]
    xs[S_NEXT_TURN] = xs[S_INTERVAL] if nturn > 0 else -1
    xs[S_DIRTY] = 1
    xs[S_RECORD] = off
    xs[S_MEMO_ON] = 1 if xs[S_N_OCC] <= MEMO_OCC else 0
    xs[S_ANALYSIS] = 2 + s * MEMO
    sides_f[s, ROWF_SCALARS, SF_BARRIER] = 0.0
    sides_f[s, ROWF_SCALARS, SF_REFLECT] = 0.0
    return True


@njit(cache=True, _nrt=False)
def affinity(rules_i, rules_f, cells, sides, sides_f, s, enc):
    """affinity_multipliers: side s's factor per attack kind against the other side's board at
    battle start. The weights are summed in the order of the opponent's `Board.runes`."""
    o = 1 - s
    off = sides[o, ROW_SCALARS, S_RECORD]
    nr = enc[off + REC_N_RUNES]
    wts = sides_f[s, ROWF_WEIGHTS]
    for k in range(N_KINDS):
        wts[k] = 0.0
    gx = rules_i[AT_GRADE_X]
    total = 0.0
    for i in range(nr):
        c = enc[off + REC_HEADER + 3 * i]
        k = enc[off + REC_HEADER + 3 * i + 1]
        if k < N_CASTING:
            w = rules_f[gx + cells[o, c, CELL_EGRADE] - 1]
            wts[k] = wts[k] + w
            total += w
    for k in range(N_KINDS):
        kt = rules_i[AT_KINDS] + k * KIND_WIDTH
        if rules_i[kt + KIND_ATTACKS] == 0 or total <= 0:
            sides_f[s, ROWF_AFFINITY, k] = 1.0
            continue
        # the weights of the kinds k beats, and of those beating k, each in table order
        beaten = 0.0
        for j in range(rules_i[kt + KIND_BEATS]):
            beaten += wts[rules_i[kt + KIND_BEATS + 1 + j]]
        beating = 0.0
        for j in range(rules_i[kt + KIND_BEATEN_BY]):
            beating += wts[rules_i[kt + KIND_BEATEN_BY + 1 + j]]
        beaten = beaten / total
        beating = beating / total
        v = 1.0 + rules_f[F_AFF_SLOPE] * (beaten - beating)
        v = _max(rules_f[F_AFF_MIN], v)
        sides_f[s, ROWF_AFFINITY, k] = _min(rules_f[F_AFF_MAX], v)


# -- the analysis -------------------------------------------------------------------------------

@njit(cache=True, _nrt=False, inline='always')
def _casts(cells, s, c):
    """The rune at c is a live casting rune: it has a power (in `Analysis.powers`)."""
    k = cells[s, c, CELL_KIND]
    return k >= 0 and k < N_CASTING and cells[s, c, CELL_SEALED] == 0


@njit(cache=True, _nrt=False, inline='always')
def _stronger(best, p, best_p, tol):
    """Battle._strongest, one candidate: p beats the best so far (none yet: best < 0) beyond the
    tolerance; ties keep the earlier one."""
    return best < 0 or (p > best_p and abs(p - best_p) > tol * _max(abs(p), abs(best_p)))


@njit(cache=True, _nrt=False, inline='always')
def _feed(cells, cells_f, s, a, ka, c):
    """Live rune a (kind ka) flows into cell c (inward, or node-linked): a casting kind feeds c
    at strength 1, an amplify joins c's amplifiers."""
    if ka < N_CASTING:
        if 1.0 > cells_f[s, c, CELLF_FEED + ka]:
            cells_f[s, c, CELLF_FEED + ka] = 1.0
    elif ka == AMPLIFY:
        n = cells[s, c, CELL_N_AMPS]
        for q in range(n):
            if cells[s, c, CELL_AMPS + q] == a:
                return
        cells[s, c, CELL_AMPS + n] = a
        cells[s, c, CELL_N_AMPS] = n + 1


@njit(cache=True, _nrt=False, inline='always')
def _recall(sides, sides_f, s):
    """`analyse`'s memo: True if side s's analysis is remembered (its row made the current one)."""
    if sides[s, ROW_SCALARS, S_MEMO_ON] != 1:
        return False
    key = sides[s, ROW_SCALARS, S_SEALED_MASK]
    epoch = sides[s, ROW_SCALARS, S_EPOCH]
    for e in range(sides[s, ROW_SCALARS, S_MEMO_USED]):
        if sides[s, ROW_MEMO_KEY, e] == key and sides[s, ROW_MEMO_EPOCH, e] == epoch:
            sides[s, ROW_SCALARS, S_ANALYSIS] = 2 + s * MEMO + e
            sides_f[s, ROWF_SCALARS, SF_REFLECT] = sides_f[s, ROWF_MEMO_REFLECT, e]
            sides[s, ROW_SCALARS, S_DIRTY] = 0
            return True
    return False


@njit(cache=True, _nrt=False, inline='always')
def _resonance(rules_i, cells_f, sides, sides_f, s):
    """Each live rune's resonance: its orbit's cells hold live runes of one kind or resonators,
    one of the kind at least; the strongest complete pattern counts; resonators never grow."""
    orb = rules_i[AT_ORBITS]
    ow = 2 + rules_i[RI_ORBIT_LEN]
    for oi in range(sides[s, ROW_SCALARS, S_N_ORBITS]):
        base = orb + sides[s, ROW_ORBITS, oi] * ow
        n = rules_i[base + ORBIT_LEN]
        ok = True
        k1 = -1
        for j in range(n):
            k = sides[s, ROW_LIVE, rules_i[base + ORBIT_CELLS + j]]
            if k < 0:
                ok = False
                break
            if k != RESONATOR:
                if k1 < 0:
                    k1 = k
                elif k != k1:
                    ok = False
                    break
        if not ok or k1 < 0:
            continue
        mult = sides_f[s, ROWF_RESONANCE_X, rules_i[base + ORBIT_PATTERN]]
        for j in range(n):
            c = rules_i[base + ORBIT_CELLS + j]
            if sides[s, ROW_LIVE, c] != RESONATOR and mult > cells_f[s, c, CELLF_RESONANCE]:
                cells_f[s, c, CELLF_RESONANCE] = mult


@njit(cache=True, _nrt=False, inline='always')
def _feeders(rules_i, cells, cells_f, sides, sides_f, s):
    """Every live rune's feeders (the best strength per kind) and amplifiers (a set): its live
    inward runes, the sun core's flow into ring 1, a node's other live neighbours (D-19)."""
    geo = rules_i[AT_GEOMETRY]
    no = sides[s, ROW_SCALARS, S_N_OCC]
    sun = sides[s, ROW_SCALARS, S_SUN]
    cfs = sides_f[s, ROWF_SCALARS, SF_CORE_FLOW]
    has_node = False
    for i in range(no):
        c = sides[s, ROW_OCCUPIED, i]
        kc = sides[s, ROW_LIVE, c]
        if kc < 0:
            continue
        if kc == NODE:
            has_node = True
        g = geo + c * GEO_WIDTH
        for j in range(rules_i[g + GEO_N_INWARD]):
            a = rules_i[g + GEO_INWARD + j]
            ka = sides[s, ROW_LIVE, a]
            if ka >= 0:
                _feed(cells, cells_f, s, a, ka, c)
        if rules_i[g + GEO_RING] == 1 and cfs > 0 and sun >= 0:
            if cfs > cells_f[s, c, CELLF_FEED + sun]:
                cells_f[s, c, CELLF_FEED + sun] = cfs
    if not has_node:
        return
    for i in range(no):
        node = sides[s, ROW_OCCUPIED, i]
        if sides[s, ROW_LIVE, node] != NODE:
            continue
        g = geo + node * GEO_WIDTH
        nl = 0
        for j in range(rules_i[g + GEO_N_NEIGHBOURS]):
            c = rules_i[g + GEO_NEIGHBOURS + j]
            kc = sides[s, ROW_LIVE, c]
            if kc >= 0 and kc != NODE:
                sides[s, ROW_LINKED, nl] = c
                nl += 1
        for ia in range(nl):
            a = sides[s, ROW_LINKED, ia]
            ka = sides[s, ROW_LIVE, a]
            for ib in range(nl):
                if ia == ib:
                    continue
                _feed(cells, cells_f, s, a, ka, sides[s, ROW_LINKED, ib])


@njit(cache=True, _nrt=False, inline='always')
def _power(rules_i, rules_f, cells, cells_f, sides, s, r, c, k, flow_x, outer, nm):
    """D-12: the power of the live casting rune at c (kind k) into analysis row r, with its
    acting flows and the delay: base x grade x ring x flows (table order) x attunement x
    resonance x amplifies (casting order) x opposition x delay x core x boss rules x relics."""
    n_flows = rules_i[RI_N_FLOWS]
    kt = rules_i[AT_KINDS] + k * KIND_WIDTH
    into = rules_i[AT_INTO] + k * n_flows
    fl = rules_i[AT_FLOWS]
    ffl = rules_i[AT_FLOWS_F]
    g = rules_i[AT_GEOMETRY] + c * GEO_WIDTH
    ring = rules_i[g + GEO_RING]
    p = rules_f[rules_i[AT_KINDS_F] + k * KINDF_WIDTH + KINDF_BASE]
    p *= rules_f[rules_i[AT_GRADE_X] + cells[s, c, CELL_EGRADE] - 1]
    p *= rules_f[rules_i[AT_RING_X] + ring - 1]
    na = 0
    for j in range(rules_i[kt + KIND_N_INTO]):
        f = rules_i[into + j]
        strength = cells_f[s, c, CELLF_FEED + rules_i[fl + f * FLOW_WIDTH + FLOW_FROM]]
        if strength > 0:
            cells[r, c, AN_FLOWS + na] = f
            cells_f[r, c, ANF_STRENGTHS + na] = strength
            na += 1
            # analysis.flow_multiplier
            p *= 1.0 + (rules_f[ffl + f * FLOWF_WIDTH + FLOWF_MULT] - 1.0) * strength * flow_x
    cells[r, c, AN_N_FLOWS] = na
    if cells_f[s, c, CELLF_FEED + k] > 0:
        p *= 1.0 + (rules_f[F_ATTUNE] - 1.0) * cells_f[s, c, CELLF_FEED + k] * flow_x
    if cells_f[s, c, CELLF_RESONANCE] > 0.0:
        p *= cells_f[s, c, CELLF_RESONANCE]
    n_a = cells[s, c, CELL_N_AMPS]
    if n_a > 0:
        # the amplifies in casting order (insertion sort of a short list)
        for q in range(1, n_a):
            v = cells[s, c, CELL_AMPS + q]
            j = q - 1
            while j >= 0 and cells[s, c, CELL_AMPS + j] > v:
                cells[s, c, CELL_AMPS + j + 1] = cells[s, c, CELL_AMPS + j]
                j -= 1
            cells[s, c, CELL_AMPS + j + 1] = v
        # D-54: over the cap (F_AMP_CAP > 0), the cap once; else factor by factor
        # (analysis._amplify_over_cap: the product in the same order)
        cap = rules_f[F_AMP_CAP]
        product = 1.0
        if cap > 0.0:
            for q in range(n_a):
                product *= cells_f[s, cells[s, c, CELL_AMPS + q], CELLF_AMP_FACTOR]
        if cap > 0.0 and product > cap:
            p *= cap
        else:
            for q in range(n_a):
                p *= cells_f[s, cells[s, c, CELL_AMPS + q], CELLF_AMP_FACTOR]
    # a live opposite kind next to it, a live delay inward, without a branch per neighbour (a
    # neighbour's live kind km, -1 if none, is bit km + 1 of the opposites' mask, bit 0 is 0)
    opp = 0
    oppm = rules_i[kt + KIND_OPPOSITES]
    for j in range(rules_i[g + GEO_N_NEIGHBOURS]):
        opp |= oppm >> (sides[s, ROW_LIVE, rules_i[g + GEO_NEIGHBOURS + j]] + 1)
    if opp & 1:
        p *= rules_f[F_OPP_MULT]
    dl = 0
    for j in range(rules_i[g + GEO_N_INWARD]):
        dl |= sides[s, ROW_LIVE, rules_i[g + GEO_INWARD + j]] == DELAY
    cells[r, c, AN_DELAYED] = dl
    if dl:
        p *= rules_f[F_DELAY_X]
    isout = 1 if ring == outer else 0
    mf0 = rules_i[AT_MODS_F]
    for j in range(nm):
        p *= rules_f[mf0 + sides[s, ROW_MODS, j] * MODF_WIDTH + MODF_POWER_X + 2 * k + isout]
    cells_f[r, c, ANF_POWER] = p


@njit(cache=True, _nrt=False)
def analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, s):
    """analysis.analyse for side s: powers, acting flows, delay, amplify factors, reflect share,
    into analysis row S_ANALYSIS (AN_* / ANF_* columns) and SF_REFLECT. Only occupied cells are
    visited (in casting order); a row holds the live casting runes'."""
    no = sides[s, ROW_SCALARS, S_N_OCC]
    memo = sides[s, ROW_SCALARS, S_MEMO_ON] == 1
    e = 0     # without the memo: always entry 0
    if memo:
        # keyed by the sealed runes (S_SEALED_MASK) and the reserves (S_EPOCH); a miss computes
        # into the oldest row, which may be the current one (a cast keeps its own copy)
        if _recall(sides, sides_f, s):
            return
        e = sides[s, ROW_SCALARS, S_MEMO_NEXT]
        sides[s, ROW_SCALARS, S_MEMO_NEXT] = (e + 1) % MEMO
        if sides[s, ROW_SCALARS, S_MEMO_USED] < MEMO:
            sides[s, ROW_SCALARS, S_MEMO_USED] += 1
        sides[s, ROW_MEMO_KEY, e] = sides[s, ROW_SCALARS, S_SEALED_MASK]
        sides[s, ROW_MEMO_EPOCH, e] = sides[s, ROW_SCALARS, S_EPOCH]
    r = 2 + s * MEMO + e
    sides[s, ROW_SCALARS, S_ANALYSIS] = r
    for i in range(no):
        c = sides[s, ROW_OCCUPIED, i]
        # the live runes' kinds, in one dense row: the loops below read them for every
        # neighbour (the empty cells stay -1 from setup_side)
        sides[s, ROW_LIVE, c] = cells[s, c, CELL_KIND] if cells[s, c, CELL_SEALED] == 0 else -1
        cells_f[s, c, CELLF_RESONANCE] = 0.0
        cells[s, c, CELL_N_AMPS] = 0
        for k in range(N_CASTING):
            cells_f[s, c, CELLF_FEED + k] = 0.0
    _resonance(rules_i, cells_f, sides, sides_f, s)
    _feeders(rules_i, cells, cells_f, sides, sides_f, s)
    gx = rules_i[AT_GRADE_X]
    amp_x = sides_f[s, ROWF_SCALARS, SF_AMP_X]
    for i in range(no):
        c = sides[s, ROW_OCCUPIED, i]
        if sides[s, ROW_LIVE, c] == AMPLIFY:
            res = cells_f[s, c, CELLF_RESONANCE] if cells_f[s, c, CELLF_RESONANCE] > 0.0 else 1.0
            cells_f[s, c, CELLF_AMP_FACTOR] = (1.0 + rules_f[F_AMP_INC]
                                               * rules_f[gx + cells[s, c, CELL_EGRADE] - 1]
                                               * res * amp_x)
    flow_x = sides_f[s, ROWF_SCALARS, SF_FLOW_X]
    outer = sides[s, ROW_SCALARS, S_OUTER_RING]
    nm = sides[s, ROW_SCALARS, S_N_MODS]
    ffl = rules_i[AT_FLOWS_F]
    reflect = 0.0
    for i in range(no):
        c = sides[s, ROW_OCCUPIED, i]
        k = sides[s, ROW_LIVE, c]
        if k < 0 or k >= N_CASTING:
            continue
        _power(rules_i, rules_f, cells, cells_f, sides, s, r, c, k, flow_x, outer, nm)
        for j in range(cells[r, c, AN_N_FLOWS]):
            reflect += (rules_f[ffl + cells[r, c, AN_FLOWS + j] * FLOWF_WIDTH + FLOWF_REFLECT]
                        * cells_f[r, c, ANF_STRENGTHS + j])
    sides_f[s, ROWF_SCALARS, SF_REFLECT] = _min(reflect, rules_f[F_REFLECT_CAP])
    if memo:
        sides_f[s, ROWF_MEMO_REFLECT, e] = sides_f[s, ROWF_SCALARS, SF_REFLECT]
    sides[s, ROW_SCALARS, S_DIRTY] = 0


# -- erosion ------------------------------------------------------------------------------------

@njit(cache=True, _nrt=False, inline='always')
def _erodes(cells, sides, v):
    """False if an erosion against v would change nothing (no doll, the target known, without a
    ward, the seal cap reached: most erosions of a battle, which then cost no call)."""
    if sides[v, ROW_SCALARS, S_DOLL_USES] > 0 or sides[v, ROW_SCALARS, S_TARGET_OK] == 0:
        return True
    target = sides[v, ROW_SCALARS, S_TARGET]
    if target < 0:
        return False
    return (cells[v, target, CELL_WARDS] > 0
            or sides[v, ROW_SCALARS, S_SEALED] - sides[v, ROW_SCALARS, S_UNSEALED]
            < sides[v, ROW_SCALARS, S_SEAL_CAP])


@njit(cache=True, _nrt=False, inline='always')
def _reserve(rules_i, cells, sides, v, target):
    """Battle._reserve: a hand rune takes the sealed cell (D-33): of the same kind (tree: any
    kind, the same kind first), the highest grade, the lowest slot."""
    k = cells[v, target, CELL_KIND]
    any_kind = sides[v, ROW_SCALARS, S_ANY_KIND]
    best = -1
    best_same = False
    best_g = 0
    for i in range(sides[v, ROW_SCALARS, S_N_HAND]):
        if sides[v, ROW_HAND_USED, i]:
            continue
        same = sides[v, ROW_HAND_KIND, i] == k
        if not (same or any_kind):
            continue
        g = sides[v, ROW_HAND_GRADE, i]
        if best < 0 or (same and not best_same) or (same == best_same and g > best_g):
            best = i
            best_same = same
            best_g = g
    if best < 0:
        return
    sides[v, ROW_HAND_USED, best] = 1
    bit = _cell_bit(target)
    if k == MIMIC and target < MASK_BITS:     # a shared bit may stand for other mimics
        sides[v, ROW_SCALARS, S_MIMICS] &= ~bit
    cells[v, target, CELL_KIND] = sides[v, ROW_HAND_KIND, best]
    if cells[v, target, CELL_KIND] == MIMIC:
        sides[v, ROW_SCALARS, S_MIMICS] |= bit
    cells[v, target, CELL_GRADE] = best_g
    eg = best_g + cells[v, target, CELL_BONUS]
    mg = rules_i[RI_MAX_GRADE]
    cells[v, target, CELL_EGRADE] = eg if eg < mg else mg
    cells[v, target, CELL_SEALED] = 0
    sides[v, ROW_SCALARS, S_SEALED_MASK] ^= 1 << cells[v, target, CELL_OCC_INDEX]
    sides[v, ROW_SCALARS, S_EPOCH] += 1
    cells[v, target, CELL_WARDS] = 0
    cells[v, target, CELL_FROZEN_UNTIL] = 0
    cells[v, target, CELL_DELAY_COUNT] = 0
    cells[v, target, CELL_SERIAL] += 1


@njit(cache=True, _nrt=False)
def erode(rules_i, cells, sides, v):
    """Battle._erode against the victim v (D-31): doll, target, ward, cap, seal; then
    Battle._reserve."""
    sc = ROW_SCALARS     # (a constant: shorter lines)
    if sides[v, sc, S_DOLL_USES] > 0:
        sides[v, sc, S_DOLL_USES] -= 1
        return
    if sides[v, sc, S_TARGET_OK] == 0:
        # the outermost ring holding unsealed runes, the highest effective grade, the earliest
        geo = rules_i[AT_GEOMETRY]
        target = -1
        t_ring = 0
        t_g = 0
        for i in range(sides[v, sc, S_N_OCC]):
            c = sides[v, ROW_OCCUPIED, i]
            if cells[v, c, CELL_SEALED]:
                continue
            r = rules_i[geo + c * GEO_WIDTH + GEO_RING]
            g = cells[v, c, CELL_EGRADE]
            if target < 0 or r > t_ring or (r == t_ring and g > t_g):
                target = c
                t_ring = r
                t_g = g
        sides[v, sc, S_TARGET] = target
        sides[v, sc, S_TARGET_OK] = 1
    target = sides[v, sc, S_TARGET]
    if target < 0:
        return
    if cells[v, target, CELL_WARDS] > 0:
        cells[v, target, CELL_WARDS] -= 1
        return
    if sides[v, sc, S_SEALED] - sides[v, sc, S_UNSEALED] >= sides[v, sc, S_SEAL_CAP]:
        return
    cells[v, target, CELL_SEALED] = 1
    sides[v, sc, S_SEALED_MASK] ^= 1 << cells[v, target, CELL_OCC_INDEX]
    sides[v, sc, S_SEALED] += 1
    cells[v, target, CELL_SERIAL] += 1
    sides[v, sc, S_DIRTY] = 1
    sides[v, sc, S_TARGET_OK] = 0
    if sides[v, sc, S_UNSEAL_MS] >= 0:
        q = sides[v, sc, S_N_UNSEALS]
        if q >= UNSEAL_CAP:
            sides[0, sc, S_STATUS] = 1
        else:
            sides[v, ROW_UNSEAL_T, q] = sides[0, sc, S_TIME] + sides[v, sc, S_UNSEAL_MS]
            sides[v, ROW_UNSEAL_CELL, q] = target
            sides[v, ROW_UNSEAL_SERIAL, q] = cells[v, target, CELL_SERIAL]
            sides[v, sc, S_N_UNSEALS] = q + 1
    _reserve(rules_i, cells, sides, v, target)


# -- one cast -----------------------------------------------------------------------------------
# The parts of Battle._cast; `na`: the number of acting flows in the snapshot (`_snapshot`).

@njit(cache=True, _nrt=False, inline='always')
def _absorb(sides_f, v, damage, wear):
    """Battle._absorb, then the damage past the barrier off side v's HP."""
    barrier = sides_f[v, ROWF_SCALARS, SF_BARRIER]
    if damage * wear >= barrier:
        absorbed = barrier / wear
        sides_f[v, ROWF_SCALARS, SF_BARRIER] = 0.0
    else:
        absorbed = damage
        sides_f[v, ROWF_SCALARS, SF_BARRIER] = barrier - damage * wear
    sides_f[v, ROWF_SCALARS, SF_HP] -= damage - absorbed


@njit(cache=True, _nrt=False, inline='always')
def _attack(rules_i, rules_f, cells, cells_f, sides, sides_f, s, kind, power, od, na):
    """An attack's cast: drizzle, its flows' barrier strip, its hits (Battle._hit: _absorb, the
    knockout check, the reflection). True if the battle is over."""
    o = 1 - s
    ffl = rules_i[AT_FLOWS_F]
    kt = rules_i[AT_KINDS] + kind * KIND_WIDTH
    death = rules_f[F_DEATH]
    factor = 1.0
    if sides[s, ROW_SCALARS, S_DRIZZLE_CHARGES] > 0:
        sides[s, ROW_SCALARS, S_DRIZZLE_CHARGES] -= 1
        factor = rules_f[F_DRIZZLE_X]
    for j in range(na):
        strip = rules_f[ffl + sides[s, ROW_SNAP_FLOWS, j] * FLOWF_WIDTH + FLOWF_STRIP]
        if strip > 0 and sides_f[o, ROWF_SCALARS, SF_BARRIER] > 0:
            removed = (sides_f[o, ROWF_SCALARS, SF_BARRIER] * strip
                       * sides_f[s, ROWF_SNAP_STRENGTHS, j])
            sides_f[o, ROWF_SCALARS, SF_BARRIER] -= removed
    wear = rules_f[rules_i[AT_KINDS_F] + kind * KINDF_WIDTH + KINDF_WEAR]
    for _h in range(rules_i[kt + KIND_HITS]):
        damage = power * sides_f[s, ROWF_AFFINITY, kind] * od * factor
        reflect = 0.0
        if sides_f[o, ROWF_SCALARS, SF_BARRIER] > 0:
            if sides[o, ROW_SCALARS, S_DIRTY]:
                analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, o)
            reflect = sides_f[o, ROWF_SCALARS, SF_REFLECT]
        _absorb(sides_f, o, damage, wear)
        if sides_f[o, ROWF_SCALARS, SF_HP] <= death:
            sides[0, ROW_SCALARS, S_WINNER] = s
            return True
        if reflect > 0:
            _absorb(sides_f, s, reflect * damage, 1.0)
            if sides_f[s, ROWF_SCALARS, SF_HP] <= death:
                sides[0, ROW_SCALARS, S_WINNER] = o
                return True
    return False


@njit(cache=True, _nrt=False, inline='always')
def _unseal(cells, sides, s, c):
    """Battle._unseal of side s's cell c."""
    cells[s, c, CELL_SEALED] = 0
    sides[s, ROW_SCALARS, S_SEALED_MASK] ^= 1 << cells[s, c, CELL_OCC_INDEX]
    sides[s, ROW_SCALARS, S_UNSEALED] += 1
    sides[s, ROW_SCALARS, S_DIRTY] = 1
    sides[s, ROW_SCALARS, S_TARGET_OK] = 0


@njit(cache=True, _nrt=False, inline='always')
def _light_unseal(rules_i, cells, sides, s, grade):
    """Battle._light_unseal: the light's unseals of its grade, the highest effective grade
    first, ties by casting order (Battle._unseal)."""
    for _u in range(rules_i[rules_i[AT_UNSEALS] + grade - 1]):
        best = -1
        best_g = 0
        for i in range(sides[s, ROW_SCALARS, S_N_OCC]):
            c = sides[s, ROW_OCCUPIED, i]
            if cells[s, c, CELL_SEALED] and (best < 0 or cells[s, c, CELL_EGRADE] > best_g):
                best = c
                best_g = cells[s, c, CELL_EGRADE]
        if best < 0:
            break
        _unseal(cells, sides, s, best)


@njit(cache=True, _nrt=False, inline='always')
def _heal(rules_i, rules_f, sides, sides_f, s, power, na, t):
    """Battle._heal of a water or light cast (with its flows' overflow, the curse's cut)."""
    overflow = False
    for j in range(na):
        if rules_i[rules_i[AT_FLOWS] + sides[s, ROW_SNAP_FLOWS, j] * FLOW_WIDTH + FLOW_OVERFLOW]:
            overflow = True
    amount = power
    if sides[s, ROW_SCALARS, S_CURSED_UNTIL] > t:
        amount *= rules_f[F_CURSE_HEAL_X]
    hp = sides_f[s, ROWF_SCALARS, SF_HP] + amount
    max_hp = sides_f[s, ROWF_SCALARS, SF_MAX_HP]
    over_hp = _max(0.0, hp - max_hp)
    sides_f[s, ROWF_SCALARS, SF_HP] = _min(hp, max_hp)
    if overflow and over_hp > 0:
        sides_f[s, ROWF_SCALARS, SF_BARRIER] += over_hp


@njit(cache=True, _nrt=False, inline='always')
def _duration_x(rules_i, rules_f, sides, sides_f, s, na, column):
    """The product over the snapshot's flows of their duration factor `column` (curse or
    freeze), each at its strength."""
    ffl = rules_i[AT_FLOWS_F]
    flow_x = sides_f[s, ROWF_SCALARS, SF_FLOW_X]
    x = 1.0
    for j in range(na):
        x *= (1.0 + (rules_f[ffl + sides[s, ROW_SNAP_FLOWS, j] * FLOWF_WIDTH + column] - 1.0)
              * sides_f[s, ROWF_SNAP_STRENGTHS, j] * flow_x)
    return x


@njit(cache=True, _nrt=False, inline='always')
def _curse(rules_i, rules_f, sides, sides_f, s, kind, na, t):
    """The curse on the opponent: the longest of the rune's and its flows', x their factors."""
    o = 1 - s
    ffl = rules_i[AT_FLOWS_F]
    curse_s = rules_f[rules_i[AT_KINDS_F] + kind * KINDF_WIDTH + KINDF_CURSE_S]
    for j in range(na):
        curse_s = _max(curse_s,
                       rules_f[ffl + sides[s, ROW_SNAP_FLOWS, j] * FLOWF_WIDTH + FLOWF_CURSE_S])
    if curse_s > 0:
        until = t + _ms(curse_s * _duration_x(rules_i, rules_f, sides, sides_f, s, na,
                                              FLOWF_CURSE_X))
        if until > sides[o, ROW_SCALARS, S_CURSED_UNTIL]:
            sides[o, ROW_SCALARS, S_CURSED_UNTIL] = until


@njit(cache=True, _nrt=False, inline='always')
def _freeze(rules_i, rules_f, cells, cells_f, sides, sides_f, s, na, t):
    """Battle._freeze: the opponent's strongest turn rune, neither sealed nor frozen; none while
    max_frozen of its turn cells are frozen, sealed or not (D-52; a reserve's cell is thawed)."""
    o = 1 - s
    duration = _ms(rules_f[rules_i[AT_KINDS_F] + ICE * KINDF_WIDTH + KINDF_FREEZE_S]
                   * _duration_x(rules_i, rules_f, sides, sides_f, s, na, FLOWF_FREEZE_X))
    limit = rules_i[RI_MAX_FROZEN]
    n_frozen = 0
    if limit > 0:
        for i in range(sides[o, ROW_SCALARS, S_N_TURN]):
            if cells[o, sides[o, ROW_TURN, i], CELL_FROZEN_UNTIL] > t:
                n_frozen += 1
    if limit != 0 and n_frozen >= limit:
        return
    if sides[o, ROW_SCALARS, S_DIRTY]:
        analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, o)
    tol = rules_f[F_STRONG_TOL]
    ro = sides[o, ROW_SCALARS, S_ANALYSIS]
    victim = -1
    best_p = 0.0
    for i in range(sides[o, ROW_SCALARS, S_N_TURN]):
        c = sides[o, ROW_TURN, i]
        if _casts(cells, o, c) and cells[o, c, CELL_FROZEN_UNTIL] <= t:
            p = cells_f[ro, c, ANF_POWER]
            if _stronger(victim, p, best_p, tol):
                victim = c
                best_p = p
    if victim >= 0:
        cells[o, victim, CELL_FROZEN_UNTIL] = t + duration


@njit(cache=True, _nrt=False, inline='always')
def _flow_effects(rules_i, rules_f, cells, sides, sides_f, s, na):
    """The cast's flows' effects on the opponent: erosions, storm delays, drizzle charges."""
    o = 1 - s
    fl = rules_i[AT_FLOWS]
    ffl = rules_i[AT_FLOWS_F]
    for j in range(na):
        for _e in range(rules_i[fl + sides[s, ROW_SNAP_FLOWS, j] * FLOW_WIDTH + FLOW_EROSIONS]):
            if _erodes(cells, sides, o):
                erode(rules_i, cells, sides, o)
    for j in range(na):
        storm = rules_f[ffl + sides[s, ROW_SNAP_FLOWS, j] * FLOWF_WIDTH + FLOWF_STORM_S]
        if storm > 0 and sides[o, ROW_SCALARS, S_NEXT_TURN] >= 0:
            delay = _min(_ms(storm * sides_f[s, ROWF_SNAP_STRENGTHS, j]),
                         sides[o, ROW_SCALARS, S_BUDGET])
            if delay > 0:
                sides[o, ROW_SCALARS, S_BUDGET] -= delay
                sides[o, ROW_SCALARS, S_NEXT_TURN] += delay
    for j in range(na):
        dz = rules_i[fl + sides[s, ROW_SNAP_FLOWS, j] * FLOW_WIDTH + FLOW_DRIZZLE]
        if dz > 0:
            sides[o, ROW_SCALARS, S_DRIZZLE_CHARGES] = _min(
                rules_i[RI_DRIZZLE_MAX], sides[o, ROW_SCALARS, S_DRIZZLE_CHARGES] + dz)


@njit(cache=True, _nrt=False, inline='always')
def _snapshot(rules_i, cells, cells_f, sides, sides_f, s, cell):
    """The start of Battle._cast for the rune at `cell`: its acting flows into the snapshot.
    Returns (their number, the number of casts: 1 + the extra casts they give)."""
    r = sides[s, ROW_SCALARS, S_ANALYSIS]
    na = cells[r, cell, AN_N_FLOWS]
    fl = rules_i[AT_FLOWS]
    n_cast = 1
    for j in range(na):
        sides[s, ROW_SNAP_FLOWS, j] = cells[r, cell, AN_FLOWS + j]
        sides_f[s, ROWF_SNAP_STRENGTHS, j] = cells_f[r, cell, ANF_STRENGTHS + j]
        n_cast += rules_i[fl + sides[s, ROW_SNAP_FLOWS, j] * FLOW_WIDTH + FLOW_EXTRA_CASTS]
    return na, n_cast


# -- the battle ---------------------------------------------------------------------------------

@njit(cache=True, _nrt=False, inline='always')
def _end_effects(cells, sides, t):
    """Battle._end_effects (no trace): the due warding-seal unseals in (t, cell, serial) order,
    each only if its seal is still the cell's newest."""
    for s in range(2):
        q = sides[s, ROW_SCALARS, S_N_UNSEALS]
        if q == 0:
            continue
        nd = 0
        for i in range(q):
            if sides[s, ROW_UNSEAL_T, i] <= t:
                sides[s, ROW_DUE, nd] = i
                nd += 1
        if nd == 0:
            continue
        for i in range(1, nd):
            v = sides[s, ROW_DUE, i]
            j = i - 1
            while j >= 0:
                u = sides[s, ROW_DUE, j]
                if sides[s, ROW_UNSEAL_T, u] != sides[s, ROW_UNSEAL_T, v]:
                    after = sides[s, ROW_UNSEAL_T, u] > sides[s, ROW_UNSEAL_T, v]
                elif sides[s, ROW_UNSEAL_CELL, u] != sides[s, ROW_UNSEAL_CELL, v]:
                    after = sides[s, ROW_UNSEAL_CELL, u] > sides[s, ROW_UNSEAL_CELL, v]
                else:
                    after = sides[s, ROW_UNSEAL_SERIAL, u] > sides[s, ROW_UNSEAL_SERIAL, v]
                if not after:
                    break
                sides[s, ROW_DUE, j + 1] = u
                j -= 1
            sides[s, ROW_DUE, j + 1] = v
        for i in range(nd):
            e = sides[s, ROW_DUE, i]
            c = sides[s, ROW_UNSEAL_CELL, e]
            serial = sides[s, ROW_UNSEAL_SERIAL, e]
            if cells[s, c, CELL_SEALED] and cells[s, c, CELL_SERIAL] == serial:
                _unseal(cells, sides, s, c)
        keep = 0
        for i in range(q):
            if sides[s, ROW_UNSEAL_T, i] > t:
                sides[s, ROW_UNSEAL_T, keep] = sides[s, ROW_UNSEAL_T, i]
                sides[s, ROW_UNSEAL_CELL, keep] = sides[s, ROW_UNSEAL_CELL, i]
                sides[s, ROW_UNSEAL_SERIAL, keep] = sides[s, ROW_UNSEAL_SERIAL, i]
                keep += 1
        sides[s, ROW_SCALARS, S_N_UNSEALS] = keep


@njit(cache=True, _nrt=False, inline='always')
def _next_mimic(rules_i, rules_f, cells, cells_f, sides, sides_f, s, cell, jm):
    """Battle._mimic_copies, one at a time: from `cell`'s jm-th outward cell on, the first
    unsealed mimic whose strongest unsealed inward casting rune is `cell`'s; (its cell or -1,
    the index to go on from). Looked for only while an outward cell holds a mimic."""
    geo = rules_i[AT_GEOMETRY]
    gs = geo + cell * GEO_WIDTH
    tol = rules_f[F_STRONG_TOL]
    while (sides[s, ROW_SCALARS, S_MIMICS] & rules_i[gs + GEO_OUTWARD_MASK]
           and jm < rules_i[gs + GEO_N_OUTWARD]):
        m = rules_i[gs + GEO_OUTWARD + jm]
        jm += 1
        if cells[s, m, CELL_KIND] != MIMIC or cells[s, m, CELL_SEALED]:
            continue
        if sides[s, ROW_SCALARS, S_DIRTY]:
            analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, s)
        r = sides[s, ROW_SCALARS, S_ANALYSIS]
        gm = geo + m * GEO_WIDTH
        src = -1
        best_p = 0.0
        for j in range(rules_i[gm + GEO_N_INWARD]):
            c = rules_i[gm + GEO_INWARD + j]
            if _casts(cells, s, c):
                p = cells_f[r, c, ANF_POWER]
                if _stronger(src, p, best_p, tol):
                    src = c
                    best_p = p
        if src == cell:
            return m, jm
    return -1, jm


@njit(cache=True, _nrt=False)
def play(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, off0, off1, hp0, hp1):
    """Battle.__init__ + Battle.run. Returns (winner or -1, time in ms, knockout, status)."""
    sides[0, ROW_SCALARS, S_TIME] = 0
    sides[0, ROW_SCALARS, S_WINNER] = NOT_OVER
    sides[0, ROW_SCALARS, S_STATUS] = 0
    for s in range(2):
        if not setup_side(rules_i, rules_f, cells, sides, sides_f, s, enc,
                          off0 if s == 0 else off1, hp0 if s == 0 else hp1):
            sides[0, ROW_SCALARS, S_STATUS] = 2
            return NOT_OVER, 0, False, 2
    for s in range(2):
        affinity(rules_i, rules_f, cells, sides, sides_f, s, enc)
    duration = _ms(rules_f[F_DURATION_S])
    odt = rules_i[AT_OVERDRIVE]
    over = False
    while True:
        t = _next_time(sides)
        if t < 0 or t > duration:
            break
        sides[0, ROW_SCALARS, S_TIME] = t
        # overdrive_multiplier at t, for every hit at t: from the table of compile_rules
        # (t // 1000 is floor(t / 1000) exactly, without a division's latency)
        od = rules_f[odt + t // 1000]
        _end_effects(cells, sides, t)
        for s in range(2):
            if sides[s, ROW_SCALARS, S_NEXT_TURN] != t:
                continue
            cell, k, can = _turn_cell(rules_i, rules_f, cells, cells_f, sides, sides_f, s, t)
            if can:
                sides[s, ROW_SCALARS, S_CASTS] += 1
                if _cast_and_copies(rules_i, rules_f, cells, cells_f, sides, sides_f, s, cell, k,
                                    od, t):
                    over = True
                    break
            _end_turn(rules_i, cells, sides, s, t)
        if over or sides[0, ROW_SCALARS, S_STATUS]:
            break
    status = sides[0, ROW_SCALARS, S_STATUS]
    if over:
        return sides[0, ROW_SCALARS, S_WINNER], t, True, status
    return _judge_timeout(rules_f, sides_f), duration, False, status


# The pieces of `play`, inlined into it (numba's inline='always': one compiled loop, as fast as
# when they were written out in it).

@njit(cache=True, _nrt=False, inline='always')
def _next_time(sides):
    """Battle._next_time: the earliest turn or scheduled unseal of either side (-1: none)."""
    t = -1
    for s in range(2):
        nt = sides[s, ROW_SCALARS, S_NEXT_TURN]
        if nt >= 0 and (t < 0 or nt < t):
            t = nt
        for i in range(sides[s, ROW_SCALARS, S_N_UNSEALS]):
            pt = sides[s, ROW_UNSEAL_T, i]
            if t < 0 or pt < t:
                t = pt
    return t


@njit(cache=True, _nrt=False, inline='always')
def _turn_cell(rules_i, rules_f, cells, cells_f, sides, sides_f, s, t):
    """Battle._turn's start for side s at t: (the turn's cell, its kind, whether it casts). The
    next turn cell's rune casts unless sealed, frozen or held by a delay (D-18); past the turn
    cells, a rest turn (D-50) casts nothing."""
    pos = sides[s, ROW_SCALARS, S_TURN_POS]
    if pos < sides[s, ROW_SCALARS, S_N_TURN]:
        cell = sides[s, ROW_TURN, pos]
        sides[s, ROW_SCALARS, S_TURNS] += 1
        k = cells[s, cell, CELL_KIND]
        can = (k >= 0 and k < N_CASTING and cells[s, cell, CELL_SEALED] == 0
               and cells[s, cell, CELL_FROZEN_UNTIL] <= t)
    else:
        sides[s, ROW_SCALARS, S_RESTS] += 1
        cell = sides[s, ROW_TURN, 0]
        k = -1
        can = False
    if can:
        if sides[s, ROW_SCALARS, S_DIRTY] and not _recall(sides, sides_f, s):
            analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, s)
        if cells[sides[s, ROW_SCALARS, S_ANALYSIS], cell, AN_DELAYED]:
            cells[s, cell, CELL_DELAY_COUNT] += 1     # skip, cast, skip...
            can = cells[s, cell, CELL_DELAY_COUNT] % rules_i[RI_DELAY_PERIOD] == 0
    return cell, k, can


@njit(cache=True, _nrt=False, inline='always')
def _cast_and_copies(rules_i, rules_f, cells, cells_f, sides, sides_f, s, cell, k, od, t):
    """Battle._cast (repeat 0), then each mimic's copy of it (the source's cell and flows, the
    mimic's power), in one loop: the cast's code is compiled once. A cast (E-3 steps 1-10) runs
    once, and once more per extra cast of its flows. True if a hit ended the battle."""
    power = cells_f[sides[s, ROW_SCALARS, S_ANALYSIS], cell, ANF_POWER]
    grade = cells[s, cell, CELL_EGRADE]
    jm = 0
    while True:
        na, n_cast = _snapshot(rules_i, cells, cells_f, sides, sides_f, s, cell)
        attacks = rules_i[rules_i[AT_KINDS] + k * KIND_WIDTH + KIND_ATTACKS]
        for _rep in range(n_cast):
            if attacks and _attack(rules_i, rules_f, cells, cells_f, sides, sides_f,
                                   s, k, power, od, na):
                return True
            if k == WATER or k == LIGHT:
                _heal(rules_i, rules_f, sides, sides_f, s, power, na, t)
                if k == LIGHT:
                    _light_unseal(rules_i, cells, sides, s, grade)
            elif k == EARTH:
                sides_f[s, ROWF_SCALARS, SF_BARRIER] += power
            _curse(rules_i, rules_f, sides, sides_f, s, k, na, t)
            if k == ICE:
                _freeze(rules_i, rules_f, cells, cells_f, sides, sides_f, s, na, t)
            _flow_effects(rules_i, rules_f, cells, sides, sides_f, s, na)
        m, jm = _next_mimic(rules_i, rules_f, cells, cells_f, sides, sides_f, s, cell, jm)
        if m < 0:
            return False
        power = (cells_f[sides[s, ROW_SCALARS, S_ANALYSIS], cell, ANF_POWER]
                 * rules_f[rules_i[AT_COPY_X] + cells[s, m, CELL_EGRADE] - 1])
        k = cells[s, cell, CELL_KIND]


@njit(cache=True, _nrt=False, inline='always')
def _end_turn(rules_i, cells, sides, s, t):
    """Side s's turn is over: the next one an interval on; at the end of the cycle (after its
    rest turns) the storm budget refills and the erosions wear the other side."""
    sides[s, ROW_SCALARS, S_TURN_POS] += 1
    sides[s, ROW_SCALARS, S_NEXT_TURN] = t + sides[s, ROW_SCALARS, S_INTERVAL]
    if sides[s, ROW_SCALARS, S_TURN_POS] == sides[s, ROW_SCALARS, S_CYCLE_LEN]:
        sides[s, ROW_SCALARS, S_TURN_POS] = 0
        sides[s, ROW_SCALARS, S_BUDGET] = sides[s, ROW_SCALARS, S_BUDGET_MAX]
        for _ in range(sides[s, ROW_SCALARS, S_EROSIONS]):
            if _erodes(cells, sides, 1 - s):
                erode(rules_i, cells, sides, 1 - s)


@njit(cache=True, _nrt=False, inline='always')
def _judge_timeout(rules_f, sides_f):
    """Battle._judge_timeout: the side with the larger HP share wins, -1 for a draw (shares
    within battle.draw_tolerance)."""
    r0 = sides_f[0, ROWF_SCALARS, SF_HP] / sides_f[0, ROWF_SCALARS, SF_MAX_HP]
    r1 = sides_f[1, ROWF_SCALARS, SF_HP] / sides_f[1, ROWF_SCALARS, SF_MAX_HP]
    if abs(r0 - r1) <= rules_f[F_DRAW_TOL]:
        return -1
    return 0 if r0 > r1 else 1


@njit(cache=True, _nrt=False)
def play_into(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, offs, maxhp, a, b, j,
              winner, time, hp, max_hp, casts, turns, seals, rests, knockout, status):
    """Play pair j (board records a and b) and write its results in row j."""
    w, t_ms, ko, err = play(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, offs[a],
                            offs[b], maxhp[a], maxhp[b])
    death = rules_f[F_DEATH]
    winner[j] = w
    time[j] = t_ms / 1000.0
    knockout[j] = ko
    status[j] = err
    for s in range(2):
        h = sides_f[s, ROWF_SCALARS, SF_HP]
        hp[j, s] = 0.0 if h <= death else h    # Battle._reported_hp
        max_hp[j, s] = sides_f[s, ROWF_SCALARS, SF_MAX_HP]
        casts[j, s] = sides[s, ROW_SCALARS, S_CASTS]
        turns[j, s] = sides[s, ROW_SCALARS, S_TURNS]
        seals[j, s] = sides[s, ROW_SCALARS, S_SEALED] - sides[s, ROW_SCALARS, S_UNSEALED]
        rests[j, s] = sides[s, ROW_SCALARS, S_RESTS]


@njit(cache=True, nogil=True)
def run_serial(rules_i, rules_f, enc, offs, maxhp, i0, i1, hand_cap, mods_cap, winner, time,
               hp, max_hp, casts, turns, seals, rests, knockout, status):
    """Play every pair (i0[j], i1[j]) into row j of the outputs, on this thread. Releases the GIL:
    `fast_battles` runs it on several threads at once, each on its own slice of the batch."""
    cells, cells_f, sides, sides_f = make_state_jit(rules_i, hand_cap, mods_cap)
    for j in range(i0.shape[0]):
        play_into(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, offs, maxhp, i0[j],
                  i1[j], j, winner, time, hp, max_hp, casts, turns, seals, rests, knockout,
                  status)


@njit(cache=True, nogil=True)
def run_bounded(rules_i, rules_f, enc, offs, maxhp, rows, cols, seat, weights, top, floors,
                margin_weight, hand_cap, mods_cap, winner, time, hp, max_hp, casts, turns,
                seals, rests, knockout, status, played):
    """Each row board (record rows[i]) against the column boards (records cols[0], cols[1], ..)
    in turn, the row in side `seat`, pair (i, k) into row i * len(cols) + k of the outputs; a
    row stops after column k when the weighted value of its battles so far (per battle
    weights[k] x (points + margin_weight x margin): points 1 a win, 0.5 a draw, 0 a loss; margin
    the row's HP share less the column's) plus top[k + 1] (the most its other columns could add)
    is below floors[i]. played[i]: the columns row i played. After a pair the kernel could not
    play (status) the row plays on to the end: its results are the reference's to give."""
    cells, cells_f, sides, sides_f = make_state_jit(rules_i, hand_cap, mods_cap)
    n_cols = cols.shape[0]
    other = 1 - seat
    for i in range(rows.shape[0]):
        value = 0.0
        sure = True
        k = 0
        while k < n_cols:
            j = i * n_cols + k
            if seat == 0:
                a, b = rows[i], cols[k]
            else:
                a, b = cols[k], rows[i]
            play_into(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, offs, maxhp, a, b,
                      j, winner, time, hp, max_hp, casts, turns, seals, rests, knockout, status)
            k += 1
            if status[j] != 0:
                sure = False
            if not sure:
                continue
            w = winner[j]
            points = 1.0 if w == seat else (0.5 if w < 0 else 0.0)
            margin = hp[j, seat] / max_hp[j, seat] - hp[j, other] / max_hp[j, other]
            value += weights[k - 1] * (points + margin_weight * margin)
            if k < n_cols and value + top[k] < floors[i]:
                break
        played[i] = k


@njit(cache=True, nogil=True)
def board_analysis(rules_i, rules_f, cells, cells_f, sides, sides_f, enc, off, power, info):
    """`analysis.analyse` of the board record at `off` at battle start (no seals), on a worker
    state from `make_state`. Per cell c: power[c], a casting rune's power or -1.0; info[c] =
    (delayed, effective grade (0: empty), the number of acting flows, their ids in table
    order...). Returns the side's interval in ms, or -1 for a record out of range."""
    if not setup_side(rules_i, rules_f, cells, sides, sides_f, 0, enc, off, np.nan):
        return -1
    analyse(rules_i, rules_f, cells, cells_f, sides, sides_f, 0)
    r = sides[0, ROW_SCALARS, S_ANALYSIS]
    for c in range(rules_i[RI_N_CELLS]):
        power[c] = -1.0
        info[c, 0] = 0
        info[c, 1] = cells[0, c, CELL_EGRADE] if cells[0, c, CELL_KIND] >= 0 else 0
        info[c, 2] = 0
        if _casts(cells, 0, c):
            power[c] = cells_f[r, c, ANF_POWER]
            info[c, 0] = cells[r, c, AN_DELAYED]
            info[c, 2] = cells[r, c, AN_N_FLOWS]
            for j in range(info[c, 2]):
                info[c, 3 + j] = cells[r, c, AN_FLOWS + j]
    return sides[0, ROW_SCALARS, S_INTERVAL]
