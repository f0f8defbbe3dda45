"""What the envs accept: their arguments, checked at construction (and the reset options at
reset), and the mask of a finished episode inside vector envs.

The vector-env walk (Gymnasium's SyncVectorEnv and AsyncVectorEnv with next-step autoreset, and
SB3's SubprocVecEnv) samples uniformly among the True entries of the mask it is given, as a
masked sampler does: an all-False mask (the terminal step's, before the fix) would crash it.
"""
from __future__ import annotations

import math
import time

import gymnasium as gym
import numpy as np
import pytest

from conftest import FROZEN_RULES

import rune_env  # noqa: F401  (registers the env ids)
from rune_env.envs.run_env import RuneDraftEnv, RuneRunEnv
from rune_env.rules import Board, load_rules

RULES = load_rules(FROZEN_RULES)
RUN_ID, DRAFT_ID = "rune_env/RuneRun-v0", "rune_env/RuneDraft-v0"
FIRE = Board(runes={0: ("fire", 1)})


def fire_opponent(round_, effects, boss_rules, rng):
    """One fire rune: cheap to fight, beats an empty board, loses to most random boards."""
    return FIRE


def make_run():
    """Module-level factories: picklable for the subprocess vector envs."""
    return gym.make(RUN_ID, rules=str(FROZEN_RULES), opponents=fire_opponent)


def make_draft():
    return gym.make(DRAFT_ID, rules=str(FROZEN_RULES), opponents=fire_opponent)


def ready_id(env) -> int:
    return env.unwrapped.table.groups["ready"][0]


# -- the mask of a finished episode ---------------------------------------------------------------
@pytest.mark.parametrize("cls,kw", [(RuneRunEnv, {"core": "moon"}),
                                    (RuneDraftEnv, {"round": 2, "core": "moon"})],
                         ids=["run", "draft"])
def test_terminal_mask_is_ready_only(cls, kw):
    """On the terminal step: info["action_mask"] and action_masks() hold `ready` alone; stepping
    the finished episode still raises; set_state to a finished run gives the same mask."""
    env = cls(rules=RULES, opponents=fire_opponent, **kw)
    _, info = env.reset(seed=0)
    ready = ready_id(env)
    terminated = False
    steps = 0
    while not terminated:
        _, _, terminated, truncated, info = env.step(ready)   # an empty board loses to fire
        steps += 1
        assert not truncated and steps < 100
    assert info["over"]
    for mask in (info["action_mask"], env.action_masks()):
        assert mask.dtype == np.bool_ and mask.shape == (env.action_space.n,)
        assert np.flatnonzero(mask).tolist() == [ready]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(ready)
    saved = env.get_state()
    other = cls(rules=RULES, opponents=fire_opponent, **kw)
    other.reset(seed=1)
    other.set_state(saved)
    assert np.flatnonzero(other.action_masks()).tolist() == [ready]
    # after reset the mask is the usual one again
    _, info = env.reset(seed=2)
    assert info["action_mask"].sum() > 1 and env.action_masks().sum() > 1


def _uniform(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    assert len(legal), "an all-False mask"
    return int(legal[rng.integers(len(legal))])


def _walk_gym_vector(venv, steps: int, seed: int) -> dict:
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = {"terminated": 0, "steps": 0}
    while seen["steps"] < steps:
        masks = info["action_mask"]
        assert masks.shape == (venv.num_envs, venv.single_action_space.n)
        assert masks.any(axis=1).all(), "an all-False mask in info"
        called = np.stack(venv.call("action_masks"))
        assert called.any(axis=1).all(), "an all-False mask from action_masks()"
        assert np.array_equal(called, masks)
        actions = np.array([_uniform(rng, m) for m in masks])
        obs, _, terminated, truncated, info = venv.step(actions)
        seen["terminated"] += int(terminated.sum())
        seen["steps"] += venv.num_envs
    return seen


def _walk_sb3(venv, steps: int, seed: int) -> dict:
    venv.seed(seed)
    venv.reset()
    rng = np.random.default_rng(seed)
    seen = {"terminated": 0, "steps": 0}
    while seen["steps"] < steps:
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.any(axis=1).all(), "an all-False mask from action_masks()"
        _, _, dones, infos = venv.step(np.array([_uniform(rng, m) for m in masks]))
        for done, info in zip(dones, infos):
            assert info["action_mask"].any(), "an all-False mask in info"
            if done and not info.get("TimeLimit.truncated", False):
                seen["terminated"] += 1
                assert info["over"] and int(info["action_mask"].sum()) == 1
        seen["steps"] += venv.num_envs
    return seen


STEPS = 10_000     # env steps per vector env (5000 vector steps of 2 envs)


@pytest.mark.outside_mutation_check
@pytest.mark.parametrize("kind", ["sync", "async", "subproc"])
def test_vector_envs_never_see_an_all_false_mask(kind):
    """10,000 masked random env steps (uniform among the mask's True entries) through each vector
    env: a RuneRun-v0 and a RuneDraft-v0 side by side (the draft ends every <= 61 steps, so many
    terminal steps go by). No mask is all False and nothing raises."""
    pytest.importorskip("stable_baselines3")
    start = time.perf_counter()
    if kind == "subproc":
        from stable_baselines3.common.vec_env import SubprocVecEnv
        venv = SubprocVecEnv([make_run, make_draft])
        try:
            seen = _walk_sb3(venv, STEPS, seed=7)
        finally:
            venv.close()
    else:
        cls = gym.vector.SyncVectorEnv if kind == "sync" else gym.vector.AsyncVectorEnv
        venv = cls([make_run, make_draft])
        assert venv.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP) \
            == gym.vector.AutoresetMode.NEXT_STEP
        try:
            seen = _walk_gym_vector(venv, STEPS, seed=7)
        except BaseException:
            venv.close(terminate=True) if kind == "async" else venv.close()
            raise
        venv.close()
    assert seen["steps"] >= STEPS
    assert seen["terminated"] >= 50, seen          # the terminal masks really were met
    print(f"{kind}: {seen} in {time.perf_counter() - start:.1f} s")


# -- constructor arguments ------------------------------------------------------------------------
BAD_ARGS = [
    (RuneRunEnv, {"max_rounds": -1}, "max_rounds"),
    (RuneRunEnv, {"max_rounds": 0}, "max_rounds"),
    (RuneRunEnv, {"max_rounds": 31}, "max_rounds"),
    (RuneRunEnv, {"max_rounds": 2.5}, "max_rounds"),
    (RuneRunEnv, {"max_rounds": True}, "max_rounds"),
    (RuneDraftEnv, {"budget": -5}, "budget"),
    (RuneDraftEnv, {"budget": "10"}, "budget"),
    (RuneDraftEnv, {"budget": 10**12}, "budget"),
    (RuneDraftEnv, {"round": 0}, "round"),
    (RuneDraftEnv, {"round": 999}, "round"),
    (RuneDraftEnv, {"round": 1.0}, "round"),
    (RuneRunEnv, {"core": "banana"}, "core"),
    (RuneDraftEnv, {"core": "banana"}, "core"),
    (RuneRunEnv, {"rank": "grandmaster"}, "rank"),
    (RuneRunEnv, {"rank": 6}, "rank"),
    (RuneRunEnv, {"rank": -1}, "rank"),
    (RuneRunEnv, {"rank": "-1"}, "rank"),
    (RuneRunEnv, {"rank": 1.0}, "rank"),
    (RuneRunEnv, {"rank": True}, "rank"),
    (RuneRunEnv, {"clear_bonus": -1.0}, "clear_bonus"),
    (RuneRunEnv, {"clear_bonus": math.nan}, "clear_bonus"),
    (RuneRunEnv, {"clear_bonus": "5"}, "clear_bonus"),
    (RuneRunEnv, {"margin_weight": -0.5}, "margin_weight"),
    (RuneRunEnv, {"margin_weight": math.inf}, "margin_weight"),
    (RuneRunEnv, {"illegal_penalty": 0.5}, "illegal_penalty"),
    (RuneRunEnv, {"illegal_penalty": None}, "illegal_penalty"),
    (RuneRunEnv, {"unlocked": ["fire", "plasma"]}, "unlocked"),
    (RuneRunEnv, {"unlocked": "fire"}, "unlocked"),
    (RuneRunEnv, {"unlocked": []}, "unlocked"),
    (RuneRunEnv, {"strict_pools": "yes"}, "strict_pools"),
    (RuneRunEnv, {"battle_fn": 3}, "battle_fn"),
    (RuneRunEnv, {"reward_mode": "score"}, "reward_mode"),
    (RuneRunEnv, {"expected_samples": 0}, "expected_samples"),
    (RuneRunEnv, {"expected_samples": 1025}, "expected_samples"),
    (RuneRunEnv, {"expected_samples": 2.5}, "expected_samples"),
    (RuneRunEnv, {"expected_samples": True}, "expected_samples"),
    (RuneRunEnv, {"obs_mode": "image"}, "obs_mode"),
    (RuneRunEnv, {"illegal_action": "ignore"}, "illegal_action"),
    (RuneRunEnv, {"render_mode": "human"}, "render_mode"),
    (RuneRunEnv, {"variant": "coins"}, "variant"),
    (RuneRunEnv, {"engine": "turbo"}, "engine"),
    (RuneDraftEnv, {"start_board": 42}, "start_board"),
]


@pytest.mark.parametrize("cls,kw,name", BAD_ARGS,
                         ids=[f"{c.__name__}-{k}" for c, k, _ in BAD_ARGS])
def test_bad_argument_is_refused_at_construction(cls, kw, name):
    """A ValueError naming the argument, from the constructor (before any reset)."""
    with pytest.raises(ValueError, match=name) as exc:
        cls(rules=RULES, opponents=fire_opponent, **kw)
    assert str(exc.value).split()[0].strip("'$") in (name, "unknown")


def test_messages_list_the_choices():
    with pytest.raises(ValueError) as exc:
        RuneRunEnv(rules=RULES, core="banana")
    assert all(c in str(exc.value) for c in RULES.spec.cores)
    with pytest.raises(ValueError) as exc:
        RuneRunEnv(rules=RULES, rank="grandmaster")
    assert "apprentice" in str(exc.value) and "0..5" in str(exc.value)
    with pytest.raises(ValueError, match=r"round must be an integer in 1\.\.30; got 999"):
        RuneDraftEnv(rules=RULES, round=999)


def test_good_arguments_are_accepted():
    """Ranks by name, by number and by a string of digits are the same rank; numpy integers
    count as integers; the bounds themselves are accepted."""
    ranks = {RuneRunEnv(rules=RULES, opponents=fire_opponent, rank=r).rank
             for r in ("sorcerer", 2, "2", np.int64(2))}
    assert ranks == {2}
    env = RuneRunEnv(rules=RULES, opponents=fire_opponent, max_rounds=30, clear_bonus=0,
                     margin_weight=0, illegal_penalty=0, core="moon", unlocked=("fire",))
    assert env.max_rounds == 30 and env.core == "moon"
    env = RuneDraftEnv(rules=RULES, opponents=fire_opponent, round=np.int32(30), budget=0)
    _, info = env.reset(seed=0)
    assert (info["round"], info["mana"]) == (30, 0)
    env = RuneDraftEnv(rules=RULES, opponents=fire_opponent, round=1)
    _, info = env.reset(seed=0)
    assert info["round"] == 1


# -- reset options --------------------------------------------------------------------------------
@pytest.mark.parametrize("options,name", [
    ({"run_seed": -1}, "run_seed"),
    ({"run_seed": 1.5}, "run_seed"),
    ({"run_seed": "7"}, "run_seed"),
    ({"rank": "grandmaster"}, "rank"),
    ({"core": "banana"}, "core"),
    ({"seed": 3}, "seed"),
    ({"runseed": 3, "rank": 0}, "runseed"),
])
def test_bad_reset_option_is_named(options, name):
    env = RuneRunEnv(rules=RULES, opponents=fire_opponent)
    env.reset(seed=0)
    before = (env.rank, env.core)
    with pytest.raises(ValueError, match=f"'{name}'"):
        env.reset(options=options)
    assert (env.rank, env.core) == before          # nothing was half-applied


def test_unknown_reset_option_lists_the_options():
    env = RuneRunEnv(rules=RULES, opponents=fire_opponent)
    with pytest.raises(ValueError) as exc:
        env.reset(options={"bogus": 1})
    assert "'bogus'" in str(exc.value)
    assert all(k in str(exc.value) for k in ("rank", "core", "opponents", "run_seed"))
    _, info = env.reset(options={"run_seed": 0, "rank": "1", "core": "sun"})
    assert env.state.seed == 0 and env.rank == 1 and env.state.core == "sun"


# -- actions are integers ----------------------------------------------------------------------
def _first_legal(info) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


# Not integers, though int() would take them: 1.5 played as 1, "1" as 1, True as 1; a float
# that happens to be whole, a 1-element array (a mask row's index list), a 0-d float array.
NOT_INTEGERS = [
    (lambda a: a + 0.5, "float"), (lambda a: float(a), "float"), (lambda a: str(a), "str"),
    (lambda a: True, "bool"), (lambda a: np.True_, "bool"), (lambda a: np.float32(a), "float32"),
    (lambda a: np.array(float(a)), "ndarray"), (lambda a: np.array([a]), "ndarray"),
    (lambda a: [a], "list"), (lambda a: None, "NoneType"),
]
INTEGERS = [lambda a: a, lambda a: np.int64(a), lambda a: np.int16(a), lambda a: np.uint16(a),
            lambda a: np.array(a), lambda a: np.array(a, dtype=np.int8)]


@pytest.mark.parametrize("make", [make_run, make_draft], ids=["RuneRun", "RuneDraft"])
def test_an_action_that_is_not_an_integer_is_a_type_error_and_changes_nothing(make):
    env, twin = make(), make()
    _, info = env.reset(seed=3)
    twin.reset(seed=3)
    a = _first_legal(info)
    for bad, type_name in NOT_INTEGERS:
        value = bad(a)
        with pytest.raises(TypeError, match=f"action must be an integer.*got .* of type {type_name}$"):
            env.step(value)
    # nothing was played: the next (good) step matches a twin that never saw the bad ones
    got, want = env.step(a), twin.step(a)
    assert np.array_equal(got[0], want[0]) and got[1:4] == want[1:4]


@pytest.mark.parametrize("make", [make_run, make_draft], ids=["RuneRun", "RuneDraft"])
def test_numpy_integers_and_0d_integer_arrays_are_actions(make):
    """What vector envs and policies pass (np.int64 from an action array, a 0-d array from
    predict on one observation) plays as the Python int would."""
    ref = make()
    _, info = ref.reset(seed=4)
    a = _first_legal(info)
    want = ref.step(a)
    for form in INTEGERS:
        env = make()
        env.reset(seed=4)
        got = env.step(form(a))
        assert np.array_equal(got[0], want[0]) and got[1:4] == want[1:4], form(a)


def test_a_huge_array_action_is_named_briefly():
    env = make_run()
    env.reset(seed=0)
    with pytest.raises(TypeError) as exc:
        env.step(np.zeros(10_000, dtype=np.int64))
    assert len(str(exc.value)) < 250 and "of type ndarray" in str(exc.value)


def test_a_pool_of_other_rules_past_the_round_cap_leaves_those_rounds_out(tmp_path):
    """Under rules with run.round_cap 5, the shipped apprentice pool (rounds 1-15, the default
    rules) was a PoolError, so RuneRunEnv(rules_overrides={"run.round_cap": 5}) could not be
    built (its default opponents are that pool). A pool of other rules is fielded with a
    warning; its rounds 6-15 can never be played, so they are left out, and the warning says
    so. A pool of the same rules with a round past the cap is still refused (the test above),
    and so is another rules' pool with strict."""
    import warnings

    from rune_env.envs.run_env import RuneRunEnv
    from rune_env.resources import opponents_dir
    from rune_env.rules import load_rules
    from rune_env.run.opponents import PoolError, load_pool
    capped = load_rules(None, {"run.round_cap": 5})
    shipped = opponents_dir() / "apprentice.json.gz"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pool = load_pool(shipped, capped)
    assert sorted(pool.rounds) == [1, 2, 3, 4, 5]
    said = " ".join(str(w.message) for w in caught)
    assert "rounds 6-15 are past run.round_cap 5 and are left out" in said
    with pytest.raises(PoolError, match="made under rules"):
        load_pool(shipped, capped, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = RuneRunEnv(rules_overrides={"run.round_cap": 5})
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
