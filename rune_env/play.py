"""`python -m rune_env play`: a run in the terminal, one typed command per action.

    python -m rune_env play [--seed N] [--rank R] [--core C] [--profile FILE] [--rules FILE]

The board is drawn as a hex diagram (flat-topped hexes, the core in the middle, ring 1 to 3
around it). Every cell shows its rune as a kind code and a grade digit (`Fi2` = fire, grade II),
`..` when empty and open, `##` when in a closed sector of the outermost ring; an artifact on a
cell adds its lower-case letter (`Fi2w`, `..m`). Below the board: round, mana, lamps, wins,
relics, boss rules to come, the shop, the hand and the artifacts.

Each game command maps to exactly one action id of `rune_env.run.actions.action_table`; an
illegal one prints the reason (`why_illegal`) and asks again. `help` lists the commands. End of
input exits cleanly. With `--profile FILE` the run's shop uses the profile's unlocked runes, only
open ranks can be played, and the profile is updated (achievements, cleared ranks) and saved when
the run ends or is left.

`play(...)` is the same game on any text streams (tests drive it with io.StringIO).
"""
from __future__ import annotations

import secrets
import shlex
import sys
from typing import Any, TextIO

from .battle.engine import battle as reference_battle
from .rules.board import Board, BoardError
from .rules.config import KINDS, Rules, default_rules
from .rules.geometry import Geometry, geometry
from .run.actions import action_table
from .run.loop import IllegalAction, apply, new_run, why_illegal
from .run.profile import Profile, ProfileError
from .run.ranks import rank_index
from .run.state import RunState
from .run.view import board_lines, draw_board, fmt, rune_code, view

PROMPT = "> "

HELP = """\
Commands (cells are "ring:index", e.g. 2:3; slots and offers count from 0):
  buy N            buy rune offer N of the shop into the hand
  buyart N         buy artifact offer N into the artifact inventory
  reroll           redraw every shop offer
  place H CELL     put hand rune H on an empty open cell
  pick CELL        take the rune on CELL back into the hand
  sell H           sell hand rune H
  merge H          merge onto hand rune H (uses runes of the same kind and grade)
  merge CELL       merge onto the rune on CELL
  open S           open sector S (0..5) of the outermost ring
  art A CELL       place artifact A of the inventory on an open cell
  pickart CELL     take the artifact on CELL back into the inventory
  sellart A        sell artifact A of the inventory
  element NAME     set the sun core's element (fire, wind, ...)
  choose N         take option N of a pending core, reward or relic choice (or its name)
  ready            end preparation and fight this round's battle
Other commands (no action):
  show             draw the board and the shop again
  cells            the board diagram with every cell's name
  explain          every rune's power at battle start and its multipliers
  help             this list
  quit             leave the run"""

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


# -- battle reports -----------------------------------------------------------------------------
def battle_report(state: RunState, summary: dict, details: bool = True) -> list[str]:
    """The outcome of one battle and what happened in it. `state` is the state right after the
    battle (the player's board is as it fought; only round, mana and shop have moved on)."""
    rules = state.rules
    seat = summary["seat"]
    outcome = summary["outcome"]
    head = {"win": "WIN", "loss": "LOSS", "draw": "DRAW"}[outcome]
    boss = f" against a boss ({'+'.join(summary['boss_rules'])})" if summary["boss_rules"] else ""
    hp, mx = summary["hp"], summary["max_hp"]
    lines = [f"-- Battle of round {summary['round']}{boss}: {head} at {summary['time']:g} s "
             f"(you were side {seat}) --"]
    lines.append(f"  HP left: you {fmt(hp[0])}/{mx[0]:g} ({hp[0] / mx[0]:.0%}), "
                 f"opponent {fmt(hp[1])}/{mx[1]:g} ({hp[1] / mx[1]:.0%})")
    lines.append(f"  casts: you {summary['casts'][0]}, opponent {summary['casts'][1]}; "
                 f"runes sealed at the end: yours {summary['seals'][0]}, "
                 f"theirs {summary['seals'][1]}")
    if summary.get("lamp_saved"):
        lines.append("  the phoenix feather saved your lamp")
    try:
        opp = Board.from_json(summary["opponent"], rules, source="opponent")
    except BoardError:
        opp = None
    if details and opp is not None:
        lines += _trace_lines(state, summary, opp)
    if opp is not None:
        desc = f"core {opp.core}" if opp.core else "no core"
        lines.append(f"  opponent's board ({desc}"
                     + (f", element {opp.sun_element}" if opp.sun_element else "")
                     + f", {len(opp.runes)} runes):")
        lines += ["    " + ln for ln in board_lines(rules, opp)]
    return lines


def _trace_lines(state: RunState, summary: dict, opp: Board) -> list[str]:
    """Replay the battle with a trace (battles are deterministic) and sum up each side."""
    rules = state.rules
    seat = summary["seat"]
    me = state.to_board().replace(round=summary["round"], max_hp=summary["max_hp"][0])
    pair = (me, opp) if seat == 0 else (opp, me)
    try:
        result = reference_battle(pair[0], pair[1], rules, trace=True)
    except Exception:  # pragma: no cover - a report must never end the game
        return []
    outcome = "draw" if result.winner is None else ("win" if result.winner == seat else "loss")
    if outcome != summary["outcome"] or abs(result.time - summary["time"]) > 1e-9:
        return []  # not the battle that was fought (a custom battle function): no details
    lines = []
    for who, side in (("you", seat), ("opponent", 1 - seat)):
        dealt = absorbed = healed = barrier = 0.0
        erosions = freezes = curses = 0
        by_rune: dict[str, float] = {}
        for ev in result.events:
            typ = ev["type"]
            if typ == "hit" and ev.get("by") == side:
                dealt += ev["value"]
                absorbed += ev.get("absorbed", 0.0)
                src = ev.get("source")
                if src:
                    by_rune[src] = by_rune.get(src, 0.0) + ev["value"]
            elif typ == "heal" and ev["side"] == side:
                healed += ev["value"]
            elif typ == "barrier" and ev["side"] == side:
                barrier += ev["value"]
            elif typ == "erosion" and ev.get("by") == side:
                erosions += 1
            elif typ == "freeze" and ev["side"] != side:
                freezes += 1
            elif typ == "curse" and ev["side"] != side:
                curses += 1
        parts = [f"dealt {fmt(dealt)} damage" + (f" ({fmt(absorbed)} into barrier)" if absorbed else "")]
        if healed:
            parts.append(f"healed {fmt(healed)}")
        if barrier:
            parts.append(f"gained {fmt(barrier)} barrier")
        if erosions:
            parts.append(f"eroded {erosions}x")
        if freezes:
            parts.append(f"froze {freezes}x")
        if curses:
            parts.append(f"cursed {curses}x")
        if by_rune:
            best = max(by_rune, key=lambda c: (by_rune[c], c))
            board = pair[side]
            cell = geometry(rules.radius).parse(best)
            code = rune_code(*board.runes[cell]) if cell in board.runes else "?"
            parts.append(f"top rune {code} at {best} ({fmt(by_rune[best])})")
        lines.append(f"  {who}: " + ", ".join(parts))
    return lines


# -- commands -> action ids ---------------------------------------------------------------------
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
        options = pend["options"]
        arg = args[0].lower()
        if arg in options:
            i = options.index(arg)
        else:
            i = _int(arg, f"{pend['kind']} option", len(options))
        if pend["kind"] == "core":
            return table.id("choose_core", table.cores.index(options[i]))
        return table.id("choose_" + pend["kind"], i)
    raise InputError(f"unknown command {words[0]!r}; type help for the list")


# -- the session --------------------------------------------------------------------------------
class Session:
    def __init__(self, state: RunState, out: TextIO, profile: Profile | None = None,
                 profile_path: str | None = None, opponents=None) -> None:
        self.state = state
        self.out = out
        self.profile = profile
        self.profile_path = profile_path
        self.opponents = opponents

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)

    def show(self) -> None:
        self.say(*view(self.state))

    def read(self, inp: TextIO, tty: bool) -> str:
        """One line with its newline; "" at end of input."""
        if tty and inp is sys.stdin and self.out is sys.stdout:
            try:
                return input(PROMPT) + "\n"     # line editing where the terminal has it
            except EOFError:
                return ""
        self.out.write(PROMPT)
        self.out.flush()
        return inp.readline()

    def run(self, inp: TextIO) -> int:
        tty = _isatty(inp)
        echo = not tty                 # a scripted transcript shows each command after its prompt
        self.show()
        while not self.state.over:
            try:
                line = self.read(inp, tty)
            except KeyboardInterrupt:
                self.say("", "Interrupted.")
                self.finish(abandoned=True)
                return 130
            if not line:
                self.say("", f"End of input: leaving the run at round {self.state.round}.")
                self.finish(abandoned=True)
                return 0
            if echo:
                self.say(line.rstrip("\n"))
            try:
                words = shlex.split(line, comments=True)
            except ValueError as exc:
                self.say(f"error: {exc}")
                continue
            if not words:
                continue
            if not self.command(words):
                self.finish(abandoned=True)
                return 0
        self.finish(abandoned=False)
        return 0

    def command(self, words: list[str]) -> bool:
        """Handle one line; False when the player quits."""
        cmd = words[0].lower()
        if cmd in ("quit", "exit", "q"):
            self.say(f"You leave the run at round {self.state.round}.")
            return False
        if cmd in ("help", "?", "h"):
            self.say(HELP)
            return True
        if cmd == "show":
            self.show()
            return True
        if cmd == "cells":
            s = self.state
            self.say("cell names (ring:index); the core is in the middle:",
                     *draw_board(s.rules, s.board, s.artifacts, s.open_sectors, s.core, names=True))
            return True
        if cmd == "explain":
            self.explain()
            return True
        try:
            action = parse_command(self.state, words)
        except InputError as exc:
            self.say(f"error: {exc}")
            return True
        reason = why_illegal(self.state, action)
        if reason is not None:
            name = action_table(self.state.rules).actions[action].name
            self.say(f"not allowed ({name}): {reason}")
            return True
        try:
            info = apply(self.state, action, self.opponents)
        except IllegalAction as exc:  # pragma: no cover - why_illegal said it was legal
            self.say(f"not allowed: {exc}")
            return True
        if info.battle is None:
            self.say(f"ok: {info.name}")
            self.show()
            return True
        if info.forced_ready:
            self.say(f"ok: {info.name}",
                     f"That was the round's last action ({self.state.rules.spec.run.action_cap}): "
                     f"the battle starts.")
        self.say(*battle_report(self.state, info.battle))
        if not self.state.over:
            self.show()
        return True

    def explain(self) -> None:
        from .battle.explain import explain, format_explain
        s = self.state
        if not s.board:
            self.say("the board is empty")
            return
        self.say(format_explain(explain(s.to_board(), s.rules)))

    def finish(self, abandoned: bool) -> None:
        s = self.state
        if not abandoned:
            if s.cleared:
                self.say(f"*** Run cleared with {s.wins} wins in {s.round} rounds! ***")
            elif s.lamps <= 0:
                self.say(f"*** Run over: every lamp is out (round {s.round}, {s.wins} wins). ***")
            else:
                self.say(f"*** Run over: the round cap was reached ({s.wins} wins). ***")
        self.say(f"record: {s.wins} wins, {s.losses} losses, {s.draws} draws; "
                 f"achievements: {', '.join(s.achievements) or 'none'}")
        if self.profile is not None and self.profile_path is not None:
            new = self.profile.record_run(s)
            self.profile.save(self.profile_path)
            self.say(f"profile saved to {self.profile_path}"
                     + (f" (new: {', '.join(new)})" if new else ""))


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def play(seed: int | None = None, rank: int | str = 0, core: str | None = None,
         profile_path: str | None = None, rules: Rules | None = None,
         stdin: TextIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None, opponents=None) -> int:
    """Play one run on text streams. Returns the exit status: 0, or 2 for bad settings (an
    unknown or locked rank, an unknown core, an unreadable profile), explained on stderr."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    rules = rules or default_rules()
    if isinstance(rank, str) and rank.isdigit():
        rank = int(rank)
    try:
        r = rank_index(rules, rank)
    except ValueError as exc:
        print(f"error: {exc}", file=stderr)
        return 2
    if core is not None and core not in rules.spec.cores:
        print(f"error: unknown core {core!r} (one of {', '.join(rules.spec.cores)})", file=stderr)
        return 2
    profile = None
    unlocked = None
    if profile_path is not None:
        try:
            profile = Profile.load(profile_path)
        except ProfileError as exc:
            print(f"error: {exc}", file=stderr)
            return 2
        name = rules.spec.ranks[r].id
        open_ranks = profile.open_ranks(rules)
        if name not in open_ranks:
            print(f"error: rank {name!r} is not open in profile {profile_path}; open ranks: "
                  f"{', '.join(open_ranks)} (clear a run at the rank below it to open it)",
                  file=stderr)
            return 2
        unlocked = profile.unlocked(rules)
    if seed is None:
        seed = secrets.randbelow(2**31)
    state = new_run(seed, rules, rank=r, core=core, unlocked=unlocked)
    locked = [k for k in KINDS if unlocked is not None and k not in unlocked]
    print(f"Rune Circle: seed {seed}, rank {rules.spec.ranks[r].id}"
          + (f", locked runes: {', '.join(locked)}" if locked else "")
          + ". Type help for the commands.", file=stdout)
    session = Session(state, stdout, profile, profile_path, opponents)
    return session.run(stdin)


def main_args(args: Any) -> int:
    """The `play` subcommand's handler (see rune_env/cli.py)."""
    from .rules import load_rules
    rules = load_rules(args.rules) if args.rules else default_rules()
    return play(seed=args.seed, rank=args.rank, core=args.core, profile_path=args.profile,
                rules=rules)
