"""Opponents behind one small interface, and the opponent pool file.

An opponent source is any callable `(round, rank_effects, boss_rules, rng) -> Board`
(`loop.OpponentSource`); the loop is given one by its caller (`default_opponents(rules)` is the
budget drafter). It sets the boss rules and round on the board it returns and adds the rank's
extra runes (`loop.field_opponent`), so sources only draft.

- `BudgetOpponents`: drafts a fresh board with the heuristic drafter from the budget a player
  would have had by that round (D-44: `opponent_budget_base + opponent_budget_per_round *
  (round - 1)`, x the rank's budget factor), with a core and artifacts, no relics.
  Its strength knob is `run.opponent_noise`: the share of random actions while drafting.
- `PoolOpponents`: samples recorded boards ("ghosts") of the round from a pool file, each with
  the weight of its `count`; where a round has none, falls back to another source (default: the
  budget drafter).

Pool file (JSON, written atomically):
    {"format": "rune-env-pool", "version": 1, "rules_hash": "...", "rank": "apprentice",
     "provenance": {...free...},
     "rounds": {"1": [{"board": {board file}, "agent": "greedy", "seed": 3, "round": 1,
                        "rank": "apprentice", "count": 4}, ...], ...}}
`count` (optional, a whole number 1..2**31-1, default 1): how many drafting runs drafted this very
board, so a pool keeps each distinct board once and still fields it as often as its agents
drafted it. A file without counts is sampled uniformly, exactly as before counts existed.
"""
from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..files import is_gzip_name, load_json, read_text, write_json_atomic, write_text_atomic
from ..rules.board import Board, BoardError, max_round
from ..rules.config import Rules
from .drafter import HeuristicDrafter, draft
from .loop import new_draft
from .ranks import RankEffects, opponent_budget

POOL_FORMAT = "rune-env-pool"
POOL_VERSION = 1


class PoolError(ValueError):
    """A pool file that cannot be used; the message names the problem."""


def draft_board(rules: Rules, round_: int, budget: int, rng: np.random.Generator,
                noise: float = 0.0, core: str | None = None) -> Board:
    """A board drafted from scratch with `budget` mana by the heuristic drafter."""
    seed = int(rng.integers(2**31))
    state = new_draft(seed, rules, round_, budget, core=core)
    draft(state, HeuristicDrafter(rules, noise=noise, seed=seed))
    return state.to_board().replace(max_hp=None)


@dataclass
class BudgetOpponents:
    """Drafted opponents. With `run.opponent_bank` = K > 0, round r's opponent is one of K
    boards, each drafted from a seed fixed by (round, budget, k) alone, and k is drawn from the
    run's generator: the same distribution for every process and call order (so runs stay
    reproducible and resumable), while each board is drafted once per process and then reused.
    K = 0 drafts a fresh board at every call."""

    rules: Rules
    noise: float | None = None
    bank: int | None = None
    _memo: dict = field(default_factory=dict, repr=False)

    def __call__(self, round_: int, effects: RankEffects, boss_rules: list,
                 rng: np.random.Generator) -> Board:
        run = self.rules.spec.run
        noise = run.opponent_noise if self.noise is None else self.noise
        bank = run.opponent_bank if self.bank is None else self.bank
        budget = opponent_budget(self.rules, round_, effects)
        if bank <= 0:
            return draft_board(self.rules, round_, budget, rng, noise=noise)
        k = int(rng.integers(bank))
        key = (round_, budget, noise, k)
        if key not in self._memo:
            seed = np.random.SeedSequence([round_, budget, k, int(noise * 1e6)])
            self._memo[key] = draft_board(self.rules, round_, budget,
                                          np.random.default_rng(seed), noise=noise)
        return self._memo[key]


@lru_cache(maxsize=4)
def _default(rules_hash: str, rules: Rules) -> BudgetOpponents:
    return BudgetOpponents(rules)


def default_opponents(rules: Rules) -> BudgetOpponents:
    return _default(rules.hash, rules)


# -- pools ----------------------------------------------------------------------------------------
@dataclass
class Pool:
    rules_hash: str
    rank: str
    rounds: dict[int, list[dict]] = field(default_factory=dict)   # round -> ghost entries
    provenance: dict = field(default_factory=dict)

    def boards(self, round_: int, rules: Rules) -> list[Board]:
        return [Board.from_json(g["board"], rules, source=f"pool round {round_}")
                for g in self.rounds.get(round_, [])]

    def counts(self, round_: int) -> list[int]:
        """The sampling weight of each ghost of the round (its `count`; 1 where absent)."""
        return [ghost_count(g) for g in self.rounds.get(round_, [])]

    def to_json(self) -> dict[str, Any]:
        return {"format": POOL_FORMAT, "version": POOL_VERSION, "rules_hash": self.rules_hash,
                "rank": self.rank, "provenance": self.provenance,
                "rounds": {str(r): g for r, g in sorted(self.rounds.items())}}


def ghost_count(ghost: dict) -> int:
    return int(ghost.get("count", 1))


def save_pool(pool: Pool, path: str | Path, compact: bool = False) -> None:
    """Write a pool atomically. `compact`: no indentation, one ghost per line (shipped pools
    hold thousands of boards; this keeps them small and their diffs readable, `zcat` first for a
    compressed one). A name ending in .gz is written gzip-compressed, as the shipped pools are."""
    if not compact:
        write_json_atomic(Path(path), pool.to_json())
        return
    write_text_atomic(Path(path), compact_pool_text(pool))


def compact_pool_text(pool: Pool) -> str:
    """The pool's JSON with the header on the first line and one ghost per line."""
    def dump(value) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    data = pool.to_json()
    header = dump({k: v for k, v in data.items() if k != "rounds"})
    rounds = []
    for key, ghosts in data["rounds"].items():
        body = ",\n".join(dump(g) for g in ghosts)
        rounds.append(f"{dump(key)}:[\n{body}\n]")
    return header[:-1] + ',"rounds":{\n' + ",\n".join(rounds) + "\n}}\n"


def pool_rules_hash(path: str | Path) -> str | None:
    """The rules hash a pool file says it was made under, read from its header alone (the first
    line of a compact pool, `save_pool(compact=True)`); None if the file or its header cannot be
    read. For choosing between pools of several rules (`shipped_pool`); `load_pool` checks it."""
    import gzip
    import re
    path = Path(path)
    try:
        opener = gzip.open if is_gzip_name(path) else open
        with opener(path, "rt", encoding="utf-8") as fh:
            head = fh.read(1 << 14)
    except (OSError, EOFError, UnicodeDecodeError):
        return None
    m = re.search(r'"rules_hash"\s*:\s*"([^"]*)"', head)
    return m.group(1) if m else None


# A ghost's count: an input bound, not a game number. Counts are drafting runs (a pool's largest is
# 10); a round's counts are summed in int64 to draw one, and 2**31 - 1 each keeps that sum exact
# for the most ghosts a 64 MiB file can hold (2**62 each overflowed at battle time).
MAX_GHOST_COUNT = 2**31 - 1
MAX_GHOST_TEXT = 4096           # a ghost's "agent" and "rank": names, a policy file's path at most
MAX_GHOST_NUMBER = 2**63 - 1    # a ghost's "seed" and "round": what an int64 holds
_ROUND_KEY = re.compile(r"[1-9][0-9]{0,9}")     # ASCII digits only: "²".isdigit() is True


def load_pool(path: str | Path, rules: Rules, strict: bool = False) -> Pool:
    """Read and validate a pool file. A rules-hash mismatch warns (refused with `strict`).

    Everything is checked here, so a pool that loads never fails at battle time: the file at
    most 64 MiB decompressed (read in chunks), JSON nested at most 64 deep with finite numbers
    (`rune_env.files.load_json`), round keys whole numbers 1..run.round_cap (a pool of other
    rules may hold rounds past it: they are left out, said in its warning), each holding one
    ghost or more, each ghost's count 1..MAX_GHOST_COUNT, its agent, rank, seed and round of
    their types (`_ghost_fields`) and its board valid (`Board.from_json`: max HP bounded too)
    and of the round it is filed under. Anything else is a PoolError naming the file and the
    entry."""
    path = Path(path)
    data = load_json(read_text(path, "pool file", PoolError), str(path), PoolError,
                     object_pairs_hook=_no_duplicate_keys(path))
    if not isinstance(data, dict) or data.get("format") != POOL_FORMAT:
        raise PoolError(f"{path}: not a rune-env pool file (missing \"format\": \"{POOL_FORMAT}\")")
    if data.get("version") != POOL_VERSION:
        raise PoolError(f"{path}: pool version {data.get('version')!r}; this rune-env reads "
                        f"version {POOL_VERSION}")
    for key in ("rules_hash", "rank", "rounds"):
        if key not in data:
            raise PoolError(f"{path}: missing {key!r}")
    other_rules = data["rules_hash"] != rules.hash
    if other_rules:
        msg = (f"{path}: pool was made under rules {data['rules_hash']}, the current rules are "
               f"{rules.hash}")
        if strict:
            raise PoolError(msg)
        beyond = _rounds_beyond(data.get("rounds"), rules)
        if beyond:
            # rounds no run of these rules reaches (run.round_cap is lower than the pool's):
            # left out, not an error, as the rest of a pool of other rules is fielded
            shown = (f"{beyond[0]}-{beyond[-1]}" if beyond == list(range(beyond[0], beyond[-1] + 1))
                     else ", ".join(map(str, beyond)))
            msg += (f"; its rounds {shown} are past run.round_cap {max_round(rules)} and are "
                    f"left out")
        warnings.warn(msg, stacklevel=2)
    if not isinstance(data["rank"], str) or len(data["rank"]) > MAX_GHOST_TEXT:
        raise PoolError(f"{path}: \"rank\": expected text of at most {MAX_GHOST_TEXT} characters "
                        f"(the rank's name), got {_shown(data['rank'])}")
    if not isinstance(data["rounds"], dict):
        raise PoolError(f"{path}: \"rounds\" must be an object {{round: [ghosts]}}")
    if not isinstance(data.get("provenance", {}), dict):
        raise PoolError(f"{path}: \"provenance\" must be an object")
    skipped = set(_rounds_beyond(data["rounds"], rules)) if other_rules else set()
    rounds = {_round_key(path, key, rules): _ghosts(path, key, ghosts, rules)
              for key, ghosts in data["rounds"].items()
              if not (_ROUND_KEY.fullmatch(key) and int(key) in skipped)}
    return Pool(rules_hash=data["rules_hash"], rank=str(data["rank"]), rounds=rounds,
                provenance=data.get("provenance", {}))


def _rounds_beyond(rounds: Any, rules: Rules) -> list[int]:
    """The round keys of `rounds` (a pool's "rounds", checked later) that are whole numbers past
    run.round_cap, in order."""
    if not isinstance(rounds, dict):
        return []
    top = max_round(rules)
    return sorted(int(k) for k in rounds if isinstance(k, str) and _ROUND_KEY.fullmatch(k)
                  and int(k) > top)


def _no_duplicate_keys(path: Path):
    """A JSON object hook refusing a key given twice (json keeps the last one silently: a round
    or a board's field given twice would be half read), as board files do."""
    def hook(pairs: list) -> dict:
        out = dict(pairs)
        if len(out) != len(pairs):      # rare: only then look for the key, to name it
            seen: set = set()
            for key, _ in pairs:
                if key in seen:
                    raise PoolError(f"{path}: key {key!r} given twice (a JSON object keeps only "
                                    f"one of them)")
                seen.add(key)
        return out
    return hook


def _round_key(path: Path, key: str, rules: Rules) -> int:
    """A round key: a whole decimal number in 1..run.round_cap (checked before int(): a key of
    5,000 digits is past Python's int-from-text limit)."""
    top = max_round(rules)
    if not _ROUND_KEY.fullmatch(key) or int(key) > top:
        shown = repr(key) if len(key) <= 20 else f"{key[:12]!r}... ({len(key)} characters)"
        raise PoolError(f"{path}: rounds[{shown}]: not a round number (a whole number in "
                        f"1..{top}, run.round_cap)")
    return int(key)


def _ghosts(path: Path, key: str, ghosts: Any, rules: Rules) -> list[dict]:
    """The ghosts filed under round `key`, each with a count in range and a valid board of that
    round."""
    if not isinstance(ghosts, list):
        raise PoolError(f"{path}: rounds[{key!r}]: expected a list of ghosts")
    if not ghosts:
        # nothing writes one (pools are built from the ghosts drafted, round by round), and
        # every reader of a round draws one of its ghosts: leave a round out instead
        raise PoolError(f"{path}: rounds[{key!r}]: no ghosts (a round the pool has none of is "
                        f"left out of \"rounds\")")
    round_ = int(key)
    for i, g in enumerate(ghosts):
        where = f"rounds[{key!r}][{i}]"
        if not isinstance(g, dict) or "board" not in g:
            raise PoolError(f"{path}: {where}: a ghost needs a \"board\"")
        count = g.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or \
                not 1 <= count <= MAX_GHOST_COUNT:
            shown = repr(count) if len(repr(count)) <= 24 else f"a number of {len(str(count))} digits"
            raise PoolError(f"{path}: {where}.count: expected a whole number in "
                            f"1..{MAX_GHOST_COUNT} (drafting runs that drafted this board), got "
                            f"{shown}")
        _ghost_fields(path, where, g)
        try:
            board = Board.from_json(g["board"], rules, source=f"{where}.board")
        except BoardError as exc:
            raise PoolError(f"{path}: {exc}") from None
        # a board without "round" (pools before boards kept it) is fielded as of the key's round
        explicit = not isinstance(g["board"], dict) or "round" in g["board"]
        said = board.round if explicit else g.get("round", round_)
        if said != round_ or g.get("round", round_) != round_:
            said = said if said != round_ else g.get("round")
            raise PoolError(f"{path}: {where}: a ghost of round {said!r} filed under round "
                            f"{round_} (its board's round and its \"round\" must be the key)")
    return ghosts


def _shown(value: Any) -> str:
    """A value for an error line: its repr, or its type and size where that is long."""
    if isinstance(value, (list, dict)):
        return (f"a JSON {'list' if isinstance(value, list) else 'object'} of {len(value)} "
                f"item{'' if len(value) == 1 else 's'}")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**24:
        return f"a number of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 40 else f"text of {len(value)} characters starting {text[:24]}..."


def _ghost_fields(path: Path, where: str, g: dict) -> None:
    """A ghost's optional fields besides its board and count, each absent, null or of its type:
    "agent" and "rank" text of at most MAX_GHOST_TEXT characters (printed, and used as keys by
    scripts/board_stats.py), "seed" a whole number >= 0 (a run seed), "round" a whole number
    (the caller checks it is the key's)."""
    for name in ("agent", "rank"):
        value = g.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_GHOST_TEXT):
            raise PoolError(f"{path}: {where}.{name}: expected text of at most {MAX_GHOST_TEXT} "
                            f"characters (or null), got {_shown(value)}")
    seed = g.get("seed")
    if seed is not None and not _whole(seed, 0):
        raise PoolError(f"{path}: {where}.seed: expected a whole number in 0..{MAX_GHOST_NUMBER} "
                        f"(or null), got {_shown(seed)}")
    if "round" in g and not _whole(g["round"], 1):     # 1.0 or true would pass for round 1
        raise PoolError(f"{path}: {where}.round: expected a whole number in "
                        f"1..{MAX_GHOST_NUMBER} (the round it is filed under), got "
                        f"{_shown(g['round'])}")


def _whole(value: Any, low: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and \
        low <= value <= MAX_GHOST_NUMBER


@dataclass
class PoolOpponents:
    pool: Pool
    rules: Rules
    fallback: Any = None
    _cache: dict = field(default_factory=dict)

    def __call__(self, round_: int, effects: RankEffects, boss_rules: list,
                 rng: np.random.Generator) -> Board:
        if round_ not in self._cache:
            self._cache[round_] = (self.pool.boards(round_, self.rules),
                                   np.cumsum(self.pool.counts(round_), dtype=np.int64))
        boards, cumulative = self._cache[round_]
        if not boards:
            fallback = self.fallback or default_opponents(self.rules)
            return fallback(round_, effects, boss_rules, rng)
        # one draw over the total count: with every count 1 this is the uniform draw
        # rng.integers(len(boards)) of a pool without counts, so old pools field the same boards
        pick = int(rng.integers(int(cumulative[-1])))
        return boards[int(np.searchsorted(cumulative, pick, side="right"))]
