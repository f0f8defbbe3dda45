"""How close players come to the best response: the boards an agent fields in runs at a pool's rank,
measured as exploitability measures the best response.

A pool's exploitability (`exploitability`) is the win rate of one searched board, with every kind
on offer and a player's budget, against the report half of the pool's ghosts of a round. A
player has a shop, its own mana and the board it built in earlier rounds. `player_rounds` plays
`runs` runs of an agent at the pool's rank against that pool, with the lamps never out (a lost
one is lit again, and the rules made endless play on past the 10th win) so
that every run reaches every measured round, and scores the board it fields in each measured
round against the same report ghosts as the best response (the same draws and split:
`split_pool` with the same settings), both seatings, weighted by counts. Per round: the mean of its boards' win rates with
a normal 95% interval over the runs (one board a run), and the gap to the best response there.

Runs are evaluation seeds (`agents.evaluation.runs.eval_run_seed`), as evaluate.py plays them:
up to its first lost lamp, a run here is evaluate.py's run (the agent sees the same observations
and state; `agents.design.pools.drafting.fielded_boards` with `refill`). What the gap says: how
much of the pool's exploitability a player of the agent's strength can take with the shop it is
dealt; a pool that a player beats by p in a round while the best response beats it by p + gap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from rune_env.rules import Board, Rules
from rune_env.run.opponents import BudgetOpponents, Pool, PoolOpponents

from .exploitability import ExploitSettings, RoundExploit, rounds_table, split_pool
from .oracle import PayoffEvaluator


@dataclass(frozen=True)
class PlayerRound:
    round: int
    boards: int                     # boards measured: one a run
    win_rate: float                 # the mean of its boards' win rates on the report ghosts
    ci: tuple[float, float]         # normal 95% interval of that mean over the runs
    best: float | None              # the best response's win rate there (None: not measured)

    @property
    def gap(self) -> float | None:
        return None if self.best is None else self.best - self.win_rate

    def to_json(self) -> dict:
        return {"round": self.round, "boards": self.boards, "win_rate": self.win_rate,
                "ci": list(self.ci), "best_response": self.best, "gap": self.gap}


def pool_rank(pool: Pool, rules: Rules) -> int:
    """The index of the pool's rank; ValueError naming the pool's rank when the rules have none
    such (a metagame mixture or a hand-made pool has no rank a player could play)."""
    names = [r.id for r in rules.spec.ranks]
    if pool.rank not in names:
        raise ValueError(f"the pool's rank {pool.rank!r} is not one of {', '.join(names)}: "
                         f"players and the shop ceiling play at a pool's rank")
    return names.index(pool.rank)


def fielded_by_round(agent_name: str, rules: Rules, pool: Pool, rounds: Sequence[int], runs: int,
                     seed: int, progress: Callable[[int], None] | None = None
                     ) -> dict[int, list[Board]]:
    """The boards `agent_name` fields in each of `rounds` over `runs` runs of evaluation seed
    `seed` at the pool's rank against the pool, lamps never out (the module docstring)."""
    from agents import make_agent
    from agents.design.pools.drafting import fielded_boards
    from rune_env.envs.run_env import RuneRunEnv
    rank = pool_rank(pool, rules)
    env = RuneRunEnv(rank=rank, rules=rules, rules_overrides={"run.endless": True},
                     opponents=PoolOpponents(pool, rules, BudgetOpponents(rules)))
    # the agent sees the rules as given (its metagame and pools are found by their hash); only
    # the run loop plays on past the clear
    agent = make_agent(agent_name, rules, seed=seed)
    wanted = set(rounds)
    out: dict[int, list[Board]] = {r: [] for r in rounds}
    current = None
    for run_seed, battle in fielded_boards(env, agent, seed, runs, max(rounds), refill=True):
        if progress is not None and current is not None and run_seed != current:
            progress(1)         # the run before this one is over
        current = run_seed
        if battle["round"] in wanted:
            out[battle["round"]].append(Board.from_json(battle["board"], rules))
    if progress is not None and current is not None:
        progress(1)
    return out


def player_rounds(agent_name: str, rules: Rules, pool: Pool, settings: ExploitSettings,
                  runs: int, best: Sequence[RoundExploit] = (),
                  evaluator: PayoffEvaluator | None = None,
                  progress: Callable[[int], None] | None = None) -> list[PlayerRound]:
    """Per round of `settings.rounds` that the pool can be split in: the agent's boards against
    the report ghosts (the module docstring). `best`: the pool's exploitability results, whose
    win rates give each round's gap. The runs play on evaluation seed `settings.seed`."""
    from agents.evaluation.runs import mean_ci
    evaluator = evaluator or PayoffEvaluator(rules, settings.jobs)
    by_round = fielded_by_round(agent_name, rules, pool, settings.rounds, runs, settings.seed,
                                progress)
    best_rate = {x.round: x.measured.win_rate for x in best}
    out = []
    for r in settings.rounds:
        sets = split_pool(pool, rules, r, settings)
        if sets is None or not by_round[r]:
            continue
        report = sets[1]
        rates = [s.win_rate for s in evaluator.payoffs(by_round[r], report)]
        mean, lo, hi = mean_ci(rates)
        out.append(PlayerRound(r, len(rates), mean, (max(0.0, lo), min(1.0, hi)),
                               best_rate.get(r)))
    return out


def format_players(rows: list[tuple[str, list[PlayerRound]]], rounds: Sequence[int],
                   best: Sequence[RoundExploit], pool_name: str, runs: int) -> str:
    """One line for the best response and one per player: the win rate on the report ghosts
    by round, a player's with its interval and its gap to the best response."""
    head = (f"players against {pool_name}'s report ghosts ({runs} runs each at its rank, lamps "
            f"never out; win rate [95% CI], gap to the best response)")
    table = [("best response", {x.round: f"{100 * x.measured.win_rate:5.1f}%" for x in best})]
    table += [(name, {x.round: _cell(x) for x in results}) for name, results in rows]
    return rounds_table(head, "", table, rounds, cell_width=26)


def _cell(x: PlayerRound) -> str:
    gap = "" if x.gap is None else f" {100 * x.gap:+5.1f}"
    return f"{100 * x.win_rate:5.1f}% [{100 * x.ci[0]:4.1f}, {100 * x.ci[1]:5.1f}]{gap}"
