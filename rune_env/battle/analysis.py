"""What a board gives each rune: the static set-up of a side and the power of every rune now.

`SideSetup` is fixed at battle start (interval, max HP, wards, seal cap, turn order, the combined
modifiers of core, boss rules and relics). `analyse(setup, occupants, sealed)` computes, for the
board as it is now (seals and reserves change it), every casting rune's power with the list of
multipliers that make it, the flows that act on it (with their strength), whether a delay
holds it, and every amplify's factor. The reference engine calls it again only when a seal, an
unseal or a reserve changes the board; `explain` prints its breakdown.

Power (RULES D-12) = effect value of one hit x grade x ring x flows (flow table order) x
attunement x resonance x amplifies (casting order) x opposition x delay x core x boss x relics
(x the dice variant's sickness or poisoning, passed as `extra`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..rules.board import Board
from ..rules.config import CASTING_KINDS, Rules
from ..rules.geometry import Geometry, geometry
from ..rules.hp import round_max_hp

Occupant = tuple[str, int]  # (kind, base grade)


@dataclass(frozen=True)
class Mods:
    """The effects of a side's core, boss rules and relics, combined."""

    interval_x: float
    hp_x: float
    extra_erosions: int
    outermost_wards: int
    loose_resonance: bool
    reserve_any_kind: bool
    resonance_add: float
    seal_cap_divisor: int
    amplify_increase_x: float
    flow_increase_x: float
    core_flow_strength: float
    unseal_after_ms: int | None
    # power multipliers by group, as (name, modifier) for the breakdown
    core_mod: object | None
    boss_mods: tuple
    relic_mods: tuple

    @classmethod
    def of(cls, board: Board, rules: Rules) -> "Mods":
        spec = rules.spec
        core = spec.cores[board.core] if board.core else None
        bosses = tuple((b, spec.boss_rules[b]) for b in board.boss_rules)
        relics = tuple((r, spec.relics[r]) for r in board.relics)
        allm = ([core] if core else []) + [m for _, m in bosses] + [m for _, m in relics]
        interval_x = 1.0
        hp_x = 1.0
        amp_x = 1.0
        flow_x = 1.0
        for m in allm:
            interval_x *= m.interval_x
            hp_x *= m.hp_x
            amp_x *= m.amplify_increase_x
            flow_x *= m.flow_increase_x
        divisors = [m.seal_cap_divisor for m in allm if m.seal_cap_divisor is not None]
        unseals = [m.unseal_after_s for m in allm if m.unseal_after_s is not None]
        return cls(
            interval_x=interval_x, hp_x=hp_x,
            extra_erosions=sum(m.extra_erosions for m in allm),
            outermost_wards=sum(m.outermost_wards for m in allm),
            loose_resonance=any(m.loose_resonance for m in allm),
            reserve_any_kind=any(m.reserve_any_kind for m in allm),
            resonance_add=sum(m.resonance_add for m in allm),
            seal_cap_divisor=max(divisors) if divisors else spec.erosion.seal_cap_divisor,
            amplify_increase_x=amp_x, flow_increase_x=flow_x,
            core_flow_strength=max((m.core_flow_strength for m in allm), default=0.0),
            unseal_after_ms=rules.ms(min(unseals)) if unseals else None,
            core_mod=(board.core, core) if core else None, boss_mods=bosses, relic_mods=relics,
        )


@dataclass(frozen=True)
class SideSetup:
    """Everything about one side that is fixed when the battle starts."""

    rules: Rules
    geo: Geometry
    board: Board
    mods: Mods
    interval_ms: int
    max_hp: float
    turn_cells: tuple[int, ...]          # cells with a turn, in casting order
    cycle_turns: int                     # D-50: turns a cycle lasts, rest turns included (0: none)
    grade_bonus: tuple[int, ...]         # per cell: mana spring bonus
    wards: tuple[int, ...]               # per cell: wards at start
    doll_uses: int
    seal_cap: int
    erosions_per_cycle: int
    outermost_ring: int                  # D-34: outermost ring with runes at start (0: none)
    storm_budget_ms: int

    @classmethod
    def of(cls, board: Board, rules: Rules) -> "SideSetup":
        spec = rules.spec
        geo = geometry(rules.radius)
        mods = Mods.of(board, rules)
        n = geo.n_cells
        # at least 1 ms by construction: each turn moves the clock on, so the battle loop ends
        # at battle.duration_s whatever the rules (valid rules never round to 0: rules/limits.py)
        interval_ms = max(1, rules.ms(spec.battle.base_interval_s * mods.interval_x))
        if board.max_hp is not None:
            max_hp = board.max_hp
        else:
            max_hp = round_max_hp(rules, board.round)
        max_hp *= mods.hp_x
        turn_cells = tuple(c for c in sorted(board.runes) if board.runes[c][0] in CASTING_KINDS)
        bonus = [0] * n
        wards = [0] * n
        doll_uses = 0
        for cell, art in board.artifacts.items():
            a = spec.artifacts[art]
            doll_uses += a.absorbs
            for c in geo.reach(cell):
                # DECISION: mana springs do not stack (one grade higher, however many reach)
                bonus[c] = max(bonus[c], a.grade_bonus)
                if c in board.runes:
                    wards[c] += a.wards
        # D-50: a cycle lasts at least min_cycle_turns turns; the turns past the turn cells are
        # rest turns. A side without turn cells never acts, so it has no rest turns either.
        cycle_turns = max(len(turn_cells), spec.battle.min_cycle_turns) if turn_cells else 0
        outermost = max((geo.ring[c] for c in board.runes), default=0)
        for c, (kind, _) in board.runes.items():
            if geo.ring[c] == outermost:
                wards[c] += mods.outermost_wards
                if kind == "earth":
                    wards[c] += spec.runes.earth.outermost_wards
        return cls(
            rules=rules, geo=geo, board=board, mods=mods, interval_ms=interval_ms, max_hp=max_hp,
            turn_cells=turn_cells, cycle_turns=cycle_turns, grade_bonus=tuple(bonus),
            wards=tuple(wards), doll_uses=doll_uses,
            # D-32, D-51: floor(n / divisor), at least seal_cap_min
            seal_cap=max(spec.erosion.seal_cap_min, len(board.runes) // mods.seal_cap_divisor),
            erosions_per_cycle=spec.erosion.per_cycle + mods.extra_erosions,
            outermost_ring=outermost, storm_budget_ms=rules.ms(spec.flow_limits.storm_budget_s),
        )

    @property
    def rest_turns(self) -> int:
        """D-50: the rest turns at the end of each of the side's cycles."""
        return self.cycle_turns - len(self.turn_cells)

    def effective_grade(self, cell: int, grade: int) -> int:
        """D-11a: a mana spring's +1 counts, up to the highest grade."""
        return min(self.rules.max_grade, grade + self.grade_bonus[cell])


@dataclass
class RunePower:
    """A casting rune's power now, and what makes it."""

    kind: str
    grade: int                      # effective grade
    power: float
    multipliers: list[tuple[str, float]] = field(default_factory=list)
    flows: dict[str, float] = field(default_factory=dict)  # flow id -> strength (1, or the core's)
    delayed: bool = False
    # D-54: the product of the amplify factors reaching it when that is over the cap (the power
    # then uses the cap: the multiplier AMPLIFY_CAP); None when no cap applies
    amplify_uncapped: float | None = None


# the name of the multiplier that replaces a rune's amplifies when their product is capped (D-54)
AMPLIFY_CAP = "amplify_cap"


@dataclass
class Analysis:
    powers: dict[int, RunePower]         # casting runes that are not sealed
    amplify_factor: dict[int, float]     # amplify cells (not sealed) -> factor
    resonance: dict[int, float]          # cells in a resonance pattern -> multiplier
    resonance_fold: dict[int, int]       # ... and the fold of the pattern that counts
    reflect: float                       # share of attack damage reflected while barrier > 0
    effective_grade: dict[int, int]      # every occupied cell


def flow_multiplier(m: float, strength: float, increase_x: float) -> float:
    """A flow's multiplier at a strength (the sun's half effect) and with mana vein (D-35, D-37)."""
    return 1.0 + (m - 1.0) * strength * increase_x


def analyse(setup: SideSetup, occ: list[Occupant | None], sealed: list[bool],
            extra: tuple[str, float] | None = None) -> Analysis:
    """`extra`: a last (name, multiplier) on every casting rune's power, after the relics: the
    dice variant's sickness or poisoning (D-12, D-47)."""
    rules, geo = setup.rules, setup.geo
    n = geo.n_cells
    live = [occ[c] is not None and not sealed[c] for c in range(n)]
    kind = [occ[c][0] if occ[c] is not None else None for c in range(n)]
    egrade = {c: setup.effective_grade(c, occ[c][1]) for c in range(n) if occ[c] is not None}
    resonance, resonance_fold = _resonance(setup, live, kind)
    feeders, amplifiers = _feeders(setup, live, kind)
    amplify_factor = _amplify_factors(setup, live, kind, egrade, resonance)

    powers: dict[int, RunePower] = {}
    reflect = 0.0
    for c in range(n):
        if not live[c] or kind[c] not in rules.casting_kinds:
            continue
        powers[c] = _rune_power(setup, c, live, kind, egrade[c], feeders[c], amplifiers[c],
                                resonance, amplify_factor, extra)
        for fid, strength in powers[c].flows.items():
            reflect += rules.flow_by_id[fid].reflect * strength
    reflect = min(reflect, rules.spec.flow_limits.reflect_cap)
    return Analysis(powers=powers, amplify_factor=amplify_factor, resonance=resonance,
                    resonance_fold=resonance_fold,
                    reflect=reflect, effective_grade=egrade)


def _resonance(setup: SideSetup, live: list[bool], kind: list[str | None]
               ) -> tuple[dict[int, float], dict[int, int]]:
    """The resonance multiplier of each cell in a pattern, and the fold of the pattern that counts.

    For every pattern whose cells all hold a live rune of one kind (resonators count as any kind,
    at least one rune of the kind itself), every rune of that kind grows; where patterns overlap
    the strongest counts. Resonators never grow."""
    geo, mods = setup.geo, setup.mods
    table = "loose" if mods.loose_resonance else "normal"
    resonance: dict[int, float] = {}
    resonance_fold: dict[int, int] = {}
    for pattern in setup.rules.spec.resonance.patterns:
        mult = getattr(pattern, table) + mods.resonance_add
        for _ring, cells in geo.patterns[pattern.fold]:
            if not all(live[c] for c in cells):
                continue
            kinds = {kind[c] for c in cells if kind[c] != "resonator"}
            if len(kinds) != 1:
                continue
            for c in cells:
                if kind[c] != "resonator" and mult > resonance.get(c, 0.0):
                    resonance[c] = mult
                    resonance_fold[c] = pattern.fold
    return resonance, resonance_fold


def _feeders(setup: SideSetup, live: list[bool], kind: list[str | None]
             ) -> tuple[list[list[tuple[str, float]]], list[set[int]]]:
    """Per cell: (kind, strength) of what flows into it (inward neighbours, the sun into ring 1,
    the runes around a node), and the amplify cells that amplify it."""
    geo, mods = setup.geo, setup.mods
    n = geo.n_cells
    feeders: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    amplifiers: list[set[int]] = [set() for _ in range(n)]
    for c in range(n):
        if not live[c]:
            continue
        for inner in geo.inward[c]:
            if live[inner]:
                feeders[c].append((kind[inner], 1.0))
                if kind[inner] == "amplify":
                    amplifiers[c].add(inner)
        if geo.ring[c] == 1 and mods.core_flow_strength > 0 and setup.board.sun_element:
            feeders[c].append((setup.board.sun_element, mods.core_flow_strength))
    for node in range(n):
        if not (live[node] and kind[node] == "node"):
            continue
        # D-19: the runes adjacent to one node flow into and amplify each other; nodes do not chain
        linked = [c for c in geo.neighbors[node] if live[c] and kind[c] != "node"]
        for a in linked:
            for b in linked:
                if a != b:
                    feeders[b].append((kind[a], 1.0))
                    if kind[a] == "amplify":
                        amplifiers[b].add(a)
    return feeders, amplifiers


def _amplify_factors(setup: SideSetup, live: list[bool], kind: list[str | None],
                     egrade: dict[int, int], resonance: dict[int, float]) -> dict[int, float]:
    """Each live amplify's factor: its increase by grade, grown by its resonance and mana vein."""
    rules, mods = setup.rules, setup.mods
    amp_spec = rules.spec.runes.amplify
    return {
        c: 1.0 + amp_spec.increase * rules.grade_x[egrade[c] - 1] * resonance.get(c, 1.0)
        * mods.amplify_increase_x
        for c in range(setup.geo.n_cells) if live[c] and kind[c] == "amplify"}


def _rune_power(setup: SideSetup, c: int, live: list[bool], kind: list[str | None], g: int,
                feeders: list[tuple[str, float]], amplifiers: set[int],
                resonance: dict[int, float], amplify_factor: dict[int, float],
                extra: tuple[str, float] | None) -> RunePower:
    """The power of the live casting rune in cell `c` of effective grade `g`, multiplier by
    multiplier in the order of D-12 (the module docstring)."""
    rules, geo = setup.rules, setup.geo
    spec = rules.spec
    k = kind[c]
    mults: list[tuple[str, float]] = [("grade", rules.grade_x[g - 1]),
                                      ("ring", rules.ring_x[geo.ring[c] - 1])]
    flows, flow_mults = _flow_multipliers(setup, k, feeders)
    mults += flow_mults
    if c in resonance:
        mults.append(("resonance", resonance[c]))
    amplifies = [(f"amplify:{geo.name(a)}", amplify_factor[a]) for a in sorted(amplifiers)]
    uncapped = _amplify_over_cap(spec.runes.amplify.max_factor, amplifies)
    if uncapped is None:
        mults += amplifies
    else:
        # D-54: the product is over the cap, so the cap stands in the amplifies' place
        mults.append((AMPLIFY_CAP, spec.runes.amplify.max_factor))
    if any(live[m] and kind[m] in rules.opposites[k] for m in geo.neighbors[c]):
        mults.append(("opposition", spec.opposition.multiplier))
    delayed = any(live[i] and kind[i] == "delay" for i in geo.inward[c])
    if delayed:
        mults.append(("delay", spec.runes.delay.power_x))
    mults += _modifier_multipliers(setup.mods, k, geo.ring[c] == setup.outermost_ring)
    if extra is not None and extra[1] != 1.0:
        mults.append(extra)
    power = rules.base_value[k]
    for _, x in mults:
        power *= x
    return RunePower(kind=k, grade=g, power=power, multipliers=mults, flows=flows,
                     delayed=delayed, amplify_uncapped=uncapped)


def _amplify_over_cap(cap: float | None, amplifies: list[tuple[str, float]]) -> float | None:
    """D-54: the product of the amplify factors (casting order) if it exceeds the cap, else None
    (no cap, or under it: the factors then apply one by one, as without a cap)."""
    if cap is None or not amplifies:
        return None
    product = 1.0
    for _, x in amplifies:
        product *= x
    return product if product > cap else None


def _flow_multipliers(setup: SideSetup, k: str, feeders: list[tuple[str, float]]
                      ) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """The flows into a rune of kind `k` (flow id -> strength: a source kind's strongest feeder),
    and their multipliers in flow table order, then attunement (a feeder of its own kind)."""
    rules, mods = setup.rules, setup.mods
    flows: dict[str, float] = {}
    mults: list[tuple[str, float]] = []
    best: dict[str, float] = {}
    for src, strength in feeders:
        if strength > best.get(src, 0.0):
            best[src] = strength
    for flow in rules.flows_into[k]:
        strength = best.get(flow.from_, 0.0)
        if strength > 0:
            flows[flow.id] = strength
            m = flow_multiplier(flow.multiplier, strength, mods.flow_increase_x)
            if m != 1.0:
                mults.append((f"flow:{flow.id}", m))
    if k in best:
        mults.append(("attunement", flow_multiplier(rules.spec.attunement.multiplier, best[k],
                                                    mods.flow_increase_x)))
    return flows, mults


def _modifier_multipliers(mods: Mods, k: str, outermost: bool) -> list[tuple[str, float]]:
    """The power multipliers of the core, then the boss rules, then the relics on a rune of kind
    `k` (in the side's outermost ring or not), each that is not 1."""
    groups = (("core", (mods.core_mod,) if mods.core_mod is not None else ()),
              ("boss", mods.boss_mods), ("relic", mods.relic_mods))
    mults: list[tuple[str, float]] = []
    for group, mod_list in groups:
        for name, m in mod_list:
            x = m.power_x * (m.outermost_power_x if outermost else 1.0)
            x *= m.power_x_by_kind.get(k, 1.0)
            if x != 1.0:
                mults.append((f"{group}:{name}", x))
    return mults


def affinity_multipliers(rules: Rules, opponent: SideSetup) -> dict[str, float]:
    """D-26: each attacking kind's damage factor against the opponent's board at battle start."""
    spec = rules.spec.affinity
    weights: dict[str, float] = {}
    total = 0.0
    for c, (k, g) in opponent.board.runes.items():
        if k in rules.casting_kinds:
            w = rules.grade_x[opponent.effective_grade(c, g) - 1]
            weights[k] = weights.get(k, 0.0) + w
            total += w
    out = {}
    for k in rules.attack_kinds:
        if total <= 0:
            out[k] = 1.0
            continue
        # summed in the kinds' table order (not set order), so the last bit never varies
        beaten = sum(weights.get(b, 0.0) for b in rules.kinds if b in rules.beats[k]) / total
        beating = sum(weights.get(b, 0.0) for b in rules.kinds if b in rules.beaten_by[k]) / total
        out[k] = min(spec.max, max(spec.min, 1.0 + spec.slope * (beaten - beating)))
    return out


def overdrive_multiplier(rules: Rules, t_ms: int) -> float:
    """D-27: x (1 + per_second * max(0, floor(t) - start))."""
    od = rules.spec.overdrive
    return 1.0 + od.per_second * max(0.0, math.floor(t_ms / 1000) - od.start_s)
