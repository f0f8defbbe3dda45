"""Invariants of the run loop over long random walks: uniform random legal actions across many
seeds, ranks, cores and unlocked lists, against a stub opponent.

Checked after every action: mana never negative; hand and artifact slots never exceeded (and
never above their maxima, D-40 / section 8); runes conserved in grade-I units (bought = board +
hand + sold, a grade-g rune being 3**(g-1) units, D-40); runes and artifacts only on open cells
(D-4); the D-41 cap never passed; lamps, rounds (D-2) and sectors in range. In sampled states:
`legal_mask` agrees with `why_illegal` for EVERY action id, both ways, and every legal action
applies without error (on a clone) and keeps the invariants.

Most battles are stubbed (a seeded outcome for the player's seat) to keep the walk fast; one in
ten is a real battle against the stub opponent board. The default walk is 10,000 actions; the
`heavy` variant (`pytest --heavy`) walks 100,000.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import CORES, board, frozen_rules, make_battle_fn

from rune_env.rules.geometry import geometry
from rune_env.run.actions import action_table
from rune_env.run.loop import apply, legal_actions, legal_mask, new_run, why_illegal
from rune_env.run.state import PendingChoice, RunState

OPPONENTS = (
    {},                                                         # empty: the player mostly wins
    {"1:0": ("fire", 1)},                                      # weak
    {"1:0": ("fire", 2), "1:3": ("water", 1), "2:0": ("wind", 1), "2:6": ("earth", 1)},
)


def units(grade: int) -> int:
    return 3 ** (grade - 1)         # D-40: I 1, II 3, III 9 grade-I runes


def is_open(state: RunState, cell: int) -> bool:
    s = geometry(3).sector[cell]
    return s < 0 or s in state.open_sectors


def invariant_problems(state: RunState) -> list[str]:
    """Every broken invariant of one state, in words (empty when all hold)."""
    p = []
    if state.mana < 0:
        p.append(f"mana {state.mana} < 0")
    if len(state.hand) > state.hand_slots:
        p.append(f"hand {len(state.hand)} > {state.hand_slots} slots")
    if not 4 <= state.hand_slots <= 8:
        p.append(f"hand slots {state.hand_slots} outside 4..8")
    n_art = len(state.artifacts) + len(state.artifact_inventory)
    if n_art > state.artifact_slots:
        p.append(f"artifacts {n_art} > {state.artifact_slots} slots")
    if not 2 <= state.artifact_slots <= 4:
        p.append(f"artifact slots {state.artifact_slots} outside 2..4")
    held = sum(units(g) for _, g in state.hand) + sum(units(g) for _, g in state.board.values())
    if state.units_bought != held + state.units_sold:
        p.append(f"units: bought {state.units_bought} != held {held} + sold {state.units_sold}")
    for cell, (kind, grade) in state.board.items():
        if not is_open(state, cell) or not 1 <= grade <= 3:
            p.append(f"rune {kind} {grade} on cell {cell}")
    for cell in state.artifacts:
        if not is_open(state, cell):
            p.append(f"artifact on closed cell {cell}")
    if not all(1 <= g <= 3 for _, g in state.hand):
        p.append(f"hand grades {state.hand}")
    # D-41: the 60th preparation action forces ready, which resets the count for the next round
    # (if that battle ended the run, no next round starts and the count stays at 60)
    if not 0 <= state.prep_actions < 60 + state.over:
        p.append(f"prep_actions {state.prep_actions} outside 0..59")
    if not 0 <= state.lamps <= 3:
        p.append(f"lamps {state.lamps}")
    if not 1 <= state.round <= 30:
        p.append(f"round {state.round}")
    if len(set(state.open_sectors)) != len(state.open_sectors) or \
            not set(state.open_sectors) <= set(range(6)):
        p.append(f"open sectors {state.open_sectors}")
    if state.wins + state.losses + state.draws != len(state.battles):
        p.append("battle count")
    if state.over and (state.pending is not None or legal_mask(state).any()):
        p.append("a finished run still has legal actions")
    return p


def run_settings(k: int) -> dict:
    unlocked = [None, ["fire", "wind"], None, ["water", "earth", "amplify"]][k % 4]
    return {"rank": k % 6, "core": CORES[k % len(CORES)], "unlocked": unlocked}


@dataclass
class Walk:
    steps: int = 0
    runs: int = 0
    problems: list = field(default_factory=list)
    samples: list = field(default_factory=list)     # clones of sampled states
    kinds: Counter = field(default_factory=Counter)


def random_walk(n_actions: int, sample_every: int, seed0: int = 0, real_share: float = 0.1) -> Walk:
    rules = frozen_rules()
    table = action_table(rules)
    w = Walk()
    k = seed0
    while w.steps < n_actions:
        rng = np.random.default_rng(10_000 + k)
        state = new_run(k, rules, **run_settings(k))
        opp_runes = OPPONENTS[k % len(OPPONENTS)]
        opponent = board(opp_runes)

        def source(rnd, effects, boss, g, _b=opponent):
            return _b
        fn = make_battle_fn(state, rng, real_share)
        w.runs += 1
        w.samples.append(state.clone())
        while not state.over and w.steps < n_actions:
            legal = legal_actions(state)
            if not legal:
                w.problems.append((k, w.steps, "-", "a live run has no legal action"))
                break
            a = legal[int(rng.integers(len(legal)))]
            w.kinds[table.actions[a].kind] += 1
            apply(state, a, source, fn)
            w.steps += 1
            for prob in invariant_problems(state):
                w.problems.append((k, w.steps, table.actions[a].name, prob))
            if w.steps % sample_every == 0 or (state.pending is not None and
                                               state.pending.kind != "core"):
                w.samples.append(state.clone())
        w.samples.append(state.clone())            # the final state (over, unless cut short)
        k += 1
    return w


_WALKS: dict = {}


def walk_of(size: str) -> Walk:
    if size not in _WALKS:
        _WALKS[size] = random_walk(10_000, 97) if size == "default" else \
            random_walk(100_000, 211, seed0=1_000)
    return _WALKS[size]


@pytest.fixture(scope="module")
def walk():
    return walk_of("default")


# -- the walk -------------------------------------------------------------------------------------
def test_walk_is_long_and_varied(walk):
    """The walk makes 10,000 actions over many runs and uses every kind of action."""
    assert walk.steps >= 10_000
    assert walk.runs >= 20
    kinds = {a.kind for a in action_table(frozen_rules()).actions}
    assert set(walk.kinds) == kinds, kinds - set(walk.kinds)


def test_invariants_hold_after_every_action(walk):
    """Mana >= 0; hand and artifact slots never exceeded; grade-I units conserved (D-40); open
    cells only (D-4); the D-41 cap; lamps, rounds (D-2), sectors in range."""
    assert walk.problems == []


def test_mask_agrees_with_why_illegal_everywhere(walk):
    """`legal_mask` is True exactly where `why_illegal` gives no reason, for EVERY action id,
    in every sampled state (pending choices, preparation and finished runs)."""
    rules = frozen_rules()
    n = len(action_table(rules))
    assert len(walk.samples) >= 150
    disagreements = []
    for s in walk.samples:
        mask = legal_mask(s)
        assert mask.shape == (n,) and mask.dtype == bool
        for a in range(n):
            reason = why_illegal(s, a)
            if bool(mask[a]) != (reason is None):
                disagreements.append((s.seed, s.round, a, bool(mask[a]), reason))
            elif reason is not None:
                assert isinstance(reason, str) and reason
    assert disagreements == []
    assert any(s.over for s in walk.samples)
    assert {s.pending.kind for s in walk.samples if s.pending} == {"core", "reward", "relic"}


def test_mask_agrees_with_why_illegal_on_fuzzed_states(walk):
    """The same agreement on states the walk seldom reaches: a core choice offering only some
    cores, choices with fewer options, sold-out offers, mana around the prices, a hand filled
    with grade-III runes, artifacts held."""
    rules = frozen_rules()
    spec = rules.spec
    n = len(action_table(rules))
    rng = np.random.default_rng(7)
    checked = 0
    for base in walk.samples[::2]:
        s = base.clone()
        u = rng.random()
        if u < 0.2:
            k = int(rng.integers(1, len(spec.cores) + 1))
            s.pending = PendingChoice("core", [str(c) for c in rng.permutation(list(spec.cores))[:k]])
        elif u < 0.3:
            s.pending = PendingChoice("reward", ["mana", "base_stat"][:int(rng.integers(1, 3))])
        elif u < 0.4:
            s.pending = PendingChoice("relic", [str(r) for r in list(spec.relics)[:int(rng.integers(0, 4))]])
        s.mana = int(rng.choice([0, 1, 2, 3, 4, 5, 8, 40]))
        s.shop_runes = [None if rng.random() < 0.3 else o for o in s.shop_runes]
        s.shop_artifacts = [None if rng.random() < 0.3 else o for o in s.shop_artifacts]
        if rng.random() < 0.3:
            s.hand = s.hand + [("fire", 3)] * (s.hand_slots - len(s.hand))
        if rng.random() < 0.3 and s.artifacts_held < s.artifact_slots:
            s.artifact_inventory = s.artifact_inventory + ["ward_stone"]
        mask = legal_mask(s)
        bad = [a for a in range(n) if bool(mask[a]) != (why_illegal(s, a) is None)]
        assert bad == [], (s.seed, s.round, [action_table(rules).actions[a].name for a in bad])
        checked += 1
    assert checked >= 75


def test_every_legal_action_applies(walk):
    """Every action listed as legal applies without error (on a clone of the state) and leaves a
    state that keeps the invariants; the original is untouched by its clones."""
    rules = frozen_rules()
    table = action_table(rules)
    empty = board({})
    checked = 0
    for i, s in enumerate(walk.samples):
        before = s.dumps()
        rng = np.random.default_rng(i)
        for a in legal_actions(s):
            t = s.clone()
            apply(t, a, lambda rnd, e, b, g: empty, make_battle_fn(t, rng, 0.0))
            assert invariant_problems(t) == [], (table.actions[a].name, invariant_problems(t))
            checked += 1
        assert s.dumps() == before
    assert checked >= 3_000


@pytest.mark.heavy
def test_long_walk_heavy():
    """The same invariants and mask agreement over a 100,000-action walk."""
    w = walk_of("long")
    assert w.steps >= 100_000
    assert w.problems == []
    n = len(action_table(frozen_rules()))
    for s in w.samples:
        mask = legal_mask(s)
        for a in range(n):
            assert bool(mask[a]) == (why_illegal(s, a) is None), (s.seed, s.round, a)
