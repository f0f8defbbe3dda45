"""RuneDuel: the duel's rules (rune_env/run/duel.py), its PettingZoo env and the single-agent view
(the league and the best response: tests/agents/test_league_runs.py).

Battles whose outcome is all that matters use a stub `battle_fn` (the winner's side chosen by
the test); the others are real battles of boards written out here."""
from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import frozen_rules

from rune_env.battle.result import BattleResult
from rune_env.run.actions import action_table
from rune_env.run.duel import duel_mask, new_duel, step_duel, wait_action
from rune_env.run.loop import IllegalAction, player_seat

pettingzoo = pytest.importorskip("pettingzoo")
from pettingzoo.test import (api_test, parallel_api_test, parallel_seed_test,  # noqa: E402
                              render_test, seed_test, state_test)

from rune_env import duel as rune_duel  # noqa: E402
from rune_env.duel import AGENTS, DuelVsAgent, RuneDuelEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "agents" / "models" / "apprentice_s0.pt"


def ready_id(rules) -> int:
    return action_table(rules).groups["ready"][0]


def stub(winner_player: int | None, duel):
    """A battle_fn making `winner_player` (0 or 1; None: a draw) win this round's battle."""
    seat0 = player_seat(duel.round)
    side = None if winner_player is None else (seat0 if winner_player == 0 else 1 - seat0)

    def fn(b0, b1, rules, **kw):
        return BattleResult(winner=side, time=60.0, hp=(1.0, 1.0), max_hp=(1.0, 1.0), casts=(0, 0))
    return fn


def take_choices(duel, rules):
    """Each pending choice (a reward, a relic) taken as its first option; a player with none
    does nothing meanwhile (None: a no-op)."""
    table = action_table(rules)
    while any(p.pending is not None for p in duel.players):
        step_duel(duel, [None if p.pending is None else table.groups[p.pending.group][0]
                         for p in duel.players])


def both_ready(duel, winner_player, rules):
    """Both players take their choices and ready; the stub decides the battle."""
    take_choices(duel, rules)
    r = ready_id(rules)
    step_duel(duel, [r, r], stub(winner_player, duel))


# -- the rules of a duel -------------------------------------------------------------------------
def test_each_player_has_its_own_shop_and_the_same_bosses():
    rules = frozen_rules()
    d = new_duel(5, rules, core="tree")
    p0, p1 = d.players
    assert p0.boss_schedule == p1.boss_schedule and p0.boss_schedule   # rounds 5, 10, ... shared
    assert set(p0.boss_schedule) == set(range(5, rules.spec.run.round_cap + 1, 5))
    assert p0.seed != p1.seed
    # two shops of 5 offers from 13 kinds: the chance they match by accident is 13^-5
    assert p0.shop_runes != p1.shop_runes
    # a one-player run of the same seed is another schedule's draw: the duel's is its own
    assert new_duel(5, rules, core="tree").players[0].shop_runes == p0.shop_runes


def test_reward_draws_are_shared_between_the_players():
    """Rewards come every 3rd round from round 4 (D-42). Both players reach round 4 with the
    same state apart from their shops: they are offered the same options, and the options do
    not come from the players' own generators (which differ)."""
    rules = frozen_rules()
    d = new_duel(11, rules, core="tree")
    for _ in range(3):
        both_ready(d, None, rules)          # three drawn battles: rounds 1, 2, 3
    p0, p1 = d.players
    assert p0.round == p1.round == 4
    assert p0.pending is not None and p0.pending.kind == "reward"
    assert p0.pending.options == p1.pending.options
    assert p0.rng.bit_generator.state != p1.rng.bit_generator.state


def test_a_waiting_player_may_only_wait_and_the_battle_waits_for_both():
    rules = frozen_rules()
    d = new_duel(2, rules, core="tree")
    r, w = ready_id(rules), wait_action(rules)
    with pytest.raises(IllegalAction, match="wait is legal only once"):
        step_duel(d, [w, r])
    step = step_duel(d, [r, action_table(rules).id("reroll")])
    assert step.battle is None and d.waiting == [True, False]
    mask = duel_mask(d, 0)
    assert mask.sum() == 1 and mask[w]                      # only wait
    with pytest.raises(IllegalAction, match="player_0.*only wait is legal"):
        step_duel(d, [r, r])
    step = step_duel(d, [w, r], stub(0, d))
    assert step.battle is not None and d.waiting == [False, False]
    assert d.round == 2


def test_seats_alternate_by_round_and_the_loser_loses_a_lamp():
    """player_0 is side 0 in odd rounds, side 1 in even ones (player_seat), player_1 the other
    side. Round 1: player_0 wins -> player_1 3 -> 2 lamps; round 2: player_1 wins -> player_0
    3 -> 2."""
    rules = frozen_rules()
    d = new_duel(3, rules, core="tree")
    both_ready(d, 0, rules)
    (s0, s1), = d.battles
    assert (s0.seat, s1.seat) == (0, 1) and (s0.outcome, s1.outcome) == ("win", "loss")
    assert [p.lamps for p in d.players] == [3, 2]
    both_ready(d, 1, rules)
    s0, s1 = d.battles[1]
    assert (s0.seat, s1.seat) == (1, 0) and (s0.outcome, s1.outcome) == ("loss", "win")
    assert [p.lamps for p in d.players] == [2, 2]
    assert [p.wins for p in d.players] == [1, 1]


def test_the_duel_ends_when_a_player_has_no_lamps():
    """Three losses in a row for player_1 (3 lamps at apprentice): over after round 3, winner
    player_0, even though wins_to_clear (10) is far away; nobody clears a duel."""
    rules = frozen_rules()
    d = new_duel(4, rules, core="tree")
    for _ in range(3):
        assert not d.over
        both_ready(d, 0, rules)
    assert d.over and d.winner == 0 and all(p.over for p in d.players)
    assert [p.lamps for p in d.players] == [3, 0] and not any(p.cleared for p in d.players)
    assert duel_mask(d, 0).sum() == 1 and duel_mask(d, 0)[wait_action(rules)]


def test_at_the_round_cap_more_lamps_then_more_wins_decide():
    rules = frozen_rules()
    cap = rules.spec.run.round_cap
    # drawn battles throughout: equal lamps and wins -> a drawn duel, after exactly `cap` rounds
    d = new_duel(6, rules, core="tree")
    while not d.over:
        both_ready(d, None, rules)
    assert len(d.battles) == cap and d.winner is None
    # one win each way then draws: lamps 2-2, wins 1-1 -> drawn; one more win for player_1 at
    # the last round: lamps 2-1? no: its win costs player_0 a lamp -> lamps 1-2: player_1 wins
    d = new_duel(6, rules, core="tree")
    both_ready(d, 0, rules)
    both_ready(d, 1, rules)
    while d.round < cap:
        both_ready(d, None, rules)
    both_ready(d, 1, rules)
    assert d.over and [p.lamps for p in d.players] == [1, 2] and d.winner == 1


def test_boss_rounds_are_mirror_matches_and_the_winner_takes_a_relic():
    """Round 5 is a boss round: both boards carry its boss rules; the winner then chooses a
    relic (a boss win), the loser does not."""
    rules = frozen_rules()
    d = new_duel(8, rules, core="tree")
    seen = []

    def fn(b0, b1, rules_, **kw):
        seen.append((b0.boss_rules, b1.boss_rules))
        return stub(0, d)(b0, b1, rules_)
    for _ in range(4):
        both_ready(d, None, rules)
    assert d.round == 5
    r = ready_id(rules)
    step_duel(d, [r, r], fn)
    boss = tuple(d.players[0].boss_schedule[5])
    assert seen == [(boss, boss)] and d.battles[-1][0].boss_rules == boss
    p0, p1 = d.players
    assert p0.pending is not None and p0.pending.kind == "relic"
    assert p1.pending is None or p1.pending.kind != "relic"


def test_the_rank_sets_both_players_lamps_but_adds_no_opponent_runes():
    """archmage: 2 lamps each. journeyman adds extra runes to drafted opponents
    (field_opponent); a duel fields no drafted opponent, so each board fights as it is."""
    rules = frozen_rules()
    assert [p.lamps for p in new_duel(1, rules, rank="archmage", core="tree").players] == [2, 2]
    d = new_duel(1, rules, rank="journeyman", core="tree")
    boards = []

    def fn(b0, b1, rules_, **kw):
        boards.append((dict(b0.runes), dict(b1.runes)))
        return stub(None, d)(b0, b1, rules_)
    r = ready_id(rules)
    step_duel(d, [r, r], fn)
    assert boards == [({}, {})]


def test_the_same_seed_and_actions_give_the_same_duel():
    rules = frozen_rules()

    def play(seed):
        d = new_duel(seed, rules)
        rng = np.random.default_rng(0)
        trace = []
        while not d.over:
            acts = [int(rng.choice(np.flatnonzero(duel_mask(d, i)))) for i in (0, 1)]
            st = step_duel(d, acts)
            if st.battle:
                trace.append(json.dumps([b.to_json() for b in st.battle], sort_keys=True))
        return hashlib.sha256("".join(trace).encode()).hexdigest(), d.winner
    assert play(21) == play(21)
    assert play(21) != play(22)


# -- the PettingZoo env --------------------------------------------------------------------------
def test_pettingzoo_api_tests_pass():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the API test's own advice (Dict spaces) and options
        parallel_api_test(rune_duel.parallel_env(), num_cycles=500)
        api_test(rune_duel.env(), num_cycles=500)
        # the seed tests sample actions without masks: illegal ones are penalised no-ops
        parallel_seed_test(lambda: rune_duel.parallel_env(illegal_action="penalty"), num_cycles=200)
        seed_test(lambda: rune_duel.env(illegal_action="penalty"), num_cycles=200)
        # the global state (state_space, state()) and the render modes, as PettingZoo tests them
        # (state_test samples without masks too)
        state_test(rune_duel.env(illegal_action="penalty"),
                   rune_duel.parallel_env(illegal_action="penalty"))
        render_test(lambda render_mode=None: rune_duel.env(render_mode=render_mode,
                                                          illegal_action="penalty"))


def test_the_duel_has_a_state_space_prints_in_human_mode_and_frees_dropped_envs(capsys):
    """state() is both players' observations (2 x 1780 = 3560 with the defaults, docs/ENVS.md)
    inside state_space, and a clear error before reset (it was AttributeError on None). "human"
    prints what "ansi" returns. A dropped env is freed: the spaces were an lru_cache on the
    class, which kept every env that was ever asked for one (28 MB a hundred envs)."""
    import gc
    import weakref
    env = RuneDuelEnv(core="tree", render_mode="human")
    with pytest.raises(RuntimeError, match="before reset"):
        env.state()
    env.reset(seed=0)
    state = env.state()
    assert state.shape == env.state_space.shape == (2 * env.encoder.size,) == (3560,)
    assert env.state_space.contains(state)
    assert env.render() is None
    printed = capsys.readouterr().out
    ansi = RuneDuelEnv(core="tree", render_mode="ansi")
    ansi.reset(seed=0)
    assert printed == ansi.render() + "\n" and "== player_0" in printed
    assert env.observation_space("player_0") is env.observation_space("player_0")
    assert env.observation_space("player_0") is not env.observation_space("player_1")
    assert env.action_space("player_1") is env.action_space("player_1")
    ref = weakref.ref(env)
    del env
    gc.collect()
    assert ref() is None


def test_duel_vs_agent_takes_only_a_whole_seat():
    """learner_seat True and 1.0 were seat 1 (`True in ("random", 0, 1)` holds)."""
    for bad in (True, False, 1.0, "1", None):
        with pytest.raises(ValueError, match="learner_seat must be 'random', 0 or 1"):
            DuelVsAgent(make_agent_greedy(), learner_seat=bad)
    env = DuelVsAgent(make_agent_greedy(), learner_seat=np.int64(1))
    env.reset(seed=0, options={"learner_seat": 0})
    with pytest.raises(ValueError, match="reset option 'learner_seat'"):
        env.reset(seed=0, options={"learner_seat": True})


def _episode(env, seed, action_seed=0):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    digest = hashlib.sha256()
    total = dict.fromkeys(AGENTS, 0.0)
    while env.agents:
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rew, term, trunc, info = env.step(acts)
        assert abs(sum(rew.values())) < 1e-12          # zero-sum, every step
        for a in AGENTS:
            digest.update(obs[a]["observation"].tobytes())
            total[a] += rew[a]
    return digest.hexdigest(), total, info


def test_env_episodes_are_reproducible_and_zero_sum():
    env = rune_duel.parallel_env(battle_reward=0.2)
    h1, total, info = _episode(env, 3)
    h2, total2, _ = _episode(rune_duel.parallel_env(battle_reward=0.2), 3)
    assert h1 == h2 and total == total2
    assert _episode(env, 4)[0] != h1
    winner = info["player_0"]["winner"]
    if winner is not None:
        # the end's +1 / -1 outweighs shaping only in sign when battles went the other way;
        # the sum of each side's end reward is exactly +-1 of the total minus its battle terms
        battles = env.duel.battles
        shaped = sum({"win": 0.2, "loss": -0.2, "draw": 0.0}[b[0].outcome] for b in battles)
        end = 1.0 if winner == "player_0" else -1.0
        assert total["player_0"] == pytest.approx(shaped + end)


def test_the_observation_shows_the_opponents_last_battle_board_not_its_preparation():
    rules = frozen_rules()
    env = RuneDuelEnv(rules=rules, core="tree")
    obs, _ = env.reset(options={"duel_seed": 9})
    enc = env.encoder
    opp = enc.slices["opp_board"]
    assert not obs["player_0"]["observation"][opp].any()               # no battle yet
    assert obs["player_0"]["observation"][enc.slices["opp_scalars"]][1] == 1.0   # 3 / 3 lamps
    # player_1 buys and places a rune, then both fight
    table = env.table
    buy = table.id("buy_rune", 0)
    obs, *_ = env.step({"player_0": ready_id(rules), "player_1": buy})
    place = table.id("place", 0, 0)
    obs, *_ = env.step({"player_0": env.wait, "player_1": place})
    assert not obs["player_0"]["observation"][opp].any()               # still not fought
    obs, *_ = env.step({"player_0": env.wait, "player_1": ready_id(rules)})
    after = obs["player_0"]["observation"][opp].copy()
    assert after.any()
    # cell 0's kind one-hot is that rune's kind
    kind = env.duel.last_boards[1].runes[0][0]
    from rune_env.rules.config import KINDS
    width = enc.shapes["opp_board"][1]
    assert after[KINDS.index(kind)] == 1.0 and after[:width].sum() > 1.0
    # player_1 sells its hand / rebuilds: player_0's view of it does not move until the battle
    obs, *_ = env.step({"player_0": table.id("reroll"), "player_1": table.id("pick_up", 0)})
    assert np.array_equal(obs["player_0"]["observation"][opp], after)
    assert np.array_equal(obs["player_0"]["observation"][enc.slices["own"]],
                          env.encoder.run_encoder.observe(env.duel.players[0])[0])


def test_bad_arguments_and_actions_are_named():
    with pytest.raises(ValueError, match="battle_reward"):
        RuneDuelEnv(battle_reward=-1)
    with pytest.raises(ValueError, match="rank"):
        RuneDuelEnv(rank="wizard")
    env = RuneDuelEnv(core="tree")
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0, "player_1": 0})
    env.reset(seed=0)
    with pytest.raises(IllegalAction, match="player_1: illegal action 9999"):
        env.step({"player_0": env.wait - 1, "player_1": 9999})
    with pytest.raises(ValueError, match="missing"):
        env.step({"player_0": 0})
    with pytest.raises(KeyError, match="unknown agent"):
        env.observation_space("player_2")


def test_the_duel_refuses_unknown_agents_and_actions_that_are_not_integers():
    env, twin = RuneDuelEnv(core="tree"), RuneDuelEnv(core="tree")
    env.reset(seed=0)
    twin.reset(seed=0)
    w = env.wait - 1            # a legal action for both at the start (the test above's)
    # an unknown key is named, also beside both real ones (it was ignored before)
    with pytest.raises(ValueError, match=r"unknown agents \['player_2'\]"):
        env.step({"player_0": w, "player_1": w, "player_2": 0})
    with pytest.raises(ValueError, match=r"unknown agents \['Player_1'\]"):
        env.step({"player_0": w, "Player_1": w})          # a typo: named, not "missing"
    with pytest.raises(TypeError, match="dict of actions"):
        env.step([w, w])
    for bad, type_name in ((w + 0.5, "float"), (str(w), "str"), (True, "bool"),
                           (np.array([w]), "ndarray"), (float(w), "float")):
        with pytest.raises(TypeError, match=f"player_1's action must be an integer.*of type {type_name}$"):
            env.step({"player_0": w, "player_1": bad})
    # nothing was played; numpy integers and 0-d integer arrays are actions
    got = env.step({"player_0": np.int64(w), "player_1": np.array(w)})
    want = twin.step({"player_0": w, "player_1": w})
    for a in AGENTS:
        assert np.array_equal(got[0][a]["observation"], want[0][a]["observation"])
    assert got[1:4] == want[1:4]
    single = DuelVsAgent(make_agent_greedy())
    single.reset(seed=0)
    with pytest.raises(TypeError, match="action must be an integer.*of type float"):
        single.step(1.5)


def make_agent_greedy():
    from agents import make_agent
    return make_agent("greedy")


# -- the single-agent view -----------------------------------------------------------------------
def test_duel_vs_agent_plays_whole_duels_reproducibly():
    from agents import make_agent

    def play(seed):
        env = DuelVsAgent(make_agent("greedy"), battle_reward=0.1)
        obs, info = env.reset(seed=seed)
        assert obs.shape == env.observation_space.shape and env.action_masks().shape == (env.n_actions,)
        rng = np.random.default_rng(1)
        total, steps = 0.0, 0
        while True:
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            total += r
            steps += 1
            if term or trunc:
                return total, steps, info["score"], info["learner"]
    assert play(0) == play(0)
    total, steps, score, learner = play(0)
    assert score in (0.0, 0.5, 1.0) and learner in AGENTS
    assert {play(s)[3] for s in range(6)} == set(AGENTS)       # the learner's seat varies


def test_maskable_ppo_trains_on_the_single_agent_view():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from agents import make_agent
    env = DuelVsAgent({"greedy": make_agent("greedy"), "random": make_agent("random")})
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    model.learn(128)
    assert model.num_timesteps >= 128


def test_a_run_policy_acts_in_a_duel_on_its_own_part_and_a_duel_policy_in_a_run():
    """A RuneRun-v0 policy reads observation[:own_size]; a duel-trained one, given a run's
    observation, reads it with the opponent part as zeros (no battle seen)."""
    pytest.importorskip("torch")
    from agents.policy import PolicyAgent
    from rune_env.duel.single import opponent_action
    agent = PolicyAgent(str(MODEL))
    env = RuneDuelEnv()
    obs, _ = env.reset(seed=0)
    assert agent.observation_size == env.encoder.own_size
    a = opponent_action(agent, obs["player_0"], len(env.table))
    assert obs["player_0"]["action_mask"][a] == 1
    from sb3_contrib import MaskablePPO
    single = DuelVsAgent(agent)
    model = MaskablePPO("MlpPolicy", single, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    duel_agent = PolicyAgent(model)
    assert duel_agent.observation_size == env.encoder.size
    run_obs = obs["player_0"]["observation"][:env.encoder.own_size]
    mask = obs["player_0"]["action_mask"][:len(env.table)].astype(bool)
    assert mask[duel_agent.act(run_obs, mask)]
