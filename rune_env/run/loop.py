"""The run loop: start a run, list the legal actions, apply one. Plain rules code, no Gymnasium.

    state = new_run(seed=1)                      # a pending core choice comes first
    mask = legal_mask(state)                     # bool per action id
    info = apply(state, action_id, opponents)    # mutates state; `ready` fights the battle

A round: (relic choice after a boss win) -> income -> new shop -> (reward choice every 3rd round
from round 4) -> preparation actions -> ready -> battle -> next round. `why_illegal(state, a)` says
why an action is not legal; `apply` raises `IllegalAction` with that reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from ..battle.analysis import SideSetup, analyse
from ..battle.engines import battle_function
from ..battle.result import BattleResult
from ..rules.board import Board
from ..rules.config import CASTING_KINDS, KINDS, Rules, default_rules
from ..rules.geometry import geometry
from .actions import action_table
from .ranks import RankEffects, rank_effects, rank_index
from .state import RunState


class IllegalAction(ValueError):
    """An action that is not legal in this state; the message says why."""


OpponentSource = Callable[[int, RankEffects, list, np.random.Generator], Board]
BattleFn = Callable[[Board, Board, Rules], BattleResult]


@dataclass
class StepInfo:
    """What one applied action did."""

    action: int
    name: str
    battle: dict | None = None      # the battle summary if the action was (or forced) `ready`
    forced_ready: bool = False


# -- start --------------------------------------------------------------------------------------
def new_run(seed: int, rules: Rules | None = None, rank: int | str = 0, core: str | None = None,
            unlocked: list[str] | None = None) -> RunState:
    """A new run. With `core` given the core is fixed, else the first action chooses it.
    `unlocked` restricts the shop's rune kinds (default: every kind, the research setting)."""
    rules = rules or default_rules()
    spec = rules.spec
    r = rank_index(rules, rank)
    effects = rank_effects(rules, r)
    kinds = list(unlocked) if unlocked is not None else list(KINDS)
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"unknown rune kind {k!r} in unlocked")
    state = RunState(rules=rules, seed=int(seed), rank=r, rng=np.random.default_rng(seed),
                     mana=spec.run.start_mana, hand_slots=spec.run.hand_slots,
                     artifact_slots=spec.run.artifact_slots, lamps=effects.lamps,
                     unlocked=kinds)
    boss_names = list(spec.boss_rules)
    count = min(effects.boss_rule_count, len(boss_names))
    for rnd in range(spec.run.boss_every, spec.run.round_cap + 1, spec.run.boss_every):
        picks = state.rng.choice(len(boss_names), size=count, replace=False)
        state.boss_schedule[rnd] = [boss_names[int(i)] for i in picks]
    if core is not None:
        set_core(state, core)
    else:
        state.pending = {"kind": "core", "options": list(spec.cores), "queue": []}
    _start_round(state, first=True)
    return state


def set_core(state: RunState, core: str) -> None:
    spec = state.rules.spec
    if core not in spec.cores:
        raise ValueError(f"unknown core {core!r} (one of {', '.join(spec.cores)})")
    state.core = core
    mod = spec.cores[core]
    state.hand_slots = min(spec.run.hand_slots_max, state.hand_slots + mod.hand_slots)
    # DECISION: a flowing (sun) core starts as the first element; the player may change it.
    state.sun_element = CASTING_KINDS[0] if mod.core_flow_strength > 0 else None


def income(state: RunState) -> int:
    """D-38: base income + furnaces + relics + the rank's delta (never below 0)."""
    spec = state.rules.spec
    geo = geometry(state.rules.radius)
    total = spec.run.income + rank_effects(state.rules, state.rank).income_delta
    for cell, art in state.artifacts.items():
        per = spec.artifacts[art].income_per_runes
        if per > 0:
            total += sum(1 for c in geo.reach(cell) if c in state.board) // per
    for relic in state.relics:
        total += spec.relics[relic].income
    return max(0, total)


def _start_round(state: RunState, first: bool = False) -> None:
    spec = state.rules.spec
    if not first:
        state.mana += income(state)
    draw_shop(state)
    state.prep_actions = 0
    run = spec.run
    if state.round >= run.reward_first_round and (state.round - run.reward_first_round) % run.reward_every == 0:
        _queue_choice(state, {"kind": "reward", "options": _reward_options(state)})


def _queue_choice(state: RunState, choice: dict) -> None:
    if not choice["options"]:
        return
    if state.pending is None:
        choice["queue"] = []
        state.pending = choice
    else:
        state.pending["queue"].append(choice)


def _next_choice(state: RunState) -> None:
    queue = state.pending["queue"] if state.pending else []
    state.pending = None
    if queue:
        nxt = queue[0]
        nxt["queue"] = queue[1:]
        state.pending = nxt


def draw_shop(state: RunState) -> None:
    spec = state.rules.spec
    kinds = state.unlocked
    state.shop_runes = [kinds[int(i)] for i in state.rng.integers(0, len(kinds), spec.run.shop_rune_offers)]
    arts = list(spec.artifacts)
    state.shop_artifacts = [arts[int(i)] for i in state.rng.integers(0, len(arts), spec.run.shop_artifact_offers)]


def _reward_options(state: RunState) -> list[str]:
    """D-42: distinct categories; only those that can apply now are drawn (a DECISION: a full
    hand or artifact slot maximum removes that category rather than offering a dead option)."""
    spec = state.rules.spec
    cats = ["mana", "base_stat"]
    if _artifact_count(state) < state.artifact_slots:
        arts = list(spec.artifacts)
        cats.append("artifact:" + arts[int(state.rng.integers(len(arts)))])
    if state.hand_slots < spec.run.hand_slots_max:
        cats.append("hand_slot")
    if state.artifact_slots < spec.run.artifact_slots_max:
        cats.append("artifact_slot")
    cats.sort(key=lambda c: ["artifact", "mana", "hand_slot", "artifact_slot", "base_stat"].index(c.split(":")[0]))
    k = min(spec.run.reward_choices, len(cats))
    picks = sorted(int(i) for i in state.rng.choice(len(cats), size=k, replace=False))
    return [cats[i] for i in picks]


def _relic_options(state: RunState) -> list[str]:
    spec = state.rules.spec
    free = [r for r in spec.relics if r not in state.relics]
    k = min(spec.run.relic_choices, len(free))
    picks = sorted(int(i) for i in state.rng.choice(len(free), size=k, replace=False)) if k else []
    return [free[i] for i in picks]


# -- helpers ------------------------------------------------------------------------------------
def _artifact_count(state: RunState) -> int:
    return len(state.artifacts) + len(state.artifact_inventory)


def is_open(state: RunState, cell: int) -> bool:
    s = geometry(state.rules.radius).sector[cell]
    return s < 0 or s in state.open_sectors


def units(rules: Rules, grade: int) -> int:
    """Grade-I runes a rune of this grade was made of (I 1, II 3, III 9)."""
    return rules.spec.grades.merge_count ** (grade - 1)


def _merge_partners(state: RunState, kind: str, grade: int, hand_slot: int | None,
                    cell: int | None) -> tuple[list[int], list[int]]:
    """D-11: the runes a merge onto the target consumes: hand first (lowest slot first), then
    board (latest in casting order first). Returns (hand slots, cells), possibly too few."""
    need = state.rules.spec.grades.merge_count - 1
    hand = [i for i, r in enumerate(state.hand) if r == (kind, grade) and i != hand_slot][:need]
    rest = need - len(hand)
    cells = sorted((c for c, r in state.board.items() if r == (kind, grade) and c != cell),
                   reverse=True)[:rest] if rest > 0 else []
    return hand, cells


def sector_cost(state: RunState) -> int | None:
    costs = state.rules.spec.sectors.open_costs
    n = len(state.open_sectors)
    return costs[n] if n < len(costs) else None


# -- legality -----------------------------------------------------------------------------------
def why_illegal(state: RunState, action: int) -> str | None:
    """None if `action` is legal, else the reason in words."""
    table = action_table(state.rules)
    if not 0 <= action < len(table):
        return f"action id {action} is outside the table (0..{len(table) - 1})"
    a = table.actions[action]
    if state.over:
        return "the run is over"
    kind, args = a.kind, a.args
    spec = state.rules.spec
    pend = state.pending
    choice_kinds = {"choose_core": "core", "choose_reward": "reward", "choose_relic": "relic"}
    if pend is not None:
        if choice_kinds.get(kind) != pend["kind"]:
            return f"a {pend['kind']} choice is pending: choose one of {pend['options']} first"
        if args[0] >= len(pend["options"]):
            return f"the {pend['kind']} choice has only {len(pend['options'])} options"
        if kind == "choose_core":
            return None if table.cores[args[0]] in pend["options"] else "not offered"
        return None
    if kind in choice_kinds:
        return f"no {choice_kinds[kind]} choice is pending"
    geo = geometry(state.rules.radius)
    if kind == "set_sun_element":
        if state.core is None or spec.cores[state.core].core_flow_strength <= 0:
            return "only a core that flows (sun) has an element"
        if table.elements[args[0]] == state.sun_element:
            return f"the element is already {state.sun_element}"
        return None
    if kind == "buy_rune":
        offer = state.shop_runes[args[0]]
        if offer is None:
            return f"rune offer {args[0]} was already bought"
        if state.mana < state.rules.prices[offer]:
            return f"{offer} costs {state.rules.prices[offer]} mana; you have {state.mana}"
        if len(state.hand) >= state.hand_slots:
            return f"the hand is full ({state.hand_slots} slots)"
        return None
    if kind == "buy_artifact":
        offer = state.shop_artifacts[args[0]]
        if offer is None:
            return f"artifact offer {args[0]} was already bought"
        price = spec.artifacts[offer].price
        if state.mana < price:
            return f"{offer} costs {price} mana; you have {state.mana}"
        if _artifact_count(state) >= state.artifact_slots:
            return f"no free artifact slot ({state.artifact_slots} in use)"
        return None
    if kind == "reroll":
        return None if state.mana >= spec.run.reroll_cost else \
            f"a reroll costs {spec.run.reroll_cost} mana; you have {state.mana}"
    if kind == "place":
        h, c = args
        if h >= len(state.hand):
            return f"hand slot {h} is empty"
        if not is_open(state, c):
            return f"cell {geo.name(c)} is in a closed sector"
        if c in state.board:
            return f"cell {geo.name(c)} already holds a rune"
        return None
    if kind == "pick_up":
        (c,) = args
        if c not in state.board:
            return f"cell {geo.name(c)} holds no rune"
        if len(state.hand) >= state.hand_slots:
            return f"the hand is full ({state.hand_slots} slots)"
        return None
    if kind in ("sell", "merge_hand"):
        (h,) = args
        if h >= len(state.hand):
            return f"hand slot {h} is empty"
        if kind == "sell":
            return None
        k, g = state.hand[h]
        return _merge_problem(state, k, g, h, None)
    if kind == "merge_board":
        (c,) = args
        if c not in state.board:
            return f"cell {geo.name(c)} holds no rune"
        k, g = state.board[c]
        return _merge_problem(state, k, g, None, c)
    if kind == "open_sector":
        (s,) = args
        if s in state.open_sectors:
            return f"sector {s} is already open"
        cost = sector_cost(state)
        if cost is None or state.mana < cost:
            return f"opening a sector costs {cost} mana; you have {state.mana}"
        return None
    if kind == "place_artifact":
        i, c = args
        if i >= len(state.artifact_inventory):
            return f"artifact slot {i} is empty"
        if not is_open(state, c):
            return f"cell {geo.name(c)} is in a closed sector"
        if c in state.artifacts:
            return f"cell {geo.name(c)} already holds an artifact"
        return None
    if kind == "pick_up_artifact":
        return None if args[0] in state.artifacts else f"cell {geo.name(args[0])} holds no artifact"
    if kind == "sell_artifact":
        return None if args[0] < len(state.artifact_inventory) else f"artifact slot {args[0]} is empty"
    if kind == "ready":
        return None
    raise AssertionError(kind)


def _merge_problem(state: RunState, kind: str, grade: int, h: int | None, c: int | None) -> str | None:
    rules = state.rules
    if grade >= rules.max_grade:
        return f"{kind} is already grade {grade}, the highest"
    hand, cells = _merge_partners(state, kind, grade, h, c)
    need = rules.spec.grades.merge_count - 1
    if len(hand) + len(cells) < need:
        return f"merging needs {need} more {kind} of grade {grade}; there are {len(hand) + len(cells)}"
    return None


@dataclass(frozen=True)
class _MaskTables:
    """What `legal_mask` needs that depends only on the rules, built once per rules object."""

    size: int
    starts: dict                 # action kind -> its first id
    shapes: dict                 # action kind -> shape of its block
    open_by_sectors: dict        # frozenset of open sectors -> bool per cell (filled lazily)
    open_bytes_by_sectors: dict  # the same as bytes, 1 per open cell (filled lazily)
    sector: np.ndarray           # cell -> sector of the outermost ring, -1 inside
    art_prices: dict             # artifact -> price
    n_cells: int
    cores_flowing: frozenset     # cores with a sun flow (an element to choose)
    elements: tuple              # the sun elements, in action order
    cores: tuple                 # the cores, in action order
    merge_count: int
    reroll_cost: int


@lru_cache(maxsize=8)
def _mask_tables_of(rules_hash: str, rules: Rules) -> _MaskTables:
    table = action_table(rules)
    spec = rules.spec
    geo = geometry(rules.radius)
    return _MaskTables(
        size=len(table),
        starts={kind: start for kind, (start, _shape) in table.groups.items()},
        shapes={kind: shape for kind, (_start, shape) in table.groups.items()},
        open_by_sectors={}, open_bytes_by_sectors={},
        sector=np.array(geo.sector, dtype=np.int64),
        art_prices={a: m.price for a, m in spec.artifacts.items()},
        n_cells=geo.n_cells,
        cores_flowing=frozenset(c for c, m in spec.cores.items() if m.core_flow_strength > 0),
        elements=tuple(table.elements), cores=tuple(table.cores),
        merge_count=spec.grades.merge_count, reroll_cost=spec.run.reroll_cost)


def _mask_tables(rules: Rules) -> _MaskTables:
    return _mask_tables_of(rules.hash, rules)


def open_cells(rules: Rules, open_sectors) -> np.ndarray:
    """A bool per cell: open to runes and artifacts with these outer sectors open (remembered
    per set of sectors; do not modify the array)."""
    t = _mask_tables(rules)
    key = frozenset(open_sectors)
    cells = t.open_by_sectors.get(key)
    if cells is None:
        cells = (t.sector < 0) | np.isin(t.sector, list(key))
        cells.setflags(write=False)
        t.open_by_sectors[key] = cells
    return cells


def _open_bytes(rules: Rules, open_sectors) -> bytes:
    """`open_cells` as bytes (1: open), remembered per set of open sectors."""
    t = _mask_tables(rules)
    key = frozenset(open_sectors)
    cells = t.open_bytes_by_sectors.get(key)
    if cells is None:
        cells = t.open_bytes_by_sectors[key] = open_cells(rules, key).tobytes()
    return cells


def _slot_rows(buf: bytearray, place: int, sell: int, n_slots: int, n_cells: int,
               open_: bytes, taken) -> None:
    """The (slot, cell) placing rows of the first `n_slots` slots: the open cells not in
    `taken`; and those slots' sell ids."""
    free = bytearray(open_)
    for c in taken:
        free[c] = 0
    for i in range(n_slots):
        buf[place + i * n_cells:place + (i + 1) * n_cells] = free
    buf[sell:sell + n_slots] = b"\x01" * n_slots


def legal_mask(state: RunState) -> np.ndarray:
    """A bool per action id: True where `why_illegal` is None. Written into a bytearray (one
    byte per id: setting a byte or a row of bytes costs far less in Python than a numpy
    operation) from tables made once per rules (the env calls it every step), then viewed as a
    bool array. Tests check it against `why_illegal` for every action id over many random
    states."""
    rules = state.rules
    t = _mask_tables(rules)
    buf = bytearray(t.size)
    if state.over:
        return np.frombuffer(buf, dtype=bool)
    at = t.starts
    pend = state.pending
    if pend is not None:
        kind = {"core": "choose_core", "reward": "choose_reward", "relic": "choose_relic"}[pend["kind"]]
        start = at[kind]
        if kind == "choose_core":
            for i, core in enumerate(t.cores):
                if core in pend["options"]:
                    buf[start + i] = 1
        else:
            for i in range(min(t.shapes[kind][0], len(pend["options"]))):
                buf[start + i] = 1
        return np.frombuffer(buf, dtype=bool)
    n_cells = t.n_cells
    board, hand, mana = state.board, state.hand, state.mana
    buf[at["ready"]] = 1
    if state.core in t.cores_flowing:
        start = at["set_sun_element"]
        for i, e in enumerate(t.elements):
            if e != state.sun_element:
                buf[start + i] = 1
    n_hand = len(hand)
    if n_hand < state.hand_slots:
        start = at["buy_rune"]
        prices = rules.prices
        for i, o in enumerate(state.shop_runes):
            if o is not None and mana >= prices[o]:
                buf[start + i] = 1
        start = at["pick_up"]
        for c in board:
            buf[start + c] = 1
    arts = state.artifacts
    n_inv = len(state.artifact_inventory)
    if _artifact_count(state) < state.artifact_slots:
        start = at["buy_artifact"]
        for i, o in enumerate(state.shop_artifacts):
            if o is not None and mana >= t.art_prices[o]:
                buf[start + i] = 1
    if mana >= t.reroll_cost:
        buf[at["reroll"]] = 1
    if n_hand:
        # place (hand slot, cell): a row of the cells free of runes for each held rune
        _slot_rows(buf, at["place"], at["sell"], n_hand, n_cells,
                   _open_bytes(rules, state.open_sectors), board)
    # D-11 merges: a rune merges when hand and board hold at least merge_count runes of its kind
    # and grade in all (itself included), below the highest grade
    if n_hand or board:
        need = t.merge_count
        counts: dict = {}
        for r in hand:
            counts[r] = counts.get(r, 0) + 1
        for r in board.values():
            counts[r] = counts.get(r, 0) + 1
        if any(n >= need for n in counts.values()):
            max_grade = rules.max_grade
            start = at["merge_hand"]
            for h, r in enumerate(hand):
                if r[1] < max_grade and counts[r] >= need:
                    buf[start + h] = 1
            start = at["merge_board"]
            for c, r in board.items():
                if r[1] < max_grade and counts[r] >= need:
                    buf[start + c] = 1
    cost = sector_cost(state)
    if cost is not None and mana >= cost:
        start = at["open_sector"]
        for sec in range(t.shapes["open_sector"][0]):
            if sec not in state.open_sectors:
                buf[start + sec] = 1
    if n_inv:
        # place_artifact (inventory slot, cell): the cells free of artifacts for each one held
        _slot_rows(buf, at["place_artifact"], at["sell_artifact"], n_inv, n_cells,
                   _open_bytes(rules, state.open_sectors), arts)
    start = at["pick_up_artifact"]
    for c in arts:
        buf[start + c] = 1
    return np.frombuffer(buf, dtype=bool)


def legal_actions(state: RunState) -> list[int]:
    return [int(i) for i in np.flatnonzero(legal_mask(state))]


# -- applying -----------------------------------------------------------------------------------
DICE_SEED_LIMIT = 2**32   # the dice variant's per-battle seeds (D-49 keys take seed * 2^32)


def apply(state: RunState, action: int, opponents: OpponentSource | None = None,
          battle_fn: BattleFn | None = None, variant: str | None = None,
          assume_legal: bool = False) -> StepInfo:
    """Apply one action in place. Raises IllegalAction (with the reason) if it is not legal.
    `variant` (default: the rules' own) "dice" seeds each battle from the run's generator.
    `battle_fn` (default: the default engine, `rune_env.battle.engines`) fights the battles.
    `assume_legal`: the caller has already checked the action against `legal_mask(state)` (the
    env does, every step), so the check is not repeated."""
    reason = None if assume_legal else why_illegal(state, action)
    if reason is not None:
        table = action_table(state.rules)
        name = table.actions[action].name if 0 <= action < len(table) else str(action)
        raise IllegalAction(f"illegal action {action} ({name}): {reason}")
    table = action_table(state.rules)
    a = table.actions[action]
    state.actions_taken.append(int(action))
    info = StepInfo(action=int(action), name=a.name)
    spec = state.rules.spec
    rules = state.rules
    kind, args = a.kind, a.args
    if kind == "choose_core":
        set_core(state, table.cores[args[0]])
        _next_choice(state)
        return info
    if kind == "choose_reward":
        _take_reward(state, state.pending["options"][args[0]])
        _next_choice(state)
        return info
    if kind == "choose_relic":
        _take_relic(state, state.pending["options"][args[0]])
        _next_choice(state)
        return info
    if kind == "ready":
        info.battle = _fight(state, opponents, battle_fn, variant)
        return info
    # preparation actions
    if kind == "set_sun_element":
        state.sun_element = table.elements[args[0]]
    elif kind == "buy_rune":
        offer = state.shop_runes[args[0]]
        state.mana -= rules.prices[offer]
        state.hand.append((offer, 1))
        state.shop_runes[args[0]] = None
        state.units_bought += 1
    elif kind == "buy_artifact":
        offer = state.shop_artifacts[args[0]]
        state.mana -= spec.artifacts[offer].price
        state.artifact_inventory.append(offer)
        state.shop_artifacts[args[0]] = None
    elif kind == "reroll":
        state.mana -= spec.run.reroll_cost
        draw_shop(state)
    elif kind == "place":
        h, c = args
        state.board[c] = state.hand.pop(h)
    elif kind == "pick_up":
        state.hand.append(state.board.pop(args[0]))
    elif kind == "sell":
        k, g = state.hand.pop(args[0])
        n = units(rules, g)
        state.mana += spec.run.rune_sell_per_unit * n
        state.units_sold += n
    elif kind in ("merge_hand", "merge_board"):
        if kind == "merge_hand":
            h, c = args[0], None
            k, g = state.hand[h]
        else:
            h, c = None, args[0]
            k, g = state.board[c]
        hand_slots, cells = _merge_partners(state, k, g, h, c)
        target = state.hand[h] if h is not None else None
        for cell in cells:
            del state.board[cell]
        keep = [r for i, r in enumerate(state.hand) if i not in hand_slots]
        if h is not None:
            # the target keeps its place among the remaining hand runes
            idx = sum(1 for i in range(h) if i not in hand_slots)
            keep[idx] = (k, g + 1)
            assert target == (k, g)
        else:
            state.board[c] = (k, g + 1)
        state.hand = keep
    elif kind == "open_sector":
        state.mana -= sector_cost(state)
        state.open_sectors.append(args[0])
    elif kind == "place_artifact":
        i, c = args
        state.artifacts[c] = state.artifact_inventory.pop(i)
    elif kind == "pick_up_artifact":
        state.artifact_inventory.append(state.artifacts.pop(args[0]))
    elif kind == "sell_artifact":
        art = state.artifact_inventory.pop(args[0])
        state.mana += int(spec.artifacts[art].price * spec.run.artifact_sell_x)
    else:
        raise AssertionError(kind)
    state.prep_actions += 1
    if state.prep_actions >= spec.run.action_cap:
        # D-41: the round's preparation ends by itself
        info.battle = _fight(state, opponents, battle_fn, variant)
        info.forced_ready = True
    return info


def _take_reward(state: RunState, option: str) -> None:
    spec = state.rules.spec
    run = spec.run
    if option == "mana":
        state.mana += run.reward_mana
    elif option == "hand_slot":
        state.hand_slots = min(run.hand_slots_max, state.hand_slots + run.reward_hand_slots)
    elif option == "artifact_slot":
        state.artifact_slots = min(run.artifact_slots_max, state.artifact_slots + run.reward_artifact_slots)
    elif option == "base_stat":
        state.hp_bonus += run.reward_base_stat_hp_x
    elif option.startswith("artifact:"):
        state.artifact_inventory.append(option.split(":", 1)[1])
    else:
        raise AssertionError(option)


def _take_relic(state: RunState, relic: str) -> None:
    spec = state.rules.spec
    mod = spec.relics[relic]
    state.relics.append(relic)
    state.hand_slots = min(spec.run.hand_slots_max, state.hand_slots + mod.hand_slots)
    state.lamp_saves += mod.lamp_saves


# -- the battle ---------------------------------------------------------------------------------
def field_opponent(board: Board, effects: RankEffects, rules: Rules,
                   rng: np.random.Generator) -> Board:
    """Add the rank's extra runes (journeyman) to an opponent as it is fielded: grade I, a
    seeded-random casting kind (DECISION: supports excluded), in a seeded-random free open cell."""
    if effects.opponent_extra_runes <= 0:
        return board
    geo = geometry(rules.radius)
    runes = dict(board.runes)
    for _ in range(effects.opponent_extra_runes):
        free = [c for c in range(geo.n_cells) if c not in runes
                and (geo.sector[c] < 0 or geo.sector[c] in board.open_sectors)]
        if not free:
            break
        cell = free[int(rng.integers(len(free)))]
        runes[cell] = (CASTING_KINDS[int(rng.integers(len(CASTING_KINDS)))], 1)
    return board.replace(runes=runes)


def player_seat(round_: int) -> int:
    """DECISION: the player is side 0 in odd rounds and side 1 in even ones, so neither gains
    the first mover's edge of D-8 over a run."""
    return (round_ + 1) % 2


def _fight(state: RunState, opponents: OpponentSource | None, battle_fn: BattleFn | None,
           variant: str | None = None) -> dict:
    from .opponents import default_opponents
    rules = state.rules
    effects = rank_effects(rules, state.rank)
    source = opponents or default_opponents(rules)
    child = np.random.default_rng(int(state.rng.integers(2**63)))
    boss = state.boss_rules
    opp = source(state.round, effects, boss, child)
    opp = opp.replace(boss_rules=tuple(boss), round=state.round, max_hp=None)
    opp = field_opponent(opp, effects, rules, child)
    me = state.to_board()
    seat = player_seat(state.round)
    pair = (me, opp) if seat == 0 else (opp, me)
    fight = battle_fn or battle_function()
    if (variant or rules.spec.variant) == "dice":
        # the dice variant: a per-battle seed from the run's generator, so a run seed (and a
        # saved run) fixes its dice too
        result = fight(pair[0], pair[1], rules, seed=int(child.integers(DICE_SEED_LIMIT)),
                       variant="dice")
    else:
        result = fight(pair[0], pair[1], rules)
    outcome = "draw" if result.winner is None else ("win" if result.winner == seat else "loss")
    summary = {"round": state.round, "outcome": outcome, "seat": seat, "time": result.time,
               "hp": [result.hp[seat], result.hp[1 - seat]],
               "max_hp": [result.max_hp[seat], result.max_hp[1 - seat]],
               "casts": [result.casts[seat], result.casts[1 - seat]],
               "seals": [result.seals[seat], result.seals[1 - seat]],
               "boss_rules": list(boss), "core": state.core,
               "kinds": sorted(k for k, _ in state.board.values()),
               "board": me.to_json(rules), "opponent": opp.to_json(rules)}
    state.battles.append(summary)
    run = rules.spec.run
    boss_win = False
    if outcome == "win":
        state.wins += 1
        if boss:
            boss_win = True
            _achieve(state, "boss_win")
        if _has_sixfold(me, rules):
            _achieve(state, "sixfold_win")
    elif outcome == "loss":
        state.losses += 1
        if state.lamp_saves > 0:
            state.lamp_saves -= 1      # the phoenix feather: this loss costs no lamp
            summary["lamp_saved"] = True
        else:
            state.lamps -= 1
    else:
        state.draws += 1
    rounds_played = state.round
    if state.lamps <= 0:
        state.over = True
    elif state.wins >= run.wins_to_clear and not run.endless:
        state.over = True
        state.cleared = True
        _achieve(state, "clear_run")
    elif rounds_played >= run.round_cap:
        state.over = True
    if state.over:
        state.pending = None
        return summary
    state.round += 1
    state.pending = None
    if boss_win:
        _queue_choice(state, {"kind": "relic", "options": _relic_options(state)})
    _start_round(state)
    return summary


def _achieve(state: RunState, name: str) -> None:
    if name not in state.achievements:
        state.achievements.append(name)


def _has_sixfold(board: Board, rules: Rules) -> bool:
    """The node achievement's test: a whole-ring (fold 6) resonance on the board at battle start."""
    geo = geometry(rules.radius)
    # a pattern counts only if each of its cells holds a rune: most boards fill no whole ring,
    # and then the analysis is not needed
    if not any(all(c in board.runes for c in cells) for _ring, cells in geo.patterns.get(6, ())):
        return False
    setup = SideSetup.of(board, rules)
    n = setup.geo.n_cells
    occ = [board.runes.get(c) for c in range(n)]
    return 6 in analyse(setup, occ, [False] * n).resonance_fold.values()
