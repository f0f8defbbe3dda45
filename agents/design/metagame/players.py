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
a 95% interval over the runs (one board a run; Wilson's on their spread, as mean wins have it), and the gap to the best response there.

Runs are evaluation seeds (`agents.evaluation.runs.eval_run_seed`), as evaluate.py plays them:
up to its first lost lamp, a run here is evaluate.py's run (the agent sees the same observations
and state; `agents.design.pools.drafting.fielded_boards` with `refill`). What the gap says: how
much of the pool's exploitability a player of the agent's strength can take with the shop it is
dealt; a pool that a player beats by p in a round while the best response beats it by p + gap.

Where the gap comes from (`holdings=True`, the script's --holdings): at the start of each
preparation whose board is measured (the round's choices made, before its first action), what
the player's run holds is kept (`agents.search.assets.Assets`: its board, hand, artifacts, open
sectors and mana, the shop on display). From it the search player's target search (on the choose
ghosts, in the round's seat, from the player's own board, the choose ghosts and the metagame's
boards, with the budget of the best response's second search) finds two boards, each measured
on the report ghosts as the player's: the best it could field **with the shop on display**
(no reroll), and the best **with every kind on offer** (its holdings and mana as they are,
unwanted runes sold as a sale returns them). So a round's gap to the best response splits into
three parts: the best response less the every-kind board is what the player's earlier rounds
left it (its purchases, sales and rerolls, against a best response that starts from nothing
with all the mana it has had); the every-kind board less the display board is what this
round's shop withheld before any reroll; the display board less its own board is its play in
the round, rerolls included (below zero where its rerolls found better than the display held).
Each search draws from a generator seeded [seed, round, stream, board, which], so the same
seed gives the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from rune_env.rules import Board, Rules
from rune_env.run.opponents import BudgetOpponents, Pool, PoolOpponents

from agents.design.audit import Opponents
from agents.search.assets import Assets
from agents.search.boards import Layout
from agents.search.target import ClimbSettings, search_target

from .exploitability import ExploitSettings, RoundExploit, rounds_table, split_pool
from .oracle import PayoffEvaluator
from .planner_search import choose_scorer, metagame_boards

HOLDINGS_STREAM = 23    # [seed, round, stream, board, which]: a holdings search
Rate = tuple[float, float, float]       # a mean win rate and its 95% interval


@dataclass(frozen=True)
class Holdings:
    """What a player's own runs allowed in a round (the module docstring): the mean win rate on
    the report ghosts, with a 95% interval over the runs (`_mean_ci`), of the best board from what
    each run held at the preparation's start, with the shop on display and with every kind."""

    display: Rate
    every_kind: Rate

    def to_json(self) -> dict:
        return {name: {"win_rate": rate[0], "ci": [rate[1], rate[2]]}
                for name, rate in (("display", self.display), ("every_kind", self.every_kind))}


@dataclass(frozen=True)
class PlayerRound:
    round: int
    boards: int                     # boards measured: one a run
    win_rate: float                 # the mean of its boards' win rates on the report ghosts
    ci: tuple[float, float]         # 95% interval of that mean over the runs (_mean_ci)
    best: float | None              # the best response's win rate there (None: not measured)
    holdings: Holdings | None = None    # what its runs held allowed (None: not measured)

    @property
    def gap(self) -> float | None:
        return None if self.best is None else self.best - self.win_rate

    def to_json(self) -> dict:
        out = {"round": self.round, "boards": self.boards, "win_rate": self.win_rate,
               "ci": list(self.ci), "best_response": self.best, "gap": self.gap}
        if self.holdings is not None:
            out["holdings"] = self.holdings.to_json()
        return out


def pool_rank(pool: Pool, rules: Rules) -> int:
    """The index of the pool's rank; ValueError naming the pool's rank when the rules have none
    such (a metagame mixture or a hand-made pool has no rank a player could play)."""
    names = [r.id for r in rules.spec.ranks]
    if pool.rank not in names:
        raise ValueError(f"the pool's rank {pool.rank!r} is not one of {', '.join(names)}: "
                         f"players and the shop ceiling play at a pool's rank")
    return names.index(pool.rank)


def fielded_by_round(agent_name: str, rules: Rules, pool: Pool, rounds: Sequence[int], runs: int,
                     seed: int, progress: Callable[[int], None] | None = None,
                     starts: dict[int, list[Assets]] | None = None) -> dict[int, list[Board]]:
    """The boards `agent_name` fields in each of `rounds` over `runs` runs of evaluation seed
    `seed` at the pool's rank against the pool, lamps never out (the module docstring).
    `starts`, if given, is filled with what each run held at the start of the preparation of
    each of those boards, in the same order (round -> [Assets])."""
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
    held: dict = {}     # the latest preparation's key (round, battles fought) and its start

    def keep_start(state) -> None:
        key = (state.round, len(state.battles))
        if state.pending is None and key != held.get("key"):
            held["key"], held["assets"] = key, Assets.of(state)

    current = None
    for run_seed, battle in fielded_boards(env, agent, seed, runs, max(rounds), refill=True,
                                           before_act=keep_start if starts is not None else None):
        if progress is not None and current is not None and run_seed != current:
            progress(1)         # the run before this one is over
        current = run_seed
        if battle["round"] in wanted:
            out[battle["round"]].append(Board.from_json(battle["board"], rules))
            if starts is not None:
                starts.setdefault(battle["round"], []).append(held["assets"])
    if progress is not None and current is not None:
        progress(1)
    return out


def player_rounds(agent_name: str, rules: Rules, pool: Pool, settings: ExploitSettings,
                  runs: int, best: Sequence[RoundExploit] = (),
                  evaluator: PayoffEvaluator | None = None,
                  progress: Callable[[int], None] | None = None,
                  holdings: bool = False) -> list[PlayerRound]:
    """Per round of `settings.rounds` that the pool can be split in: the agent's boards against
    the report ghosts (the module docstring). `best`: the pool's exploitability results, whose
    win rates give each round's gap. The runs play on evaluation seed `settings.seed`.
    `holdings`: also what each run's holdings allowed (`holdings_rates`). `progress` gets 1 per
    run played and, with `holdings`, 1 per preparation whose holdings are searched."""
    evaluator = evaluator or PayoffEvaluator(rules, settings.jobs)
    starts: dict[int, list[Assets]] | None = {} if holdings else None
    by_round = fielded_by_round(agent_name, rules, pool, settings.rounds, runs, settings.seed,
                                progress, starts)
    best_rate = {x.round: x.measured.win_rate for x in best}
    out = []
    for r in settings.rounds:
        sets = split_pool(pool, rules, r, settings)
        if sets is None or not by_round[r]:
            continue
        choose, report = sets
        rates = [s.win_rate for s in evaluator.payoffs(by_round[r], report)]
        held = (None if starts is None else
                holdings_rates(rules, starts[r], choose, report, r, settings, evaluator,
                               progress))
        mean, lo, hi = _mean_ci(rates)
        out.append(PlayerRound(r, len(rates), mean, (lo, hi), best_rate.get(r), held))
    return out


def _mean_ci(rates: Sequence[float]) -> Rate:
    """The mean of win rates (each in [0, 1]) and its 95% interval: Wilson's on an effective
    number of boards, as mean wins have it (`agents.evaluation.runs.wilson_mean`). A normal
    interval has zero width when the boards agree: 30 boards that all won nothing were
    "0% [0, 0]", and two runs alike said the same; Wilson's is [0, 11%] and [0, 66%]."""
    from agents.evaluation.runs import wilson_mean
    return wilson_mean([float(r) for r in rates], 1.0)


def holdings_rates(rules: Rules, starts: Sequence[Assets], choose: Opponents, report: Opponents,
                   round_: int, settings: ExploitSettings, evaluator: PayoffEvaluator,
                   progress: Callable[[int], None] | None = None) -> Holdings:
    """The boards of `holdings_boards` measured on `report` as a player's are: their mean win
    rates with 95% intervals."""
    found = holdings_boards(rules, starts, choose, round_, settings, progress)
    rates = {name: _mean_ci([s.win_rate for s in evaluator.payoffs(boards, report)])
             for name, boards in found.items()}
    return Holdings(rates["display"], rates["every_kind"])


def holdings_boards(rules: Rules, starts: Sequence[Assets], choose: Opponents, round_: int,
                    settings: ExploitSettings, progress: Callable[[int], None] | None = None
                    ) -> dict[str, list[Board]]:
    """For each preparation's start, the best board found from its holdings with the shop on
    display ("display") and with every kind on offer ("every_kind"), chosen on `choose` in the
    round's seat (the module docstring). `progress` gets 1 per start."""
    scorer = choose_scorer(rules, choose, round_)
    climb = ClimbSettings(boards=settings.planner_boards)
    shared = [Layout.of(b) for b in (*choose.boards, *metagame_boards(rules, round_))]
    found: dict[str, list[Board]] = {"display": [], "every_kind": []}
    for i, assets in enumerate(starts):
        layouts = [assets.layout(), *(x.in_core(assets.core) for x in shared)]
        for which, (name, offer) in enumerate((("display", assets),
                                               ("every_kind", assets.shopping_freely()))):
            rng = np.random.default_rng([settings.seed, round_, HOLDINGS_STREAM, i, which])
            layout, _ = search_target(offer, scorer, layouts, climb, rng, rerolls=False)
            found[name].append(offer.board_of(layout))
        if progress is not None:
            progress(1)
    return found


def format_players(rows: list[tuple[str, list[PlayerRound]]], rounds: Sequence[int],
                   best: Sequence[RoundExploit], pool_name: str, runs: int) -> str:
    """One line for the best response and one per player: the win rate on the report ghosts
    by round, a player's with its interval and its gap to the best response; where its holdings
    were measured, two more lines under it: the best board from them with the shop on display
    and with every kind on offer (the module docstring)."""
    head = (f"players against {pool_name}'s report ghosts ({runs} runs each at its rank, lamps "
            f"never out; win rate [95% CI], gap to the best response)")
    table = [("best response", {x.round: f"{100 * x.measured.win_rate:5.1f}%" for x in best})]
    for name, results in rows:
        table.append((name, {x.round: _cell(x.win_rate, x.ci, x.gap) for x in results}))
        if any(x.holdings is not None for x in results):
            for label, part in (("  its holdings, display", "display"),
                                ("  its holdings, every kind", "every_kind")):
                table.append((label, {x.round: _cell(getattr(x.holdings, part)[0],
                                                     getattr(x.holdings, part)[1:], None)
                                      for x in results if x.holdings is not None}))
    return rounds_table(head, "", table, rounds, cell_width=26)


def _cell(rate: float, ci: Sequence[float], gap: float | None) -> str:
    gap_text = "" if gap is None else f" {100 * gap:+5.1f}"
    return f"{100 * rate:5.1f}% [{100 * ci[0]:4.1f}, {100 * ci[1]:5.1f}]{gap_text}"
