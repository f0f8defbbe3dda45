"""The compiled battle kernel's arrays: their layouts, and rules and boards as flat arrays.

Two compilations, both plain Python and cheap:

* `compile_rules(rules)` turns a `Rules` into two flat arrays, `rules_i` (int64) and `rules_f`
  (float64), cached per rules hash. Two flat arrays rather than many small ones (or a namedtuple
  of arrays) keep numba's compile time low: every array argument costs compile time at every
  call site. Nothing the config holds is a literal here or in the kernel; only the kinds (fixed
  by the code, `rules.config.KINDS`: kind id = index in KINDS) are.
* `encode_pairs(pairs, rules)` / `encode_board(board, rules)` write boards into one flat int32
  array, one variable-length record per board, plus a float64 array of each board's max HP
  before its modifiers' hp_x (the board's own `max_hp`, else `rules.hp.round_max_hp` of its
  round: the kernel does not know the formula).
  The per-side set-up (`SideSetup.of`: modifiers, interval, max HP, wards, spring bonuses and
  effective grades, seal cap, turn cells, outermost ring; then affinity) is derived from these
  records inside the kernel, once per battle.

The layouts, all of them (the constants below name every index):

rules_i, the ints. A header of RI_HEADER entries, then blocks:
    RI_* entries      counts and scalars: cells, flows, resonance orbits and their longest
                      length, modifiers, artifacts, the highest grade, patterns; the drizzle
                      cap, erosions per cycle, the seal-cap divisor and floor, the delay
                      period, the earth's outermost wards, the balance rules (D-50..D-52)
    AT_* entries      the offset of each block (AT_*_F and AT_*_X ones: offsets into rules_f)
    AT_GEOMETRY       per cell GEO_WIDTH ints (GEO_*): ring, neighbours, inward and outward
                      cells (a count, then up to 6 ids each), the outward cells' bit mask
    AT_KINDS          per kind KIND_WIDTH ints (KIND_*): hits, attacks or not, the number of
                      flows feeding it, the kinds it beats and those beating it (a count then
                      the ids, in table order), its opposite kinds as a mask (bit 1 + kind id)
    AT_INTO           per kind n_flows ints: the flows feeding it in table order (-1 after)
    AT_FLOWS          per flow FLOW_WIDTH ints (FLOW_*): from, to, erosions, drizzle charges,
                      extra casts, overflow into barrier
    AT_ORBITS         per resonance orbit 2 + RI_ORBIT_LEN ints (ORBIT_*): pattern, length,
                      cells (-1 after)
    AT_ORBIT_MASKS    per orbit the bit mask of its cells (a quick test before the cells)
    AT_MODS           per modifier (cores, then boss rules, then relics) MOD_WIDTH ints
                      (MOD_*): extra erosions, outermost wards, loose resonance, reserve of
                      any kind, seal-cap divisor (-1: none)
    AT_ARTS           per artifact ART_WIDTH ints (ART_*): wards, grade bonus, absorbs
    AT_UNSEALS        per grade the light's unseals

rules_f, the floats. N_F_SCALARS scalars (F_*: durations, HP, tolerances, caps and factors),
then blocks found through rules_i's header:
    AT_KINDS_F        per kind KINDF_WIDTH floats (KINDF_*): base value, barrier wear, own curse
                      and freeze durations
    AT_FLOWS_F        per flow FLOWF_WIDTH floats (FLOWF_*): multiplier, reflect, barrier strip,
                      storm delay, curse, curse and freeze duration factors
    AT_MODS_F         per modifier MODF_WIDTH floats (MODF_*): interval, HP, amplify and flow
                      factors, resonance add, core flow strength, unseal delay (-1: none), then
                      the power factor of kind k at MODF_POWER_X + 2 k (+1 on the outermost
                      ring), computed exactly as the reference multiplies it
    AT_GRADE_X, AT_RING_X, AT_COPY_X    per grade / ring / grade: the power and copy factors
    AT_PATTERN_X, AT_LOOSE_X            per resonance pattern: its multiplier, normal and loose
    AT_OVERDRIVE      the overdrive multiplier of every second of the battle (t // 1000)

The kernel's work arrays, one set per worker thread (`kernel.make_state`), reused for every
battle:
    cells    int64   [2 + 2 MEMO, n_cells, w]  rows 0 and 1: side s's cells (CELL_* columns):
                     occupant kind, grade, effective grade, spring bonus, sealed, wards, seal
                     serial, frozen until, delay counter, index among the occupied cells, the
                     amplifiers reaching it (a list). Rows 2..: the analyses, MEMO per side
                     (AN_* columns: delayed, the acting flows)
    cells_f  float64 [2 + 2 MEMO, n_cells, w]  rows 0 and 1: the analysis' scratch per side and
                     cell (CELLF_*: amplify factor, resonance, the feeders' best strength per
                     kind); rows 2..: the analyses (ANF_*: power, the acting flows' strengths)
    sides    int64   [2, N_ROWS, w]  per side, rows ROW_*: the scalars (ROW_SCALARS, S_*
                     columns), the modifier list, the hand (kind, grade, used), the scheduled
                     warding-seal unseals (time, cell, serial), the due ones, a node's links,
                     the cast's snapshot of acting flows, the occupied cells, the orbits that
                     can complete, the memo's keys, the live kinds, the turn cells. The
                     battle's clock and outcome are side 0's S_TIME, S_WINNER, S_STATUS
    sides_f  float64 [2, N_ROWS_F, w]  per side, rows ROWF_*: the float scalars (ROWF_SCALARS,
                     SF_* columns), the affinity per attack kind, the resonance multiplier per
                     pattern, the snapshot's flow strengths, the affinity weights, the memo's
                     reflect shares

Cell masks (AT_ORBIT_MASKS, GEO_OUTWARD_MASK): cell c is bit c, the cells from MASK_BITS on
share bit MASK_BITS (a mask test is then only a pre-check).

A board record (ints), at `offsets[b]`: REC_HEADER ints (REC_*: round, core (modifier id or
-1), sun element (kind id or -1), n_runes, n_artifacts, n_hand, n_boss_rules, n_relics), then
n_runes x (cell, kind, grade) in `Board.runes` dict order (the reference sums the affinity
weights in that order), n_artifacts x (cell, artifact), n_hand x (kind, grade), the boss rules'
modifier ids, the relics' modifier ids.

numba's disk cache of a compiled module is keyed by that file alone, yet the kernel compiles
this module's constants in: `KERNEL_SIGNATURE` (a hash of the sources of compile.py and
kernel.py and of the kinds) is compiled into the kernel too, and the package compares the two
at load (`rune_env.battle.fast.fresh_module`). `source_signature` serves other compiled
modules that call into the kernel the same way.
"""
from __future__ import annotations

import hashlib
from array import array
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...rules.config import ATTACK_KINDS, CASTING_KINDS, KINDS, Rules
from ..analysis import overdrive_multiplier
from ...rules.geometry import geometry
from ...rules.hp import round_max_hp

KIND_ID = {k: i for i, k in enumerate(KINDS)}
N_KINDS = len(KINDS)
N_CASTING = len(CASTING_KINDS)
assert KINDS[:N_CASTING] == CASTING_KINDS   # casting kinds are ids 0..N_CASTING-1

# -- board records ------------------------------------------------------------------------------
(REC_ROUND, REC_CORE, REC_SUN, REC_N_RUNES, REC_N_ARTS, REC_N_HAND, REC_N_BOSSES, REC_N_RELICS,
 REC_HEADER) = range(9)

# -- rules_i: the header ------------------------------------------------------------------------
(RI_N_CELLS, RI_N_FLOWS, RI_N_ORBITS, RI_ORBIT_LEN, RI_N_MODS, RI_N_ARTS, RI_MAX_GRADE,
 RI_N_PATTERNS, RI_DRIZZLE_MAX, RI_EROSIONS, RI_SEAL_DIVISOR, RI_DELAY_PERIOD, RI_EARTH_WARDS,
 AT_GEOMETRY, AT_KINDS, AT_INTO, AT_FLOWS, AT_ORBITS, AT_MODS, AT_ARTS, AT_UNSEALS, AT_KINDS_F,
 AT_FLOWS_F, AT_MODS_F, AT_GRADE_X, AT_RING_X, AT_COPY_X, AT_PATTERN_X, AT_LOOSE_X,
 AT_ORBIT_MASKS, AT_OVERDRIVE, RI_MIN_CYCLE, RI_SEAL_CAP_MIN, RI_MAX_FROZEN, RI_HEADER) = range(35)
MASK_BITS = 62
# rules_i blocks: geometry per cell, per kind, per flow, per orbit, per modifier, per artifact
(GEO_RING, GEO_N_NEIGHBOURS, GEO_NEIGHBOURS, GEO_N_INWARD, GEO_INWARD, GEO_N_OUTWARD, GEO_OUTWARD,
 GEO_OUTWARD_MASK, GEO_WIDTH) = 0, 1, 2, 8, 9, 15, 16, 22, 23
KIND_HITS, KIND_ATTACKS, KIND_N_INTO, KIND_BEATS = 0, 1, 2, 3
KIND_BEATEN_BY = KIND_BEATS + 1 + N_KINDS
KIND_OPPOSITES = KIND_BEATEN_BY + 1 + N_KINDS
KIND_WIDTH = KIND_OPPOSITES + 1
(FLOW_FROM, FLOW_TO, FLOW_EROSIONS, FLOW_DRIZZLE, FLOW_EXTRA_CASTS, FLOW_OVERFLOW,
 FLOW_WIDTH) = range(7)
ORBIT_PATTERN, ORBIT_LEN, ORBIT_CELLS = 0, 1, 2
MOD_EROSIONS, MOD_OUTER_WARDS, MOD_LOOSE, MOD_ANY_KIND, MOD_SEAL_DIVISOR, MOD_WIDTH = range(6)
ART_WARDS, ART_GRADE_BONUS, ART_ABSORBS, ART_WIDTH = range(4)

# -- rules_f: the scalars, then blocks per kind, per flow, per modifier -------------------------
(F_DURATION_S, F_BASE_INTERVAL_S, F_DRAW_TOL, F_DEATH, F_STRONG_TOL, F_CURSE_HEAL_X,
 F_REFLECT_CAP, F_DRIZZLE_X, F_STORM_BUDGET_S, F_ATTUNE, F_OPP_MULT, F_AFF_SLOPE, F_AFF_MIN,
 F_AFF_MAX, F_AMP_INC, F_DELAY_X, F_AMP_CAP, N_F_SCALARS) = range(18)
KINDF_BASE, KINDF_WEAR, KINDF_CURSE_S, KINDF_FREEZE_S, KINDF_WIDTH = range(5)
(FLOWF_MULT, FLOWF_REFLECT, FLOWF_STRIP, FLOWF_STORM_S, FLOWF_CURSE_S, FLOWF_CURSE_X,
 FLOWF_FREEZE_X, FLOWF_WIDTH) = range(8)
(MODF_INTERVAL_X, MODF_HP_X, MODF_AMPLIFY_X, MODF_FLOW_X, MODF_RESONANCE_ADD, MODF_CORE_FLOW,
 MODF_UNSEAL_S, MODF_POWER_X) = range(8)
MODF_WIDTH = MODF_POWER_X + 2 * N_KINDS

# -- the kernel's work arrays: cells, cells_f -----------------------------------------------------
# a side's cells (rows 0, 1)
(CELL_KIND, CELL_GRADE, CELL_EGRADE, CELL_BONUS, CELL_SEALED, CELL_WARDS, CELL_SERIAL,
 CELL_FROZEN_UNTIL, CELL_DELAY_COUNT, CELL_N_AMPS, CELL_OCC_INDEX, CELL_AMPS) = range(12)
AMP_CAP = 18                 # distinct amplifiers of one cell: all lie within distance 2 (18)
CELL_WIDTH = CELL_AMPS + AMP_CAP
CELLF_AMP_FACTOR, CELLF_RESONANCE, CELLF_FEED = 0, 1, 2    # CELLF_FEED + kind: a strength
CELLF_WIDTH = CELLF_FEED + N_CASTING
# the analyses: entry e of side s is row 2 + s * MEMO + e of cells (AN_*) and cells_f (ANF_*),
# for the live casting runes; S_ANALYSIS is the side's current row. (Which runes have a power
# needs no analysis: the live casting runes, see `_casts`.)
AN_DELAYED, AN_N_FLOWS, AN_FLOWS = 0, 1, 2
ANF_POWER, ANF_STRENGTHS = 0, 1
MEMO = 8                     # analyses remembered per side (see `analyse`)
MEMO_OCC = 62                # memo only for boards of at most this many runes (a 64-bit mask)

# -- the kernel's work arrays: sides, sides_f -----------------------------------------------------
# rows of sides (ROW_TURN: the turn cells in casting order; ROW_LIVE: per cell the kind of its
# live rune, -1 if none or sealed, as of the set-up, then of the last analysis computed)
(ROW_SCALARS, ROW_MODS, ROW_HAND_KIND, ROW_HAND_GRADE, ROW_HAND_USED, ROW_UNSEAL_T,
 ROW_UNSEAL_CELL, ROW_UNSEAL_SERIAL, ROW_DUE, ROW_LINKED, ROW_SNAP_FLOWS, ROW_OCCUPIED,
 ROW_ORBITS, ROW_MEMO_KEY, ROW_MEMO_EPOCH, ROW_LIVE, ROW_TURN, N_ROWS) = range(18)
# rows of sides_f
(ROWF_SCALARS, ROWF_AFFINITY, ROWF_RESONANCE_X, ROWF_SNAP_STRENGTHS, ROWF_WEIGHTS,
 ROWF_MEMO_REFLECT, N_ROWS_F) = range(7)
# the int scalars (sides[s, ROW_SCALARS]); S_TIME, S_WINNER and S_STATUS: side 0's row only.
# S_CYCLE_LEN: the turns of a cycle, rest turns included (D-50; 0 without turn cells);
# S_SEALED_MASK: a bit per occupied cell (CELL_OCC_INDEX), S_EPOCH: reserves so far (the memo's
# key); S_MIMICS: the cells holding a mimic (a cell mask)
(S_INTERVAL, S_DOLL_USES, S_SEAL_CAP, S_EROSIONS, S_OUTER_RING, S_UNSEAL_MS, S_ANY_KIND, S_SUN,
 S_N_TURN, S_N_MODS, S_N_HAND, S_CURSED_UNTIL, S_DRIZZLE_CHARGES, S_BUDGET, S_BUDGET_MAX,
 S_TURN_POS, S_NEXT_TURN, S_CASTS, S_TURNS, S_SEALED, S_UNSEALED, S_N_UNSEALS, S_DIRTY,
 S_RECORD, S_N_OCC, S_N_ORBITS, S_TARGET, S_TARGET_OK, S_SEALED_MASK, S_EPOCH, S_MEMO_NEXT,
 S_MEMO_USED, S_MEMO_ON, S_ANALYSIS, S_MIMICS, S_CYCLE_LEN, S_RESTS, S_TIME, S_WINNER, S_STATUS,
 N_S) = range(41)
# the float scalars (sides_f[s, ROWF_SCALARS])
SF_MAX_HP, SF_HP, SF_BARRIER, SF_AMP_X, SF_FLOW_X, SF_CORE_FLOW, SF_REFLECT, N_SF = range(8)


def source_signature(files, values=()) -> int:
    """A 56-bit number from the text of `files` (paths) and the repr of `values`: compiled into
    a numba module as a constant and compared with the current one at load (a file that cannot
    be read counts by its name only)."""
    digest = hashlib.sha256()
    for path in files:
        path = Path(path)
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(path.name.encode())
    digest.update(repr(values).encode())
    return int.from_bytes(digest.digest()[:7], "little")


_HERE = Path(__file__).resolve().parent
KERNEL_SOURCES = (_HERE / "compile.py", _HERE / "kernel.py")
KERNEL_SIGNATURE = source_signature(KERNEL_SOURCES, (KINDS, CASTING_KINDS))


class NameIds(NamedTuple):
    """The records' name tables: modifier ids by (group, name), artifact ids by name, and the
    modifier ids of each group ("core", "boss", "relic") by name."""

    mod_id: dict
    art_id: dict
    by_group: dict


class CompiledRules(NamedTuple):
    rules_i: np.ndarray
    rules_f: np.ndarray
    names: NameIds


_CACHE: dict[str, CompiledRules] = {}


def _name_ids(rules: Rules) -> NameIds:
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
    return NameIds(mod_id, art_id, by_group)


def _mask(cells) -> int:
    """The bit mask of `cells` (see MASK_BITS)."""
    m = 0
    for c in cells:
        m |= 1 << min(c, MASK_BITS)
    return m


def _modifiers(rules: Rules) -> list:
    spec = rules.spec
    return (list(spec.cores.values()) + list(spec.boss_rules.values())
            + list(spec.relics.values()))


def _orbits(rules: Rules) -> list:
    """(pattern index, cells) of every resonance orbit: each pattern over every ring."""
    geo = geometry(rules.radius)
    return [(p, cells) for p, pattern in enumerate(rules.spec.resonance.patterns)
            for _ring, cells in geo.patterns[pattern.fold]]


def _geometry_rows(geo) -> list[int]:
    rows = []
    for c in range(geo.n_cells):
        row = [0] * GEO_WIDTH
        row[GEO_RING] = geo.ring[c]
        row[GEO_OUTWARD_MASK] = _mask(geo.outward[c])
        for start, count, cells in ((GEO_NEIGHBOURS, GEO_N_NEIGHBOURS, geo.neighbors[c]),
                                    (GEO_INWARD, GEO_N_INWARD, geo.inward[c]),
                                    (GEO_OUTWARD, GEO_N_OUTWARD, geo.outward[c])):
            assert len(cells) <= 6
            row[count] = len(cells)
            row[start:start + len(cells)] = list(cells)
        rows.extend(row)
    return rows


def _kind_rows(rules: Rules) -> tuple[list[int], list[int]]:
    """The AT_KINDS rows and the AT_INTO lists."""
    flows = rules.spec.flows
    rows = []
    into = []
    for k in KINDS:
        row = [0] * KIND_WIDTH
        if k in ATTACK_KINDS:
            row[KIND_HITS] = rules.rune_specs[k].hits
            row[KIND_ATTACKS] = 1
        feeding = [i for i, f in enumerate(flows) if f.to == k]
        row[KIND_N_INTO] = len(feeding)
        for o in rules.opposites[k]:
            row[KIND_OPPOSITES] |= 1 << (1 + KIND_ID[o])
        for start, kinds in ((KIND_BEATS, [b for b in KINDS if b in rules.beats[k]]),
                             (KIND_BEATEN_BY, [b for b in KINDS if k in rules.beats[b]])):
            row[start] = len(kinds)
            row[start + 1:start + 1 + len(kinds)] = [KIND_ID[b] for b in kinds]
        rows.extend(row)
        into.extend(feeding + [-1] * (len(flows) - len(feeding)))
    return rows, into


def _compile_ints(rules: Rules) -> list[int]:
    """rules_i as a list."""
    spec = rules.spec
    geo = geometry(rules.radius)
    orbits = _orbits(rules)
    orbit_len = max((len(cells) for _, cells in orbits), default=0)
    header = [0] * RI_HEADER
    body: list[int] = []

    def block(key, values):
        header[key] = RI_HEADER + len(body)
        body.extend(int(v) for v in values)

    block(AT_GEOMETRY, _geometry_rows(geo))
    kind_rows, into = _kind_rows(rules)
    block(AT_KINDS, kind_rows)
    block(AT_INTO, into)
    block(AT_FLOWS, [v for f in spec.flows
                     for v in (KIND_ID[f.from_], KIND_ID[f.to], f.erosions, f.drizzle_charges,
                               f.extra_casts, int(f.overflow_to_barrier))])
    block(AT_ORBITS, [v for p, cells in orbits
                      for v in [p, len(cells)] + list(cells) + [-1] * (orbit_len - len(cells))])
    block(AT_ORBIT_MASKS, [_mask(cells) for _, cells in orbits])
    block(AT_MODS, [v for m in _modifiers(rules)
                    for v in (m.extra_erosions, m.outermost_wards, int(m.loose_resonance),
                              int(m.reserve_any_kind),
                              -1 if m.seal_cap_divisor is None else m.seal_cap_divisor)])
    block(AT_ARTS, [v for a in spec.artifacts.values()
                    for v in (a.wards, a.grade_bonus, a.absorbs)])
    block(AT_UNSEALS, spec.runes.light.unseals_by_grade)
    header[RI_N_CELLS] = geo.n_cells
    header[RI_N_FLOWS] = len(spec.flows)
    header[RI_N_ORBITS] = len(orbits)
    header[RI_ORBIT_LEN] = orbit_len
    header[RI_N_MODS] = len(_modifiers(rules))
    header[RI_N_ARTS] = len(spec.artifacts)
    header[RI_MAX_GRADE] = rules.max_grade
    header[RI_N_PATTERNS] = len(spec.resonance.patterns)
    header[RI_DRIZZLE_MAX] = spec.flow_limits.drizzle_max_charges
    header[RI_EROSIONS] = spec.erosion.per_cycle
    header[RI_SEAL_DIVISOR] = spec.erosion.seal_cap_divisor
    header[RI_DELAY_PERIOD] = spec.runes.delay.period
    header[RI_EARTH_WARDS] = spec.runes.earth.outermost_wards
    header[RI_MIN_CYCLE] = spec.battle.min_cycle_turns
    header[RI_SEAL_CAP_MIN] = spec.erosion.seal_cap_min
    header[RI_MAX_FROZEN] = spec.freeze.max_frozen
    return header + body


def _float_scalars(spec) -> list[float]:
    fs = [0.0] * N_F_SCALARS
    b = spec.battle
    fs[F_DURATION_S] = b.duration_s
    fs[F_BASE_INTERVAL_S] = b.base_interval_s
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
    # D-54: 0 stands for no cap (a cap is at least 1)
    cap = spec.runes.amplify.max_factor
    fs[F_AMP_CAP] = 0.0 if cap is None else cap
    return fs


def _kind_floats(rules: Rules) -> list[float]:
    out = []
    for k in KINDS:
        row = [0.0] * KINDF_WIDTH
        if k in CASTING_KINDS:
            r = rules.rune_specs[k]
            row[KINDF_BASE] = rules.base_value[k]
            # the same defaults the reference reads with getattr
            row[KINDF_WEAR] = getattr(r, "barrier_wear", 1.0)
            row[KINDF_CURSE_S] = getattr(r, "curse_s", 0.0)
            row[KINDF_FREEZE_S] = getattr(r, "freeze_s", 0.0)
        else:
            row[KINDF_WEAR] = 1.0
        out.extend(row)
    return out


def _mod_floats(rules: Rules) -> list[float]:
    out = []
    for m in _modifiers(rules):
        row = [m.interval_x, m.hp_x, m.amplify_increase_x, m.flow_increase_x, m.resonance_add,
               m.core_flow_strength, -1.0 if m.unseal_after_s is None else m.unseal_after_s]
        for k in KINDS:
            for outer in (False, True):
                # exactly the reference's expression (analysis.analyse)
                x = m.power_x * (m.outermost_power_x if outer else 1.0)
                x *= m.power_x_by_kind.get(k, 1.0)
                row.append(x)
        assert len(row) == MODF_WIDTH
        out.extend(row)
    return out


def _compile_floats(rules: Rules, header: list[int]) -> list[float]:
    """rules_f as a list; the offsets of its blocks go into `header` (rules_i's)."""
    spec = rules.spec
    body = _float_scalars(spec)

    def block(key, values):
        header[key] = len(body)
        body.extend(float(v) for v in values)

    block(AT_KINDS_F, _kind_floats(rules))
    block(AT_FLOWS_F, [v for f in spec.flows
                       for v in (f.multiplier, f.reflect, f.barrier_strip, f.storm_delay_s,
                                 f.curse_s, f.curse_duration_x, f.freeze_duration_x)])
    block(AT_MODS_F, _mod_floats(rules))
    block(AT_GRADE_X, rules.grade_x)
    block(AT_RING_X, rules.ring_x)
    block(AT_COPY_X, spec.runes.mimic.copy_x_by_grade)
    block(AT_PATTERN_X, [p.normal for p in spec.resonance.patterns])
    block(AT_LOOSE_X, [p.loose for p in spec.resonance.patterns])
    # the reference's overdrive multiplier (D-27) at every whole second of the battle: it
    # changes only there, so the kernel reads it at t // 1000
    block(AT_OVERDRIVE, [overdrive_multiplier(rules, 1000 * sec)
                         for sec in range(rules.ms(spec.battle.duration_s) // 1000 + 1)])
    return body


def compile_rules(rules: Rules) -> CompiledRules:
    """(rules_i, rules_f, names) for a Rules, cached by the rules hash; names are the records'
    name tables."""
    hit = _CACHE.get(rules.hash)
    if hit is not None:
        return hit
    ints = _compile_ints(rules)
    floats = _compile_floats(rules, ints)
    out = CompiledRules(np.array(ints, dtype=np.int64), np.array(floats, dtype=np.float64),
                        _name_ids(rules))
    _CACHE[rules.hash] = out
    return out


def _records(boards, rules: Rules):
    """The records of `boards` (module docstring) in one flat list: (flat, offsets, max_hp,
    hand_cap, mods_cap). One loop for every board, no call per board: this is most of the Python
    time of a batch."""
    _mod_id, art_id, by_group = compile_rules(rules).names
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
    """One board's record: (rules_i, rules_f, enc, hand_cap, mods_cap), for `BoardAnalyser`
    and `kernel.board_analysis` (which read the record at offset 0). `board` needs the
    attributes of a `Board` that the record holds (runes, artifacts, hand, boss_rules, relics,
    core, sun_element, round, max_hp)."""
    rules_i, rules_f, _ = compile_rules(rules)
    flat, _offsets, _max_hp, hand_cap, mods_cap = _records((board,), rules)
    return rules_i, rules_f, _int32(flat), hand_cap, mods_cap


def encode_pairs(pairs, rules: Rules):
    """Encode board pairs for the kernel.

    Returns (rules_i, rules_f, enc, offsets, max_hp, i0, i1, hand_cap, mods_cap): the rules
    arrays, the board records, each record's offset and max_hp, the record index of each pair's
    board 0 and board 1, and the largest hand and number of modifiers of a board. A board object
    that appears in several pairs (the same opponent) is encoded once.
    """
    rules_i, rules_f, _ = compile_rules(rules)
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
    enc = _int32(flat)
    offs = np.array(offsets, dtype=np.int64)
    return (rules_i, rules_f, enc, offs, _filled_max_hp(max_hp, enc, offs, rules),
            np.ascontiguousarray(pair_idx[:, 0]), np.ascontiguousarray(pair_idx[:, 1]),
            hand_cap, mods_cap)


def _filled_max_hp(max_hp: list, enc: np.ndarray, offs: np.ndarray, rules: Rules) -> np.ndarray:
    """The records' max HP as float64: a board's own, else its round's (`round_max_hp`, one
    call for the whole batch, on the rounds the records hold)."""
    out = np.array(max_hp, dtype=np.float64)
    unset = np.isnan(out)
    if unset.any():
        rounds = enc[offs[unset] + REC_ROUND].astype(np.int64)
        out[unset] = round_max_hp(rules, rounds)
    return out


# The layouts' constants, every upper-case name above: what `from .compile import *` gives the
# kernel (and nothing else of this module).
__all__ = [name for name in tuple(globals()) if name.isupper() and not name.startswith("_")]
