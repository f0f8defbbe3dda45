"""RuneDuel: the duel's rules (rune_env/run/duel.py), its PettingZoo env, the single-agent view,
and smoke runs of the league and exploit scripts with tiny budgets.

Battles whose outcome is all that matters use a stub `battle_fn` (the winner's side chosen by
the test); the others are real battles of boards written out here."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
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


# -- the scripts, tiny budgets -------------------------------------------------------------------
def _script(*args, timeout=600):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


@pytest.mark.outside_mutation_check
def test_league_script_runs_resumes_and_reports(tmp_path):
    pytest.importorskip("matplotlib")          # the win-rate matrix (the train extra has it)
    cfg = ROOT / "configs" / "league" / "quick.yaml"
    p = _script(ROOT / "scripts" / "league.py", "--config", cfg, "--runs-dir", tmp_path,
                "--total-timesteps", 256, "--no-progress")
    assert p.returncode == 0, p.stderr
    run = tmp_path / "league_quick"
    state = json.loads((run / "league.json").read_text())
    assert state["snapshots"] == ["snap_256"] and "final" in state["members"]
    assert (run / "members" / "snap_256.pt").is_file() and (run / "checkpoints" / "league_256.zip").is_file()
    # resumed to 512: one more snapshot, the old ones kept
    p = _script(ROOT / "scripts" / "league.py", "--config", cfg, "--runs-dir", tmp_path,
                "--total-timesteps", 512, "--resume", "--no-progress")
    assert p.returncode == 0, p.stderr
    state = json.loads((run / "league.json").read_text())
    assert state["steps"] == 512 and "snap_512" in state["snapshots"]
    assert "resuming" in p.stderr + p.stdout
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert set(summary["against"]) == {"greedy", "apprentice_s0"}
    res = json.loads((run / "eval.json").read_text())
    assert res["against"]["greedy"]["games"] == 4 and "final" in res["ratings"]
    assert set(res["ratings_ci"]) == set(res["ratings"])
    assert all(lo <= res["ratings"][n] + 1e-6 and res["ratings"][n] <= hi + 1e-6
               for n, (lo, hi) in res["ratings_ci"].items())
    # the members' alpha-Rank, from the head-to-head scores of league.json's duels
    from agents.evaluation.alpharank import alpha_rank
    from agents.evaluation.ratings import score_matrix
    names = list(state["members"])
    scores, _ = score_matrix([tuple(r) for r in state["results"]], names)
    assert res["alpharank"] == pytest.approx(dict(zip(names, alpha_rank(scores))), abs=1e-12)
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    # resumed when finished: said, nothing trained or evaluated again (it replayed its final
    # evaluation), its result printed as before
    before = (run / "eval.json").read_text()
    p = _script(ROOT / "scripts" / "league.py", "--config", cfg, "--runs-dir", tmp_path,
                "--total-timesteps", 512, "--resume", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "is finished: its final policy has 512 steps" in p.stdout + p.stderr
    assert (run / "eval.json").read_text() == before
    assert json.loads(p.stdout.strip().splitlines()[-1])["against"] == summary["against"]


@pytest.mark.outside_mutation_check
def test_league_config_errors_name_the_key(tmp_path, script_main):
    bad = tmp_path / "bad.yaml"
    bad.write_text("members: [{name: g, agent: greedy}]\nsnapshot_evry: 5\n")
    p = _script(ROOT / "scripts" / "league.py", "--config", bad, "--runs-dir", tmp_path)
    assert p.returncode == 2 and "snapshot_evry" in p.stderr
    bad.write_text("members: [{name: g, agent: greedy}, {name: g, agent: random}]\n")
    p = script_main("league", "--config", bad, "--runs-dir", tmp_path)     # in this process
    assert p.returncode == 2 and "share a name" in p.stderr


@pytest.mark.outside_mutation_check
def test_exploit_script_reports_a_win_rate_with_its_interval(tmp_path, script_main):
    p = _script(ROOT / "scripts" / "exploit.py", "--target", "greedy", "--steps", 64,
                "--games", 4, "--runs-dir", tmp_path, "--json", "--no-progress")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert res["games"] == 4 and res["wins"] + res["losses"] + res["draws"] == 4
    lo, hi = res["win_ci"]
    assert 0.0 <= lo <= res["win_rate"] <= hi <= 1.0
    assert (tmp_path / "exploit_greedy_s0" / "exploit.json").is_file()
    assert not list(tmp_path.glob("*.partial"))
    p = script_main("exploit", "--target", "nobody", "--runs-dir", tmp_path)   # in this process
    assert p.returncode == 2 and "nobody" in p.stderr


def test_a_league_member_can_draft_a_pool(tmp_path):
    """configs/ranks.yaml may name a league member (a duel-trained .pt) as a drafter: it drafts
    one-player runs with the opponent part of its observation as zeros."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from agents import make_agent
    from agents.policy import export_policy
    from agents.design.pools import draft_ghosts
    rules = frozen_rules()
    model = MaskablePPO("MlpPolicy", DuelVsAgent(make_agent("random")), n_steps=32, batch_size=32,
                        n_epochs=1, seed=0, policy_kwargs={"net_arch": [16]}, device="cpu")
    path = tmp_path / "member.pt"
    export_policy(model, path)
    agent = make_agent(str(path), rules)
    ghosts = draft_ghosts([("member", 1000, agent)], 0, runs=1, max_round=2, rules=rules,
                          progress=False)
    assert ghosts and {g["round"] for g in ghosts} <= {1, 2}


# -- the league's parts --------------------------------------------------------------------------
def _league(**pfsp):
    from agents.train.league import LeagueConfig, League
    cfg = LeagueConfig.model_validate({"members": [{"name": "a", "agent": "greedy"},
                                                   {"name": "b", "agent": "random"}],
                                       "pfsp": pfsp})
    return League(cfg, frozen_rules())


def test_pfsp_weights_favour_the_members_the_learner_does_not_beat():
    """Scores with a prior of 4 half-won duels: a won 3 of 3 -> (3 + 2) / (3 + 4) = 5/7; b won
    0 of 3 -> 2/7. hard, power 2: (1 - 5/7)^2 = 4/49, (1 - 2/7)^2 = 25/49; plus the floor 0.02
    each, normalised: a (4/49 + 0.02) / (29/49 + 0.04) = 0.1659..., b 0.8340..."""
    league = _league(weighting="hard", power=2, prior_games=4, floor=0.02)
    for s in (1, 1, 1):
        league.report("a", s)
    for s in (0, 0, 0):
        league.report("b", s)
    assert league.score("a") == pytest.approx(5 / 7) and league.score("b") == pytest.approx(2 / 7)
    w = league.weights()
    total = 29 / 49 + 0.04
    assert w["a"] == pytest.approx((4 / 49 + 0.02) / total)
    assert w["b"] == pytest.approx((25 / 49 + 0.02) / total)
    # "even": p (1 - p) is the same for 5/7 and 2/7 -> equal weights
    even = _league(weighting="even")
    even.scores, even.cfg.pfsp.window = league.scores, 200
    assert even.weights()["a"] == pytest.approx(even.weights()["b"])
    # the window keeps only the last duels: window 2 -> a's [1, 1] then [1, 0]
    short = _league(window=2, prior_games=0)
    for s in (1, 1, 0):
        short.report("a", s)
    assert short.score("a") == 0.5


def test_league_state_round_trips_and_rates_its_members(tmp_path):
    league = _league()
    league.add_snapshot("snap_10", "x.pt")
    league.results = [("snap_10", "a", 1.0)] * 6 + [("snap_10", "a", 0.0)] * 2 + [("a", "b", 1.0)] * 8
    league.report("a", 1.0)
    league.add_final("final.pt")
    league.results.append(("final", "a", 1.0))
    data = json.loads(json.dumps(league.to_json(10)))
    again = _league()
    assert again.load_json(data, tmp_path) == 10
    # a snapshot is the run's own file, wherever league.json said it was ("x.pt")
    assert again.members["snap_10"] == str(tmp_path / "members" / "snap_10.pt")
    # a resumed league drops the old final member: it is rated again at the new end
    assert "final" not in again.members and again.snapshots == ["snap_10"]
    assert len(again.results) == 16 and list(again.scores["a"]) == [1.0]
    r = again.ratings()
    assert r["snap_10"] > r["a"] > r["b"]
    names, m = again.matrix()
    i, j = names.index("snap_10"), names.index("a")
    assert m[i, j] == pytest.approx(6 / 8) and m[j, i] == pytest.approx(2 / 8)
    assert np.isnan(m[names.index("b"), i])                   # never played


def test_league_win_matrix_is_drawn_by_matplotlib():
    # the picture the league logs to TensorBoard: RGB, its cells coloured by score (blue above
    # 1/2, red below, grey where a pair never played)
    pytest.importorskip("matplotlib")
    from agents.evaluation.charts import win_matrix_figure
    from agents.evaluation.duels import matrix_image
    names = ["greedy", "snap_10", "final"]
    m = np.array([[0.5, 0.0, np.nan], [1.0, 0.5, 0.25], [np.nan, 0.75, 0.5]])
    img = matrix_image(names, m)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 100 and img.shape[1] > 100
    colours = {tuple(int(c) for c in px) for px in img.reshape(-1, 3)[::7]}
    assert any(b > r + 60 for r, _, b in colours) and any(r > b + 60 for r, _, b in colours)
    ax = win_matrix_figure(names, m).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["0 greedy", "1 snap_10", "2 final"]
    cells = sorted(t.get_text() for t in ax.texts)
    assert cells == sorted([".50", ".00", "1.00", ".50", ".25", ".75", ".50"])
    # 0.996 rounds to 1.00: it was drawn ".00", a near-certain win shown as a total loss
    near = win_matrix_figure(["a", "b"], np.array([[np.nan, 0.996], [0.004, np.nan]])).axes[0]
    assert sorted(t.get_text() for t in near.texts) == [".00", "1.00"]


@pytest.mark.outside_mutation_check
def test_league_without_matplotlib_stops_before_training(tmp_path):
    # the check comes after the config is read and the members load (a bad config or member is
    # still named) and before any training
    runner = ("import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
              "runpy.run_path(sys.argv[0], run_name='__main__')")
    p = subprocess.run([sys.executable, "-c", runner, str(ROOT / "scripts" / "league.py"),
                        "--config", str(ROOT / "configs" / "league" / "quick.yaml"),
                        "--runs-dir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "matplotlib" in p.stderr and "rune-env[charts]" in p.stderr
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".zip", ".pt")]
    assert not list(tmp_path.rglob("events.out.tfevents.*"))


def test_warm_start_copies_the_run_policy_so_the_learner_acts_as_it():
    """The learner built from apprentice seed 0 picks, deterministically, the same action as
    apprentice seed 0 reading its own part of the observation, in every step of a duel."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from agents import make_agent
    from agents.train.league import warm_start
    from agents.policy import PolicyAgent
    env = DuelVsAgent(make_agent("greedy"))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0,
                        policy_kwargs={"net_arch": [256, 256]}, device="cpu")
    warm_start(model, MODEL, env.duel_env.encoder.own_size)
    learner, source = PolicyAgent(model), PolicyAgent(str(MODEL))
    obs, info = env.reset(seed=3)
    for _ in range(60):
        mask = env.action_masks()
        a = learner.act(obs, mask)
        assert a == source.act(obs[:source.observation_size], mask)
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
