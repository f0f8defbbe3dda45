"""What an agent builds, round by round, and how long it thinks: the search player's report
(`scripts/planner_report.py`), for any agent that plays runs.

`play_run_builds(env, agent, run_seed)` plays one whole run (as `runs.play_run`) and records, for
each battle, the board the agent fielded: its cost (`agents.search.boards.board_cost`: runes and
reserves by their grade-I runes, artifacts, sectors), the mana the run had given it by then (the
start mana, every round's income and the reward mana it took: what it could have spent), the
mana it kept (unspent when it readied), the rerolls it made in that preparation (the shop's
price: at `run.reroll_cost` each, mana that never reaches the board), its casting runes, the
grades of its runes, its core and kinds, and the CPU seconds the agent spent deciding that round
(an agent with `decision_times`, the planner; None for the others).
`round_table(runs)` sums them up per round. `play_games` plays duels of two agents by name, a
slice of a match at a time (`duels.match_seed`, seats alternating), for fan-out.
"""
from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from rune_env import max_episode_steps
from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import Board
from rune_env.run.loop import income

from agents.search.boards import board_cost
from agents.search.spending import reward_mana_chosen


def play_run_builds(env: RuneRunEnv, agent, run_seed: int) -> dict[str, Any]:
    """One whole run (the module docstring): the run's summary, as `runs.play_run`'s, and a
    record per battle under "builds"."""
    rules = env.rules
    table = env.table
    obs, info = env.reset(options={"run_seed": run_seed})
    agent.reset(run_seed)
    had = env.state.mana
    battles, builds = [], []
    rerolls = 0                    # in the preparation under way
    for _ in range(max_episode_steps(rules)):
        state = env.state
        action = agent.act(obs, info["action_mask"], state=state if agent.needs_state else None)
        act = table.actions[action]
        rerolls += act.kind == "reroll"
        had += reward_mana_chosen(state, act)
        kept = state.mana          # what is left unspent if this action fights the battle
        obs, _, terminated, truncated, info = env.step(action)
        b = info.get("battle")
        if b is not None:
            battles.append(b)
            builds.append(_build(rules, b, had, agent, kept, rerolls))
            rerolls = 0
            if not env.state.over:
                had += income(env.state)        # what the next round's start has just added
        if terminated or truncated:
            break
    s = env.state
    return {"run_seed": run_seed, "wins": s.wins, "losses": s.losses, "draws": s.draws,
            "cleared": s.cleared, "rounds": len(battles), "lamps": s.lamps, "core": s.core,
            "battles": battles, "builds": builds}


def _build(rules, battle: dict, had: int, agent, left: int, rerolls: int) -> dict[str, Any]:
    board = Board.from_json(battle["board"], rules)
    casting = [r for r in board.runes.values() if r[0] in rules.casting_kinds]
    times = dict(getattr(agent, "decision_times", []) or [])
    return {"round": battle["round"], "outcome": battle["outcome"],
            "cost": board_cost(board, rules), "had": had, "left": left, "rerolls": rerolls,
            "casting": len(casting),
            "runes": len(board.runes), "grades": dict(Counter(g for _, g in board.runes.values())),
            "core": board.core, "kinds": sorted(k for k, _ in board.runes.values()),
            "seconds": times.get(battle["round"])}


def round_table(runs: list[dict]) -> list[dict[str, Any]]:
    """Per round: battles, win rate, mean cost / mana had and mana kept / mana had (the rest of
    the mana had went to rerolls and to sales below the price paid), the share of boards costing
    at least 85% of it, the mean rerolls of the round's preparation, mean casting runes and
    runes, the grade mix, the cores, the three commonest kinds, and the agent's CPU seconds (mean
    and most) where it reports them."""
    by_round: dict[int, list[dict]] = {}
    for r in runs:
        for b in r["builds"]:
            by_round.setdefault(b["round"], []).append(b)
    out = []
    for rnd, bs in sorted(by_round.items()):
        spend = [b["cost"] / b["had"] for b in bs if b["had"] > 0]
        grades = Counter()
        for b in bs:
            grades.update({int(g): n for g, n in b["grades"].items()})
        total = sum(grades.values()) or 1
        secs = [b["seconds"] for b in bs if b["seconds"] is not None]
        kinds = Counter(k for b in bs for k in b["kinds"])
        out.append({
            "round": rnd, "battles": len(bs),
            "win_rate": sum(b["outcome"] == "win" for b in bs) / len(bs),
            "spend": statistics.fmean(spend) if spend else None,
            "kept": statistics.fmean(b["left"] / b["had"] for b in bs if b["had"] > 0),
            "spend_85": sum(s >= 0.85 for s in spend) / len(spend) if spend else None,
            "rerolls": statistics.fmean(b["rerolls"] for b in bs),
            "casting": statistics.fmean(b["casting"] for b in bs),
            "runes": statistics.fmean(b["runes"] for b in bs),
            "grades": {g: grades[g] / total for g in sorted(grades)},
            "cores": dict(Counter(b["core"] for b in bs).most_common()),
            "kinds": [k for k, _ in kinds.most_common(3)],
            "seconds_mean": statistics.fmean(secs) if secs else None,
            "seconds_max": max(secs) if secs else None,
        })
    return out


def play_games(a_name: str, b_name: str, rules_path: str | None, seed: int, start: int,
               count: int) -> list[float]:
    """Games start..start+count-1 of a match of agent `a_name` against `b_name` (by name, as
    make_agent builds them): game g on duel seed `match_seed(seed, g)`, `a` as player_0 in even
    games; a's score per game (1 a win, 0.5 a draw, 0 a loss)."""
    from rune_env.duel import RuneDuelEnv
    from rune_env.rules import load_rules

    from agents import make_agent

    from .duels import match_seed, play_duel
    rules = load_rules(rules_path) if rules_path else None
    env = RuneDuelEnv(rules=rules) if rules is not None else RuneDuelEnv()
    a = make_agent(a_name, env.rules, seed=0)
    b = make_agent(b_name, env.rules, seed=0)
    out = []
    for g in range(start, start + count):
        seat = g % 2
        players = (a, b) if seat == 0 else (b, a)
        res = play_duel(env, players, match_seed(seed, g), agent_seeds=(g, g))
        out.append(0.5 if res["winner"] is None else float(res["winner"] == seat))
    return out
