"""`python -m rune_env play`: a run in the terminal, one typed command per action.

    python -m rune_env play [--seed N] [--rank R] [--core C] [--profile FILE] [--rules FILE]

Made for an 80 x 24 terminal: every screen (the board with the status beside it, the shop, hand,
artifacts, a pending choice and warnings; a battle's report; the help) fits in 80 columns and 24
lines, and longer output (`explain` on a full board) waits for Enter between pages. After a
battle the game waits for Enter, so the report does not scroll away (when the input is a
terminal; scripted input runs straight through).

The board is drawn as a hex diagram (flat-topped hexes, the core in the middle, ring 1 to 3
around it). Every cell shows its rune as a kind code and a grade digit (`Fi2` = fire, grade II),
`..` when empty and open, `##` when in a closed sector of the outermost ring; an artifact on a
cell adds its lower-case letter (`Fi2w`, `..m`). Beside the board: mana, lamps, wins, max HP and
why it is what it is (the round's `hp_per_round`, base-stat rewards), the core in words, relics,
the boss rules to come (and a giant boss's max HP), and which side of the battle you are this
round (side 0 in odd rounds, side 1 in even ones; side 0 moves first on ties).

`info NAME` explains any rune, core, relic, boss rule, artifact, reward or flow in words, with
the numbers of the rules in play (`--rules FILE`). The screen warns about supports that do
nothing where they stand (an amplify or delay with no casting rune outward, a mimic with none
inward, a node linking fewer than two runes); `check` lists them all.

Each game command maps to exactly one action id of `rune_env.run.actions.action_table`
(commands.py); an illegal one prints the reason (`why_illegal`) and asks again. `help` lists the
commands. `hint` asks an adviser, an agent that watches the run, what it would do (hints.py;
`scripts/play.py --hint AGENT`). End of input exits cleanly. With `--profile FILE` the run's shop
uses the profile's unlocked runes, only open ranks can be played, and the profile is updated
(achievements, cleared ranks) and saved when the run ends or is left.

`play(...)` is the same game on any text streams (tests drive it with io.StringIO).
"""
from __future__ import annotations

import numbers
import secrets
import shlex
import sys
from typing import Any, TextIO

from ..battle.engine import battle as reference_battle
from ..rules.board import Board, BoardError
from ..rules.config import KINDS, Rules, default_rules
from ..rules.geometry import geometry
from ..run.actions import action_table
from ..run.legal import why_illegal
from ..run.loop import IllegalAction, apply, new_run
from ..run.opponents import PoolError, default_opponents
from ..run.ranks import rank_effects, rank_index
from ..run.state import BattleSummary, RunState
from .commands import InputError, command_text, parse_command, what_it_names
from .hints import Adviser
from .diagram import WIDTH, beside, board_lines, board_width, draw_board, rune_code, wrap
from .profile import Profile, ProfileError
from .screen import view
from .words import boss_hp_text, fmt, hp_why, info_lines, placement_warnings

PROMPT = "> "
SCREEN_LINES = 24          # the terminal the game is drawn for: 80 x 24
PAUSE = "-- press Enter to continue --"
MORE = "-- Enter: more, q: stop --"
NO_ADVISER = "no adviser in this game: start it with scripts/play.py --hint AGENT"

# (usage, what it does): the game's commands, each one action; then the other commands
GAME_COMMANDS = [
    ("buy N", "buy rune offer N"), ("buyart N", "buy artifact offer N"),
    ("reroll", "redraw the shop's offers"), ("place H CELL", "put hand rune H on CELL"),
    ("pick CELL", "take a rune into the hand"), ("sell H", "sell hand rune H"),
    ("merge H|CELL", "merge 3 alike into grade+1"), ("open S", "open sector S (0..5)"),
    ("art A CELL", "place artifact A on CELL"), ("pickart CELL", "take an artifact back"),
    ("sellart A", "sell artifact A"), ("element NAME", "set the sun's element"),
    ("choose N", "take option N of a choice"), ("ready", "fight the round's battle"),
]
OTHER_COMMANDS = [
    ("show", "the screen again"), ("cells", "every cell's name"),
    ("explain", "each rune's power and why"), ("check", "supports that do nothing"),
    ("help", "this list"), ("quit", "leave the run"),
    ("hint", "the adviser's next move"), ("plan", "the board it aims at"),
]


def _help_text() -> str:
    def rows(items):
        out = []
        for i in range(0, len(items), 2):
            left = f"  {items[i][0]:<12} {items[i][1]}"
            right = f"{items[i + 1][0]:<12} {items[i + 1][1]}" if i + 1 < len(items) else ""
            out.append(f"{left:<43}{right}".rstrip())
        return out
    return "\n".join(
        ["Commands (cells are ring:index, e.g. 2:3; slots and offers count from 0):"]
        + rows(GAME_COMMANDS)
        + ["Other commands (no action):"] + rows(OTHER_COMMANDS)
        + ["  info NAME    a rune, core, relic, boss rule, artifact, reward or flow, in",
           "               words with its numbers (info alone: every name)"])


HELP = _help_text()

# -- battle reports -----------------------------------------------------------------------------
REPORT_LINES = SCREEN_LINES - 3     # the typed command, the "ok" line and the pause prompt
GAP_REPORT = 2                      # columns between the two boards of a report


def _side_title(rules: Rules, who: str, side: int, board: Board | None, width: int) -> str:
    if board is None:
        return f"{who}, side {side}"[:width]
    core = board.core or "no core"
    if board.sun_element:
        core += f" ({board.sun_element})"
    n = len(board.runes)
    return f"{who}, side {side}: {core}, {n} rune{'s' if n != 1 else ''}"[:width]


def _lamp_note(state: RunState, summary: BattleSummary) -> str:
    if summary.lamp_saved:
        return "the phoenix feather saved your lamp"
    if summary.outcome == "loss":
        return f"lamp lost ({state.lamps}/{rank_effects(state.rules, state.rank).lamps} left)"
    if summary.outcome == "win":
        return f"wins {state.wins}/{state.rules.spec.run.wins_to_clear}"
    return "a draw costs no lamp"


def battle_report(state: RunState, summary: BattleSummary, details: bool = True) -> list[str]:
    """The outcome of one battle and what happened in it, in at most REPORT_LINES lines of at
    most WIDTH columns: which side you were, HP left, why the max HPs are what they are, each
    side's casts and damage, and both boards side by side. `state` is the state right after the
    battle (the player's board is as it fought; only round, mana and shop have moved on)."""
    rules = state.rules
    seat = summary.seat
    outcome = summary.outcome
    rnd = summary.round
    head = {"win": "WIN", "loss": "LOSS", "draw": "DRAW"}[outcome]
    boss = f" against a boss ({'+'.join(summary.boss_rules)})" if summary.boss_rules else ""
    header = (f"-- Battle of round {rnd}{boss}: {head} at {summary.time:g} s "
              f"(you were side {seat}) --")
    if len(header) > WIDTH:
        header = f"-- Battle of round {rnd}{boss}: {head} at {summary.time:g} s --"
    hp, mx = summary.hp, summary.max_hp
    lines = [header[:WIDTH]]
    lines += wrap(f"  HP left: you {fmt(hp[0])}/{mx[0]:g} ({hp[0] / mx[0]:.0%}), "
                  f"opponent {fmt(hp[1])}/{mx[1]:g} ({hp[1] / mx[1]:.0%}); "
                  f"{_lamp_note(state, summary)}", WIDTH, "    ")
    mine = hp_why(rules, rnd, state.hp_bonus, state.core, state.relics, short=True)
    if mine.split(" ")[0] != f"{mx[0]:g}":
        mine = f"{mx[0]:g}"
    theirs = boss_hp_text(rules, rnd, summary.boss_rules) or f"{mx[1]:g}"
    if theirs.split(" ")[0] != f"{mx[1]:g}":
        theirs = f"{mx[1]:g}"
    hp_lines = wrap(f"  max HP: you {mine}; opponent {theirs}", WIDTH, "    ")
    try:
        opp = Board.from_json(summary.opponent, rules, source="opponent")
    except BoardError:
        opp = None
    trace = _trace_lines(state, summary, opp) if details and opp is not None else []
    if not trace:
        trace = [[f"  casts: you {summary.casts[0]}, opponent {summary.casts[1]}; "
                  f"runes sealed at the end: yours {summary.seals[0]}, "
                  f"theirs {summary.seals[1]}"]]
    try:
        me = Board.from_json(summary.board, rules, source="your board")
    except BoardError:  # pragma: no cover - the run's own board
        me = None
    half = board_width(rules)
    col = (WIDTH - 2 * half) // 2 + half        # where the opponent's board starts
    title = beside([_side_title(rules, "you", seat, me, col - GAP_REPORT)],
                   [_side_title(rules, "opponent", 1 - seat, opp, WIDTH - col)],
                   col - GAP_REPORT, GAP_REPORT)[0]
    left = board_lines(rules, me) if me is not None else []
    right = board_lines(rules, opp) if opp is not None else []
    boards = [title] + beside(left, right, col - GAP_REPORT, GAP_REPORT)
    # at most REPORT_LINES: the boards and the outcome always; the max HP line and the second
    # line of each side's summary when there is room
    room = REPORT_LINES - len(lines) - len(boards)
    if sum(map(len, trace)) + len(hp_lines) > room:
        trace = [t[:1] for t in trace]
    if sum(map(len, trace)) + len(hp_lines) > room:
        hp_lines = []
    body = hp_lines + [ln for t in trace for ln in t]
    return (lines + body[:max(0, room)] + boards)[:REPORT_LINES]




def _trace_lines(state: RunState, summary: BattleSummary, opp: Board) -> list[list[str]]:
    """Replay the battle with a trace (battles are deterministic) and sum up each side: per side
    at most two lines."""
    rules = state.rules
    seat = summary.seat
    me = state.to_board().replace(round=summary.round, max_hp=summary.max_hp[0])
    pair = (me, opp) if seat == 0 else (opp, me)
    try:
        result = reference_battle(pair[0], pair[1], rules, trace=True)
    except Exception:  # pragma: no cover - a report must never end the game
        return []
    outcome = "draw" if result.winner is None else ("win" if result.winner == seat else "loss")
    if outcome != summary.outcome or abs(result.time - summary.time) > 1e-9:
        return []  # not the battle that was fought (a custom battle function): no details
    lines = []
    for i, (who, side) in enumerate((("you", seat), ("opponent", 1 - seat))):
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
        parts = [f"{summary.casts[i]} cast{'' if summary.casts[i] == 1 else 's'}",
                 f"dealt {fmt(dealt)} damage"
                 + (f" ({fmt(absorbed)} into barrier)" if absorbed else "")]
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
        parts.append(f"{summary.seals[i]} of {'yours' if i == 0 else 'theirs'} sealed")
        if by_rune:
            best = max(by_rune, key=lambda c: (by_rune[c], c))
            board = pair[side]
            cell = geometry(rules.radius).parse(best)
            code = rune_code(*board.runes[cell]) if cell in board.runes else "?"
            parts.append(f"top rune {code} at {best} ({fmt(by_rune[best])})")
        text = wrap(f"  {who}: " + ", ".join(parts), WIDTH, "    ")
        if len(text) > 3:      # three lines hold every part of the longest battles seen
            text = text[:3]
            text[2] = text[2][:WIDTH - 4].rsplit(" ", 1)[0] + " ..."
        lines.append(text)
    return lines


# -- the session --------------------------------------------------------------------------------
class Session:
    """One run at the prompt. With `pause`, the game waits for Enter after each battle and
    between the pages of long output (the terminal game); without it (scripted input) it runs
    straight through."""

    def __init__(self, state: RunState, out: TextIO, profile: Profile | None = None,
                 profile_path: str | None = None, opponents=None, pause: bool = False,
                 adviser: Adviser | None = None) -> None:
        self.state = state
        self.adviser = adviser
        self.out = out
        self.profile = profile
        self.profile_path = profile_path
        self.opponents = opponents or default_opponents(state.rules)
        self.pause = pause
        self.inp: TextIO | None = None
        self.tty = False

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)

    def show(self) -> None:
        self.say(*view(self.state))

    def ask(self, prompt: str) -> str:
        """One line with its newline; "" at end of input."""
        if self.tty and self.inp is sys.stdin and self.out is sys.stdout:
            try:
                return input(prompt) + "\n"     # line editing where the terminal has it
            except EOFError:
                return ""
        self.out.write(prompt)
        self.out.flush()
        return self.inp.readline() if self.inp is not None else ""

    def read(self, inp: TextIO, tty: bool) -> str:
        """One command line with its newline; "" at end of input."""
        self.inp, self.tty = inp, tty
        return self.ask(PROMPT)

    def wait(self) -> None:
        """After a battle, with `pause`: wait for Enter so the report stays on the screen."""
        if self.pause:
            self.ask(PAUSE)

    def page(self, lines: list[str]) -> None:
        """Output of any length: with `pause`, a screen at a time (Enter for more, q to stop)."""
        limit = SCREEN_LINES - 2            # the typed command (or the last "more") and a prompt
        if not self.pause or len(lines) <= limit:
            self.say(*lines)
            return
        for i in range(0, len(lines), limit):
            self.say(*lines[i:i + limit])
            if i + limit < len(lines):
                answer = self.ask(MORE)
                if not answer or answer.strip().lower().startswith("q"):
                    return

    def run(self, inp: TextIO) -> int:
        tty = _isatty(inp)
        self.inp, self.tty = inp, tty
        echo = not tty                 # a scripted transcript shows each command after its prompt
        self.show()
        while not self.state.over:
            try:
                line = self.read(inp, tty)
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
            except KeyboardInterrupt:
                self.say("", "Interrupted.")
                self.finish(abandoned=True)
                return 130
        self.finish(abandoned=False)
        return 0

    def command(self, words: list[str]) -> bool:
        """Handle one line; False when the player quits."""
        cmd = words[0].lower()
        s = self.state
        if cmd in ("quit", "exit", "q"):
            self.say(f"You leave the run at round {s.round}.")
            return False
        if cmd in ("help", "?", "h"):
            self.say(HELP)
            return True
        if cmd == "show":
            self.show()
            return True
        if cmd == "cells":
            self.say("cell names (ring:index); the core is in the middle:",
                     *draw_board(s.rules, s.board, s.artifacts, s.open_sectors, s.core, names=True))
            return True
        if cmd == "explain":
            self.explain()
            return True
        if cmd == "info":
            try:
                self.page(info_lines(s.rules, " ".join(words[1:]), s))
            except KeyError as exc:
                self.say(f"error: {exc.args[0]}")
            return True
        if cmd == "hint":
            self.hint()
            return True
        if cmd == "plan":
            self.plan()
            return True
        if cmd == "check":
            warnings = placement_warnings(s.rules, s.board)
            lines = [ln for w in warnings for ln in wrap(f"! {w}")]
            self.page(lines or ["every support on the board does something"])
            return True
        try:
            action = parse_command(s, words)
        except InputError as exc:
            self.say(f"error: {exc}")
            return True
        reason = why_illegal(s, action)
        if reason is not None:
            name = action_table(s.rules).actions[action].name
            self.say(*wrap(f"not allowed ({name}): {reason}"))
            return True
        if self.adviser is not None:
            self.adviser.watch(s, action)
        try:
            info = apply(s, action, self.opponents)
        except IllegalAction as exc:  # pragma: no cover - why_illegal said it was legal
            self.say(f"not allowed: {exc}")
            return True
        if info.battle is None:
            self.say(f"ok: {info.name}")
            self.show()
            return True
        if info.forced_ready:
            self.say(f"ok: {info.name}; the round's last action "
                     f"({s.rules.spec.run.action_cap}): the battle starts.")
        self.say(*battle_report(s, info.battle))
        self.wait()
        if not s.over:
            self.show()
        return True

    def hint(self) -> None:
        if self.adviser is None:
            self.say(NO_ADVISER)
            return
        action = self.adviser.advise(self.state)
        what = what_it_names(self.state, action)
        self.say(f"hint: {command_text(self.state, action)}" + (f"  ({what})" if what else ""))

    def plan(self) -> None:
        s, adviser = self.state, self.adviser
        if adviser is None:
            self.say(NO_ADVISER)
            return
        board = adviser.plan(s)
        if board is None:
            # a planner draws its board at its first shop decision of the round, so a hint at a
            # pending choice (the core, a reward, a relic) leaves it with none yet
            why = ("" if not adviser.plans
                   else ": it plans once the choice is made and the shop is open"
                   if s.pending is not None else ": ask for a hint first")
            self.say(*wrap(f"{adviser.name} has no plan to show this round{why}"))
            return
        self.say(f"{adviser.name} is building toward this board in round {s.round}:",
                 *board_lines(s.rules, board))

    def explain(self) -> None:
        from ..battle.explain import explain, format_explain
        s = self.state
        if not s.board:
            self.say("the board is empty")
            return
        text = format_explain(explain(s.to_board(), s.rules))
        self.page([ln for line in text.splitlines() for ln in wrap(line, WIDTH, " " * 6)])

    def finish(self, abandoned: bool) -> None:
        s = self.state
        if not abandoned:
            if s.cleared:
                self.say(f"*** Run cleared with {s.wins} wins in {s.round} rounds! ***")
            elif s.lamps <= 0:
                self.say(f"*** Run over: every lamp is out (round {s.round}, {s.wins} wins). ***")
            else:
                self.say(f"*** Run over: the round cap was reached ({s.wins} wins). ***")
        self.say(*wrap(f"record: {s.wins} wins, {s.losses} losses, {s.draws} draws; "
                       f"achievements: {', '.join(s.achievements) or 'none'}"))
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
         stderr: TextIO | None = None, opponents=None, pause: bool | None = None,
         adviser=None) -> int:
    """Play one run on text streams. Returns the exit status: 0, or 2 for bad settings (a
    negative seed, an unknown or locked rank, an unknown core, an unreadable profile or pool),
    explained on stderr. `opponents`: as RuneRun-v0's (None: the rank's shipped pool, the budget
    drafter where none is shipped; "generator"; a pool path; a callable). `pause`: wait for
    Enter after each battle and between pages of long output; None (the default): when stdin is
    a terminal. `adviser(seed)`: an `Adviser` (hints.py) for the run's seed, which `hint` asks."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    rules = rules or default_rules()
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or seed < 0):
        print(f"error: the seed must be an integer >= 0; got {seed!r}", file=stderr)
        return 2
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
    from ..envs.run_env import resolve_opponents       # the env's: the same opponents
    try:
        opponents = resolve_opponents(opponents, rules, r)
    except (PoolError, OSError) as exc:
        print(f"error: {exc}", file=stderr)
        return 2
    if seed is None:
        seed = secrets.randbelow(2**31)
    state = new_run(seed, rules, rank=r, core=core, unlocked=unlocked)
    locked = [k for k in KINDS if unlocked is not None and k not in unlocked]
    # the rules' hash: a designer trying a rules file sees it is the one in play; the locked
    # runes on a line of their own, so each line fits the 80 columns of a terminal
    print(f"Rune Circle: seed {seed}, rank {rules.spec.ranks[r].id}, rules {rules.hash}. "
          f"Type help.", file=stdout)
    if locked:
        print(f"Locked runes: {', '.join(locked)} (achievements unlock them).", file=stdout)
    if pause is None:
        pause = _isatty(stdin)
    session = Session(state, stdout, profile, profile_path, opponents, pause=pause,
                      adviser=adviser(seed) if adviser is not None else None)
    return session.run(stdin)


def main_args(args: Any, rules: Rules | None = None, adviser=None) -> int:
    """The `play` subcommand's handler (see rune_env/cli.py; scripts/play.py passes the rules
    it read and its adviser)."""
    if rules is None:
        from ..rules import load_rules
        rules = load_rules(args.rules) if args.rules else default_rules()
    return play(seed=args.seed, rank=args.rank, core=args.core, profile_path=args.profile,
                rules=rules, opponents=args.opponents, adviser=adviser)
