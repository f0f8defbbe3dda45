"""A heuristic drafter: picks run actions that buy, merge, open sectors and place for flows,
resonance and affinity-free strength. It builds the default opponents, plays the balance report,
and the agents wrap it as `GreedyAgent`.

How it values a board: a side deals, per second, (mean value of a turn) / interval, because
every casting rune lengthens the cycle (RULES: "more runes, longer cycle"). So the value of a
board is the mean over the turns of its cycle (rest turns included, RULES D-50: they take time
and cast nothing) of each rune's worth per cast (power, times hits and extra casts, healing and
barrier weighted below damage, halved under a delay), plus what mimics copy, and a small bonus per
rune for staying power against erosion. It never looks at the opponent.

Its choices, in order: the core uniformly at random (from its own seeded generator, so drafted
opponents field every school); reward and relic choices by a preference list; merges; placing hand runes where
they add most; buying the offer that adds most; artifacts; opening a sector when the board is
full; rerolling (at most `max_rerolls` per round) while there is room; then ready. `noise` is
the chance of a uniformly random legal action instead (the strength knob of opponents).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..battle.analysis import SideSetup, analyse
from ..rules.board import Board
from ..rules.config import CASTING_KINDS, Rules
from ..rules.geometry import geometry
from .actions import action_table
from .legal import is_open, legal_mask, sector_cost
from .loop import apply
from .rewards import RewardOption
from .state import RunState

# Preferences of this heuristic (not rules of the game).
RELIC_PREFERENCE = ("ember_jar", "resonance_mirror", "mana_vein", "focusing_mirror", "hourglass",
                    "coin_purse", "tide_vessel", "bulwark", "big_bag", "warding_seal",
                    "phoenix_feather", "thorn_crown")
REWARD_PREFERENCE = ("hand_slot", "artifact_slot", "mana", "artifact", "base_stat")
# Healing and barrier offset damage point for point (barrier never overflows); valuing them
# lower made boards that only raced, and battles shorter than the game intends.
KIND_WEIGHT = {"heal": 0.9, "barrier": 0.9, "ice": 1.25, "dark": 1.15}
PER_RUNE_BONUS = 0.03
CASTER_HALF = 2.0     # a board with this many casting runes keeps half its value (see board_value)


_VALUES: dict = {}        # board_value memo: (rules hash, board content) -> value
VALUE_MEMO = 200_000     # entries; the memo is cleared when full


def board_value(board: Board, rules: Rules) -> float:
    """The drafter's estimate of a board's strength (see the module docstring). A pure function
    of the board's runes, artifacts, core, sun element, boss rules and relics, so it is
    remembered: the drafter values the same candidate boards again and again."""
    key = (rules.hash, frozenset(board.runes.items()), frozenset(board.artifacts.items()),
           board.core, board.sun_element, board.boss_rules, board.relics)
    value = _VALUES.get(key)
    if value is None:
        if len(_VALUES) >= VALUE_MEMO:
            _VALUES.clear()
        value = _VALUES[key] = _board_value(board, rules)
    return value


class _Compiled:
    """The compiled analysis (one per rules and thread of use) and per-flow tables."""

    def __init__(self, rules: Rules):
        from ..battle.fast import BoardAnalyser
        self.analyser = BoardAnalyser(rules)
        # per flow index (the kernel's table order): extra casts and erosions it adds
        self.extra = tuple(f.extra_casts for f in rules.spec.flows)
        self.erosions = tuple(f.erosions for f in rules.spec.flows)


@lru_cache(maxsize=8)
def _compiled_of(rules_hash: str, rules: Rules) -> _Compiled:
    return _Compiled(rules)


def _compiled(rules: Rules) -> _Compiled:
    return _compiled_of(rules.hash, rules)


def _board_value(board: Board, rules: Rules) -> float:
    """board_value from the compiled analysis (the same numbers as the reference analysis,
    `_board_value_reference`, summed in the same order; tests compare the two)."""
    casting = rules.casting_kinds
    turns = sum(1 for k, _ in board.runes.values() if k in casting)
    if turns == 0:
        return 0.0
    comp = _compiled(rules)
    power, info, interval_ms = comp.analyser(board)
    extra_of, erosions_of = comp.extra, comp.erosions

    def worth(c: int, kind: str, p: float) -> float:
        row = info[c].tolist()
        acting = row[3:3 + row[2]]
        return _worth(rules, kind, p, sum(extra_of[f] for f in acting),
                      sum(erosions_of[f] for f in acting), bool(row[0]))

    runes = board.runes
    total = 0.0
    for c in sorted(runes):           # the reference's analysis lists powers by cell
        if power[c] >= 0.0:
            total += worth(c, runes[c][0], float(power[c]))
    geo = geometry(rules.radius)
    for m, (kind, _) in runes.items():
        if kind != "mimic":
            continue
        src = None
        for c in geo.inward[m]:       # the first strongest, as max() picks it
            if power[c] >= 0.0 and (src is None or power[c] > power[src]):
                src = c
        if src is not None:
            factor = rules.spec.runes.mimic.copy_x_by_grade[int(info[m, 1]) - 1]
            total += worth(src, runes[src][0], float(power[src]) * factor)
    staying = turns / (turns + CASTER_HALF)
    # D-50: a cycle lasts at least min_cycle_turns turns (rest turns cast nothing)
    cycle = max(turns, rules.spec.battle.min_cycle_turns)
    per_turn = total / cycle * staying * (1.0 + PER_RUNE_BONUS * len(runes))
    return per_turn * rules.ms(rules.spec.battle.base_interval_s) / interval_ms


def _board_value_reference(board: Board, rules: Rules) -> float:
    """board_value from the reference analysis (the readable definition; tests check that
    `_board_value` equals it)."""
    setup = SideSetup.of(board, rules)
    n = setup.geo.n_cells
    occ = [board.runes.get(c) for c in range(n)]
    an = analyse(setup, occ, [False] * n)
    turns = len(setup.turn_cells)
    if turns == 0:
        return 0.0
    total = 0.0
    for c, rp in an.powers.items():
        total += _cast_worth(rules, rp.kind, rp.power, rp.flows, rp.delayed)
    geo = setup.geo
    for m, (kind, _) in board.runes.items():
        if kind != "mimic":
            continue
        sources = [an.powers[c] for c in geo.inward[m] if c in an.powers]
        if sources:
            src = max(sources, key=lambda rp: rp.power)
            factor = rules.spec.runes.mimic.copy_x_by_grade[an.effective_grade[m] - 1]
            total += _cast_worth(rules, src.kind, src.power * factor, src.flows, src.delayed)
    # Erosion seals a rune a cycle (the strongest of the outermost ring first): a board that
    # relies on few casting runes is silenced early, so value the count of casting runes too.
    staying = turns / (turns + CASTER_HALF)
    # per turn of the cycle, rest turns (D-50) included: they take time and cast nothing
    per_turn = total / setup.cycle_turns * staying * (1.0 + PER_RUNE_BONUS * len(board.runes))
    # per base interval: a faster side (moon, hourglass) is worth proportionally more
    return per_turn * rules.ms(rules.spec.battle.base_interval_s) / setup.interval_ms


def _cast_worth(rules: Rules, kind: str, power: float, flows: dict, delayed: bool) -> float:
    extra = sum(rules.flow_by_id[f].extra_casts for f in flows)
    erosions = sum(rules.flow_by_id[f].erosions for f in flows)
    return _worth(rules, kind, power, extra, erosions, delayed)


def _worth(rules: Rules, kind: str, power: float, extra: int, erosions: int, delayed: bool) -> float:
    """A cast's worth: damage (x hits, x the kind's weight) or healing/barrier at their weight,
    x (1 + the flows' extra casts), + 3 per erosion the flows add, / the delay's period."""
    spec = rules.rune_specs[kind]
    if kind in rules.attack_kinds:
        v = power * spec.hits * KIND_WEIGHT.get(kind, 1.0)
    elif hasattr(spec, "heal"):
        v = power * KIND_WEIGHT["heal"]
    else:
        v = power * KIND_WEIGHT["barrier"]
    v *= 1 + extra
    v += 3.0 * erosions
    if delayed:
        v /= rules.spec.runes.delay.period
    return v


class HeuristicDrafter:
    """`act(state) -> action id`. Deterministic for a given state and seed."""

    def __init__(self, rules: Rules, noise: float = 0.0, seed: int = 0, max_rerolls: int = 2):
        self.rules = rules
        self.table = action_table(rules)
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.max_rerolls = max_rerolls
        self.geo = geometry(rules.radius)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    # -- helpers --------------------------------------------------------------------------------
    def _id(self, kind: str, *args: int) -> int:
        return self.table.id(kind, *args)

    def _value(self, state: RunState, runes: dict | None = None, artifacts: dict | None = None,
               sun_element: str | None = None) -> float:
        b = Board(runes=runes if runes is not None else state.board,
                  artifacts=artifacts if artifacts is not None else state.artifacts,
                  core=state.core, sun_element=sun_element or state.sun_element,
                  open_sectors=frozenset(state.open_sectors), relics=tuple(state.relics),
                  round=state.round)
        return board_value(b, self.rules)

    def _candidate_cells(self, state: RunState) -> list[int]:
        """Free open cells worth trying: ring 1, and cells next to runes (plus one fallback)."""
        geo = self.geo
        free = [c for c in range(geo.n_cells) if c not in state.board and is_open(state, c)]
        near = [c for c in free if geo.ring[c] == 1 or any(m in state.board for m in geo.neighbors[c])]
        return near or free[:1]

    def _best_cell(self, state: RunState, rune: tuple[str, int]) -> tuple[int | None, float]:
        best, best_v = None, -1.0
        for c in self._candidate_cells(state):
            runes = dict(state.board)
            runes[c] = rune
            v = self._value(state, runes=runes)
            if v > best_v + 1e-12:
                best, best_v = c, v
        return best, best_v

    # -- the policy -----------------------------------------------------------------------------
    def act(self, state: RunState) -> int:
        mask = legal_mask(state)
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action: the run is over")
        if self.noise > 0 and self.rng.random() < self.noise:
            return int(legal[int(self.rng.integers(len(legal)))])
        if state.pending is not None:
            return self._choose(state)
        for chooser in (self._merge, self._place, self._artifact, self._buy, self._open_sector,
                        self._sun_element, self._sell, self._reroll):
            a = chooser(state, mask)
            if a is not None:
                return a
        return self._id("ready")

    def _choose(self, state: RunState) -> int:
        pend = state.pending
        opts = pend.options
        if pend.kind == "core":
            core = self.rng.choice(opts) if self.rng is not None else opts[0]
            return self._id("choose_core", self.table.cores.index(str(core)))
        pref = RELIC_PREFERENCE if pend.kind == "relic" else REWARD_PREFERENCE
        rank = {name: i for i, name in enumerate(pref)}
        # a reward ranks by its category; a relic by its name
        names = [RewardOption.parse(o).category if pend.kind == "reward" else o for o in opts]
        best = min(range(len(opts)), key=lambda i: rank.get(names[i], len(pref)))
        if pend.kind == "reward" and opts[best] == "hand_slot" and state.hand_slots >= 6:
            alt = [i for i in range(len(opts)) if opts[i] != "hand_slot"]
            if alt:
                best = min(alt, key=lambda i: rank.get(names[i], len(pref)))
        return self._id(pend.group, best)

    def _merge(self, state: RunState, mask) -> int | None:
        for c in sorted(state.board):
            a = self._id("merge_board", c)
            if mask[a]:
                return a
        for h in range(len(state.hand)):
            a = self._id("merge_hand", h)
            if mask[a]:
                return a
        return None

    def _place(self, state: RunState, mask) -> int | None:
        if not state.hand:
            return None
        base = self._value(state)
        best = None
        for h, rune in enumerate(state.hand):
            cell, v = self._best_cell(state, rune)
            if cell is None:
                continue
            gain = v - base
            if best is None or gain > best[0]:
                best = (gain, h, cell)
        if best is None:
            return None
        gain, h, cell = best
        # keep a rune in hand as a reserve when placing would weaken the board
        if gain < -0.02 * max(base, 1e-9) and len(state.hand) < state.hand_slots:
            return None
        return self._id("place", h, cell)

    def _buy(self, state: RunState, mask) -> int | None:
        base = self._value(state)
        best = None
        owned = {}
        for r in list(state.board.values()) + list(state.hand):
            owned[r] = owned.get(r, 0) + 1
        for i, offer in enumerate(state.shop_runes):
            a = self._id("buy_rune", i)
            if not mask[a]:
                continue
            _, v = self._best_cell(state, (offer, 1))
            gain = v - base
            if owned.get((offer, 1), 0) >= 1:
                gain += 0.25 * max(base, 1.0) * owned[(offer, 1)]   # towards a merge
            if best is None or gain > best[0]:
                best = (gain, a)
        if best is not None and (best[0] > 0 or not state.board):
            return best[1]
        return None

    def _artifact(self, state: RunState, mask) -> int | None:
        spec = self.rules.spec
        if state.artifact_inventory:
            art = state.artifact_inventory[0]
            cells = [c for c in range(self.geo.n_cells)
                     if c not in state.artifacts and is_open(state, c)]
            if not cells:
                return None
            a_spec = spec.artifacts[art]

            def score(c: int) -> float:
                reach = [m for m in self.geo.reach(c) if m in state.board]
                if a_spec.grade_bonus:
                    arts = dict(state.artifacts)
                    arts[c] = art
                    return self._value(state, artifacts=arts)
                return len(reach) + 0.1 * self.geo.ring[c]
            best = max(cells, key=score)
            return self._id("place_artifact", 0, best)
        if len(state.board) >= 4:
            for i, offer in enumerate(state.shop_artifacts):
                a = self._id("buy_artifact", i)
                if mask[a] and state.mana - spec.artifacts[offer].price >= 2:
                    return a
        return None

    def _open_sector(self, state: RunState, mask) -> int | None:
        free = [c for c in range(self.geo.n_cells) if c not in state.board and is_open(state, c)]
        cost = sector_cost(state)
        if len(free) > 1 or cost is None or state.mana < cost + 2:
            return None
        geo = self.geo

        def touching(s: int) -> int:
            return sum(1 for c in geo.sector_cells[s] for m in geo.inward[c] if m in state.board)
        closed = [s for s in range(6) if s not in state.open_sectors]
        s = max(closed, key=touching)
        return self._id("open_sector", s)

    def _sun_element(self, state: RunState, mask) -> int | None:
        if state.core is None or self.rules.spec.cores[state.core].core_flow_strength <= 0:
            return None
        if not state.board:
            return None
        values = {e: self._value(state, sun_element=e) for e in CASTING_KINDS}
        best = max(CASTING_KINDS, key=lambda e: (values[e], -CASTING_KINDS.index(e)))
        if best != state.sun_element and values[best] > values[state.sun_element] + 1e-9:
            return self._id("set_sun_element", CASTING_KINDS.index(best))
        return None

    def _sell(self, state: RunState, mask) -> int | None:
        # a full hand that could not place or merge: sell the weakest, keeping reserves
        if len(state.hand) >= state.hand_slots and state.hand_slots > 0:
            free = [c for c in range(self.geo.n_cells) if c not in state.board and is_open(state, c)]
            if not free:
                h = min(range(len(state.hand)), key=lambda i: (state.hand[i][1], i))
                return self._id("sell", h)
        return None

    def _reroll(self, state: RunState, mask) -> int | None:
        a = self._id("reroll")
        if not mask[a] or state.mana < self.rules.spec.run.reroll_cost + 2:
            return None
        recent = state.actions_taken[-state.prep_actions:] if state.prep_actions else []
        if sum(1 for x in recent if x == a) >= self.max_rerolls:
            return None
        room = len(state.hand) < state.hand_slots
        free = any(c not in state.board and is_open(state, c) for c in range(self.geo.n_cells))
        return a if room and free else None


def draft(state: RunState, drafter: HeuristicDrafter, max_steps: int | None = None) -> RunState:
    """Let the drafter prepare until it would ready (the state is left before the battle)."""
    ready = drafter.table.id("ready")
    steps = max_steps or state.rules.spec.run.action_cap - 1
    for _ in range(steps):
        a = drafter.act(state)
        if a == ready:
            break
        apply(state, a)
        if state.prep_actions >= state.rules.spec.run.action_cap - 1:
            break
    return state
