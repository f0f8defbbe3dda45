"""The second best-response search of `exploitability.py`: the search player's own target search
(`agents.search.target`), run from scratch with every kind on offer.

Why a second search: one search can miss the board that beats a pool. The best-response search
(`oracle.py`) climbs by the audit's edits from the pool's best boards, drafted boards and towers;
the player's target search moves differently (it plans purchases, merges and a hand, and climbs
from every start it is given), and on archmage's ghosts it found boards that won 51-53% of the
report ghosts in round 3 where the first found 21-39% (docs/DESIGNERS.md, "How exploitable the
pools are"). Neither finds all; the tool climbs both and keeps the better on the choose ghosts.

For each core of the rules and each of `seeds` seeds, the target search runs at the search's
budget (the player's mana by round r, or the rank's opponent budget) with every unlocked kind and
artifact on offer and no action cap (`Assets.shopping_freely`), in a fresh run of the pool's rank
at round r, in the seat a player has in that round, against the choose ghosts (weighted by
counts) only; its starts are each choose ghost and each metagame board of the round (public data
shipped with the rules, none if there is no metagame for them), played with the search's core.
Every draw comes from a generator seeded [seed, round, PLANNER_STREAM, core index, i], so the
same seed gives the same boards.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from rune_env.rules import Board, Rules
from rune_env.run.loop import new_run, player_seat
from rune_env.run.opponents import load_pool

from agents.design.audit import Opponents, board_cost
from agents.search.assets import Assets
from agents.search.boards import Layout
from agents.search.reference import meta_path
from agents.search.scoring import SeatScorer
from agents.search.target import ClimbSettings, search_target

PLANNER_STREAM = 13     # after oracle.py's DRAFT_STREAM and MUTATE_STREAM
SEEDS_MAX = 16          # seeds per core at most (each a whole target search)


def metagame_boards(rules: Rules, round_: int) -> list[Board]:
    """The shipped metagame's boards of the round (none without a metagame for these rules or
    for that round)."""
    path = meta_path(rules)
    if not path.is_file():
        return []
    meta = load_pool(path, rules, strict=True)
    return list(meta.boards(round_, rules)) if round_ in meta.rounds else []


def choose_scorer(rules: Rules, choose: Opponents, round_: int) -> SeatScorer:
    """The target search's scorer on the choose ghosts (weighted by their counts), in the seat a
    player has in round `round_`: what both this search and a player's holdings search
    (`players.holdings_boards`) pick their boards by."""
    return SeatScorer(rules, list(choose.boards), np.asarray(choose.weights, np.float64),
                      player_seat(round_))


def planner_responses(rules: Rules, choose: Opponents, round_: int, budget: int,
                      rank: int | str | None, seeds: int, boards: int,
                      seed: int | Sequence[int], meta: Sequence[Board] | None = None
                      ) -> list[Board]:
    """The target search's best board for each core x seed (the module docstring), in that
    order, those within `budget` (`board_cost`). `meta`: the metagame boards to start from
    (default the shipped metagame's of the round)."""
    seeds_ = [seed] if isinstance(seed, int) else list(seed)
    meta = metagame_boards(rules, round_) if meta is None else list(meta)
    scorer = choose_scorer(rules, choose, round_)
    climb = ClimbSettings(boards=boards)
    out = []
    for c, core in enumerate(rules.spec.cores):
        # a fresh run at round r with the budget as its mana: its slots, sectors and max HP;
        # the run's own generator is never used (the search draws from its own)
        state = new_run(0, rules, rank=rank if rank is not None else 0, core=core)
        state.round, state.mana = round_, budget
        assets = Assets.of(state).shopping_freely()
        starts = [Layout.of(b).in_core(core) for b in (*choose.boards, *meta)]
        for i in range(seeds):
            rng = np.random.default_rng([*seeds_, round_, PLANNER_STREAM, c, i])
            layout, _ = search_target(assets, scorer, starts, climb, rng, rerolls=True)
            board = assets.board_of(layout)
            # the tool's best response is a board of the budget's cost at most, as the first
            # search's (a plan's mana and a board's cost are reckoned apart: keep the rule one)
            if board_cost(board, rules) <= budget:
                out.append(board)
    return out


__all__ = ["PLANNER_STREAM", "SEEDS_MAX", "choose_scorer", "metagame_boards", "planner_responses"]
