"""The agents (agents/): the baselines on the agent protocol, `make_agent`, `PolicyAgent` and
`load_model` on a tiny MaskablePPO, and the evaluation helpers (Wilson and normal intervals,
the summary, evaluation seeds disjoint from training seeds).

These are API tests, not battle-rule tests, so no test names a rule id in a `Covers:` line. The
baseline and statistics tests are fast and unmarked; the tests that need torch /
stable-baselines3 (PolicyAgent, load_model) are marked `outside_mutation_check` (importing torch
alone takes seconds) and are skipped without the `train` extra. Envs use the frozen rules and cheap fixed
opponents (no budget drafter), and `max_rounds` keeps runs short.
"""
from __future__ import annotations

import inspect
import math
import zipfile

import numpy as np
import pytest
from conftest import frozen_rules

from agents import BASELINES, GreedyAgent, RandomAgent, ScriptedAgent, make_agent
from agents.evaluation.runs import (EVAL_SEED_BASE, eval_run_seed, evaluate, mean_ci, play_run,
                                    summarise, wilson)
from rune_env.envs import Agent
from rune_env.envs.run_env import TRAINING_SEED_LIMIT, RuneDraftEnv, RuneRunEnv
from rune_env.rules.board import Board
from rune_env.run.actions import action_table
from rune_env.run.loop import is_open

RULES = frozen_rules()
TABLE = action_table(RULES)
N = len(TABLE)
EMPTY = Board.from_json({"runes": {}}, RULES, source="empty opponent")
FIRE = Board.from_json({"runes": {"1:0": ["fire", 1]}}, RULES, source="one fire")


def cheap_opponent(round_, effects, boss_rules, rng):
    """An empty board in odd rounds, one grade-I fire in even rounds: cheap battles, and both
    wins and losses happen (so runs reach reward choices)."""
    return EMPTY if round_ % 2 else FIRE


def make_env(max_rounds: int | None = 4, **kw) -> RuneRunEnv:
    return RuneRunEnv(rules=RULES, opponents=cheap_opponent, max_rounds=max_rounds, **kw)


def run_actions(agent, env: RuneRunEnv, run_seed: int, agent_seed: int | None, limit: int = 400):
    """Play one run (up to `limit` steps), checking every action against the mask; returns the
    action ids. The env raises IllegalAction on an illegal one too (illegal_action="raise")."""
    obs, info = env.reset(options={"run_seed": run_seed})
    agent.reset(agent_seed)
    actions = []
    for _ in range(limit):
        state = env.state if agent.needs_state else None
        a = agent.act(obs, info["action_mask"], state=state)
        assert isinstance(a, int)
        assert 0 <= a < N and info["action_mask"][a], f"illegal action {a} ({TABLE.actions[a].name})"
        actions.append(a)
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            break
    return actions


# -- the protocol ----------------------------------------------------------------------------------
@pytest.mark.parametrize("agent", [RandomAgent(0), ScriptedAgent(RULES), GreedyAgent(RULES, 0)],
                         ids=["random", "scripted", "greedy"])
def test_baselines_follow_the_protocol(agent):
    """act(observation, action_mask, state=None) -> int and reset(seed); `needs_state` says
    whether the evaluation loop must pass the run state (only the greedy drafter needs it)."""
    assert isinstance(agent, Agent)          # runtime_checkable: act and reset exist
    params = inspect.signature(agent.act).parameters
    assert list(params)[:2] == ["observation", "action_mask"]
    assert "state" in params and params["state"].default is None
    assert agent.reset(3) is None and agent.reset(None) is None
    assert agent.needs_state is isinstance(agent, GreedyAgent)


def test_baselines_play_whole_runs_with_legal_actions():
    """Every baseline plays whole runs through the env's own step (which raises on an illegal
    action), each action legal under the mask and a plain int."""
    env = make_env(max_rounds=3)
    for agent in (RandomAgent(1), ScriptedAgent(RULES), GreedyAgent(RULES, 1)):
        acts = run_actions(agent, env, run_seed=11, agent_seed=5)
        # it got to fight, and the run ended (3 rounds at most) well before the step limit
        assert env.state.battles and len(acts) < 400, type(agent).__name__


# -- RandomAgent -------------------------------------------------------------------------------------
def test_random_agent_only_picks_legal_actions():
    rng = np.random.default_rng(0)
    agent = RandomAgent(0)
    for size in (1, 2, 7, 50):
        for _ in range(20):
            legal = rng.choice(N, size=size, replace=False)
            mask = np.zeros(N, dtype=bool)
            mask[legal] = True
            a = agent.act(None, mask)
            assert a in set(legal.tolist())
    one = np.zeros(N, dtype=bool)
    one[TABLE.id("ready")] = True
    assert {agent.act(None, one) for _ in range(20)} == {TABLE.id("ready")}
    with pytest.raises(ValueError):
        agent.act(None, np.zeros(N, dtype=bool))


def test_random_agent_is_uniform_over_the_legal_actions():
    """4 legal actions, 4000 draws: each expected 1000 times, sd sqrt(4000 x 1/4 x 3/4) = 27.4;
    +-150 is 5.5 sd (and the draw is seeded, so the test is deterministic anyway)."""
    mask = np.zeros(N, dtype=bool)
    legal = [3, 20, 300, 592]
    mask[legal] = True
    agent = RandomAgent(123)
    counts = {a: 0 for a in legal}
    for _ in range(4000):
        counts[agent.act(None, mask)] += 1
    assert all(abs(c - 1000) <= 150 for c in counts.values()), counts


def test_random_agent_same_seed_same_actions():
    env = make_env(max_rounds=2)
    a1 = run_actions(RandomAgent(), env, run_seed=7, agent_seed=42)
    a2 = run_actions(RandomAgent(999), env, run_seed=7, agent_seed=42)   # reset(42) reseeds
    assert a1 == a2
    # the constructor seed and reset(seed) give the same stream
    mask = np.ones(N, dtype=bool)
    x, y = RandomAgent(5), RandomAgent(None)
    y.reset(5)
    assert [x.act(None, mask) for _ in range(50)] == [y.act(None, mask) for _ in range(50)]
    # and another seed another stream (50 draws among 593 actions: equal by chance ~ 593^-50)
    z = RandomAgent(6)
    x.reset(5)
    assert [x.act(None, mask) for _ in range(50)] != [z.act(None, mask) for _ in range(50)]


# -- ScriptedAgent -----------------------------------------------------------------------------------
def scripted_expectation(state) -> int:
    """What the ScriptedAgent docstring promises, worked out from the state: the first option of
    a pending choice; else buy the first offer it can afford while the hand has room; else place
    hand slot 0 in the first free open cell (casting order = cell id order); else ready."""
    pend = state.pending
    if pend is not None:
        if pend.kind == "core":
            first = next(i for i, c in enumerate(TABLE.cores) if c in pend.options)
            return TABLE.id("choose_core", first)
        return TABLE.id("choose_reward" if pend.kind == "reward" else "choose_relic", 0)
    if len(state.hand) < state.hand_slots:
        for i, offer in enumerate(state.shop_runes):
            if offer is not None and state.mana >= RULES.prices[offer]:
                return TABLE.id("buy_rune", i)
    if state.hand:
        free = [c for c in range(36) if c not in state.board and is_open(state, c)]
        if free:
            return TABLE.id("place", 0, free[0])
    return TABLE.id("ready")


def test_scripted_agent_buys_places_in_first_free_cells_and_readies():
    """Round 1 of a real run, step by step, then the board it fought with."""
    env = make_env(max_rounds=None)
    obs, info = env.reset(options={"run_seed": 5})
    agent = ScriptedAgent(RULES)
    agent.reset(5)
    s = env.state
    # first action: the core choice's first option; TABLE.cores is (sun, star, moon, eclipse, tree)
    assert agent.act(obs, info["action_mask"]) == TABLE.id("choose_core", 0)
    obs, _, _, _, info = env.step(TABLE.id("choose_core", 0))
    assert s.core == "sun" and s.mana == 10 and s.hand_slots == 4   # start_mana 10, 4 hand slots
    offers = list(s.shop_runes)
    bought = []
    for _ in range(30):
        expected = scripted_expectation(s)
        a = agent.act(obs, info["action_mask"])
        assert a == expected, (TABLE.actions[a].name, TABLE.actions[expected].name)
        if TABLE.actions[a].kind == "buy_rune":
            bought.append(offers[TABLE.actions[a].args[0]])
        obs, _, _, _, info = env.step(a)
        if info.get("battle") is not None:      # "battle" only in a step that fought
            break
    assert TABLE.actions[a].kind == "ready"
    # it bought while it could: 10 mana at 2 or 3 a rune; it stopped only when no offer left
    # was affordable
    spent = sum(RULES.prices[k] for k in bought)
    left = [o for o in offers if o is not None]
    for k in bought:
        left.remove(k)
    assert bought and spent <= 10 and all(RULES.prices[o] > 10 - spent for o in left)
    # ...and placed them in cells 0, 1, 2, ... (ring 1 first), in the order bought, hand empty
    fought = info["battle"]["board"]
    assert fought["runes"] == {f"1:{i}": [k, 1] for i, k in enumerate(bought)}
    assert fought.get("hand", []) == []


def test_scripted_agent_is_deterministic_through_a_run():
    """Its choices follow the state alone: a whole (short) run matches the expectation at every
    step, and two agents with different seeds play the same actions."""
    env = make_env(max_rounds=5)
    obs, info = env.reset(options={"run_seed": 21})
    agent = ScriptedAgent(RULES, seed=1)
    for _ in range(400):
        a = agent.act(obs, info["action_mask"])
        assert a == scripted_expectation(env.state)
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            break
    assert run_actions(ScriptedAgent(RULES, 1), env, 21, 1) == \
        run_actions(ScriptedAgent(RULES, 2), env, 21, 99)


# -- GreedyAgent -------------------------------------------------------------------------------------
def test_greedy_agent_needs_the_state():
    env = make_env()
    obs, info = env.reset(options={"run_seed": 3})
    agent = GreedyAgent(RULES, seed=0)
    with pytest.raises(ValueError, match="state"):
        agent.act(obs, info["action_mask"])
    a = agent.act(obs, info["action_mask"], state=env.state)
    assert info["action_mask"][a]


def test_greedy_agent_is_deterministic_per_seed():
    env = make_env(max_rounds=3)
    # with exploration noise the seed drives the random actions, so it matters
    a1 = run_actions(GreedyAgent(RULES, seed=0, noise=0.3), env, run_seed=9, agent_seed=4)
    a2 = run_actions(GreedyAgent(RULES, seed=8, noise=0.3), env, run_seed=9, agent_seed=4)
    assert a1 == a2                                  # reset(4) reseeds both
    others = [run_actions(GreedyAgent(RULES, noise=0.3), env, run_seed=9, agent_seed=s)
              for s in (5, 6, 7)]
    assert any(o != a1 for o in others)
    # without noise: the same seed and state give the same action, reset or not
    env.reset(options={"run_seed": 9})
    g1, g2 = GreedyAgent(RULES, seed=2), GreedyAgent(RULES, seed=2)
    mask = env.action_masks()
    assert g1.act(None, mask, state=env.state) == g2.act(None, mask, state=env.state)


# -- make_agent --------------------------------------------------------------------------------------
def test_make_agent_names():
    assert BASELINES == ("random", "scripted", "greedy")
    assert type(make_agent("random", RULES, 0)) is RandomAgent
    assert type(make_agent("scripted", RULES, 0)) is ScriptedAgent
    g = make_agent("greedy", RULES, 0)
    assert type(g) is GreedyAgent and g.noise == 0.0
    g = make_agent("greedy:0.2", RULES, 0)
    assert type(g) is GreedyAgent and g.noise == pytest.approx(0.2)
    # the seed reaches the agent: make_agent("random", seed=s) draws like RandomAgent(s)
    mask = np.ones(N, dtype=bool)
    r1, r2 = make_agent("random", RULES, 17), RandomAgent(17)
    assert [r1.act(None, mask) for _ in range(20)] == [r2.act(None, mask) for _ in range(20)]


def test_numbers_in_names_and_options_are_ascii():
    """Python reads any script's digits: greedy:٠.5 was noise 0.5, planner:boards=١٠٠ 100
    boards, by_round:١=greedy round 1, --rounds ٣ round 3, --seed ٣ seed 3. Numbers are ASCII."""
    import argparse
    from agents.cli.args import positive_float, seed_int
    from agents.design.metagame.cli import parse_rounds
    for name, words in [("greedy:\u0660.5", "greedy:NOISE needs a number"),
                        ("planner:boards=\u0661\u0660\u0660", "boards needs a number"),
                        ("by_round:\u0661=greedy", "is not a round number")]:
        with pytest.raises(ValueError, match=words):
            make_agent(name, RULES, 0)
    for check, text in [(seed_int, "\u0663"), (positive_float, "\u0663.5")]:
        with pytest.raises(argparse.ArgumentTypeError):
            check(text)
    with pytest.raises(ValueError, match="not a round or a range"):
        parse_rounds(["\u0663"], 15)
    assert seed_int(" 3 ") == 3 and parse_rounds(["3-4"], 15) == (3, 4)


def test_make_agent_unknown_name_is_a_missing_checkpoint(tmp_path):
    """Anything else is a model path: a name that is no file fails with PolicyLoadError naming it."""
    from agents.policy import PolicyLoadError
    missing = tmp_path / "no_such_model.zip"
    with pytest.raises(PolicyLoadError, match="no_such_model"):
        make_agent(str(missing), RULES, 0)


# -- PolicyAgent and load_model (torch) ----------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_model_path(tmp_path_factory):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    env = make_env(max_rounds=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16, 16]}, device="cpu", verbose=0)
    model.learn(64)
    path = tmp_path_factory.mktemp("policy") / "tiny.zip"
    from agents.policy.trust import save_checkpoint
    save_checkpoint(model, path)     # signed, as training saves it: PolicyAgent may load it
    return path


def observations(n: int, run_seed: int = 13):
    """Real (observation, mask) pairs from a random player."""
    env = make_env(max_rounds=3)
    obs, info = env.reset(options={"run_seed": run_seed})
    agent = RandomAgent(0)
    out = []
    while len(out) < n:
        out.append((obs.copy(), info["action_mask"].copy()))
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info["action_mask"]))
        if terminated or truncated:
            obs, info = env.reset(options={"run_seed": run_seed + len(out)})
    return out


@pytest.mark.outside_mutation_check
def test_policy_agent_same_observations_same_actions(tiny_model_path):
    from agents.policy import PolicyAgent
    pairs = observations(40)
    a = PolicyAgent(tiny_model_path)
    b = PolicyAgent(str(tiny_model_path))
    assert isinstance(a, Agent) and a.needs_state is False
    acts_a = [a.act(o, m) for o, m in pairs]
    assert acts_a == [b.act(o, m) for o, m in pairs]
    assert acts_a == [a.act(o, m) for o, m in pairs]          # no hidden state between calls
    assert all(isinstance(x, int) for x in acts_a)
    # sampling (deterministic=False) repeats under the same reset seed
    s1, s2 = PolicyAgent(tiny_model_path, deterministic=False), \
        PolicyAgent(tiny_model_path, deterministic=False)
    s1.reset(3)
    x = [s1.act(o, m) for o, m in pairs]
    s2.reset(3)
    assert x == [s2.act(o, m) for o, m in pairs]


@pytest.mark.outside_mutation_check
def test_policy_agent_respects_the_mask(tiny_model_path):
    from agents.policy import PolicyAgent
    pairs = observations(40)
    for det in (True, False):
        agent = PolicyAgent(tiny_model_path, deterministic=det)
        agent.reset(0)
        for o, m in pairs:                     # the env's own masks
            assert m[agent.act(o, m)]
    rng = np.random.default_rng(1)
    agent = PolicyAgent(tiny_model_path)
    for o, _ in pairs:                         # made-up masks of 1 and 3 legal actions
        for size in (1, 3):
            legal = rng.choice(N, size=size, replace=False)
            mask = np.zeros(N, dtype=bool)
            mask[legal] = True
            assert agent.act(o, mask) in set(legal.tolist())


@pytest.mark.outside_mutation_check
def test_policy_agent_plays_evaluation_runs(tiny_model_path):
    """Through the evaluation loop (play_run passes obs and mask; the env raises on illegal)."""
    from agents.policy import PolicyAgent
    env = make_env(max_rounds=2)
    res = evaluate(PolicyAgent(tiny_model_path), 2, seed=0, env=env)
    assert res["episodes"] == 2 and res["battles"] >= 2
    assert make_agent(str(tiny_model_path), RULES, 0).model.num_timesteps == 64


@pytest.mark.outside_mutation_check
def test_corrupt_checkpoints_raise_policy_load_error(tiny_model_path, tmp_path):
    pytest.importorskip("sb3_contrib")
    from agents.policy import PolicyAgent, PolicyLoadError, load_model
    # garbage bytes
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"\x00\xffnot a zip at all" * 100)
    # a truncated zip: the first half of a real checkpoint (the central directory is lost)
    truncated = tmp_path / "truncated.zip"
    data = tiny_model_path.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    # a valid zip that is no SB3 checkpoint
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("hello.txt", "not a model")
    # an empty file, and a directory
    empty = tmp_path / "empty.zip"
    empty.write_bytes(b"")
    folder = tmp_path / "folder.zip"
    folder.mkdir()
    missing = tmp_path / "missing.zip"
    for path in (garbage, truncated, other, empty, folder, missing):
        for loader in (load_model, PolicyAgent):
            with pytest.raises(PolicyLoadError) as exc:
                loader(path)
            assert str(path) in str(exc.value), (path, str(exc.value))
        with pytest.raises(PolicyLoadError):
            load_model(str(path))
    assert isinstance(PolicyLoadError("x"), ValueError)     # evaluate.py catches ValueError
    # the ".zip" may be left off, as SB3 allows
    assert load_model(tiny_model_path.with_suffix("")).num_timesteps == 64


# -- statistics --------------------------------------------------------------------------------------
def test_wilson_hand_worked():
    # wilson(5, 10), z = 1.96, z^2 = 3.8416: p = 0.5, denom = 1 + 3.8416/10 = 1.38416,
    # centre = (0.5 + 3.8416/20) / 1.38416 = 0.69208 / 1.38416 = 0.5,
    # half = 1.96 x sqrt(0.25/10 + 3.8416/400) / 1.38416 = 1.96 x sqrt(0.034604) / 1.38416
    #      = 1.96 x 0.1860215 / 1.38416 = 0.2634101  ->  (0.2365899, 0.7634101)
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.2365899, abs=1e-6)
    assert hi == pytest.approx(0.7634101, abs=1e-6)
    # wilson(0, 10): p = 0, centre = 0.19208/1.38416 = 0.1387701, half = 1.96 x sqrt(0.009604)
    # / 1.38416 = 1.96 x 0.098 / 1.38416 = 0.1387701 -> lo = 0, hi = 0.38416/1.38416 = 0.2775402
    lo, hi = wilson(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775402, abs=1e-6)
    # wilson(10, 10) mirrors it: (1 - 0.2775402, 1)
    lo, hi = wilson(10, 10)
    assert lo == pytest.approx(0.7224598, abs=1e-6) and hi == pytest.approx(1.0, abs=1e-12)
    # wilson(2, 4): denom = 1 + 0.9604 = 1.9604, centre = (0.5 + 0.4802)/1.9604 = 0.5,
    # half = 1.96 x sqrt(0.0625 + 3.8416/64) / 1.9604 = 1.96 x sqrt(0.122525) / 1.9604
    #      = 1.96 x 0.3500357 / 1.9604 = 0.3499643 -> (0.1500357, 0.8499643)
    lo, hi = wilson(2, 4)
    assert lo == pytest.approx(0.1500357, abs=1e-6) and hi == pytest.approx(0.8499643, abs=1e-6)
    # no trials: the whole range
    assert wilson(0, 0) == (0.0, 1.0)
    # a wider z widens it: z = 2.576 (99%) around 5/10
    lo99, hi99 = wilson(5, 10, z=2.576)
    assert lo99 < 0.2365899 and hi99 > 0.7634101


def test_mean_ci_hand_worked():
    # [1, 2, 3, 4, 5]: mean 3, sample sd = sqrt((4+1+0+1+4)/4) = sqrt(2.5) = 1.5811388,
    # half = 1.96 x 1.5811388 / sqrt(5) = 1.96 x 0.7071068 = 1.3859293
    m, lo, hi = mean_ci([1, 2, 3, 4, 5])
    assert m == pytest.approx(3.0, rel=1e-12)
    assert lo == pytest.approx(1.6140707, abs=1e-6) and hi == pytest.approx(4.3859293, abs=1e-6)
    # [2, 0]: mean 1, sd = sqrt((1+1)/1) = sqrt 2, half = 1.96 x sqrt2 / sqrt2 = 1.96
    assert mean_ci([2, 0]) == pytest.approx((1.0, -0.96, 2.96), rel=1e-12)
    assert mean_ci([4.0]) == (4.0, 4.0, 4.0)                   # one value: no spread
    assert all(math.isnan(x) for x in mean_ci([]))


def _battle(outcome: str, kinds=("fire",), time=10.0) -> dict:
    return {"outcome": outcome, "kinds": list(kinds), "time": time}


def test_summarise_hand_worked():
    """Two made-up runs: A (sun) W L W, 2 wins, not cleared, 1 lamp; B (moon) L, 0 wins,
    cleared (the numbers need not be consistent for the arithmetic), 2 lamps."""
    runs = [
        {"wins": 2, "cleared": False, "rounds": 3, "lamps": 1, "core": "sun",
         "battles": [_battle("win", ("fire", "wind"), 10.0), _battle("loss", ("fire",), 20.0),
                     _battle("win", ("ice",), 30.0)]},
        {"wins": 0, "cleared": True, "rounds": 1, "lamps": 2, "core": "moon",
         "battles": [_battle("loss", (), 40.0)]},
    ]
    s = summarise(runs)
    assert s["episodes"] == 2 and s["battles"] == 4
    assert s["battle_win_rate"] == pytest.approx(2 / 4, rel=1e-12)
    # clustered by run: p = 2/4, residuals 2 - 1.5 and 0 - 0.5, design effect 2 x 0.5 / 16 /
    # (0.25 / 4) = 1, so Wilson on the 4 battles: wilson(2, 4)
    assert s["battle_ci"] == pytest.approx([0.1500357, 0.8499643], abs=1e-6)
    # runs whose battles go together (2, 0, 4 and 2 won of 4 each) spread more than battles
    # would: design effect 8/3, n_eff 6, Wilson(0.5, 6) (test_intervals.py's hand-worked case)
    lumpy = [{**runs[0], "battles": [_battle("win")] * w + [_battle("loss")] * (4 - w)}
             for w in (2, 0, 4, 2)]
    assert summarise(lumpy)["battle_ci"] == pytest.approx([0.1876128, 0.8123872], abs=1e-6)
    # wins [2, 0] of at most 2 (no max_wins given: the most any run had): Wilson on the mean
    # share 1/2 over 2 runs, wilson(1, 2) below, times 2: (0.1890574, 1.8109426)
    assert s["mean_wins"] == pytest.approx(1.0)
    assert s["wins_ci"] == pytest.approx([0.1890574, 1.8109426], abs=1e-6)
    assert s["clear_rate"] == pytest.approx(0.5)
    # wilson(1, 2): denom = 1 + 1.9208 = 2.9208, centre = (0.5 + 0.9604)/2.9208 = 0.5,
    # half = 1.96 x sqrt(0.125 + 3.8416/16) / 2.9208 = 1.96 x sqrt(0.3651) / 2.9208
    #      = 1.96 x 0.6042351 / 2.9208 = 1.1843008 / 2.9208 = 0.4054713
    #      -> (0.0945287, 0.9054713)
    assert s["clear_ci"] == pytest.approx([0.0945287, 0.9054713], abs=1e-6)
    assert s["rounds_survived"] == pytest.approx(2.0)      # (3 + 1) / 2
    assert s["lamps_left"] == pytest.approx(1.5)           # (1 + 2) / 2
    assert s["mean_battle_duration"] == pytest.approx(25.0)   # (10+20+30+40)/4
    assert s["by_core"] == {"moon": {"runs": 1, "battle_win_rate": 0.0, "clear_rate": 1.0},
                            "sun": {"runs": 1, "battle_win_rate": pytest.approx(2 / 3),
                                    "clear_rate": 0.0}}
    assert s["kinds"] == {"fire": 2, "ice": 1, "wind": 1}


# -- evaluation seeds vs training seeds -------------------------------------------------------------
def test_evaluation_seeds_are_disjoint_from_training_seeds():
    assert EVAL_SEED_BASE == TRAINING_SEED_LIMIT == 2**30
    # evaluation: base + seed x 1_000_003 + episode, at or above the limit, distinct per
    # (seed, episode) while episodes < 1_000_003
    seeds = {eval_run_seed(s, e) for s in range(4) for e in (0, 1, 2, 999, 1_000_002)}
    assert len(seeds) == 4 * 5 and min(seeds) == TRAINING_SEED_LIMIT
    assert eval_run_seed(0, 0) == 2**30 and eval_run_seed(2, 5) == 2**30 + 2_000_006 + 5
    # training: an env left to draw its own run seeds stays below the limit
    for cls in (RuneRunEnv, RuneDraftEnv):
        env = cls(rules=RULES, opponents=cheap_opponent)
        drawn = set()
        for seed in range(100):
            env.reset(seed=seed)
            drawn.add(env.state.seed)
            env.reset()                      # and the follow-up resets of that stream
            drawn.add(env.state.seed)
        assert len(drawn) > 150 and max(drawn) < TRAINING_SEED_LIMIT and min(drawn) >= 0


def test_evaluate_plays_the_evaluation_seeds():
    env = make_env(max_rounds=2)
    res = evaluate(ScriptedAgent(RULES), 3, seed=1, env=env)
    assert [r["run_seed"] for r in res["runs"]] == [2**30 + 1_000_003 + i for i in range(3)]
    # the run really is that seed's run: play_run on the same seed replays it exactly
    again = play_run(env, ScriptedAgent(RULES), eval_run_seed(1, 2))
    assert env.state.seed == eval_run_seed(1, 2)
    assert [b["board"] for b in again["battles"]] == [b["board"] for b in res["runs"][2]["battles"]]
    assert res["episodes"] == 3 and res["battles"] == sum(len(r["battles"]) for r in res["runs"])


def test_evaluation_seed_never_falls_among_training_seeds():
    """scripts/evaluate.py accepts any int --seed; a negative one must not move evaluation runs
    below TRAINING_SEED_LIMIT (eval_run_seed(-1, 0) = 2**30 - 1_000_003 would be a seed a
    training env can draw): it should be refused or mapped at or above the limit."""
    for seed in (-1, -5):
        try:
            s = eval_run_seed(seed, 0)
        except ValueError:
            continue
        assert s >= TRAINING_SEED_LIMIT, f"eval_run_seed({seed}, 0) = {s} is a training seed"


def test_a_state_reading_agent_drafts_opponents():
    """An opponent source made from the greedy agent (which reads the run state) drafts a board:
    the env passes it the draft state, and the battle is fought against a non-empty board."""
    from agents import GreedyAgent
    from rune_env.envs.run_env import RuneRunEnv

    env = RuneRunEnv(core="moon", opponents=GreedyAgent(seed=3))
    obs, info = env.reset(seed=1)
    ready = env.table.id("ready")
    obs, reward, term, trunc, info = env.step(ready)
    assert info["battle"]["opponent"]["runes"], "the greedy agent placed no rune"


def test_mean_wins_interval_is_never_of_zero_width():
    """15 runs of 10 wins of 10 (wins_to_clear): p = 1, n = 15: denom = 1 + 3.8416/15 =
    1.2561067, centre = (1 + 3.8416/30) / denom = 1.1280533 / 1.2561067 = 0.8980554, half =
    1.96 x sqrt(3.8416/900) / denom = 0.1280533 / 1.2561067 = 0.1019446: [0.7961107, 1] x 10 =
    [7.961107, 10] (the normal approximation said [10, 10]); 0 wins of 10 in 15 runs mirrors
    it: [0, 2.038893]. No run: no interval."""
    from agents.evaluation.runs import wilson_mean
    assert wilson_mean([10] * 15, 10) == pytest.approx((10.0, 7.961107, 10.0), abs=1e-6)
    assert wilson_mean([0] * 15, 10) == pytest.approx((0.0, 0.0, 2.038893), abs=1e-6)
    assert all(math.isnan(x) for x in wilson_mean([], 10))
    runs = [{"wins": 10, "cleared": True, "rounds": 10, "lamps": 3, "core": "sun",
             "battles": [_battle("win")] * 10}] * 15
    assert summarise(runs, max_wins=10)["wins_ci"] == pytest.approx([7.961107, 10.0], abs=1e-6)
