"""The fast engine (rune_env.battle.fast) plays exactly the reference's battles.

Not a rules test: nothing here is worked out by hand. Every expectation is the reference engine
(`rune_env.battle.battle`, the source of truth) run on the same boards now; the fast engine must
give the same winner, time, casts, turns, seals and reason, and HP / max HP within 1e-9 relative
(`agents.devtools.parity.compare`). The boards:
- 2,000 seeded pairs from `parity_pairs` (two thirds `random_board` over rounds 1..12, one third
  crowded `stress_board`s), plus the coverage boards (every core with every sun element, boss
  rule, relic, artifact and rune kind) against a sample of them;
- every battle of tests/data/golden.json (boards stored there), also against its pinned result;
- every pair of the example boards in configs/boards;
- a retuned rules config (radius 4, four grades, changed numbers, side effects on other flows,
  more opposition and affinity pairs), so that nothing the config holds is built into the kernel;
- radius-5 rules (90 cells) with boards of up to 80 runes: the kernel's cell masks cover cells
  0..61 one by one and share one bit above (a test that an uncapped shift there would fail);
and a traced sample shows that the pairs exercise every mechanism (seals, both unseal causes,
reserves, freezes, curses, drizzle, storms, reflection, discharge, delay skips, mimic copies,
second casts, dolls, wards, the seal cap).

Marked `outside_mutation_check` (too costly for every mutant): about 30-60 s the first time on a
machine (the kernel compiles, then is cached on disk), 15-20 s after. `pytest --heavy` plays
20,000 pairs instead.
`scripts/parity_check.py --pairs 100000` runs the same comparison at scale.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import FROZEN_RULES, frozen_rules, heavy_variants, retuned_rules

from rune_env.battle import battle
from rune_env.battle.fast import BattleGrid, fast_battle, fast_battles
from agents.devtools.parity import compare, coverage_boards, parity_pairs, stress_board
from rune_env.rules import Board, load_board, load_rules
from rune_env.rules.config import CASTING_KINDS, KINDS, Rules

pytestmark = pytest.mark.outside_mutation_check

ROOT = Path(__file__).resolve().parents[2]
# The heavier variant (pytest --heavy) plays ten times the pairs.
N_PAIRS = 20000 if heavy_variants() else 2000


def _check(pairs, rules, out=None):
    """Play `pairs` with both engines; fail listing the first mismatches with their boards."""
    out = fast_battles(pairs, rules) if out is None else out
    problems = []
    for j, (a, b) in enumerate(pairs):
        bad = compare(out, j, battle(a, b, rules))
        if bad:
            problems.append(f"pair {j}: {'; '.join(bad)}\n  board0 {json.dumps(a.to_json(rules))}"
                            f"\n  board1 {json.dumps(b.to_json(rules))}")
    assert not problems, f"{len(problems)} of {len(pairs)} battles differ:\n" + "\n".join(
        problems[:5])
    return out


_SAMPLES: dict[str, list] = {}


def _sample(rules):
    if rules.hash in _SAMPLES:
        return _SAMPLES[rules.hash]
    pairs = parity_pairs(N_PAIRS, 2024, rules)
    cover = coverage_boards(rules)
    pairs += [(a, b) for a in cover for b in cover[::9]]
    _SAMPLES[rules.hash] = pairs
    return pairs


def test_random_pairs_match_the_reference():
    rules = frozen_rules()
    pairs = _sample(rules)
    out = _check(pairs, rules)
    # the sample is not degenerate: both sides win by knockout, timeouts and draws happen
    ko = out["knockout"]
    assert ((out["winner"] == 0) & ko).any() and ((out["winner"] == 1) & ko).any()
    assert (~ko).any() and (out["winner"] == -1).any()
    assert (out["seals"] != 0).any()


def test_sample_fields_every_name():
    """Every core (the sun with every element), boss rule, relic, artifact and rune kind is on
    some board of the sample (the coverage boards make sure of it)."""
    rules = frozen_rules()
    spec = rules.spec
    seen = {"core": set(), "sun": set(), "boss": set(), "relic": set(), "artifact": set(),
            "kind": set(), "hand": set()}
    for a, b in _sample(rules):
        for x in (a, b):
            seen["core"].add(x.core)
            seen["sun"].add(x.sun_element)
            seen["boss"].update(x.boss_rules)
            seen["relic"].update(x.relics)
            seen["artifact"].update(x.artifacts.values())
            seen["kind"].update(k for k, _ in x.runes.values())
            seen["hand"].update(k for k, _ in x.hand)
    assert set(spec.cores) | {None} <= seen["core"]
    assert set(CASTING_KINDS) <= seen["sun"]
    assert set(spec.boss_rules) <= seen["boss"]
    assert set(spec.relics) <= seen["relic"]
    assert set(spec.artifacts) <= seen["artifact"]
    assert set(KINDS) <= seen["kind"] and set(KINDS) <= seen["hand"]


def test_sample_exercises_every_mechanism():
    """A traced slice of the stress pairs shows every mechanism the parity sample relies on."""
    rules = frozen_rules()
    rng = np.random.default_rng(77)
    types: set[str] = set()
    for _ in range(150):
        r = battle(stress_board(rng, rules), stress_board(rng, rules), rules, trace=True)
        for e in r.events:
            types.add(e["type"])
            if e["type"] == "unseal":
                types.add("unseal:" + e["cause"])
            if e["type"] == "cast" and "copy_of" in e:
                types.add("cast:copy")
            if e["type"] == "cast" and e.get("repeat"):
                types.add("cast:repeat")
    wanted = {"seal", "seal_capped", "reserve", "unseal:light", "unseal:warding_seal", "freeze",
              "curse", "drizzle_charge", "drizzle_use", "storm_delay", "reflect", "barrier_strip",
              "delay_skip", "cast:copy", "cast:repeat", "doll", "ward", "heal", "barrier"}
    assert wanted <= types, f"never happened: {sorted(wanted - types)}"


def test_golden_battles_match():
    rules = frozen_rules()
    data = json.loads((ROOT / "tests" / "data" / "golden.json").read_text(encoding="utf-8"))
    entries = data["battles"]
    pairs = [(Board.from_json(e["board0"], rules), Board.from_json(e["board1"], rules))
             for e in entries]
    out = _check(pairs, rules)
    if Path(os.environ.get("RUNE_TEST_RULES", FROZEN_RULES)).resolve() != FROZEN_RULES.resolve():
        return   # pinned results belong to the frozen rules
    for j, e in enumerate(entries):
        pinned = e["result"]
        w = int(out["winner"][j])
        assert (None if w < 0 else w) == pinned["winner"], e["name"]
        assert ("knockout" if out["knockout"][j] else "timeout") == pinned["reason"], e["name"]
        assert float(out["time"][j]) == pinned["time"], e["name"]
        for key in ("casts", "turns", "seals"):
            assert out[key][j].tolist() == pinned[key], (e["name"], key)
        for key in ("hp", "max_hp"):
            assert out[key][j].tolist() == pytest.approx(pinned[key], rel=1e-9), (e["name"], key)


def test_example_boards_match():
    rules = frozen_rules()
    boards = [load_board(p, rules) for p in sorted((ROOT / "configs" / "boards").glob("*.json"))]
    assert len(boards) >= 10
    _check([(a, b) for a in boards for b in boards], rules)


def test_retuned_rules_match():
    rules = retuned_rules()
    assert rules.radius == 4 and rules.max_grade == 4
    pairs = parity_pairs(400, 99, rules)
    cover = coverage_boards(rules)
    pairs += [(a, b) for a in cover[::3] for b in cover[::11]]
    _check(pairs, rules)


def _wide_board(rng: np.random.Generator, rules: Rules, n_cells: int) -> Board:
    """A board of 20 to 80 runes spread evenly over every cell of a radius-5 circle (90 cells),
    supports likelier than casting runes, mimics in the hand (a reserve can bring one): the
    kernel's cell masks give the cells from 62 on one shared bit, and its analysis memo is off
    above 62 runes."""
    kinds = list(KINDS)
    weights = np.array([1.0 if k in CASTING_KINDS else 1.5 for k in kinds])
    weights /= weights.sum()
    cells = rng.choice(n_cells, size=int(rng.integers(20, 81)), replace=False)
    runes = {int(c): (kinds[int(rng.choice(len(kinds), p=weights))],
                      int(rng.integers(1, rules.max_grade + 1))) for c in cells}
    hand = tuple(("mimic" if rng.random() < 0.5 else kinds[int(rng.integers(len(kinds)))],
                  int(rng.integers(1, rules.max_grade + 1))) for _ in range(4))
    return Board(runes=runes, hand=hand, open_sectors=frozenset(range(6)),
                 core="moon" if rng.random() < 0.5 else None, round=int(rng.integers(1, 13)))


def test_radius_5_rules_match():
    # 90 cells: beyond the 62 cells the kernel's bit masks and analysis memo cover one by one
    # (checked: with the occupied-cells mask built by an uncapped `1 << c`, this test fails)
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    data["rings"]["power_x"] = [1.0, 1.2, 1.4, 1.6, 1.8]               # radius 5: 90 cells
    rules = Rules.from_dict(data, source="radius 5 test rules")
    assert rules.radius == 5
    n_cells = 90
    rng = np.random.default_rng(55)
    boards = [_wide_board(rng, rules, n_cells) for _ in range(120)]
    assert any(max(b.runes) >= 62 and len(b.runes) > 62 for b in boards)
    assert sum(k == "mimic" for b in boards for c, (k, _) in b.runes.items() if c >= 62) >= 10
    pairs = list(zip(boards[::2], boards[1::2])) + list(zip(boards[:60], boards[60:]))
    pairs += parity_pairs(100, 7, rules)
    _check(pairs, rules)


def test_fast_battle_is_the_reference_result():
    rules = frozen_rules()
    rng = np.random.default_rng(5)
    for _ in range(20):
        a, b = stress_board(rng, rules), stress_board(rng, rules)
        ref = battle(a, b, rules)
        got = fast_battle(a, b, rules)
        assert got.events is None
        assert (got.winner, got.time, got.casts, got.turns, got.seals, got.reason) == (
            ref.winner, ref.time, ref.casts, ref.turns, ref.seals, ref.reason)
        assert got.hp == pytest.approx(ref.hp, rel=1e-9)
        assert got.max_hp == pytest.approx(ref.max_hp, rel=1e-9)


def test_output_order_and_threads():
    """The same pairs give the same arrays on 1 or 2 threads, and permuting the pairs permutes the
    rows; a board object used in several pairs is fine."""
    rules = frozen_rules()
    pairs = parity_pairs(300, 3, rules)
    shared = pairs[0][0]
    pairs += [(shared, b) for _, b in pairs[1:40]] + [(b, shared) for b, _ in pairs[40:80]]
    one = fast_battles(pairs, rules, workers=1)
    two = fast_battles(pairs, rules, workers=2)
    for key in one:
        assert np.array_equal(one[key], two[key]), key
    perm = np.random.default_rng(0).permutation(len(pairs))
    shuffled = fast_battles([pairs[i] for i in perm], rules, workers=2)
    for key in one:
        assert np.array_equal(shuffled[key], one[key][perm]), key
    assert one["winner"].dtype == np.int8 and one["hp"].shape == (len(pairs), 2)


def test_battle_grid_is_fast_battles_of_its_pairs():
    """`BattleGrid(columns).play(rows, seat)` is `fast_battles` of the pairs (row, column),
    row-major, the row in `seat`, to the last bit, for both seats and over several batches on
    one grid (the columns encoded once, the rows each time); the board of an unchecked grade 0
    is left to the reference engine there too; a grid refuses no columns and a seat of 2."""
    rules = frozen_rules()
    boards = [b for pair in parity_pairs(60, 11, rules) for b in pair]
    columns, rows = boards[:17], boards[17:]
    grid = BattleGrid(columns, rules)
    for seat in (0, 1):
        for batch in (rows[:5], rows[5:40], rows[40:41], []):
            pairs = [(r, c) if seat == 0 else (c, r) for r in batch for c in columns]
            want = fast_battles(pairs, rules, workers=1)
            got = grid.play(batch, seat)
            for key in want:
                assert np.array_equal(got[key], want[key]), (seat, len(batch), key)
            if batch:
                # pair j is row j // 17 against column j % 17 (17 columns)
                r = len(batch) - 1
                j = r * 17 + 3
                ref = battle(*((batch[r], columns[3]) if seat == 0 else (columns[3], batch[r])),
                             rules)
                assert (got["winner"][j] == -1 if ref.winner is None
                        else got["winner"][j] == ref.winner)
    odd = Board(runes={0: ("fire", 0), 7: ("water", 1)})
    _check([(odd, c) for c in columns], rules, out=grid.play([odd], 0, workers=2))
    with pytest.raises(ValueError, match="at least one column"):
        BattleGrid([], rules)
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        grid.play(rows[:1], 2)


def test_battle_grid_plays_any_of_its_pairs():
    """`grid.play_pairs(grid.rows(rows), seat, r, c)` is `fast_battles` of the pairs (rows[r[j]],
    columns[c[j]]) in the order given, the row in `seat`, to the last bit: pairs picked at random
    (repeats, any order), one encoding of the rows for several calls; no pairs; mismatched
    indices and a seat of 2 are refused."""
    rules = frozen_rules()
    boards = [b for pair in parity_pairs(30, 12, rules) for b in pair]
    columns, rows = boards[:9], boards[9:30]
    grid = BattleGrid(columns, rules)
    encoded = grid.rows(rows)
    pick = np.random.default_rng(4)
    for seat in (0, 1):
        for n in (1, 7, 60):
            r, c = pick.integers(len(rows), size=n), pick.integers(len(columns), size=n)
            pairs = [(rows[i], columns[j]) if seat == 0 else (columns[j], rows[i])
                     for i, j in zip(r, c)]
            want = fast_battles(pairs, rules, workers=1)
            got = grid.play_pairs(encoded, seat, r, c)
            for key in want:
                assert np.array_equal(got[key], want[key]), (seat, n, key)
    assert len(grid.play_pairs(encoded, 0, [], [])["winner"]) == 0
    with pytest.raises(ValueError, match="2 row indices but 1 column indices"):
        grid.play_pairs(encoded, 0, [0, 1], [0])
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        grid.play_pairs(encoded, 2, [0], [0])
    # 21 rows and 9 columns: an index past either is refused, never read
    with pytest.raises(ValueError, match="row index out of range 0..20: 0..21"):
        grid.play_pairs(encoded, 0, [0, 21], [0, 0])
    with pytest.raises(ValueError, match="column index out of range 0..8: -1..0"):
        grid.play_pairs(encoded, 0, [0, 0], [-1, 0])


def test_battle_grid_bounded_stops_a_row_where_its_bound_falls_below_its_floor():
    """`grid.play_bounded`: each row plays the columns in the order given, each pair what
    `fast_battles` gives it, and stops after the first battle where the weighted value so far
    (weight x (points + margin_weight x margin): 1 a win, 0.5 a draw) plus the most the columns
    left could add (a win at full HP: weight x (1 + margin_weight)) is below the row's floor,
    recomputed here in Python from the full results; floors no row can reach stop every row
    after one battle, floors no row can fall below play everything; a seat of 2 and mismatched
    weights are refused."""
    rules = frozen_rules()
    boards = [b for pair in parity_pairs(30, 13, rules) for b in pair]
    columns, rows = boards[:11], boards[11:30]
    grid = BattleGrid(columns, rules)
    encoded = grid.rows(rows)
    order = np.random.default_rng(5).permutation(len(columns))
    weights = np.random.default_rng(6).uniform(0.5, 2.0, len(columns))
    mw = 0.25
    n_rows, n_cols = len(rows), len(columns)
    for seat in (0, 1):
        r = np.repeat(np.arange(n_rows), n_cols)
        full = grid.play_pairs(encoded, seat, r, np.tile(order, n_rows))
        ratio = full["hp"] / full["max_hp"]
        points = np.where(full["winner"] == seat, 1.0, np.where(full["winner"] < 0, 0.5, 0.0))
        value = (weights[np.tile(np.arange(n_cols), n_rows)]
                 * (points + mw * (ratio[:, seat] - ratio[:, 1 - seat]))).reshape(n_rows, n_cols)
        floors = np.random.default_rng(7 + seat).uniform(0.0, 1.25 * weights.sum(), n_rows)
        out, played = grid.play_bounded(encoded, seat, order, weights, floors, mw)
        for i in range(n_rows):
            want = n_cols
            for k in range(1, n_cols):
                if value[i, :k].sum() + (1 + mw) * weights[k:].sum() < floors[i] - 1e-9:
                    want = k
                    break
            assert played[i] == want, (seat, i)
            rows_played = slice(i * n_cols, i * n_cols + want)
            for key in full:
                assert np.array_equal(out[key][rows_played], full[key][rows_played]), key
        assert played.min() < n_cols == played.max()     # both happen on these floors
        # each row's floor a hair under its own whole value: no row stops (a bound that took
        # less than the most a battle can add would stop the rows that win their last battles)
        _, played = grid.play_bounded(encoded, seat, order, weights, value.sum(axis=1) - 1e-9,
                                      mw)
        assert list(played) == [n_cols] * n_rows
        _, played = grid.play_bounded(encoded, seat, order, weights, [1e9] * n_rows, mw)
        assert list(played) == [1] * n_rows
        _, played = grid.play_bounded(encoded, seat, order, weights, [-1e9] * n_rows, mw)
        assert list(played) == [n_cols] * n_rows
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        grid.play_bounded(encoded, 2, order, weights, [0.0] * n_rows, mw)
    with pytest.raises(ValueError, match="11 columns, 3 weights"):
        grid.play_bounded(encoded, 0, order, weights[:3], [0.0] * n_rows, mw)
    with pytest.raises(ValueError, match="column index out of range 0..10: 0..11"):
        grid.play_bounded(encoded, 0, [*order[:-1], 11], weights, [0.0] * n_rows, mw)


def test_empty_batch_unchecked_board_and_dice_variant():
    """An empty batch; a board built in code that skipped validation (grade 0) is left to the
    reference, so the result is still the reference's; dice battles equal the reference's per
    seed (the fast engine hands them to it), and different seeds differ."""
    rules = frozen_rules()
    out = fast_battles([], rules)
    assert out["winner"].shape == (0,) and out["hp"].shape == (0, 2)
    odd = Board(runes={0: ("fire", 0), 7: ("water", 1)})
    foe = Board(runes={1: ("wind", 2)})
    _check([(odd, foe), (foe, odd)], rules)
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    data["variant"] = "dice"
    dice = Rules.from_dict(data, source="dice")
    from rune_env.battle import battle
    from rune_env.battle.fast import fast_battle
    a = Board(runes={0: ("fire", 2), 1: ("water", 1), 6: ("wind", 1)})
    b = Board(runes={0: ("thunder", 1), 3: ("earth", 2)})
    seeds = [0, 1, 2, 3]
    out = fast_battles([(a, b)] * 4, dice, seeds=seeds)
    for j, seed in enumerate(seeds):
        ref = battle(a, b, dice, seed=seed)
        assert fast_battle(a, b, dice, seed=seed) == ref
        assert out["time"][j] == ref.time and tuple(out["hp"][j]) == ref.hp
        assert tuple(out["casts"][j]) == ref.casts
    assert len({tuple(out["hp"][j]) for j in range(4)}) > 1, "seeds should change dice battles"


def _reference_analysis(board, rules):
    from rune_env.battle.analysis import SideSetup, analyse
    setup = SideSetup.of(board, rules)
    n = setup.geo.n_cells
    return setup, analyse(setup, [board.runes.get(c) for c in range(n)], [False] * n)


@pytest.mark.parametrize("which", ["frozen", "retuned"])
def test_board_analyser_is_the_reference_analysis(which):
    """`BoardAnalyser` (the observation encoder's powers and the drafter's values) gives the
    reference analysis at battle start exactly: every casting rune's power to the last bit, the
    delay, the effective grade, the acting flows in table order, the interval."""
    from rune_env.battle.fast import BoardAnalyser
    rules = frozen_rules() if which == "frozen" else retuned_rules()
    an = BoardAnalyser(rules)
    flow_index = {f.id: i for i, f in enumerate(rules.spec.flows)}
    boards = [b for pair in _sample(rules)[:600] for b in pair] if which == "frozen" else \
        [b for pair in parity_pairs(150, 7, rules) for b in pair] + coverage_boards(rules)
    for board in boards:
        setup, ref = _reference_analysis(board, rules)
        power, info, interval = an(board)
        assert interval == setup.interval_ms
        for c in range(setup.geo.n_cells):
            if c in ref.powers:
                rp = ref.powers[c]
                assert power[c] == rp.power, (c, board.to_json(rules))
                assert bool(info[c, 0]) == rp.delayed
                assert list(info[c, 3:3 + info[c, 2]]) == [flow_index[f] for f in rp.flows]
            else:
                assert power[c] == -1.0
            assert info[c, 1] == ref.effective_grade.get(c, 0)


def test_drafter_value_is_the_reference_value():
    """The heuristic drafter values boards with the compiled analysis; the value equals the one
    computed from the reference analysis exactly (so drafted boards do not depend on it)."""
    from rune_env.run.drafter import _board_value, _board_value_reference
    rules = frozen_rules()
    boards = [b for pair in _sample(rules)[:500] for b in pair] + coverage_boards(rules)
    assert any(k == "mimic" for b in boards for k, _ in b.runes.values())
    for board in boards:
        assert _board_value(board, rules) == _board_value_reference(board, rules), \
            board.to_json(rules)


def test_observation_powers_are_the_reference_powers():
    """The observation's power feature (log1p(power) / 8, capped at 1) comes from the compiled
    analysis; it equals the one computed from the reference analysis for random run states."""
    import math

    from rune_env.envs.observation import POWER_LOG_SCALE, Encoder
    from rune_env.rules.config import KINDS as ALL_KINDS
    from rune_env.run.drafter import HeuristicDrafter
    from rune_env.run.loop import apply, new_run
    from rune_env.run.opponents import default_opponents
    rules = frozen_rules()
    enc = Encoder(rules)
    layout = enc.layout
    n_cells, width = layout.shapes["board"]
    power_col = len(ALL_KINDS) + 2 + len(rules.spec.artifacts)
    checked = 0
    for seed in range(6):
        state = new_run(seed, rules)
        drafter = HeuristicDrafter(rules, noise=0.3, seed=seed)
        while not state.over and state.round <= 8:
            obs = enc.encode_flat(state)[layout.slices["board"]].reshape(n_cells, width)
            if state.board:
                _, ref = _reference_analysis(state.to_board(), rules)
                for c in range(n_cells):
                    want = min(1.0, math.log1p(ref.powers[c].power) / POWER_LOG_SCALE) \
                        if c in ref.powers else 0.0
                    assert obs[c, power_col] == np.float32(want)
                checked += 1
            apply(state, drafter.act(state), default_opponents(rules))
    assert checked > 100


def test_compiled_board_features_equal_the_python_encoding():
    """The observation's board part comes from one compiled call (`BoardAnalyser.features`);
    it equals the Python encoding of the same features (`Encoder._board_block_python`: kind
    one-hot, grade, open, artifacts, log-scaled power) bit for bit, over random runs with
    artifacts, sectors, cores and relics."""
    from rune_env.envs.observation import Encoder
    from rune_env.run.drafter import HeuristicDrafter
    from rune_env.run.loop import apply, new_run
    from rune_env.run.opponents import default_opponents
    rules = frozen_rules()
    enc = Encoder(rules)
    checked = 0
    for seed in range(8):
        state = new_run(seed, rules)
        drafter = HeuristicDrafter(rules, noise=0.4, seed=seed)
        while not state.over and state.round <= 9:
            fast = enc._board_block(state)
            slow = enc._board_block_python(state)
            assert fast.dtype == slow.dtype == np.float32
            assert np.array_equal(fast, slow), (seed, state.round, state.to_json()["board"])
            checked += bool(state.board) and bool(state.artifacts)
            apply(state, drafter.act(state), default_opponents(rules))
    assert checked > 20     # boards with runes and artifacts were among them


def test_kernel_layout_signature_matches_the_tables():
    # the kernel in use was compiled with compile.py's current table layout
    from rune_env.battle.fast import loaded_kernel
    from rune_env.battle.fast.compile import KERNEL_SIGNATURE
    assert loaded_kernel().compiled_signature() == KERNEL_SIGNATURE


def test_stale_kernel_cache_is_recompiled_or_named():
    # numba's cache is invalidated by kernel.py's changes only; fresh_module recompiles a kernel
    # whose compiled layout differs from compile.py's, and says so if that does not help
    from rune_env.battle.fast import fresh_module as _fresh_kernel

    class Kernel:
        def __init__(self, signature):
            self.signature = signature

        def compiled_signature(self):
            return self.signature

    current = Kernel(7)
    assert _fresh_kernel(current, 7, lambda k: pytest.fail("recompiled a current kernel")) \
        is current
    recompiled = Kernel(8)
    assert _fresh_kernel(Kernel(7), 8, lambda k: recompiled) is recompiled
    with pytest.raises(RuntimeError, match="another table layout.*kernel.\\*.nbi"):
        _fresh_kernel(Kernel(7), 8, lambda k: Kernel(7))

    def read_only(k):
        raise PermissionError("read-only file system")
    with pytest.raises(RuntimeError, match="read-only file system"):
        _fresh_kernel(Kernel(7), 8, read_only)


def _balance_rules() -> Rules:
    """The frozen rules with the default balance rules on (D-50..D-52: 4 / 1 / 1)."""
    from rune_env.rules import load_rules
    return load_rules(FROZEN_RULES, {"battle.min_cycle_turns": 4, "erosion.seal_cap_min": 1,
                                     "freeze.max_frozen": 1})


@pytest.mark.parametrize("which", ["frozen+balance", "default file", "seed_literal file",
                                   "retuned+balance"])
def test_balance_rules_match(which):
    """The balance rules (rest turns, the cap floor, the freeze limit) in both engines: the same
    results under the frozen rules with them on, under configs/rules/default.yaml and
    seed_literal.yaml as shipped, and under retuned rules with other values (a minimum cycle of
    6, a floor of 2, two frozen cells at a time)."""
    from rune_env.rules import load_rules
    if which == "frozen+balance":
        rules = _balance_rules()
    elif which == "retuned+balance":
        data = retuned_rules().to_dict()
        data["battle"]["min_cycle_turns"] = 6
        data["erosion"]["seal_cap_min"] = 2
        data["freeze"]["max_frozen"] = 2
        rules = Rules.from_dict(data, source="retuned balance rules")
    else:
        name = "default.yaml" if which == "default file" else "seed_literal.yaml"
        rules = load_rules(ROOT / "configs" / "rules" / name)
    pairs = parity_pairs(1200, 31, rules)
    out = _check(pairs, rules)
    if which != "seed_literal file":
        assert out["rests"].sum() > 0


def test_sample_exercises_the_balance_rules():
    """Under the balance rules the parity sample's small boards reach each rule: rest turns,
    seals of boards whose cap is only the floor's (n // divisor = 0), and ice casts that freeze
    nothing while the opponent has a frozen cell."""
    rules = _balance_rules()
    spec = rules.spec
    rests = floor_seals = refused = 0
    for a, b in parity_pairs(400, 5, rules):
        r = battle(a, b, rules, trace=True)
        rests += sum(e["type"] == "rest" for e in r.events)
        for side, board_ in ((0, a), (1, b)):
            divisor = max([spec.cores[board_.core].seal_cap_divisor or 0] if board_.core else [0])
            divisor = divisor or spec.erosion.seal_cap_divisor
            if len(board_.runes) // divisor == 0:
                floor_seals += sum(e["type"] == "seal" and e["side"] == side for e in r.events)
        frozen_until = {0: {}, 1: {}}
        for e in r.events:
            if e["type"] == "freeze":
                frozen_until[e["side"]][e["cell"]] = e["until"]
            if e["type"] == "cast" and e["kind"] == "ice":
                target = 1 - e["side"]
                if any(u > e["t"] for u in frozen_until[target].values()):
                    refused += 1
    assert rests > 1000 and floor_seals > 20 and refused > 50, (rests, floor_seals, refused)


def test_sample_exercises_the_amplify_cap():
    """A fifth of the parity pairs field an amplify tower (`amplify_board`); under the defaults'
    cap (D-54) most of those towers have a rune whose amplifies multiply past it, so parity runs
    check the capped branch of both engines, and the pairs with towers match the reference."""
    from rune_env.battle.analysis import SideSetup, analyse
    from agents.devtools.parity import amplify_board
    rules = load_rules(ROOT / "configs" / "rules" / "default.yaml")
    assert rules.spec.runes.amplify.max_factor is not None
    rng = np.random.default_rng(11)
    capped = 0
    for _ in range(200):
        b = amplify_board(rng, rules).validate(rules)
        setup = SideSetup.of(b, rules)
        a = analyse(setup, [b.runes.get(c) for c in range(setup.geo.n_cells)],
                    [False] * setup.geo.n_cells)
        capped += any(p.amplify_uncapped is not None for p in a.powers.values())
    assert capped >= 100, capped
    pairs = parity_pairs(500, 13, rules)
    towers = [p for i, p in enumerate(pairs) if i % 5 == 4]
    assert len(towers) == 100
    _check(towers, rules)
