"""A pool's shop ceiling: how well a player who must buy from the shop could do against it, at
best, round by round, and what that allows a run.

The best response (`exploitability`) and the clear ceiling built on it have every kind on offer.
A run does not: each round it sees one view of `run.shop_rune_offers` runes drawn uniformly from
the unlocked kinds (and `run.shop_artifact_offers` artifacts), and each further view costs
`run.reroll_cost`. Archmage's round 1 shows what that is worth: the best board with every kind
on offer beats nearly all of its ghosts as a run fields them, and needs four particular runes.

Here, for round r and each of `draws` shop draws (from a generator seeded [seed, round, stream,
draw], never a run's), a *clairvoyant* player sees r views free (one a round so far) and k more
paid ones (k = 0 .. `views`), knows all of them in advance, and fields the best board reachable
from everything those views offered, with the mana it has had by round r less k views' price
(`shop_budget`): the search player's target search (`agents.search.target`, no further rerolls,
no action cap) for every core, climbing from each ghost and metagame board of the round, scored
against the round's ghosts as a run fields them (`fielded_ghosts`: the run's seat, the rank's
extra runes). The best of those boards over k and cores is the draw's; the round's shop-limited
win rate is the mean over the draws, with a 95% interval over them (Wilson's on the draws' spread). Beside it, the same
search with every kind on offer at the same mana (one search a core, no draws), and the run that
allows: the gap between the two runs is what the shop costs a player at the rank.

Why it bounds a fair player (up to the search missing a board, as the best response can): any
player's board in round r is made of runes some view it saw offered, bought with at most the
mana it has had less the views it paid for; the clairvoyant picks its views and buys with
hindsight and loses nothing to sales. It is generous on purpose: the core is chosen afresh each
round, the mana counts every reward round as mana (`run.reward_mana`) but no furnace or relic,
and every kind is unlocked as in a run. Rounds are independent here (a run's views accumulate, so
its rounds' boards are not), and the run's figures (`run_outcome` on each round's mean win and
draw rates; rounds not measured count as won) are those of a player as good as the clairvoyant in
every round: a ceiling for players who meet the shop, where the clear ceiling's best response is
one for players who do not.

A run's core is not chosen afresh: it is the run's first choice, made once with round 1's shop on
display (D-36). Each draw also keeps its best board in every core, and `core_bounds` gives the
run of a clairvoyant held to one core: each core held all run, and the core picked seeing round
1's draw (the ceiling for a player who meets the shop with the run's core).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from rune_env.rules import Board, Rules
from rune_env.run.loop import new_run
from rune_env.run.opponents import Pool
from rune_env.run.ranks import rank_effects

from agents.search.assets import Assets
from agents.search.boards import Layout, board_cost
from agents.search.rolling import draw_views
from agents.search.scoring import SeatScorer
from agents.search.target import ClimbSettings, search_target

from .clear_ceiling import FIELDINGS, _percent, fielded_ghosts, run_outcome, seat_rates
from .planner_search import metagame_boards

SHOP_STREAM = 17        # [seed, round, stream, draw]: a draw's shop views (after PLANNER_STREAM)
FREE_STREAM = 18        # [seed, round, stream, core]: the every-kind search
DRAWS, DRAWS_MAX = 24, 1000         # shop draws a round (each a search per core and view count)
VIEWS, VIEWS_MAX = 4, 20            # paid views at most (each a whole search a core)


@dataclass(frozen=True)
class ShopRound:
    """One round's shop-limited best responses (the module docstring)."""

    round: int
    mana: int                       # the mana a player has had by the round (`shop_budget`)
    wins: tuple[float, ...]         # each draw's best board: its win rate in the run's seat
    draws: tuple[float, ...]        # ... and its draw rate
    views: tuple[int, ...]          # ... and the paid views it used
    board: Board                    # the board of the draw nearest the mean win rate
    free: tuple[float, float]       # (win, draw) rates with every kind on offer
    # each draw's best board in each core searched (win, draw): draws x cores, and those cores
    by_core: tuple[tuple[tuple[float, float], ...], ...] = ()
    cores: tuple[str, ...] = ()

    @property
    def win_rate(self) -> float:
        return float(np.mean(self.wins))

    def core_rates(self, c: int) -> tuple[float, float]:
        """The mean (win, draw) rates over the draws of the best boards in core number c."""
        return (float(np.mean([x[c][0] for x in self.by_core])),
                float(np.mean([x[c][1] for x in self.by_core])))

    @property
    def draw_rate(self) -> float:
        return float(np.mean(self.draws))

    @property
    def ci(self) -> tuple[float, float]:
        """95% interval of the mean win rate over the draws: Wilson's on an effective number of
        draws (`agents.evaluation.runs.wilson_mean`), never of zero width (a normal interval
        was, for one draw or draws that agree)."""
        from agents.evaluation.runs import wilson_mean
        _, lo, hi = wilson_mean([float(w) for w in self.wins], 1.0)
        return lo, hi

    def to_json(self, rules: Rules) -> dict:
        return {"round": self.round, "mana": self.mana, "win_rate": self.win_rate,
                "ci": list(self.ci), "draw_rate": self.draw_rate, "wins": list(self.wins),
                "draws": list(self.draws), "views": list(self.views),
                "board": self.board.to_json(rules), "cost": board_cost(self.board, rules),
                "free": {"win": self.free[0], "draw": self.free[1]},
                "by_core": {core: dict(zip(("win_rate", "draw_rate"), self.core_rates(c)))
                            for c, core in enumerate(self.cores) if self.by_core}}


@dataclass(frozen=True)
class ShopCeiling:
    """A run's clear chance and expected wins with each round's shop-limited rates."""

    point: float
    wins: float
    lamps: int
    rounds: tuple[ShopRound, ...]
    counted_won: tuple[int, ...]    # rounds a clear can need that were not measured
    free_point: float               # the same run with every kind on offer (the shop's price)
    free_wins: float
    # the run's core (`core_bounds`): each core held all run, and the core picked seeing round 1
    fixed_cores: dict[str, tuple[float, float]] = field(default_factory=dict)  # core: (clear, wins)
    core_point: float = 0.0
    core_wins: float = 0.0

    @property
    def best_core(self) -> str | None:
        """The core whose run clears most often held all run (ties: the more wins)."""
        return max(self.fixed_cores, key=lambda c: self.fixed_cores[c], default=None)

    def to_json(self, rules: Rules) -> dict:
        return {"point": self.point, "wins": self.wins, "lamps": self.lamps,
                "counted_won": list(self.counted_won), "free_point": self.free_point,
                "free_wins": self.free_wins,
                "run_core": {"point": self.core_point, "wins": self.core_wins,
                             "best_core": self.best_core,
                             "fixed": {c: {"point": p, "wins": w}
                                       for c, (p, w) in self.fixed_cores.items()}},
                "rounds": [r.to_json(rules) for r in self.rounds]}


def shop_budget(rules: Rules, round_: int, rank: int | str) -> int:
    """The most mana a player of `rank` has had by round r without furnaces or relics: the start
    mana, r - 1 incomes with the rank's delta (never below 0, D-38), and `run.reward_mana` for
    every reward round up to r (the reward choice comes at the start of its round, so its mana
    is there to spend in it)."""
    run = rules.spec.run
    income = max(0, run.income + rank_effects(rules, rank).income_delta)
    rewards = (0 if round_ < run.reward_first_round
               else 1 + (round_ - run.reward_first_round) // run.reward_every)
    return run.start_mana + income * (round_ - 1) + run.reward_mana * rewards


def core_bounds(rounds: Sequence[ShopRound], cores: Sequence[str], lamps: int, wins_to_clear: int,
                round_cap: int) -> tuple[dict[str, tuple[float, float]], float, float]:
    """What the run's core costs the ceiling. A run's core is chosen once, at its start, with
    round 1's shop on display (D-36; `rune_env.run.loop.new_run`), where the rounds above each
    pick their best core afresh. Returns each core's run held all run ((clear chance, wins) with
    that core's mean rates in every round), and the run of a player who picks the core seeing
    round 1: for each round-1 draw the core whose run is best given that draw's board there (the
    later rounds at the core's means, their draws being independent of round 1's), averaged over
    the draws; clear chance and wins each picked for itself, so each is a ceiling of its own.
    Without round 1 measured that is the best single core."""
    def outcome(c: int, first: tuple[float, float] | None) -> tuple[float, float]:
        rates = {x.round: x.core_rates(c) for x in rounds}
        if first is not None:
            rates[1] = first
        return run_outcome(rates, lamps, wins_to_clear, round_cap)

    fixed = {core: outcome(c, None) for c, core in enumerate(cores)}
    first = next((x for x in rounds if x.round == 1), None)
    if first is None:
        return (fixed, max((p for p, _ in fixed.values()), default=0.0),
                max((w for _, w in fixed.values()), default=0.0))
    picked = [[outcome(c, draw[c]) for c in range(len(cores))] for draw in first.by_core]
    return (fixed, float(np.mean([max(p for p, _ in d) for d in picked])),
            float(np.mean([max(w for _, w in d) for d in picked])))


def check_cores(rules: Rules, cores: Sequence[str] | None) -> tuple[str, ...]:
    """`cores` as a tuple (None: all the rules' cores), or ValueError naming an unknown or
    repeated one."""
    if cores is None:
        return tuple(rules.spec.cores)
    for core in cores:
        if core not in rules.spec.cores:
            raise ValueError(f"unknown core {core!r} (one of {', '.join(rules.spec.cores)})")
    if len(set(cores)) < len(cores):
        raise ValueError("a core is named twice")
    return tuple(cores)


def shop_draw(rules: Rules, pool: Pool, rank: int | str, round_: int, draw: int, views: int,
              boards: int, seed: int, fieldings: int = FIELDINGS,
              cores: Sequence[str] | None = None
              ) -> tuple[float, float, int, Board, tuple[tuple[float, float], ...]] | None:
    """(win rate, draw rate, paid views, board, each core's (win, draw) rates) of one draw's
    clairvoyant best board and of its best board in each of `cores` (default `rules.spec.cores`;
    (0, 0) where none fits the mana), or None if the round has no ghosts. `draw` -1: every kind
    on offer at the round's mana instead (`Assets.shopping_freely`), the same search and scoring:
    what the shop costs."""
    ghosts, weights, seat = fielded_ghosts(pool, rules, rank, round_, fieldings, seed)
    if not ghosts:
        return None
    scorer = SeatScorer(rules, ghosts, weights, seat)
    budget = shop_budget(rules, round_, rank)
    starts = [Layout.of(b) for b in (*pool.boards(round_, rules), *metagame_boards(rules, round_))]
    if draw < 0:
        offers = [(budget, None, None)]
    else:
        # every kind the run's shop draws from: a fresh run's (all unlocked, as in a run)
        kinds = list(new_run(0, rules, rank=rank).unlocked)
        seen = draw_views(rules, kinds, round_ + views,
                          np.random.default_rng([seed, round_, SHOP_STREAM, draw]))
        offers = [(budget - k * rules.spec.run.reroll_cost,
                   tuple(x for v in seen[:round_ + k] for x in v[0]),
                   tuple(x for v in seen[:round_ + k] for x in v[1])) for k in range(views + 1)]
    best: tuple[float, float, float, int, Board] | None = None
    cores = check_cores(rules, cores)
    numbers = [list(rules.spec.cores).index(x) for x in cores]  # seeds whatever else is searched
    by_core = [(-1.0, 0.0, 0.0)] * len(cores)   # each core's best (score, win, draw)
    for k, (mana, runes, arts) in enumerate(offers):
        if mana < 0:
            break
        for c, (core, number) in enumerate(zip(cores, numbers)):
            # a fresh run at round r with that mana: its slots, sectors and the round's max HP;
            # its shop is the views' offers (or every kind), its own generator never used
            state = new_run(0, rules, rank=rank, core=core)
            state.round, state.mana = round_, mana
            assets = Assets.of(state)
            assets = (assets.shopping_freely() if runes is None else
                      replace(assets, shop_runes=runes, shop_artifacts=arts, actions_left=10**6))
            core_starts = [x.in_core(core) for x in starts]
            layout, _ = search_target(assets, scorer, core_starts, ClimbSettings(boards=boards),
                                      np.random.default_rng(
                                          [seed, round_, SHOP_STREAM, draw, k, number]
                                          if draw >= 0 else [seed, round_, FREE_STREAM, number]),
                                      rerolls=False)
            board = assets.board_of(layout)
            if board_cost(board, rules) > mana:
                continue
            win, drawn = seat_rates(board, ghosts, weights, seat, rules, jobs=1)
            if win + drawn / 2 > by_core[c][0]:
                by_core[c] = (win + drawn / 2, win, drawn)
            if best is None or win + drawn / 2 > best[0]:
                best = (win + drawn / 2, win, drawn, k, board)
    if best is None:
        return None
    return (best[1], best[2], best[3], best[4].replace(round=round_),
            tuple((w, d) for _, w, d in by_core))


def shop_ceiling(rules: Rules, pool: Pool, rank: int | str, rounds: Sequence[int],
                 draws: int = DRAWS, views: int = VIEWS, boards: int = 600, seed: int = 0,
                 progress: Callable[[int], None] | None = None,
                 ray: str | None = None, cores: Sequence[str] | None = None) -> ShopCeiling:
    """Each round's shop-limited best responses over `draws` draws and its best board with
    every kind on offer at the same mana, and the runs they allow (rounds without ghosts are left
    out). `cores`: the cores the clairvoyant may play (default all the rules'; a core's figures
    are the same whichever others are searched beside it). `ray`: an address
    (agents/cli/fanout.py) to play the draws as Ray tasks (the same results: a draw depends on
    its seeds only). `progress` gets 1 per draw done."""
    from agents.cli.fanout import run_tasks

    class _Ticks:
        def update(self, _weight: int) -> None:
            if progress is not None:
                progress(1)

    # each round's draws, then its every-kind search (draw -1)
    cores = check_cores(rules, cores)
    tasks = [(rules, pool, rank, r, d, views, boards, seed, FIELDINGS, cores) for r in rounds
             for d in [*range(draws), -1]]
    done = run_tasks(shop_draw, tasks, ray, _Ticks())
    out = []
    for i, r in enumerate(rounds):
        *got, free = done[i * (draws + 1):(i + 1) * (draws + 1)]
        got = [x for x in got if x is not None]
        if not got:
            continue
        wins = tuple(x[0] for x in got)
        mean = float(np.mean(wins))
        nearest = min(got, key=lambda x: abs(x[0] - mean))
        out.append(ShopRound(r, shop_budget(rules, r, rank), wins, tuple(x[1] for x in got),
                             tuple(x[2] for x in got), nearest[3],
                             (free[0], free[1]) if free is not None else (1.0, 0.0),
                             tuple(x[4] for x in got), cores))
    lamps = rank_effects(rules, rank).lamps
    run = rules.spec.run
    point, wins = run_outcome({x.round: (x.win_rate, x.draw_rate) for x in out}, lamps,
                              run.wins_to_clear, run.round_cap)
    free_point, free_wins = run_outcome({x.round: x.free for x in out}, lamps,
                                        run.wins_to_clear, run.round_cap)
    needed = range(1, min(run.round_cap, run.wins_to_clear + lamps - 1) + 1)
    measured = {x.round for x in out}
    fixed, core_point, core_wins = core_bounds(out, cores, lamps,
                                               run.wins_to_clear, run.round_cap)
    return ShopCeiling(point, wins, lamps, tuple(out),
                       tuple(r for r in needed if r not in measured), free_point, free_wins,
                       fixed, core_point, core_wins)


def format_shop_ceiling(c: ShopCeiling, rules: Rules) -> str:
    lines = [f"shop ceiling ({c.lamps} lamps): a player as good as a clairvoyant of its own shop "
             f"views every round clears {_percent(c.point)} of runs and wins {c.wins:.2f} "
             f"battles a run" + (f"; rounds {', '.join(map(str, c.counted_won))} not measured, "
                                 f"counted as won" if c.counted_won else "")
             + f"; with every kind on offer at the same mana it would clear "
               f"{_percent(c.free_point)} and win {c.free_wins:.2f}"]
    if c.fixed_cores:
        best = c.best_core
        lines.append(f"  with the run's core (chosen once, seeing round 1's shop) at most "
                     f"{_percent(c.core_point)} clears and {c.core_wins:.2f} wins; the best core "
                     f"held all run, {best}: {_percent(c.fixed_cores[best][0])} and "
                     f"{c.fixed_cores[best][1]:.2f}")
    for x in c.rounds:
        lo, hi = x.ci
        paid = np.bincount(np.asarray(x.views, dtype=np.int64))
        used = ", ".join(f"{k} paid x{n}" for k, n in enumerate(paid) if n)
        lines.append(f"  round {x.round}: mana {x.mana}, wins {100 * x.win_rate:.0f}% "
                     f"[{100 * lo:.0f}, {100 * hi:.0f}] of the ghosts as fielded, draws "
                     f"{100 * x.draw_rate:.0f}% ({len(x.wins)} shop draws; views {used}); "
                     f"a typical board costs {board_cost(x.board, rules)}; every kind on offer "
                     f"{100 * x.free[0]:.0f}%"
                     + ("; by core " + ", ".join(f"{core} {100 * x.core_rates(i)[0]:.0f}%"
                                                 for i, core in enumerate(x.cores))
                        if x.by_core else ""))
    return "\n".join(lines)


__all__ = ["DRAWS", "DRAWS_MAX", "SHOP_STREAM", "ShopCeiling", "ShopRound", "VIEWS",
           "VIEWS_MAX", "check_cores", "core_bounds", "format_shop_ceiling", "shop_budget",
           "shop_ceiling", "shop_draw"]
