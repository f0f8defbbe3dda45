"""The rules config loads and a battle runs: the floor under every other test. (And the
registered envs' time limits, an API test, marked `outside_mutation_check`.)"""
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
    """`gym.make` wraps each env in a TimeLimit of its own rules' cap, round_cap x (action_cap +
    2) + 1 steps for a run and action_cap + 3 for a draft: 30 x 62 + 1 = 1861 and 63 with the
    frozen rules, 12 x 22 + 1 = 265 and 23 with a file of other caps. The ids themselves carry
    no fixed cap (that of the default rules would cut other rules' runs at the wrong step)."""
    import gymnasium as gym
    from gymnasium.wrappers import TimeLimit

    import rune_env
    other = tmp_path / "caps.yaml"
    other.write_text(f"extends: {FROZEN_RULES}\nrun: {{action_cap: 20, round_cap: 12}}\n",
                     encoding="utf-8")
    for env_id, steps in (("rune_env/RuneRun-v0", (1861, 265)), ("rune_env/RuneDraft-v0", (63, 23))):
        assert gym.spec(env_id).max_episode_steps is None
        for rules_file, want in zip((FROZEN_RULES, other), steps):
            env = gym.make(env_id, rules=str(rules_file), opponents="generator")
            limits = []
            layer = env
            while isinstance(layer, gym.Wrapper):
                if isinstance(layer, TimeLimit):
                    limits.append(layer._max_episode_steps)
                layer = layer.env
            assert limits == [want] and env.spec.max_episode_steps == want
            assert want == rune_env.max_episode_steps(env.unwrapped.rules,
                                                      draft=env_id.endswith("Draft-v0"))
            env.close()
