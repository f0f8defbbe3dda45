"""The terminal game's typed commands and the action ids they name, both ways.

Each game command maps to exactly one action id of `rune_env.run.actions.action_table`
(`parse_command`), and each action id to exactly one command (`command_text`, which the hints
print: rune_env/terminal/hints.py). Tests check that one is the inverse of the other for every
action id (tests/terminal/test_play_hints.py).
"""
from __future__ import annotations

from ..rules.geometry import Geometry, geometry
from ..run.actions import action_table
from ..run.state import RunState
from .diagram import rune_code

# command -> (action kind, argument types); "cell" args are ring:index names, "int" are numbers.
SIMPLE_COMMANDS = {
    "buy": ("buy_rune", ("offer",)),
    "buyart": ("buy_artifact", ("offer",)),
    "reroll": ("reroll", ()),
    "place": ("place", ("hand slot", "cell")),
    "pick": ("pick_up", ("cell",)),
    "sell": ("sell", ("hand slot",)),
    "open": ("open_sector", ("sector",)),
    "art": ("place_artifact", ("artifact slot", "cell")),
    "pickart": ("pick_up_artifact", ("cell",)),
    "sellart": ("sell_artifact", ("artifact slot",)),
    "ready": ("ready", ()),
}
USAGE = {
    "buy": "buy N", "buyart": "buyart N", "reroll": "reroll", "place": "place H CELL",
    "pick": "pick CELL", "sell": "sell H", "open": "open S", "art": "art A CELL",
    "pickart": "pickart CELL", "sellart": "sellart A", "ready": "ready",
    "merge": "merge H  or  merge CELL", "element": "element NAME", "choose": "choose N",
}


class InputError(ValueError):
    """A command that cannot be turned into an action; the message says why."""


def _int(text: str, what: str, limit: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{what} must be a number, not {text!r}") from None
    if not 0 <= value < limit:
        raise InputError(f"{what} {value} is out of range (0..{limit - 1})")
    return value


def _cell(geo: Geometry, text: str) -> int:
    try:
        return geo.parse(text)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def parse_command(state: RunState, words: list[str]) -> int:
    """One game command -> its action id. Raises InputError for input that names no action."""
    rules = state.rules
    table = action_table(rules)
    geo = geometry(rules.radius)
    cmd, args = words[0].lower(), words[1:]

    def usage() -> InputError:
        return InputError(f"usage: {USAGE[cmd]}")

    if cmd in SIMPLE_COMMANDS:
        kind, types = SIMPLE_COMMANDS[cmd]
        if len(args) != len(types):
            raise usage()
        shape = table.groups[kind][1]
        values = []
        for text, typ, n in zip(args, types, shape):
            values.append(_cell(geo, text) if typ == "cell" else _int(text, typ, n))
        return table.id(kind, *values)
    if cmd == "merge":
        if len(args) != 1:
            raise usage()
        if ":" in args[0] or args[0].lower() == "core":
            return table.id("merge_board", _cell(geo, args[0]))
        return table.id("merge_hand", _int(args[0], "hand slot", rules.spec.run.hand_slots_max))
    if cmd == "element":
        if len(args) != 1:
            raise usage()
        name = args[0].lower()
        if name not in table.elements:
            raise InputError(f"unknown element {args[0]!r} (one of {', '.join(table.elements)})")
        return table.id("set_sun_element", table.elements.index(name))
    if cmd == "choose":
        if len(args) != 1:
            raise usage()
        pend = state.pending
        if pend is None:
            raise InputError("no choice is pending")
        options = pend.options
        arg = args[0].lower()
        if arg in options:
            i = options.index(arg)
        else:
            i = _int(arg, f"{pend.kind} option", len(options))
        if pend.kind == "core":
            return table.id("choose_core", table.cores.index(options[i]))
        return table.id(pend.group, i)
    raise InputError(f"unknown command {words[0]!r}; type help for the list")


# action kind -> its command (the inverse of SIMPLE_COMMANDS, and the merges); the kinds whose
# arguments are cells come from SIMPLE_COMMANDS' argument types
_COMMAND_OF = {kind: cmd for cmd, (kind, _) in SIMPLE_COMMANDS.items()}
_COMMAND_OF.update(merge_hand="merge", merge_board="merge")
_CELL_ARGS = {kind: tuple(t == "cell" for t in types) for kind, types in SIMPLE_COMMANDS.values()}
_CELL_ARGS["merge_board"] = (True,)


def command_text(state: RunState, action: int) -> str:
    """The command the player types for `action`: `parse_command(state, text.split())` gives
    `action` back."""
    table = action_table(state.rules)
    a = table.actions[action]
    if a.kind == "choose_core":
        return f"choose {table.cores[a.args[0]]}"
    if a.kind == "set_sun_element":
        return f"element {table.elements[a.args[0]]}"
    if a.kind in ("choose_reward", "choose_relic"):
        return f"choose {a.args[0]}"
    geo = geometry(state.rules.radius)
    cells = _CELL_ARGS.get(a.kind, (False,) * len(a.args))
    return " ".join([_COMMAND_OF[a.kind]] + [geo.name(arg) if is_cell else str(arg)
                                             for arg, is_cell in zip(a.args, cells)])


def _rune(piece) -> str:
    """As the screen lists a hand: code and kind (`Fi2 fire`)."""
    kind, grade = piece
    return f"{rune_code(kind, grade)} {kind}"


def what_it_names(state: RunState, action: int) -> str | None:
    """The piece or option an action's number or cell stands for in `state` (the offer bought,
    the hand rune placed or sold, the option chosen...), in words; None when the command says
    it all (reroll, ready, open, element)."""
    a = action_table(state.rules).actions[action]
    kind, args = a.kind, a.args
    if kind == "buy_rune":
        return state.shop_runes[args[0]]
    if kind == "buy_artifact":
        return state.shop_artifacts[args[0]]
    if kind in ("place", "sell", "merge_hand"):
        return _rune(state.hand[args[0]]) if args[0] < len(state.hand) else None
    if kind in ("pick_up", "merge_board"):
        return _rune(state.board[args[0]]) if args[0] in state.board else None
    if kind in ("place_artifact", "sell_artifact"):
        inventory = state.artifact_inventory
        return inventory[args[0]] if args[0] < len(inventory) else None
    if kind == "pick_up_artifact":
        return state.artifacts.get(args[0])
    if kind in ("choose_reward", "choose_relic") and state.pending is not None:
        return state.pending.options[args[0]]
    return None


__all__ = ["InputError", "SIMPLE_COMMANDS", "USAGE", "command_text", "parse_command",
           "what_it_names"]
