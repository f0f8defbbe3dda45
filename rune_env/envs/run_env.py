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
from ..run.legal import legal_mask, why_illegal
from ..run.expected import sample_battles
from ..run.loop import ApplyResult, IllegalAction, apply, end_run, new_draft, new_run
from ..run.state import COUNT_MAX, BattleSummary, RunState
from ..battle.engines import battle_function, default_engine
from .arguments import (as_action, check_choice, check_core, check_engine, check_int, check_real,
                        check_rank_mix, check_rules_overrides, check_unlocked, run_rank, shown)
from .observation import Encoder
from .saved_state import check_saved_state

ENV_VERSION = "0.1.0"
TRAINING_SEED_LIMIT = 2**30   # run seeds an env draws itself are below this
REWARD_MODES = ("battle", "run", "margin", "expected")
# the most opponents an "expected" reward samples per battle
EXPECTED_SAMPLES_MAX = 1024
# the "expected" reward's opponents come from a generator of their own, seeded (run seed, round,
# this stream), so they never draw from the run's generator: the run goes on as under "battle"
EXPECTED_STREAM = 0x657870
OUTCOME_REWARD = {"win": 1.0, "loss": -1.0, "draw": 0.0}
RESET_OPTIONS = ("rank", "core", "opponents", "run_seed")
VARIANTS = ("deterministic", "dice")
BUDGET_MAX = COUNT_MAX      # RuneDraft-v0's budget: mana, a saved run's count (run.state)


def resolve_rules(rules: Rules | str | None, overrides: dict | None) -> Rules:
    """The env's rules: a Rules (with `overrides` applied to it, whatever its source), a rules
    file's path, or None for the defaults. `overrides` is checked first (None or a mapping with
    string keys: a ValueError naming rules_overrides), and so is the type of `rules`."""
    overrides = check_rules_overrides(overrides)
    if isinstance(rules, Rules):
        return rules.with_overrides(overrides) if overrides else rules
    if rules is not None and (not isinstance(rules, (str, Path))
                              or (isinstance(rules, str) and not rules.strip())):
        raise ValueError(f"rules must be a Rules, a rules file path or None (the default "
                         f"rules); got {shown(rules)}")
    return load_rules(rules, overrides) if (rules is not None or overrides) else default_rules()


# the shipped pools and the `opponents` option (kept importable from here, where they were)
from .opponent_sources import (SHIPPED_POOLS, check_opponents, resolve_opponents,  # noqa: E402,F401
                               shipped_pool)


_ATOMIC = (int, float, bool, str, type(None))


class InfoDict(dict):
    """The info dict of a step. A plain dict whose deep copy copies only what is mutable:
    stable-baselines3's DummyVecEnv deep-copies every info of every step, and copy.deepcopy
    spends about half a microsecond per key on the numbers and strings it would keep as they are."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> "InfoDict":
        new = InfoDict(self)
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
    the action against it (edit `env.state` only through steps, or call `set_state`). `ready`
    ends the round's preparation and runs the battle as one deterministic transition inside the
    step; reward and relic choices are steps too.

    **The mask of a finished episode** (the terminal step's `info["action_mask"]`, and
    `action_masks()` until `reset`) holds exactly one True entry, `ready`, never all False:
    nothing is legal in a finished run, but masked samplers (MaskablePPO's distribution, a
    uniform choice among the True entries) fail on an empty mask, and vector envs with
    next-step autoreset (Gymnasium's SyncVectorEnv / AsyncVectorEnv) ask for that mask, pass the
    action it gives back, and ignore it because they reset the env instead. `ready` is only a
    placeholder: `step` on a finished episode still raises RuntimeError until `reset`. The same
    holds for RuneDraft-v0 after its battle. (The observation holds no mask; after truncation
    the run goes on and the mask is the usual one.) Before the first reset, `action_masks()` is
    all True.

    **Observations**: `obs_mode="flat"` (default): `Box(0, 1, (D,), float32)`; `layout()` names
    each slice (rune_env/envs/observation.py). `obs_mode="dict"`: a `Dict` of the same parts
    (board planes per cell, hand, shop, inventory, scalars, core, relics, bosses, pending).

    **Rewards** (`reward_mode`): "battle": +1 per battle won, -1 lost, 0 drawn, plus
    `clear_bonus` on clearing the run; "run": 0 until the end, then wins / wins_to_clear;
    "margin": the battle reward plus `margin_weight` x (player HP ratio - opponent HP ratio);
    "expected": the battle reward's mean over `expected_samples` (32) battles of the fielded
    board against opponents of the round drawn as its battle draws one (the same source, seat,
    bosses and rank effects; a generator of their own, so the run itself goes on as under
    "battle"), plus the clear bonus: the same goal as "battle" with far less noise where one
    drawn ghost decides most of a battle (a training signal; the observation is unchanged).
    An illegal action raises `IllegalAction` by default; with `illegal_action="penalty"` it is a
    no-op rewarded `illegal_penalty` (for algorithms without masks and for the env checkers).

    **Termination**: the run is over (lamps out, cleared, or the round cap). **Truncation**:
    only through the registered step limit (`rune_env.envs.time_limit.RulesTimeLimit`, the
    longest legal episode of the env's rules, or `gym.make`'s `max_episode_steps`), or
    `max_rounds` reached.

    **Opponents**: by default the shipped pool of the rank (configs/opponents/<rank>.json.gz; the
    budget drafter for rounds without ghosts, or when no pool is shipped); "generator" for the
    budget drafter alone.

    **Options** (constructor keywords, and `reset(options=...)` for rank, core, opponents, and
    run_seed, the run's own seed, an integer >= 0; without it the env draws one below
    TRAINING_SEED_LIMIT; any other key is a ValueError naming it):
    rank (index or name, default "apprentice"; or a list of them, a mix: each run plays the rank
    `run_rank(mix, run_seed)` draws from it by its run seed, against that rank's opponents, so a
    training run meets several ranks, a rank listed twice twice as often), core (None = the agent chooses), opponents (None:
    the rank's shipped pool; "generator"; a pool file path; a callable `(round, rank_effects, boss_rules, rng) ->
    Board`; or an agent), rules (a Rules, a YAML path) and rules_overrides, unlocked (rune kinds;
    default all), reward_mode, clear_bonus, margin_weight, expected_samples, max_rounds, obs_mode,
    illegal_action,
    illegal_penalty, variant (None: the rules' `variant`; "dice": the dice variant, each battle
    seeded from the run's generator), engine ("fast", the compiled engine, or "reference"; None:
    $RUNE_ENGINE, else "fast"; both give the same battles), battle_fn (a battle function that
    overrides the engine), strict_pools (refuse a pool file made under other rules instead of
    warning), render_mode ("ansi": the board and state as text; "rgb_array": the
    board picture, an (H, W, 3) uint8 array).

    **Checked at construction** (and the reset options at reset), each a ValueError naming the
    argument: rank, a name of `rules.spec.ranks` or its number 0..len-1 (an int or a string of
    ASCII digits), or a list of 1..MAX_RANK_MIX of them; core, None or one of `rules.spec.cores`; unlocked, None or a non-empty list of rune
    kinds; clear_bonus >= 0, margin_weight >= 0 and illegal_penalty <= 0, finite numbers;
    expected_samples, an integer in 1..EXPECTED_SAMPLES_MAX;
    max_rounds, None or an integer in 1..`run.round_cap`; reward_mode, obs_mode, illegal_action,
    render_mode, variant and engine, one of their names (for variant and engine only None means
    the default: 0, "" and False are refused); strict_pools, a bool; battle_fn, None or
    callable; rules, a Rules, a path or None; rules_overrides, None or a mapping with string
    keys; opponents (a TypeError), one of the kinds above, and a callable's result at battle
    time, a Board (a TypeError naming opponents). Booleans are not numbers here
    (`max_rounds=True` is refused). A failed `reset` changes nothing (options, generator, run);
    `set_state` checks the whole dict before it changes anything, and `describe_action` checks
    the id as `step` does.

    **Metadata**: render modes, and this env's rules_hash and env_version.

    **Info**: action_mask, round, mana, lamps, wins, losses, draws, cleared, over, rules_hash,
    env_version, and "battle" (the battle's summary, `BattleSummary.to_json()`: a plain dict) only
    in a step that fought one. An `InfoDict`:
    a dict whose deep copy (stable-baselines3 deep-copies every step's infos) skips the
    immutable values.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, rank: int | str = "apprentice", core: str | None = None, opponents: Any = None,
                 rules: Rules | str | None = None, rules_overrides: dict | None = None,
                 unlocked: list[str] | None = None, reward_mode: str = "battle",
                 clear_bonus: float = 5.0, margin_weight: float = 0.5, expected_samples: int = 32,
                 max_rounds: int | None = None,
                 obs_mode: str = "flat", illegal_action: str = "raise",
                 illegal_penalty: float = -0.1, render_mode: str | None = None,
                 battle_fn: Callable | None = None, variant: str | None = None,
                 engine: str | None = None, strict_pools: bool = False):
        self.rules = resolve_rules(rules, rules_overrides)
        # the dice variant (RULES.md section 12); None (only None) means the rules' `variant`
        variant = check_choice("variant", variant, VARIANTS, " (the rules' variant)")
        self.variant = self.rules.spec.variant if variant is None else variant
        engine = check_engine(engine)
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}; got {reward_mode!r}")
        if obs_mode not in ("flat", "dict"):
            raise ValueError(f"obs_mode must be 'flat' or 'dict'; got {obs_mode!r}")
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty'; got {illegal_action!r}")
        if render_mode not in (None, "ansi", "rgb_array"):
            raise ValueError(f"render_mode must be None, 'ansi' or 'rgb_array'; got {render_mode!r}")
        # every argument is checked here, before any work: a bad one is a ValueError naming it
        run = self.rules.spec.run
        # a rank, or a list of ranks each run draws its own from (a curriculum by mix: run_rank)
        self.rank_mix = check_rank_mix(self.rules, rank)
        self.rank = self.rank_mix[0]
        self.core = check_core(self.rules, core)
        self.unlocked = check_unlocked(unlocked)
        self.clear_bonus = check_real("clear_bonus", clear_bonus, lo=0.0)
        self.margin_weight = check_real("margin_weight", margin_weight, lo=0.0)
        self.expected_samples = check_int("expected_samples", expected_samples, 1,
                                          EXPECTED_SAMPLES_MAX)
        self.illegal_penalty = check_real("illegal_penalty", illegal_penalty, hi=0.0)
        self.max_rounds = check_int("max_rounds", max_rounds, 1, run.round_cap, allow_none=True,
                                    none_means=" (no limit)")
        if not isinstance(strict_pools, (bool, np.bool_)):
            raise ValueError(f"strict_pools must be True or False; got {strict_pools!r}")
        if battle_fn is not None and not callable(battle_fn):
            raise ValueError(f"battle_fn must be a battle function or None; got {battle_fn!r}")
        check_opponents(opponents)
        self.opponents_spec = opponents
        # a pool made under other rules warns; strict_pools=True refuses it (PoolError)
        self.strict_pools = bool(strict_pools)
        self.reward_mode = reward_mode
        self.obs_mode = obs_mode
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        # the battle engine: "fast" (compiled, the default) or "reference"; None: $RUNE_ENGINE,
        # else "fast" (rune_env/battle/engines.py). Both give the same battles.
        self.engine = default_engine() if engine is None else engine
        self.battle_fn = battle_function(self.engine) if battle_fn is None else battle_fn
        self._opponents_by_rank: dict[int, Any] = {}   # the resolved opponents of each rank
        self.opponents = self._opponents_of(self.rank)
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
        self._last_battle: BattleSummary | None = None
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
        # every argument and option is checked, and the new run made, before anything of the
        # env changes: a failed reset leaves the env as it was (its generator included)
        seed = check_int("seed", seed, lo=0, allow_none=True, none_means=" (keep the generator)")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict or None; got {shown(options)}")
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset options: {', '.join(map(repr, unknown))} (the "
                             f"options are {', '.join(RESET_OPTIONS)})")
        # every option is checked before any is applied
        mix = check_rank_mix(self.rules, options["rank"], "reset option 'rank'") \
            if "rank" in options else self.rank_mix
        core = check_core(self.rules, options["core"], "reset option 'core'") \
            if "core" in options else self.core
        run_seed = check_int("reset option 'run_seed'", options.get("run_seed"), lo=0,
                             allow_none=True, none_means=" (the env draws one)")
        if "opponents" in options:
            spec, by_rank = options["opponents"], {}
            check_opponents(spec, "reset option 'opponents'")
        else:
            spec, by_rank = self.opponents_spec, self._opponents_by_rank
        # the generator as it was, put back if the run cannot be made (a pool that fails to load)
        kept = (self._np_random, self._np_random_seed,
                None if self._np_random is None else self._np_random.bit_generator.state)
        super().reset(seed=seed)
        try:
            if run_seed is None:
                # drawn run seeds stay below TRAINING_SEED_LIMIT; evaluations pass explicit
                # seeds at or above it, so evaluation runs never repeat a training run (by
                # construction)
                run_seed = int(self.np_random.integers(TRAINING_SEED_LIMIT))
            rank = run_rank(mix, run_seed)
            opponents = self._opponents_of(rank, spec, by_rank,
                                           "reset option 'opponents'" if "opponents" in options
                                           else "opponents")
            state = self._new_state(run_seed, rank, core)
        except BaseException:
            self._np_random, self._np_random_seed = kept[0], kept[1]
            if kept[0] is not None:
                kept[0].bit_generator.state = kept[2]
            raise
        self.opponents_spec, self._opponents_by_rank = spec, by_rank
        self.rank_mix, self.core, self.rank, self.opponents = mix, core, rank, opponents
        self.state = state
        self._last_battle = None
        return self._obs(), self._info()

    def _opponents_of(self, rank: int, spec: Any = None, by_rank: dict | None = None,
                      name: str = "opponents"):
        """The opponents of a rank under an opponents option (default the env's), resolved once
        per rank in `by_rank` (default the env's memo: a mix loads each rank's pool once)."""
        if by_rank is None:
            spec, by_rank = self.opponents_spec, self._opponents_by_rank
        if rank not in by_rank:
            by_rank[rank] = resolve_opponents(spec, self.rules, rank, self.strict_pools, name)
        return by_rank[rank]

    def _new_state(self, run_seed: int, rank: int, core: str | None) -> RunState:
        return new_run(run_seed, self.rules, rank=rank, core=core, unlocked=self.unlocked)

    def step(self, action):
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if self.state.over:
            raise RuntimeError("the episode is over: call reset()")
        action = as_action(action)
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
        step = self._apply(action)
        self._last_battle = step.battle
        reward = self._reward(step.battle)
        return (self._obs(), reward, self.state.over, self._truncated(step.battle),
                self._info(step.battle))

    def _apply(self, action: int) -> ApplyResult:
        """The loop's transition of a legal action (the episode's end is the run's)."""
        return apply(self.state, action, self.opponents, self.battle_fn, self.variant,
                     assume_legal=True)

    def _truncated(self, battle: BattleSummary | None) -> bool:
        """max_rounds reached by a battle after which the run went on (the loop moved to the
        next round: a run the loop ended is terminated, not truncated)."""
        return self.max_rounds is not None and battle is not None \
            and self.state.round > battle.round and battle.round >= self.max_rounds

    def _reward(self, battle: BattleSummary | None) -> float:
        s = self.state
        if self.reward_mode == "run":
            return s.wins / self.rules.spec.run.wins_to_clear if s.over else 0.0
        if battle is None:
            return 0.0
        r = self._battle_reward(battle)
        if s.cleared and s.over:
            r += self.clear_bonus
        return r

    def _battle_reward(self, battle: BattleSummary) -> float:
        """+1 / -1 / 0 for a win, loss or draw; "margin" adds margin_weight x (player's HP ratio -
        opponent's HP ratio)."""
        if self.reward_mode == "expected":
            return self._expected_reward(battle)
        r = OUTCOME_REWARD[battle.outcome]
        if self.reward_mode == "margin":
            mine = battle.hp[0] / battle.max_hp[0]
            theirs = battle.hp[1] / battle.max_hp[1]
            r += self.margin_weight * (mine - theirs)
        return r

    def _expected_reward(self, battle: BattleSummary) -> float:
        """The "expected" reward: the battle reward's mean over `expected_samples` battles of
        the board just fielded against the round's opponents (`sample_battles`), drawn with a
        generator seeded by the run's seed and the round."""
        me = Board.from_json(battle.board, self.rules)
        rng = np.random.default_rng([self.state.seed, battle.round, EXPECTED_STREAM])
        fights = sample_battles(me, battle.round, self.rank, battle.boss_rules, battle.seat,
                                self.opponents, self.rules, self.battle_fn, self.variant, rng,
                                self.expected_samples)
        return float(np.mean([OUTCOME_REWARD[outcome] for outcome, _, _ in fights]))

    def _obs(self):
        # the observation and the legal mask in one compiled call (Encoder.observe; the same
        # values as encode_flat and legal_mask); the mask is kept for _info and the next step
        flat, mask = self.encoder.observe(self.state)
        self._mask = self._end_mask() if self.state.over else mask
        if self.obs_mode == "flat":
            return flat
        return self.encoder.split(flat)

    def _info(self, battle: BattleSummary | None = None) -> dict[str, Any]:
        s = self.state
        self._legal()
        # a copy: the env checks actions against its own mask, which callers must not edit
        info = InfoDict(action_mask=self._mask.copy(), round=self._info_round(battle),
                        mana=s.mana, lamps=s.lamps, wins=s.wins, losses=s.losses, draws=s.draws,
                        cleared=s.cleared, over=s.over, rules_hash=self.rules.hash,
                        env_version=ENV_VERSION)
        # "battle" only in steps that fought one (Gymnasium's vector envs batch info keys and
        # mark presence with "_battle"; a None in other steps would break that)
        if battle is not None:
            info["battle"] = battle.to_json()
        return info

    def _info_round(self, battle: BattleSummary | None) -> int:
        """info["round"]: the run's round now (after a battle, the next one's)."""
        return self.state.round

    def action_masks(self) -> np.ndarray:
        """Legal actions now (sb3-contrib MaskablePPO reads this method). Never all False: once
        the episode is over it holds only `ready` (see the class docstring); before the first
        reset, every action."""
        if self.state is None:
            return np.ones(len(self.table), dtype=bool)
        return self._legal().copy()

    def _legal(self) -> np.ndarray:
        """The env's own mask of the current state (computed once per step)."""
        if self._mask is None:
            self._mask = self._end_mask() if self.state.over else legal_mask(self.state)
        return self._mask

    def _end_mask(self) -> np.ndarray:
        """The mask of a finished episode: only `ready` (a placeholder; no action is legal in a
        finished run, but a mask with no True entry breaks masked samplers, and vector envs ask
        for one before they reset the env)."""
        mask = np.zeros(len(self.table), dtype=bool)
        mask[self.table.groups["ready"][0]] = True
        return mask

    def describe_action(self, action: int) -> str:
        """The name of an action id. The id is checked as `step` checks it (`as_action`: an
        integer, else a TypeError naming action), and must be in 0..N-1 (else a ValueError)."""
        action = as_action(action)
        if not 0 <= action < len(self.table):
            raise ValueError(f"action must be an action id in 0..{len(self.table) - 1}; got "
                             f"{action}")
        return self.table.actions[action].name

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
        """Restore a `get_state` dict. Everything is checked first (`check_saved_state`: the dict
        and its keys, the rules hash, rank in range, core one of the cores or None, the generator
        state, the run through `RunState.from_json`, which bounds its counts), each a one-line
        ValueError naming the key; a refused state leaves the env as it was."""
        rank, core, generator_state, state = self._checked_state(saved)
        opponents = self._opponents_of(rank)
        self.rank, self.core, self.opponents = rank, core, opponents
        self.np_random.bit_generator.state = generator_state
        self.state = state

    def check_state(self, saved: dict) -> None:
        """`set_state`'s checks alone (a one-line ValueError naming the key), changing nothing."""
        self._checked_state(saved)

    def _checked_state(self, saved: dict):
        kind = np.random.PCG64 if self._np_random is None else type(self._np_random.bit_generator)
        return check_saved_state(saved, self.rules, kind)

    # -- rendering ------------------------------------------------------------------------------
    def render(self):
        if self.state is None or self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":
            from ..pictures import state_rgb_array
            return state_rgb_array(self.state, round_shown=self._round_shown())
        from ..terminal.screen import view
        lines = view(self.state)
        b = self._last_battle
        if b:
            lines.append(f"last battle (round {b.round}): {b.outcome} at {b.time:.1f} s, "
                         f"HP {b.hp[0]:.0f}/{b.max_hp[0]:.0f} vs {b.hp[1]:.0f}/{b.max_hp[1]:.0f}")
        if self.state.over:
            lines.append("run cleared" if self.state.cleared else "run over")
        return "\n".join(lines)


    def _round_shown(self) -> int | None:
        """The round a frame names: the state's (RuneDraftEnv: the round fought, at the end)."""
        return None


class RuneDraftEnv(RuneRunEnv):
    """RuneDraft-v0: one episode is one round: draft and place, then one battle.

    Same actions, observations, masks and options as RuneRun-v0, plus `round` (default 1),
    `budget` (mana to draft with; default the opponent budget of that round, D-44) and
    `start_board` (a board file path or `Board` to start from). The episode ends after the
    round's battle; reward: +1 win, -1 loss, 0 draw ("margin" adds the HP-ratio margin,
    "expected" is the mean over sampled opponents of the round, as in RuneRun-v0).
    If no core is fixed, the first step chooses it. After the battle the mask holds only
    `ready`, as in RuneRun-v0. Checked at construction: `round`, an integer in
    1..`run.round_cap`; `budget`, None or an integer in 0..10^9; `start_board`, None, a path or
    a `Board`; and reward_mode "run" is refused.
    """

    def __init__(self, round: int = 1, budget: int | None = None,
                 start_board: str | Board | None = None, **kwargs):
        kwargs.setdefault("reward_mode", "battle")
        if kwargs["reward_mode"] == "run":
            raise ValueError("RuneDraft-v0 has one battle: reward_mode 'battle', 'margin' or "
                             "'expected'")
        # the rules first (round's range comes from them), then this env's own arguments, all
        # before the base class does any work
        rules = resolve_rules(kwargs.pop("rules", None), kwargs.pop("rules_overrides", None))
        self.draft_round = check_int("round", round, 1, rules.spec.run.round_cap)
        self.budget = check_int("budget", budget, 0, BUDGET_MAX, allow_none=True,
                                none_means=" (the round's opponent budget)")
        if start_board is not None and not isinstance(start_board, (str, Path, Board)):
            raise ValueError(f"start_board must be a board file path, a Board or None; "
                             f"got {start_board!r}")
        super().__init__(rules=rules, **kwargs)
        self.start_board = load_board(start_board, self.rules) \
            if isinstance(start_board, (str, Path)) else start_board

    def _new_state(self, run_seed: int, rank: int, core: str | None) -> RunState:
        return new_draft(run_seed, self.rules, self.draft_round, self.budget, rank=rank,
                         core=core, unlocked=self.unlocked, board=self.start_board,
                         later_bosses=False)

    def _apply(self, action: int) -> ApplyResult:
        return apply_draft_action(self.state, action, self.opponents, self.battle_fn,
                                  self.variant)

    def _info_round(self, battle: BattleSummary | None) -> int:
        """info["round"]: the episode's round, its battle's once fought (the state has moved on
        to the next round by then, see `apply_draft_action`)."""
        return self.state.round if battle is None else battle.round

    def _round_shown(self) -> int | None:
        # after its battle the state has moved on to the next round: the frame names the round
        # fought and its max HP, as info["round"] does
        return self._last_battle.round if self._last_battle is not None else None

    def _reward(self, battle: BattleSummary | None) -> float:
        return 0.0 if battle is None else self._battle_reward(battle)


def apply_draft_action(state: RunState, action: int, opponents, battle_fn, variant) -> ApplyResult:
    """RuneDraft-v0's transition: the loop's `apply` of a legal action, and the draft's end at
    its one battle. The loop has then moved the run on as a run goes on (the next round's
    income and shop: the episode's last observation shows them) or ended it itself; either
    way the draft's run ends there (`end_run`), whatever the run would do next."""
    step = apply(state, action, opponents, battle_fn, variant, assume_legal=True)
    if step.battle is not None:
        end_run(state)
    return step
