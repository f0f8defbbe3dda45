"""Looking a round ahead: the board to build this round picked also by what it leaves the next
round (the planner's `ahead` knob).

A round's search scores a board by this round's battles (and, from `goal_from`, the share of a
metagame goal it holds). What a round buys is most of the next round's board: where a run's
holdings came from, the planner's gap from round 2 on is mostly what its earlier rounds left it
(docs/RESULTS.md, "Where the planner's gap comes from"). With `ahead=N` the board it builds is
picked among the search's **finalists**, the best boards it scored whose holdings differ (their
runes, artifacts and the mana their plan spends: boards that only place the same runes elsewhere
leave the next round the same), by

    value this round + alive x mean, over N views of the next round's shop, of the value of the
                               best board the next round's search finds from those holdings

where `alive` is 1 while the run has a lamp to spare and the board's payoff this round when it
has one lamp left (a lost last lamp ends the run: there is no next round to weigh). The next round
is the run's as its player can know it: its holdings, its income (`rune_env.run.loop.income`),
its round's reference boards in its seat, its boss rules (public from the run's start), and shops
the player draws itself from the shop's public odds; every finalist faces the same views (common
draws, so their comparison is not luck).

Fair: the next round is a private copy of the run (`private_copy`: no generator), and its views
are the player's own draws, never the run's.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

from rune_env.rules import Board
from rune_env.run.loop import income
from rune_env.run.state import RunState

from .assets import Assets, private_copy
from .boards import Layout
from .scoring import SeatScore

VIEWS_AHEAD_MAX = 32          # views of the next round a finalist is weighed on (the knob's bound)
FINALISTS = 4           # boards of distinct holdings weighed a round ahead
# A search of the next round: (its private state, the tail of its generator's seed) -> the score
# of the best board found (the planner's target search, its reference of that round, rerolls
# priced as its plans price them).
NextSearch = Callable[[RunState, tuple], SeatScore]


def holdings(board: Board, mana: int) -> tuple:
    """What a board leaves the next round: its runes (board and hand), artifacts and the mana
    its plan spends; not where they stand (moving a rune is free of mana)."""
    return (tuple(sorted([*board.runes.values(), *board.hand])),
            tuple(sorted(board.artifacts.values())), mana)


def finalists(scored: Sequence[tuple[Board, SeatScore, int]], count: int = FINALISTS
              ) -> list[tuple[Layout, SeatScore, int]]:
    """The `count` best boards of a search's scored boards (board, score, mana spent) whose
    holdings differ, best first, as (layout, score, mana spent)."""
    out, seen = [], set()
    for board, score, mana in sorted(scored, key=lambda t: t[1].key(), reverse=True):
        key = holdings(board, mana)
        if key in seen:
            continue
        seen.add(key)
        out.append((Layout.of(board), score, mana))
        if len(out) == count:
            break
    return out


def next_round(state: RunState, layout: Layout, mana_spent: int,
               view: tuple[Sequence[str], Sequence[str]]) -> RunState:
    """A private copy of the run as the next round's preparation would find it after fielding
    `layout` (its plan spending `mana_spent`): the layout's runes, hand, artifacts (those it does
    not place kept in the inventory, as far as the slots hold them) and sectors, the mana left
    plus the next round's income, and `view` on display."""
    assets = Assets.of(state)
    nxt = private_copy(state)
    nxt.pending = None
    nxt.board = dict(layout.runes)
    nxt.hand = list(layout.hand)
    nxt.artifacts = dict(layout.artifacts)
    spare = Counter(assets.owned_artifacts()) - Counter(layout.artifacts.values())
    nxt.artifact_inventory = list(spare.elements())[: max(0, state.artifact_slots
                                                          - len(layout.artifacts))]
    opened = assets.fielded_sectors(layout)
    nxt.open_sectors = [*state.open_sectors,
                        *sorted(s for s in opened if s not in state.open_sectors)]
    nxt.sun_element = layout.sun_element
    nxt.mana = state.mana - mana_spent
    nxt.round = state.round + 1
    nxt.mana += income(nxt)
    nxt.prep_actions = 0
    nxt.shop_runes, nxt.shop_artifacts = list(view[0]), list(view[1])
    return nxt


def pick_ahead(state: RunState, scored: Sequence[tuple[Board, SeatScore, int]],
               search: NextSearch, views: Sequence[tuple[Sequence[str], Sequence[str]]],
               count: int = FINALISTS) -> tuple[Layout, SeatScore] | None:
    """The finalist of `scored` with the best value this round plus the next round's mean value
    over `views` (the module docstring), and its score this round; None when nothing was
    scored. With no views, or in the run's last round, the best this round."""
    found = finalists(scored, count)
    if not found:
        return None
    last = state.rules.spec.run.round_cap
    if not views or state.round >= last or len(found) == 1:
        return found[0][0], found[0][1]
    best: tuple[float, Layout, SeatScore] | None = None
    for layout, score, mana in found:
        later = sum(search(next_round(state, layout, mana, view), (v,)).value
                    for v, view in enumerate(views)) / len(views)
        alive = 1.0 if state.lamps > 1 else score.payoff
        value = score.value + alive * later
        if best is None or value > best[0] + 1e-12:
            best = (value, layout, score)
    return best[1], best[2]


__all__ = ["VIEWS_AHEAD_MAX", "FINALISTS", "finalists", "holdings", "next_round", "pick_ahead"]
