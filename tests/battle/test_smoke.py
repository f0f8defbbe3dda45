"""The rules config loads and a battle runs: the floor under every other test. (And the
registered envs' time limits, an API test, marked `outside_mutation_check`.)"""
import numpy as np
import pytest
from conftest import FROZEN_RULES, board

from rune_env.battle import battle


def test_frozen_rules_load(rules):
    assert rules.radius == 3
    assert rules.grade_x == (1.0, 1.8, 3.2)


def test_single_fire_against_empty_board(rules):
    # Fire, grade I, ring 1: 6 damage per turn, one turn every 500 ms from t = 0.5 s.
    # The empty side has no elemental runes: affinity x1. Overdrive starts after 20 s, so
    # 17 turns (t = 0.5 .. 8.5 s) deal 17 x 6 = 102 >= 100: down at t = 8.5 s.
    r = battle(board({"1:0": ("fire", 1)}), board({}), rules)
    assert r.winner == 0
    assert r.time == 8.5
    assert r.casts == (17, 0)
    assert r.hp == (100.0, 0.0)


@pytest.mark.outside_mutation_check
def test_registered_time_limits_follow_each_envs_rules(tmp_path):
    """`gym.make` limits each env to its own rules' cap, round_cap x (action_cap + 2) + 1 steps
    for a run and action_cap + 3 for a draft: 30 x 62 + 1 = 1861 and 63 with the frozen rules,
    12 x 22 + 1 = 265 and 23 with a file of other caps. The ids themselves carry no fixed cap
    (that of the default rules would cut other rules' runs at the wrong step): the limit is the
    registered RulesTimeLimit's, and Gymnasium adds no TimeLimit of its own."""
    import gymnasium as gym
    from gymnasium.wrappers import TimeLimit

    import rune_env
    from rune_env.envs.time_limit import RulesTimeLimit
    other = tmp_path / "caps.yaml"
    other.write_text(f"extends: {FROZEN_RULES}\nrun: {{action_cap: 20, round_cap: 12}}\n",
                     encoding="utf-8")
    for env_id, steps in (("rune_env/RuneRun-v0", (1861, 265)), ("rune_env/RuneDraft-v0", (63, 23))):
        assert gym.spec(env_id).max_episode_steps is None
        for rules_file, want in zip((FROZEN_RULES, other), steps):
            env = gym.make(env_id, rules=str(rules_file), opponents="generator")
            limits, layer = [], env
            while isinstance(layer, gym.Wrapper):
                assert not isinstance(layer, TimeLimit)
                if isinstance(layer, RulesTimeLimit):
                    limits.append(layer.limit)
                layer = layer.env
            assert limits == [want] and env.spec.max_episode_steps == want
            assert want == rune_env.max_episode_steps(env.unwrapped.rules,
                                                      draft=env_id.endswith("Draft-v0"))
            env.close()


@pytest.mark.outside_mutation_check
def test_a_step_limit_given_to_make_governs_above_the_cap_and_below_it():
    """Under illegal_action="penalty" an illegal action is a no-op step that is no preparation
    action, so an episode of them never ends by itself: the limit truncates it. The rules' cap is
    1861 (the test above). max_episode_steps=5000 truncates at step 5000, not 1861 (the
    entry point's own TimeLimit of 1861 sat beneath gym.make's until the fifty-first session),
    and 100 at 100; the spec says each, and gym.make(env.spec) builds an env of the same limit."""
    import gymnasium as gym

    def steps_to_truncation(env) -> int:
        env.reset(seed=0)
        illegal = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
        for n in range(1, 10_001):
            _, reward, terminated, truncated, info = env.step(illegal)
            assert info["illegal"] and not terminated
            if truncated:
                return n
        raise AssertionError("never truncated")

    for limit, want in ((None, 1861), (5000, 5000), (100, 100)):
        kwargs = {} if limit is None else {"max_episode_steps": limit}
        env = gym.make("rune_env/RuneRun-v0", illegal_action="penalty", opponents="generator",
                       **kwargs)
        assert env.spec.max_episode_steps == want
        assert steps_to_truncation(env) == want
        again = gym.make(env.spec)
        assert again.spec.max_episode_steps == want and steps_to_truncation(again) == want
