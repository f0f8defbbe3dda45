"""One player's view of a duel as a Gymnasium env: a fixed opponent (an agent, or a sampler over
several) is folded into the duel, so single-agent code (MaskablePPO) trains on it unchanged."""
from __future__ import annotations

from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..envs.agent import Agent
from ..envs.arguments import as_action, check_int
from ..envs.run_env import TRAINING_SEED_LIMIT, InfoDict
from .env import AGENTS, RuneDuelEnv

SEATS = ("random", 0, 1)


class OpponentSampler(Protocol):
    """Picks the opponent of each episode: `sample(rng) -> (name, agent)`. `report(name,
    score)` (optional) hears how the learner did against it: 1 won, 0.5 drawn, 0 lost."""

    def sample(self, rng: np.random.Generator) -> tuple[str, Any]: ...


class FixedOpponent:
    """The same opponent every episode."""

    def __init__(self, agent: Any, name: str | None = None):
        self.agent = agent
        self.name = name or getattr(agent, "name", type(agent).__name__)

    def sample(self, rng: np.random.Generator) -> tuple[str, Any]:
        return self.name, self.agent


class UniformOpponents:
    """One of several opponents, uniformly at random from the env's generator."""

    def __init__(self, agents: dict[str, Any]):
        if not agents:
            raise ValueError("UniformOpponents needs at least one opponent")
        self.agents = dict(agents)
        self.names = sorted(self.agents)

    def sample(self, rng: np.random.Generator) -> tuple[str, Any]:
        name = self.names[int(rng.integers(len(self.names)))]
        return name, self.agents[name]


def as_sampler(opponent: Any) -> OpponentSampler:
    """An agent -> FixedOpponent; a dict name -> agent -> UniformOpponents; a sampler stays."""
    if hasattr(opponent, "sample") and not hasattr(opponent, "act"):
        return opponent
    if isinstance(opponent, dict):
        return UniformOpponents(opponent)
    if hasattr(opponent, "act") and hasattr(opponent, "reset"):
        return FixedOpponent(opponent)
    raise TypeError(f"opponent must be an agent (act, reset), a dict of agents or a sampler "
                    f"(sample(rng) -> (name, agent)); got {opponent!r}")


def opponent_action(agent: Agent, obs: dict[str, np.ndarray], n_actions: int, state=None) -> int:
    """An agent's action in a duel. It sees the duel observation, cut to its own length when it
    has one (`observation_size`: a RuneRun-v0 policy reads the first part, its own run), and
    the mask of the run's actions (it is asked only when it does not wait)."""
    size = getattr(agent, "observation_size", None)
    observation = obs["observation"] if size is None else obs["observation"][:size]
    mask = obs["action_mask"][:n_actions].astype(bool)
    if agent.needs_state:
        return int(agent.act(observation, mask, state=state))
    return int(agent.act(observation, mask))


def _is_seat(value: Any) -> bool:
    """"random", or the whole number 0 or 1 (not True, 1.0 or "1": `True in SEATS` holds)."""
    if isinstance(value, str):
        return value == "random"
    return (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            and value in (0, 1))


class DuelVsAgent(gym.Env):
    """One player of RuneDuel against a folded-in opponent, as a single-agent Gymnasium env.

    **Actions**: `Discrete(N)`, RuneRun-v0's action table (no `wait`: while the learner waits
    for the battle, the env steps the opponent alone). `action_masks()` for MaskablePPO.
    **Observations**: `Box(0, 1, (D,), float32)`, the duel observation of the learner's player
    (its run's flat encoding first, then the opponent's last board, lamps and wins).
    **Rewards**: the learner's duel rewards, summed over the duel steps one learner step covers:
    zero-sum +1 / -1 / 0 at the end, plus `battle_reward` x (+1 / -1 / 0) per battle.
    **Termination / truncation**: the duel's.

    Options: `opponent` (an agent with act/reset, a dict name -> agent sampled uniformly, or a
    sampler with `sample(rng) -> (name, agent)` and optionally `report(name, score)`),
    `learner_seat` ("random", the default: player_0 or player_1 drawn each episode; or 0 or 1),
    and RuneDuelEnv's keywords (rank, core, rules, battle_reward, engine, ...). Each episode the
    opponent is sampled and reset from the env's generator, so `reset(seed=...)` fixes the whole
    episode. Info: the learner's duel info, plus `opponent` (its name), `learner` (the player)
    and, at the end, `score` (1 won, 0.5 drawn, 0 lost).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponent: Any, learner_seat: str | int = "random", **duel_kwargs):
        if not _is_seat(learner_seat):
            raise ValueError(f"learner_seat must be 'random', 0 or 1; got {learner_seat!r}")
        self.sampler = as_sampler(opponent)
        self.learner_seat = learner_seat
        self.duel_env = RuneDuelEnv(**duel_kwargs)
        self.rules = self.duel_env.rules
        self.render_mode = self.duel_env.render_mode
        self.n_actions = len(self.duel_env.table)
        self.wait = self.duel_env.wait
        self.action_space = spaces.Discrete(self.n_actions)
        self.observation_space = spaces.Box(0.0, 1.0, (self.duel_env.encoder.size,), np.float32)
        self.metadata = {**type(self).metadata, **self.duel_env.metadata}
        self._obs: dict | None = None
        self._done = True
        self.me = 0
        self.opponent_name: str | None = None
        self.opponent = None

    @property
    def duel(self):
        return self.duel_env.duel

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # the options are checked before the generator is reseeded: a refused reset changes nothing
        check_int("seed", seed, lo=0, allow_none=True, none_means=" (keep the generator)")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict or None; got {options!r}")
        options = dict(options or {})
        duel_seed = check_int("reset option 'duel_seed'", options.pop("duel_seed", None), lo=0,
                              allow_none=True, none_means=" (the env draws one)")
        seat = options.pop("learner_seat", self.learner_seat)
        if not _is_seat(seat):
            raise ValueError(f"reset option 'learner_seat' must be 'random', 0 or 1; got {seat!r}")
        if options:
            raise ValueError(f"unknown reset options: {', '.join(map(repr, sorted(options)))} "
                             f"(the options are duel_seed, learner_seat)")
        super().reset(seed=seed)
        rng = self.np_random
        if duel_seed is None:
            duel_seed = int(rng.integers(TRAINING_SEED_LIMIT))
        self.me = int(rng.integers(2)) if seat == "random" else int(seat)
        self.opponent_name, self.opponent = self.sampler.sample(rng)
        self.opponent.reset(seed=int(rng.integers(TRAINING_SEED_LIMIT)))
        self._obs, infos = self.duel_env.reset(options={"duel_seed": duel_seed})
        self._done = False
        return self._obs[AGENTS[self.me]]["observation"], self._info(infos[AGENTS[self.me]])

    def step(self, action):
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        me, them = AGENTS[self.me], AGENTS[1 - self.me]
        total = 0.0
        learner_action = as_action(action)
        battle = None
        while True:
            actions = {me: learner_action, them: self._opponent_action()}
            self._obs, rewards, term, trunc, infos = self.duel_env.step(actions)
            total += rewards[me]
            battle = infos[me].get("battle", battle)
            done = term[me] or trunc[me]
            if done or not self.duel.waiting[self.me]:
                break
            learner_action = self.wait
        self._done = done
        info = self._info(infos[me])
        if battle is not None:
            info["battle"] = battle
        if term[me]:
            winner = infos[me].get("winner")
            info["score"] = 0.5 if winner is None else (1.0 if winner == me else 0.0)
            report = getattr(self.sampler, "report", None)
            if report is not None:
                report(self.opponent_name, info["score"])
        return self._obs[me]["observation"], float(total), bool(term[me]), bool(trunc[me]), info

    def _opponent_action(self) -> int:
        j = 1 - self.me
        if self.duel.waiting[j]:
            return self.wait
        return opponent_action(self.opponent, self._obs[AGENTS[j]], self.n_actions,
                               state=self.duel.players[j])

    def _info(self, info: dict) -> InfoDict:
        out = InfoDict(info)
        out["action_mask"] = self.action_masks()
        out["opponent"] = self.opponent_name
        out["learner"] = AGENTS[self.me]
        return out

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (its mask without `wait`). Once the episode is over: only
        `ready`, a placeholder, as in RuneRun-v0 (a masked sampler fails on an empty mask)."""
        if self._obs is None:
            return np.ones(self.n_actions, dtype=bool)
        if self._done:
            mask = np.zeros(self.n_actions, dtype=bool)
            mask[self.duel_env.table.groups["ready"][0]] = True
            return mask
        return self._obs[AGENTS[self.me]]["action_mask"][:self.n_actions].astype(bool)

    def render(self):
        return self.duel_env.render()
