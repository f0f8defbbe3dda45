"""The rules config: overrides, the rules hash, pickling, and that the shipped default loads."""
from __future__ import annotations

import pickle

import pytest
import yaml

from conftest import FROZEN_RULES, board, frozen_rules

from rune_env.battle import battle
from rune_env.rules import RulesError, load_rules
from rune_env.rules.config import DEFAULT_RULES_PATH, Rules


def rules_path():
    # The file the rules fixture reads (the frozen copy, or a mutated one under mutation_check).
    return frozen_rules().source


def test_override_changes_the_number(rules):
    r = load_rules(rules_path(), overrides={"battle.base_hp": 120, "flows.0.multiplier": 2.2,
                                            "rings.power_x.1": 1.3})
    assert r.spec.battle.base_hp == 120.0
    assert r.flow_by_id["firestorm"].multiplier == 2.2
    assert r.ring_x == (rules.ring_x[0], 1.3, rules.ring_x[2])
    # the source file is untouched: a fresh load still has the old values
    assert load_rules(rules_path()).spec.battle.base_hp == rules.spec.battle.base_hp


def test_override_reaches_the_battle():
    """Covers: D-9"""
    r = load_rules(rules_path(), overrides={"battle.base_hp": 120})
    # Fire grade I in ring 1: 6 per turn at 0.5 s intervals; 120 HP: 19 x 6 = 114 < 120,
    # 20 x 6 = 120 -> HP 0 on the 20th turn, t = 10.0 s.
    res = battle(board({"1:0": ("fire", 1)}), board({}), r)
    assert res.max_hp == (120.0, 120.0)
    assert res.winner == 0
    assert res.time == pytest.approx(10.0, rel=1e-12)
    assert res.casts == (20, 0)


@pytest.mark.parametrize("path, named", [
    ("battle.colour", "battle.colour"),
    ("nosuch.base_hp", "nosuch"),
    ("runes.lava.damage", "runes.lava"),
    ("flows.99.multiplier", "flows.99"),
    ("rings.power_x.7", "rings.power_x.7"),
    ("rings.power_x.x", "rings.power_x.x"),
])
def test_override_refuses_unknown_paths(path, named):
    with pytest.raises(RulesError) as exc:
        load_rules(rules_path(), overrides={path: 1.0})
    assert named in str(exc.value)


def test_override_is_validated():
    with pytest.raises(RulesError, match=r"runes\.fire\.price"):
        load_rules(rules_path(), overrides={"runes.fire.price": -1})
    with pytest.raises(RulesError, match=r"battle\.base_hp"):
        load_rules(rules_path(), overrides={"battle.base_hp": "lots"})


def test_hash_is_stable():
    a = load_rules(FROZEN_RULES)
    b = load_rules(FROZEN_RULES)
    assert a.hash == b.hash
    assert len(a.hash) == 16 and int(a.hash, 16) >= 0
    # the hash is of the content (canonical sorted JSON), not of the key order or the source
    data = a.to_dict()
    reordered = dict(reversed(list(data.items())))
    assert Rules.from_dict(reordered, source="elsewhere").hash == a.hash
    # an override to the value already there (as written in the file) changes nothing
    same = data["battle"]["base_hp"]
    assert load_rules(FROZEN_RULES, overrides={"battle.base_hp": same}).hash == a.hash


@pytest.mark.parametrize("path, value", [("battle.base_hp", 101), ("flows.0.multiplier", 2.1),
                                         ("cores.star.loose_resonance", False)])
def test_hash_changes_with_a_number(path, value):
    base = load_rules(FROZEN_RULES)
    assert load_rules(FROZEN_RULES, overrides={path: value}).hash != base.hash


@pytest.mark.slow
def test_hash_in_a_fresh_process_is_the_same():
    # Stable across processes (no dict-order or PYTHONHASHSEED dependence).
    import subprocess
    import sys
    code = ("from rune_env.rules import load_rules; import sys; "
            "print(load_rules(sys.argv[1]).hash)")
    out = subprocess.run([sys.executable, "-c", code, str(FROZEN_RULES)], capture_output=True,
                         text=True, env={"PYTHONHASHSEED": "123", "PATH": ""}, check=True,
                         cwd=FROZEN_RULES.parents[2])
    assert out.stdout.strip() == load_rules(FROZEN_RULES).hash


def test_rules_pickle(rules):
    again = pickle.loads(pickle.dumps(rules))
    assert again.hash == rules.hash
    assert again.spec == rules.spec
    assert again.ring_x == rules.ring_x and again.grade_x == rules.grade_x
    b0 = board({"1:0": ("fire", 2), "2:0": ("wind", 1), "1:3": ("water", 1)}, core="moon")
    b1 = board({"1:0": ("earth", 1), "1:1": ("thunder", 2)}, relics=["ember_jar"])
    assert battle(b0, b1, again, trace=True).trace_hash() == battle(b0, b1, rules, trace=True).trace_hash()


def test_rules_pickle_keeps_overrides():
    r = load_rules(FROZEN_RULES, overrides={"battle.base_hp": 120})
    again = pickle.loads(pickle.dumps(r))
    assert again.spec.battle.base_hp == 120.0
    assert again.hash == r.hash


def test_to_dict_round_trips(rules):
    data = rules.to_dict()
    data["battle"]["base_hp"] = -1     # a copy: the rules do not change
    assert rules.to_dict()["battle"]["base_hp"] == rules.spec.battle.base_hp
    assert Rules.from_dict(rules.to_dict()).hash == rules.hash


def test_default_config_loads_and_has_the_frozen_shape():
    default = load_rules()
    assert default.source == str(DEFAULT_RULES_PATH)
    frozen = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    shipped = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))

    def keys(node, prefix=""):
        if isinstance(node, dict):
            out = set()
            for k, v in node.items():
                out |= {f"{prefix}{k}"} | keys(v, f"{prefix}{k}.")
            return out
        return set()

    # The frozen copy is the default with the same keys (only numbers may have been retuned).
    assert keys(shipped) == keys(frozen)


def test_missing_rules_file():
    with pytest.raises(RulesError, match="cannot read"):
        load_rules(FROZEN_RULES.parent / "no_such_rules.yaml")
