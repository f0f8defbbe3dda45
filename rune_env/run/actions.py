"""Every action of a run, listed once: action id = index into one table.

The table is built from the rules (hand and artifact slot maxima, shop size, core and element
lists), once per rules object. Groups, in id order:

  choose_core[core]            a pending core choice (run start, unless the core is fixed)
  set_sun_element[element]     the sun core's element, any time during preparation
  buy_rune[offer]              a rune offer of the shop -> hand
  buy_artifact[offer]          the artifact offer -> artifact inventory
  reroll                       redraw all offers
  place[hand_slot, cell]       hand -> empty open cell
  pick_up[cell]                cell -> hand
  sell[hand_slot]              sell a hand rune
  merge_hand[hand_slot]        merge onto a hand rune (D-11)
  merge_board[cell]            merge onto a board rune (D-11)
  open_sector[sector]          open a sector of the outermost ring
  place_artifact[slot, cell]   artifact inventory -> open cell without an artifact
  pick_up_artifact[cell]       cell -> artifact inventory
  sell_artifact[slot]          sell an artifact from the inventory
  choose_reward[option]        a pending reward choice
  choose_relic[option]         a pending relic choice
  ready                        end preparation and fight

Cells are linear ids in casting order (see rune_env/rules/geometry.py); names use "ring:index".

A new group is added here (`groups_spec`, and `name_of` if its name is not "kind arg"), with its
row in `legal.RULES` (when it is legal), its effect in `loop.EFFECTS` (what it does), its block
of the compiled mask (rune_env/envs/compiled.py) and its command in rune_env/terminal/play.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..rules.config import CASTING_KINDS, Rules
from ..rules.geometry import geometry


@dataclass(frozen=True)
class Action:
    id: int
    kind: str
    args: tuple
    name: str


@dataclass(frozen=True)
class ActionTable:
    actions: tuple[Action, ...]
    groups: dict            # kind -> (first id, shape)
    cores: tuple[str, ...]
    elements: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.actions)

    def id(self, kind: str, *args: int) -> int:
        """The id of an action from its kind and integer arguments."""
        start, shape = self.groups[kind]
        offset = 0
        for a, n in zip(args, shape):
            if not 0 <= a < n:
                raise ValueError(f"{kind}{list(args)}: argument out of range")
            offset = offset * n + a
        return start + offset

    def by_name(self, name: str) -> int:
        for a in self.actions:
            if a.name == name:
                return a.id
        raise KeyError(f"no action named {name!r}")


@lru_cache(maxsize=8)
def _build(rules_hash: str, rules: Rules) -> ActionTable:
    spec = rules.spec
    geo = geometry(rules.radius)
    cores = tuple(spec.cores)
    elements = CASTING_KINDS
    run = spec.run
    cells = geo.n_cells
    groups_spec = [
        ("choose_core", (len(cores),)),
        ("set_sun_element", (len(elements),)),
        ("buy_rune", (run.shop_rune_offers,)),
        ("buy_artifact", (run.shop_artifact_offers,)),
        ("reroll", ()),
        ("place", (run.hand_slots_max, cells)),
        ("pick_up", (cells,)),
        ("sell", (run.hand_slots_max,)),
        ("merge_hand", (run.hand_slots_max,)),
        ("merge_board", (cells,)),
        ("open_sector", (6,)),
        ("place_artifact", (run.artifact_slots_max, cells)),
        ("pick_up_artifact", (cells,)),
        ("sell_artifact", (run.artifact_slots_max,)),
        ("choose_reward", (run.reward_choices,)),
        ("choose_relic", (run.relic_choices,)),
        ("ready", ()),
    ]
    actions: list[Action] = []
    groups = {}

    def name_of(kind: str, args: tuple) -> str:
        if kind == "choose_core":
            return f"choose_core {cores[args[0]]}"
        if kind == "set_sun_element":
            return f"set_sun_element {elements[args[0]]}"
        if kind in ("place", "place_artifact"):
            return f"{kind} {args[0]} -> {geo.name(args[1])}"
        if kind in ("pick_up", "merge_board", "pick_up_artifact"):
            return f"{kind} {geo.name(args[0])}"
        if not args:
            return kind
        return f"{kind} {args[0]}"

    for kind, shape in groups_spec:
        groups[kind] = (len(actions), shape)
        if not shape:
            combos = [()]
        elif len(shape) == 1:
            combos = [(i,) for i in range(shape[0])]
        else:
            combos = [(i, j) for i in range(shape[0]) for j in range(shape[1])]
        for args in combos:
            actions.append(Action(len(actions), kind, args, name_of(kind, args)))
    return ActionTable(tuple(actions), groups, cores, elements)


def action_table(rules: Rules) -> ActionTable:
    return _build(rules.hash, rules)
