"""The Gymnasium adapters (rune_env/envs/run_env.py), checked against their class docstrings:
rewards, termination, RuneDraft-v0, reset options, info, action names, the observation layout,
rendering and the battle engine switch.

These are API tests, not battle-rule tests: only the tests whose outcome hangs on a battle rule
name it in a `Covers:` line. The fixed opponents and helpers are
tests/envs/test_envs_masks_cloning.py's. Marked `outside_mutation_check` (a plain `pytest` runs
them).
"""
from __future__ import annotations

import json
import re

import gymnasium as gym
import numpy as np
import pytest

import rune_env  # noqa: F401  (registers the env ids)
from rune_env.envs import ENV_VERSION, RuneDraftEnv, RuneRunEnv
from rune_env.rules.board import Board
from rune_env.rules.config import KINDS
from test_envs_masks_cloning import (BUY_RUNE, CHOOSE_CORE, CHOOSE_RELIC, CHOOSE_REWARD, INFO_KEYS,
                                     N_ACTIONS, OBS_SHAPES, OBS_SIZE, PICK_UP, PLACE, READY, REROLL,
                                     RULES, RUN_ID, SET_SUN, STRONG, WIN_ROUND_1, EMPTY,
                                     controlled_env,
                                     empty_opponent, empty_then_strong, mixed_opponent, play,
                                     run_script, strong_opponent)

pytestmark = pytest.mark.outside_mutation_check


# -- rewards ---------------------------------------------------------------------------------------
# Controlled battles (frozen rules, round 1, player on side 0):
#   win:  one fire (grade I, ring 1) vs an empty board: 6 a turn, 17 turns -> 102 >= 100, the
#         opponent is down, the player untouched: HP [100, 0] of [100, 100].
#   loss: an empty board vs six fire III: the player is down, the opponent untouched: [0, 100].
#   draw: empty vs empty: both at full HP at the 60 s timeout, equal ratios -> a draw.
@pytest.mark.parametrize("mode,win,loss,draw", [
    ("battle", 1.0, -1.0, 0.0),
    # margin 0.5 x (mine - theirs): win 1 + 0.5 x (1 - 0) = 1.5; loss -1 + 0.5 x (0 - 1) = -1.5;
    # draw 0 + 0.5 x (1 - 1) = 0
    ("margin", 1.5, -1.5, 0.0),
    ("run", 0.0, 0.0, 0.0),          # nothing until the run ends
    # every sampled opponent is the same board as the battle's: the battle reward exactly
    ("expected", 1.0, -1.0, 0.0),
])
def test_reward_modes_on_controlled_battles(mode, win, loss, draw):
    """Covers: D-1"""
    env = controlled_env(opponents=empty_opponent, reward_mode=mode)
    env.reset(seed=0)
    rewards, (_, _, terminated, _, info) = run_script(env, WIN_ROUND_1)
    b = info["battle"]
    assert (b["outcome"], b["seat"], b["hp"], b["max_hp"]) == ("win", 0, [100.0, 0.0], [100.0, 100.0])
    assert rewards == [0.0, 0.0, win] and not terminated and info["wins"] == 1

    env.reset(seed=0, options={"opponents": strong_opponent})
    _, reward, _, _, info = env.step(READY)
    b = info["battle"]
    assert (b["outcome"], b["hp"], b["max_hp"]) == ("loss", [0.0, 100.0], [100.0, 100.0])
    assert reward == loss and info["losses"] == 1 and info["lamps"] == 2

    env.reset(seed=0, options={"opponents": empty_opponent})
    _, reward, _, _, info = env.step(READY)
    b = info["battle"]
    assert (b["outcome"], b["hp"], b["time"]) == ("draw", [100.0, 100.0], 60.0)
    assert reward == draw and info["draws"] == 1


def test_margin_weight_scales_the_margin():
    # 1 + 0.2 x (1 - 0) = 1.2
    env = controlled_env(opponents=empty_opponent, reward_mode="margin", margin_weight=0.2)
    env.reset(seed=0)
    rewards, _ = run_script(env, WIN_ROUND_1)
    assert rewards[-1] == pytest.approx(1.2, rel=1e-12)


def test_expected_reward_is_the_mean_over_sampled_opponents():
    """An opponent source that fields a strong board on every fourth call (calls 3, 7, 11, ...),
    an empty one otherwise. Round 1's battle is call 0 (empty: a win); then the expected reward's
    8 samples are calls 1-8, of which 3 and 7 are strong: 6 wins and 2 losses, (6 - 2) / 8 = 0.5.
    The run's own battle decides the run (a win, 3 lamps) whatever the samples say."""
    calls = []

    def every_fourth_strong(round_, effects, boss_rules, rng):
        calls.append(round_)
        return STRONG if len(calls) % 4 == 0 else EMPTY

    env = controlled_env(opponents=every_fourth_strong, reward_mode="expected", expected_samples=8)
    env.reset(seed=0)
    rewards, (_, _, _, _, info) = run_script(env, WIN_ROUND_1)
    assert rewards == [0.0, 0.0, 0.5]
    assert calls == [1] * 9 and info["battle"]["outcome"] == "win" and info["lamps"] == 3


def test_expected_reward_leaves_the_run_as_it_is():
    """Archmage's shipped pool, a seeded random player: the same run seed gives the same run,
    step for step, under "battle" and "expected" (the samples' generator is their own), and the
    same expected rewards twice; at least one battle's expected reward lies strictly between
    -1 and 1 (a pool of many boards), and each is a multiple of 1/16."""
    def play_with(mode):
        env = RuneRunEnv(rank="archmage", reward_mode=mode, expected_samples=16)
        _, info = env.reset(options={"run_seed": 10**9 + 5})
        rng = np.random.default_rng(0)
        rows = []
        for _ in range(400):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, terminated, truncated, info = env.step(action)
            rows.append((action, obs.tobytes(), info["round"], info["mana"], info["lamps"],
                         json.dumps(info.get("battle"), sort_keys=True), reward))
            if terminated or truncated:
                break
        return rows

    battle, expected, again = play_with("battle"), play_with("expected"), play_with("expected")
    assert [r[:-1] for r in battle] == [r[:-1] for r in expected]
    assert expected == again
    fought = [r[-1] for r in expected if r[5] != "null"]
    assert fought and all(-1.0 <= x <= 1.0 and (x * 16).is_integer() for x in fought)
    assert any(-1.0 < x < 1.0 for x in fought)


def test_run_reward_comes_at_the_end():
    """Win round 1, then lose rounds 2-4 (three lamps): wins / wins_to_clear = 1 / 10 at the end,
    0 before. Round 4 opens with a reward choice (reward_first_round 4)."""
    env = controlled_env(opponents=empty_then_strong, reward_mode="run")
    env.reset(seed=0)
    rewards, (_, _, terminated, truncated, info) = run_script(
        env, WIN_ROUND_1 + [READY, READY, CHOOSE_REWARD + 0, READY])
    assert [b.outcome for b in env.state.battles] == ["win", "loss", "loss", "loss"]
    assert rewards == [0.0] * 6 + [pytest.approx(0.1, rel=1e-12)]
    assert terminated and not truncated
    assert (info["wins"], info["losses"], info["lamps"], info["over"], info["cleared"]) == \
        (1, 3, 0, True, False)


@pytest.mark.parametrize("mode,bonus,last", [
    ("battle", 5.0, 1.0 + 5.0),          # the third win + clear_bonus
    ("battle", 2.5, 1.0 + 2.5),
    ("margin", 5.0, 1.5 + 5.0),          # 1 + 0.5 x (1 - 0) + 5
    ("run", 5.0, 3 / 3),                 # wins / wins_to_clear, no bonus in "run" mode
])
def test_clearing_the_run(mode, bonus, last):
    """wins_to_clear overridden to 3: three wins against empty boards clear the run. One fire
    downs 125 HP (round 2) in 21 turns and 150 (round 3) in 25, both well before 60 s."""
    env = controlled_env(opponents=empty_opponent, reward_mode=mode, clear_bonus=bonus,
                         rules_overrides={"run.wins_to_clear": 3})
    env.reset(seed=0)
    rewards, (_, _, terminated, truncated, info) = run_script(env, WIN_ROUND_1 + [READY, READY])
    assert [b.outcome for b in env.state.battles] == ["win"] * 3
    assert rewards[-1] == pytest.approx(last, rel=1e-12)
    step_reward = {"battle": 1.0, "margin": 1.5, "run": 0.0}[mode]
    assert rewards[:-1] == [0.0, 0.0, step_reward, step_reward]
    assert terminated and not truncated and info["cleared"] and info["over"]


def test_max_rounds_truncates():
    env = controlled_env(opponents=empty_opponent, max_rounds=2)
    env.reset(seed=0)
    _, (_, _, terminated, truncated, _) = run_script(env, WIN_ROUND_1)
    assert not terminated and not truncated
    _, reward, terminated, truncated, info = env.step(READY)
    assert truncated and not terminated and info["battle"]["round"] == 2 and reward == 1.0


# -- RuneDraft-v0 ----------------------------------------------------------------------------------
def test_draft_env_one_battle_round_and_budget():
    """Round 3, default budget 10 + 10 x (3 - 1) = 30 mana; one win ends the episode. Max HP
    100 + 25 x (3 - 1) = 150 on both sides.

    Covers: D-9"""
    env = controlled_env(RuneDraftEnv, round=3, opponents=empty_opponent)
    _, info = env.reset(seed=0)
    assert (info["round"], info["mana"]) == (3, 30)
    assert env.state.pending is None
    rewards, (_, _, terminated, truncated, info) = run_script(env, WIN_ROUND_1)
    assert rewards == [0.0, 0.0, 1.0] and terminated and not truncated
    b = info["battle"]
    assert (b["round"], b["outcome"], b["seat"]) == (3, "win", 0)      # odd round: side 0
    assert b["max_hp"] == [150.0, 150.0] and b["hp"] == [150.0, 0.0]
    assert info["over"] and np.flatnonzero(info["action_mask"]).tolist() == [READY]
    assert np.flatnonzero(env.action_masks()).tolist() == [READY]
    with pytest.raises(RuntimeError):
        env.step(READY)
    # an explicit budget; the margin mode
    env = controlled_env(RuneDraftEnv, round=3, budget=7, opponents=empty_opponent,
                         reward_mode="margin")
    _, info = env.reset(seed=0)
    assert info["mana"] == 7
    rewards, _ = run_script(env, WIN_ROUND_1)
    assert rewards == [0.0, 0.0, 1.5]
    # a loss ends it too: -1
    env = controlled_env(RuneDraftEnv, round=2, opponents=strong_opponent)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(READY)
    assert reward == -1.0 and terminated and info["battle"]["seat"] == 1   # even round: side 1


def test_draft_env_without_core_chooses_it_first():
    env = RuneDraftEnv(rules=RULES, opponents=empty_opponent)
    _, info = env.reset(seed=0)
    assert np.flatnonzero(info["action_mask"]).tolist() == list(range(5))
    _, _, terminated, _, info = env.step(CHOOSE_CORE + 2)     # moon
    assert env.state.core == "moon" and not terminated and info["action_mask"][READY]


@pytest.mark.parametrize("as_path", [False, True])
def test_draft_env_start_board(tmp_path, as_path):
    data = {"runes": {"1:0": ["fire", 2], "3:0": ["wind", 1]}, "open_sectors": [0], "core": "moon",
            "hand": [["water", 1]], "relics": ["ember_jar"], "artifacts": {"2:0": "ward_stone"}}
    start: str | Board
    if as_path:
        path = tmp_path / "start.json"
        path.write_text(json.dumps(data))
        start = str(path)
    else:
        start = Board.from_json(data, RULES)
    env = RuneDraftEnv(round=2, start_board=start, rules=RULES, opponents=empty_opponent,
                       obs_mode="dict")
    obs, info = env.reset(seed=0)
    s = env.state
    # cells: 1:0 = 0, 2:0 = 6, 3:0 = 18 (sector 0)
    assert s.board == {0: ("fire", 2), 18: ("wind", 1)}
    assert s.artifacts == {6: "ward_stone"} and s.hand == [("water", 1)]
    assert s.open_sectors == [0] and s.relics == ["ember_jar"] and s.core == "moon"
    assert s.pending is None and (info["round"], info["mana"]) == (2, 20)   # 10 + 10 x 1
    fire, wind, water = KINDS.index("fire"), KINDS.index("wind"), KINDS.index("water")
    assert obs["board"][0, fire] == 1.0 and obs["board"][0, 13] == pytest.approx(2 / 3)
    assert obs["board"][18, wind] == 1.0 and obs["board"][18, 14] == 1.0     # open
    assert obs["board"][22, 14] == 0.0                                        # 3:4, sector 1: closed
    assert obs["hand"][0, water] == 1.0 and obs["hand"][0, 13] == pytest.approx(1 / 3)
    assert obs["core"][2] == 1.0 and obs["relics"][1] == 1.0                  # moon, ember_jar
    _, reward, terminated, _, info = env.step(READY)
    b = info["battle"]
    # round 2: max HP 100 + 25 = 125 each; fire II under the moon beats an empty board
    assert terminated and reward == 1.0
    assert (b["outcome"], b["max_hp"], b["hp"]) == ("win", [125.0, 125.0], [125.0, 0.0])


class ReadyAgent:
    """The smallest Agent: ready as soon as it is legal, else the first legal action."""

    needs_state = False

    def reset(self, seed=None):
        self.seed = seed

    def act(self, observation, action_mask):
        assert observation.shape == (OBS_SIZE,)
        return READY if action_mask[READY] else int(np.flatnonzero(action_mask)[0])


def test_agent_as_opponent():
    """An object with act/reset drafts the opponent: this one takes the first core offered (sun)
    and readies at once, fielding an empty sun-core board that one fire beats."""
    env = controlled_env(opponents=ReadyAgent())
    env.reset(seed=0)
    _, (_, reward, _, _, info) = run_script(env, WIN_ROUND_1)
    opp = info["battle"]["opponent"]
    assert opp["core"] == "sun" and not opp.get("runes")
    assert info["battle"]["outcome"] == "win" and reward == 1.0


# -- reset options -----------------------------------------------------------------------------------
def test_reset_options_rank_core_opponents():
    env = RuneRunEnv(rules=RULES, opponents=empty_opponent, obs_mode="dict")
    obs, info = env.reset(seed=0)
    assert info["lamps"] == 3 and obs["scalars"][12] == 0.0       # apprentice: rank 0 / 5
    assert env.state.pending.kind == "core"
    obs, info = env.reset(seed=0, options={"rank": "archmage", "core": "moon",
                                           "opponents": strong_opponent})
    # archmage (rank 5 of 0..5) has 2 lamps; the core is fixed, so no core choice
    assert info["lamps"] == 2 and obs["scalars"][12] == 1.0
    assert env.state.pending is None and env.state.core == "moon" and obs["core"][2] == 1.0
    _, reward, _, _, info = env.step(READY)
    assert info["battle"]["outcome"] == "loss" and reward == -1.0     # the strong opponent
    _, info = env.reset(seed=0, options={"rank": 2})                  # by index: sorcerer
    assert env.rank == 2 and info["lamps"] == 3
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(seed=0, options={"lamps": 5})
    with pytest.raises(ValueError):
        env.reset(seed=0, options={"rank": "emperor"})


# -- info, actions, layout, render -------------------------------------------------------------------
def test_info_keys_rules_hash_and_version():
    env = gym.make(RUN_ID)
    _, info = env.reset(seed=0)
    # "battle": the summary when a battle was fought in the step; without one, None or absent
    assert INFO_KEYS - {"battle"} <= set(info) <= INFO_KEYS
    assert info["rules_hash"] == env.unwrapped.rules.hash and isinstance(info["rules_hash"], str)
    assert info["env_version"] == ENV_VERSION and re.fullmatch(r"\d+\.\d+\.\d+", ENV_VERSION)
    assert info["action_mask"].dtype == np.bool_ and info["action_mask"].shape == (N_ACTIONS,)
    assert (info["round"], info["mana"], info["lamps"], info["wins"]) == (1, 10, 3, 0)
    assert info.get("battle") is None and not info["over"] and not info["cleared"]
    env = controlled_env(opponents=empty_opponent)
    env.reset(seed=0)
    _, (_, _, _, _, info) = run_script(env, WIN_ROUND_1)
    assert set(info) == INFO_KEYS and info["rules_hash"] == RULES.hash
    b = info["battle"]
    # a plain dict with the keys of docs/ENVS.md (lamp_saved only when a feather saved a lamp)
    assert type(b) is dict and set(b) == {"round", "outcome", "seat", "time", "hp", "max_hp",
                                          "casts", "seals", "boss_rules", "core", "kinds",
                                          "board", "opponent"}
    assert b == env.state.battles[-1].to_json() and isinstance(b["hp"], list)
    # round 2 after the win: income 10 on the 10 - 2 = 8 left
    assert (info["round"], info["mana"], info["wins"]) == (2, 18, 1)


def test_describe_action_and_action_names():
    env = gym.make(RUN_ID).unwrapped
    names = env.action_names()
    assert len(names) == N_ACTIONS == env.action_space.n and len(set(names)) == N_ACTIONS
    assert all(env.describe_action(i) == n for i, n in enumerate(names))
    assert names[CHOOSE_CORE] == "choose_core sun" and names[CHOOSE_CORE + 4] == "choose_core tree"
    assert names[SET_SUN + 7] == "set_sun_element ice"
    assert names[BUY_RUNE + 4] == "buy_rune 4" and names[REROLL] == "reroll"
    assert names[PLACE] == "place 0 -> 1:0"
    assert names[PLACE + 36 + 8] == "place 1 -> 2:2"          # cell 8 = ring 2, index 2
    assert names[PLACE + 36 * 7 + 35] == "place 7 -> 3:17"
    assert names[PICK_UP + 18] == "pick_up 3:0"
    assert names[CHOOSE_REWARD + 2] == "choose_reward 2" and names[CHOOSE_RELIC] == "choose_relic 0"
    assert env.describe_action(np.int64(READY)) == "ready" == names[-1]


def test_layout_slices_cover_the_flat_vector():
    flat = gym.make(RUN_ID).unwrapped
    layout = flat.layout()
    assert list(layout) == list(OBS_SHAPES)
    start = 0
    for name, sl in layout.items():
        assert sl.start == start and sl.step in (None, 1)
        assert sl.stop - sl.start == int(np.prod(OBS_SHAPES[name]))
        start = sl.stop
    assert start == OBS_SIZE == flat.observation_space.shape[0]
    # the flat vector is the dict observation, part by part, along the same run
    dict_env = RuneRunEnv(obs_mode="dict", opponents=mixed_opponent)
    flat_env = RuneRunEnv(opponents=mixed_opponent)
    first_d, first_f = dict_env.reset(seed=4), flat_env.reset(seed=4)
    rng = np.random.default_rng(4)
    for (_, od, *_), (_, of, *_) in zip(play(dict_env, rng, 80, first_d),
                                         play(flat_env, np.random.default_rng(4), 80, first_f)):
        for name, sl in layout.items():
            assert np.array_equal(of[sl], od[name].reshape(-1)), name


def test_render_ansi_shows_the_board():
    env = controlled_env(opponents=empty_opponent, render_mode="ansi")
    env.reset(seed=0)
    env.step(BUY_RUNE)
    text = env.render()
    assert isinstance(text, str) and "Fi1" not in text.split("shop")[0]
    env.step(PLACE + 0)                     # the fire on 1:0
    text = env.render()
    board_part = text.split("shop")[0]
    assert board_part.count("Fi1") == 1                 # the fire, grade I, drawn on the board
    assert board_part.count("##") == 18                 # ring 3: 18 cells, all sectors closed
    assert "star" in text and re.search(r"round 1\b", text, re.I)
    env.step(READY)
    text = env.render()
    assert "Fi1" in text.split("shop")[0] and re.search(r"round 2\b", text, re.I)
    assert "last battle (round 1): win" in text
    assert controlled_env(opponents=empty_opponent).render() is None     # no render_mode


def test_metadata_names_the_rules_and_env_version():
    """The env's metadata (its spec for tools) carries the rules hash and the env version, the same
    values info reports at every step."""
    import gymnasium as gym

    import rune_env  # noqa: F401
    from rune_env.envs.run_env import ENV_VERSION
    env = gym.make("rune_env/RuneRun-v0", opponents="generator")
    _, info = env.reset(seed=0)
    meta = env.unwrapped.metadata
    assert meta["rules_hash"] == info["rules_hash"] == env.unwrapped.rules.hash
    assert meta["env_version"] == info["env_version"] == ENV_VERSION
    assert "ansi" in meta["render_modes"] and "rgb_array" in meta["render_modes"]


# -- the battle engine switch ----------------------------------------------------------------------
def _trajectory(env: RuneRunEnv, seed: int, steps: int) -> list:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [obs.tobytes()]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, term, trunc, info = env.step(int(legal[int(rng.integers(len(legal)))]))
        b = info.get("battle")
        out.append((obs.tobytes(), reward, term, None if b is None else
                    (b["outcome"], b["time"], tuple(b["casts"]), tuple(b["hp"]))))
        if term or trunc:
            obs, info = env.reset()
    return out


def test_engine_switch_plays_the_same_runs(monkeypatch):
    """The fast engine is the default; engine="reference" (and RUNE_ENGINE=reference) switch back,
    and both play the same runs: the same observations, rewards and battles, step for step."""
    from rune_env.battle import battle
    from rune_env.battle.fast import fast_battle
    monkeypatch.delenv("RUNE_ENGINE", raising=False)
    fast = RuneRunEnv(rules=RULES, opponents="generator")
    assert fast.engine == "fast" and fast.battle_fn is fast_battle
    ref = RuneRunEnv(rules=RULES, opponents="generator", engine="reference")
    assert ref.battle_fn is battle
    a, b = _trajectory(fast, 3, 400), _trajectory(ref, 3, 400)
    assert sum(1 for x in a[1:] if x[3] is not None) >= 10     # battles were fought
    assert a == b
    monkeypatch.setenv("RUNE_ENGINE", "reference")
    assert RuneRunEnv(rules=RULES, opponents="generator").battle_fn is battle
    monkeypatch.setenv("RUNE_ENGINE", "turbo")
    with pytest.raises(ValueError, match="RUNE_ENGINE='turbo'"):
        RuneRunEnv(rules=RULES, opponents="generator")
    with pytest.raises(ValueError, match="unknown battle engine 'turbo'"):
        RuneRunEnv(rules=RULES, opponents="generator", engine="turbo")
