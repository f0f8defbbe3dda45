"""Rules and boards as flat numpy arrays for the compiled battle kernel.

Two compilations, both plain Python and cheap:

* `compile_rules(rules)` turns a `Rules` into two flat arrays, `ri` (int64) and `rf` (float64): the
  hex geometry (ring, neighbour / inward / outward lists of every cell), the resonance orbits (each
  pattern of the config over every ring), per kind (hits, attack or not, opposites, whom it beats
  and what beats it, the flows feeding it in table order; base value, barrier wear, own curse and
  freeze durations), the flow table (from, to and every side effect, in table order), every
  modifier (cores, boss rules, relics: interval, HP, amplify and flow factors, erosions, wards,
  switches, seal-cap divisor, core flow strength, unseal delay, and the power factor per kind and
  per "outermost ring or not" computed exactly as the reference multiplies it), the artifacts, the
  grade / ring / copy / resonance tables, the overdrive multiplier of every second and the battle's
  scalars, and some bit masks (the outward cells of a cell, the cells of an orbit, the opposites
  of a kind) that spare the kernel loops. The kernel finds each block through the offsets in the
  header of `ri` (RI_* below). Cached per rules hash. Nothing the config holds is a literal here
  or in the kernel; only the kinds (fixed by the code, `rules.config.KINDS`) are.

  Two flat arrays rather than many small ones (or a namedtuple of arrays) keep numba's compile
  time low: every array argument costs compile time at every call site.

* `encode_pairs(pairs, rules)` writes the boards into one flat int32 array, one variable-length
  record per board (below), plus a float64 array of `max_hp` (NaN: none). Runes go in
  `Board.runes` dict order, because the reference sums the affinity weights in that order. The
  per-side set-up (`SideSetup.of`: modifiers, interval, max HP, wards, spring bonuses and
  effective grades, seal cap, turn cells, outermost ring; then affinity) is derived from these
  records inside the kernel, once per battle.

Board record (ints), at `offsets[b]`:
    round, core (modifier id or -1), sun element (kind id or -1), n_runes, n_artifacts, n_hand,
    n_boss_rules, n_relics, then n_runes x (cell, kind, grade), n_artifacts x (cell, artifact),
    n_hand x (kind, grade), the boss rules' modifier ids, the relics' modifier ids.
"""
from __future__ import annotations

import zlib
from array import array

import numpy as np

from ...rules.config import ATTACK_KINDS, CASTING_KINDS, KINDS, Rules
from ..analysis import overdrive_multiplier
from ...rules.geometry import geometry

# Kind ids are the index in KINDS (fixed by the code, not the config).
KIND_ID = {k: i for i, k in enumerate(KINDS)}
N_KINDS = len(KINDS)
N_CASTING = len(CASTING_KINDS)
assert KINDS[:N_CASTING] == CASTING_KINDS   # casting kinds are ids 0..N_CASTING-1

HEADER = 8   # ints before the variable parts of a board record

# -- ri: header ---------------------------------------------------------------------------------
(RI_N, RI_F, RI_O, RI_OW, RI_M, RI_A, RI_G, RI_P, RI_DRIZZLE_MAX, RI_PER_CYCLE, RI_DIVISOR,
 RI_DELAY_PERIOD, RI_EARTH_WARDS, RI_GEO, RI_KIND, RI_INTO, RI_FLOW, RI_ORB, RI_MOD, RI_ART,
 RI_UNS, RF_KIND, RF_FLOW, RF_MOD, RF_GX, RF_RX, RF_CX, RF_PN, RF_PL, RI_ORBM, RF_OD,
 RI_MIN_CYCLE, RI_CAP_MIN, RI_MAX_FROZEN, RI_HDR) = range(35)
# (the RF_* entries of the header are offsets into rf; RI_ORBM: per orbit, the bit mask of its
# cells, a quick test before its cells are checked one by one; RF_OD: the overdrive multiplier
# of every second of the battle, t // 1000 = 0 .. duration; RI_MIN_CYCLE, RI_CAP_MIN,
# RI_MAX_FROZEN: the balance rules' battle.min_cycle_turns, erosion.seal_cap_min and
# freeze.max_frozen, D-50..D-52)

# Cell masks (RI_ORBM, G_OUTM): cell c is bit c, the cells from MASK_BITS on share bit MASK_BITS
# (a mask test is then only a pre-check)
MASK_BITS = 62

# ri: geometry, per cell (GW ints); G_OUTM: the outward cells' mask (see MASK_BITS)
G_RING, G_NBN, G_NB, G_INN, G_IN, G_OUTN, G_OUT, G_OUTM, GW = 0, 1, 2, 8, 9, 15, 16, 22, 23
# ri: per kind (KW ints); the flows feeding kind k are at ri[RI_INTO] + k * F + j. K_BEATS: the
# kinds k beats, K_BEATEN: the kinds that beat k, each a count then the kind ids in table order
K_HITS, K_ATTACK, K_INTO_N, K_BEATS = 0, 1, 2, 3
K_BEATEN = K_BEATS + 1 + N_KINDS
K_OPPM = K_BEATEN + 1 + N_KINDS     # the opposite kinds as a mask: bit 1 + kind id
KW = K_OPPM + 1
# ri: per flow
FI_FROM, FI_TO, FI_EROS, FI_DRIZ, FI_EXTRA, FI_OVER, FIW = range(7)
# ri: per orbit: pattern, length, cells (OW)
O_PAT, O_LEN, O_CELLS = 0, 1, 2
# ri: per modifier
MI_EXTRA, MI_OWARDS, MI_LOOSE, MI_ANY, MI_DIV, MIW = range(6)
# ri: per artifact
AI_WARDS, AI_BONUS, AI_ABS, AIW = range(4)

# -- rf: scalars at fixed indices ---------------------------------------------------------------
(F_DURATION_S, F_BASE_INTERVAL_S, F_BASE_HP, F_HP_PER_ROUND, F_DRAW_TOL, F_DEATH, F_STRONG_TOL,
 F_CURSE_HEAL_X, F_REFLECT_CAP, F_DRIZZLE_X, F_STORM_BUDGET_S, F_ATTUNE, F_OPP_MULT, F_AFF_SLOPE,
 F_AFF_MIN, F_AFF_MAX, F_AMP_INC, F_DELAY_X, N_FS) = range(19)
# rf: per kind
KF_BASE, KF_WEAR, KF_CURSE, KF_FREEZE, KFW = range(5)
# rf: per flow
FF_MULT, FF_REFL, FF_STRIP, FF_STORM, FF_CURSE, FF_CDX, FF_FDX, FFW = range(8)
# rf: per modifier; the power factor of kind k is at MF_POWX + 2 * k + (1 if outermost ring)
MF_INT, MF_HP, MF_AMP, MF_FLOW, MF_RADD, MF_CFS, MF_UNS, MF_POWX = range(8)
MFW = MF_POWX + 2 * N_KINDS

_CACHE: dict[str, tuple] = {}


def _mod_ids(rules: Rules):
    spec = rules.spec
    mod_id = {}
    for name in spec.cores:
        mod_id[("core", name)] = len(mod_id)
    for name in spec.boss_rules:
        mod_id[("boss", name)] = len(mod_id)
    for name in spec.relics:
        mod_id[("relic", name)] = len(mod_id)
    art_id = {name: i for i, name in enumerate(spec.artifacts)}
    # the encoder's per-group tables, built here once rather than at every encode_pairs call
    by_group = {g: {name: i for (group, name), i in mod_id.items() if group == g}
                for g in ("core", "boss", "relic")}
    return mod_id, art_id, by_group


def _mask(cells) -> int:
    """The bit mask of `cells` (see MASK_BITS)."""
    m = 0
    for c in cells:
        m |= 1 << min(c, MASK_BITS)
    return m


def compile_rules(rules: Rules):
    """(ri, rf, ids) for a Rules, cached by the rules hash; ids are the encoder's name tables."""
    hit = _CACHE.get(rules.hash)
    if hit is not None:
        return hit
    spec = rules.spec
    geo = geometry(rules.radius)
    n = geo.n_cells
    flows = spec.flows
    F = len(flows)
    mods = (list(spec.cores.values()) + list(spec.boss_rules.values())
            + list(spec.relics.values()))
    M = len(mods)
    arts = list(spec.artifacts.values())
    A = len(arts)
    pats = spec.resonance.patterns
    P = len(pats)
    orbits = [(p, cells) for p, pattern in enumerate(pats)
              for _ring, cells in geo.patterns[pattern.fold]]
    O = len(orbits)
    OW = max((len(cells) for _, cells in orbits), default=0)
    G = rules.max_grade

    # ---- ints
    hdr = [0] * RI_HDR
    body: list[int] = []

    def block(key, values):
        hdr[key] = RI_HDR + len(body)
        body.extend(int(v) for v in values)

    geo_rows = []
    for c in range(n):
        row = [0] * GW
        row[G_RING] = geo.ring[c]
        row[G_OUTM] = _mask(geo.outward[c])
        for start, cnt, lst in ((G_NB, G_NBN, geo.neighbors[c]), (G_IN, G_INN, geo.inward[c]),
                                (G_OUT, G_OUTN, geo.outward[c])):
            assert len(lst) <= 6
            row[cnt] = len(lst)
            row[start:start + len(lst)] = list(lst)
        geo_rows.extend(row)
    block(RI_GEO, geo_rows)

    kind_rows = []
    into = []
    for k in KINDS:
        row = [0] * KW
        if k in ATTACK_KINDS:
            row[K_HITS] = rules.rune_specs[k].hits
            row[K_ATTACK] = 1
        lst = [i for i, f in enumerate(flows) if f.to == k]
        row[K_INTO_N] = len(lst)
        for o in rules.opposites[k]:
            row[K_OPPM] |= 1 << (1 + KIND_ID[o])
        for start, kinds in ((K_BEATS, [b for b in KINDS if b in rules.beats[k]]),
                             (K_BEATEN, [b for b in KINDS if k in rules.beats[b]])):
            row[start] = len(kinds)
            row[start + 1:start + 1 + len(kinds)] = [KIND_ID[b] for b in kinds]
        kind_rows.extend(row)
        into.extend(lst + [-1] * (F - len(lst)))
    block(RI_KIND, kind_rows)
    block(RI_INTO, into)
    flow_rows = []
    for f in flows:
        flow_rows.extend([KIND_ID[f.from_], KIND_ID[f.to], f.erosions, f.drizzle_charges,
                          f.extra_casts, int(f.overflow_to_barrier)])
    block(RI_FLOW, flow_rows)
    orb_rows = []
    for p, cells in orbits:
        orb_rows.extend([p, len(cells)] + list(cells) + [-1] * (OW - len(cells)))
    block(RI_ORB, orb_rows)
    block(RI_ORBM, [_mask(cells) for _, cells in orbits])
    mod_rows = []
    for m in mods:
        mod_rows.extend([m.extra_erosions, m.outermost_wards, int(m.loose_resonance),
                         int(m.reserve_any_kind),
                         -1 if m.seal_cap_divisor is None else m.seal_cap_divisor])
    block(RI_MOD, mod_rows)
    art_rows = []
    for a in arts:
        art_rows.extend([a.wards, a.grade_bonus, a.absorbs])
    block(RI_ART, art_rows)
    block(RI_UNS, spec.runes.light.unseals_by_grade)

    hdr[RI_N] = n
    hdr[RI_F] = F
    hdr[RI_O] = O
    hdr[RI_OW] = OW
    hdr[RI_M] = M
    hdr[RI_A] = A
    hdr[RI_G] = G
    hdr[RI_P] = P
    hdr[RI_DRIZZLE_MAX] = spec.flow_limits.drizzle_max_charges
    hdr[RI_PER_CYCLE] = spec.erosion.per_cycle
    hdr[RI_DIVISOR] = spec.erosion.seal_cap_divisor
    hdr[RI_DELAY_PERIOD] = spec.runes.delay.period
    hdr[RI_EARTH_WARDS] = spec.runes.earth.outermost_wards
    hdr[RI_MIN_CYCLE] = spec.battle.min_cycle_turns
    hdr[RI_CAP_MIN] = spec.erosion.seal_cap_min
    hdr[RI_MAX_FROZEN] = spec.freeze.max_frozen

    # ---- floats
    fs = [0.0] * N_FS
    b = spec.battle
    fs[F_DURATION_S] = b.duration_s
    fs[F_BASE_INTERVAL_S] = b.base_interval_s
    fs[F_BASE_HP] = b.base_hp
    fs[F_HP_PER_ROUND] = b.hp_per_round
    fs[F_DRAW_TOL] = b.draw_tolerance
    fs[F_DEATH] = b.death_threshold
    fs[F_STRONG_TOL] = b.strongest_tolerance
    fs[F_CURSE_HEAL_X] = b.curse_heal_x
    fs[F_REFLECT_CAP] = spec.flow_limits.reflect_cap
    fs[F_DRIZZLE_X] = spec.flow_limits.drizzle_attack_x
    fs[F_STORM_BUDGET_S] = spec.flow_limits.storm_budget_s
    fs[F_ATTUNE] = spec.attunement.multiplier
    fs[F_OPP_MULT] = spec.opposition.multiplier
    fs[F_AFF_SLOPE] = spec.affinity.slope
    fs[F_AFF_MIN] = spec.affinity.min
    fs[F_AFF_MAX] = spec.affinity.max
    fs[F_AMP_INC] = spec.runes.amplify.increase
    fs[F_DELAY_X] = spec.runes.delay.power_x
    fbody = list(fs)

    def fblock(key, values):
        hdr[key] = len(fbody)
        fbody.extend(float(v) for v in values)

    kf = []
    for k in KINDS:
        row = [0.0] * KFW
        if k in CASTING_KINDS:
            r = rules.rune_specs[k]
            row[KF_BASE] = rules.base_value[k]
            # the same defaults the reference reads with getattr
            row[KF_WEAR] = getattr(r, "barrier_wear", 1.0)
            row[KF_CURSE] = getattr(r, "curse_s", 0.0)
            row[KF_FREEZE] = getattr(r, "freeze_s", 0.0)
        else:
            row[KF_WEAR] = 1.0
        kf.extend(row)
    fblock(RF_KIND, kf)
    ff = []
    for f in flows:
        ff.extend([f.multiplier, f.reflect, f.barrier_strip, f.storm_delay_s, f.curse_s,
                   f.curse_duration_x, f.freeze_duration_x])
    fblock(RF_FLOW, ff)
    mf = []
    for m in mods:
        row = [m.interval_x, m.hp_x, m.amplify_increase_x, m.flow_increase_x, m.resonance_add,
               m.core_flow_strength, -1.0 if m.unseal_after_s is None else m.unseal_after_s]
        for k in KINDS:
            for outer in (False, True):
                # exactly the reference's expression (analysis.analyse)
                x = m.power_x * (m.outermost_power_x if outer else 1.0)
                x *= m.power_x_by_kind.get(k, 1.0)
                row.append(x)
        assert len(row) == MFW
        mf.extend(row)
    fblock(RF_MOD, mf)
    fblock(RF_GX, rules.grade_x)
    fblock(RF_RX, rules.ring_x)
    fblock(RF_CX, spec.runes.mimic.copy_x_by_grade)
    fblock(RF_PN, [p.normal for p in pats])
    fblock(RF_PL, [p.loose for p in pats])
    # the reference's overdrive multiplier (D-27) at every whole second of the battle: it
    # changes only there, so the kernel reads it at t // 1000
    fblock(RF_OD, [overdrive_multiplier(rules, 1000 * sec)
                   for sec in range(rules.ms(b.duration_s) // 1000 + 1)])

    ri = np.array(hdr + body, dtype=np.int64)
    rf = np.array(fbody, dtype=np.float64)
    out = (ri, rf, _mod_ids(rules))
    _CACHE[rules.hash] = out
    return out


def _records(boards, rules: Rules):
    """The records of `boards` (module docstring) in one flat list: (flat, offsets, max_hp,
    hand_cap, mods_cap). One loop for every board, no call per board: this is most of the Python
    time of a batch."""
    _mod_id, art_id, by_group = compile_rules(rules)[2]
    core_id, boss_id, relic_id = by_group["core"], by_group["boss"], by_group["relic"]
    kid = KIND_ID
    nan = float("nan")
    flat: list[int] = []
    offsets: list[int] = []
    max_hp: list[float] = []
    hand_cap = 1
    mods_cap = 1
    for b in boards:
        offsets.append(len(flat))
        mh = b.max_hp
        max_hp.append(nan if mh is None else mh)
        runes = b.runes
        arts = b.artifacts
        hand = b.hand
        bosses = b.boss_rules
        relics = b.relics
        core = b.core
        sun = b.sun_element
        flat += (b.round, -1 if core is None else core_id[core], -1 if sun is None else kid[sun],
                 len(runes), len(arts), len(hand), len(bosses), len(relics))
        for c, (k, g) in runes.items():
            flat += (c, kid[k], g)
        if arts:
            for c, a in arts.items():
                flat += (c, art_id[a])
        if hand:
            for k, g in hand:
                flat += (kid[k], g)
            if len(hand) > hand_cap:
                hand_cap = len(hand)
        if bosses or relics:
            for x in bosses:
                flat.append(boss_id[x])
            for x in relics:
                flat.append(relic_id[x])
            m = len(bosses) + len(relics) + (core is not None)
            if m > mods_cap:
                mods_cap = m
    return flat, offsets, max_hp, hand_cap, mods_cap


def _int32(flat: list) -> np.ndarray:
    return np.frombuffer(array("i", flat), dtype=np.int32) if flat else np.zeros(0, np.int32)


def encode_board(board, rules: Rules):
    """One board's record: (ri, rf, enc, hand_cap, mods_cap), for `BoardAnalyser` (which reads
    the record at offset 0). `board` needs the attributes of a `Board` that the record holds
    (runes, artifacts, hand, boss_rules, relics, core, sun_element, round, max_hp)."""
    ri, rf, _ = compile_rules(rules)
    flat, _offsets, _max_hp, hand_cap, mods_cap = _records((board,), rules)
    return ri, rf, _int32(flat), hand_cap, mods_cap


def encode_pairs(pairs, rules: Rules):
    """Encode board pairs for the kernel.

    Returns (ri, rf, enc, offsets, max_hp, i0, i1, hand_cap, mods_cap): the rules arrays, the
    board records, each record's offset and max_hp, the record index of each pair's board 0 and
    board 1, and the largest hand and number of modifiers of a board. A board object that appears
    in several pairs (the same opponent) is encoded once.
    """
    ri, rf, _ = compile_rules(rules)
    seen: dict[int, int] = {}
    seen_get = seen.get
    unique: list = []
    idx: list[int] = []
    for pair in pairs:
        for b in pair:
            i = seen_get(id(b))
            if i is None:
                i = seen[id(b)] = len(unique)
                unique.append(b)
            idx.append(i)
    flat, offsets, max_hp, hand_cap, mods_cap = _records(unique, rules)
    pair_idx = np.array(idx, dtype=np.int64).reshape(-1, 2)
    return (ri, rf, _int32(flat), np.array(offsets, dtype=np.int64),
            np.array(max_hp, dtype=np.float64), np.ascontiguousarray(pair_idx[:, 0]),
            np.ascontiguousarray(pair_idx[:, 1]), hand_cap, mods_cap)


# -- The env's step record and tables (kernel.observe; written by rune_env/envs/observation.py) --
# The env's observation and legal mask are written by one compiled call from one int32 array:
# the player's board record (the layout above, at offset 0: round 1, no hand, no boss rules, so
# the powers are those at battle start), then the run record, at the offset the board record
# ends:
#   RS_HDR ints (RS_* below), then n_hand x (kind, grade), n_shop_runes x (kind or -1),
#   n_shop_artifacts x (artifact or -1), n_inventory x artifact, n_open x sector, the next boss
#   round's boss rules (index in the config's boss_rules), the pending options: a core choice's
#   core indices, a reward choice's (category index, artifact or -1) pairs, a relic choice's
#   relic indices.
(RS_MANA, RS_ROUND, RS_LAMPS, RS_WINS, RS_LOSSES, RS_DRAWS, RS_HAND_SLOTS, RS_ART_SLOTS, RS_PREP,
 RS_RANK, RS_OVER, RS_PENDING, RS_SECTOR_COST, RS_NEXT_BOSS, RS_NHAND, RS_NSHOP_RUNES,
 RS_NSHOP_ARTS, RS_NINV, RS_NOPEN, RS_NBOSS, RS_NOPTIONS, RS_HDR) = range(22)
# RS_PENDING: -1 none, else the index in ("core", "reward", "relic"); RS_SECTOR_COST and
# RS_NEXT_BOSS: -1 for none.
#
# ot (int64): what the observation and the mask need of the rules and the observation layout,
# built once per encoder. The obs offsets of the parts, then sizes, then the first action id
# of each action group, then the offsets (in ot) of four per-item tables.
(OT_BOARD, OT_HAND, OT_SHOP, OT_INV, OT_SCALARS, OT_CORE, OT_RELICS, OT_BOSSES, OT_PENDING,
 OT_WIDTH, OT_NA, OT_NCORES, OT_NRELICS, OT_NCAT, OT_REWARD_CHOICES, OT_RELIC_MOD0, OT_NCELLS,
 OT_COL_GRADE, OT_COL_OPEN, OT_COL_ART, OT_COL_POWER,
 OT_A_CORE, OT_A_SUN, OT_A_BUY_RUNE, OT_A_BUY_ART, OT_A_REROLL, OT_A_PLACE, OT_A_PICK_UP,
 OT_A_SELL, OT_A_MERGE_HAND, OT_A_MERGE_BOARD, OT_A_OPEN, OT_A_PLACE_ART, OT_A_PICK_UP_ART,
 OT_A_SELL_ART, OT_A_REWARD, OT_A_RELIC, OT_A_READY, OT_N_REWARD_IDS, OT_N_RELIC_IDS,
 OT_N_SECTOR_IDS, OT_REROLL_COST, OT_MERGE_COUNT, OT_MAX_GRADE, OT_PRICE, OT_ART_PRICE,
 OT_FLOWING, OT_SECTOR, OT_HDR) = range(49)
# OT_PRICE: per kind id, its price; OT_ART_PRICE: per artifact, its price; OT_FLOWING: per core,
# 1 if it has a sun flow (an element to choose); OT_SECTOR: per cell, its outer-ring sector or -1.
#
# of (float64): the divisors of the observation's scalars, the grade and power scales.
(OF_MANA, OF_ROUND_CAP, OF_LAMPS, OF_WINS, OF_HAND_MAX, OF_ART_MAX, OF_COST_MAX, OF_ACTION_CAP,
 OF_BOSS_EVERY, OF_RANKS, OF_MAX_GRADE, OF_LOG_SCALE, OF_HDR) = range(13)


# The layout above as one number. numba's disk cache of the kernel is invalidated by changes to
# kernel.py only, yet the kernel compiles these constants in: `fast._kernel()` compares this with
# the number the cached kernel was compiled with and recompiles on a difference.
LAYOUT_SIGNATURE = zlib.crc32(repr((
    sorted((name, value) for name, value in globals().items()
           if name.isupper() and type(value) is int),
    sorted(KIND_ID.items()))).encode())
