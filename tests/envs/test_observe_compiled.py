"""The env's compiled observation and legal mask (`Encoder.observe`, one kernel call per step)
equal their Python definitions (`Encoder.encode_flat`, `rune_env.run.loop.legal_mask`) bit for
bit, on EVERY state of random runs: uniform random legal actions over many seeds, ranks, cores
(a pending core choice when none is fixed), reward and relic choices, artifacts placed and held,
sectors, sun elements, merges and finished runs; under the default rules, a retuned config
(radius 4, four grades, other prices and numbers) and radius-5 rules (90 cells).

Battles are stubbed (a seeded outcome) except one in ten, to reach late rounds quickly: the
observation and the mask depend on the run state only, not on how its battles were decided.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from conftest import CORES, FROZEN_RULES, board, frozen_rules, make_battle_fn, retuned_rules

from rune_env.envs.observation import Encoder
from rune_env.rules.config import Rules
from rune_env.run.actions import action_table
from rune_env.run.loop import apply, legal_actions, legal_mask, new_run
from rune_env.run.state import PendingChoice


def _radius_5_rules() -> Rules:
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    data["rings"]["power_x"] = [1.0, 1.2, 1.4, 1.6, 1.8]               # radius 5: 90 cells
    return Rules.from_dict(data, source="radius 5 test rules")


def _walk_and_compare(rules: Rules, n_steps: int, seed0: int) -> dict:
    """Random runs under `rules`; at every state, compiled == Python. Returns what was seen."""
    enc = Encoder(rules)
    table = action_table(rules)
    opponent = board({"1:0": ("fire", 1), "1:3": ("water", 1)})
    seen = {"pending": set(), "over": 0, "kinds": set(), "relics": 0, "inventory": 0,
            "board_artifacts": 0, "steps": 0, "sun": 0, "max_runes": 0, "legal": set()}
    groups = [(kind, start, start + int(np.prod(shape)))
              for kind, (start, shape) in table.groups.items()]
    k = seed0
    while seen["steps"] < n_steps:
        rng = np.random.default_rng(k)
        state = new_run(k, rules, rank=k % len(rules.spec.ranks), core=CORES[k % len(CORES)])
        fn = make_battle_fn(state, rng, 0.1)
        while True:
            obs, mask = enc.observe(state)
            want_obs, want_mask = enc.encode_flat(state), legal_mask(state)
            assert obs.dtype == np.float32 and mask.dtype == bool
            assert np.array_equal(mask, want_mask), \
                (k, seen["steps"], [table.actions[i].name for i in np.flatnonzero(mask != want_mask)])
            assert np.array_equal(obs, want_obs), \
                (k, seen["steps"], np.flatnonzero(obs != want_obs)[:10])
            seen["steps"] += 1
            if state.pending:
                seen["pending"].add(state.pending.kind)
            seen["relics"] += bool(state.relics)
            seen["inventory"] += bool(state.artifact_inventory)
            seen["board_artifacts"] += bool(state.artifacts)
            seen["sun"] += state.sun_element is not None
            seen["max_runes"] = max(seen["max_runes"], len(state.board))
            seen["legal"].update(kind for kind, a, b in groups if mask[a:b].any())
            if state.over:
                seen["over"] += 1
                break
            legal = legal_actions(state)
            a = legal[int(rng.integers(len(legal)))]
            seen["kinds"].add(table.actions[a].kind)
            apply(state, a, lambda rnd, e, b, g: opponent, fn)
        k += 1
    return seen


@pytest.mark.parametrize("which", ["default", "retuned", "radius5"])
def test_compiled_observation_and_mask_equal_the_python_ones(which):
    rules = {"default": frozen_rules, "retuned": retuned_rules, "radius5": _radius_5_rules}[which]()
    seen = _walk_and_compare(rules, 6_000 if which == "default" else 4_000, seed0=300)
    # the walk went through every kind of state the encoder and the mask distinguish
    assert seen["pending"] == {"core", "reward", "relic"}, seen["pending"]
    assert seen["over"] >= 3
    every_kind = {a.kind for a in action_table(rules).actions}
    assert seen["legal"] == every_kind          # each action group was legal somewhere
    assert len(seen["kinds"]) >= len(every_kind) - 1     # and all (but a rare one) were taken
    for key in ("relics", "inventory", "board_artifacts", "sun"):
        assert seen[key] > 20, (key, seen[key])
    assert seen["max_runes"] >= 8


def _random_state(rng: np.random.Generator, rules: Rules, k: int):
    """A run state with every field drawn at random within its rules' ranges: crowded boards
    and hands of few kinds and high grades (so merges of every grade, the top one included,
    come up), sun elements, relics, artifacts placed and held, offers sold out (None), pending
    choices of each kind with any number of options, finished runs, extreme scalars."""
    from rune_env.rules.config import CASTING_KINDS, KINDS
    from rune_env.rules.geometry import geometry
    spec, run = rules.spec, rules.spec.run
    geo = geometry(rules.radius)
    s = new_run(k, rules, core=list(spec.cores)[k % len(spec.cores)])
    s.pending = None
    kinds = list(rng.choice(KINDS, size=int(rng.integers(1, 4)), replace=False))
    grade = lambda: int(rng.integers(1, rules.max_grade + 1))          # noqa: E731
    s.open_sectors = [int(x) for x in rng.permutation(6)[:int(rng.integers(0, 7))]]
    open_ = [c for c in range(geo.n_cells) if geo.sector[c] < 0 or geo.sector[c] in s.open_sectors]
    cells = rng.permutation(open_)
    s.board = {int(c): (str(rng.choice(kinds)), grade()) for c in cells[:int(rng.integers(0, len(cells) + 1))]}
    s.hand_slots = int(rng.integers(run.hand_slots, run.hand_slots_max + 1))
    s.hand = [(str(rng.choice(kinds)), grade()) for _ in range(int(rng.integers(0, s.hand_slots + 1)))]
    arts = list(spec.artifacts)
    s.artifact_slots = int(rng.integers(run.artifact_slots, run.artifact_slots_max + 1))
    n_placed = int(rng.integers(0, s.artifact_slots + 1))
    s.artifacts = {int(c): str(rng.choice(arts)) for c in rng.permutation(open_)[:n_placed]}
    s.artifact_inventory = [str(rng.choice(arts)) for _ in range(int(rng.integers(0, s.artifact_slots - len(s.artifacts) + 1)))]
    s.shop_runes = [None if rng.random() < 0.3 else str(rng.choice(KINDS)) for _ in s.shop_runes]
    s.shop_artifacts = [None if rng.random() < 0.3 else str(rng.choice(arts)) for _ in s.shop_artifacts]
    s.sun_element = str(rng.choice(CASTING_KINDS)) if rng.random() < 0.5 else None
    s.relics = [str(r) for r in rng.permutation(list(spec.relics))[:int(rng.integers(0, 4))]]
    s.mana = int(rng.choice([0, 1, 2, 3, 5, 8, 13, 40, 200]))
    s.round = int(rng.integers(1, run.round_cap + 1))
    s.wins, s.losses, s.draws = (int(x) for x in rng.integers(0, run.round_cap + 3, 3))
    s.lamps = int(rng.integers(0, run.lamps + 1))
    s.prep_actions = int(rng.integers(0, run.action_cap + 1))
    s.hp_bonus = float(rng.choice([0.0, 0.1, 0.35, 1.7]))
    s.rank = int(rng.integers(0, len(spec.ranks)))
    u = rng.random()
    if u < 0.1:
        s.pending = PendingChoice("core", [str(c) for c in rng.permutation(list(spec.cores))[:int(rng.integers(1, len(spec.cores) + 1))]])
    elif u < 0.2:
        cats = ["mana", "base_stat", "hand_slot", "artifact_slot"] + [f"artifact:{a}" for a in arts]
        s.pending = PendingChoice("reward", [str(c) for c in rng.permutation(cats)[:int(rng.integers(1, run.reward_choices + 1))]])
    elif u < 0.3:
        s.pending = PendingChoice("relic", [str(r) for r in rng.permutation(list(spec.relics))[:int(rng.integers(0, run.relic_choices + 1))]])
    s.over = rng.random() < 0.05
    return s


@pytest.mark.parametrize("which", ["default", "retuned", "radius5"])
def test_compiled_observation_and_mask_on_random_states(which):
    rules = {"default": frozen_rules, "retuned": retuned_rules, "radius5": _radius_5_rules}[which]()
    enc = Encoder(rules)
    table = action_table(rules)
    rng = np.random.default_rng(77)
    merge_top = 0
    for k in range(1500):
        state = _random_state(rng, rules, k)
        obs, mask = enc.observe(state)
        want = legal_mask(state)
        assert np.array_equal(mask, want), \
            (k, [table.actions[i].name for i in np.flatnonzero(mask != want)])
        assert np.array_equal(obs, enc.encode_flat(state)), k
        # states with max_grade runes of one kind enough to merge, were it allowed
        top = [r for r in list(state.board.values()) + state.hand if r[1] == rules.max_grade]
        merge_top += any(top.count(r) >= rules.spec.grades.merge_count for r in top)
    assert merge_top >= 20


def test_observe_copies_are_independent_and_the_encoder_pickles():
    """Each call returns new arrays (the env hands them to callers, who may keep them); an
    encoder pickled (as vector envs do) and restored gives the same values."""
    import pickle
    rules = frozen_rules()
    enc = Encoder(rules)
    state = new_run(3, rules, core="sun")
    o1, m1 = enc.observe(state)
    o2, m2 = enc.observe(state)
    assert o1 is not o2 and m1 is not m2
    o1[:] = 7.0
    m1[:] = False
    assert np.array_equal(o2, enc.encode_flat(state)) and np.array_equal(m2, legal_mask(state))
    twin = pickle.loads(pickle.dumps(enc))
    o3, m3 = twin.observe(copy.deepcopy(state))
    assert np.array_equal(o3, o2) and np.array_equal(m3, m2)


def test_observe_refuses_an_out_of_range_board():
    """A board that skipped validation (a rune on a cell beyond the circle) is refused with a
    clear error, not written out of bounds."""
    rules = frozen_rules()
    enc = Encoder(rules)
    state = new_run(1, rules, core="sun")
    state.board = {500: ("fire", 1)}
    with pytest.raises(ValueError, match="out of range"):
        enc.observe(state)


def test_observe_board_record_is_the_battle_kernels_record():
    """`observe` writes the player's board record itself; it is the record the battle kernel's
    encoder (`encode_board`, compile._records) writes for the same board at battle start (round
    1, no hand, no boss rules), int for int, so the powers are those of the same analysis."""
    from rune_env.battle.fast import encode_board
    from rune_env.envs.observation import _BoardView
    rules = frozen_rules()
    enc = Encoder(rules)
    rng = np.random.default_rng(5)
    compared = 0
    for k in range(300):
        state = _random_state(rng, rules, k)
        enc.observe(state)
        view = _BoardView(state.board, state.artifacts, state.core, state.sun_element,
                          tuple(state.relics))
        want = encode_board(view, rules)[2]
        assert np.array_equal(enc._record[:len(want)], want), k
        compared += bool(state.board and state.artifacts and state.relics)
    assert compared >= 50


def test_observe_names_a_state_of_other_rules():
    """A state holding a name these rules do not know (here a rune kind) or a number that does
    not fit the record is refused with a ValueError naming it (not a bare KeyError)."""
    rules = frozen_rules()
    enc = Encoder(rules)
    state = new_run(1, rules, core="sun")
    state.hand = [("plasma", 1)]
    with pytest.raises(ValueError, match="plasma"):
        enc.observe(state)
    state = new_run(1, rules, core="sun")
    state.mana = 2**40
    with pytest.raises(ValueError, match="does not fit"):
        enc.observe(state)
