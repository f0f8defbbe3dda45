"""When each action is legal: one row per action group, in one table (`RULES`).

A group's row lists the conditions its actions need, in the order they are checked, each
`(argument, fact, why)`: `argument` is the one the condition is about (0: the first, 1: the
second; None: the whole group); `fact` names a fact of the state that says where it holds (for
an argument, a bit set: bit i for the argument's value i; for the whole group, a bool);
`why(state, tables, value)` (without `value` for the whole group) says in words why it fails.
The facts are computed together, once per state (`_facts`: those of the preparation, or those
of a pending choice). Both answers come from the table:

- `why_illegal(state, a)`: the first condition that fails for a's arguments, in words, or None;
- `legal_mask(state)`: every action at once: per group, the bits of each argument ANDed over
  its conditions, the group's block of the mask their product.

Before a group's row comes the phase of the run (`_phase`): nothing is legal in a finished
run, and while a choice is pending only the group that takes it (RULES section 16, E-28).

The compiled mask of the env's observation kernel states the same rules in numba, for speed;
tests compare it with `legal_mask` on random and fuzzed states.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

import numpy as np

from ..rules.config import Rules
from ..rules.geometry import geometry
from .actions import action_table
from .state import PENDING_KINDS, RunState

CHOICE_GROUPS = {"choose_" + kind: kind for kind in PENDING_KINDS}   # group -> choice kind


# -- facts of a state that more than the legality reads ------------------------------------------
def is_open(state: RunState, cell: int) -> bool:
    s = geometry(state.rules.radius).sector[cell]
    return s < 0 or s in state.open_sectors


def open_cells(rules: Rules, open_sectors) -> np.ndarray:
    """A bool per cell: open to runes and artifacts with these outer sectors open (remembered
    per set of sectors; do not modify the array)."""
    return _open_array(_tables(rules), frozenset(open_sectors))


def sector_cost(state: RunState) -> int | None:
    """The price of the next sector to open (None when all are open)."""
    costs = state.rules.spec.sectors.open_costs
    n = len(state.open_sectors)
    return costs[n] if n < len(costs) else None


# -- facts: what the conditions read of a state, computed together ------------------------------
def _facts(s: RunState, t: _Tables) -> dict:
    """fact name -> its value for one state (bits over an argument's values, or a bool): those of
    a pending choice while one is pending, else those of the preparation."""
    if s.over:
        return {}
    if s.pending is not None:
        options = s.pending.options
        return {"offered_cores": _bits([i for i, c in enumerate(t.cores) if c in options]),
                "options": _held(len(options))}
    return _preparation_facts(s, t)


def _preparation_facts(s: RunState, t: _Tables) -> dict:
    """The facts of a state in preparation (a pass over each part of the state that they read)."""
    hand, board, mana, top = s.hand, s.board, s.mana, t.max_grade
    counts: dict = {}                # (kind, grade) -> how many the hand and the board hold
    hand_below_top = 0
    for h, r in enumerate(hand):
        counts[r] = counts.get(r, 0) + 1
        if r[1] < top:
            hand_below_top |= 1 << h
    rune_cells = board_below_top = 0
    for c, r in board.items():
        counts[r] = counts.get(r, 0) + 1
        rune_cells |= 1 << c
        if r[1] < top:
            board_below_top |= 1 << c
    hand_partners = board_partners = 0
    need = t.merge_count
    if counts and max(counts.values()) >= need:
        for h, r in enumerate(hand):
            if counts[r] >= need:
                hand_partners |= 1 << h
        for c, r in board.items():
            if counts[r] >= need:
                board_partners |= 1 << c
    runes_left, runes_paid = _offers(s.shop_runes, mana, s.rules.prices)
    artifacts_left, artifacts_paid = _offers(s.shop_artifacts, mana, t.art_prices)
    artifact_cells = _bits(s.artifacts)
    cost = sector_cost(s)
    # bits over hand slots (hand_*), inventory slots, offers, cells, sectors or elements
    return {
        "core_flows": s.core in t.flowing,
        "other_elements": t.elements_bits & ~t.element_bit.get(s.sun_element, 0),
        "runes_left": runes_left, "runes_paid": runes_paid,
        "hand_room": len(hand) < s.hand_slots,
        "artifacts_left": artifacts_left, "artifacts_paid": artifacts_paid,
        "artifact_room": s.artifacts_held < s.artifact_slots,
        "reroll_paid": mana >= t.reroll_cost,
        "hand_held": _held(len(hand)),
        "open": t.open_bits(s.open_sectors),                 # cells not in a closed sector
        "rune_cells": rune_cells, "no_rune_cells": t.cells & ~rune_cells,
        "hand_below_top": hand_below_top, "board_below_top": board_below_top,
        # the runes with merge_count - 1 more of their kind and grade in hand and board
        "hand_with_partners": hand_partners, "board_with_partners": board_partners,
        "closed_sectors": t.sectors & ~_bits(s.open_sectors),
        "sector_paid": cost is not None and mana >= cost,
        "inventory_held": _held(len(s.artifact_inventory)),
        "artifact_cells": artifact_cells, "no_artifact_cells": t.cells & ~artifact_cells,
    }


def _offers(offers: list, mana: int, prices: dict) -> tuple[int, int]:
    """The bits of the shop's offers not bought yet, and of those that `mana` pays for."""
    left = paid = 0
    for i, o in enumerate(offers):
        if o is not None:
            left |= 1 << i
            if mana >= prices[o]:
                paid |= 1 << i
    return left, paid


def _bits(indices: Iterable[int]) -> int:
    m = 0
    for i in indices:
        m |= 1 << i
    return m


def _held(n: int) -> int:
    """The bits of the first n slots (the filled ones: slots are list indices)."""
    return (1 << n) - 1


# -- reasons: why a condition fails, in words ----------------------------------------------------
def _core_not_offered(s: RunState, t: _Tables, i: int) -> str:
    return f"the core choice does not offer {t.cores[i]}; choose one of {s.pending.options}"


def _no_such_option(s: RunState, t: _Tables, i: int) -> str:
    return f"the {s.pending.kind} choice has only {len(s.pending.options)} options"


def _no_flow(s: RunState, t: _Tables) -> str:
    return "only a core that flows (sun) has an element"


def _same_element(s: RunState, t: _Tables, e: int) -> str:
    return f"the element is already {s.sun_element}"


def _rune_bought(s: RunState, t: _Tables, i: int) -> str:
    return f"rune offer {i} was already bought"


def _rune_too_dear(s: RunState, t: _Tables, i: int) -> str:
    offer = s.shop_runes[i]
    return f"{offer} costs {s.rules.prices[offer]} mana; you have {s.mana}"


def _hand_full(s: RunState, t: _Tables) -> str:
    return f"the hand is full ({s.hand_slots} slots)"


def _artifact_bought(s: RunState, t: _Tables, i: int) -> str:
    return f"artifact offer {i} was already bought"


def _artifact_too_dear(s: RunState, t: _Tables, i: int) -> str:
    offer = s.shop_artifacts[i]
    return f"{offer} costs {t.art_prices[offer]} mana; you have {s.mana}"


def _no_artifact_slot(s: RunState, t: _Tables) -> str:
    return f"no free artifact slot ({s.artifact_slots} in use)"


def _reroll_too_dear(s: RunState, t: _Tables) -> str:
    return f"a reroll costs {t.reroll_cost} mana; you have {s.mana}"


def _empty_hand_slot(s: RunState, t: _Tables, h: int) -> str:
    return f"hand slot {h} is empty"


def _closed_cell(s: RunState, t: _Tables, c: int) -> str:
    return f"cell {t.name(c)} is in a closed sector"


def _rune_there(s: RunState, t: _Tables, c: int) -> str:
    return f"cell {t.name(c)} already holds a rune"


def _no_rune(s: RunState, t: _Tables, c: int) -> str:
    return f"cell {t.name(c)} holds no rune"


def _top_grade(rune: tuple) -> str:
    return f"{rune[0]} is already grade {rune[1]}, the highest"


def _too_few(s: RunState, t: _Tables, rune: tuple) -> str:
    held = sum(1 for r in s.hand if r == rune) + sum(1 for r in s.board.values() if r == rune)
    return (f"merging needs {t.merge_count - 1} more {rune[0]} of grade {rune[1]}; "
            f"there are {held - 1}")


def _top_grade_in_hand(s: RunState, t: _Tables, h: int) -> str:
    return _top_grade(s.hand[h])


def _top_grade_on_board(s: RunState, t: _Tables, c: int) -> str:
    return _top_grade(s.board[c])


def _too_few_for_hand(s: RunState, t: _Tables, h: int) -> str:
    return _too_few(s, t, s.hand[h])


def _too_few_for_board(s: RunState, t: _Tables, c: int) -> str:
    return _too_few(s, t, s.board[c])


def _sector_open(s: RunState, t: _Tables, x: int) -> str:
    return f"sector {x} is already open"


def _sector_too_dear(s: RunState, t: _Tables) -> str:
    return f"opening a sector costs {sector_cost(s)} mana; you have {s.mana}"


def _empty_artifact_slot(s: RunState, t: _Tables, i: int) -> str:
    return f"artifact slot {i} is empty"


def _artifact_there(s: RunState, t: _Tables, c: int) -> str:
    return f"cell {t.name(c)} already holds an artifact"


def _no_artifact(s: RunState, t: _Tables, c: int) -> str:
    return f"cell {t.name(c)} holds no artifact"


# -- the rules: a group's conditions, in the order they are checked --------------------------------
SLOT = OFFER = CELL = SECTOR = OPTION = ELEMENT = 0    # the argument a condition is about: the
TO_CELL = 1                                            # first, the second (where to place), or
GROUP = None                                           # none: the whole group
RULES: dict[str, tuple] = {
    # a pending core choice: a core it offers
    "choose_core": ((OPTION, "offered_cores", _core_not_offered),),
    # a core that flows (the sun) takes any element but its own, at any time
    "set_sun_element": ((GROUP, "core_flows", _no_flow),
                        (ELEMENT, "other_elements", _same_element)),
    # an offer not bought yet, its price in mana, a free hand slot (D-39, D-40)
    "buy_rune": ((OFFER, "runes_left", _rune_bought), (OFFER, "runes_paid", _rune_too_dear),
                 (GROUP, "hand_room", _hand_full)),
    # an offer not bought yet, its price in mana, a free artifact slot
    "buy_artifact": ((OFFER, "artifacts_left", _artifact_bought),
                     (OFFER, "artifacts_paid", _artifact_too_dear),
                     (GROUP, "artifact_room", _no_artifact_slot)),
    # its cost in mana
    "reroll": ((GROUP, "reroll_paid", _reroll_too_dear),),
    # a hand rune onto an open cell without a rune
    "place": ((SLOT, "hand_held", _empty_hand_slot), (TO_CELL, "open", _closed_cell),
              (TO_CELL, "no_rune_cells", _rune_there)),
    # a board rune into a free hand slot
    "pick_up": ((CELL, "rune_cells", _no_rune), (GROUP, "hand_room", _hand_full)),
    # a hand rune
    "sell": ((SLOT, "hand_held", _empty_hand_slot),),
    # D-11, onto a hand or a board rune: below the highest grade, and merge_count of its kind
    # and grade in hand and board together, itself included
    "merge_hand": ((SLOT, "hand_held", _empty_hand_slot),
                   (SLOT, "hand_below_top", _top_grade_in_hand),
                   (SLOT, "hand_with_partners", _too_few_for_hand)),
    "merge_board": ((CELL, "rune_cells", _no_rune), (CELL, "board_below_top", _top_grade_on_board),
                    (CELL, "board_with_partners", _too_few_for_board)),
    # a closed sector, for the next opening's price (D-4)
    "open_sector": ((SECTOR, "closed_sectors", _sector_open),
                    (GROUP, "sector_paid", _sector_too_dear)),
    # an inventory artifact onto an open cell without an artifact (with or without a rune)
    "place_artifact": ((SLOT, "inventory_held", _empty_artifact_slot),
                       (TO_CELL, "open", _closed_cell),
                       (TO_CELL, "no_artifact_cells", _artifact_there)),
    # a placed artifact back into the inventory (it keeps its slot)
    "pick_up_artifact": ((CELL, "artifact_cells", _no_artifact),),
    # an inventory artifact
    "sell_artifact": ((SLOT, "inventory_held", _empty_artifact_slot),),
    # a pending reward or relic choice: one of its options, by position
    "choose_reward": ((OPTION, "options", _no_such_option),),
    "choose_relic": ((OPTION, "options", _no_such_option),),
    # always (in preparation: the phase)
    "ready": (),
}


def _phase(s: RunState, t: _Tables) -> tuple[tuple, Callable[[str], str]]:
    """The groups open now, and why another group is closed: none in a finished run; while a
    choice is pending, only the group that takes it (E-28); else every group but the choices."""
    if s.over:
        return (), lambda group: "the run is over"
    pend = s.pending
    if pend is not None:
        return (pend.group,), \
            lambda group: f"a {pend.kind} choice is pending: choose one of {pend.options} first"
    return t.preparation, lambda group: f"no {CHOICE_GROUPS[group]} choice is pending"


# -- the two answers -----------------------------------------------------------------------------
def why_illegal(state: RunState, action: int) -> str | None:
    """None if `action` is legal, else the reason in words."""
    t = _tables(state.rules)
    if not 0 <= action < t.size:
        return f"action id {action} is outside the table (0..{t.size - 1})"
    a = t.actions[action]
    groups, closed = _phase(state, t)
    if a.kind not in groups:
        return closed(a.kind)
    f = _facts(state, t)
    for axis, fact, why in RULES[a.kind]:
        if axis is None:
            if not f[fact]:
                return why(state, t)
        elif not f[fact] >> a.args[axis] & 1:
            return why(state, t, a.args[axis])
    return None


def legal_mask(state: RunState) -> np.ndarray:
    """A bool per action id: True where `why_illegal` is None (from the same table). Built as one
    int, bit = action id, and unpacked once."""
    t = _tables(state.rules)
    groups, _closed = _phase(state, t)
    f = _facts(state, t)
    bits = 0
    for group in groups:
        start, first_all, n, row_all = t.blocks[group]
        first = second = -1          # the values of each argument where every condition holds
        for axis, fact, _why in RULES[group]:
            if axis is None:
                if not f[fact]:
                    break
            elif axis:
                second &= f[fact]
                if not second:
                    break
            else:
                first &= f[fact]
                if not first:
                    break
        else:
            first &= first_all
            if not n:
                bits |= first << start           # one argument (or none: first_all is 1)
                continue
            second &= row_all
            while first:                         # two: a row of the second per first value
                low = first & -first
                bits |= second << (start + (low.bit_length() - 1) * n)
                first ^= low
    return np.unpackbits(np.frombuffer(bits.to_bytes(t.n_bytes, "little"), np.uint8),
                         count=t.size, bitorder="little").view(bool)


def legal_actions(state: RunState) -> list[int]:
    return [int(i) for i in np.flatnonzero(legal_mask(state))]


# -- what the rules read that depends only on the rules ------------------------------------------
@dataclass(frozen=True)
class _Tables:
    size: int
    n_bytes: int
    actions: tuple
    blocks: dict                # group -> (first id, bits of the first argument's values (1: no
    #                             argument), values of the second (0: none), bits of those)
    preparation: tuple          # every group but the choices, in id order
    cores: tuple
    elements_bits: int
    element_bit: dict           # element -> its bit
    flowing: frozenset          # cores with a sun flow (an element to choose)
    art_prices: dict
    merge_count: int
    max_grade: int
    reroll_cost: int
    cells: int                  # the bits of every cell
    sectors: int                # the bits of every outer sector
    sector: np.ndarray          # cell -> sector of the outermost ring, -1 inside
    name: Callable[[int], str]  # cell -> "ring:index"
    open_arrays: dict           # frozenset of open sectors -> bool per cell (filled lazily)
    _open_bits: dict            # the same as bits

    def open_bits(self, open_sectors) -> int:
        """`open_cells` as bits, remembered per set of open sectors."""
        key = frozenset(open_sectors)
        bits = self._open_bits.get(key)
        if bits is None:
            bits = self._open_bits[key] = _bits(np.flatnonzero(_open_array(self, key)).tolist())
        return bits


def _open_array(t: _Tables, key: frozenset) -> np.ndarray:
    cells = t.open_arrays.get(key)
    if cells is None:
        cells = (t.sector < 0) | np.isin(t.sector, list(key))
        cells.setflags(write=False)
        t.open_arrays[key] = cells
    return cells


@lru_cache(maxsize=8)
def _tables_of(rules_hash: str, rules: Rules) -> _Tables:
    table = action_table(rules)
    spec = rules.spec
    geo = geometry(rules.radius)
    assert set(RULES) == set(table.groups), set(RULES) ^ set(table.groups)
    return _Tables(
        size=len(table), n_bytes=(len(table) + 7) // 8, actions=table.actions,
        blocks={g: (start, _held(shape[0]) if shape else 1, shape[1] if len(shape) > 1 else 0,
                    _held(shape[1]) if len(shape) > 1 else 0)
                for g, (start, shape) in table.groups.items()},
        preparation=tuple(g for g in table.groups if g not in CHOICE_GROUPS),
        cores=tuple(table.cores),
        elements_bits=_held(len(table.elements)),
        element_bit={e: 1 << i for i, e in enumerate(table.elements)},
        flowing=frozenset(c for c, m in spec.cores.items() if m.core_flow_strength > 0),
        art_prices={a: m.price for a, m in spec.artifacts.items()},
        merge_count=spec.grades.merge_count, max_grade=rules.max_grade,
        reroll_cost=spec.run.reroll_cost,
        cells=_held(geo.n_cells), sectors=_held(table.groups["open_sector"][1][0]),
        sector=np.array(geo.sector, dtype=np.int64), name=geo.name,
        open_arrays={}, _open_bits={})


def _tables(rules: Rules) -> _Tables:
    return _tables_of(rules.hash, rules)
