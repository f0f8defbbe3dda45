"""The boards the search player plays its candidates against: a reference population per round,
made of public data only (a shipped metagame or pool, or boards it drafts itself).

Sources (`ReferenceSpec.source`):

- `meta` (the default): the metagame (`ReferenceSpec.meta`: `auto`, the one shipped for the rules,
  `configs/meta/meta_<rules hash>.json.gz`, or a pool file such as `scripts/metagame.py --out`
  writes for a designer's rules: `load_metagame`), the equilibrium mixtures of each round, the
  strong play;
- `rank`: the shipped pool of the run's own rank (`shipped_pool`), the opponents it meets;
- a path: any pool file (checked against the rules as the envs check pools).

A round the source has no boards of takes the latest earlier round it has, fielded in this round
(its max HP; boards of a later round would cost more than the player can have had); a round
before the source's first (or a source with no boards, or `meta` with no metagame shipped for
the rules) falls back to boards the budget drafter drafts with the round's player budget, from a
generator seeded by (seed, round). Boards are fielded as the run fields its opponent
(`field_opponent`: the round's boss rules, and the rank's extra runes in `fieldings` draws of
the planner's own seeded generator, since the run draws them anew each time).
At most `size` distinct boards are kept a round, weighted by their counts (the heaviest first;
ties by their order in the file), so the search's cost per candidate is bounded.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from rune_env.resources import config_path
from rune_env.rules import Board, Rules
from rune_env.run.loop import field_opponent
from rune_env.run.opponents import Pool, draft_board, load_pool
from rune_env.run.ranks import player_budget, rank_effects
from rune_env.run.state import RunState

from .boards import board_key

SOURCES = ("meta", "rank")
AHEAD_MAX = 15          # rounds ahead a reference part may look
_DRAFT_STREAM = 21      # [seed, round, stream, i]: the fallback's drafted boards
_FIELD_STREAM = 22      # [seed, round, stream]: the rank's extra runes as fielded


META_AUTO = "auto"      # the metagame shipped for the rules (`meta_path`)
META_SUFFIXES = (".json", ".json.gz")


def meta_path(rules: Rules) -> Path:
    """Where the metagame of these rules is shipped (it may not exist)."""
    return config_path("meta", f"meta_{rules.hash}.json.gz")


def check_meta(meta: str) -> str:
    """`meta` if it is `auto` or a pool file that exists; ValueError naming it otherwise."""
    if meta == META_AUTO:
        return meta
    if not meta.endswith(META_SUFFIXES):
        raise ValueError(f"planner: meta is auto or a pool file (.json or .json.gz); got {meta!r}")
    if not Path(meta).is_file():
        raise ValueError(f"planner: meta file {meta} not found")
    return meta


def load_metagame(rules: Rules, meta: str = META_AUTO) -> Pool | None:
    """The metagame the search player plays against (the `meta` part of its reference) and
    builds towards (its goal): with `auto` the one shipped for the rules, read strictly (it is
    named by their hash), or None with a warning where none is shipped (a designer's rules file:
    the player then drafts its reference boards and has no goal, and plays weaker than it
    would); else the pool file `meta`, checked against the rules as the envs check pools."""
    if meta != META_AUTO:
        return load_pool(meta, rules)
    path = meta_path(rules)
    if path.is_file():
        return load_pool(path, rules, strict=True)
    warnings.warn(f"no metagame is shipped for rules {rules.hash} (configs/meta/{path.name}): the "
                  f"planner drafts its reference boards and has no goal; make one with "
                  f"scripts/metagame.py --rules FILE --out DIR and pass "
                  f"planner:meta=DIR/{path.name}", stacklevel=2)
    return None


@dataclass(frozen=True)
class ReferenceSpec:
    source: str = "meta"        # meta, rank, or a pool file's path
    size: int = 16              # distinct boards a part gives a round, at most
    drafted: int = 8            # boards the fallback drafts a round
    fieldings: int = 3          # draws of a rank's extra runes per board (journeyman and up)
    meta: str = META_AUTO       # the `meta` source: auto (shipped for the rules) or a pool file


class Reference:
    """Reference boards by round for one rules file and rank (remembered per round and boss
    rules). `boards(round_, boss_rules)` -> (boards, weights as float64, summing to 1).

    `spec.source` is one part or several joined by "+", each `meta`, `rank` or a pool file,
    optionally followed by `@K`: that source's boards of round r + K, fielded in round r (boards
    drafted with more mana: opponents the player's board has not outgrown, so that a search
    still finds what makes it stronger where the round's own boards are all beaten). Each part
    weighs the same in all; within a part, boards weigh as their counts."""

    def __init__(self, rules: Rules, spec: ReferenceSpec, rank: int, seed: int,
                 metagame: Callable[[], Pool | None] | None = None):
        """`metagame`: how to get the `meta` part's pool, called only if the source has one
        (default: `load_metagame(rules, spec.meta)`); a player that also builds towards the
        metagame passes its own, so the file is read, and a missing one reported, once."""
        self.rules, self.spec, self.rank, self.seed = rules, spec, int(rank), int(seed)
        self._metagame = metagame or (lambda: load_metagame(rules, spec.meta))
        self.parts = [(self._load(source), ahead) for source, ahead in parse_source(spec.source)]
        self._memo: dict = {}

    def reseed(self, seed: int) -> None:
        """The reference of another seed, keeping the loaded pools (which do not depend on it):
        the boards remembered per round were drafted and fielded with the old seed's draws."""
        if int(seed) != self.seed:
            self.seed = int(seed)
            self._memo = {}

    def _load(self, source: str) -> Pool | None:
        if source == "meta":
            return self._metagame()
        if source == "rank":
            from rune_env.envs.run_env import shipped_pool
            path = shipped_pool(self.rules, self.rank)
            if path is None:
                return None
            with warnings.catch_warnings():         # said below, as the planner's own reason
                warnings.simplefilter("ignore")
                pool = load_pool(path, self.rules)
            if pool.rules_hash != self.rules.hash:
                # a designer's rules: the shipped pools are the defaults' ghosts, priced and
                # fielded under other rules; the part drafts its boards instead
                warnings.warn(f"the planner's reference: no pool is shipped for rules "
                              f"{self.rules.hash} ({path} is of rules {pool.rules_hash}), so its "
                              f"'rank' part drafts boards instead; give reference=meta or "
                              f"reference=POOL, a pool of these rules", stacklevel=2)
                return None
            return pool
        return load_pool(source, self.rules)

    def boards(self, round_: int, boss_rules: tuple = ()) -> tuple[list[Board], np.ndarray]:
        key = (round_, tuple(boss_rules))
        if key not in self._memo:
            merged: dict[str, list] = {}
            for pool, ahead in self.parts:
                boards, weights = self._part(pool, round_, ahead, tuple(boss_rules))
                for b, w in zip(boards, weights):
                    merged.setdefault(board_key(b, self.rules), [b, 0.0])[1] += w / len(self.parts)
            self._memo[key] = ([b for b, _ in merged.values()],
                               np.array([w for _, w in merged.values()], dtype=np.float64))
        return self._memo[key]

    def _part(self, pool: Pool | None, round_: int, ahead: int,
              boss_rules: tuple) -> tuple[list[Board], np.ndarray]:
        rules = self.rules
        boards, counts = _from_pool(pool, round_ + ahead, rules)
        if not boards:
            budget = player_budget(rules, round_ + ahead)
            boards = [draft_board(rules, round_ + ahead, budget, np.random.default_rng(
                [self.seed, round_ + ahead, _DRAFT_STREAM, i])) for i in range(self.spec.drafted)]
            counts = [1] * len(boards)
        effects = rank_effects(rules, self.rank)
        rng = np.random.default_rng([self.seed, round_, _FIELD_STREAM, ahead])
        # a rank that adds runes to its opponents as they are fielded adds them at random:
        # each board is fielded `fieldings` times, each with the weight of its count
        times = self.spec.fieldings if effects.opponent_extra_runes > 0 else 1
        merged: dict[str, list] = {}
        for b, c in zip(boards, counts):
            b = b.replace(round=round_, max_hp=None, boss_rules=boss_rules, label="")
            for _ in range(times):
                f = field_opponent(b, effects, rules, rng)
                merged.setdefault(board_key(f, rules), [f, 0.0])[1] += c / times
        ranked = sorted(merged.values(), key=lambda bc: -bc[1])[: self.spec.size]  # stable
        weights = np.array([c for _, c in ranked], dtype=np.float64)
        return [b for b, _ in ranked], weights / weights.sum()


def parse_source(source: str) -> list[tuple[str, int]]:
    """"rank+rank@2+meta" -> [("rank", 0), ("rank", 2), ("meta", 0)]; ValueError naming a part
    that is not meta, rank or a pool file (.json, .json.gz), or an offset that is not 0..15."""
    parts = []
    for part in source.split("+"):
        name, at, ahead = part.strip().partition("@")
        if name not in SOURCES and not name.endswith((".json", ".json.gz")):
            raise ValueError(f"reference part {part!r}: meta, rank or a pool file (.json or "
                             f".json.gz), optionally @K rounds ahead")
        try:
            k = int(ahead) if at else 0
        except ValueError:
            k = -1
        if not 0 <= k <= AHEAD_MAX:
            raise ValueError(f"reference part {part!r}: the rounds ahead are 0..{AHEAD_MAX}")
        parts.append((name, k))
    return parts


def _from_pool(pool: Pool | None, round_: int, rules: Rules) -> tuple[list[Board], list[int]]:
    """The pool's boards of the latest round at or before `round_` (the module docstring)."""
    if pool is None or not pool.rounds:
        return [], []
    below = [r for r in pool.rounds if r <= round_]
    if not below:
        return [], []
    nearest = max(below)
    return pool.boards(nearest, rules), pool.counts(nearest)


def seen_boards(state: RunState, count: int) -> tuple[list[Board], np.ndarray]:
    """The boards of the player's last `count` opponents (public once their battle is fought),
    fielded in this round, the latest weighing most (weights 1, 2, ..., summing to 1): the
    reference's part of the opponents met (the planner's `seen`)."""
    out = []
    for b in state.battles[-count:] if count > 0 else []:
        board = Board.from_json(b.opponent, state.rules, source="a battle's opponent")
        out.append(board.replace(round=state.round, max_hp=None,
                                 boss_rules=tuple(state.boss_rules), label=""))
    weights = np.arange(1, len(out) + 1, dtype=np.float64)
    return out, weights / weights.sum() if len(out) else weights
