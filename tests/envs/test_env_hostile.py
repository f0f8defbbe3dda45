"""Hostile input to RuneRun-v0 and RuneDraft-v0: each bad value is refused where it enters, with
a one-line ValueError or TypeError naming it, and a refused call leaves the env as it was.

The cases are an audit's findings: a half-applied failed reset that left the env unusable;
set_state taking anything (a late IndexError, TypeError or ValueError at the next step); action
ids out of range or fractional named by describe_action; rules_overrides of the wrong type
(AttributeError inside the rules); a callable opponent returning a non-Board (AttributeError at
battle time); falsy variant and engine read as "the default"; ranks written in non-ASCII digits
or thousands of them.
"""
from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

from conftest import FROZEN_RULES

import rune_env  # noqa: F401  (registers the env ids)
from rune_env.duel.env import RuneDuelEnv
from rune_env.envs.run_env import RuneDraftEnv, RuneRunEnv
from rune_env.rules import Board, load_rules

RULES = load_rules(FROZEN_RULES)
RUN_ID, DRAFT_ID = "rune_env/RuneRun-v0", "rune_env/RuneDraft-v0"
FIRE = Board(runes={0: ("fire", 1)})


def fire_opponent(round_, effects, boss_rules, rng):
    return FIRE


def make(**kw) -> RuneRunEnv:
    kw.setdefault("opponents", fire_opponent)
    return RuneRunEnv(rules=RULES, **kw)


def env_snapshot(env: RuneRunEnv) -> dict:
    """What a failed call must not change: the saved state (the run, the env's generator, rank,
    core) and the options a reset reads."""
    return {"saved": copy.deepcopy(env.get_state()), "rank_mix": env.rank_mix, "core": env.core,
            "rank": env.rank, "opponents_spec": env.opponents_spec,
            "opponents": env.opponents, "by_rank": dict(env._opponents_by_rank),
            "state": env.state}


def assert_one_line(exc: pytest.ExceptionInfo, limit: int = 300) -> None:
    text = str(exc.value)
    assert "\n" not in text and len(text) <= limit, text


def ready_id(env) -> int:
    return env.unwrapped.table.groups["ready"][0]


# -- 1. a failed reset changes nothing --------------------------------------------------------
@pytest.mark.parametrize("options,error,match", [
    # the audit's case: opponents checked after core and rank had been applied
    ({"opponents": 5, "core": "moon", "rank": "archmage"}, TypeError, "reset option 'opponents'"),
    ({"core": "moon", "rank": "x"}, ValueError, "reset option 'rank'"),
    ({"rank": "archmage", "core": "nosuch"}, ValueError, "reset option 'core'"),
    ({"rank": "archmage", "run_seed": -1}, ValueError, "reset option 'run_seed'"),
    ({"rank": "archmage", "colour": "red"}, ValueError, "colour"),
    # fails only when the pool is loaded, after the generator was seeded: it is put back
    ({"core": "moon", "opponents": "/nonexistent/pool.json"}, ValueError, "pool.json"),
], ids=["opponents", "rank", "core", "run_seed", "unknown", "pool"])
@pytest.mark.parametrize("seed", [None, 99], ids=["noseed", "seed"])
def test_failed_reset_leaves_the_env_as_it_was(options, error, match, seed):
    env = gym.make(RUN_ID, rules=str(FROZEN_RULES), opponents="generator")
    fresh = gym.make(RUN_ID, rules=str(FROZEN_RULES), opponents="generator")
    env.reset(seed=7)
    fresh.reset(seed=7)
    before = env_snapshot(env.unwrapped)
    with pytest.raises(error, match=match) as exc:
        env.reset(seed=seed, options=options)
    assert_one_line(exc)
    after = env_snapshot(env.unwrapped)
    assert after == before
    # a plain reset works, and is the one a fresh env with the same seed makes next
    obs, info = env.reset()
    want, want_info = fresh.reset()
    assert np.array_equal(obs, want)
    assert info["action_mask"].tolist() == want_info["action_mask"].tolist()
    assert env.unwrapped.get_state() == fresh.unwrapped.get_state()
    # and the env plays on
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))


def test_failed_reset_before_any_reset_then_seeded_reset_matches_fresh_env():
    env = make()
    with pytest.raises(TypeError, match="opponents"):
        env.reset(seed=3, options={"opponents": 5, "core": "moon", "rank": "archmage"})
    assert env.state is None and env.core is None and env.rank_mix == (0,)
    obs, _ = env.reset(seed=3)
    want, _ = make().reset(seed=3)
    assert np.array_equal(obs, want)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True], ids=["negative", "float", "str", "bool"])
def test_bad_reset_seed_is_named_and_changes_nothing(seed):
    env = make()
    env.reset(seed=1)
    before = env_snapshot(env)
    with pytest.raises(ValueError, match="^seed must be"):
        env.reset(seed=seed)
    assert env_snapshot(env) == before


def test_good_reset_options_still_apply():
    env = make()
    env.reset(seed=1, options={"rank": "sage", "core": "moon", "run_seed": 12,
                               "opponents": "generator"})
    assert env.rank == 4 and env.core == "moon" and env.state.seed == 12
    assert env.opponents_spec == "generator"
    assert env.state.core == "moon" and env.state.rank == 4


# -- 2. set_state checks the whole dict first -------------------------------------------------
def _edit(key, value):
    def edit(saved):
        saved[key] = value
        return saved
    return edit


def _edit_run(key, value):
    def edit(saved):
        saved["run"][key] = value
        return saved
    return edit


def _drop(key):
    def edit(saved):
        del saved[key]
        return saved
    return edit


def _drop_run(key):
    def edit(saved):
        del saved["run"][key]
        return saved
    return edit


@pytest.mark.parametrize("edit,match", [
    (lambda s: "x", "saved env state must be a dict"),
    (lambda s: None, "saved env state must be a dict"),
    (_drop("rank"), "lacks 'rank'"),
    (_drop("np_random"), "lacks 'np_random'"),
    (_edit("extra", 1), "unknown keys: 'extra'"),
    (_edit("rules_hash", "feedface"), "other rules"),
    (_edit("rank", 99), "'rank' must be an integer in 0..5"),
    (_edit("rank", -1), "'rank' must be an integer in 0..5"),
    (_edit("rank", "x"), "'rank' must be an integer"),
    (_edit("rank", True), "'rank' must be an integer"),
    (_edit("rank", 3), "'rank' is 3, but its run's rank is 0"),
    (_edit("core", "nosuch"), "'core' must be one of the cores"),
    (_edit("core", 5), "'core' must be one of the cores"),
    (_edit("np_random", "x"), "'np_random' is not a PCG64 state"),
    (_edit("np_random", {"bit_generator": "MT19937"}), "'np_random' is not a PCG64 state"),
    (_edit("run", "x"), "'run'"),
    (_edit_run("mana", 2**40), "'run'.*mana must be a whole number 0..1000000000"),
    (_edit_run("mana", 2**31 - 1), "'run'.*mana must be a whole number 0..1000000000"),
    (_edit_run("mana", -1), "'run'.*mana"),
    (_edit_run("mana", 2.5), "'run'.*mana"),
    (_edit_run("wins", 2**31), "'run'.*wins"),
    (_edit_run("losses", -1), "'run'.*losses"),
    (_edit_run("prep_actions", 10**12), "'run'.*prep_actions"),
    (_edit_run("seed", -1), "'run'.*seed"),
    (_edit_run("actions_taken", [2**40]), "'run'.*actions_taken"),
    (_drop_run("rank"), "'run'.*rank"),
    # the red team's edits (forty-ninth session): 50,000 shop offers were written past the
    # compiled observation's and mask's arrays (SIGSEGV, a corrupted heap); the others failed
    # later, inside a step, with an IndexError, numpy's ValueError or an AssertionError
    (_edit_run("shop_runes", ["fire"] * 50_000), "shop_runes: 50000 offers; the rules' shop has 5"),
    (_edit_run("shop_runes", ["fire"] * 100), "shop_runes: 100 offers"),
    (_edit_run("shop_runes", ["fire"] * 4), "shop_runes: 4 offers"),
    (_edit_run("shop_artifacts", [None, None]), "shop_artifacts: 2 offers; the rules' shop has 1"),
    (_edit_run("unlocked", []), "unlocked: the shop's kinds, at least one"),
    (_edit_run("unlocked", ["fire", "fire"]), "unlocked: the shop's kinds"),
    (_edit_run("artifact_inventory", [["ward_stone"]]), r"artifact_inventory: unknown \['ward_stone'\]"),
    (_edit_run("pending", {"kind": "core", "options": ["nope"]}), "pending core choice: unknown option 'nope'"),
    (_edit_run("pending", {"kind": "core", "options": []}), "pending core choice: 1..5 distinct options, got 0"),
    (_edit_run("pending", {"kind": "reward", "options": ["x"]}), "pending reward choice: unknown option 'x'"),
    (_edit_run("pending", {"kind": "reward", "options": ["artifact:nope"]}), "unknown option 'artifact:nope'"),
    (_edit_run("pending", {"kind": "reward", "options": ["mana:x"]}), "unknown option 'mana:x'"),
    (_edit_run("pending", {"kind": "relic", "options": ["nope"]}), "pending relic choice: unknown option"),
    (_edit_run("pending", {"kind": "reward", "options": ["mana", "mana"]}), "distinct options, got 2"),
    (_edit_run("pending", {"kind": "reward", "options": ["mana"],
                           "queue": [{"kind": "relic", "options": [1]}]}), "unknown option 1"),
], ids=lambda v: None if callable(v) else v[:40])
def test_set_state_refuses_hostile_state_and_leaves_the_env_unchanged(edit, match):
    env = make(core="moon")
    env.reset(seed=5)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    saved = edit(copy.deepcopy(env.get_state()))
    other = make(core="moon")
    other.reset(seed=6)
    before = env_snapshot(other)
    with pytest.raises(ValueError, match=match) as exc:
        other.set_state(saved)
    assert_one_line(exc)
    assert env_snapshot(other) == before
    # the env still plays (nothing was half set)
    other.step(int(np.flatnonzero(other.action_masks())[0]))


def test_set_state_round_trip_still_works():
    env = make(core="moon")
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(20):
        if env.state.over:
            break
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert len(env.state.actions_taken) > 0
    saved = env.get_state()
    other = make(core="moon")
    other.reset(seed=6)
    other.set_state(copy.deepcopy(saved))
    assert other.get_state() == saved
    assert np.array_equal(other._obs(), env._obs())
    # a state without a run (before the first reset) is a state too
    blank = make().get_state()
    other.set_state(blank)
    assert other.state is None


# -- 3. describe_action ------------------------------------------------------------------------
def test_describe_action_checks_the_id_as_step_does():
    env = make()
    n = len(env.action_names())
    assert env.describe_action(0) == env.action_names()[0]
    assert env.describe_action(np.int64(n - 1)) == env.action_names()[-1]
    assert env.describe_action(np.array(1)) == env.action_names()[1]
    for bad in (-1, n, 10**9):
        with pytest.raises(ValueError, match=rf"^action must be an action id in 0..{n - 1}"):
            env.describe_action(bad)
    for bad in (1.7, 1.0, "1", True, None, [1]):
        with pytest.raises(TypeError, match="^action must be an integer") as exc:
            env.describe_action(bad)
        assert_one_line(exc)


# -- 4. rules_overrides ------------------------------------------------------------------------
@pytest.mark.parametrize("overrides,match", [
    ("x", "rules_overrides must be a mapping"),
    (["run.lamps"], "rules_overrides must be a mapping"),
    (5, "rules_overrides must be a mapping"),
    ({5: 1}, "rules_overrides's keys must be dotted rules paths"),
    ({("run", "lamps"): 1}, "rules_overrides's keys must be dotted rules paths"),
])
@pytest.mark.parametrize("env_id", [RUN_ID, DRAFT_ID])
def test_rules_overrides_type_is_checked(overrides, match, env_id):
    with pytest.raises(ValueError, match=match) as exc:
        gym.make(env_id, rules_overrides=overrides, opponents="generator")
    assert_one_line(exc)


def test_rules_overrides_checked_for_the_duel_env_too():
    with pytest.raises(ValueError, match="rules_overrides must be a mapping"):
        RuneDuelEnv(rules_overrides="x")


def test_good_rules_overrides_and_rules_types():
    env = gym.make(RUN_ID, rules_overrides={"run.lamps": 5}, opponents="generator")
    assert env.unwrapped.rules.spec.run.lamps == 5
    assert make(rules_overrides={}).rules is RULES
    for bad in (5, "", " ", ["default.yaml"]):
        with pytest.raises(ValueError, match="^rules must be a Rules, a rules file path or None"):
            RuneRunEnv(rules=bad, opponents="generator")


# -- 5. a callable opponent must return a Board -------------------------------------------------
@pytest.mark.parametrize("returned", [5, None, {"runes": {}}], ids=["int", "none", "dict"])
def test_callable_opponents_returning_a_non_board_is_named(returned):
    env = make(core="moon", opponents=lambda *a: returned)
    env.reset(seed=1)
    with pytest.raises(TypeError, match=r"^opponents \(a callable\) must return a Board") as exc:
        env.step(ready_id(env))
    assert repr(returned)[:20] in str(exc.value) and type(returned).__name__ in str(exc.value)
    assert_one_line(exc)


def test_opponents_of_the_wrong_type_refused_at_construction():
    with pytest.raises(TypeError, match="^opponents must be None, a pool path"):
        make(opponents=5)


# -- 6. only None means the default variant and engine --------------------------------------
@pytest.mark.parametrize("variant", [0, "", False, "nosuch", "DICE"])
def test_falsy_or_unknown_variant_refused(variant):
    with pytest.raises(ValueError, match="^variant must be one of 'deterministic', 'dice'") as exc:
        make(variant=variant)
    assert_one_line(exc)


@pytest.mark.parametrize("engine", [0, "", False, "nosuch"])
def test_falsy_or_unknown_engine_refused(engine):
    with pytest.raises(ValueError, match="^engine must be one of fast, reference, or None.*"
                                         "unknown battle engine") as exc:
        make(engine=engine)
    assert_one_line(exc)


def test_none_variant_and_engine_are_the_defaults():
    env = make()
    assert env.variant == RULES.spec.variant
    assert env.engine in ("fast", "reference")
    assert make(variant="dice").variant == "dice"
    assert make(engine="reference").engine == "reference"


# -- 7. ranks: names, ints, ASCII digits ---------------------------------------------------------
@pytest.mark.parametrize("rank", ["\u0663", "\u00b2", "9" * 5000, "0" * 30 + "3", "", "-1",
                                  "1.0", "6", 6, -1, True, 2.0])
def test_rank_refused_naming_rank(rank):
    with pytest.raises(ValueError, match="^rank must be a rank name") as exc:
        gym.make(RUN_ID, rank=rank, opponents="generator")
    assert_one_line(exc)


@pytest.mark.parametrize("rank,index", [("3", 3), (" 3 ", 3), ("03", 3), ("sage", 4), (5, 5),
                                        (np.int64(2), 2)])
def test_rank_accepted(rank, index):
    assert make(rank=rank).rank == index


def test_reset_option_rank_refuses_non_ascii_digits():
    env = make()
    env.reset(seed=1)
    with pytest.raises(ValueError, match="^reset option 'rank' must be a rank name"):
        env.reset(options={"rank": "\u0663"})
    with pytest.raises(ValueError, match=r"^rank\[1\] must be a rank name"):
        make(rank=["1", "\u00b2"])


def test_draft_env_failed_reset_changes_nothing():
    env = RuneDraftEnv(rules=RULES, round=2, opponents=fire_opponent)
    fresh = RuneDraftEnv(rules=RULES, round=2, opponents=fire_opponent)
    env.reset(seed=4)
    fresh.reset(seed=4)
    before = env_snapshot(env)
    with pytest.raises(TypeError, match="reset option 'opponents'"):
        env.reset(options={"opponents": 5, "core": "moon", "rank": "archmage"})
    assert env_snapshot(env) == before
    assert np.array_equal(env.reset()[0], fresh.reset()[0])


# -- the duel: the same None-only defaults, and a refused reset changes nothing -----------------
@pytest.mark.parametrize("kw,match", [({"variant": 0}, "^variant must be one of"),
                                      ({"variant": ""}, "^variant must be one of"),
                                      ({"engine": ""}, "^engine must be one of"),
                                      ({"engine": False}, "^engine must be one of")])
def test_duel_falsy_variant_or_engine_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        RuneDuelEnv(rules=RULES, **kw)


def _duel_first_obs(env) -> np.ndarray:
    obs, _ = env.reset()
    return obs["player_0"]["observation"]


@pytest.mark.parametrize("options", ["x", {"rank": "nosuch"}, {"duel_seed": -1}])
def test_duel_refused_reset_keeps_the_generator(options):
    """A refused reset(seed=9, ...) must not reseed: the next plain reset draws the duel seed from
    the generator as seeded before (seed 3), as in a twin that never saw the refused call."""
    env, twin = RuneDuelEnv(rules=RULES), RuneDuelEnv(rules=RULES)
    env.reset(seed=3)
    twin.reset(seed=3)
    with pytest.raises(ValueError):
        env.reset(seed=9, options=options)
    assert np.array_equal(_duel_first_obs(env), _duel_first_obs(twin))
    assert (env.duel.seed, env.duel.rank) == (twin.duel.seed, twin.duel.rank)


def test_duel_vs_agent_refused_reset_keeps_the_generator():
    from agents import make_agent
    from rune_env.duel.single import DuelVsAgent
    env, twin = DuelVsAgent(make_agent("greedy")), DuelVsAgent(make_agent("greedy"))
    env.reset(seed=3)
    twin.reset(seed=3)
    with pytest.raises(ValueError, match="learner_seat"):
        env.reset(seed=9, options={"learner_seat": 2})
    got, want = env.reset(), twin.reset()
    assert np.array_equal(got[0], want[0]) and env.me == twin.me
