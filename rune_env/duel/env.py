"""RuneDuel: two players in the PettingZoo Parallel API (and AEC through PettingZoo's own
conversion). A thin adapter over rune_env/run/duel.py, which holds the duel's rules."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from ..battle.engines import battle_function, default_engine
from ..envs.arguments import (as_action, check_choice, check_core, check_engine, check_int, check_rank,
                              check_real, check_unlocked)
from ..envs.run_env import ENV_VERSION, TRAINING_SEED_LIMIT, VARIANTS, resolve_rules
from ..rules.config import Rules
from ..run.actions import action_table
from ..run.duel import PLAYERS, DuelState, new_duel, step_duel, wait_action
from ..run.legal import why_illegal
from ..run.loop import IllegalAction
from .observation import DuelEncoder

AGENTS = tuple(f"player_{i}" for i in range(PLAYERS))
RESET_OPTIONS = ("rank", "core", "duel_seed")


def max_duel_steps(rules: Rules) -> int:
    """An upper bound on a duel's steps when every action is legal: per round the preparation
    cap (D-41), the pending choices (a core, a reward, a relic) and the `wait` of the player
    that readied first."""
    run = rules.spec.run
    return run.round_cap * (run.action_cap + 3 + 1)


# max_cycles' bound, an input bound: a duel's steps are a few hundred (max_duel_steps); a limit past
# 10**9 steps is no limit a duel could reach in days.
MAX_CYCLES = 10**9

class RuneDuelEnv(ParallelEnv):
    """RuneDuel: two players, `player_0` and `player_1`, each with a whole run of its own; each
    round their two boards fight each other.

    **Agents**: `possible_agents = ["player_0", "player_1"]`; both are live until the duel ends,
    then `agents` is empty.

    **Actions**: `Discrete(N + 1)` per agent: the N actions of RuneRun-v0's table (the same ids)
    and `wait` = N. Each step both agents act at once. A player whose preparation has ended
    (`ready`, or the action cap, D-41) waits: its only legal action is `wait`. When both wait,
    the two boards battle inside that step, player_0 in side 0 in odd rounds and side 1 in even
    ones. An illegal action raises `IllegalAction` naming the player (default), or with
    `illegal_action="penalty"` is a no-op (a `wait` for a waiting player) rewarded
    `illegal_penalty` (for samplers without masks, like PettingZoo's seed test).

    **Observations**: per agent `Dict(observation=Box(0, 1, (D,), float32), action_mask=Box(0,
    1, (N + 1,), int8))`, the convention of PettingZoo's classic games. `observation` is the
    player's own state in RuneRun-v0's flat encoding (its first `own_size` entries), then the
    opponent's board as it was in the last battle, its core and relics, and its lamps, wins and
    losses (rune_env/duel/observation.py); never the opponent's current preparation.

    **Rewards**: zero-sum. At the end +1 to the winner and -1 to the loser (0 each for a draw);
    with `battle_reward` = b > 0, also +b / -b for each battle won / lost (0 for a draw).

    **Termination**: both agents terminate together when a player has no lamps left or at the
    round cap (`rune_env/run/duel.py` states the rules and the winner). **Truncation**: both, at
    `max_cycles` steps (default `max_duel_steps(rules)`, reachable only through illegal no-ops).

    **Options** (keywords; `reset(options=...)` takes rank, core and duel_seed, the duel's own
    seed, an integer >= 0; without it the env draws one from `reset(seed=...)`; other keys warn
    and are ignored, as PettingZoo's API test passes one): rank (index or name, default
    "apprentice"), core (None: each player chooses its own), rules, rules_overrides, unlocked,
    battle_reward (>= 0, default 0), illegal_action ("raise" or "penalty"), illegal_penalty
    (<= 0), max_cycles, engine ("fast" or "reference"), battle_fn, variant, render_mode ("ansi":
    render() returns the two players' screens as text; "human": it prints them).

    **Info** per agent: round, mana, lamps, wins, losses, opponent_lamps, opponent_wins, waiting,
    rules_hash, env_version; "battle" (the battle from that player's side, a plain dict) in a
    step that fought one; "winner" ("player_0", "player_1" or None) at the end; "illegal" (the
    reason) after a penalised action.
    """

    metadata = {"name": "rune_duel_v0", "render_modes": ["ansi", "human"],
                "is_parallelizable": True, "render_fps": 1}

    def __init__(self, rank: int | str = "apprentice", core: str | None = None,
                 rules: Rules | str | None = None, rules_overrides: dict | None = None,
                 unlocked: list[str] | None = None, battle_reward: float = 0.0,
                 illegal_action: str = "raise", illegal_penalty: float = -0.1,
                 max_cycles: int | None = None, engine: str | None = None,
                 battle_fn: Callable | None = None, variant: str | None = None,
                 render_mode: str | None = None):
        self.rules = resolve_rules(rules, rules_overrides)
        # None (only None) means the rules' variant and the default engine, as in RuneRun-v0
        variant = check_choice("variant", variant, VARIANTS, " (the rules' variant)")
        self.variant = self.rules.spec.variant if variant is None else variant
        engine = check_engine(engine)
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty'; got {illegal_action!r}")
        if render_mode not in (None, "ansi", "human"):
            raise ValueError(f"render_mode must be None, 'ansi' or 'human'; got {render_mode!r}")
        if battle_fn is not None and not callable(battle_fn):
            raise ValueError(f"battle_fn must be a battle function or None; got {battle_fn!r}")
        self.rank = check_rank(self.rules, rank)
        self.core = check_core(self.rules, core)
        self.unlocked = check_unlocked(unlocked)
        self.battle_reward = check_real("battle_reward", battle_reward, lo=0.0)
        self.illegal_penalty = check_real("illegal_penalty", illegal_penalty, hi=0.0)
        self.max_cycles = check_int("max_cycles", max_cycles, 1, MAX_CYCLES, allow_none=True,
                                    none_means=" (max_duel_steps of the rules)") \
            or max_duel_steps(self.rules)
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.engine = default_engine() if engine is None else engine
        self.battle_fn = battle_function(self.engine) if battle_fn is None else battle_fn
        self.table = action_table(self.rules)
        self.wait = wait_action(self.rules)
        self.encoder = DuelEncoder(self.rules)
        self.metadata = {**type(self).metadata, "rules_hash": self.rules.hash,
                         "env_version": ENV_VERSION}
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.duel: DuelState | None = None
        self._np_random = np.random.default_rng()
        self._masks: list[np.ndarray] | None = None
        self._steps = 0
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (self.encoder.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (len(self.table) + 1,), np.int8)})
        # each agent its own space objects, the same ones every call (PettingZoo's API test asks
        # for that; they live on the env, so a dropped env is freed: an lru_cache on the methods
        # kept every env ever made)
        self._obs_spaces = {AGENTS[0]: obs_space, AGENTS[1]: _copy_space(obs_space)}
        self._act_spaces = {a: spaces.Discrete(len(self.table) + 1) for a in AGENTS}
        # the global state (`state()`): both players' observations
        self.state_space = spaces.Box(0.0, 1.0, (PLAYERS * self.encoder.size,), np.float32)

    def observation_space(self, agent: str) -> spaces.Space:
        self._check_agent(agent)
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        self._check_agent(agent)
        return self._act_spaces[agent]

    def _check_agent(self, agent: str) -> None:
        if agent not in AGENTS:
            raise KeyError(f"unknown agent {agent!r} (the agents are {', '.join(AGENTS)})")

    # -- the API --------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None):
        # every argument is checked before anything changes: a refused reset leaves the env as it was
        check_int("seed", seed, lo=0, allow_none=True, none_means=" (keep the generator)")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict or None; got {options!r}")
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            warnings.warn(f"RuneDuel ignores unknown reset options {', '.join(unknown)} (its "
                          f"options are {', '.join(RESET_OPTIONS)})", stacklevel=2)
        rank = check_rank(self.rules, options["rank"], "reset option 'rank'") \
            if "rank" in options else self.rank
        core = check_core(self.rules, options["core"], "reset option 'core'") \
            if "core" in options else self.core
        duel_seed = check_int("reset option 'duel_seed'", options.get("duel_seed"), lo=0,
                              allow_none=True, none_means=" (the env draws one)")
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        self.rank, self.core = rank, core
        if duel_seed is None:
            duel_seed = int(self._np_random.integers(TRAINING_SEED_LIMIT))
        self.duel = new_duel(duel_seed, self.rules, rank=self.rank, core=self.core,
                             unlocked=self.unlocked)
        self.agents = list(AGENTS)
        self._steps = 0
        return self._observations(), {a: self._info(i) for i, a in enumerate(AGENTS)}

    def step(self, actions: dict[str, int]):
        if self.duel is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the duel is over: call reset()")
        if not isinstance(actions, dict):
            raise TypeError(f"step takes a dict of actions by agent ({AGENTS}); got "
                            f"{type(actions).__name__}")
        unknown = [a for a in actions if a not in AGENTS]
        if unknown:       # a typo'd key would otherwise be ignored and the real agent missing
            raise ValueError(f"step got actions for unknown agents {unknown!r}; the agents are "
                             f"{AGENTS}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"step needs an action for every live agent; missing {missing}")
        rewards = dict.fromkeys(AGENTS, 0.0)
        illegal: dict[int, str] = {}
        chosen = []
        for i, agent in enumerate(AGENTS):
            a = as_action(actions[agent], f"{agent}'s action")
            reason = self._why_illegal(i, a)
            if reason is not None:
                if self.illegal_action == "raise":
                    raise IllegalAction(f"{agent}: illegal action {a} ({self._name(a)}): {reason}")
                illegal[i] = reason
                rewards[agent] += self.illegal_penalty
                a = self.wait if self.duel.waiting[i] else None    # a no-op
            chosen.append(a)
        step = step_duel(self.duel, chosen, self.battle_fn, self.variant, assume_legal=True)
        self._steps += 1
        battle = step.battle
        if battle is not None and self.battle_reward > 0:
            for i, agent in enumerate(AGENTS):
                rewards[agent] += self.battle_reward * {"win": 1.0, "loss": -1.0, "draw": 0.0}[battle[i].outcome]
        done = self.duel.over
        if done and self.duel.winner is not None:
            rewards[AGENTS[self.duel.winner]] += 1.0
            rewards[AGENTS[1 - self.duel.winner]] -= 1.0
        truncated = not done and self._steps >= self.max_cycles
        obs = self._observations()
        infos = {a: self._info(i, battle[i] if battle else None) for i, a in enumerate(AGENTS)}
        for i, reason in illegal.items():
            infos[AGENTS[i]]["illegal"] = reason
        terminations = dict.fromkeys(AGENTS, done)
        truncations = dict.fromkeys(AGENTS, truncated)
        if done or truncated:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def _why_illegal(self, player: int, action: int) -> str | None:
        duel = self.duel
        if not 0 <= action <= self.wait:
            return f"not an action id (0..{self.wait})"
        if self._masks is not None and self._masks[player][action]:
            return None              # legal by the mask of this state (built with its observation)
        if duel.waiting[player]:
            return None if action == self.wait else "the player waits for the battle: only wait is legal"
        if action == self.wait:
            return "wait is legal only once the preparation has ended (ready)"
        return why_illegal(duel.players[player], action)

    def _name(self, action: int) -> str:
        if action == self.wait:
            return "wait"
        return self.table.actions[action].name if 0 <= action < self.wait else str(action)

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        out = {}
        masks = []
        for i, agent in enumerate(AGENTS):
            obs, mask = self.encoder.observe(self.duel, i)
            masks.append(mask)
            out[agent] = {"observation": obs, "action_mask": mask.astype(np.int8)}
        self._masks = masks          # the env's own copy: step checks actions against it
        return out

    def _info(self, player: int, battle=None) -> dict[str, Any]:
        me, them = self.duel.players[player], self.duel.players[1 - player]
        info = {"round": me.round, "mana": me.mana, "lamps": me.lamps, "wins": me.wins,
                "losses": me.losses, "opponent_lamps": them.lamps, "opponent_wins": them.wins,
                "waiting": self.duel.waiting[player], "rules_hash": self.rules.hash,
                "env_version": ENV_VERSION}
        if battle is not None:
            info["battle"] = battle.to_json()
        if self.duel.over:
            w = self.duel.winner
            info["winner"] = None if w is None else AGENTS[w]
        return info

    def state(self) -> np.ndarray:
        """The global state: both players' observations, player_0's first (`state_space`)."""
        if self.duel is None:
            raise RuntimeError("the duel has no state before reset(): call reset() first")
        return np.concatenate([self.encoder.observe(self.duel, i)[0] for i in range(PLAYERS)])

    def render(self):
        if self.duel is None or self.render_mode is None:
            return None
        from ..terminal.screen import view
        lines = []
        for i, agent in enumerate(AGENTS):
            p = self.duel.players[i]
            lines.append(f"== {agent}: lamps {p.lamps}, wins {p.wins}"
                         + (" (waiting)" if self.duel.waiting[i] else ""))
            lines.extend(view(p))
        if self.duel.battles:
            b = self.duel.battles[-1][0]
            lines.append(f"last battle (round {b.round}): player_0 {b.outcome} at {b.time:.1f} s")
        if self.duel.over:
            w = self.duel.winner
            lines.append("duel drawn" if w is None else f"{AGENTS[w]} wins the duel")
        if self.render_mode == "human":     # the same text, printed (PettingZoo's convention)
            print("\n".join(lines))
            return None
        return "\n".join(lines)

    def close(self) -> None:
        pass


def _copy_space(space: spaces.Dict) -> spaces.Dict:
    # each agent its own space object (seeding one does not seed the other's sampler)
    return spaces.Dict({k: type(v)(v.low, v.high, v.shape, v.dtype) for k, v in space.spaces.items()})
