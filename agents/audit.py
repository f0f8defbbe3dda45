"""The balance audit: how far small, cheap boards get against round-matched boards, round by round.

    report = audit(rules, AuditSettings(rounds=(3, 6, 9)))        # the budget drafter's boards
    report = audit(rules, settings, pool=load_pool(path, rules))  # or a pool's ghosts

It answers a designer's question: "is there a cheap board that beats what players field?". For
each round r it searches families of candidate boards and measures the best of each against
reference boards of the same round.

**Reference boards.** By default the budget drafter's: `draft_board(rules, r, budget, rng)` with
the round's opponent budget of the first (easiest) rank, `opponent_budget(rules, r,
rank_effects(rules, "apprentice"))` (D-44), board i of round r drafted from the generator seeded
[seed, r, 0, i], so an audit is reproducible bit for bit from its seed (and does not depend on
--jobs: the fast engine's output never depends on its threads). With a pool, the pool's ghosts of
the round, each weighted by its `count`: all of them when the round has no more ghosts than the
audit asks for, else that many weighted draws (seeded). A round the pool has no ghosts of falls
back to the budget drafter, as `PoolOpponents` does. Reference boards are fielded as in a round
without a boss (E-30): round r, the round's max HP, no boss rules; the audit measures boards, not
bosses.

**Choose and report.** The reference boards of a round are split into two disjoint sets: a
"choose" set (`choose_boards`, 100 by default) on which every candidate is scored and each
family's best is picked, and a "report" set (`report_boards`, 200) on which only the picked board
is measured. Picking the best of thousands of candidates on one sample overrates it (the winner's
curse); the report set has never been looked at, so its win rate is an honest estimate. The split
is by content: identical boards drawn twice become one board of weight 2, and the distinct boards
are dealt (in a seeded random order) to the choose set until it holds its share of the weight,
the rest to the report set, so no board is in both.

**Battles.** Every candidate fights every opponent of a set in both seatings (candidate as side 0
and as side 1; D-8 gives side 0 the first move on ties), on the fast engine in big batches. A win
is a battle the candidate wins; draws are not wins. A board's score is its weighted win rate with a
Wilson 95% interval (`agents.evaluation.wilson`), the median battle time, and, to break ties while
choosing, its mean HP-ratio margin (own HP / max HP minus the opponent's). Per round the baseline
is the reference boards against themselves: the choose set against the report set, both seatings
(about 50% by symmetry; its median time is the typical battle length of the round). Its
interval counts battles, which repeat the same boards: how far the baseline strays from 50%
(a few points) shows how much the sampling of boards, which the interval leaves out, moves a
rate.

**Budget.** A board costs what a player pays for it in a run (RULES §16): each rune, on the board
or in the hand, `price(kind)` x `merge_count`^(grade - 1) (a grade-II rune is merge_count grade-I
runes), plus each artifact's price, plus the ring-3 sectors it needs, opened in order
(`sectors.open_costs`). It is a lower bound: rerolls to find the runes are not counted. A round's
budget is the reference opponents' budget of that round; candidates above it are dropped (each
family says how many). Checked: a one-rune board always fits (at most the dearest attack kind at
grade II, 2 x 3 = 6 mana against 10 in round 1); a two-rune board does not always: in round 1, two
grade-II runes (12-15 mana) exceed the budget of 10, so that family is cut by the budget there.
Apart from the budget, a board may hold what no shop run could give it yet: more artifacts than a
run starts with slots for (`run.artifact_slots`; rewards add more), a larger hand than the run's
hand slots (`run.hand_slots` + the core's `hand_slots`), or a kind that a player's profile must
unlock first (`achievements`; research runs unlock everything). Each reported board carries a note
for each of these.

**Families** (each chosen on the choose set; `FAMILIES`):

- `one_rune`: every board of one attack rune (`ATTACK_KINDS`) of grade I or II, in ring 1 or ring
  2, with each core (a flowing core, the sun, with each casting element that acts differently on
  the rune: each that feeds its kind, and one that feeds nothing for the rest, which play the
  same battles; `acting_elements`). One cell per ring
  suffices: a lone rune has no neighbour, so no flow, attunement, resonance, opposition, amplify,
  delay or mimic can reach it, and every rule that looks at position sees the same thing from any
  cell of its ring: it is the outermost ring with runes wherever it stands (eclipse's penalty,
  earth's wards, erosion's target), it is its side's only turn and its only "strongest" rune.
  Corner and edge cells of ring 2 differ only in their inward neighbours, which a lone rune does
  not have (`tests/test_balance_audit.py` checks that every cell of a ring plays the same
  battles). The rings differ: ring power (`rings.power_x`) and the sun flows into ring 1 only.
- `two_rune`: the `two_rune_parents` best one-rune boards, each with a second rune of every kind
  (all 13), grade I or II, on every other cell of rings 1-2.
- `mono_kind`: 3-6 runes of one casting kind and grade (I or II) in ring 1: the first n cells,
  and the symmetric placements of the resonance patterns (a three-fold orbit, two-fold orbits,
  the whole ring) filled up to n cells, with each core (the sun as for one rune); budget-legal
  ones only.
- `tricks`: the best few one- and two-rune boards with reserves in the hand (copies of a board
  rune, from one up to the hand slots), a reserve-any-kind core (the tree) with a hand of any
  kind, a ward stone, a scapegoat doll or a mana spring on or next to a rune (each artifact found
  by its effect: `wards`, `absorbs`, `grade_bonus`), alone and two at a time.
- `open_search`: a (1 + lambda) hill climb over budget-legal boards of any size, started from the
  best board found so far and from a few freshly drafted boards (seeded [seed, r, 4, i]). Each
  generation makes `search_mutants` distinct mutants of the current board (add, remove, move,
  swap, re-kind or re-grade a rune, change the core or the sun's element, add, move or remove an
  artifact, add or remove a hand rune; a rune may go to ring 3, which opens its sector), scores
  them on the choose set and moves to the best if it beats the current board; a start stops after
  `search_patience` generations without a move. Its boards keep to a fresh run's slots (artifacts
  and hand), use every kind (unlock notes as above) and any grade; mutations never add the mana
  furnace, which acts in the run only (a drafted start may keep its own).

**Speed.** Measured with `time python scripts/balance_audit.py ...` on the 2-core machine this
was written on, while it was shared with a training run (load average 3-4): the full audit
(rounds 1-12, the defaults; about 15 million battles) took 3 min 44 s under the default rules and
3 min 40 s under configs/rules/seed_literal.yaml; `--quick` (rounds 3, 6, 9; 40 + 80 reference
boards; about 1 million battles) took 14.5 s under either. Drafting the reference boards takes 10-20%
of the time; the rest is the fast engine.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from rune_env.battle.fast import fast_battles
from rune_env.rules import ATTACK_KINDS, CASTING_KINDS, KINDS, Board, Rules, geometry
from rune_env.run.loop import units
from rune_env.run.opponents import Pool, draft_board, opponent_budget
from rune_env.run.profile import Profile
from rune_env.run.ranks import rank_effects

from .evaluation import wilson

FAMILIES: tuple[str, ...] = ("one_rune", "two_rune", "mono_kind", "tricks", "open_search")
# what each family needs computed first (its candidates grow out of their best boards)
_NEEDS: dict[str, tuple[str, ...]] = {
    "one_rune": (), "two_rune": ("one_rune",), "mono_kind": (),
    "tricks": ("one_rune", "two_rune"),
    "open_search": ("one_rune", "two_rune", "mono_kind", "tricks"),
}
STAGES: tuple[str, ...] = ("reference boards",) + FAMILIES + ("report set",)

# Seed streams of a round: [seed, round, stream, ...] (independent generators per purpose).
_DRAFT_STREAM, _SPLIT_STREAM, _SEARCH_STREAM, _POOL_STREAM, _START_STREAM = range(5)

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
                         seed=seed, jobs=jobs)


# -- reference boards -------------------------------------------------------------------------
def round_budget(rules: Rules, round_: int) -> int:
    """The round's opponent budget at the first rank (apprentice), D-44."""
    return opponent_budget(rules, round_, rank_effects(rules, rules.spec.ranks[0].id))


def board_key(board: Board, rules: Rules) -> str:
    """A board's content as one string (equal boards, equal keys)."""
    return json.dumps(board.to_json(rules), sort_keys=True)


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


def pool_boards(pool: Pool, rules: Rules, round_: int, count: int, seed: int) -> list[Board]:
    """The pool's ghosts of the round as draws, each as often as its `count` when the round has
    at most `count` ghosts, else `count` draws weighted by the counts (seeded). Empty when the
    pool has no ghost of the round."""
    ghosts = [field_reference(b, round_) for b in pool.boards(round_, rules)]
    weights = pool.counts(round_)
    if len(ghosts) <= count:
        return [g for g, w in zip(ghosts, weights) for _ in range(w)]
    rng = np.random.default_rng([seed, round_, _POOL_STREAM])
    p = np.asarray(weights, dtype=np.float64) / sum(weights)
    return [ghosts[int(i)] for i in rng.choice(len(ghosts), size=count, p=p)]


@dataclass(frozen=True, eq=False)
class Opponents:
    """Distinct reference boards with their weights (how many draws gave each)."""

    boards: tuple[Board, ...]
    weights: np.ndarray                                   # int64, one per board
    scores: dict = field(default_factory=dict, repr=False, compare=False)   # memo: key -> Score

    @property
    def total(self) -> int:
        return int(self.weights.sum())


def split_opponents(draws: Sequence[Board], choose_share: float, rules: Rules,
                    rng: np.random.Generator) -> tuple[Opponents, Opponents]:
    """Split draws into disjoint choose and report sets (see the module docstring): identical
    boards merge into one weighted board, the distinct boards are shuffled and dealt to the
    choose set until it holds `choose_share` of the weight; the rest is the report set."""
    weight: dict[str, int] = {}
    first: dict[str, Board] = {}
    for b in draws:
        key = board_key(b, rules)
        weight[key] = weight.get(key, 0) + 1
        first.setdefault(key, b)
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
def board_cost(board: Board, rules: Rules) -> int:
    """Mana a run pays for the board: runes on it and in the hand (merged grades count their
    grade-I runes), artifacts, and the ring-3 sectors it has open, in opening order."""
    spec = rules.spec
    runes = sum(rules.prices[k] * units(rules, g) for k, g in (*board.runes.values(), *board.hand))
    artifacts = sum(spec.artifacts[a].price for a in board.artifacts.values())
    sectors = sum(spec.sectors.open_costs[:len(board.open_sectors)])
    return runes + artifacts + sectors


def hand_slots(rules: Rules, core: str | None) -> int:
    """The hand slots a fresh run with this core has (D-40)."""
    run = rules.spec.run
    extra = rules.spec.cores[core].hand_slots if core is not None else 0
    return min(run.hand_slots_max, run.hand_slots + extra)


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

    @property
    def win_rate(self) -> float:
        return self.wins / self.battles if self.battles else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.battles)

    def key(self) -> tuple[float, float]:
        """Ordering while choosing: win rate, then the HP margin."""
        return (self.win_rate, self.margin)

    def to_json(self) -> dict:
        return {"win_rate": self.win_rate, "ci": list(self.ci), "median_time": self.median_time,
                "battles": self.battles}


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

    def scores(self, candidates: Sequence[Board], opponents: Opponents) -> list[Score]:
        keys = [board_key(c, self.rules) for c in candidates]
        todo: dict[str, Board] = {}
        for k, c in zip(keys, candidates):
            if k not in opponents.scores:
                todo.setdefault(k, c)
        new = list(todo.items())
        per_batch = max(1, MAX_BATCH_PAIRS // (2 * len(opponents.boards)))
        for start in range(0, len(new), per_batch):
            chunk = new[start:start + per_batch]
            for (k, _), s in zip(chunk, self._play([c for _, c in chunk], opponents)):
                opponents.scores[k] = s
        return [opponents.scores[k] for k in keys]

    def _play(self, candidates: list[Board], opponents: Opponents) -> list[Score]:
        opps = opponents.boards
        n_c, n_o = len(candidates), len(opps)
        pairs = [(c, o) for c in candidates for o in opps]
        pairs += [(o, c) for c, o in pairs]
        out = fast_battles(pairs, self.rules, workers=self.workers)
        self.battles += len(pairs)
        winner = out["winner"].reshape(2, n_c, n_o)
        ratio = (out["hp"] / out["max_hp"]).reshape(2, n_c, n_o, 2)
        times = out["time"].reshape(2, n_c, n_o)
        # seating 0: the candidate is side 0; seating 1: side 1
        won = np.stack([winner[0] == 0, winner[1] == 1])
        margin = np.stack([ratio[0, ..., 0] - ratio[0, ..., 1],
                           ratio[1, ..., 1] - ratio[1, ..., 0]])
        w = opponents.weights
        total = 2 * opponents.total
        wins = (won * w).sum(axis=(0, 2))
        margins = (margin * w).sum(axis=(0, 2)) / total
        both = np.concatenate([w, w])
        return [Score(int(wins[i]), total, float(margins[i]),
                      _weighted_median(times[:, i, :].reshape(-1), both)) for i in range(n_c)]

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
        return Score(int((won * both).sum()), total, float((margin * both).sum() / total),
                     _weighted_median(out["time"], both))


# -- building candidate boards ----------------------------------------------------------------
@dataclass
class Layout:
    """A board under construction: what the families and mutations edit, turned into a validated
    `Board` (with the ring-3 sectors its cells need) by `board`."""

    runes: dict[int, tuple[str, int]]
    core: str
    sun_element: str | None = None
    artifacts: dict[int, str] = field(default_factory=dict)
    hand: list[tuple[str, int]] = field(default_factory=list)

    @classmethod
    def of(cls, board: Board) -> "Layout":
        return cls(dict(board.runes), board.core, board.sun_element, dict(board.artifacts),
                   list(board.hand))

    def copy(self) -> "Layout":
        return Layout(dict(self.runes), self.core, self.sun_element, dict(self.artifacts),
                      list(self.hand))

    def board(self, rules: Rules, round_: int) -> Board:
        geo = geometry(rules.radius)
        sectors = frozenset(geo.sector[c] for c in (*self.runes, *self.artifacts)
                            if geo.sector[c] >= 0)
        return Board(runes=dict(self.runes), artifacts=dict(self.artifacts), hand=tuple(self.hand),
                     core=self.core, sun_element=self.sun_element, open_sectors=sectors,
                     round=round_).validate(rules)


def open_rings(rules: Rules) -> range:
    """The rings open from the start of a run: all but the outermost, which opens by sectors."""
    return range(1, rules.radius)


def open_ring_cells(rules: Rules) -> list[int]:
    geo = geometry(rules.radius)
    return [c for ring in open_rings(rules) for c in geo.ring_cells[ring]]


def acting_elements(rules: Rules, ring1_kinds: Iterable[str]) -> list[str]:
    """The elements a flowing core (the sun) may flow as that differ for runes of `ring1_kinds` in
    ring 1: each that feeds one of the kinds (a flow into it, or attunement with its own kind),
    and one that feeds none, standing for all of those. The sun's element does nothing else (the
    core is no rune: no affinity, opposition or resonance) and reaches ring 1 only, so the elements
    left out play exactly the battles of the one kept."""
    kinds = set(ring1_kinds)
    acting = [e for e in CASTING_KINDS
              if e in kinds or any(f.from_ == e for k in kinds for f in rules.flows_into[k])]
    idle = [e for e in CASTING_KINDS if e not in acting]
    return acting + idle[:1]


def core_variants(rules: Rules, ring1_kinds: Iterable[str] | None = None
                  ) -> list[tuple[str, str | None]]:
    """Every (core, sun element): a core that flows once per casting element, or, given the kinds
    of the runes in ring 1, once per element that acts differently on them (`acting_elements`)."""
    out = []
    for core, mod in rules.spec.cores.items():
        if mod.core_flow_strength <= 0:
            out.append((core, None))
            continue
        elements = CASTING_KINDS if ring1_kinds is None else acting_elements(rules, ring1_kinds)
        out.extend((core, e) for e in elements)
    return out


def one_rune_boards(rules: Rules, round_: int, grades: Sequence[int]) -> list[Board]:
    geo = geometry(rules.radius)
    # one cell per ring: a lone rune plays the same from any cell of it (the module docstring)
    cells = [geo.ring_cells[ring][0] for ring in open_rings(rules)]
    return [Layout({cell: (kind, g)}, core, sun).board(rules, round_)
            for kind in ATTACK_KINDS for g in grades for cell in cells
            for core, sun in core_variants(rules, [kind] if geo.ring[cell] == 1 else [])]


def two_rune_boards(rules: Rules, round_: int, parents: Sequence[Board],
                    grades: Sequence[int]) -> list[Board]:
    cells = open_ring_cells(rules)
    out = []
    for parent in parents:
        for cell in cells:
            if cell in parent.runes:
                continue
            for kind in KINDS:
                for g in grades:
                    layout = Layout.of(parent)
                    layout.runes[cell] = (kind, g)
                    out.append(layout.board(rules, round_))
    return out


def mono_placements(rules: Rules, sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Ring-1 cell sets of each size: the first n cells, and each fold's symmetric orbits (a
    resonance pattern, then the fold's other orbits) filled up to n in casting order."""
    geo = geometry(rules.radius)
    ring1 = geo.ring_cells[1]
    out: list[tuple[int, ...]] = []
    for n in sizes:
        if n > len(ring1):
            continue
        sets = [tuple(ring1[:n])]
        for fold, orbits in geo.patterns.items():
            in_ring1 = [cells for ring, cells in orbits if ring == 1]
            if not in_ring1 or len(in_ring1[0]) > n:
                continue
            chosen: list[int] = []
            for cell in [c for orbit in in_ring1 for c in orbit] + list(ring1):
                if len(chosen) < n and cell not in chosen:
                    chosen.append(cell)
            sets.append(tuple(sorted(chosen)))
        for s in sets:
            if s not in out:
                out.append(s)
    return out


def mono_kind_boards(rules: Rules, round_: int, grades: Sequence[int],
                     sizes: Sequence[int]) -> list[Board]:
    return [Layout({c: (kind, g) for c in cells}, core, sun).board(rules, round_)
            for kind in CASTING_KINDS for g in grades for cells in mono_placements(rules, sizes)
            for core, sun in core_variants(rules, [kind])]


def _artifacts_by_effect(rules: Rules) -> dict[str, list[str]]:
    """The artifacts that act in battle, by what they do."""
    out: dict[str, list[str]] = {"wards": [], "absorbs": [], "grade_bonus": []}
    for name, spec in rules.spec.artifacts.items():
        for effect in out:
            if getattr(spec, effect) > 0:
                out[effect].append(name)
    return out


def _trick_edits(rules: Rules, base: Board) -> list[tuple[str, Callable[[Layout], Layout | None]]]:
    """(category, edit) pairs for a small board; an edit returns a new layout or None."""
    geo = geometry(rules.radius)
    rune_cells = sorted(base.runes)
    # an empty cell whose reach covers the most runes (for a stone next to, not on, the runes)
    empty = [c for c in open_ring_cells(rules) if c not in base.runes]
    beside = max(empty, key=lambda c: sum(r in geo.reach(c) for r in rune_cells))
    edits: list[tuple[str, Callable[[Layout], Layout | None]]] = []

    def with_hand(runes: list[tuple[str, int]], core: str | None = None):
        def edit(layout: Layout) -> Layout | None:
            new = layout.copy()
            if core is not None:
                new.core, new.sun_element = core, None
            new.hand = list(runes)
            return new if len(new.hand) <= hand_slots(rules, new.core) else None
        return edit

    def with_artifact(name: str, cell: int):
        def edit(layout: Layout) -> Layout | None:
            if cell in layout.artifacts or len(layout.artifacts) >= rules.spec.run.artifact_slots:
                return None
            new = layout.copy()
            new.artifacts[cell] = name
            return new
        return edit

    on_board = sorted({r for r in base.runes.values() if r[0] in rules.casting_kinds})
    for kind, g in on_board:
        for grade in sorted({1, g}):
            for n in range(1, hand_slots(rules, base.core) + 1):
                edits.append(("reserve", with_hand([(kind, grade)] * n)))
    for core, mod in rules.spec.cores.items():
        if not mod.reserve_any_kind:
            continue
        edits.append(("any_reserve", with_hand([], core)))
        reserves = sorted({(k, 1) for k in CASTING_KINDS} | set(on_board))
        for rune in reserves:
            for n in range(1, hand_slots(rules, core) + 1):
                edits.append(("any_reserve", with_hand([rune] * n, core)))
    effects = _artifacts_by_effect(rules)
    for name in effects["wards"] + effects["grade_bonus"]:
        for cell in rune_cells + [beside]:
            edits.append((name, with_artifact(name, cell)))
    for name in effects["absorbs"]:       # a doll acts wherever it stands
        edits.append((name, with_artifact(name, rune_cells[0])))
    return edits


def trick_boards(rules: Rules, round_: int, bases: Sequence[Board]) -> list[Board]:
    """Each base with each trick, and with two tricks of different categories."""
    out = []
    for base in bases:
        edits = _trick_edits(rules, base)
        start = Layout.of(base)
        singles = [(cat, edit, edit(start)) for cat, edit in edits]
        singles = [(cat, edit, lay) for cat, edit, lay in singles if lay is not None]
        out.extend(lay.board(rules, round_) for _, _, lay in singles)
        for i, (cat, _, lay) in enumerate(singles):
            for cat2, edit2, _ in singles[i + 1:]:
                if cat2 == cat or {cat, cat2} == {"reserve", "any_reserve"}:
                    continue          # the any-reserve core brings its own hand
                both = edit2(lay)
                if both is not None:
                    out.append(both.board(rules, round_))
    return out


# -- the open search --------------------------------------------------------------------------
class Mutator:
    """Random single edits of a layout that keep it budget-legal and within a fresh run's slots."""

    OPS = ("add", "remove", "move", "swap", "rekind", "regrade", "core", "add_artifact",
           "move_artifact", "remove_artifact", "hand_add", "hand_remove")

    def __init__(self, rules: Rules, round_: int, budget: int, rng: np.random.Generator):
        self.rules, self.round, self.budget, self.rng = rules, round_, budget, rng
        geo = geometry(rules.radius)
        self.cells = list(range(geo.n_cells))
        effects = _artifacts_by_effect(rules)
        self.artifacts = sorted({a for names in effects.values() for a in names})
        self.cores = core_variants(rules)

    def _pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def _grade(self) -> int:
        return int(self.rng.integers(1, self.rules.max_grade + 1))

    def legal(self, board: Board) -> bool:
        return (board_cost(board, self.rules) <= self.budget
                and len(board.artifacts) <= self.rules.spec.run.artifact_slots
                and len(board.hand) <= hand_slots(self.rules, board.core))

    def mutate(self, layout: Layout) -> Layout | None:
        new = layout.copy()
        op = self._pick(self.OPS)
        free = [c for c in self.cells if c not in new.runes]
        filled = sorted(new.runes)
        if op == "add" and free:
            new.runes[self._pick(free)] = (self._pick(KINDS), self._grade())
        elif op == "remove" and len(filled) > 1:
            del new.runes[self._pick(filled)]
        elif op == "move" and filled and free:
            new.runes[self._pick(free)] = new.runes.pop(self._pick(filled))
        elif op == "swap" and len(filled) > 1:
            a, b = (filled[int(i)] for i in self.rng.choice(len(filled), 2, replace=False))
            new.runes[a], new.runes[b] = new.runes[b], new.runes[a]
        elif op == "rekind" and filled:
            cell = self._pick(filled)
            new.runes[cell] = (self._pick(KINDS), new.runes[cell][1])
        elif op == "regrade" and filled:
            cell = self._pick(filled)
            new.runes[cell] = (new.runes[cell][0], self._grade())
        elif op == "core":
            new.core, new.sun_element = self._pick(self.cores)
        elif op == "add_artifact" and self.artifacts:
            new.artifacts[self._pick(self.cells)] = self._pick(self.artifacts)
        elif op == "move_artifact" and new.artifacts:
            cell = self._pick(sorted(new.artifacts))
            target = self._pick(self.cells)
            if target in new.artifacts:
                return None
            new.artifacts[target] = new.artifacts.pop(cell)
        elif op == "remove_artifact" and new.artifacts:
            del new.artifacts[self._pick(sorted(new.artifacts))]
        elif op == "hand_add":
            new.hand.append((self._pick(KINDS), self._grade()))
        elif op == "hand_remove" and new.hand:
            new.hand.pop(int(self.rng.integers(len(new.hand))))
        else:
            return None
        return new

    def children(self, parent: Layout, count: int, seen: set[str]) -> list[Board]:
        """Up to `count` legal mutants not in `seen` (their keys are added to it)."""
        out: list[Board] = []
        for _ in range(count * 20):          # most edits are legal; give up on a cramped board
            if len(out) >= count:
                break
            layout = self.mutate(parent)
            if layout is None:
                continue
            board = layout.board(self.rules, self.round)
            key = board_key(board, self.rules)
            if key in seen or not self.legal(board):
                continue
            seen.add(key)
            out.append(board)
        return out


def open_search(evaluator: Evaluator, choose: Opponents, starts: Sequence[Board], round_: int,
                budget: int, settings: AuditSettings) -> tuple[Board, Score, int]:
    """The hill climb of the module docstring; returns the best board, its choose score and the
    number of boards scored."""
    rules = evaluator.rules
    mutator = Mutator(rules, round_, budget,
                      np.random.default_rng([settings.seed, round_, _SEARCH_STREAM]))
    seen: set[str] = set()
    best: tuple[Board, Score] | None = None
    for start in starts:
        if not mutator.legal(start):
            continue
        seen.add(board_key(start, rules))
        current, score = start, evaluator.scores([start], choose)[0]
        idle = 0
        for _ in range(settings.search_generations):
            kids = mutator.children(Layout.of(current), settings.search_mutants, seen)
            if not kids:
                break
            scores = evaluator.scores(kids, choose)
            i = max(range(len(kids)), key=lambda j: scores[j].key())
            if scores[i].key() > score.key():
                current, score, idle = kids[i], scores[i], 0
            else:
                idle += 1
                if idle >= settings.search_patience:
                    break
        if best is None or score.key() > best[1].key():
            best = (current, score)
    if best is None:
        raise AuditError(f"round {round_}: no start of the open search fits the budget {budget}")
    return best[0], best[1], len(seen)


# -- one round --------------------------------------------------------------------------------
@dataclass
class FamilyResult:
    family: str
    board: Board
    cost: int
    choose: Score              # on the choose set (optimistic: it was picked there)
    report: Score              # on the report set (the estimate)
    candidates: int            # boards scored
    over_budget: int           # boards of the family dropped for the budget
    notes: list[str]

    def to_json(self, rules: Rules) -> dict:
        b = self.board
        return {"board": b.to_json(rules),
                "size": {"casting": sum(k in rules.casting_kinds for k, _ in b.runes.values()),
                         "runes": len(b.runes), "hand": len(b.hand),
                         "artifacts": len(b.artifacts)},
                "kinds": sorted(k for k, _ in b.runes.values()), "core": b.core,
                "sun_element": b.sun_element, "cost": self.cost,
                **self.report.to_json(), "choose_win_rate": self.choose.win_rate,
                "candidates": self.candidates, "over_budget": self.over_budget,
                "notes": self.notes}


@dataclass
class RoundAudit:
    round: int
    budget: int
    reference: str
    choose: Opponents
    report: Opponents
    baseline: Score
    families: dict[str, FamilyResult]

    def to_json(self, rules: Rules) -> dict:
        costs = [board_cost(b, rules) for b in self.choose.boards + self.report.boards]
        return {"budget": self.budget, "reference": self.reference,
                "choose_boards": self.choose.total, "report_boards": self.report.total,
                "reference_cost": {"mean": float(np.mean(costs)), "max": int(max(costs))},
                "baseline": self.baseline.to_json(),
                "families": {name: f.to_json(rules) for name, f in self.families.items()}}


def _ranked(evaluator: Evaluator, boards: list[Board], choose: Opponents,
            budget: int) -> tuple[list[tuple[Board, Score]], int]:
    """The budget-legal boards, scored on the choose set, best first; and how many were over."""
    legal = [b for b in boards if board_cost(b, evaluator.rules) <= budget]
    scores = evaluator.scores(legal, choose)
    ranked = sorted(zip(legal, scores), key=lambda bs: bs[1].key(), reverse=True)  # stable
    return ranked, len(boards) - len(legal)


def _distinct_best(ranked: list[tuple[Board, Score]], count: int, rules: Rules) -> list[Board]:
    """The `count` best boards whose battles differ (a sun element that reaches no rune plays the
    same battles as another: it would only fill a place)."""
    out, seen = [], set()
    for board, score in ranked:
        if score in seen:
            continue
        seen.add(score)
        out.append(board)
        if len(out) >= count:
            break
    return out


def reference_sets(rules: Rules, round_: int, settings: AuditSettings,
                   pool: Pool | None) -> tuple[Opponents, Opponents, str]:
    """The round's disjoint choose and report sets and a line naming their source."""
    count = settings.choose_boards + settings.report_boards
    draws: list[Board] = []
    source = "budget drafter"
    if pool is not None:
        draws = pool_boards(pool, rules, round_, count, settings.seed)
        source = "pool" if draws else "budget drafter (the pool has no boards of this round)"
    if not draws:
        draws = drafted_boards(rules, round_, count, settings.seed)
    choose, report = split_opponents(draws, settings.choose_boards / count, rules,
                                     np.random.default_rng([settings.seed, round_, _SPLIT_STREAM]))
    return choose, report, source


def audit_round(rules: Rules, round_: int, settings: AuditSettings, pool: Pool | None = None,
                families: Sequence[str] = FAMILIES, evaluator: Evaluator | None = None,
                progress: Callable[[str], None] | None = None) -> RoundAudit:
    """Audit one round (see the module docstring); `families` picks what to report (what they
    grow out of is computed too). `progress(stage)` is called after each stage."""
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise AuditError(f"unknown family {unknown[0]!r} (one of {', '.join(FAMILIES)})")
    needed = set(families) | {n for f in families for n in _NEEDS[f]}
    evaluator = evaluator or Evaluator(rules, settings.jobs)
    tick = progress or (lambda stage: None)
    budget = round_budget(rules, round_)
    choose, report, source = reference_sets(rules, round_, settings, pool)
    tick("reference boards")
    grades = [g for g in settings.small_grades if g <= rules.max_grade]
    ranked: dict[str, list[tuple[Board, Score]]] = {}
    counts: dict[str, tuple[int, int]] = {}

    def run_family(name: str, boards: list[Board]) -> None:
        ranked[name], over = _ranked(evaluator, boards, choose, budget)
        counts[name] = (len(ranked[name]), over)

    for name in FAMILIES:
        if name not in needed:
            tick(name)
            continue
        if name == "one_rune":
            run_family(name, one_rune_boards(rules, round_, grades))
        elif name == "two_rune":
            parents = _distinct_best(ranked["one_rune"], settings.two_rune_parents, rules)
            run_family(name, two_rune_boards(rules, round_, parents, grades))
        elif name == "mono_kind":
            run_family(name, mono_kind_boards(rules, round_, grades, settings.mono_sizes))
        elif name == "tricks":
            bases = [b for fam in ("one_rune", "two_rune")
                     for b in _distinct_best(ranked[fam], settings.trick_bases, rules)]
            run_family(name, trick_boards(rules, round_, bases))
        else:
            so_far = max((r[0] for fam, r in ranked.items() if r), key=lambda bs: bs[1].key())
            drafted = drafted_boards(rules, round_, settings.search_drafted_starts, settings.seed,
                                     _START_STREAM)
            board, score, scored = open_search(evaluator, choose, [so_far[0], *drafted], round_,
                                               budget, settings)
            ranked[name], counts[name] = [(board, score)], (scored, 0)
        tick(name)
    results: dict[str, FamilyResult] = {}
    for name in families:
        if not ranked[name]:
            continue           # every candidate over the budget
        board, chosen = ranked[name][0]
        measured = evaluator.scores([board], report)[0]
        cost = board_cost(board, rules)
        scored, over = counts[name]
        notes = [f"cost {cost}/{budget}"] + shop_notes(board, rules)
        if over:
            notes.append(f"{over} of {scored + over} candidates over the budget")
        results[name] = FamilyResult(name, board, cost, chosen, measured, scored, over, notes)
    baseline = evaluator.baseline(choose, report)
    tick("report set")
    return RoundAudit(round_, budget, source, choose, report, baseline, results)


# -- the whole audit --------------------------------------------------------------------------
@dataclass
class AuditReport:
    rules: Rules
    rules_path: str | None
    pool_path: str | None
    settings: AuditSettings
    rounds: list[RoundAudit]
    battles: int

    def to_json(self) -> dict:
        return {"rules_hash": self.rules.hash, "rules": self.rules_path or self.rules.source,
                "pool": self.pool_path,
                "seed": self.settings.seed, "settings": self.settings.to_json(),
                "battles": self.battles,
                "rounds": {str(r.round): r.to_json(self.rules) for r in self.rounds}}


def check_auditable(rules: Rules, settings: AuditSettings) -> None:
    """Refuse what the audit cannot do, before any work."""
    if rules.spec.variant != "deterministic":
        raise AuditError(f"the audit plays the deterministic variant only (rules variant: "
                         f"{rules.spec.variant!r})")
    cap = rules.spec.run.round_cap
    bad = [r for r in settings.rounds if not 1 <= r <= cap]
    if not settings.rounds or bad:
        raise AuditError(f"rounds must be within 1..{cap} (run.round_cap); got "
                         f"{bad[0] if bad else 'none'}")
    if settings.choose_boards < 1 or settings.report_boards < 1:
        raise AuditError("choose_boards and report_boards must be at least 1")


def audit(rules: Rules, settings: AuditSettings, pool: Pool | None = None,
          rules_path: str | None = None, pool_path: str | None = None,
          families: Sequence[str] = FAMILIES,
          progress: Callable[[int, str], None] | None = None) -> AuditReport:
    """The audit of every round of `settings.rounds`; `progress(round, stage)` after each stage."""
    check_auditable(rules, settings)
    evaluator = Evaluator(rules, settings.jobs)
    rounds = []
    for r in settings.rounds:
        tick = (lambda stage, r=r: progress(r, stage)) if progress else None
        rounds.append(audit_round(rules, r, settings, pool, families, evaluator, tick))
    return AuditReport(rules, rules_path, pool_path, settings, rounds, evaluator.battles)


# -- text -------------------------------------------------------------------------------------
def _roman(grade: int) -> str:
    numerals = ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
    out = ""
    for value, letters in numerals:
        while grade >= value:
            out += letters
            grade -= value
    return out


def describe(board: Board, rules: Rules) -> str:
    """A board in one line: its runes (with cells when few), artifacts, hand and core."""
    geo = geometry(rules.radius)
    if len(board.runes) <= 3:
        runes = ", ".join(f"{k} {_roman(g)} {geo.name(c)}"
                          for c, (k, g) in sorted(board.runes.items()))
    else:
        tally = Counter(board.runes.values())
        runes = ", ".join(f"{n}x {k} {_roman(g)}" if n > 1 else f"{k} {_roman(g)}"
                          for (k, g), n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
    parts = [runes or "no runes"]
    if board.artifacts:
        parts.append(" + ".join(f"{a} {geo.name(c)}" for c, a in sorted(board.artifacts.items())))
    if board.hand:
        tally = Counter(board.hand)
        parts.append("hand " + ", ".join(f"{n}x {k} {_roman(g)}"
                                         for (k, g), n in sorted(tally.items())))
    core = board.core or "no core"
    if board.sun_element:
        core += f"({board.sun_element})"
    return "; ".join(parts) + f" | {core}"


def _pct(x: float) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}"


def format_report(report: AuditReport) -> str:
    rules = report.rules
    lines = [f"balance audit  rules {report.rules_path or rules.source} ({rules.hash})  "
             f"pool {report.pool_path or 'none (budget drafter)'}  seed {report.settings.seed}"]
    for ra in report.rounds:
        lines.append("")
        lines.append(f"round {ra.round}  budget {ra.budget}  reference: {ra.reference}, "
                     f"choose {ra.choose.total} / report {ra.report.total} boards")
        lines.append(f"  {'family':<12} {'size':>5}  {'win %':>5} {'[95% CI]':>13}  "
                     f"{'median s':>8}  board / notes")
        for name, f in ra.families.items():
            casting = sum(k in rules.casting_kinds for k, _ in f.board.runes.values())
            lo, hi = f.report.ci
            lines.append(f"  {name:<12} {casting:>2}/{len(f.board.runes):<2}  "
                         f"{_pct(f.report.win_rate)} [{_pct(lo)},{_pct(hi)}]  "
                         f"{f.report.median_time:>8.1f}  {describe(f.board, rules)}")
            lines.append(f"  {'':<12} {'':>5}  {'':>5} {'':>13}  {'':>8}  "
                         f"chosen at {_pct(f.choose.win_rate).strip()}% of {f.candidates}; "
                         + "; ".join(f.notes))
        b = ra.baseline
        lo, hi = b.ci
        lines.append(f"  {'baseline':<12} {'':>5}  {_pct(b.win_rate)} [{_pct(lo)},{_pct(hi)}]  "
                     f"{b.median_time:>8.1f}  reference boards: choose set against report set")
    lines.append("")
    lines.append(f"size: casting runes / runes on the board; win %: the chosen board against the "
                 f"report set, both seatings (draws are not wins); {report.battles:,} battles")
    return "\n".join(lines)
