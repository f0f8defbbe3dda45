"""The mana a run has had, as the planner keeps the book (agents/search/spending.py), and the
lookahead's `spend_floor`, `roll_cap` and `roll_until` knobs.

Numbers worked by hand from configs/rules/default.yaml: start mana 10, income 10 a round, reward
mana 6, a reroll 1; fire and wind 2 each, amplify 3; a grade-II rune is 3 grade-I runes (merge
count 3); mana_spring 7, ward_stone 5; the first sectors opened cost 3 and 4.
"""
from __future__ import annotations

import pytest

from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import default_rules, geometry
from rune_env.run.actions import action_table
from rune_env.run.loop import apply, new_run
from rune_env.run.state import PendingChoice

from agents import make_agent
from agents.evaluation.builds import play_run_builds
from agents.search.settings import parse_planner
from agents.search.spending import ManaBook, holdings_cost

RULES = default_rules()
TABLE = action_table(RULES)


def test_the_rules_numbers_the_hand_worked_values_use():
    run = RULES.spec.run
    assert (run.start_mana, run.income, run.reward_mana, run.reroll_cost) == (10, 10, 6, 1)
    assert (RULES.prices["fire"], RULES.prices["wind"], RULES.prices["amplify"]) == (2, 2, 3)
    assert RULES.spec.grades.merge_count == 3
    assert RULES.spec.artifacts["mana_spring"].price == 7
    assert RULES.spec.artifacts["ward_stone"].price == 5
    assert list(RULES.spec.sectors.open_costs[:2]) == [3, 4]


def moon_run(seed=3, rank="apprentice"):
    state = new_run(seed, RULES, rank=rank)
    apply(state, TABLE.id("choose_core", TABLE.cores.index("moon")))
    return state


def test_holdings_cost_counts_runes_by_grade_artifacts_and_sectors():
    state = moon_run()
    cells = geometry(RULES.radius)
    state.board = {cells.parse("1:1"): ("fire", 2), cells.parse("1:2"): ("amplify", 1)}
    state.hand = [("wind", 1)]
    state.artifacts = {cells.parse("1:1"): "mana_spring"}
    state.artifact_inventory = ["ward_stone"]
    state.open_sectors = [0, 1]
    # fire II = 3 x 2 = 6, amplify 3, wind 2; mana_spring 7 + ward_stone 5; sectors 3 + 4 = 7
    assert holdings_cost(state) == 6 + 3 + 2 + 7 + 5 + 7 == 30


def test_the_book_starts_at_the_start_mana_and_adds_each_rounds_income():
    state = moon_run()
    book = ManaBook(RULES, TABLE)
    book.observe(state)
    assert book.had == 10
    state.mana -= 4            # spent in the round: not a change of the mana had
    book.observe(state)
    assert book.had == 10
    state.round += 1           # the next round's start added the income (10, no furnace, relic)
    book.observe(state)
    assert book.had == 20


def test_a_reward_of_mana_adds_to_the_book_and_another_reward_does_not():
    state = moon_run()
    book = ManaBook(RULES, TABLE)
    book.observe(state)
    state.pending = PendingChoice("reward", ["hand_slot", "mana", "artifact:ward_stone"])
    book.note(state, TABLE.id("choose_reward", 0))
    assert book.had == 10
    book.note(state, TABLE.id("choose_reward", 1))
    assert book.had == 10 + 6


def test_a_reroll_is_allowed_while_holdings_and_mana_after_it_reach_the_floor():
    state = moon_run()
    book = ManaBook(RULES, TABLE)
    book.observe(state)
    book.had = 20
    state.board, state.hand, state.artifacts, state.artifact_inventory = {}, [("fire", 2)], {}, []
    state.open_sectors = []
    state.mana = 12
    # holdings 6 (fire II) + mana 12 - the reroll 1 = 17 = 0.85 x 20: allowed at the floor
    assert book.may_roll(state, 0.85)
    state.mana = 11            # 16 < 17
    assert not book.may_roll(state, 0.85)
    assert book.may_roll(state, 0.0)        # off
    assert book.may_roll(state, 0.8)        # 16 = 0.8 x 20


def test_the_book_of_a_whole_run_is_the_mana_had_the_report_counts():
    # agents.evaluation.builds counts the mana had independently (from the env's side); the
    # planner's book, read at its last action of each round, must agree in every round
    env = RuneRunEnv(rank="apprentice", max_rounds=4)
    agent = make_agent("planner:boards=20,size=2", env.rules, seed=1)
    seen = {}
    act = agent.act

    def recording(obs, mask, state=None):
        action = act(obs, mask, state=state)
        seen[state.round] = agent.book.had
        return action

    agent.act = recording
    run = play_run_builds(env, agent, 12)
    assert [b["had"] for b in run["builds"]] == [seen[b["round"]] for b in run["builds"]]
    assert run["builds"][0]["had"] == 10 and len(run["builds"]) == 4


def rerolls_by_round(name: str, seed: int, rounds: int = 3) -> dict[int, int]:
    env = RuneRunEnv(rank="apprentice", max_rounds=rounds)
    agent = make_agent(name, env.rules, seed=seed)
    obs, info = env.reset(options={"run_seed": seed})
    agent.reset(seed)
    counts: dict[int, int] = {}
    done = False
    while not done:
        state = env.state
        action = agent.act(obs, info["action_mask"], state=state)
        if TABLE.actions[action].kind == "reroll":
            counts[state.round] = counts.get(state.round, 0) + 1
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return counts


LOOKAHEAD = "planner:boards=60,size=2,roll=2,roll_share=0.2"


def test_a_floor_of_the_whole_mana_had_forbids_every_reroll():
    # the mana had is at least the holdings plus the mana (the rest went to rerolls and sales),
    # so after a reroll they are short of it by at least 1: with spend_floor=1 it never rolls
    assert sum(rerolls_by_round(LOOKAHEAD, 4).values()) > 0       # it does roll without it
    assert rerolls_by_round(LOOKAHEAD + ",spend_floor=1", 4) == {}


def test_the_roll_cap_bounds_a_rounds_rerolls():
    # run seed 1 (found by trying seeds 0-11): 3 rerolls in each of rounds 1, 3 and 4 uncapped
    free = rerolls_by_round(LOOKAHEAD, 1, 4)
    assert max(free.values()) >= 2                               # the cap of 1 binds
    capped = rerolls_by_round(LOOKAHEAD + ",roll_cap=1", 1, 4)
    assert capped and max(capped.values()) == 1
    assert rerolls_by_round(LOOKAHEAD + ",roll_cap=2", 1, 4)[1] == 2


def test_a_floored_capped_lookahead_repeats_itself_and_its_book_restarts_with_a_run():
    # one agent, the same run twice: reset() must clear the book (else the second run's mana
    # had would start from the first's and the floor would allow other rerolls)
    env = RuneRunEnv(rank="apprentice", max_rounds=3)
    agent = make_agent(LOOKAHEAD + ",spend_floor=0.9,roll_cap=2", env.rules, seed=2)
    first = play_run_builds(env, agent, 2)
    second = play_run_builds(env, agent, 2)
    assert [b["board"] for b in first["battles"]] == [b["board"] for b in second["battles"]]
    assert first["builds"][0]["had"] == 10


def test_after_roll_until_the_rounds_roll_by_the_targets_own_plans(monkeypatch):
    # roll_until=2: the lookahead decides rounds 1 and 2 as it does without the knob (the same
    # seed, the same rerolls), and no decision of round 3 or later is the lookahead's
    import agents.search.planner as planner_module

    rounds = []
    real = planner_module.PlannerAgent._roll_choice

    def spying(self, state):
        rounds.append(state.round)
        return real(self, state)

    monkeypatch.setattr(planner_module.PlannerAgent, "_roll_choice", spying)
    free = rerolls_by_round(LOOKAHEAD, 1, 4)
    assert max(rounds) >= 3                                      # it decides late rounds too
    rounds.clear()
    until = rerolls_by_round(LOOKAHEAD + ",roll_until=2", 1, 4)
    assert rounds and set(rounds) <= {1, 2}
    assert {r: n for r, n in until.items() if r <= 2} == {r: n for r, n in free.items() if r <= 2}


def test_the_spend_floor_roll_cap_and_roll_until_knobs_and_their_bounds():
    settings = parse_planner("planner:roll=8,spend_floor=0.87,roll_cap=2", RULES)
    assert (settings.spend_floor, settings.roll_cap) == (0.87, 2)
    assert settings.to_json()["roll_cap"] == 2 and settings.to_json()["spend_floor"] == 0.87
    default = parse_planner("planner", RULES)
    assert (default.spend_floor, default.roll_cap) == (0.0, None)
    assert default.to_json()["roll_cap"] == "none"
    assert parse_planner("planner:roll_cap=none", RULES).roll_cap is None
    assert parse_planner("planner:roll_until=3", RULES).roll_until == 3
    assert default.roll_until is None and default.to_json()["roll_until"] == "none"
    cap, last = RULES.spec.run.action_cap, RULES.spec.run.round_cap
    for name, words in (("planner:spend_floor=1.5", "spend_floor is a share between 0 and 1"),
                        ("planner:spend_floor=-0.1", "spend_floor is a share between 0 and 1"),
                        ("planner:roll_cap=0", f"roll_cap must be in 1..{cap} or none"),
                        (f"planner:roll_cap={cap + 1}", f"roll_cap must be in 1..{cap} or none"),
                        ("planner:roll_cap=x", "roll_cap needs a whole number or none"),
                        ("planner:roll_until=0", f"roll_until must be in 1..{last} or none"),
                        ("planner:roll_until=y", "roll_until needs a round number or none")):
        with pytest.raises(ValueError, match=words):
            make_agent(name, RULES)
