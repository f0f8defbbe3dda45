"""Gymnasium adapters over the run loop: RuneRun-v0 (a whole run) and RuneDraft-v0 (one round).

The classes hold no game logic: they call `rune_env.run` and encode its state.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..rules.board import Board, load_board
from ..rules.config import Rules, default_rules, load_rules
from ..run.actions import action_table
from ..run.loop import IllegalAction, apply, legal_mask, new_run, why_illegal
from ..run.opponents import BudgetOpponents, PoolOpponents, load_pool
from ..run.ranks import rank_index
from ..run.state import RunState
from ..battle.engines import battle_function, default_engine
from .observation import Encoder

ENV_VERSION = "0.1.0"
TRAINING_SEED_LIMIT = 2**30   # run seeds an env draws itself are below this
REWARD_MODES = ("battle", "run", "margin")


def resolve_rules(rules: Rules | str | None, overrides: dict | None) -> Rules:
    if isinstance(rules, Rules) and not overrides:
        return rules
    path = rules if isinstance(rules, str) else (rules.source if isinstance(rules, Rules) else None)
    return load_rules(path, overrides) if (path or overrides) else default_rules()


from ..resources import opponents_dir  # noqa: E402  (configs/opponents: the checkout's or the wheel's)
SHIPPED_POOLS = opponents_dir()


def shipped_pool(rules: Rules, rank: int) -> Path | None:
    """The shipped pool of a rank (configs/opponents/<rank>.json), if there is one."""
    path = SHIPPED_POOLS / f"{rules.spec.ranks[rank].id}.json"
    return path if path.exists() else None


def resolve_opponents(opponents: Any, rules: Rules, rank: int = 0, strict: bool = False):
    """None -> the shipped pool of the rank (the budget drafter where a round has no ghosts, or
    where no pool is shipped); "generator" -> the budget drafter; a path -> that pool file; a
    callable -> itself; an object with `act(observation, action_mask)` -> an agent that drafts
    boards (AgentOpponents)."""
    if opponents is None:
        pool = shipped_pool(rules, rank)
        if pool is None:
            return BudgetOpponents(rules)
        return PoolOpponents(load_pool(pool, rules, strict=strict), rules, BudgetOpponents(rules))
    if opponents == "generator":
        return BudgetOpponents(rules)
    if isinstance(opponents, str):
        return PoolOpponents(load_pool(opponents, rules, strict=strict), rules, BudgetOpponents(rules))
    if hasattr(opponents, "act") and hasattr(opponents, "reset"):
        from .agent_opponents import AgentOpponents
        return AgentOpponents(opponents, rules)
    if callable(opponents):
        return opponents
    raise TypeError(f"opponents must be None, a pool path, a callable or an agent; got {opponents!r}")


_ATOMIC = (int, float, bool, str, type(None))


class StepInfo(dict):
    """The info dict of a step. A plain dict whose deep copy copies only what is mutable:
    stable-baselines3's DummyVecEnv deep-copies every info of every step, and copy.deepcopy
    spends about half a microsecond per key on the numbers and strings it would keep as they are."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> "StepInfo":
        new = StepInfo(self)
        memo[id(self)] = new
        for key, value in self.items():
            if type(value) in _ATOMIC:
                continue
            if type(value) is np.ndarray and value.dtype != object:
                new[key] = value.copy()       # what ndarray.__deepcopy__ does, without its detour
            else:
                new[key] = copy.deepcopy(value, memo)
        return new


class RuneRunEnv(gym.Env):
    """RuneRun-v0: one episode is one whole run of Rune Circle.

    **Actions**: `Discrete(N)`, N = len(action table) (see `action_names()` and
    `describe_action(id)`); one id per concrete action, e.g. "place 0 -> 2:3" moves hand slot 0
    to cell 2:3. `action_masks()` (and `info["action_mask"]`) marks the legal ones, for
    sb3-contrib's MaskablePPO; it is computed once per reset/step/set_state, and `step` checks
    the action against it (edit `env.state` only through steps, or call `set_state`). `ready` ends the round's preparation and runs the battle as one
    deterministic transition inside the step; reward and relic choices are steps too.

    **Observations**: `obs_mode="flat"` (default): `Box(0, 1, (D,), float32)`; `layout()` names
    each slice (rune_env/envs/observation.py). `obs_mode="dict"`: a `Dict` of the same parts
    (board planes per cell, hand, shop, inventory, scalars, core, relics, bosses, pending).

    **Rewards** (`reward_mode`): "battle": +1 per battle won, -1 lost, 0 drawn, plus
    `clear_bonus` on clearing the run; "run": 0 until the end, then wins / wins_to_clear;
    "margin": the battle reward plus `margin_weight` x (player HP ratio - opponent HP ratio).
    An illegal action raises `IllegalAction` by default; with `illegal_action="penalty"` it is a
    no-op rewarded `illegal_penalty` (for algorithms without masks and for the env checkers).

    **Termination**: the run is over (lamps out, cleared, or the round cap). **Truncation**:
    only through the registered `max_episode_steps` (or `max_rounds` reached).

    **Opponents**: by default the shipped pool of the rank (configs/opponents/<rank>.json; the
    budget drafter for rounds without ghosts, or when no pool is shipped); "generator" for the
    budget drafter alone.

    **Options** (constructor keywords, and `reset(options=...)` for rank, core, opponents, and
    run_seed, the run's own seed; without it the env draws one below TRAINING_SEED_LIMIT):
    rank (index or name, default "apprentice"), core (None = the agent chooses), opponents (None:
    the rank's shipped pool; "generator"; a pool file path; a callable `(round, rank_effects, boss_rules, rng) ->
    Board`; or an agent), rules (a Rules, a YAML path) and rules_overrides, unlocked (rune kinds;
    default all), reward_mode, clear_bonus, margin_weight, max_rounds, obs_mode, illegal_action,
    illegal_penalty, variant (None: the rules' `variant`; "dice": the dice variant, each battle
    seeded from the run's generator), engine ("fast", the compiled engine, or "reference"; None:
    $RUNE_ENGINE, else "fast"; both give the same battles), battle_fn (a battle function that
    overrides the engine), strict_pools (refuse a pool file made under other rules instead of
    warning), render_mode ("ansi": the board and state as text; "rgb_array": the
    board picture, an (H, W, 3) uint8 array).

    **Metadata**: render modes, and this env's rules_hash and env_version.

    **Info**: action_mask, round, mana, lamps, wins, losses, draws, cleared, over, rules_hash,
    env_version, and "battle" (the battle's summary) only in a step that fought one. A `StepInfo`:
    a dict whose deep copy (stable-baselines3 deep-copies every step's infos) skips the
    immutable values.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, rank: int | str = "apprentice", core: str | None = None, opponents: Any = None,
                 rules: Rules | str | None = None, rules_overrides: dict | None = None,
                 unlocked: list[str] | None = None, reward_mode: str = "battle",
                 clear_bonus: float = 5.0, margin_weight: float = 0.5, max_rounds: int | None = None,
                 obs_mode: str = "flat", illegal_action: str = "raise",
                 illegal_penalty: float = -0.1, render_mode: str | None = None,
                 battle_fn: Callable | None = None, variant: str | None = None,
                 engine: str | None = None, strict_pools: bool = False):
        self.rules = resolve_rules(rules, rules_overrides)
        # the dice variant (RULES.md section 12); None: the rules' `variant`
        self.variant = variant or self.rules.spec.variant
        if self.variant not in ("deterministic", "dice"):
            raise ValueError(f"variant must be 'deterministic' or 'dice'; got {variant!r}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}; got {reward_mode!r}")
        if obs_mode not in ("flat", "dict"):
            raise ValueError(f"obs_mode must be 'flat' or 'dict'; got {obs_mode!r}")
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty'; got {illegal_action!r}")
        if render_mode not in (None, "ansi", "rgb_array"):
            raise ValueError(f"render_mode must be None, 'ansi' or 'rgb_array'; got {render_mode!r}")
        self.rank = rank_index(self.rules, rank)
        self.core = core
        self.opponents_spec = opponents
        # a pool made under other rules warns; strict_pools=True refuses it (PoolError)
        self.strict_pools = bool(strict_pools)
        self.opponents = resolve_opponents(opponents, self.rules, self.rank, self.strict_pools)
        self.unlocked = unlocked
        self.reward_mode = reward_mode
        self.clear_bonus = clear_bonus
        self.margin_weight = margin_weight
        self.max_rounds = max_rounds
        self.obs_mode = obs_mode
        self.illegal_action = illegal_action
        self.illegal_penalty = illegal_penalty
        self.render_mode = render_mode
        # the battle engine: "fast" (compiled, the default) or "reference"; None: $RUNE_ENGINE,
        # else "fast" (rune_env/battle/engines.py). Both give the same battles.
        self.engine = engine or default_engine()
        self.battle_fn = battle_fn or battle_function(self.engine)
        self.table = action_table(self.rules)
        self.encoder = Encoder(self.rules)
        # the spec's metadata names the rules and the env version too (as info does each step)
        self.metadata = {**type(self).metadata, "rules_hash": self.rules.hash,
                         "env_version": ENV_VERSION}
        self.action_space = spaces.Discrete(len(self.table))
        layout = self.encoder.layout
        if obs_mode == "flat":
            self.observation_space = spaces.Box(0.0, 1.0, (layout.size,), np.float32)
        else:
            self.observation_space = spaces.Dict({
                name: spaces.Box(0.0, 1.0, shape, np.float32) for name, shape in layout.shapes.items()})
        self._state: RunState | None = None
        self._last_battle: dict | None = None
        self._mask: np.ndarray | None = None    # legal actions of self.state (set by _obs)

    @property
    def state(self) -> RunState | None:
        """The run's state. Assigning a new one (e.g. a clone, for search) is fine: the legal
        mask is recomputed; editing its fields in place between steps is not."""
        return self._state

    @state.setter
    def state(self, value: RunState | None) -> None:
        self._state = value
        self._mask = None

    # -- the Gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        if "rank" in options:
            self.rank = rank_index(self.rules, options.pop("rank"))
            if "opponents" not in options:
                self.opponents = resolve_opponents(self.opponents_spec, self.rules, self.rank,
                                                   self.strict_pools)
        if "core" in options:
            self.core = options.pop("core")
        if "opponents" in options:
            self.opponents_spec = options.pop("opponents")
            self.opponents = resolve_opponents(self.opponents_spec, self.rules, self.rank,
                                               self.strict_pools)
        run_seed = options.pop("run_seed", None)
        if options:
            raise ValueError(f"unknown reset options: {sorted(options)}")
        if run_seed is None:
            # drawn run seeds stay below TRAINING_SEED_LIMIT; evaluations pass explicit seeds at
            # or above it, so evaluation runs never repeat a training run (by construction)
            run_seed = int(self.np_random.integers(TRAINING_SEED_LIMIT))
        self.state = self._new_state(run_seed)
        self._last_battle = None
        return self._obs(), self._info()

    def _new_state(self, run_seed: int) -> RunState:
        return new_run(run_seed, self.rules, rank=self.rank, core=self.core, unlocked=self.unlocked)

    def step(self, action):
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if self.state.over:
            raise RuntimeError("the episode is over: call reset()")
        action = int(action)
        # legality from the mask computed once per step (in _info, for this step's policy; see
        # action_masks); the reason in words only for an illegal action
        mask = self._legal()
        reason = None if 0 <= action < len(mask) and mask[action] else \
            (why_illegal(self.state, action) or "not legal now")
        if reason is not None:
            if self.illegal_action == "raise":
                name = self.table.actions[action].name if 0 <= action < len(self.table) else action
                raise IllegalAction(f"illegal action {action} ({name}): {reason}")
            info = self._info()
            info["illegal"] = reason
            return self._obs(), float(self.illegal_penalty), False, False, info
        step = apply(self.state, action, self.opponents, self.battle_fn, self.variant,
                     assume_legal=True)
        self._last_battle = step.battle
        reward = self._reward(step.battle)
        terminated = self.state.over
        truncated = False
        if not terminated and self.max_rounds is not None and step.battle is not None \
                and step.battle["round"] >= self.max_rounds:
            truncated = True
        return self._obs(), reward, terminated, truncated, self._info(step.battle)

    def _reward(self, battle: dict | None) -> float:
        s = self.state
        if self.reward_mode == "run":
            return s.wins / self.rules.spec.run.wins_to_clear if s.over else 0.0
        if battle is None:
            return 0.0
        r = {"win": 1.0, "loss": -1.0, "draw": 0.0}[battle["outcome"]]
        if self.reward_mode == "margin":
            mine = battle["hp"][0] / battle["max_hp"][0]
            theirs = battle["hp"][1] / battle["max_hp"][1]
            r += self.margin_weight * (mine - theirs)
        if s.cleared and s.over:
            r += self.clear_bonus
        return r

    def _obs(self):
        # the observation and the legal mask in one compiled call (Encoder.observe; the same
        # values as encode_flat and legal_mask); the mask is kept for _info and the next step
        flat, self._mask = self.encoder.observe(self.state)
        if self.obs_mode == "flat":
            return flat
        return self.encoder.split(flat)

    def _info(self, battle: dict | None = None) -> dict[str, Any]:
        s = self.state
        self._legal()
        # a copy: the env checks actions against its own mask, which callers must not edit
        info = StepInfo(action_mask=self._mask.copy(), round=s.round, mana=s.mana, lamps=s.lamps,
                        wins=s.wins, losses=s.losses, draws=s.draws, cleared=s.cleared,
                        over=s.over, rules_hash=self.rules.hash, env_version=ENV_VERSION)
        # "battle" only in steps that fought one (Gymnasium's vector envs batch info keys and
        # mark presence with "_battle"; a None in other steps would break that)
        if battle is not None:
            info["battle"] = battle
        return info

    def action_masks(self) -> np.ndarray:
        """Legal actions now (sb3-contrib MaskablePPO reads this method)."""
        if self.state is None:
            return np.ones(len(self.table), dtype=bool)
        return self._legal().copy()

    def _legal(self) -> np.ndarray:
        """The env's own mask of the current state (computed once per step)."""
        if self._mask is None:
            self._mask = legal_mask(self.state)
        return self._mask

    def describe_action(self, action: int) -> str:
        return self.table.actions[int(action)].name

    def action_names(self) -> list[str]:
        return [a.name for a in self.table.actions]

    def layout(self) -> dict[str, slice]:
        """The flat observation's named slices."""
        return dict(self.encoder.layout.slices)

    # -- state cloning --------------------------------------------------------------------------
    def get_state(self) -> dict:
        """Everything needed to continue exactly (for search and planning)."""
        return {"run": self.state.to_json() if self.state else None,
                "np_random": copy.deepcopy(self.np_random.bit_generator.state),
                "rank": self.rank, "core": self.core, "rules_hash": self.rules.hash,
                "env_version": ENV_VERSION}

    def set_state(self, saved: dict) -> None:
        if saved.get("rules_hash") != self.rules.hash:
            raise ValueError("saved env state was made under other rules")
        self.rank = saved["rank"]
        self.core = saved["core"]
        self.np_random.bit_generator.state = copy.deepcopy(saved["np_random"])
        self.state = RunState.from_json(saved["run"], self.rules) if saved["run"] else None

    # -- rendering ------------------------------------------------------------------------------
    def render(self):
        if self.state is None or self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":
            from ..pictures import state_rgb_array
            return state_rgb_array(self.state)
        from ..run.view import view
        lines = view(self.state)
        b = self._last_battle
        if b:
            lines.append(f"last battle (round {b['round']}): {b['outcome']} at {b['time']:.1f} s, "
                         f"HP {b['hp'][0]:.0f}/{b['max_hp'][0]:.0f} vs {b['hp'][1]:.0f}/{b['max_hp'][1]:.0f}")
        if self.state.over:
            lines.append("run cleared" if self.state.cleared else "run over")
        return "\n".join(lines)


class RuneDraftEnv(RuneRunEnv):
    """RuneDraft-v0: one episode is one round: draft and place, then one battle.

    Same actions, observations, masks and options as RuneRun-v0, plus `round` (default 1),
    `budget` (mana to draft with; default the opponent budget of that round, D-44) and
    `start_board` (a board file path or `Board` to start from). The episode ends after the
    round's battle; reward: +1 win, -1 loss, 0 draw ("margin" adds the HP-ratio margin).
    If no core is fixed, the first step chooses it.
    """

    def __init__(self, round: int = 1, budget: int | None = None,
                 start_board: str | Board | None = None, **kwargs):
        kwargs.setdefault("reward_mode", "battle")
        if kwargs["reward_mode"] == "run":
            raise ValueError("RuneDraft-v0 has one battle: reward_mode 'battle' or 'margin'")
        super().__init__(**kwargs)
        self.draft_round = int(round)
        self.budget = budget
        self.start_board = load_board(start_board, self.rules) if isinstance(start_board, str) else start_board

    def _new_state(self, run_seed: int) -> RunState:
        from ..run.loop import draw_shop
        from ..run.opponents import opponent_budget
        from ..run.ranks import rank_effects
        s = new_run(run_seed, self.rules, rank=self.rank, core=self.core, unlocked=self.unlocked)
        s.round = self.draft_round
        s.boss_schedule = {r: v for r, v in s.boss_schedule.items() if r == self.draft_round}
        s.mana = self.budget if self.budget is not None else \
            opponent_budget(self.rules, self.draft_round, rank_effects(self.rules, self.rank))
        if self.start_board is not None:
            b = self.start_board
            s.board = dict(b.runes)
            s.artifacts = dict(b.artifacts)
            s.open_sectors = sorted(b.open_sectors)
            s.relics = list(b.relics)
            if b.core is not None and s.core is None:
                from ..run.loop import set_core
                set_core(s, b.core)
                s.pending = None
                s.sun_element = b.sun_element
            s.hand = list(b.hand)[: s.hand_slots]   # after the core: a tree's extra slot counts
        draw_shop(s)
        return s

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        if info.get("battle") is not None:
            terminated = True
            self.state.over = True
            info["over"] = True
            info["round"] = info["battle"]["round"]   # the run loop has already moved on
            self._mask = legal_mask(self.state)
            info["action_mask"] = self._mask.copy()
        return obs, reward, terminated, truncated, info

    def _reward(self, battle: dict | None) -> float:
        if battle is None:
            return 0.0
        r = {"win": 1.0, "loss": -1.0, "draw": 0.0}[battle["outcome"]]
        if self.reward_mode == "margin":
            r += self.margin_weight * (battle["hp"][0] / battle["max_hp"][0]
                                       - battle["hp"][1] / battle["max_hp"][1])
        return r
