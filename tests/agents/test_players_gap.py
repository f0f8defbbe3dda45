"""How close players come to the best response (agents/design/metagame/players.py and
exploitability.py --players): the boards are the ones the player fields in its runs, each is
scored against the best response's report ghosts as the reference engine scores it, the interval
and the gap are the arithmetic below, the same seed gives the same numbers, and bad input is one
error line. With --holdings, what a run held at each measured preparation's start is kept, and
the best boards found from it with the shop on display and with every kind on offer are made only
of what that allowed, are measured as the player's own boards, and are the same for the same
seed."""
from __future__ import annotations

import dataclasses
import json
import statistics
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents import make_agent
from agents.design.metagame import ExploitSettings, split_pool
from agents.design.metagame import players as players_module
from agents.design.metagame.oracle import PayoffEvaluator
from agents.evaluation.runs import wilson_share
from agents.design.metagame.players import (fielded_by_round, holdings_boards, holdings_rates,
                                            player_rounds, pool_rank)
from agents.search.assets import Assets
from agents.search.boards import board_cost
from agents.evaluation.runs import eval_run_seed, play_run
from rune_env.battle.engine import battle
from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import Board, load_rules
from rune_env.run.loop import new_run
from rune_env.run.opponents import load_pool
from rune_env.run.ranks import rank_effects

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
    (Wilson's on the boards' spread) and the gap to a best response of 0.6 follow by hand."""
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
    # Wilson's on the mean share over n_eff = 2 m (1 - m) / var boards, never fewer than 2
    # (wilson_mean, worked by hand in test_intervals.py)
    m, var = (x + y) / 2, statistics.variance([x, y])
    n_eff = 2 * m * (1 - m) / var if 0 < var < m * (1 - m) else 2
    assert row.ci == pytest.approx(wilson_share(m, n_eff), abs=1e-12)
    assert row.ci[0] < m < row.ci[1]
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
    (["--players", "greedy", "--gap-chart", "gap.png"], "--gap-chart draws the --holdings' parts"),
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
            "--tb", str(tmp_path), "--holdings", "--planner-boards", "30",
            "--gap-chart", str(tmp_path / "gap.png")]
    assert exploitability.main(argv) == 0
    assert (tmp_path / "gap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = json.loads(capsys.readouterr().out)
    ea = EventAccumulator(str(tmp_path / f"exploitability_{out['rules_hash']}_s0"),
                          size_guidance={"scalars": 0})
    ea.Reload()
    rows = out["players"][0]["rounds"]
    for tag, key in (("win_rate", "win_rate"), ("gap", "gap")):
        events = ea.Scalars(f"exploitability/archmage/player/greedy/{tag}")
        assert [e.step for e in events] == [3, 6]
        assert [e.value for e in events] == pytest.approx([r[key] for r in rows])
    for part in ("display", "every_kind"):
        events = ea.Scalars(f"exploitability/archmage/player/greedy/holdings_{part}")
        assert [e.step for e in events] == [3, 6]
        assert [e.value for e in events] == pytest.approx([r["holdings"][part]["win_rate"]
                                                           for r in rows])
    assert {"exploitability/chart", "exploitability/gap"} <= set(ea.Tags()["images"])


def test_the_gap_chart_draws_each_players_four_levels_and_the_parts_between():
    """A panel per (pool, player) with holdings; its lines are the player's boards, the two
    holdings boards and the best response by round (the figures of RESULTS' archmage planner,
    rounds 1 / 2: 16 / 14% its boards, 17 / 13% display, 63 / 19% every kind, 63 / 62% best
    response). Round 2's play part is negative (13% < 14%): the lines show it, no band does."""
    pytest.importorskip("matplotlib")
    from agents.design.metagame.charts import GAP_PARTS, gap_figure
    rows = [{"round": 2, "win_rate": 0.14, "best_response": 0.62,
             "holdings": {"display": {"win_rate": 0.13}, "every_kind": {"win_rate": 0.19}}},
            {"round": 1, "win_rate": 0.16, "best_response": 0.63,
             "holdings": {"display": {"win_rate": 0.17}, "every_kind": {"win_rate": 0.63}}},
            {"round": 3, "win_rate": 0.2, "best_response": 0.7}]        # no holdings: left out
    fig = gap_figure([("archmage", "planner", rows), ("sage", "greedy", rows[:2])])
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["archmage: planner", "sage: greedy"]
    lines = {line.get_label(): line for line in panels[0].get_lines()}
    assert list(lines["its boards"].get_xdata()) == [1, 2]
    assert list(lines["its boards"].get_ydata()) == [0.16, 0.14]
    assert list(lines["its holdings, display"].get_ydata()) == [0.17, 0.13]
    assert list(lines["its holdings, every kind"].get_ydata()) == [0.63, 0.19]
    assert list(lines["best response"].get_ydata()) == [0.63, 0.62]
    # every line looks different in the legend (the two holdings lines were both black dashes
    # with dots)
    looks = {(ln.get_linestyle(), ln.get_marker(), ln.get_color()) for ln in lines.values()}
    assert len(looks) == len(lines) == 4
    bands = [c.get_label() for c in panels[0].collections]
    assert bands == [label for _, label, _ in GAP_PARTS]
    # the play band (own 0.16 -> display 0.17 in round 1, 0.14 -> 0.13 in round 2) is filled
    # only up to where the lines cross: no vertex of it lies at round 2
    play = panels[0].collections[0]
    xs = [x for path in play.get_paths() for x, _ in path.vertices]
    assert min(xs) == 1 and max(xs) < 2


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


# -- where the gap comes from: --holdings --------------------------------------------------------
SMALL = ExploitSettings(rounds=(1, 2), choose_boards=10, report_boards=12, seed=3,
                        planner_boards=40)


def units(runes, rules) -> Counter:
    """Grade-I rune units by kind (a grade-g rune is merge_count^(g-1) of them)."""
    m = rules.spec.grades.merge_count
    out: Counter = Counter()
    for kind, grade in runes:
        out[kind] += m ** (grade - 1)
    return out


def test_the_starts_are_what_each_run_held_before_its_preparation(rules, archmage):
    """Round 1 starts from a fresh run: the start mana (10), nothing owned, one view of the
    shop (5 rune offers). Round 2 starts with round 1's board on it (the board stays after the
    battle) and at least the round's income in mana: archmage's income is 10 - 1 (sorcerer's
    income delta, which archmage includes) = 9, added to what round 1 left."""
    starts: dict = {}
    fielded = fielded_by_round("greedy", rules, archmage, (1, 2), runs=3, seed=4, starts=starts)
    run = rules.spec.run
    income = run.income + rank_effects(rules, "archmage").income_delta
    assert income == 9
    assert [len(starts[r]) for r in (1, 2)] == [3, 3]
    for first, second, board in zip(starts[1], starts[2], fielded[1]):
        assert first.round == 1 and first.mana == run.start_mana == 10
        assert first.board == {} and first.hand == ()
        assert len(first.shop_runes) == run.shop_rune_offers == 5
        assert second.round == 2 and second.board == dict(board.runes)
        assert second.mana >= income
    # without `starts` nothing is kept and the boards are the same
    assert fielded_by_round("greedy", rules, archmage, (1, 2), runs=3, seed=4) == fielded


def test_the_boards_are_made_of_what_the_holdings_allowed(rules, archmage):
    """A fresh archmage run in round 2 with a fire rune on its board, 6 mana and the shop
    showing wind, wind, ice, node, amplify (its artifact offers emptied). The display board may
    hold only fire and what the shop shows (at most 2 wind, 1 ice, 1 node, 1 amplify) and cost at
    most 2 (the fire's price) + 6; the every-kind board any kind, within the same 8: kept, the
    fire is 2 of it; sold, it returns 1 (a unit), so the board costs at most 6 + 1 = 7."""
    state = new_run(0, rules, rank="archmage", core="moon")
    state.round, state.mana = 2, 6
    state.board = {0: ("fire", 1)}
    state.shop_runes = ["wind", "wind", "ice", "node", "amplify"]
    state.shop_artifacts = [None] * len(state.shop_artifacts)
    assets = Assets.of(state)
    choose, _ = split_pool(archmage, rules, 2, SMALL)
    found = holdings_boards(rules, [assets], choose, 2, SMALL)
    (display,), (free,) = found["display"], found["every_kind"]
    allowed = Counter({"fire": 1, "wind": 2, "ice": 1, "node": 1, "amplify": 1})
    have = units([*display.runes.values(), *display.hand], rules)
    assert have and not have - allowed, have
    assert not display.artifacts
    assert board_cost(display, rules) <= 2 + 6
    assert board_cost(free, rules) <= 2 + 6
    assert free.core == display.core == "moon"
    # the same seed gives the same boards
    again = holdings_boards(rules, [assets], choose, 2, SMALL)
    assert again == found


def test_nothing_held_and_no_mana_fields_an_empty_board_that_wins_nothing(rules, archmage):
    """With an empty board and hand, no mana and nothing on display, no search can field a rune:
    both boards are empty, and an empty board deals no damage, so it wins none of its battles
    against the report ghosts (a loss, or a draw at the time limit): 0.0. Two boards that agree
    tell little: the interval is Wilson's on 2 boards, [0, z^2 / (2 + z^2)] = [0, 3.8416 /
    5.8416] = [0, 0.6576], not [0, 0]."""
    state = new_run(0, rules, rank="archmage", core="sun")
    state.round, state.mana = 1, 0
    state.shop_runes = [None] * len(state.shop_runes)
    state.shop_artifacts = [None] * len(state.shop_artifacts)
    empty = Assets.of(state)
    choose, report = split_pool(archmage, rules, 1, SMALL)
    found = holdings_boards(rules, [empty, empty], choose, 1, SMALL)
    assert all(not b.runes and not b.hand for b in found["display"])
    held = holdings_rates(rules, [empty, empty], choose, report, 1, SMALL,
                          PayoffEvaluator(rules, 1))
    assert held.display == pytest.approx((0.0, 0.0, 0.6576), abs=1e-4)
    # every kind on offer, but no mana to buy any: the same
    assert held.every_kind == held.display


def test_player_rounds_measure_the_holdings_only_when_asked(rules, archmage):
    settings = replace(SMALL, rounds=(2,))
    (plain,) = player_rounds("greedy", rules, archmage, settings, runs=2)
    (held,) = player_rounds("greedy", rules, archmage, settings, runs=2, holdings=True)
    assert plain.holdings is None and "holdings" not in plain.to_json()
    # the player's own figures do not change with the holdings measured beside them
    assert (held.win_rate, held.ci) == (plain.win_rate, plain.ci)
    row = held.to_json()["holdings"]
    for part in ("display", "every_kind"):
        lo, hi = row[part]["ci"]
        assert 0.0 <= lo <= row[part]["win_rate"] <= hi <= 1.0
    ticks = []
    (again,) = player_rounds("greedy", rules, archmage, settings, runs=2, holdings=True,
                             progress=ticks.append)
    assert again.to_json() == held.to_json()
    # a tick for each of the 2 runs, then one for each of their 2 round-2 starts searched
    assert ticks == [1, 1, 1, 1]


def test_the_script_prints_and_writes_the_holdings(capsys):
    import exploitability
    argv = ["--pool", str(ARCHMAGE), "--quick", "--rounds", "2", "--search-budget", "100",
            "--planner-boards", "30", "--players", "greedy", "--player-runs", "2",
            "--holdings", "--no-progress"]
    assert exploitability.main([*argv, "--json"]) == 0
    (player,) = json.loads(capsys.readouterr().out)["players"]
    assert set(player["rounds"][0]["holdings"]) == {"display", "every_kind"}
    assert exploitability.main(argv) == 0
    text = capsys.readouterr().out
    assert "  its holdings, display" in text and "  its holdings, every kind" in text


def test_holdings_without_players_is_one_error_line(capsys):
    import exploitability
    assert exploitability.main(["--pool", str(ARCHMAGE), "--quick", "--holdings",
                                "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --holdings measures the --players' holdings: name at least one "
                   "player"]
