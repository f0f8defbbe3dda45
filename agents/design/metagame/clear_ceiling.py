"""A pool's clear ceiling: how often a run at its rank would clear if the player's board did as
well as the best response in every round, and how many wins such a run would have on average
(its wins ceiling).

A run clears with `run.wins_to_clear` wins before its lamps are out (the rank's lamps; a draw costs
nothing, a loss one lamp). If in round r the player's board wins a share w_r of its battles and
draws d_r, and the rounds are independent, the chance to clear is a sum over the run's paths,
computed round by round over (wins, losses) up to `run.round_cap`; so is the run's expected
number of wins (a run ends at its clear: at most wins_to_clear). With w_r and d_r the best
response's on all the pool's ghosts (`exploitability.py --clear-ceiling` measures without the
split: the pool is shipped, a player may study it, and a split deals a heavy ghost to one side
only, which held archmage's ceiling at 0.01-0.08% until the thirty-third session, where on all
its ghosts it is about 5%) this is the clear rate of a player
as good as that best response every round: a ceiling for players who meet the shop's luck and
their own history, where the best response has every kind on offer and a player's whole budget.
It is not a proof, nor a bound on runs: a search can miss a better board, a phoenix feather (a
relic that saves a lamp) is not counted, and the rates average both seatings against the ghosts
as drawn, where a run gives the player one seat a round and adds the rank's extra runes to its
ghosts, which moves a round's rate either way: `fielded_rates` plays the same boards so, and
`clear_ceiling(pool=...)` gives that run's figures too (archmage, seed 0: 26% clears and 6.5 wins
against 5.6% and 3.7; docs/DESIGNERS.md, "Can the rank be cleared at all"). Rounds not measured
count as won (the ceiling stays a ceiling), so measure every round up to wins_to_clear + lamps
- 1 (the last round a clear can need without draws) for a tight one; `upper` takes each
measured round's win rate at the upper end of its 95% interval. (Both are ceilings of these
rates because a run's clear and its wins can only rise with any round's win rate: a loss turned
into a win adds a win and spares a lamp.)

Why: a rank whose ceiling is near 0 cannot be cleared by any player, however strong (docs/
RESULTS.md, "Why no one clears archmage"); a designer who wants strong players to clear it
sometimes has to make some round easier, and this says which rounds hold the ceiling down. The
wins ceiling bounds what an evaluation's mean wins can show (docs/RESULTS.md, "Against the
acceptance").
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from rune_env.battle.fast import fast_battles
from rune_env.rules import Board, Rules
from rune_env.run.loop import field_opponent, player_seat
from rune_env.run.opponents import Pool
from rune_env.run.ranks import rank_effects

from agents.design.audit.scoring import field_reference

FIELDINGS = 8           # draws of the rank's extra runes per ghost in `fielded_rates`
_FIELD_STREAM = 3       # [seed, round, stream]: those draws


@dataclass(frozen=True)
class ClearCeiling:
    point: float                    # the ceiling with each round's measured win rate
    upper: float                    # with each round's win rate at its 95% upper bound
    lamps: int
    wins_to_clear: int
    measured: tuple[int, ...]       # the rounds whose best response was measured
    counted_won: tuple[int, ...]    # the rounds a clear can need that were not: counted as won
    wins: float                     # a run's expected wins with each round's measured win rate
    wins_upper: float               # with each round's win rate at its 95% upper bound
    fielded: "FieldedCeiling | None" = None     # the same boards as the run fields the ghosts

    def to_json(self) -> dict:
        out = {"point": self.point, "upper": self.upper, "lamps": self.lamps,
               "wins_to_clear": self.wins_to_clear, "measured": list(self.measured),
               "counted_won": list(self.counted_won), "wins": self.wins,
               "wins_upper": self.wins_upper}
        if self.fielded is not None:
            out["fielded"] = self.fielded.to_json()
        return out


@dataclass(frozen=True)
class FieldedCeiling:
    """The best responses' boards against the pool's ghosts as a run fields them
    (`fielded_rates`): the clear chance and expected wins of a run whose board is each round's
    best response, and each round's (win, draw) rates."""

    point: float
    wins: float
    rates: dict                     # round -> (win rate, draw rate) in the run's seat
    fieldings: int                  # draws of the rank's extra runes per ghost (1: none to draw)

    def to_json(self) -> dict:
        return {"point": self.point, "wins": self.wins, "fieldings": self.fieldings,
                "rates": {str(r): {"win": w, "draw": d}
                          for r, (w, d) in sorted(self.rates.items())}}


def run_outcome(rates: dict[int, tuple[float, float]], lamps: int, wins_to_clear: int,
                round_cap: int) -> tuple[float, float]:
    """(the chance that a run clears, its expected wins) when in round r it wins with probability
    rates[r][0] and draws with rates[r][1] (a round not in `rates` is won): it clears with
    wins_to_clear wins before `lamps` losses, by round_cap, and ends there, at its last lamp or
    after round_cap."""
    for r, (w, d) in rates.items():
        if not (0.0 <= w <= 1.0 and 0.0 <= d <= 1.0 - w + 1e-12):
            raise ValueError(f"round {r}: win and draw rates must be shares summing to at most 1; "
                             f"got {w}, {d}")

    @lru_cache(maxsize=None)
    def ahead(round_: int, wins: int, losses: int) -> tuple[float, float]:
        """(the chance to clear, the expected wins still to come) from this point."""
        if losses >= lamps:
            return 0.0, 0.0
        if wins >= wins_to_clear:
            return 1.0, 0.0
        if round_ > round_cap:
            return 0.0, 0.0
        w, d = rates.get(round_, (1.0, 0.0))
        lose = max(0.0, 1.0 - w - d)
        won, drawn, lost = (ahead(round_ + 1, wins + 1, losses), ahead(round_ + 1, wins, losses),
                            ahead(round_ + 1, wins, losses + 1))
        return (w * won[0] + d * drawn[0] + lose * lost[0],
                w * (1.0 + won[1]) + d * drawn[1] + lose * lost[1])

    return ahead(1, 0, 0)


def clear_chance(rates: dict[int, tuple[float, float]], lamps: int, wins_to_clear: int,
                 round_cap: int) -> float:
    """The chance that a run clears (`run_outcome`)."""
    return run_outcome(rates, lamps, wins_to_clear, round_cap)[0]


def fielded_rates(boards: dict[int, Board], pool: Pool, rules: Rules, rank: str | int | None,
                  fieldings: int = FIELDINGS, seed: int = 0,
                  jobs: int | None = None) -> dict[int, tuple[float, float]]:
    """Round -> (win rate, draw rate) of `boards[round]` against every ghost of the round, by its
    count, fielded as a run fields its opponent (`fielded_ghosts`). Like the exploitability, no
    boss rules: a run draws its own (D-43). Rounds without ghosts are left out."""
    rates = {}
    for round_, board in sorted(boards.items()):
        ghosts, weights, seat = fielded_ghosts(pool, rules, rank, round_, fieldings, seed)
        if ghosts:
            rates[round_] = seat_rates(field_reference(board, round_), ghosts, weights, seat,
                                       rules, jobs)
    return rates


def fielded_ghosts(pool: Pool, rules: Rules, rank: str | int | None, round_: int,
                   fieldings: int = FIELDINGS, seed: int = 0
                   ) -> tuple[list[Board], np.ndarray, int]:
    """The round's ghosts as a run fields them, with their weights, and the player's seat: the
    player in the run's seat of the round (`player_seat`: the first mover in odd rounds, D-8),
    each ghost with the rank's extra runes (`field_opponent`) drawn `fieldings` times from a
    generator seeded [seed, round, stream] (once where the rank adds none, or `rank` is None),
    each draw weighted by the ghost's count. No ghosts: an empty list."""
    effects = rank_effects(rules, rank) if rank is not None else None
    times = _fieldings(rules, rank, fieldings)
    rng = np.random.default_rng([seed, round_, _FIELD_STREAM])
    out, weights = [], []
    for ghost, count in zip(pool.boards(round_, rules), pool.counts(round_)):
        ghost = field_reference(ghost, round_)
        for _ in range(times):
            out.append(ghost if effects is None else field_opponent(ghost, effects, rules, rng))
            weights.append(count)
    return out, np.asarray(weights, dtype=np.float64), player_seat(round_)


def seat_rates(board: Board, ghosts: Sequence[Board], weights: np.ndarray, seat: int,
               rules: Rules, jobs: int | None = None) -> tuple[float, float]:
    """(win rate, draw rate) of `board` in `seat` against the weighted ghosts (the fast engine)."""
    pairs = [(board, g) if seat == 0 else (g, board) for g in ghosts]
    out = fast_battles(pairs, rules, workers=jobs)
    return (float(((out["winner"] == seat) * weights).sum() / weights.sum()),
            float(((out["winner"] < 0) * weights).sum() / weights.sum()))


def _fieldings(rules: Rules, rank: str | int | None, fieldings: int) -> int:
    """Draws of the extra runes per ghost: `fieldings` where the rank adds some, else 1."""
    extra = rank_effects(rules, rank).opponent_extra_runes if rank is not None else 0
    return fieldings if extra > 0 else 1


def clear_ceiling(results: Sequence, rules: Rules, rank: str | int | None,
                  pool: Pool | None = None, fieldings: int = FIELDINGS, seed: int = 0,
                  jobs: int | None = None) -> ClearCeiling:
    """The ceiling of a pool from its best responses (`RoundExploit`s): lamps of `rank` (None: a
    pool without a rank, the run's lamps). With `pool`, also the same boards against its ghosts
    as a run fields them (`fielded_rates`; rounds not measured count as won there too)."""
    run = rules.spec.run
    lamps = rank_effects(rules, rank).lamps if rank is not None else run.lamps
    fielded = None
    if pool is not None:
        rates = fielded_rates({x.round: x.board for x in results}, pool, rules, rank, fieldings,
                              seed, jobs)
        fielded = FieldedCeiling(*run_outcome(rates, lamps, run.wins_to_clear, run.round_cap),
                                 rates, _fieldings(rules, rank, fieldings))
    point, upper = {}, {}
    for x in results:
        m = x.measured
        draw = m.draws / m.battles if m.battles else 0.0
        point[x.round] = (m.win_rate, draw)
        hi = m.ci[1]
        upper[x.round] = (hi, min(draw, 1.0 - hi))
    needed = _rounds_a_clear_needs(rules, lamps)
    clears, wins = run_outcome(point, lamps, run.wins_to_clear, run.round_cap)
    clears_hi, wins_hi = run_outcome(upper, lamps, run.wins_to_clear, run.round_cap)
    return ClearCeiling(clears, clears_hi, lamps, run.wins_to_clear, tuple(sorted(point)),
                        tuple(r for r in needed if r not in point), wins, wins_hi, fielded)


def _rounds_a_clear_needs(rules: Rules, lamps: int) -> tuple[int, ...]:
    """Every round a clear with `lamps` can need without draws: 1 .. wins_to_clear + lamps - 1,
    within the round cap."""
    run = rules.spec.run
    return tuple(range(1, min(run.round_cap, run.wins_to_clear + lamps - 1) + 1))


def ceiling_rounds(rules: Rules) -> tuple[int, ...]:
    """Every round a clear can need at the rank with the most lamps (`_rounds_a_clear_needs`)."""
    lamps = max(rank_effects(rules, i).lamps for i in range(len(rules.spec.ranks)))
    return _rounds_a_clear_needs(rules, lamps)


def _percent(share: float) -> str:
    """A share as a percentage with a tenth, or with two significant digits under 1% (a ceiling
    of 0.08% is not 0.1%)."""
    return f"{100 * share:.1f}%" if share >= 0.01 or share == 0 else f"{100 * share:.2g}%"


def format_ceiling(c: ClearCeiling) -> str:
    text = (f"clear ceiling ({c.lamps} lamps, {c.wins_to_clear} wins clear): a player as good as "
            f"the best response every round clears {_percent(c.point)} of runs "
            f"({_percent(c.upper)} with each round at its 95% upper bound)")
    text += (f", and wins {c.wins:.2f} battles a run on average ({c.wins_upper:.2f} at the "
             f"upper bounds; a clear is {c.wins_to_clear})")
    if c.counted_won:
        rounds = ", ".join(map(str, c.counted_won))
        text += (f"; round {rounds} was not measured and counts as won" if len(c.counted_won) == 1
                 else f"; rounds {rounds} were not measured and count as won")
    if c.fielded is not None:
        f = c.fielded
        draws = (f"the rank's extra runes drawn {f.fieldings} times a ghost" if f.fieldings > 1
                 else "no extra runes to draw")
        text += (f"\n  the same boards against the ghosts as a run fields them (the run's seat "
                 f"each round, {draws}, no boss rules): clears {_percent(f.point)} of runs, "
                 f"wins {f.wins:.2f} a run; by round: " + ", ".join(
                     f"{r} {100 * w:.0f}%" for r, (w, _) in sorted(f.rates.items())))
    return text


__all__ = ["ClearCeiling", "FieldedCeiling", "ceiling_rounds", "clear_ceiling", "clear_chance",
           "fielded_ghosts", "fielded_rates", "format_ceiling", "run_outcome", "seat_rates"]
