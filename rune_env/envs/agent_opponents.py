"""An opponent source made from any agent: the agent drafts the opponent's board."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..rules.board import Board
from ..rules.config import Rules
from ..run.actions import action_table
from ..run.loop import apply, new_draft
from ..run.ranks import RankEffects, opponent_budget
from .agent import Agent
from .observation import Encoder


@dataclass
class AgentOpponents:
    """`(round, rank_effects, boss_rules, rng) -> Board`: a fresh draft state with the round's
    opponent budget (D-44), played by `agent` until it readies (or the action cap nears)."""

    agent: Agent
    rules: Rules
    obs_mode: str = "flat"
    _encoder: Encoder | None = field(default=None, repr=False)

    def __call__(self, round_: int, effects: RankEffects, boss_rules: list,
                 rng: np.random.Generator) -> Board:
        if self._encoder is None:
            self._encoder = Encoder(self.rules)
        seed = int(rng.integers(2**31))
        state = new_draft(seed, self.rules, round_, opponent_budget(self.rules, round_, effects))
        self.agent.reset(seed)
        ready = action_table(self.rules).id("ready")
        cap = self.rules.spec.run.action_cap - 1
        while True:
            # one compiled call, as the env's step (the same values as encode_flat, legal_mask)
            obs, mask = self._encoder.observe(state)
            if self.obs_mode != "flat":
                obs = self._encoder.split(obs)
            # agents that read the run state (the greedy drafter) get the draft state
            a = int(self.agent.act(obs, mask, state=state) if self.agent.needs_state
                    else self.agent.act(obs, mask))
            if a == ready and state.pending is None:
                break
            apply(state, a)             # never the battle: the draft stops before the cap
            if state.prep_actions >= cap:
                break
        return state.to_board().replace(max_hp=None)
