"""Hints in the terminal game (rune_env/terminal/hints.py, scripts/play.py --hint), the commands
both ways (rune_env/terminal/commands.py), and the opponents the game fields.

Unlike test_play_commands.py these tests play the default rules: the game's default opponents
are the rank's shipped pool, as RuneRun-v0's, and the shipped pools are of the default rules. A
player who takes every hint must play the very run the agent plays in the env with that seed,
action for action; that also checks that the game fields the env's opponents (before the hints,
the terminal game fielded the budget drafter at every rank).
"""
from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path

import pytest

from conftest import FROZEN_RULES

from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import default_rules, load_rules
from rune_env.run import action_table, new_run
from rune_env.terminal.commands import command_text, parse_command, what_it_names
from rune_env.terminal.hints import Adviser
from rune_env.terminal.play import play

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
RULES = default_rules()
CHOICES = ("choose_core", "choose_reward", "choose_relic")


# -- commands both ways -------------------------------------------------------------------------
def test_command_text_by_hand():
    """Cell ids by hand (ring k starts at id 3k(k-1)): 2:3 -> 6 + 3 = 9, 1:3 -> 3."""
    table = action_table(RULES)
    state = new_run(1, RULES)                 # a core choice is pending
    assert command_text(state, table.id("place", 0, 9)) == "place 0 2:3"
    assert command_text(state, table.id("merge_board", 9)) == "merge 2:3"
    assert command_text(state, table.id("merge_hand", 2)) == "merge 2"
    assert command_text(state, table.id("place_artifact", 1, 3)) == "art 1 1:3"
    assert command_text(state, table.id("buy_rune", 4)) == "buy 4"
    assert command_text(state, table.id("reroll")) == "reroll"
    assert command_text(state, table.id("choose_core", table.cores.index("moon"))) == "choose moon"
    assert command_text(state, table.id("set_sun_element", table.elements.index("wind"))) \
        == "element wind"


def test_a_hint_names_the_piece_its_number_stands_for():
    """`what_it_names`: the offer, the hand rune, the board rune, the option (seed 3 with the
    moon core: the shop's offers as drawn; a bought rune lands in hand slot 0 at grade 1)."""
    from rune_env.run import apply
    from rune_env.run.opponents import default_opponents
    from rune_env.terminal.diagram import rune_code
    table = action_table(RULES)
    state = new_run(3, RULES, core="moon")
    offer = state.shop_runes[0]
    assert what_it_names(state, table.id("buy_rune", 0)) == offer
    assert what_it_names(state, table.id("reroll")) is None
    apply(state, table.id("buy_rune", 0), default_opponents(RULES))
    code = rune_code(offer, 1)                       # as the screen lists the hand
    assert what_it_names(state, table.id("place", 0, 9)) == f"{code} {offer}"
    apply(state, table.id("place", 0, 9), default_opponents(RULES))
    assert what_it_names(state, table.id("pick_up", 9)) == f"{code} {offer}"
    assert what_it_names(state, table.id("pick_up", 10)) is None      # an empty cell
    core_choice = new_run(3, RULES)
    assert what_it_names(core_choice, table.id("choose_core", 0)) is None   # says it all


def test_command_text_is_the_inverse_of_parse_command_for_every_action():
    """On every state of a greedy run (apprentice, seed 2: a reward and a relic choice come up),
    every action id outside a choice, and every option of the pending choice, reads back as
    itself."""
    table = action_table(RULES)
    env = RuneRunEnv(rank="apprentice", opponents="generator")
    obs, info = env.reset(options={"run_seed": 2})
    from agents import make_agent
    greedy = make_agent("greedy", RULES, seed=2)
    seen = set()
    for _ in range(400):
        state = env.state
        pending = state.pending.group if state.pending is not None else None
        for action in table.actions:
            if action.kind in CHOICES and action.kind != pending:
                continue
            if action.kind == pending and action.args[0] >= len(state.pending.options):
                continue
            text = command_text(state, action.id)
            assert parse_command(state, text.split()) == action.id, (action.name, text)
            if action.kind in ("choose_reward", "choose_relic"):
                assert what_it_names(state, action.id) == state.pending.options[action.args[0]]
        seen.add(pending)
        obs, _, term, trunc, info = env.step(greedy.act(obs, info["action_mask"], state=state))
        if term or trunc:
            break
    assert set(CHOICES) <= seen             # each kind of choice was read back


# -- following the hints ------------------------------------------------------------------------
class FollowHints(io.StringIO):
    """Standard input of a player who asks for a hint, then types it, again and again."""

    def __init__(self, out: io.StringIO):
        super().__init__()
        self.out = out
        self.asked = False
        self.typed: list[str] = []

    def readline(self, *_):
        self.asked = not self.asked
        if self.asked:
            return "hint\n"
        last = [ln for ln in self.out.getvalue().splitlines() if ln.startswith("hint: ")][-1]
        command = last[len("hint: "):].split("  (")[0]         # without what it names
        self.typed.append(command)
        return command + "\n"


def env_run(name: str, rank: str, seed: int) -> tuple[list[str], tuple[int, int, bool]]:
    """The agent's own run in RuneRun-v0: each action as the command that names it, and the
    record (wins, losses, cleared)."""
    from agents import make_agent
    env = RuneRunEnv(rank=rank)
    agent = make_agent(name, RULES, seed=seed)
    agent.reset(seed)
    obs, info = env.reset(options={"run_seed": seed})
    commands = []
    while True:
        state = env.state
        action = agent.act(obs, info["action_mask"], state=state if agent.needs_state else None)
        commands.append(command_text(state, action))
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            return commands, (env.state.wins, env.state.losses, env.state.cleared)


@pytest.mark.parametrize("name, rank, seed", [
    ("greedy", "apprentice", 5),                        # a whole run, cleared: 99 actions
    ("planner:strong,boards=40", "archmage", 3),      # the search player, its mana book too
    ("agents/models/apprentice_s2.pt", "apprentice", 4),   # a policy: the observation
])
def test_taking_every_hint_plays_the_agents_own_run(name, rank, seed):
    from agents import make_agent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the PPO policy was trained under balance_v2
        expected, (wins, losses, cleared) = env_run(name, rank, seed)
        out = io.StringIO()
        player = FollowHints(out)
        agent = make_agent(name, RULES, seed=0)
        rc = play(seed=seed, rank=rank, rules=RULES, stdin=player, stdout=out,
                  stderr=io.StringIO(), adviser=lambda s: Adviser(agent, RULES, name, s))
    assert rc == 0
    assert player.typed == expected
    text = out.getvalue()
    assert f"record: {wins} wins, {losses} losses" in text
    assert ("*** Run cleared" in text) == cleared
    assert len(expected) > 10


def test_the_planner_records_what_the_player_takes_not_its_hints():
    """`advise` only looks; `watch` notes the player's action in the planner's mana book (what
    `spend_floor` weighs). Here the player never takes the hint, and each hint stays legal."""
    from agents import make_agent
    planner = make_agent("planner:boards=20", RULES, seed=0)
    noted = []
    note = planner.book.note
    planner.book.note = lambda state, action: noted.append(action) or note(state, action)
    env = RuneRunEnv(rank="apprentice")
    _, info = env.reset(options={"run_seed": 1})
    adviser = Adviser(planner, RULES, "planner", 1)
    for _ in range(12):
        state = env.state
        hint = adviser.advise(state)
        assert info["action_mask"][hint] and noted == []
        taken = int(next(a for a in info["action_mask"].nonzero()[0] if a != hint))
        adviser.watch(state, taken)
        assert noted == [taken]
        noted.clear()
        _, _, term, _, info = env.step(taken)
        assert not term


def test_the_plan_is_the_board_the_hints_field():
    """`planned_board`: a player who takes every hint fields, at each battle, exactly the board
    the last plan showed (the planner's target is what its moves build; archmage, two runs)."""
    from agents import make_agent
    battles = 0
    for seed in (0, 1):
        env = RuneRunEnv(rank="archmage")
        env.reset(options={"run_seed": seed})
        adviser = Adviser(make_agent("planner:boards=40", RULES, seed=0), RULES, "planner", seed)
        plan = None
        while True:
            state = env.state
            hint = adviser.advise(state)
            plan = adviser.plan(state) or plan
            adviser.watch(state, hint)
            fielded = dict(state.board)
            _, _, term, trunc, info = env.step(hint)
            if info.get("battle") is not None:
                assert dict(plan.runes) == fielded
                battles += 1
            if term or trunc:
                break
    assert battles >= 4


def test_plan_at_the_prompt():
    """Before any hint of the round there is no plan; after one, `plan` draws the planner's
    target; greedy keeps none."""
    from agents import make_agent
    from rune_env.terminal.diagram import board_lines
    agent = make_agent("planner:boards=20", RULES, seed=0)
    out = io.StringIO()
    play(seed=3, rank="archmage", core="moon", rules=RULES, stdout=out, stderr=io.StringIO(),
         stdin=io.StringIO("plan\nhint\nplan\nquit\n"),
         adviser=lambda s: Adviser(agent, RULES, "planner", s))
    text = out.getvalue()
    assert "planner has no plan to show this round: ask for a hint first" in text
    # the plan of round 1 (before its battle): any state of round 1 with no battle asks for it
    board = agent.planned_board(new_run(3, RULES, rank=5, core="moon"))
    assert board is not None and board.runes
    assert "planner is building toward this board in round 1:" in text
    assert "\n".join(board_lines(RULES, board)) in text
    out = io.StringIO()
    play(seed=3, rules=RULES, stdout=out, stderr=io.StringIO(), stdin=io.StringIO("plan\nquit\n"),
         adviser=lambda s: Adviser(make_agent("greedy", RULES), RULES, "greedy", s))
    assert "greedy has no plan to show this round\n" in out.getvalue()
    # at the core choice a hint names a core and draws no board yet: plan says when it will
    out = io.StringIO()
    play(seed=3, rank="archmage", rules=RULES, stdout=out, stderr=io.StringIO(),
         stdin=io.StringIO("hint\nplan\nquit\n"),
         adviser=lambda s: Adviser(make_agent("planner:boards=20", RULES, seed=0), RULES,
                                   "planner", s))
    assert "hint: choose " in out.getvalue()
    assert ("planner has no plan to show this round: it plans once the choice is made and the"
            " shop is open") in " ".join(out.getvalue().split())


def test_hint_without_an_adviser_says_how_to_get_one():
    out = io.StringIO()
    rc = play(seed=1, rules=RULES, stdin=io.StringIO("hint\nquit\n"), stdout=out,
              stderr=io.StringIO())
    assert rc == 0
    assert "no adviser in this game: start it with scripts/play.py --hint AGENT" in out.getvalue()


# -- the script ---------------------------------------------------------------------------------
def _script():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import play as script
    finally:
        sys.path.pop(0)
    return script


def _exit_status(script, argv) -> int:
    try:
        return script.main(argv)
    except SystemExit as exc:               # argparse's own refusals
        return exc.code


def test_script_hints_and_refuses_bad_input(monkeypatch, capsys):
    script = _script()
    monkeypatch.setattr(sys, "stdin", io.StringIO("hint\nquit\n"))
    assert script.main(["--hint", "greedy", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "hint: choose eclipse\n" in out      # greedy's first move of seed 5 (above)
    for argv, words in [(["--hint", "plannr"], "unknown agent 'plannr'"),
                        (["--hint", ""], "--hint: an empty agent name"),
                        (["--hint", "greedy", "--opponents", "no_such_pool.json"],
                         "no_such_pool.json"),
                        (["--rules", "no_rules.yaml"], "no_rules.yaml")]:
        assert _exit_status(script, argv + ["--seed", "1"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], err


def test_frozen_rules_still_take_the_budget_drafter_on_request():
    """`--opponents generator` plays the budget drafter under any rules (the frozen file has no
    pool of its own): no warning about a pool of other rules."""
    rules = load_rules(FROZEN_RULES)
    err = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc = play(seed=1, rules=rules, stdin=io.StringIO("choose 0\nready\nquit\n"),
                  stdout=io.StringIO(), stderr=err, opponents="generator")
    assert rc == 0 and err.getvalue() == ""
