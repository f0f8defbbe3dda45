"""The balance audit's measuring side: its settings, the reference boards and their split into
choose and report sets, what a board costs, and the scores of boards against a set of opponents
(`Evaluator`, on the fast engine). The method is described in the package docstring
(`agents/design/audit/__init__.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np

from rune_env.battle.analysis import SideSetup
from rune_env.battle.fast import fast_battles
from rune_env.rules import Board, Rules
from rune_env.run.opponents import Pool, draft_board, opponent_budget
from rune_env.terminal.profile import Profile
from rune_env.run.ranks import rank_effects

from agents.evaluation.runs import wilson
from agents.search.boards import board_cost, board_key, hand_slots  # noqa: F401  (re-exported)

# Seed streams of a round: [seed, round, stream, ...] (independent generators per purpose).
_DRAFT_STREAM, _SPLIT_STREAM, _SEARCH_STREAM, _POOL_STREAM, _START_STREAM, _FAST_STREAM = range(6)

# A fast kill (the package docstring): a knockout won while the opponent has taken at most this
# many turns, rest turns included. This is the audit's definition of the hole it hunts, not a
# number of the game (the rules file has no say in what counts as "killed before it acted").
FAST_KILL_TURNS = 1

MAX_BATCH_PAIRS = 60_000     # battles per fast_battles call: big enough to keep both cores busy,
                             # small enough that the pair lists stay a few MB


class AuditError(ValueError):
    """An audit that cannot be run as asked; the message says why."""


# -- settings ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditSettings:
    """How much the audit searches and measures (the audit's knobs, not rules of the game)."""

    rounds: tuple[int, ...]
    choose_boards: int = 100         # reference boards a round that candidates are chosen on
    report_boards: int = 200         # disjoint reference boards the chosen boards are measured on
    small_grades: tuple[int, ...] = (1, 2)   # grades of the one-, two-rune and mono-kind families
    mono_sizes: tuple[int, ...] = (3, 4, 5, 6)
    two_rune_parents: int = 4        # best one-rune boards that get a second rune
    trick_bases: int = 2             # best boards of each of the one- and two-rune families
    search_drafted_starts: int = 2   # drafted boards the open search also starts from
    search_generations: int = 20
    search_mutants: int = 40
    search_patience: int = 8
    tower_structures: int = 3        # best towers of each attack kind played with every core
    tower_casters: int = 3           # casting runes a tower may hold (targets and feeders)
    fast_starts: int = 3             # best towers the fast-kill hill climb also starts from
    fast_generations: int = 20
    fast_mutants: int = 40
    fast_patience: int = 8
    seed: int = 0
    jobs: int | None = None          # fast-engine threads (None: every usable core)

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


def full_settings(rounds: Iterable[int], seed: int = 0, jobs: int | None = None) -> AuditSettings:
    """The default audit (the command line without --quick)."""
    return AuditSettings(rounds=tuple(rounds), seed=seed, jobs=jobs)


def quick_settings(rounds: Iterable[int], seed: int = 0, jobs: int | None = None) -> AuditSettings:
    """A smaller audit for a first look and for tests: fewer opponents and candidates."""
    return AuditSettings(rounds=tuple(rounds), choose_boards=40, report_boards=80,
                         two_rune_parents=3, trick_bases=1, search_drafted_starts=1,
                         search_generations=10, search_mutants=24, search_patience=4,
                         tower_structures=2, fast_starts=2, fast_generations=10,
                         fast_mutants=24, fast_patience=4, seed=seed, jobs=jobs)


# -- reference boards -------------------------------------------------------------------------
def round_budget(rules: Rules, round_: int) -> int:
    """The round's opponent budget at the first rank (apprentice), D-44."""
    return opponent_budget(rules, round_, rank_effects(rules, rules.spec.ranks[0].id))


def field_reference(board: Board, round_: int) -> Board:
    """A reference board as fielded in a round without a boss (E-30): that round, the round's max
    HP, no boss rules; everything else (core, artifacts, hand, relics) as drawn."""
    return board.replace(round=round_, max_hp=None, boss_rules=(), label="")


def drafted_boards(rules: Rules, round_: int, count: int, seed: int,
                   stream: int = _DRAFT_STREAM) -> list[Board]:
    """`count` boards of the budget drafter for the round, board i from the generator seeded
    [seed, round, stream, i] (so any board can be redrawn alone)."""
    budget = round_budget(rules, round_)
    return [field_reference(draft_board(rules, round_, budget,
                                        np.random.default_rng([seed, round_, stream, i])), round_)
            for i in range(count)]


# Draws `pool_boards` writes out one by one at most: an input bound, not a game number. A ghost's
# count may be up to 2**31 - 1 (a pool file's bound), and writing every count out would allocate
# without bound (a mixture of pools weighted by products of counts took 45 minutes to split). The
# shipped pools' rounds sum to at most 1,000 (the metagame's), so they are all written out.
EXPANDED_DRAWS_MAX = 10_000


def pool_boards(pool: Pool, rules: Rules, round_: int, count: int, seed: int) -> list[Board]:
    """The pool's ghosts of the round as draws, each as often as its `count` when the round has
    at most `count` ghosts whose counts sum to at most EXPANDED_DRAWS_MAX, else `count` draws
    weighted by the counts (seeded). Empty when the pool has no ghost of the round."""
    ghosts = [field_reference(b, round_) for b in pool.boards(round_, rules)]
    weights = pool.counts(round_)
    total = sum(weights)
    if len(ghosts) <= count and total <= EXPANDED_DRAWS_MAX:
        return [g for g, w in zip(ghosts, weights) for _ in range(w)]
    rng = np.random.default_rng([seed, round_, _POOL_STREAM])
    p = np.asarray(weights, dtype=np.float64) / total
    return [ghosts[int(i)] for i in rng.choice(len(ghosts), size=count, p=p)]


@dataclass(frozen=True, eq=False)
class Opponents:
    """Distinct reference boards with their weights (how many draws gave each)."""

    boards: tuple[Board, ...]
    weights: np.ndarray                                   # int64, one per board
    scores: dict = field(default_factory=dict, repr=False, compare=False)   # memo: key -> Score
    fast: dict = field(default_factory=dict, repr=False, compare=False)  # key -> FastKillScore
    groups: dict = field(default_factory=dict, repr=False, compare=False)  # memo of `horizons`

    @property
    def total(self) -> int:
        return int(self.weights.sum())

    def horizons(self, rules: Rules) -> dict[int, np.ndarray]:
        """The opponents by the time of their second turn (ms: two of their intervals, fixed at
        battle start), each time -> the indices of its boards."""
        if rules.hash not in self.groups:
            times = np.array([2 * SideSetup.of(b, rules).interval_ms for b in self.boards])
            self.groups[rules.hash] = {int(t): np.nonzero(times == t)[0]
                                       for t in sorted(set(times.tolist()))}
        return self.groups[rules.hash]


def merge_draws(draws: Sequence[Board], rules: Rules) -> tuple[dict[str, Board], dict[str, int]]:
    """Identical boards merged: (board key -> its first board, board key -> how often it was
    drawn), both in first-seen order."""
    weight: dict[str, int] = {}
    first: dict[str, Board] = {}
    for b in draws:
        key = board_key(b, rules)
        weight[key] = weight.get(key, 0) + 1
        first.setdefault(key, b)
    return first, weight


def split_opponents(draws: Sequence[Board], choose_share: float, rules: Rules,
                    rng: np.random.Generator) -> tuple[Opponents, Opponents]:
    """Split draws into disjoint choose and report sets (see the package docstring): identical
    boards merge into one weighted board, the distinct boards are shuffled and dealt to the
    choose set until it holds `choose_share` of the weight; the rest is the report set."""
    first, weight = merge_draws(draws, rules)
    keys = list(first)
    if len(keys) < 2:
        raise AuditError(f"round {draws[0].round if draws else '?'}: only {len(keys)} distinct "
                         f"reference board(s); cannot split them into choose and report sets")
    order = [keys[int(i)] for i in rng.permutation(len(keys))]
    target = choose_share * sum(weight.values())
    choose: list[str] = []
    taken = 0
    for key in order[:-1]:          # the last board always goes to the report set
        if choose and taken >= target:
            break
        choose.append(key)
        taken += weight[key]
    report = order[len(choose):]

    def of(ks: list[str]) -> Opponents:
        return Opponents(tuple(first[k] for k in ks), np.array([weight[k] for k in ks], np.int64))
    return of(choose), of(report)


# -- what a board costs and whether a shop could give it ---------------------------------------
def shop_notes(board: Board, rules: Rules) -> list[str]:
    """What a run could not have given this board without rewards or unlocks, budget aside."""
    run = rules.spec.run
    notes = []
    if len(board.artifacts) > run.artifact_slots:
        notes.append(f"{len(board.artifacts)} artifacts: a run starts with {run.artifact_slots} "
                     f"slots (rewards add more)")
    slots = hand_slots(rules, board.core)
    if len(board.hand) > slots:
        notes.append(f"hand of {len(board.hand)}: a run with this core has {slots} slots")
    unlocked = set(Profile().unlocked(rules))
    locks = rules.spec.achievements.model_dump()
    for kind in sorted({k for k, _ in (*board.runes.values(), *board.hand)} - unlocked):
        notes.append(f"{kind} needs the {locks[kind]} unlock (research runs have it)")
    return notes


# -- scoring ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Score:
    """A board against a weighted set of opponents, both seatings."""

    wins: int                # weighted battles the board won
    battles: int             # weighted battles (both seatings)
    margin: float            # weighted mean of own HP ratio minus the opponent's
    median_time: float       # s, weighted median over the battles
    fast_kills: int = 0      # weighted battles won by a fast kill (FAST_KILL_TURNS)
    fastest_ko: float | None = None     # s, the earliest knockout the board won (None: none)
    fastest_ko_turns: int | None = None  # the opponent's turns (rests included) by then
    fastest_time: float | None = None   # s, the shortest battle, whoever won

    @property
    def win_rate(self) -> float:
        return self.wins / self.battles if self.battles else float("nan")

    @property
    def fast_kill_rate(self) -> float:
        return self.fast_kills / self.battles if self.battles else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.battles)

    def key(self) -> tuple[float, float]:
        """Ordering while choosing: win rate, then the HP margin."""
        return (self.win_rate, self.margin)

    def to_json(self) -> dict:
        ko = (None if self.fastest_ko is None else
              {"time": self.fastest_ko, "opponent_turns": self.fastest_ko_turns})
        return {"win_rate": self.win_rate, "ci": list(self.ci), "median_time": self.median_time,
                "battles": self.battles, "fast_kill_rate": self.fast_kill_rate,
                "fast_kill_ci": list(wilson(self.fast_kills, self.battles)),
                "fastest_knockout": ko, "fastest_time": self.fastest_time}


@dataclass(frozen=True)
class FastKillScore:
    """A board's fast kills against a weighted set of opponents, both seatings: the fast-kill
    family's objective (the package docstring)."""

    fast_kills: int          # weighted battles won by a fast kill
    battles: int             # weighted battles (both seatings)
    reach: float             # weighted mean share of the opponent's max HP gone by its 2nd turn

    @property
    def fast_kill_rate(self) -> float:
        return self.fast_kills / self.battles if self.battles else float("nan")

    def key(self) -> tuple[float, float]:
        """Ordering while choosing: fast-kill rate, then the damage by the second turn (which
        ranks the many boards that kill nothing that fast)."""
        return (self.fast_kill_rate, self.reach)


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2.0)])


class Evaluator:
    """Plays candidates against opponent sets on the fast engine and remembers each score (per
    opponent set, by board content), so the open search never replays a board."""

    def __init__(self, rules: Rules, workers: int | None = None):
        self.rules = rules
        self.workers = workers
        self.battles = 0         # battles played, for the progress line
        self._short: dict[int, Rules] = {}    # horizon (ms) -> the rules with that duration

    def scores(self, candidates: Sequence[Board], opponents: Opponents) -> list[Score]:
        return self._memo(candidates, opponents, opponents.scores, self._play)

    def fast_kill_scores(self, candidates: Sequence[Board],
                         opponents: Opponents) -> list[FastKillScore]:
        """The fast-kill objective of each candidate (`FastKillScore`, remembered like scores)."""
        return self._memo(candidates, opponents, opponents.fast, self._play_fast)

    def _memo(self, candidates: Sequence[Board], opponents: Opponents, memo: dict,
              play: Callable[[list[Board], Opponents], list],
              key: Callable[[Board], Hashable] | None = None) -> list:
        """Each candidate's result against `opponents`, played in batches for the candidates
        `memo` does not hold yet (one battle set per distinct key). `key`: a board's memo key
        (default its JSON key, `board_key`)."""
        keys = [board_key(c, self.rules) if key is None else key(c) for c in candidates]
        todo: dict[Hashable, Board] = {}
        for k, c in zip(keys, candidates):
            if k not in memo:
                todo.setdefault(k, c)
        new = list(todo.items())
        per_batch = max(1, MAX_BATCH_PAIRS // (2 * len(opponents.boards)))
        for start in range(0, len(new), per_batch):
            chunk = new[start:start + per_batch]
            for (k, _), s in zip(chunk, play([c for _, c in chunk], opponents)):
                memo[k] = s
        return [memo[k] for k in keys]

    def _battles(self, candidates: list[Board], opponents: Sequence[Board],
                 rules: Rules) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Every candidate against every opponent, both seatings: the fast engine's arrays
        reshaped to (seating, candidate, opponent, ...) and, per battle, the candidate's side."""
        n_c, n_o = len(candidates), len(opponents)
        pairs = [(c, o) for c in candidates for o in opponents]
        pairs += [(o, c) for c, o in pairs]
        out = fast_battles(pairs, rules, workers=self.workers)
        self.battles += len(pairs)
        shaped = {name: a.reshape(2, n_c, n_o, *a.shape[1:]) for name, a in out.items()}
        side = np.broadcast_to(np.arange(2)[:, None, None], (2, n_c, n_o))
        return shaped, side

    def _play(self, candidates: list[Board], opponents: Opponents) -> list[Score]:
        out, side = self._battles(candidates, opponents.boards, self.rules)
        winner = out["winner"]
        ratio = out["hp"] / out["max_hp"]
        times = out["time"]
        # seating 0: the candidate is side 0; seating 1: side 1
        won = winner == side
        margin = np.stack([ratio[0, ..., 0] - ratio[0, ..., 1],
                           ratio[1, ..., 1] - ratio[1, ..., 0]])
        w = opponents.weights
        total = 2 * opponents.total
        wins = (won * w).sum(axis=(0, 2))
        margins = (margin * w).sum(axis=(0, 2)) / total
        both = np.concatenate([w, w])
        ko_won, opp_turns = _knockouts(out, won)
        fast = ((ko_won & (opp_turns <= FAST_KILL_TURNS)) * w).sum(axis=(0, 2))
        out_scores = []
        for i in range(len(candidates)):
            ko, turns = _fastest(times[:, i].reshape(-1), ko_won[:, i].reshape(-1),
                                 opp_turns[:, i].reshape(-1))
            out_scores.append(Score(int(wins[i]), total, float(margins[i]),
                                    _weighted_median(times[:, i, :].reshape(-1), both),
                                    int(fast[i]), ko, turns, float(times[:, i].min())))
        return out_scores

    def _play_fast(self, candidates: list[Board], opponents: Opponents) -> list[FastKillScore]:
        """Each group of opponents with one second-turn time h is played under the rules with
        `battle.duration_s` = h: the battle up to h is the whole battle's (the engine is
        deterministic and nothing before the timeout looks at the duration), so the knockouts
        by then and the opponent's HP at the timeout are the battle's at h."""
        n_c = len(candidates)
        fast = np.zeros(n_c)
        reach = np.zeros(n_c)
        for horizon, idx in opponents.horizons(self.rules).items():
            opps = [opponents.boards[j] for j in idx]
            w = opponents.weights[idx]
            out, side = self._battles(candidates, opps, self._horizon_rules(horizon))
            won = out["winner"] == side
            ko_won, opp_turns = _knockouts(out, won)
            killed = ko_won & (opp_turns <= FAST_KILL_TURNS)
            # a timeout before the opponent's second turn: storm delays pushed that turn past h
            # (or the opponent has no turn at all); only the whole battle says whether it dies
            # before that turn
            unsure = ~out["knockout"] & (opp_turns <= FAST_KILL_TURNS)
            if unsure.any():
                killed = killed | self._replayed_fast_kills(candidates, opps, unsure)
            ratio = out["hp"] / out["max_hp"]
            opp_ratio = np.stack([ratio[0, ..., 1], ratio[1, ..., 0]])
            fast += (killed * w).sum(axis=(0, 2))
            reach += ((1.0 - opp_ratio) * w).sum(axis=(0, 2))
        total = 2 * opponents.total
        return [FastKillScore(int(fast[i]), total, float(reach[i] / total)) for i in range(n_c)]

    def _replayed_fast_kills(self, candidates: list[Board], opponents: list[Board],
                             which: np.ndarray) -> np.ndarray:
        """The battles `which` (seating, candidate, opponent) played whole: their fast kills."""
        cells = np.argwhere(which)
        pairs = [(candidates[c], opponents[o]) if s == 0 else (opponents[o], candidates[c])
                 for s, c, o in cells]
        out = fast_battles(pairs, self.rules, workers=self.workers)
        self.battles += len(pairs)
        rows = np.arange(len(pairs))
        side = cells[:, 0]
        opp_turns = out["turns"][rows, 1 - side] + out["rests"][rows, 1 - side]
        killed = ((out["winner"] == side) & out["knockout"] & (opp_turns <= FAST_KILL_TURNS))
        mask = np.zeros(which.shape, dtype=bool)
        mask[tuple(cells[killed].T)] = True
        return mask

    def _horizon_rules(self, horizon_ms: int) -> Rules:
        """The audit's rules with battles cut at `horizon_ms` (compiled once per horizon)."""
        if horizon_ms not in self._short:
            self._short[horizon_ms] = self.rules.cut_at(horizon_ms / 1000.0)
        return self._short[horizon_ms]

    def baseline(self, choose: Opponents, report: Opponents) -> Score:
        """The choose set against the report set, both seatings, from the choose side."""
        pairs = [(a, b) for a in choose.boards for b in report.boards]
        pairs += [(b, a) for a, b in pairs]
        out = fast_battles(pairs, self.rules, workers=self.workers)
        self.battles += len(pairs)
        n = len(pairs) // 2
        w = np.outer(choose.weights, report.weights).reshape(-1)
        won = np.concatenate([out["winner"][:n] == 0, out["winner"][n:] == 1])
        ratio = out["hp"] / out["max_hp"]
        margin = np.concatenate([ratio[:n, 0] - ratio[:n, 1], ratio[n:, 1] - ratio[n:, 0]])
        both = np.concatenate([w, w])
        total = int(both.sum())
        side = np.repeat([0, 1], n)
        rows = np.arange(2 * n)
        opp_turns = out["turns"][rows, 1 - side] + out["rests"][rows, 1 - side]
        ko_won = won & out["knockout"]
        fast = int(((ko_won & (opp_turns <= FAST_KILL_TURNS)) * both).sum())
        ko, turns = _fastest(out["time"], ko_won, opp_turns)
        return Score(int((won * both).sum()), total, float((margin * both).sum() / total),
                     _weighted_median(out["time"], both), fast, ko, turns,
                     float(out["time"].min()))


def _knockouts(out: dict[str, np.ndarray], won: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From arrays shaped (seating, candidate, opponent, ...): the knockouts the candidate won
    and the turns the opponent had taken when the battle ended (rest turns included)."""
    turns = out["turns"] + out["rests"]
    opp_turns = np.stack([turns[0, ..., 1], turns[1, ..., 0]])
    return won & out["knockout"], opp_turns


def _fastest(times: np.ndarray, ko_won: np.ndarray,
             opp_turns: np.ndarray) -> tuple[float | None, int | None]:
    """The earliest knockout won (s) and the opponent's turns by then, the fewest turns among
    knockouts at that time; (None, None) without one."""
    idx = np.nonzero(ko_won)[0]
    if not len(idx):
        return None, None
    j = idx[np.lexsort((opp_turns[idx], times[idx]))[0]]
    return float(times[j]), int(opp_turns[j])
