"""How close players come to the best response (agents/design/metagame/players.py and
exploitability.py --players): the boards are the ones the player fields in its runs, each is
scored against the best response's report ghosts as the reference engine scores it, the interval
and the gap are the arithmetic below, the same seed gives the same numbers, and bad input is one
error line."""
from __future__ import annotations

import dataclasses
import json
import math
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents import make_agent
from agents.design.metagame import ExploitSettings, split_pool
from agents.design.metagame import players as players_module
from agents.design.metagame.players import fielded_by_round, player_rounds, pool_rank
from agents.evaluation.runs import eval_run_seed, play_run
from rune_env.battle.engine import battle
from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import Board, load_rules
from rune_env.run.opponents import load_pool

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
ARCHMAGE = REPO / "configs/opponents/archmage.json.gz"


@pytest.fixture(scope="module")
def rules():
    return load_rules(None)


@pytest.fixture(scope="module")
def archmage(rules):
    return load_pool(ARCHMAGE, rules)


@pytest.mark.parametrize("agent_name", ["greedy", "agents/models/exit_thrift.pt"])
def test_the_boards_are_those_the_player_fields_in_its_runs(rules, archmage, agent_name):
    """Up to its first lost lamp an evaluate.py run at archmage fields the same boards as the
    run here (the same run seed, pool draws and observations: a policy reads its lamps, and sees
    the same ones); the run here goes on past the run's end, to the last measured round."""
    rounds = (1, 2, 3, 4)
    fielded = fielded_by_round(agent_name, rules, archmage, rounds, runs=4, seed=5)
    assert [len(fielded[r]) for r in rounds] == [4, 4, 4, 4]
    env = RuneRunEnv(rank="archmage", rules=rules, opponents=str(ARCHMAGE))
    agent = make_agent(agent_name, rules, seed=5)
    compared = 0
    for i in range(4):
        played = play_run(env, agent, eval_run_seed(5, i))["battles"]
        for b in played:
            if b["round"] in rounds:
                assert fielded[b["round"]][i] == Board.from_json(b["board"], rules)
                compared += 1
            if b["outcome"] == "loss":
                break           # the first lost lamp: from here the two runs' lamps differ
    assert compared >= 4


def test_each_board_is_scored_against_the_report_ghosts_both_seatings(rules, archmage,
                                                                      monkeypatch):
    """Two boards fielded in round 3; their win rates recomputed here with the reference engine
    against the report ghosts (weighted by count, both seatings); the mean, its interval
    (mean +- 1.96 sd / sqrt(2)) and the gap to a best response of 0.6 follow by hand."""
    settings = ExploitSettings(rounds=(3,), choose_boards=10, report_boards=12, seed=1)
    report = split_pool(archmage, rules, 3, settings)[1]
    two = [b for b in split_pool(archmage, rules, 3, settings)[0].boards[:2]]
    monkeypatch.setattr(players_module, "fielded_by_round",
                        lambda *args, **kwargs: {3: two})

    def rate(board):
        wins = 0
        for ghost, w in zip(report.boards, report.weights):
            wins += w * (battle(board, ghost, rules).winner == 0)
            wins += w * (battle(ghost, board, rules).winner == 1)
        return wins / (2 * report.total)

    x, y = rate(two[0]), rate(two[1])
    best = SimpleNamespace(round=3, measured=SimpleNamespace(win_rate=0.6))
    (row,) = player_rounds("greedy", rules, archmage, settings, runs=2, best=[best])
    assert row.round == 3 and row.boards == 2
    assert row.win_rate == pytest.approx((x + y) / 2)
    half = 1.96 * statistics.stdev([x, y]) / math.sqrt(2)
    assert row.ci == pytest.approx((max(0.0, (x + y) / 2 - half), min(1.0, (x + y) / 2 + half)))
    assert row.gap == pytest.approx(0.6 - (x + y) / 2)


def test_same_seed_same_numbers_and_a_rankless_pool_is_refused(rules, archmage):
    settings = ExploitSettings(rounds=(2, 3), choose_boards=10, report_boards=20, seed=0)
    first = [r.to_json() for r in player_rounds("greedy", rules, archmage, settings, runs=2)]
    assert first == [r.to_json() for r in player_rounds("greedy", rules, archmage, settings,
                                                        runs=2)]
    assert [r["round"] for r in first] == [2, 3] and all(r["gap"] is None for r in first)
    assert pool_rank(archmage, rules) == 5
    with pytest.raises(ValueError, match="'grandmaster' is not one of apprentice"):
        pool_rank(dataclasses.replace(archmage, rank="grandmaster"), rules)


def test_the_script_prints_the_players_beside_the_best_response(capsys):
    import exploitability
    argv = ["--pool", str(ARCHMAGE), "--quick", "--rounds", "3", "--search-budget", "100",
            "--players", "greedy", "random", "--player-runs", "2", "--json", "--no-progress"]
    assert exploitability.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    best = out["rounds"][0]["measured"]["win_rate"]
    assert [p["agent"] for p in out["players"]] == ["greedy", "random"]
    for p in out["players"]:
        (r,) = p["rounds"]
        assert p["runs"] == 2 and r["round"] == 3 and r["boards"] == 2
        assert r["best_response"] == best and r["gap"] == pytest.approx(best - r["win_rate"])
    assert exploitability.main(argv[:-2] + ["--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "best response" in text and "greedy" in text and "random" in text


@pytest.mark.parametrize("extra, message", [
    (["--players", "nobody"], "--players: unknown agent 'nobody'"),
    (["--players", "greedy", "greedy"], "--players: 'greedy' is given twice"),
    (["--players", "greedy", "--player-runs", "0"], "--player-runs must be a whole number in 1..10000"),
])
def test_the_script_refuses_bad_players_in_one_line(capsys, extra, message):
    import exploitability
    argv = ["--pool", str(ARCHMAGE), "--quick", "--no-progress", *extra]
    try:
        code = exploitability.main(argv)
    except SystemExit as exc:       # argparse's own checks
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and message in err[-1]


def test_the_players_go_to_tensorboard_beside_their_pool(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("torch.utils.tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    import exploitability
    argv = ["--pool", str(ARCHMAGE), "--quick", "--rounds", "3", "6", "--search-budget", "100",
            "--players", "greedy", "--player-runs", "2", "--json", "--no-progress",
            "--tb", str(tmp_path)]
    assert exploitability.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    ea = EventAccumulator(str(tmp_path / f"exploitability_{out['rules_hash']}_s0"),
                          size_guidance={"scalars": 0})
    ea.Reload()
    rows = out["players"][0]["rounds"]
    for tag, key in (("win_rate", "win_rate"), ("gap", "gap")):
        events = ea.Scalars(f"exploitability/archmage/player/greedy/{tag}")
        assert [e.step for e in events] == [3, 6]
        assert [e.value for e in events] == pytest.approx([r[key] for r in rows])


def test_the_chart_draws_each_player_dashed_in_its_pools_colour():
    pytest.importorskip("matplotlib")
    from agents.design.metagame.charts import exploitability_figure
    fig = exploitability_figure({"sage": {3: 0.2, 6: 0.16}, "archmage": {3: -0.1, 6: 0.0}},
                                players={"sage": {"planner": {3: -0.28, 6: -0.18},
                                                  "greedy": {3: -0.5, 6: -0.49}}})
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) >= {"sage", "archmage", "sage: planner", "sage: greedy"}
    assert lines["sage: planner"].get_linestyle() == "--"
    assert lines["sage: planner"].get_color() == lines["sage"].get_color()
    assert list(lines["sage: greedy"].get_ydata()) == [-0.5, -0.49]
    assert ax.get_ylim()[0] <= -0.55          # the lowest player is on the chart, not cut off


def test_progress_ticks_once_a_run(rules, archmage):
    ticks = []
    fielded_by_round("greedy", rules, archmage, (2, 5), runs=3, seed=0, progress=ticks.append)
    assert ticks == [1, 1, 1]
