"""The example boards in configs/boards/: each loads, fights every other, and explains itself.

They are read with the shipped rules (configs/rules/default.yaml), the rules they are for.
Together they must show every core and artifact, several relics and boss rules, and the named
synergies (node, mimic, delay, mud wall, thundercloud, umbra curse, deep freeze).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from rune_env.battle import battle
from rune_env.battle.explain import explain, format_explain
from rune_env.rules import default_rules, geometry, load_board

BOARDS_DIR = Path(__file__).resolve().parents[2] / "configs" / "boards"
PATHS = sorted(BOARDS_DIR.glob("*.json"))


@pytest.fixture(scope="module")
def boards():
    rules = default_rules()
    return {p.stem: load_board(p, rules) for p in PATHS}


def test_there_are_example_boards():
    assert len(PATHS) >= 9


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_board_loads_with_a_label(path):
    board = load_board(path, default_rules())
    assert board.runes, "an example board has runes"
    assert len(board.label) >= 20, "the label says what the board shows"


def test_every_board_battles_every_other(boards):
    rules = default_rules()
    for (na, a), (nb, b) in itertools.permutations(boards.items(), 2):
        r = battle(a, b, rules)
        assert r.winner in (0, 1, None), (na, nb)
        assert 0 < r.time <= rules.spec.battle.duration_s, (na, nb)
        assert all(h >= 0 for h in r.hp) and all(c >= 0 for c in r.casts), (na, nb)
        if r.winner is not None and r.time < rules.spec.battle.duration_s:
            assert r.hp[1 - r.winner] == 0.0, (na, nb)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_explain_runs(path, boards):
    rules = default_rules()
    board = boards[path.stem]
    other = boards["sun_firestorm" if path.stem != "sun_firestorm" else "star_resonance"]
    for against in (None, other):
        report = explain(board, rules, against)
        geo = geometry(rules.radius)
        assert set(report["cells"]) == {geo.name(c) for c in board.runes}
        for entry in report["cells"].values():
            if entry["kind"] in rules.casting_kinds:
                assert entry["power"] is not None and entry["power"] > 0
            else:
                assert entry["power"] is None
        text = format_explain(report)
        assert len(text.splitlines()) == len(board.runes) + 2


def _flows_shown(boards) -> set[str]:
    rules = default_rules()
    out: set[str] = set()
    for board in boards.values():
        for entry in explain(board, rules)["cells"].values():
            out |= set(entry.get("flows", {}))
    return out


def test_the_set_shows_every_core_artifact_and_the_synergies(boards):
    rules = default_rules()
    cores = {b.core for b in boards.values()}
    assert set(rules.spec.cores) <= cores
    artifacts = {a for b in boards.values() for a in b.artifacts.values()}
    assert set(rules.spec.artifacts) <= artifacts
    relics = {r for b in boards.values() for r in b.relics}
    boss_rules = {r for b in boards.values() for r in b.boss_rules}
    assert len(relics) >= 5 and len(boss_rules) >= 3
    kinds = {k for b in boards.values() for k, _ in b.runes.values()}
    assert {"node", "mimic", "delay", "amplify", "resonator"} <= kinds
    assert {"mud_wall", "thundercloud", "umbra", "black_flame", "deep_freeze", "blizzard",
            "firestorm", "fanned_flame", "lava"} <= _flows_shown(boards)
    assert any(b.hand for b in boards.values())
    assert any(b.open_sectors for b in boards.values())
