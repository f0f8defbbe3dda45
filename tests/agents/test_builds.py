"""What an agent builds round by round (agents/evaluation/builds.py) and the report that prints it
(scripts/planner_report.py): the board's cost against the mana the run had given, the mana kept,
the rerolls, per round.

Numbers worked by hand from configs/rules/default.yaml at apprentice: a run starts with 10 mana
and earns 10 a round, a reroll costs 1, 3 lamps; the first reward comes in round 4, the first
boss in round 5, so a run that loses every battle plays rounds 1-3 and sees neither.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from rune_env.envs.run_env import RuneRunEnv

from agents.evaluation.builds import play_run_builds, round_table


class _Shopper:
    """Takes the moon core, then in each preparation rerolls `rerolls` times and buys the first
    rune on display `buys` times (round 1 only), then readies: an empty board (or one rune in
    the hand) that loses every battle."""

    needs_state = True

    def __init__(self, env: RuneRunEnv, rerolls: int = 0, buys: int = 0):
        self.table, self.rerolls, self.buys = env.table, rerolls, buys
        self.bought: list[str] = []

    def reset(self, seed):
        self.round, self.rolled, self.bought = None, 0, []

    def act(self, obs, mask, state=None):
        mask = np.asarray(mask, dtype=bool)
        moon = self.table.id("choose_core", self.table.cores.index("moon"))
        if mask[moon]:
            return moon
        if state.round != self.round:
            self.round, self.rolled = state.round, 0
        if self.rolled < self.rerolls:
            self.rolled += 1
            return self.table.id("reroll")
        if state.round == 1 and len(self.bought) < self.buys:
            slot = next(i for i, k in enumerate(state.shop_runes) if k is not None)
            self.bought.append(state.shop_runes[slot])
            return self.table.id("buy_rune", slot)
        return self.table.id("ready")


def test_each_round_records_the_mana_had_kept_and_the_rerolls():
    env = RuneRunEnv(rank="apprentice")
    run = play_run_builds(env, _Shopper(env, rerolls=2), run_seed=3)
    builds = run["builds"]
    # three losses put out the three lamps: rounds 1-3. Mana had: 10, then + 10 a round; kept:
    # what two rerolls a round leave of it, 10 - 2 = 8, 8 + 10 - 2 = 16, 16 + 10 - 2 = 24; an
    # empty board costs nothing
    assert [(b["round"], b["outcome"]) for b in builds] == [(1, "loss"), (2, "loss"), (3, "loss")]
    assert [b["had"] for b in builds] == [10, 20, 30]
    assert [b["left"] for b in builds] == [8, 16, 24]
    assert [b["rerolls"] for b in builds] == [2, 2, 2]
    assert [b["cost"] for b in builds] == [0, 0, 0]
    table = round_table([run])
    assert [(r["round"], r["battles"], r["win_rate"]) for r in table] == [(1, 1, 0.0), (2, 1, 0.0),
                                                                        (3, 1, 0.0)]
    for row in table:
        # cost / had 0, kept 8/10 = 16/20 = 24/30 = 0.8, no board at 85%, two rerolls
        assert (row["spend"], row["kept"], row["spend_85"], row["rerolls"]) == \
            (0.0, pytest.approx(0.8), 0.0, 2.0)


def test_a_rune_bought_counts_at_its_price_in_every_later_round():
    env = RuneRunEnv(rank="apprentice")
    agent = _Shopper(env, buys=1)
    # (run seed 4: three losses; at some seeds an empty board draws a round against an opponent
    # that cannot hurt it either, and the run reaches the round-4 reward this agent ignores)
    run = play_run_builds(env, agent, run_seed=4)
    (kind,) = agent.bought
    price = env.rules.prices[kind]              # 2, or 3 for light and the supports
    builds = run["builds"]
    assert [b["outcome"] for b in builds] == ["loss"] * 3
    # the rune stays in the hand (a reserve counts at its price): cost `price` each round,
    # kept 10 - price, then + 10 a round; no rerolls
    assert [b["cost"] for b in builds] == [price] * 3
    assert [b["left"] for b in builds] == [10 - price, 20 - price, 30 - price]
    assert [b["rerolls"] for b in builds] == [0] * 3
    assert round_table([run])[0]["spend"] == pytest.approx(price / 10)


def test_planner_report_prints_the_rounds_and_refuses_a_bad_count(script_main):
    r = script_main("planner_report", "--agent", "greedy", "--ranks", "apprentice", "--runs", "2",
                    "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    rounds = out["ranks"]["apprentice"]["rounds"]
    assert rounds[0]["round"] == 1 and rounds[0]["battles"] == 2
    assert {"spend", "kept", "spend_85", "rerolls", "casting", "grades"} <= set(rounds[0])
    r = script_main("planner_report", "--agent", "greedy", "--ranks", "apprentice", "--runs", "1",
                    "--no-progress")
    header = next(line for line in r.stdout.splitlines() if line.lstrip().startswith("round"))
    assert header.split()[:8] == ["round", "boards", "win", "cost/had", "kept", ">=85%", "rolls",
                                  "casting"]
    r = script_main("planner_report", "--runs", "0", "--no-progress")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().startswith("error:") and len(r.stderr.strip().splitlines()) == 1


def test_planner_report_fields_opponents_and_refuses_a_pool_of_other_rules(tmp_path, script_main):
    """Under a rules file of one's own the shipped pools are of other rules: --strict refuses them
    (before anything is played), --opponents generator plays the budget drafter instead (and
    says so), and with nothing to play the script says that."""
    rules = tmp_path / "mine.yaml"
    rules.write_text("extends: default.yaml\nbattle:\n  base_hp: 130\n", encoding="utf-8")
    r = script_main("planner_report", "--agent", "greedy", "--ranks", "apprentice", "--runs", "1",
                    "--rules", rules, "--strict", "--no-progress")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: apprentice: ") and "pool was made under rules" in r.stderr
    r = script_main("planner_report", "--agent", "greedy", "--ranks", "apprentice", "--runs", "1",
                    "--rules", rules, "--strict", "--opponents", "generator", "--json",
                    "--no-progress")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["opponents"] == "generator" and out["ranks"]["apprentice"]["episodes"] == 1
    r = script_main("planner_report", "--ranks", "--no-progress")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "error: nothing to do: no --ranks and no "
                                                        "--duels\n")


def test_planner_report_duels_from_anywhere_and_warns_once(tmp_path):
    """Run from outside the repository, the default opponent (the repository's league_s0.pt)
    is found (a path relative to the root was 'no such policy file' elsewhere), named as the
    repository names it, and its rules warning (it was trained under balance_v2) said once, not
    once per duel task."""
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(repo / "scripts" / "planner_report.py"), "--agent",
                        "greedy", "--ranks", "--duels", "6", "--no-progress"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "duels against agents/models/league_s0.pt: 6 games" in r.stdout
    assert r.stderr.count("warning:") == 1 and "league_s0.pt: policy was trained under rules" \
        in r.stderr
