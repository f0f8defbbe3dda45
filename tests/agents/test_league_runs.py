"""The self-play league and the best response in RuneDuel (agents/train/league.py,
agents/train/exploit.py): smoke runs of their scripts with tiny budgets, PFSP weights, the
league's state and its win-rate matrix, and the warm start (moved here from
tests/envs/test_duel.py, which keeps the duel itself)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import frozen_rules

pytest.importorskip("pettingzoo")
from rune_env.duel import AGENTS, DuelVsAgent, RuneDuelEnv  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "agents" / "models" / "apprentice_s0.pt"


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
