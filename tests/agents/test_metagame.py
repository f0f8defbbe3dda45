"""The metagame tools (agents/design/metagame): the matrix-game solver on games solved by hand, the
double oracle on a finite table, exploitability's disjoint split, and the scripts' --quick runs
(same seed, same JSON)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.design.audit import board_key, pool_boards
from agents.design.metagame import (ExploitSettings, double_oracle, entropy, mixture_counts,
                                    player_budget, quick_exploit_settings, solve_zero_sum, split_pool)
from agents.design.metagame.solver import max_entropy_zero_sum
from rune_env.rules import load_rules
from rune_env.run.opponents import load_pool

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

# rock, paper, scissors: row's payoff +1 win, -1 loss
RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)


def test_rock_paper_scissors():
    # any weight above 1/3 on one move is exploited by its counter: 1/3 each, value 0
    sol = solve_zero_sum(RPS)
    assert np.allclose(sol.weights, [1 / 3] * 3, atol=1e-9)
    assert sol.value == pytest.approx(0.0, abs=1e-9)
    assert entropy(sol.weights) == pytest.approx(np.log(3))


def test_dominated_strategy_gets_no_weight():
    # RPS plus D, a weak rock: against R, P, S, D it scores -1, -1, 0, 0, never more than rock
    # (0, -1, 1, 1). Against the opponent's 1/3 each D earns (-1 - 1 + 0) / 3 = -2/3 < 0, so it
    # is in no best response: weight 0, the rest 1/3 each, value 0.
    a = np.zeros((4, 4))
    a[:3, :3] = RPS
    a[3, :3] = [-1, -1, 0]
    a[:3, 3] = [1, 1, 0]
    sol = solve_zero_sum(a)
    assert sol.weights[3] == 0.0
    assert np.allclose(sol.weights[:3], [1 / 3] * 3, atol=1e-9)
    assert sol.value == pytest.approx(0.0, abs=1e-9)
    assert list(sol.support) == [0, 1, 2]


def test_three_by_three_mixed():
    # diag(2, 1, 4): the row player equalises x_i a_i = v, so x_i = v / a_i and
    # sum x_i = v (1/2 + 1 + 1/4) = 1 -> v = 4/7, x = (2/7, 4/7, 1/7).
    sol = solve_zero_sum(np.diag([2.0, 1.0, 4.0]))
    assert np.allclose(sol.weights, [2 / 7, 4 / 7, 1 / 7], atol=1e-9)
    assert sol.value == pytest.approx(4 / 7)


def test_max_entropy_spreads_weight_over_boards_that_play_alike():
    # RPS in [0, 1] with rock twice (R2 plays as R against everything): every maximin mixture
    # puts 1/3 on rock in all, the vertex all of it on one copy, the most mixed 1/6 on each
    a = np.full((4, 4), 0.5)
    a[:3, :3] = (RPS + 1) / 2
    a[3, :3], a[:3, 3] = a[0, :3], a[:3, 0]
    vertex = solve_zero_sum(a)
    assert sorted(vertex.weights.round(9).tolist()) == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3])
    mixed = max_entropy_zero_sum(a)
    assert mixed.weights == pytest.approx([1 / 6, 1 / 3, 1 / 3, 1 / 6], abs=1e-4)
    assert mixed.value == pytest.approx(0.5, abs=1e-6)
    # a unique equilibrium is left as it is
    assert max_entropy_zero_sum(np.diag([2.0, 1.0, 4.0])).weights == pytest.approx(
        [2 / 7, 4 / 7, 1 / 7], abs=1e-6)


# A constant-sum table (T[i, j] + T[j, i] = 1): R, P, S as RPS in [0, 1] (win 1, tie 1/2), D a
# weak rock (0 against R and P, 1/2 against S and itself, 0.8 against W) and W a weak board
# (0.2 against R, P, S). Against R, P, S at 1/3 each, D earns (0 + 0 + 0.5) / 3 = 1/6 and W
# earns 0.2 (or 0.8 / 3 + ... < 1/2 with D): the unique equilibrium is 1/3 on R, P, S.
TABLE = np.array([
    [0.5, 0.0, 1.0, 1.0, 0.8],
    [1.0, 0.5, 0.0, 1.0, 0.8],
    [0.0, 1.0, 0.5, 0.5, 0.8],
    [0.0, 0.0, 0.5, 0.5, 0.8],
    [0.2, 0.2, 0.2, 0.2, 0.5],
])


def _exact_oracle(strategies, weights, iteration, attempt):
    # the best response over the whole table to the mixture, every strategy best first
    mix = np.zeros(len(TABLE))
    mix[list(strategies)] = weights
    values = TABLE @ mix
    return [(int(i), float(values[i])) for i in np.argsort(-values, kind="stable")]


def test_double_oracle_finds_the_hand_worked_equilibrium():
    assert np.allclose(TABLE + TABLE.T, 1.0)
    # from W alone: the oracle adds what beats the mixture until R, P, S are in and nothing beats
    # their 1/3 each by more than the tolerance
    res = double_oracle([4], lambda a, b: TABLE[np.ix_(list(a), list(b))], _exact_oracle,
                        key=lambda s: s, iterations=10, tolerance=1e-6, max_add=1)
    assert res.converged
    weights = dict(zip(res.strategies, res.solution.weights))
    assert {s for s, w in weights.items() if w > 0} == {0, 1, 2}
    for s in (0, 1, 2):
        assert weights[s] == pytest.approx(1 / 3, abs=1e-9)
    assert res.history[-1]["best_response"] == pytest.approx(0.5)
    # the matrix the loop grew is the table's on its strategies
    assert np.allclose(res.matrix, TABLE[np.ix_(res.strategies, res.strategies)])


def test_mixture_counts():
    # 0.5, 0.3, 0.2 of 10 -> 5, 3, 2; a tiny weight still gets its one count
    assert mixture_counts(np.array([0.5, 0.3, 0.2]), 10).tolist() == [5, 3, 2]
    counts = mixture_counts(np.array([0.9995, 0.0005, 0.0]), 1000)
    assert counts.tolist() == [999, 1, 0] and counts.sum() == 1000


def test_player_budget_at_defaults():
    rules = load_rules(None)
    assert [player_budget(rules, r) for r in (1, 3, 12)] == [10, 30, 120]   # 10 + 10 (r - 1)


def test_exploitability_split_is_disjoint():
    rules = load_rules(None)
    pool = load_pool(REPO / "configs/opponents/apprentice.json.gz", rules)
    settings = ExploitSettings(rounds=(6,), choose_boards=40, report_boards=80)
    choose, report = split_pool(pool, rules, 6, settings)
    keys = {board_key(b, rules) for b in choose.boards}
    assert keys and not keys & {board_key(b, rules) for b in report.boards}
    # every draw is in one of the two (the round has 80 ghosts of count 1: all of them)
    assert choose.total + report.total == len(pool_boards(pool, rules, 6, 120, 0)) == 80


def _json_of(capsys, main, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_exploitability_quick_same_seed_same_json(capsys):
    import exploitability as script
    argv = ["--pool", str(REPO / "configs/opponents/mentor.json.gz"), "--quick", "--rounds",
            "3", "--search-budget", "200", "--json", "--no-progress"]
    first = _json_of(capsys, script.main, argv)
    assert first == _json_of(capsys, script.main, argv)
    r = first["rounds"][0]
    assert r["disjoint"] and r["exploitability"] == pytest.approx(r["measured"]["win_rate"] - 0.5)
    assert r["cost"] <= r["budget"] == 30


def test_metagame_quick_same_seed_same_json(capsys, tmp_path):
    import metagame as script
    argv = ["--quick", "--rounds", "3", "--iterations", "2", "--json", "--no-progress",
            "--out", str(tmp_path)]
    first = _json_of(capsys, script.main, argv)
    # the pool it wrote is kept (configs/meta holds the shipped ones): --force replaces it
    assert script.main(argv) == 2
    assert "exists (pass --force to replace it)" in capsys.readouterr().err
    second = _json_of(capsys, script.main, argv + ["--force"])
    for run in (first, second):
        for r in run["rounds"]:
            r.pop("seconds")
    assert first == second
    r = first["rounds"][0]
    assert sum(m["weight"] for m in r["mixture"]) == pytest.approx(1.0)
    # alpha-Rank over the round's boards: its heaviest, by mass, each >= 1%, and its mass on
    # the mixture at least what its named boards in the mixture carry
    ar = r["alpharank"]
    masses = [t["mass"] for t in ar["top"]]
    assert masses == sorted(masses, reverse=True) and all(m >= 0.01 for m in masses) and masses
    assert ar["on_mixture"] >= sum(t["mass"] for t in ar["top"] if t["in_mixture"]) - 1e-12
    assert 1.0 <= ar["effective_size"] <= r["strategies"] + 1e-9
    pool = load_pool(first["pool"], load_rules(None))
    assert pool.provenance["source"] == "metagame"
    assert sum(pool.counts(3)) == 1000 and len(pool.counts(3)) == r["support_size"]


def test_scripts_reject_bad_input(capsys):
    import exploitability
    import metagame
    with pytest.raises(SystemExit) as exc:
        metagame.main(["--iterations", "0"])
    assert exc.value.code == 2
    assert metagame.main(["--rounds", "99"]) == 2
    assert exploitability.main(["--pool", "/nonexistent.json"]) == 2
    err = capsys.readouterr().err
    assert all(line.startswith("error: ") for line in err.strip().splitlines())


def test_charts_write_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    from agents.design.metagame.charts import exploitability_chart, matrix_chart, shares_chart
    rounds = [{"round": 3, "support_size": 2, "shares": {"core": {"moon": 0.5, "star": 0.5},
                                                         "kind": {"fire": 1.0}},
               "support_matrix": [[0.5, 1.0], [0.0, 0.5]],
               "mixture": [{"weight": 0.5}, {"weight": 0.5}]}]
    for path in (shares_chart(rounds, tmp_path / "s.png"), matrix_chart(rounds, tmp_path / "m.png"),
                 exploitability_chart({"sage": {3: 0.5, 6: 0.4}}, tmp_path / "e.png")):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_exploitability_chart_shows_a_pool_below_zero():
    """A best response that loses on the report ghosts is exploitability < 0 (archmage's round 3
    at 4065152: win rate 0.39, so -0.11); the axis must reach it, not cut it off at -0.05."""
    pytest.importorskip("matplotlib")
    from agents.design.metagame.charts import exploitability_figure
    fig = exploitability_figure({"archmage": {3: -0.11, 6: 0.17}, "sage": {3: 0.3, 6: 0.31}})
    low, high = fig.axes[0].get_ylim()
    assert low <= -0.11 - 0.05 + 1e-9 and high >= 0.5
    # rounds are whole numbers on the axis (it ticked 3.0, 3.5, ... 6.0), and with `bands` each
    # pool's 95% interval is shaded: one filled area a pool
    fig = exploitability_figure({"archmage": {3: -0.11, 6: 0.17}}, bands={
        "archmage": {3: (-0.2, 0.0), 6: (0.05, 0.3)}})
    ax = fig.axes[0]
    fig.canvas.draw()
    assert all(float(t).is_integer() for t in ax.get_xticks())
    assert len(ax.collections) == 1


def test_every_script_option_states_its_default():
    import exploitability
    import metagame
    for script in (exploitability, metagame):
        for action in script.build_parser()._actions:
            if action.option_strings and action.dest != "help":
                assert "default" in (action.help or ""), (script.__name__, action.dest)


def test_exploitability_without_split_measures_in_sample():
    # the shipped metagame pool's round 9: its ghosts with counts summing to 1000 (it has fewer
    # ghosts than the 300 draws asked for, so each is drawn as often as its count); without
    # the split the choose and report sets are one set of all of them
    rules = load_rules(None)
    pool = load_pool(REPO / "configs/meta/meta_184758c7a8528bca.json.gz", rules)
    settings = ExploitSettings(rounds=(9,), split=False)
    choose, report = split_pool(pool, rules, 9, settings)
    assert choose is report and choose.total == sum(pool.counts(9)) == 1000
    assert len(choose.boards) == len(pool.counts(9))


def test_metagame_rounds_through_the_fanout_equal_the_loop(monkeypatch):
    # the Ray path hands metagame_round to agents.fanout.run_tasks; with Ray replaced by the
    # fanout's in-process loop (address None) it must give what the plain loop gives
    from agents.cli import fanout
    from agents.design.metagame import metagame_rounds, quick_meta_settings
    rules = load_rules(None)
    settings = quick_meta_settings((3,), iterations=1)
    plain = metagame_rounds(rules, settings)
    real = fanout.run_tasks
    monkeypatch.setattr(fanout, "run_tasks", lambda fn, tasks, address, progress=None:
                        real(fn, tasks, None, progress))
    done = []
    fanned = metagame_rounds(rules, settings, ray="local", round_done=done.append)
    strip = [{k: v for k, v in r.to_json(rules).items() if k != "seconds"} for r in plain]
    assert strip == [{k: v for k, v in r.to_json(rules).items() if k != "seconds"}
                     for r in fanned]
    assert done == [1]


def test_exploitability_through_the_fanout_equals_the_loop(monkeypatch):
    from agents.cli import fanout
    from agents.design.metagame import exploitability
    rules = load_rules(None)
    pool = load_pool(REPO / "configs/opponents/sage.json.gz", rules)
    settings = quick_exploit_settings((3,), search_budget_=100)
    plain = [r.to_json(rules) for r in exploitability(rules, pool, settings)]
    real = fanout.run_tasks
    monkeypatch.setattr(fanout, "run_tasks", lambda fn, tasks, address, progress=None:
                        real(fn, tasks, None, progress))
    assert plain == [r.to_json(rules) for r in exploitability(rules, pool, settings, ray="x")]


def _events(run_dir: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(str(run_dir), size_guidance={"images": 0, "scalars": 0})
    ea.Reload()
    return ea


def test_tb_logs_the_charts_as_images_and_the_numbers_as_scalars(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("torch.utils.tensorboard")
    import exploitability
    import metagame
    data = _json_of(capsys, metagame.main, ["--quick", "--rounds", "3", "6", "--iterations", "1",
                                            "--json", "--no-progress", "--tb", str(tmp_path)])
    rules = load_rules(None)
    ea = _events(tmp_path / f"metagame_{rules.hash}_s0")
    assert set(ea.Tags()["images"]) == {"metagame/shares", "metagame/payoff_matrix",
                                        "metagame/exploitability"}
    assert ea.Images("metagame/shares")[0].encoded_image_string[:4] == b"\x89PNG"
    gap = ea.Scalars("metagame/gap")
    assert [e.step for e in gap] == [3, 6]
    assert [e.value for e in gap] == pytest.approx([r["gap"]["win_rate"] for r in data["rounds"]])
    for tag in ("support_size", "entropy", "effective_size"):
        assert len(ea.Scalars(f"metagame/{tag}")) == 2
    assert [e.value for e in ea.Scalars("metagame/alpharank_on_mixture")] == pytest.approx(
        [r["alpharank"]["on_mixture"] for r in data["rounds"]])
    assert len(ea.Scalars("metagame/round_6/best_response")) == len(data["rounds"][1]["history"])
    # exploitability: its chart and each pool's numbers by round (a rerun replaces the run)
    argv = ["--pool", str(REPO / "configs/opponents/mentor.json.gz"), "--quick", "--rounds", "3",
            "--search-budget", "100", "--no-progress", "--tb", str(tmp_path)]
    for _ in range(2):
        assert exploitability.main(argv) == 0
    run = tmp_path / f"exploitability_{rules.hash}_s0"
    assert len(list(run.glob("events.out.tfevents.*"))) == 1
    ea = _events(run)
    assert ea.Tags()["images"] == ["exploitability/chart"]
    assert [e.step for e in ea.Scalars("exploitability/mentor/win_rate")] == [3]


def test_tb_is_refused_up_front_without_its_extras(capsys, tmp_path, monkeypatch):
    import metagame
    (tmp_path / "file").write_text("")
    if not metagame.tb_problem():
        assert metagame.main(["--quick", "--tb", str(tmp_path / "file")]) == 2
        assert "not a directory" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert metagame.main(["--quick", "--tb", str(tmp_path / "tb")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "charts" in err
    assert not (tmp_path / "tb").exists()


def test_metagame_of_a_ranks_budget_is_its_own_file(capsys, tmp_path):
    """--budget rank used the first rank's opponent budget, which is a player's, with no way to
    name another; --rank names it (archmage round 3: 34 mana, the budget its pool's ghosts get,
    rune_env.run.opponents.opponent_budget) and the pool goes beside the player's metagame,
    meta_<hash>_archmage.json.gz, never in its place. --rank without --budget rank is refused."""
    import metagame as script
    from rune_env.run.opponents import opponent_budget
    from rune_env.run.ranks import rank_effects
    rules = load_rules(None)
    argv = ["--quick", "--rounds", "3", "--iterations", "1", "--json", "--no-progress",
            "--budget", "rank", "--rank", "archmage", "--out", str(tmp_path)]
    out = _json_of(capsys, script.main, argv)
    want = opponent_budget(rules, 3, rank_effects(rules, "archmage"))
    assert out["rounds"][0]["budget"] == want != opponent_budget(rules, 3, rank_effects(
        rules, rules.spec.ranks[0].id))
    assert out["pool"] == str(tmp_path / f"meta_{rules.hash}_archmage.json.gz")
    assert out["settings"]["rank"] == "archmage"
    assert script.main(["--quick", "--rank", "sage"]) == 2
    assert "--rank: for --budget rank" in capsys.readouterr().err
