"""The reference battle engine: plain, readable, the source of truth for every faster engine.

`battle(board0, board1, rules)` plays one battle and returns a `BattleResult`. It is a pure,
deterministic function: no randomness (the dice variant draws from counter-based rolls keyed by
its seed), no global state.

The order of events (RULES D-8), at each millisecond t:
  1. effects whose end has come end (freezes, curses, warding-seal unseals);
  2. side 0's turn, if due: the cast (a thundercloud's extra cast right after), then each mimic's
     copy in casting order, then, if the turn closed the side's cycle, its erosions; a side with
     fewer turn cells than `battle.min_cycle_turns` ends each cycle with rest turns (D-50), which
     cast nothing, and its cycle closes at the last of them;
  3. side 1's turn, if still due (a storm cast in 2 can push it later).
Inside one cast (our decision where the rules give no order, see docs/RULES.md):
  cast event -> drizzle charge used (attacks) -> discharge strips barrier -> the hits (each may
  end the battle, then reflection) -> heal (then light's unseals) or barrier -> the curse (the
  longer of the rune's own and a flow's, times umbra) -> the freeze -> lava erosions -> storm
  delay -> drizzle charge given -> extra casts (thundercloud), each a whole cast again.

The dice variant (RULES.md section 12, D-46..D-49; on when `variant` or the rules' `variant` is
"dice"; see `dice.py` for the arithmetic):
  - every cast (a thundercloud's second cast and a mimic's copy included) draws one roll right
    after its cast event, on stream 0 with the side's cast counter n (from 0, counting every cast,
    rank-0 casts included); all its hits, its heal or its barrier use the rolled value
    power x roll / mean(die) (rank 0: the power itself); it adds its PL to the side's store;
  - at the end of each of a side's cycles, after its erosions, its cleanup (stream 1, counter from
    0): purge minimal(M), then the band: sickness or poisoning multiply the side's power after the
    relics (judged afresh at each cleanup), a burn of n D6 hits HP directly, a burst sets HP to 0.
    A burn or burst leaving HP <= the death threshold ends the battle (reason "burn" / "burst").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..rules.board import Board
from ..rules.config import Rules, default_rules
from .analysis import (Analysis, SideSetup, affinity_multipliers, analyse, flow_multiplier,
                       overdrive_multiplier)
from .dice import (STREAM_CAST, STREAM_CLEANUP, die_for_power, die_roll, magic_value, minimal,
                   reduced)
from .result import BattleResult

# the dice variant's bands (D-47), in order of the stored mana
BANDS = ("none", "sickness", "poisoning", "burst")


class BattleOver(Exception):
    """Raised inside the loop the moment a side is down; carries the winner."""

    def __init__(self, winner: int, reason: str = "knockout"):
        self.winner = winner
        self.reason = reason


@dataclass
class Side:
    """The mutable state of one side during a battle."""

    index: int
    setup: SideSetup
    occ: list                     # cell -> (kind, grade) or None
    sealed: list[bool]
    wards: list[int]
    hp: float
    barrier: float = 0.0
    seal_serial: list[int] = field(default_factory=list)   # bumps at each seal/replace
    frozen_until: list[int] = field(default_factory=list)
    curse_until: int = 0
    drizzle: int = 0
    storm_budget: int = 0
    turn_pos: int = 0
    next_turn: int | None = None
    delay_count: list[int] = field(default_factory=list)
    casts: int = 0
    turns: int = 0
    rests: int = 0                # D-50: rest turns taken
    sealed_total: int = 0         # runes sealed this battle (replaced ones included)
    unsealed_total: int = 0
    doll_uses: int = 0
    reserves: list = field(default_factory=list)     # [(slot, kind, grade)] still in hand
    pending_unseals: list = field(default_factory=list)  # [(t, cell, serial)]
    affinity: dict = field(default_factory=dict)    # attack kind -> factor vs the opponent
    # the dice variant: stored mana, band (index in BANDS), cast and cleanup counters, M
    stored: int = 0
    band: int = 0
    band_x: tuple[str, float] | None = None         # sickness / poisoning on power
    dice_casts: int = 0
    cleanups: int = 0
    magic: float = 0.0
    _analysis: Analysis | None = None

    @property
    def analysis(self) -> Analysis:
        if self._analysis is None:
            self._analysis = analyse(self.setup, self.occ, self.sealed, self.band_x)
        return self._analysis

    def board_changed(self) -> None:
        self._analysis = None

    @property
    def seals(self) -> int:
        """D-32: runes sealed this battle minus runes unsealed."""
        return self.sealed_total - self.unsealed_total


class Battle:
    """One battle between two boards; `run()` plays it to the end."""

    def __init__(self, board0: Board, board1: Board, rules: Rules | None = None,
                 trace: bool = False, seed: int = 0, variant: str | None = None):
        self.rules = rules = rules or default_rules()
        self.spec = rules.spec
        variant = variant or self.spec.variant
        if variant not in ("deterministic", "dice"):
            raise ValueError(f"variant must be 'deterministic' or 'dice'; got {variant!r}")
        self.dice = self.spec.dice if variant == "dice" else None
        self.seed = int(seed)
        self.geo = None
        setups = [SideSetup.of(board0, rules), SideSetup.of(board1, rules)]
        self.geo = setups[0].geo
        self.sides = [self._new_side(i, s) for i, s in enumerate(setups)]
        self.sides[0].affinity = affinity_multipliers(rules, setups[1])
        self.sides[1].affinity = affinity_multipliers(rules, setups[0])
        if self.dice is not None:
            for side in self.sides:
                side.magic = magic_value(side.setup.board.round, self.dice)
        self.trace = trace
        self.events: list[dict[str, Any]] = []
        self.t = 0
        self.duration_ms = rules.ms(self.spec.battle.duration_s)
        self.death = self.spec.battle.death_threshold

    def _new_side(self, index: int, setup: SideSetup) -> Side:
        n = setup.geo.n_cells
        occ: list = [None] * n
        for c, rune in setup.board.runes.items():
            occ[c] = rune
        side = Side(index=index, setup=setup, occ=occ, sealed=[False] * n,
                    wards=list(setup.wards), hp=setup.max_hp)
        side.seal_serial = [0] * n
        side.frozen_until = [0] * n
        side.delay_count = [0] * n
        side.storm_budget = setup.storm_budget_ms
        side.next_turn = setup.interval_ms if setup.turn_cells else None
        side.doll_uses = setup.doll_uses
        side.reserves = [(slot, k, g) for slot, (k, g) in enumerate(setup.board.hand)]
        return side

    # -- the loop -----------------------------------------------------------------------------
    def run(self) -> BattleResult:
        winner: int | None
        try:
            while True:
                t = self._next_time()
                if t is None or t > self.duration_ms:
                    break
                self.t = t
                self._end_effects(t)
                for s in (0, 1):
                    side = self.sides[s]
                    if side.next_turn == t:
                        self._turn(side)
            winner = self._judge_timeout()
            time_ms = self.duration_ms
            reason = "timeout"
        except BattleOver as over:
            winner = over.winner
            time_ms = self.t
            reason = over.reason
        s0, s1 = self.sides
        return BattleResult(
            winner=winner, time=time_ms / 1000.0, hp=(self._reported_hp(s0), self._reported_hp(s1)),
            max_hp=(s0.setup.max_hp, s1.setup.max_hp), casts=(s0.casts, s1.casts),
            turns=(s0.turns, s1.turns), seals=(s0.seals, s1.seals), rests=(s0.rests, s1.rests),
            reason=reason,
            events=self.events if self.trace else None)

    def _reported_hp(self, side: Side) -> float:
        """HP clamped at 0; a side at or below the death threshold (D-10) is reported as 0."""
        return 0.0 if side.hp <= self.death else side.hp

    def _next_time(self) -> int | None:
        times = []
        for side in self.sides:
            if side.next_turn is not None:
                times.append(side.next_turn)
            times.extend(t for t, _, _ in side.pending_unseals)
            if self.trace:  # only the trace needs to stop at expiries; state is unaffected
                times.extend(f for f in side.frozen_until if f > self.t)
                if side.curse_until > self.t:
                    times.append(side.curse_until)
        return min(times) if times else None

    def _judge_timeout(self) -> int | None:
        r0 = self.sides[0].hp / self.sides[0].setup.max_hp
        r1 = self.sides[1].hp / self.sides[1].setup.max_hp
        if abs(r0 - r1) <= self.spec.battle.draw_tolerance:
            return None
        return 0 if r0 > r1 else 1

    def _end_effects(self, t: int) -> None:
        for side in self.sides:
            if self.trace:
                for c, until in enumerate(side.frozen_until):
                    if until == t:
                        self._event("thaw", side.index, c)
                if side.curse_until == t:
                    self._event("curse_end", side.index, None)
            due = [p for p in side.pending_unseals if p[0] <= t]
            if due:
                side.pending_unseals = [p for p in side.pending_unseals if p[0] > t]
                for _, cell, serial in sorted(due):
                    if side.sealed[cell] and side.seal_serial[cell] == serial:
                        self._unseal(side, cell, "warding_seal")

    def _turn(self, side: Side) -> None:
        t = self.t
        setup = side.setup
        if side.turn_pos >= len(setup.turn_cells):
            # D-50: a rest turn (a cycle shorter than min_cycle_turns): time passes, nothing is
            # cast; it is no rune's turn (neither `turns` nor a delay's count)
            side.rests += 1
            self._event("rest", side.index, None)
        else:
            self._rune_turn(side, setup.turn_cells[side.turn_pos])
        side.turn_pos += 1
        side.next_turn = t + setup.interval_ms
        if side.turn_pos == setup.cycle_turns:
            # the end of the cycle (after its last rest turn, if any)
            side.turn_pos = 0
            side.storm_budget = setup.storm_budget_ms
            opponent = self.sides[1 - side.index]
            for _ in range(setup.erosions_per_cycle):
                self._erode(side, opponent)
            if self.dice is not None:
                self._cleanup(side)

    def _rune_turn(self, side: Side, cell: int) -> None:
        t = self.t
        side.turns += 1
        rune = side.occ[cell]
        can_cast = (rune is not None and rune[0] in self.rules.casting_kinds
                    and not side.sealed[cell] and side.frozen_until[cell] <= t)
        if can_cast:
            power = side.analysis.powers[cell]
            if power.delayed:
                # D-18: affected turns (not sealed, not frozen) alternate skip, cast, ...
                side.delay_count[cell] += 1
                if side.delay_count[cell] % self.spec.runes.delay.period != 0:
                    can_cast = False
                    self._event("delay_skip", side.index, cell)
        if can_cast:
            side.casts += 1
            self._cast(side, cell, power.kind, power.power, power.flows, power.grade)
            self._mimic_copies(side, cell)

    def _mimic_copies(self, side: Side, source_cell: int) -> None:
        """D-20: each mimic whose strongest inward casting rune is the one that cast copies it."""
        geo = self.geo
        for m in range(geo.n_cells):
            rune = side.occ[m]
            if rune is None or rune[0] != "mimic" or side.sealed[m]:
                continue
            if source_cell not in geo.inward[m]:
                continue
            powers = side.analysis.powers
            candidates = [c for c in geo.inward[m] if c in powers]
            if self._strongest(candidates, powers) != source_cell:
                continue
            src = powers[source_cell]
            grade = side.analysis.effective_grade[m]
            factor = self.spec.runes.mimic.copy_x_by_grade[grade - 1]
            self._cast(side, m, src.kind, src.power * factor, src.flows, src.grade,
                       copy_of=source_cell)

    def _strongest(self, cells: list[int], powers) -> int | None:
        """D-15: highest power; powers within the tolerance are equal, then casting order."""
        tol = self.spec.battle.strongest_tolerance
        best = None
        for c in sorted(cells):
            p = powers[c].power
            if best is None:
                best, best_p = c, p
            elif p > best_p and abs(p - best_p) > tol * max(abs(p), abs(best_p)):
                best, best_p = c, p
        return best

    # -- one cast -----------------------------------------------------------------------------
    def _cast(self, side: Side, cell: int, kind: str, power: float, flows: dict[str, float],
              grade: int, copy_of: int | None = None, repeat: int = 0) -> None:
        rules, spec = self.rules, self.spec
        opp = self.sides[1 - side.index]
        flow_specs = [(rules.flow_by_id[f], s) for f, s in flows.items()]
        flow_x = side.setup.mods.flow_increase_x
        extra = {"kind": kind, "value": power}
        if copy_of is not None:
            extra["copy_of"] = self.geo.name(copy_of)
        if repeat:
            extra["repeat"] = repeat
        self._event("cast", side.index, cell, **extra)
        rune_spec = rules.rune_specs[kind]
        value = power if self.dice is None else self._roll(side, cell, kind, power)

        if kind in rules.attack_kinds:
            factor = 1.0
            if side.drizzle > 0:
                side.drizzle -= 1
                factor = spec.flow_limits.drizzle_attack_x
                self._event("drizzle_use", side.index, cell, charges=side.drizzle)
            for flow, s in flow_specs:
                if flow.barrier_strip > 0 and opp.barrier > 0:
                    removed = opp.barrier * flow.barrier_strip * s
                    opp.barrier -= removed
                    self._event("barrier_strip", opp.index, None, value=removed,
                                source=self.geo.name(cell))
            for _ in range(rune_spec.hits):
                self._hit(side, opp, cell, kind, value, factor)
        # the kind's own effect
        if kind == "water" or kind == "light":
            overflow = any(f.overflow_to_barrier for f, _ in flow_specs)
            self._heal(side, cell, value, overflow)
            if kind == "light":
                self._light_unseal(side, rune_spec.unseals_by_grade[grade - 1])
        elif kind == "earth":
            side.barrier += value
            self._event("barrier", side.index, cell, value=value)
        curse_s = getattr(rune_spec, "curse_s", 0.0)
        for flow, _ in flow_specs:
            curse_s = max(curse_s, flow.curse_s)
        if curse_s > 0:
            x = 1.0
            for flow, s in flow_specs:
                x *= flow_multiplier(flow.curse_duration_x, s, flow_x)
            self._curse(opp, rules.ms(curse_s * x), cell)
        if kind == "ice":
            x = 1.0
            for flow, s in flow_specs:
                x *= flow_multiplier(flow.freeze_duration_x, s, flow_x)
            self._freeze(opp, rules.ms(rune_spec.freeze_s * x), side, cell)
        for flow, s in flow_specs:
            for _ in range(flow.erosions):
                self._erode(side, opp)
        for flow, s in flow_specs:
            if flow.storm_delay_s > 0 and opp.next_turn is not None:
                delay = min(rules.ms(flow.storm_delay_s * s), opp.storm_budget)
                if delay > 0:
                    opp.storm_budget -= delay
                    opp.next_turn += delay
                    self._event("storm_delay", opp.index, None, value=delay,
                                next_turn=opp.next_turn / 1000.0, source=self.geo.name(cell))
        for flow, s in flow_specs:
            if flow.drizzle_charges > 0:
                opp.drizzle = min(spec.flow_limits.drizzle_max_charges,
                                  opp.drizzle + flow.drizzle_charges)
                self._event("drizzle_charge", opp.index, None, charges=opp.drizzle,
                            source=self.geo.name(cell))
        if repeat == 0:
            for flow, s in flow_specs:
                for r in range(flow.extra_casts):
                    self._cast(side, cell, kind, power, flows, grade, copy_of, repeat=r + 1)

    # -- the dice variant -----------------------------------------------------------------------
    def _roll(self, side: Side, cell: int, kind: str, power: float) -> float:
        """D-46, D-49: one roll per cast; damage on the strong table, heal and barrier on the weak.
        Returns the cast's value; adds its PL to the side's stored mana (D-47)."""
        dice = self.dice
        pl, die = die_for_power(power, dice, strong=kind in self.rules.attack_kinds)
        n = side.dice_casts
        side.dice_casts += 1
        side.stored += pl
        if die.faces:
            roll = die_roll(self.seed, side.index, STREAM_CAST, n, 0, die.faces) + die.plus
            value = power * roll / die.mean
        else:   # rank 0: the fixed 1, not rolled
            roll = 1
            value = power
        self._event("roll", side.index, cell, pl=pl, rank=die.rank, die=die.name(), roll=roll,
                    value=value, stored=side.stored)
        return value

    def _cleanup(self, side: Side) -> None:
        """D-47: at the end of the side's cycle, after its erosions: purge minimal(M), then the band
        of the stored mana: <= M nothing; <= 2M sickness and a burn of minimal(stored) D6; <= 5M
        poisoning and a burn of reduced(stored) D6; beyond, a burst (HP to 0)."""
        dice = self.dice
        n = side.cleanups
        side.cleanups += 1
        m = side.magic
        before = side.stored
        side.stored = max(0, before - minimal(m))
        stored = side.stored
        if stored <= m:
            band = 0
        elif stored <= dice.sickness_band_x * m:
            band = 1
        elif stored <= dice.poison_band_x * m:
            band = 2
        else:
            band = 3
        self._event("cleanup", side.index, None, purge=before - stored, stored=stored,
                    magic=m, band=BANDS[band])
        opp_index = 1 - side.index
        if band == 3:
            side.hp = 0.0
            self._event("burst", side.index, None, stored=stored)
            raise BattleOver(opp_index, "burst")
        if band != side.band:
            previous = side.band
            side.band = band
            side.band_x = (None, ("dice:sickness", dice.sickness_power_x),
                           ("dice:poisoning", dice.poison_power_x))[band]
            side.board_changed()   # the band multiplies power: recompute it
            self._event("band", side.index, None, band=BANDS[band], previous=BANDS[previous])
        if band == 0:
            return
        count = minimal(stored) if band == 1 else reduced(stored)
        rolls = [die_roll(self.seed, side.index, STREAM_CLEANUP, n, j, dice.burn_faces)
                 for j in range(count)]
        burn = float(sum(rolls))
        side.hp -= burn
        self._event("burn", side.index, None, dice=count, rolls=rolls, value=burn)
        if side.hp <= self.death:
            raise BattleOver(opp_index, "burn")

    def _hit(self, side: Side, opp: Side, cell: int, kind: str, power: float,
             drizzle_x: float) -> None:
        damage = power * side.affinity[kind] * overdrive_multiplier(self.rules, self.t) * drizzle_x
        reflect = opp.analysis.reflect if opp.barrier > 0 else 0.0
        wear = getattr(self.rules.rune_specs[kind], "barrier_wear", 1.0)
        absorbed = self._absorb(opp, damage, wear)
        self._event("hit", opp.index, None, value=damage, absorbed=absorbed,
                    source=self.geo.name(cell), by=side.index)
        if opp.hp <= self.death:
            raise BattleOver(side.index)
        if reflect > 0:
            back = reflect * damage
            absorbed = self._absorb(side, back, 1.0)
            self._event("reflect", side.index, None, value=back, absorbed=absorbed, by=opp.index)
            if side.hp <= self.death:
                raise BattleOver(opp.index)

    @staticmethod
    def _absorb(target: Side, damage: float, wear: float) -> float:
        """Barrier absorbs first; each point absorbed costs `wear` barrier (thunder: 2)."""
        if damage * wear >= target.barrier:
            absorbed = target.barrier / wear
            target.barrier = 0.0
        else:
            absorbed = damage
            target.barrier -= damage * wear
        target.hp -= damage - absorbed
        return absorbed

    def _heal(self, side: Side, cell: int, amount: float, overflow_to_barrier: bool) -> None:
        if side.curse_until > self.t:
            amount *= self.spec.battle.curse_heal_x
        hp = side.hp + amount
        over = max(0.0, hp - side.setup.max_hp)
        side.hp = min(hp, side.setup.max_hp)
        self._event("heal", side.index, cell, value=amount, overflow=over)
        if overflow_to_barrier and over > 0:
            side.barrier += over
            self._event("barrier", side.index, cell, value=over)

    def _curse(self, target: Side, duration_ms: int, cell: int) -> None:
        target.curse_until = max(target.curse_until, self.t + duration_ms)  # D-14
        self._event("curse", target.index, None, until=target.curse_until / 1000.0,
                    source=self.geo.name(cell))

    def _freeze(self, target: Side, duration_ms: int, side: Side, cell: int) -> None:
        t = self.t
        limit = self.spec.freeze.max_frozen
        if limit > 0 and sum(1 for f in target.frozen_until if f > t) >= limit:
            # D-52: that many of the target's cells are frozen (sealed or not): no freeze
            return
        powers = target.analysis.powers
        candidates = [c for c in target.setup.turn_cells
                      if c in powers and target.frozen_until[c] <= t]
        victim = self._strongest(candidates, powers)
        if victim is None:
            return
        target.frozen_until[victim] = t + duration_ms
        self._event("freeze", target.index, victim, until=(t + duration_ms) / 1000.0,
                    source=self.geo.name(cell))

    def _light_unseal(self, side: Side, count: int) -> None:
        """D-16: highest (effective) grade first, ties by casting order."""
        for _ in range(count):
            sealed = [c for c in range(self.geo.n_cells) if side.sealed[c]]
            if not sealed:
                return
            egrade = side.analysis.effective_grade
            cell = min(sealed, key=lambda c: (-egrade[c], c))
            self._unseal(side, cell, "light")

    def _unseal(self, side: Side, cell: int, by: str) -> None:
        side.sealed[cell] = False
        side.unsealed_total += 1
        side.board_changed()
        self._event("unseal", side.index, cell, cause=by)

    # -- erosion ------------------------------------------------------------------------------
    def _erode(self, eroder: Side, victim: Side) -> None:
        """D-31: doll, else the target's ward, else a seal (under the cap), then a reserve."""
        self._event("erosion", victim.index, None, by=eroder.index)
        if victim.doll_uses > 0:
            victim.doll_uses -= 1
            self._event("doll", victim.index, None, uses_left=victim.doll_uses)
            return
        geo = self.geo
        live = [c for c in range(geo.n_cells) if victim.occ[c] is not None and not victim.sealed[c]]
        if not live:
            return
        outer = max(geo.ring[c] for c in live)
        egrade = victim.analysis.effective_grade
        target = min((c for c in live if geo.ring[c] == outer), key=lambda c: (-egrade[c], c))
        if victim.wards[target] > 0:
            victim.wards[target] -= 1
            self._event("ward", victim.index, target, wards_left=victim.wards[target])
            return
        if victim.seals >= victim.setup.seal_cap:
            self._event("seal_capped", victim.index, target)
            return
        victim.sealed[target] = True
        victim.sealed_total += 1
        victim.seal_serial[target] += 1
        victim.board_changed()
        self._event("seal", victim.index, target)
        unseal_ms = victim.setup.mods.unseal_after_ms
        if unseal_ms is not None:
            victim.pending_unseals.append((self.t + unseal_ms, target, victim.seal_serial[target]))
        self._reserve(victim, target)

    def _reserve(self, side: Side, cell: int) -> None:
        """D-33: a hand rune takes the sealed rune's cell (same kind; tree: any kind)."""
        kind = side.occ[cell][0]
        any_kind = side.setup.mods.reserve_any_kind
        options = [r for r in side.reserves if r[1] == kind or any_kind]
        if not options:
            return
        choice = min(options, key=lambda r: (r[1] != kind, -r[2], r[0]))
        side.reserves.remove(choice)
        slot, rkind, rgrade = choice
        side.occ[cell] = (rkind, rgrade)
        side.sealed[cell] = False
        side.wards[cell] = 0
        side.frozen_until[cell] = 0
        side.delay_count[cell] = 0
        side.seal_serial[cell] += 1
        side.board_changed()
        self._event("reserve", side.index, cell, kind=rkind, grade=rgrade, slot=slot)

    # -- trace --------------------------------------------------------------------------------
    def _event(self, type_: str, side: int, cell: int | None, **extra: Any) -> None:
        if not self.trace:
            return
        s0, s1 = self.sides
        ev = {"t": self.t / 1000.0, "type": type_, "side": side,
              "cell": self.geo.name(cell) if cell is not None else None}
        ev.update(extra)
        ev["hp"] = [s0.hp, s1.hp]
        ev["barrier"] = [s0.barrier, s1.barrier]
        self.events.append(ev)


def battle(board0: Board, board1: Board, rules: Rules | None = None,
           trace: bool = False, seed: int = 0, variant: str | None = None) -> BattleResult:
    """Play one battle; board0 is side 0. Deterministic: same boards, rules (and, for the dice
    variant, seed), same result. `variant` (None: the rules' `variant`) "deterministic" or "dice";
    `seed` keys the dice variant's rolls (D-49) and is ignored without it."""
    return Battle(board0, board1, rules, trace=trace, seed=seed, variant=variant).run()
