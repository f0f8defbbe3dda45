"""The fast battle engine: the reference's rules, compiled (numba) and batched.

    fast_battle(board0, board1, rules=None) -> BattleResult         (events=None: no trace)
    fast_battles(pairs, rules=None, workers=None) -> dict of arrays

It plays exactly the battles of `rune_env.battle.battle` (the reference, the source of truth):
same winner, time, casts, turns and seals, HP equal to the last bit in practice (the parity tests
allow 1e-9 relative). `tests/battle/test_fast_parity.py` and `scripts/parity_check.py` compare the two.

`fast_battles` returns, for n pairs, numpy arrays in the order of `pairs`:
    winner   int8 (n,)      0, 1, or -1 for a draw
    time     float64 (n,)   seconds (the duration at a timeout)
    hp       float64 (n, 2) clamped at 0
    max_hp   float64 (n, 2)
    casts    int64 (n, 2)
    turns    int64 (n, 2)
    seals    int64 (n, 2)   sealed minus unsealed
    rests    int64 (n, 2)   rest turns (D-50)
    knockout bool (n,)      reason == "knockout"
`workers` threads share the batch (default: every core this process may use). The compiled
kernel releases the GIL, so `fast_battles` runs it on a thread pool, each call on a contiguous
chunk of the pairs (about 8 chunks per thread, handed out as threads free up) writing only the
rows of its chunk: the output never depends on the number of threads. (One compiled kernel for
one thread and many: numba's `parallel=True` would compile a second, larger one, and the cold
compile is what a fresh machine waits for.) Small batches play on one thread. The kernel compiles
on first use and caches the machine code on disk (`cache=True`, in `__pycache__`), so later
processes only load it (`warm_up()` does that up front, and keeps what it loaded out of the
garbage collector's walks). Only the deterministic variant is compiled; dice battles are handed
to the reference engine with their seed (see `fast_battles`).

A battle that would overflow a fixed-size buffer of the kernel (more than 256 warding-seal unseals
scheduled at once on one side: no real board comes near) is replayed by the reference engine, so
the results are always the reference's.

The public API (`__all__`); the rest of the package (compile.py's tables, kernel.py) is its own:
    fast_battle, fast_battles, warm_up   battles, as above
    BattleGrid(columns, rules)           many batches of boards, each against the same columns
                                         (a search's reference population), the columns encoded
                                         once: `grid.play(rows, seat)` gives what `fast_battles`
                                         gives for the pairs (row, column), row-major;
                                         `grid.play_pairs(grid.rows(rows), seat, r, c)` for
                                         any of those pairs
    BoardAnalyser                        a board's analysis at battle start, compiled
    compile_rules(rules)                 the rules as the kernel's tables: (rules_i, rules_f, ids)
    encode_board(board, rules)           one board as a kernel record (rules_i, rules_f, enc,
                                         hand_cap, mods_cap)
    BOARD_RECORD                         where a board record keeps its fields (BoardRecordLayout)
    ANALYSIS_LAYOUT                      where the work arrays keep a board's analysis
                                         (AnalysisLayout)
    make_state, setup_side, analyse      the kernel's compiled pieces, for compiled code that
                                         analyses boards itself (the env's observation): work
                                         arrays, a side set up from a board record, its analysis;
                                         loaded on first use, checked (`loaded_kernel`)
    loaded_kernel, fresh_module          the checked kernel module; the check, for modules that
                                         compile in the kernel's constants
    signature_with_kernel(files, values) the source signature of such a module: its own files
                                         and the kernel's sources
"""
from __future__ import annotations

import gc
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...rules.board import Board
from ...rules.config import Rules, default_rules
from ..result import BattleResult
from .compile import (ANF_POWER, KERNEL_SOURCES, REC_CORE, REC_HEADER, REC_N_ARTS, REC_N_BOSSES,
                      REC_N_HAND, REC_N_RELICS, REC_N_RUNES, REC_ROUND, REC_SUN, RI_N_CELLS,
                      RI_N_FLOWS, ROW_SCALARS, S_ANALYSIS, _filled_max_hp, _int32, _records,
                      compile_rules, encode_board, encode_pairs, source_signature)

__all__ = ["ANALYSIS_LAYOUT", "AnalysisLayout", "BOARD_RECORD", "BattleGrid", "BoardAnalyser",
           "BoardRecordLayout", "analyse", "compile_rules", "encode_board", "fast_battle",
           "fast_battles", "fresh_module", "loaded_kernel", "make_state", "setup_side",
           "signature_with_kernel", "warm_up"]

MIN_PER_THREAD = 32      # fewer battles than this per thread: play them on one thread
CHUNKS_PER_THREAD = 8    # the batch is cut into about this many chunks per thread




class BoardRecordLayout(NamedTuple):
    """The offsets of a board record's header fields (from the record's start, `encode_board`'s
    `enc`), in the header's order. The lists follow the header, from `lists`: n_runes x (cell,
    kind id, grade), n_arts x (cell, artifact id), then the hand, the boss rules, and n_relics x
    relic modifier id. (A namedtuple of ints: compiled code reads its fields as constants.)"""

    round: int        # the battle's round
    core: int         # the core's index, -1: none
    sun: int          # the sun element's kind id, -1: none
    n_runes: int
    n_arts: int
    n_hand: int
    n_bosses: int
    n_relics: int
    lists: int        # where the lists start: the header's length


BOARD_RECORD = BoardRecordLayout(
    round=REC_ROUND, core=REC_CORE, sun=REC_SUN, n_runes=REC_N_RUNES, n_arts=REC_N_ARTS,
    n_hand=REC_N_HAND, n_bosses=REC_N_BOSSES, n_relics=REC_N_RELICS, lists=REC_HEADER)


class AnalysisLayout(NamedTuple):
    """Where the kernel's work arrays (`make_state`: cells, cells_f, sides, sides_f) keep a side's
    board analysis after `setup_side` and `analyse`: `row = sides[side, scalars_row,
    analysis_row]` is the analysis' row of `cells_f`, and `cells_f[row, cell, power]` a casting
    rune's power; `rules_i[n_cells]` is the number of cells."""

    n_cells: int         # index in rules_i
    scalars_row: int     # the row of `sides` with a side's int scalars
    analysis_row: int    # the scalar that names the side's current analysis row
    power: int           # the power's column of an analysis row of cells_f


ANALYSIS_LAYOUT = AnalysisLayout(n_cells=RI_N_CELLS, scalars_row=ROW_SCALARS,
                                 analysis_row=S_ANALYSIS, power=ANF_POWER)

# the kernel's compiled functions this package exports, loaded on first use (`__getattr__`)
KERNEL_FUNCTIONS = ("make_state", "setup_side", "analyse")


def __getattr__(name: str):
    if name in KERNEL_FUNCTIONS:
        return getattr(loaded_kernel(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def signature_with_kernel(files, values=()) -> int:
    """The source signature (`fresh_module`) of a compiled module that compiles in the kernel's
    constants or links its functions: its own `files` and `values`, the kernel's sources and
    this file (the layouts above)."""
    return source_signature((*KERNEL_SOURCES, Path(__file__).resolve(), *files), values)


_KERNEL = None


def loaded_kernel():
    """The compiled kernel module (`kernel.py`), imported lazily (importing numba takes about a
    second) and checked once against the sources it was compiled from (`fresh_module`)."""
    global _KERNEL
    if _KERNEL is None:
        from . import kernel
        from .compile import KERNEL_SIGNATURE
        _KERNEL = fresh_module(kernel, KERNEL_SIGNATURE)
    return _KERNEL


def recompile_module(module):
    """Recompile every compiled function defined in `module` (not those it imports):
    Dispatcher.recompile() empties the function's disk cache and compiles it again with the
    module's current globals (the functions not compiled yet compile at their first call, and
    are cached again)."""
    for obj in list(vars(module).values()):
        func = getattr(obj, "py_func", None)
        if callable(getattr(obj, "recompile", None)) and func is not None \
                and func.__module__ == module.__name__:
            obj.recompile()
    return module


def fresh_module(module, signature: int, recompile=recompile_module, stem: str = "kernel"):
    """`module` (a numba module with `cache=True` functions) if the signature compiled into it
    (its `compiled_signature()`) is `signature`, else recompile(module), checked again.

    numba keys the disk cache of a file by that file alone, while a compiled module also
    compiles in the constants of the modules it imports and links the compiled functions it
    calls: an edit of one of those alone would otherwise run stale machine code. So such a
    module compiles in a hash of all its sources (`compile.source_signature`) and is checked
    here; `stem` names its cache files in the errors."""
    if module.compiled_signature() == signature:
        return module
    try:
        module = recompile(module)
    except OSError as exc:
        raise RuntimeError(f"the fast engine's cached {stem} module was compiled for another "
                           f"table layout or from other sources and could not be recompiled "
                           f"({exc}); delete the numba cache files {stem}.*.nbi / "
                           f"{stem}.*.nbc") from None
    if module.compiled_signature() != signature:
        raise RuntimeError(f"the fast engine's cached {stem} module was compiled for another "
                           f"table layout or from other sources and recompiling did not help; "
                           f"delete the numba cache files {stem}.*.nbi / {stem}.*.nbc "
                           f"(NUMBA_CACHE_DIR or __pycache__)")
    return module


def _arrays(n: int) -> dict[str, np.ndarray]:
    return {
        "winner": np.empty(n, dtype=np.int8),
        "time": np.empty(n, dtype=np.float64),
        "hp": np.empty((n, 2), dtype=np.float64),
        "max_hp": np.empty((n, 2), dtype=np.float64),
        "casts": np.empty((n, 2), dtype=np.int64),
        "turns": np.empty((n, 2), dtype=np.int64),
        "seals": np.empty((n, 2), dtype=np.int64),
        "rests": np.empty((n, 2), dtype=np.int64),
        "knockout": np.empty(n, dtype=np.bool_),
    }


def _threads(workers: int | None) -> int:
    if workers is not None:
        return max(1, int(workers))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not Linux
        return max(1, os.cpu_count() or 1)


def _run(pairs, rules: Rules, workers: int | None) -> dict[str, np.ndarray]:
    _check_deterministic(rules)
    n = len(pairs)
    if n == 0:
        return _arrays(0)
    return _play_encoded(encode_pairs(pairs, rules), n, workers, lambda j: pairs[j], rules)


def _check_deterministic(rules: Rules) -> None:
    if rules.spec.variant != "deterministic":
        raise NotImplementedError(
            f"the fast engine plays the deterministic variant only (rules variant: "
            f"{rules.spec.variant!r}); use rune_env.battle.battle")


def _play_encoded(encoded, n: int, workers: int | None, pair_of, rules: Rules
                  ) -> dict[str, np.ndarray]:
    """The kernel on n encoded pairs (`encode_pairs`' tuple); `pair_of(j)` gives pair j's boards
    for the reference engine's replay of a battle the kernel could not play."""
    k = loaded_kernel()
    out = _arrays(n)
    status = np.zeros(n, dtype=np.int8)
    rules_i, rules_f, enc, offs, maxhp, i0, i1, hand_cap, mods_cap = encoded
    results = (out["winner"], out["time"], out["hp"], out["max_hp"], out["casts"], out["turns"],
               out["seals"], out["rests"], out["knockout"], status)
    threads = min(_threads(workers), n // MIN_PER_THREAD)
    if threads <= 1:
        k.run_serial(rules_i, rules_f, enc, offs, maxhp, i0, i1, hand_cap, mods_cap, *results)
    else:
        # the kernel releases the GIL: each thread plays contiguous chunks, writing only the rows
        # of its chunk (views), so the output does not depend on the threads
        n_chunks = min(n // MIN_PER_THREAD, threads * CHUNKS_PER_THREAD)
        bounds = [(c * n // n_chunks, (c + 1) * n // n_chunks) for c in range(n_chunks)]

        def play(bound):
            lo, hi = bound
            k.run_serial(rules_i, rules_f, enc, offs, maxhp, i0[lo:hi], i1[lo:hi], hand_cap,
                         mods_cap, *(a[lo:hi] for a in results))

        with ThreadPoolExecutor(max_workers=threads) as pool:
            for _ in pool.map(play, bounds):
                pass
    _replay_unplayed(out, status, pair_of, rules)
    return out


def _replay_unplayed(out: dict, status: np.ndarray, pair_of, rules: Rules) -> None:
    """Rows whose pair the kernel could not play (`status`), filled by the reference engine;
    `pair_of(j)` gives row j's boards."""
    bad = np.nonzero(status)[0]
    if len(bad):
        from ..engine import battle
        for j in bad:
            board0, board1 = pair_of(int(j))
            _put(out, int(j), battle(board0, board1, rules))


class BattleGrid:
    """Batches of boards (rows), each against the same boards (columns): a search that scores
    many candidates against one reference population. The columns' records are encoded once;
    each `play` encodes its rows only and indexes the pairs with arrays instead of a Python
    loop over them. `play(rows, seat)` returns exactly `fast_battles` of the pairs (row,
    column) for every row and column, row-major (pair j = rows[j // len(columns)] against
    columns[j % len(columns)]), the row board in side `seat` (0: board 0, 1: board 1): a pair's
    battle does not depend on the batch it is played in. `rows(boards)` encodes a batch once;
    `play_pairs(encoded, seat, row_index, column_index)` plays any of its pairs, and
    `play_bounded` plays each row against the columns in a given order, stopping a row once its
    floor is out of reach (a search's climb, which keeps a child only if it beats its parent)."""

    def __init__(self, columns, rules: Rules | None = None):
        self.rules = rules or default_rules()
        self.columns = list(columns)
        if not self.columns:
            raise ValueError("a battle grid needs at least one column board")
        self._compiled = self.rules.spec.variant == "deterministic"
        self._index: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if self._compiled:
            flat, offsets, max_hp, hand_cap, mods_cap = _records(self.columns, self.rules)
            self._flat, self._offsets, self._max_hp = flat, offsets, max_hp
            self._caps = (hand_cap, mods_cap)

    def _pair_index(self, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """(row index, column index) of every pair of `n_rows` rows, row-major, kept per batch
        size: a search plays batches of a few sizes."""
        if n_rows not in self._index:
            n_cols = len(self.columns)
            self._index[n_rows] = (np.repeat(np.arange(n_rows, dtype=np.int64), n_cols),
                                   np.tile(np.arange(n_cols, dtype=np.int64), n_rows))
        return self._index[n_rows]

    def play(self, rows, seat: int, workers: int | None = 1) -> dict[str, np.ndarray]:
        encoded = self.rows(rows)
        return self.play_pairs(encoded, seat, *self._pair_index(len(encoded.boards)), workers)

    def _pair(self, row: Board, column: int, seat: int) -> tuple[Board, Board]:
        """(board 0, board 1) of a row against column `column`, the row in side `seat`."""
        col = self.columns[column]
        return (row, col) if seat == 0 else (col, row)

    def rows(self, rows) -> "GridRows":
        """`rows` encoded once for several `play_pairs` (a search that plays a batch against
        some columns first, and against the rest only for the rows still in the running)."""
        rows = list(rows)
        if not self._compiled or not rows:
            return GridRows(rows, None)
        flat, offsets, max_hp, hand_cap, mods_cap = _records(rows, self.rules)
        base = len(self._flat)
        enc = _int32(self._flat + flat)
        offs = np.array(self._offsets + [base + o for o in offsets], dtype=np.int64)
        maxhp = _filled_max_hp(self._max_hp + max_hp, enc, offs, self.rules)
        return GridRows(rows, (enc, offs, maxhp, max(hand_cap, self._caps[0]),
                               max(mods_cap, self._caps[1])))

    def play_pairs(self, rows: "GridRows", seat: int, row_index: np.ndarray,
                   column_index: np.ndarray, workers: int | None = 1) -> dict[str, np.ndarray]:
        """The pairs (rows[row_index[j]], columns[column_index[j]]), pair j in row j of the
        output, the row board in side `seat`: what `fast_battles` gives for them."""
        _check_seat(seat)
        row_index = np.asarray(row_index, dtype=np.int64)
        column_index = np.asarray(column_index, dtype=np.int64)
        n = len(row_index)
        if len(column_index) != n:
            raise ValueError(f"play_pairs: {n} row indices but {len(column_index)} column indices")
        _check_indices("play_pairs: row", row_index, len(rows.boards))
        _check_indices("play_pairs: column", column_index, len(self.columns))

        def pair_of(j: int):
            return self._pair(rows.boards[row_index[j]], column_index[j], seat)

        if not self._compiled:      # the dice variant, or one the kernel refuses: as fast_battles
            return fast_battles([pair_of(j) for j in range(n)], self.rules, workers)
        if n == 0:
            return _arrays(0)
        rules_i, rules_f, _ = compile_rules(self.rules)
        enc, offs, maxhp, hand_cap, mods_cap = rows.encoded
        # the records: the columns' first, then the rows'
        mine, theirs = row_index + len(self.columns), column_index
        i0, i1 = (mine, theirs) if seat == 0 else (theirs, mine)
        encoded = (rules_i, rules_f, enc, offs, maxhp, i0, i1, hand_cap, mods_cap)
        return _play_encoded(encoded, n, workers, pair_of, self.rules)

    def play_bounded(self, rows: "GridRows", seat: int, order: np.ndarray, weights: np.ndarray,
                     floors: np.ndarray, margin_weight: float
                     ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Each row against the columns in `order` (column indices) in turn, the row in `seat`,
        a row stopping once its battles cannot reach its floor: floors[i] bounds the sum over
        its battles of weights[k] x (points + margin_weight x margin) (points 1 a win, 0.5 a
        draw, 0 a loss; margin the row's HP share less the column's), weights[k] the weight of
        column order[k], a battle not played counting the most it could (a win at full HP).
        Returns (out, played): `out` as `fast_battles` gives the pairs (row i, column
        order[k]), in row i x len(order) + k, for k < played[i] (the rest unset)."""
        _check_seat(seat)
        order = np.asarray(order, dtype=np.int64)
        n_rows, n_cols = len(rows.boards), len(order)
        weights = np.asarray(weights, dtype=np.float64)
        floors = np.asarray(floors, dtype=np.float64)
        if len(weights) != n_cols or len(floors) != n_rows:
            raise ValueError(f"play_bounded: {n_cols} columns, {len(weights)} weights; "
                             f"{n_rows} rows, {len(floors)} floors")
        _check_indices("play_bounded: column", order, len(self.columns))
        if not self._compiled or n_rows == 0 or n_cols == 0:
            # the dice variant, or nothing to play: every pair, no row stopped
            row_index = np.repeat(np.arange(n_rows, dtype=np.int64), n_cols)
            out = self.play_pairs(rows, seat, row_index, np.tile(order, n_rows))
            return out, np.full(n_rows, n_cols, dtype=np.int64)
        rules_i, rules_f, _ = compile_rules(self.rules)
        enc, offs, maxhp, hand_cap, mods_cap = rows.encoded
        # the most the columns from k on can add: a win with the whole margin each
        top = (1.0 + abs(margin_weight)) * np.concatenate([np.cumsum(weights[::-1])[::-1], [0.0]])
        n = n_rows * n_cols
        out = _arrays(n)
        status = np.zeros(n, dtype=np.int8)
        played = np.zeros(n_rows, dtype=np.int64)
        records = np.arange(len(self.columns), len(self.columns) + n_rows, dtype=np.int64)
        loaded_kernel().run_bounded(
            rules_i, rules_f, enc, offs, maxhp, records, order, seat, weights, top, floors,
            float(margin_weight), hand_cap, mods_cap, out["winner"], out["time"], out["hp"],
            out["max_hp"], out["casts"], out["turns"], out["seals"], out["rests"],
            out["knockout"], status, played)
        _replay_unplayed(out, status, lambda j: self._pair(rows.boards[j // n_cols],
                                                            int(order[j % n_cols]), seat),
                         self.rules)
        return out, played


class GridRows(NamedTuple):
    """Boards encoded for `BattleGrid.play_pairs` (`BattleGrid.rows`); `encoded` is None where
    the grid does not compile (the dice variant) or there are no boards."""

    boards: list
    encoded: tuple | None


def _check_indices(what: str, index: np.ndarray, size: int) -> None:
    """The kernel reads a record at each index unchecked: one outside 0..size-1 is refused."""
    if len(index) and (index.min() < 0 or index.max() >= size):
        raise ValueError(f"{what} index out of range 0..{size - 1}: "
                         f"{int(index.min())}..{int(index.max())}")


def _check_seat(seat: int) -> None:
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1; got {seat!r}")


_LOCAL = threading.local()   # per thread: the work arrays of single battles


def _run_one(board0: Board, board1: Board, rules: Rules) -> dict[str, np.ndarray]:
    """One battle on this thread, reusing its work arrays (the env fights one battle per round:
    allocating the arrays each time would cost more than the battle)."""
    if rules.spec.variant != "deterministic":
        return _run([(board0, board1)], rules, 1)     # raises the same error
    k = loaded_kernel()
    rules_i, rules_f, enc, offs, maxhp, i0, i1, hand_cap, mods_cap = encode_pairs(
        [(board0, board1)], rules)
    cache = getattr(_LOCAL, "single", None)
    if cache is None:
        cache = _LOCAL.single = {}
    entry = cache.get(rules.hash)
    if entry is None or hand_cap > entry[0] or mods_cap > entry[1]:
        caps = (max(hand_cap, 8), max(mods_cap, 8))
        entry = cache[rules.hash] = (*caps, k.make_state(rules_i, *caps), _arrays(1),
                                     np.zeros(1, dtype=np.int8))
    _, _, state, out, status = entry
    k.play_into(rules_i, rules_f, *state, enc, offs, maxhp, i0[0], i1[0], 0, out["winner"],
                out["time"], out["hp"], out["max_hp"], out["casts"], out["turns"], out["seals"],
                out["rests"], out["knockout"], status)
    if status[0] != 0:
        from ..engine import battle
        _put(out, 0, battle(board0, board1, rules))
    return out


def _put(out: dict, j: int, r: BattleResult) -> None:
    out["winner"][j] = -1 if r.winner is None else r.winner
    out["time"][j] = r.time
    out["hp"][j] = r.hp
    out["max_hp"][j] = r.max_hp
    out["casts"][j] = r.casts
    out["turns"][j] = r.turns
    out["seals"][j] = r.seals
    out["rests"][j] = r.rests
    out["knockout"][j] = r.reason == "knockout"


def _is_dice(rules: Rules, variant: str | None) -> bool:
    return (variant or rules.spec.variant) == "dice"


def fast_battles(pairs, rules: Rules | None = None, workers: int | None = None,
                 seeds=None, variant: str | None = None) -> dict[str, np.ndarray]:
    """Play many battles (a sequence of (board0, board1)); results as arrays, in input order.

    The dice variant (`variant="dice"` or the rules' own) is played by the reference engine,
    battle i with seed `seeds[i]` (default 0): the compiled kernel is deterministic-only, so dice
    results equal the reference's per seed by construction."""
    rules = rules or default_rules()
    pairs = list(pairs)
    if _is_dice(rules, variant):
        from ..engine import battle
        out = _arrays(len(pairs))
        for j, (a, b) in enumerate(pairs):
            seed = 0 if seeds is None else int(seeds[j])
            _put(out, j, battle(a, b, rules, seed=seed, variant="dice"))
        return out
    return _run(pairs, rules, workers)


def fast_battle(board0: Board, board1: Board, rules: Rules | None = None, seed: int = 0,
                variant: str | None = None) -> BattleResult:
    """One battle, the same as `rune_env.battle.battle(board0, board1, rules)` without a trace
    (the dice variant: the reference engine's battle with `seed`, see `fast_battles`)."""
    rules = rules or default_rules()
    if _is_dice(rules, variant):
        from ..engine import battle
        return battle(board0, board1, rules, seed=seed, variant="dice")
    out = _run_one(board0, board1, rules)
    w = int(out["winner"][0])
    return BattleResult(
        winner=None if w < 0 else w, time=float(out["time"][0]),
        hp=(float(out["hp"][0, 0]), float(out["hp"][0, 1])),
        max_hp=(float(out["max_hp"][0, 0]), float(out["max_hp"][0, 1])),
        casts=(int(out["casts"][0, 0]), int(out["casts"][0, 1])),
        turns=(int(out["turns"][0, 0]), int(out["turns"][0, 1])),
        seals=(int(out["seals"][0, 0]), int(out["seals"][0, 1])),
        rests=(int(out["rests"][0, 0]), int(out["rests"][0, 1])),
        reason="knockout" if out["knockout"][0] else "timeout", events=None)


class BoardAnalyser:
    """`analysis.analyse` of a board at battle start (no seals), compiled: the same numbers as
    the reference (the kernel mirrors it operation for operation; `tests/battle/test_fast_parity.py`
    checks it on random boards): the powers, delays, effective grades, acting flows and the
    interval, for the callers that value boards. One object keeps its work arrays; not
    thread-safe (one per thread).

        an = BoardAnalyser(rules)
        power, info, interval_ms = an(board)
        # power: float64 (n_cells,), -1.0 where no casting rune (or a sealed one: none at start)
        # info: int64 (n_cells, 3 + n_flows): delayed, effective grade (0: empty), number of
        #       acting flows, then the acting flows' indices in `rules.spec.flows` order
    """

    def __init__(self, rules: Rules | None = None):
        self.rules = rules or default_rules()
        self._k = loaded_kernel()
        self._rules_i = compile_rules(self.rules).rules_i
        self.n_cells = int(self._rules_i[RI_N_CELLS])
        self.n_flows = int(self._rules_i[RI_N_FLOWS])
        self._caps = (0, 0)
        self._state = None
        self._zero = np.int64(0)     # the record's offset (typed once: no per-call conversion)

    def __getstate__(self) -> dict:
        # the kernel module and the work arrays are rebuilt after unpickling
        return {**self.__dict__, "_k": None, "_state": None, "_caps": (0, 0)}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._k = loaded_kernel()

    def _work(self, hand_cap: int, mods_cap: int):
        if self._state is None or hand_cap > self._caps[0] or mods_cap > self._caps[1]:
            caps = (max(hand_cap, 8), max(mods_cap, 8))
            self._state = self._k.make_state(self._rules_i, *caps)
            self._caps = caps
        return self._state

    def __call__(self, board: Board) -> tuple[np.ndarray, np.ndarray, int]:
        rules_i, rules_f, enc, hand_cap, mods_cap = encode_board(board, self.rules)
        state = self._work(hand_cap, mods_cap)
        power = np.empty(self.n_cells, dtype=np.float64)
        info = np.empty((self.n_cells, 3 + self.n_flows), dtype=np.int64)
        interval = self._k.board_analysis(rules_i, rules_f, *state, enc, self._zero, power, info)
        if interval < 0:
            raise ValueError("board record out of range (an unvalidated board?)")
        return power, info, int(interval)


def warm_up(rules: Rules | None = None) -> None:
    """Compile (or load from the disk cache) the kernel now rather than at the first battle:
    its loops of `fast_battles` and of `BattleGrid.play_bounded` (the search player's), and the
    board analysis of `BoardAnalyser` (the drafter's and greedy's board values: compiled at their
    first action before, which a fresh checkout's first evaluation timed as 5-14 ms an action
    instead of 0.3); then, once a process, take what that loaded out of the garbage collector's
    walks (`_freeze_long_lived`)."""
    rules = rules or default_rules()
    b = Board(runes={0: ("fire", 1)})
    fast_battles([(b, b)], rules, workers=1)
    grid = BattleGrid([b], rules)
    grid.play_bounded(grid.rows([b]), 0, [0], [1.0], [0.0], 0.0)
    BoardAnalyser(rules)(b)
    _freeze_long_lived()


_FROZEN = False


def _freeze_long_lived() -> None:
    """Once a process (`warm_up` calls it): collect, then move every object alive out of the
    garbage collector's generations (`gc.freeze`). Loading the kernel brings in about 110k
    objects of numba's (its typing and target machinery) that live as long as the process;
    before, every full collection walked them, about 0.12 s, once every round or two of a
    searching player, a sixth of its dearest rounds. A frozen object is still freed when its
    last reference goes; only a reference cycle among objects alive now would never be
    collected, and the collection first frees the cycles already garbage."""
    global _FROZEN
    if not _FROZEN:
        _FROZEN = True
        gc.collect()
        gc.freeze()
