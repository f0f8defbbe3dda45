"""The mana a run has had, as its player keeps the book (the planner's `spend_floor`).

Issue #32 asks the search player's boards to cost at least 85% of the mana the run has given it
by then, from round 3 on: the start mana, each round's income and the mana rewards it chose
(`agents.evaluation.builds` measures it so). Mana that goes to a reroll, or to a sale below the
price paid, never reaches a board. The rolling lookahead (`agents.search.rolling`) rolls for as long
as one more view pays, and at archmage its boards held 0.83 of the mana had in round 3.

`ManaBook` is the player's own record of that mana, kept from what it sees at each of its
actions (never the run's generator): the start mana at its run's first action, the income a
round's start added (`income`, read at its first action of the round, before it has changed
anything), and the reward mana it chose. `may_roll` says whether one more reroll still leaves
its holdings plus the mana left at least `floor` of the mana had: the board it fields can then
still cost that much, if it spends the rest. It is a bound on what rolling may lose, not a
promise: a sale below the price paid, or mana left unspent at ready, lowers the share further.
"""
from __future__ import annotations

from rune_env.rules import Rules
from rune_env.run.loop import income
from rune_env.run.rewards import RewardOption
from rune_env.run.state import RunState

from .boards import holdings_price


def holdings_cost(state: RunState) -> int:
    """What the run's holdings cost: runes on the board and in hand (a merged rune at its grade-I
    runes), artifacts placed and in the inventory, and the sectors opened, in opening order (the
    price a board of them costs, `agents.search.boards.board_cost`, with the inventory too)."""
    return holdings_price(state.rules, (*state.board.values(), *state.hand),
                          (*state.artifacts.values(), *state.artifact_inventory),
                          len(state.open_sectors))


def reward_mana_chosen(state: RunState, act) -> int:
    """The mana the action `act` (an `ActionTable` entry) taken from `state` adds as a reward:
    `run.reward_mana` when it chooses the mana option of a pending reward, else 0."""
    pending = state.pending
    if act.kind == "choose_reward" and pending is not None and \
            RewardOption.parse(pending.options[act.args[0]]) == RewardOption("mana"):
        return state.rules.spec.run.reward_mana
    return 0


class ManaBook:
    """The mana a run has had (the module docstring): `observe` the state at the start of each of
    the player's actions, `note` the action it takes."""

    def __init__(self, rules: Rules, action_table):
        self.rules = rules
        self.table = action_table
        self.reset()

    def reset(self) -> None:
        self.had: int | None = None       # None: no action of this run seen yet
        self.round: int | None = None

    def observe(self, state: RunState) -> None:
        if self.had is None:
            self.had, self.round = state.mana, state.round
        elif state.round != self.round:
            # the round's start has just added its income, and the player has changed nothing
            self.had += income(state)
            self.round = state.round

    def note(self, state: RunState, action: int) -> None:
        """The action about to be taken from `state`: a reward of mana adds to the mana had."""
        self.had += reward_mana_chosen(state, self.table.actions[action])

    def may_roll(self, state: RunState, floor: float) -> bool:
        """Whether one more reroll leaves the holdings plus the mana left at least `floor` of the
        mana had (always, with floor 0 or before the book has seen the run)."""
        if floor <= 0 or self.had is None:
            return True
        after = holdings_cost(state) + state.mana - self.rules.spec.run.reroll_cost
        return after >= floor * self.had


__all__ = ["ManaBook", "holdings_cost", "reward_mana_chosen"]
