"""agents/evaluation/board_stats.py and scripts/board_stats.py: the boards agents and pools take into battle.

A tiny pool written here, whose weighted statistics are worked out by hand below; a baseline agent
(greedy, 2 short runs) whose boards are sane and the same on a second collection; the script run
as the user runs it (`--json`, `--out`, the table), and its bad inputs (one `error: ...` line,
exit status 2). Not battle-rule tests, so the module is marked `outside_mutation_check`; the runs are kept short (3 rounds, 2 episodes) so that the module takes seconds.
"""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from agents.evaluation.board_stats import (agent_boards, casting_count, format_source, pool_boards,
                                           summarise, weighted_quantile)
from agents.evaluation.runs import eval_run_seed, wilson
from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import default_rules
from rune_env.rules.config import KINDS
from rune_env.run.opponents import Pool, load_pool, save_pool

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "board_stats.py"
RULES = default_rules()
RELIC = next(iter(RULES.spec.relics))


# -- the tiny pool --------------------------------------------------------------------------------
# round 1: A x3: one fire I (1 casting), moon core
#          B x1: fire II, water I, ice I, earth I (4 casting) and an amplify I, tree core, a ward
#                stone, the relic RELIC
#   boards 4 (2 entries); casting values 1, 1, 1, 4: median 1, p10 1, p90 4 (the inverted CDF
#   reaches 0.9 x 4 = 3.6 only at 4), min 1, max 4, mean 7/4 = 1.75, share <= 2: 3/4 = 0.75;
#   runes 3 + 5 = 8: fire (3 + 1)/8 = 0.5, water, ice, earth, amplify 1/8 each; grades I 7/8,
#   II 1/8; cores moon 3/4, tree 1/4; artifacts: ward_stone 1/1; boards with artifacts 1/4;
#   RELIC 1/4; 2 runes a board.
# round 3: C x2: fire, wind (2 casting) and a node;  D x2: fire, wind, water (3 casting)
#   boards 4: median 2 (cumulative 2 of 4 reaches 0.5 x 4), p90 3, share <= 2: 2/4 = 0.5
# round 4: E x1: a resonator alone (0 casting)
#   from round 3 on: 5 boards, C and E have <= 2: (2 + 1)/5 = 0.6
#   from round 4 on with K = 0: E alone, 1/1
GHOSTS = {
    1: [({"1:0": ["fire", 1]}, {"core": "moon"}, 3),
        ({"1:0": ["fire", 2], "1:1": ["water", 1], "1:2": ["ice", 1], "1:3": ["earth", 1],
          "1:4": ["amplify", 1]},
         {"core": "tree", "artifacts": {"1:0": "ward_stone"}, "relics": [RELIC]}, 1)],
    3: [({"1:0": ["fire", 1], "1:1": ["wind", 1], "1:2": ["node", 1]}, {"core": "moon"}, 2),
        ({"1:0": ["fire", 1], "1:1": ["wind", 1], "1:2": ["water", 1]}, {"core": "moon"}, 2)],
    4: [({"1:0": ["resonator", 1]}, {"core": "moon"}, 1)],
}


@pytest.fixture
def tiny_pool(tmp_path) -> Path:
    rounds = {r: [{"board": {"runes": runes, "round": r, **extra}, "agent": "hand", "seed": 0,
                   "round": r, "rank": "apprentice", "count": count}
                  for runes, extra, count in ghosts]
              for r, ghosts in GHOSTS.items()}
    path = tmp_path / "tiny.json"
    save_pool(Pool(rules_hash=RULES.hash, rank="apprentice", rounds=rounds), path)
    return path


def test_weighted_quantile_by_hand():
    assert weighted_quantile([1, 4], [3, 1], 0.5) == 1
    assert weighted_quantile([4, 1], [1, 3], 0.9) == 4          # order of the input is free
    assert weighted_quantile([1, 4], [1, 1], 0.5) == 1          # the lower middle value
    assert weighted_quantile([5, 2, 9], [1, 1, 1], 0.0) == 2    # q = 0: the minimum
    assert weighted_quantile([5, 2, 9], [1, 1, 1], 1.0) == 9
    assert weighted_quantile([], [], 0.5) is None
    # 0.1 x 30 is 3.0000000000000004 in floating point: the value with cumulative weight 3 counts
    assert weighted_quantile([0, 1], [3, 27], 0.1) == 0
    with pytest.raises(ValueError):
        weighted_quantile([1], [1], 1.5)
    # whole-number weights: numpy's inverted CDF of the sample with each value repeated
    values, weights = [0, 2, 3, 5, 7], [4, 1, 6, 2, 3]
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        expected = np.quantile(np.repeat(values, weights), q, method="inverted_cdf")
        assert weighted_quantile(values, weights, q) == expected, q


def test_pool_statistics_by_hand(tiny_pool):
    pool = load_pool(tiny_pool, RULES)
    entries = pool_boards(pool)
    assert [e["weight"] for e in entries] == [3, 1, 2, 2, 1]
    assert [casting_count(e, RULES) for e in entries] == [1, 4, 2, 3, 0]
    s = summarise(entries, RULES)
    assert list(s["per_round"]) == ["1", "3", "4"] and s["boards"] == 9 and "runs" not in s
    r1 = s["per_round"]["1"]
    assert (r1["boards"], r1["entries"]) == (4, 2)
    assert r1["casting"] == {"p10": 1, "median": 1, "p90": 4, "min": 1, "max": 4, "mean": 1.75,
                             "share_at_most_k": 0.75}
    assert r1["runes_per_board"] == 2.0
    assert r1["kinds"] == {k: {"fire": 0.5, "water": 0.125, "ice": 0.125, "earth": 0.125,
                               "amplify": 0.125}.get(k, 0.0) for k in KINDS}
    assert r1["grades"] == {"1": 7 / 8, "2": 1 / 8, "3": 0.0}
    assert r1["cores"] == {c: {"moon": 0.75, "tree": 0.25}.get(c, 0.0) for c in RULES.spec.cores}
    assert r1["artifacts"]["ward_stone"] == 1.0 and sum(r1["artifacts"].values()) == 1.0
    assert r1["boards_with_artifacts"] == 0.25
    assert r1["relics"][RELIC] == 0.25 and sum(r1["relics"].values()) == 0.25
    r3 = s["per_round"]["3"]["casting"]
    assert (r3["median"], r3["p90"], r3["share_at_most_k"]) == (2, 3, 0.5)
    assert s["per_round"]["4"]["artifacts"] == {a: 0.0 for a in RULES.spec.artifacts}
    assert s["from_round"] == {"from_round": 3, "max_casting": 2, "boards": 5, "at_most_k": 3,
                               "share": 0.6, "ci": list(wilson(3, 5))}
    late = summarise(entries, RULES, from_round=4, max_casting=0)["from_round"]
    assert (late["boards"], late["share"]) == (1, 1.0)
    assert json.loads(json.dumps(s)) == s          # string round keys: the JSON reads back equal
    table = format_source("tiny", s, 2)
    assert "from round 3 on: 60.0% of 5 boards have <= 2 casting runes" in table
    assert "fire 50%" in table and "moon 75%" in table
    assert "cost" not in s["per_round"]["1"] and "cost_from_round" not in s   # no budget given


def test_pool_cost_against_the_budget_by_hand(tiny_pool):
    # prices: fire, water, ice, earth, wind 2; amplify, node, resonator 3; a grade II is 3 grade-I
    # runes; the ward stone 5. Round 1: A = 2 mana (x3), B = 3 x 2 + 2 + 2 + 2 + 3 + 5 = 20 (x1):
    # mean (3 x 2 + 20) / 4 = 6.5 of a budget of 10 (the defaults' 10 + 10 (r - 1), apprentice):
    # 0.65. Round 3: C = 2 + 2 + 3 = 7, D = 6: 6.5 of 30. Round 4: E = 3 of 40 = 0.075. From
    # round 3 on: the least 0.075 (round 4), the mean (6.5 / 30 + 0.075) / 2.
    pool = load_pool(tiny_pool, RULES)
    s = summarise(pool_boards(pool, RULES), RULES, budget=lambda r: 10 * r)
    r1 = s["per_round"]["1"]
    assert (r1["cost"], r1["budget"], r1["cost_share"]) == (6.5, 10, 0.65)
    assert s["per_round"]["3"]["cost_share"] == pytest.approx(6.5 / 30)
    assert s["per_round"]["4"]["cost_share"] == pytest.approx(0.075)
    spend = s["cost_from_round"]
    assert (spend["min_round"], spend["min"]) == (4, pytest.approx(0.075))
    assert spend["mean"] == pytest.approx((6.5 / 30 + 0.075) / 2)
    table = format_source("tiny", s, 2)
    assert "6.5/10  0.65" in table
    assert "boards cost 0.07 of the round's budget at least (round 4)" in table


def test_agent_boards_are_sane_and_deterministic():
    def collect():
        env = RuneRunEnv(opponents="generator", max_rounds=3)
        return agent_boards(make_agent("greedy", RULES, seed=0), 2, seed=0, env=env)
    boards, runs = collect()
    assert [r["run_seed"] for r in runs] == [eval_run_seed(0, 0), eval_run_seed(0, 1)]
    for run in runs:
        mine = [b for b in boards if b["run_seed"] == run["run_seed"]]
        assert [b["round"] for b in mine] == list(range(1, run["rounds"] + 1))
        assert run["core"] in RULES.spec.cores and set(run["relics"]) <= set(RULES.spec.relics)
    for b in boards:
        assert b["weight"] == 1 and b["outcome"] in ("win", "loss", "draw")
        assert 0 <= casting_count(b, RULES) <= len(b["runes"]) and b["core"] in RULES.spec.cores
    s = summarise(boards, RULES, runs=runs)
    assert s["per_round"]["1"]["boards"] == 2 and s["runs"]["runs"] == 2
    for r in s["per_round"].values():
        assert sum(r["kinds"].values()) == pytest.approx(1.0)
        assert sum(r["cores"].values()) == pytest.approx(1.0)
        c = r["casting"]
        assert c["min"] <= c["p10"] <= c["median"] <= c["p90"] <= c["max"]
    again_boards, again_runs = collect()
    assert (again_boards, again_runs) == (boards, runs)
    assert summarise(again_boards, RULES, runs=again_runs) == s


# -- the script -----------------------------------------------------------------------------------
def script(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def test_script_json_and_out(tiny_pool, tmp_path):
    out = tmp_path / "report" / "boards.json"
    r = script("--agents", "random", "--episodes", "2", "--opponents", "generator", "--pools",
               tiny_pool, "--json", "--out", out, "--progress")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)           # the bar went to stderr, stdout is the JSON alone
    assert re.search(r"\d+/\d+ \[", r.stderr)    # tqdm's "1/2 [00:01<...": the forced bar
    assert report == json.loads(out.read_text(encoding="utf-8"))
    assert report["rules_hash"] == RULES.hash and report["from_round"] == 3
    agent, pool = report["sources"]["random"], report["sources"][str(tiny_pool)]
    assert agent["source"] == "agent" and agent["episodes"] == 2 and agent["runs"]["runs"] == 2
    assert agent["opponents"] == "budget drafter" and agent["per_round"]["1"]["boards"] == 2
    assert pool["source"] == "pool" and pool["same_rules"] and pool["from_round"]["share"] == 0.6


def test_script_table_of_a_pool(tiny_pool):
    r = script("--pools", tiny_pool, "--max-casting", "0", "--from-round", "4")
    assert r.returncode == 0, r.stderr
    assert f"{tiny_pool}: pool of rank apprentice, 9 boards by count" in r.stdout
    assert "from round 4 on: 100.0% of 1 boards have <= 0 casting runes" in r.stdout


def test_script_bad_argument_is_one_error_line():
    r = script("--agents", "greedy", "--episodes", "0")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "error: --episodes must be a whole number in 1..1000003; got '0'"]


def _script_module():
    spec = importlib.util.spec_from_file_location("board_stats_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_help_states_every_default():
    mod = _script_module()
    parser = mod.build_parser()
    for action in parser._actions:
        if action.dest != "help":
            assert action.help and "default" in action.help, action.option_strings
    assert parser.description == mod.__doc__.strip()    # --help shows the docstring, whole


@pytest.mark.parametrize("args, needle", [
    ([], "give --agents, --pools or both"),
    (["--agents", "greedy", "--rank", "grandmaster"], "--rank must be a rank name"),
    (["--agents", "nobody"], "unknown agent 'nobody'"),
    (["--agents", "greedy", "greedy"], "is given twice"),
    (["--pools", "no/such/pool.json"], "no/such/pool.json: cannot read pool file"),
    (["--agents", "greedy", "--opponents", "no/such/pool.json"], "cannot read pool file"),
])
def test_script_bad_inputs(args, needle, capsys):
    assert _script_module().main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and needle in err[0], err
