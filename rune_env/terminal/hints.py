"""Hints in the terminal game: an agent that watches the player's run and, asked, says what it
would do, as the command the player would type (`commands.command_text`).

`Adviser` wraps any agent of the `rune_env.envs.Agent` protocol (a baseline, a trained policy,
the search player): it builds the agent's observation and legal mask from the run state with the
envs' own encoder, so the agent sees exactly what it would see in RuneRun-v0, and passes the
state only to agents that read it (`needs_state`). The run's seed resets the agent, so a player
who takes every hint plays the very run the agent plays in the env with that seed
(tests/terminal/test_play_hints.py checks it action by action).

An agent may keep a record of its run (the search player's book of the mana it has had). It
then has two more methods, and the adviser uses them: `advise(observation, mask, state)`, the
action it would take without recording it as taken, and `watch(state, action)`, told of every
action the player takes. Agents without them are asked with `act` and told nothing. An agent
that plans ahead (the search player) plans as if its hints were taken; where the player strays,
it goes on from the run as it is. It plans only when asked, so a hint can depend on which
earlier decisions it was asked about: the search player draws its first goal when it chooses
the core, so one first asked in round 1 may aim elsewhere than one asked at the core choice.
One that builds toward a board shows it with `planned_board(state)` (the terminal's `plan`).

rune_env does not import the agents package: `scripts/play.py --hint NAME` makes the agent and
hands it to `rune_env.terminal.play.play(adviser=...)`.
"""
from __future__ import annotations

from ..rules.board import Board
from ..run.state import RunState


class Adviser:
    """An agent that advises the player of one run (the module docstring): `advise(state)` is
    the action it would take, `watch(state, action)` tells it the action the player took."""

    def __init__(self, agent, rules, name: str, seed: int):
        from ..envs.observation import Encoder      # the envs' encoder: the agent's own view
        self.agent = agent
        self.name = name
        self.encoder = Encoder(rules)
        agent.reset(seed)

    def advise(self, state: RunState) -> int:
        observation, mask = self.encoder.observe(state)
        seen = state if getattr(self.agent, "needs_state", False) else None
        ask = getattr(self.agent, "advise", None) or self.agent.act
        return int(ask(observation, mask, state=seen))

    def watch(self, state: RunState, action: int) -> None:
        watch = getattr(self.agent, "watch", None)
        if watch is not None:
            watch(state, action)

    @property
    def plans(self) -> bool:
        """Whether the agent builds toward a board it can show (`planned_board`)."""
        return hasattr(self.agent, "planned_board")

    def plan(self, state: RunState) -> Board | None:
        """The board the agent is building toward this round, or None (no plan yet: it has not
        been asked this round, or it keeps none)."""
        return self.agent.planned_board(state) if self.plans else None


__all__ = ["Adviser"]
