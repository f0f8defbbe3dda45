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


@pytest.mark.outside_mutation_check
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


# -- rules files that extend another; the rules as written (RULES section 13) -----------------

SEED_LITERAL = DEFAULT_RULES_PATH.parent / "seed_literal.yaml"
BALANCE_V2 = DEFAULT_RULES_PATH.parent / "balance_v2.yaml"
BALANCE_KEYS = {"battle.min_cycle_turns": 1, "erosion.seal_cap_min": 0, "freeze.max_frozen": 0}


def _with(data: dict, dotted: str, value) -> None:
    *parents, key = dotted.split(".")
    for name in parents:
        data = data[name]
    data[key] = value


def test_seed_literal_is_the_defaults_with_the_balance_rules_off():
    """configs/rules/seed_literal.yaml = the default rules with the four balance keys at their
    "as written" values (1 / 0 / 0 / no amplify cap) and nothing else changed; its hash differs
    from the default's.

    Covers: D-53, D-54"""
    literal = load_rules(SEED_LITERAL)
    default = load_rules()
    assert literal.spec.battle.min_cycle_turns == 1
    assert literal.spec.erosion.seal_cap_min == 0
    assert literal.spec.freeze.max_frozen == 0
    assert literal.spec.runes.amplify.max_factor is None
    expected = default.to_dict()
    for dotted, value in {**BALANCE_KEYS, "runes.amplify.max_factor": None}.items():
        _with(expected, dotted, value)
    assert literal.to_dict() == expected
    assert literal.hash != default.hash
    assert (default.spec.battle.min_cycle_turns, default.spec.erosion.seal_cap_min,
            default.spec.freeze.max_frozen) != (1, 0, 0)
    # it extends default.yaml, it does not copy its 200 numbers
    assert len(SEED_LITERAL.read_text(encoding="utf-8").splitlines()) < 40


def test_balance_v2_is_the_defaults_without_the_amplify_cap():
    """configs/rules/balance_v2.yaml = the defaults with `runes.amplify.max_factor: null` and
    nothing else changed; at null the key is left out of the hash, so it has the hash of the
    defaults before D-54 (69f9e0fd53e3fb7d, the hash of the pools in configs/opponents/balance_v2/
    and of the policies' cards).

    Covers: D-53, D-54"""
    v2, default = load_rules(BALANCE_V2), load_rules()
    expected = default.to_dict()
    _with(expected, "runes.amplify.max_factor", None)
    assert v2.to_dict() == expected
    assert v2.hash == "69f9e0fd53e3fb7d" != default.hash
    assert default.spec.runes.amplify.max_factor is not None
    assert len(BALANCE_V2.read_text(encoding="utf-8").splitlines()) < 30


def test_balance_keys_off_hash_as_if_absent():
    """At their "off" values (1 / 0 / 0) the balance keys are left out of the hash, so rules that
    leave them off keep the hash they had before the keys existed (the pools and models made
    then still match): the hash equals the SHA-256 of the validated values without the keys.
    Any other value is hashed.

    Covers: D-53"""
    import hashlib
    import json
    rules = load_rules(rules_path(), BALANCE_KEYS)
    data = rules.spec.model_dump(mode="json", by_alias=True)
    del data["battle"]["min_cycle_turns"], data["erosion"]["seal_cap_min"], data["freeze"]
    del data["runes"]["amplify"]["max_factor"]      # null in the frozen rules: no cap (D-54)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())
    assert rules.hash == digest.hexdigest()[:16]
    hashes = {load_rules(rules_path(), {**BALANCE_KEYS, k: v}).hash
              for k, v in (("battle.min_cycle_turns", 2), ("erosion.seal_cap_min", 1),
                           ("freeze.max_frozen", 1))}
    assert len(hashes) == 3 and rules.hash not in hashes


def test_models_and_pools_made_before_the_balance_rules_match_seed_literal():
    """The pools made under the rules as written live in configs/opponents/seed_literal/:
    seed_literal.yaml has their rules hash, so they load with it without a warning (strict), and
    the defaults warn about them. The pools of configs/opponents/ itself are the defaults'; the
    envs pick, per rank, the pool whose hash is the rules' (`shipped_pool`).

    Covers: D-53"""
    import gzip
    import json
    import warnings

    from rune_env.envs.run_env import shipped_pool
    from rune_env.run.opponents import PoolError, load_pool
    literal, default = load_rules(SEED_LITERAL), load_rules()
    opponents = DEFAULT_RULES_PATH.parents[1] / "opponents"

    def rules_hash(path):
        return json.loads(gzip.decompress(path.read_bytes()))["rules_hash"]

    old = sorted((opponents / "seed_literal").glob("*.json.gz"))
    new = sorted(opponents.glob("*.json.gz"))
    ranks = [r.id for r in default.spec.ranks]
    assert [p.name for p in old] == sorted(f"{r}.json.gz" for r in ranks)
    assert all(rules_hash(p) == literal.hash for p in old)
    assert all(rules_hash(p) == default.hash for p in new)
    for path in old:
        load_pool(path, literal, strict=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises((UserWarning, PoolError)):
                load_pool(path, default)
    for i, rank in enumerate(ranks):
        assert shipped_pool(literal, i) == opponents / "seed_literal" / f"{rank}.json.gz"
        if (opponents / f"{rank}.json.gz").exists():
            assert shipped_pool(default, i) == opponents / f"{rank}.json.gz"


def test_pools_made_before_the_amplify_cap_match_balance_v2():
    """The pools made under the defaults before the amplify cap live in
    configs/opponents/balance_v2/: balance_v2.yaml has their rules hash, so they load with it
    strictly and are its shipped pools, and the defaults warn about them (strict: refuse).

    Covers: D-53, D-54"""
    import gzip
    import json
    import warnings

    from rune_env.envs.run_env import shipped_pool
    from rune_env.run.opponents import PoolError, load_pool
    v2, default = load_rules(BALANCE_V2), load_rules()
    folder = DEFAULT_RULES_PATH.parents[1] / "opponents" / "balance_v2"
    ranks = [r.id for r in default.spec.ranks]
    paths = sorted(folder.glob("*.json.gz"))
    assert [p.name for p in paths] == sorted(f"{r}.json.gz" for r in ranks)
    for i, rank in enumerate(ranks):
        path = folder / f"{rank}.json.gz"
        assert json.loads(gzip.decompress(path.read_bytes()))["rules_hash"] == v2.hash
        load_pool(path, v2, strict=True)
        assert shipped_pool(v2, i) == path
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises((UserWarning, PoolError)):
                load_pool(path, default)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_extends_merges_mappings_and_replaces_lists(tmp_path):
    """A rules file that extends another holds only its differences: mappings merge key by key,
    a list replaces the base's list whole; `extends` is relative to the file; chains work."""
    base = _write(tmp_path / "base.yaml", FROZEN_RULES.read_text(encoding="utf-8"))
    mid = _write(tmp_path / "mid.yaml", "extends: base.yaml\nbattle:\n  base_hp: 150\n"
                 "rings:\n  power_x: [1.0, 1.5, 2.0]\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    top = _write(sub / "top.yaml", "extends: ../mid.yaml\nrunes:\n  fire: {price: 5}\n")
    r = load_rules(top)
    frozen = frozen_rules() if rules_path() == str(FROZEN_RULES) else load_rules(FROZEN_RULES)
    assert r.spec.battle.base_hp == 150.0
    assert r.spec.battle.hp_per_round == frozen.spec.battle.hp_per_round   # merged, not replaced
    assert r.ring_x == (1.0, 1.5, 2.0)
    assert r.prices["fire"] == 5 and r.spec.runes.fire.damage == frozen.spec.runes.fire.damage
    assert r.source == str(top)
    assert load_rules(mid).hash != load_rules(base).hash


@pytest.mark.parametrize("text, message", [
    ("extends: missing.yaml\n", r"extends: no rules file 'missing.yaml': not .*missing.yaml, "
                                 r"nor a shipped rules file .*configs/rules/missing.yaml"),
    ("extends: 3\n", "extends: expected the path"),
    ("extends: self.yaml\n", "extends: a cycle"),
    ("extends: base.yaml\nbattle:\n  base_hpp: 3\n", r"battle\.base_hpp"),
    ("extends: base.yaml\nfreeze:\n  max_frozen: -2\n", r"freeze\.max_frozen"),
    # a YAML mistake in the file's terms: its line and column, not PyYAML's "<unicode string>"
    # (an open brace on line 2 at column 7, the parser stopped on line 3 at column 6)
    ("extends: base.yaml\nfire: {damage: 8\nice: 3\n",
     r"self\.yaml: not valid YAML at line 3, column 4: expected ',' or '\}', but got ':' "
     r"\(while parsing a flow mapping at line 2, column 7\)$"),
])
def test_extends_errors_name_the_problem(tmp_path, text, message):
    _write(tmp_path / "base.yaml", FROZEN_RULES.read_text(encoding="utf-8"))
    path = _write(tmp_path / "self.yaml", text)
    with pytest.raises(RulesError, match=message):
        load_rules(path)



def test_an_extends_chain_is_bounded(tmp_path):
    """1,200 files each extending the next ran out of Python's stack and said "YAML nested more
    than 64 deep" of a flat file. A chain of MAX_EXTENDS files (32) loads; one longer is refused
    naming the chain. The chains here end on the frozen rules, so both hashes are its own."""
    from rune_env.rules.config import MAX_EXTENDS
    _write(tmp_path / "base.yaml", FROZEN_RULES.read_text(encoding="utf-8"))
    for i in range(MAX_EXTENDS + 1):
        _write(tmp_path / f"r{i}.yaml", f"extends: r{i + 1}.yaml\n")
    _write(tmp_path / f"r{MAX_EXTENDS + 1}.yaml", "extends: base.yaml\n")
    with pytest.raises(RulesError, match=r"extends: a chain of more than 32 rules files"):
        load_rules(tmp_path / "r0.yaml")
    # r2 .. r33 and base: 32 files extend, the last of them the frozen rules
    assert load_rules(tmp_path / "r2.yaml").hash == load_rules(FROZEN_RULES).hash

def test_extends_a_shipped_rules_file_by_name_from_anywhere(tmp_path):
    """A designer's file outside configs/rules/ (here in a temp folder) extends the defaults by
    name: `extends: default.yaml` finds configs/rules/default.yaml when no default.yaml stands
    beside it; one beside it wins (a path relative to the file comes first)."""
    path = _write(tmp_path / "my_try.yaml", "extends: default.yaml\nbattle:\n  base_hp: 120\n")
    r, default = load_rules(path), load_rules()
    assert r.spec.battle.base_hp == 120 and r.hash != default.hash
    assert r.spec.runes.amplify.max_factor == default.spec.runes.amplify.max_factor
    v2 = _write(tmp_path / "v2.yaml", "extends: balance_v2.yaml\n")
    assert load_rules(v2).hash == "69f9e0fd53e3fb7d"
    _write(tmp_path / "default.yaml", FROZEN_RULES.read_text(encoding="utf-8"))
    assert load_rules(path).spec.runes.amplify.max_factor is None     # the frozen copy beside it


# -- a typo in a rules file names the unknown key and the closest allowed one --------------------
def _typo(tmp_path, edit):
    data = yaml.safe_load(FROZEN_RULES.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        load_rules(path)
    return str(exc.value), str(path)


def _rename(section: dict, old: str, new: str) -> None:
    section[new] = section.pop(old)


@pytest.mark.parametrize("edit, expected", [
    (lambda d: _rename(d, "battle", "batle"),
     "batle: unknown key (did you mean 'battle'?)"),
    (lambda d: _rename(d["battle"], "base_hp", "base_hpp"),
     "battle.base_hpp: unknown key (did you mean 'base_hp'?)"),
    (lambda d: d["cores"]["moon"].update(interval_xx=0.8),
     "cores.moon.interval_xx: unknown key (did you mean 'interval_x'?)"),
    (lambda d: _rename(d["flows"][0], "multiplier", "multiplierr"),
     "flows[0].multiplierr: unknown key (did you mean 'multiplier'?)"),
], ids=["top level", "nested section", "modifier", "list item"])
def test_a_typo_names_the_unknown_key_and_a_suggestion(tmp_path, edit, expected):
    message, path = _typo(tmp_path, edit)
    # the whole message: the key path first, the suggestion, the file; the required key the typo
    # left out is not reported as another problem
    assert message == f"{expected} [{path}]"


def test_an_unknown_key_without_a_close_match_lists_the_keys_of_its_place(tmp_path):
    message, _ = _typo(tmp_path, lambda d: d["battle"].update(colour="red"))
    assert message.startswith("battle.colour: unknown key (the keys here: duration_s, ")
    assert "base_hp" in message


def test_a_typo_comes_before_other_problems(tmp_path):
    def edit(d):
        d["run"]["income"] = -1
        _rename(d["battle"], "base_hp", "base_hpp")
    message, _ = _typo(tmp_path, edit)
    assert message.startswith("battle.base_hpp: unknown key (did you mean 'base_hp'?) "
                              "(and 1 more problem)")


def test_a_missing_key_is_named(tmp_path):
    message, path = _typo(tmp_path, lambda d: d["battle"].pop("base_hp"))
    assert message == f"battle.base_hp: required key missing [{path}]"
    message, _ = _typo(tmp_path, lambda d: d["flows"][1].pop("to"))
    assert message.startswith("flows[1].to: required key missing")
