"""What a rules file changes (rune_env/rules/diff.py, `python -m rune_env rules`): every value
that differs from the defaults or another file, as the rules hash reads them."""
from __future__ import annotations

import json

import pytest

from rune_env import cli
from rune_env.rules import default_rules, load_rules
from rune_env.rules.diff import Change, rules_diff

pytestmark = pytest.mark.outside_mutation_check


def _variant(tmp_path, text: str):
    path = tmp_path / "variant.yaml"
    path.write_text("extends: default.yaml\n" + text, encoding="utf-8")
    return path


def test_a_variant_lists_exactly_the_values_it_changes(tmp_path):
    """fire's damage and the amplify cap changed: two changes, the defaults' values before
    (read from them, not written here), the file's after; 8 written as 8 or 8.0 is one value."""
    base = default_rules().spec.runes
    path = _variant(tmp_path, "runes:\n  fire:\n    damage: 8\n  amplify:\n    max_factor: 1.5\n")
    assert rules_diff(load_rules(path), default_rules()) == [
        Change("runes.amplify.max_factor", base.amplify.max_factor, 1.5),
        Change("runes.fire.damage", base.fire.damage, 8.0)]
    same = _variant(tmp_path, f"runes:\n  fire:\n    damage: {base.fire.damage:.1f}\n")
    assert load_rules(same).hash == default_rules().hash
    assert rules_diff(load_rules(same), default_rules()) == []


def test_a_balance_rule_switched_off_is_off(tmp_path):
    """max_factor null is the cap's "off" value (RULE_OFF_VALUES): left out of the hash, and
    shown as the file holds it (null) with `after_off`."""
    path = _variant(tmp_path, "runes:\n  amplify:\n    max_factor: null\n")
    (change,) = rules_diff(load_rules(path), default_rules())
    assert change == Change("runes.amplify.max_factor",
                            default_rules().spec.runes.amplify.max_factor, None, False, True)


def test_entries_with_ids_are_compared_one_by_one(tmp_path):
    """flows is a list of entries with ids: one flow's multiplier changed is that key alone
    (it was the whole list, 6,000 characters, on one line)."""
    import yaml
    from rune_env.resources import default_rules_path
    flows = yaml.safe_load(default_rules_path().read_text())["flows"]
    first = flows[0]
    flows[0] = {**first, "multiplier": first["multiplier"] + 0.5}
    path = tmp_path / "flows.yaml"
    path.write_text(yaml.safe_dump({"extends": "default.yaml", "flows": flows}))
    assert rules_diff(load_rules(path), default_rules()) == [
        Change(f"flows.{first['id']}.multiplier", float(first["multiplier"]),
               float(first["multiplier"]) + 0.5)]


def test_the_command_prints_the_hash_and_each_change(tmp_path, capsys):
    path = _variant(tmp_path, "runes:\n  fire:\n    damage: 8\n")
    rules = load_rules(path)
    assert cli.main(["rules", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"{path}: rules {rules.hash}; against the defaults "
                        f"(configs/rules/default.yaml), rules {default_rules().hash}: 1 value "
                        f"differs")
    assert lines[1:] == [f"  runes.fire.damage  {json.dumps(default_rules().spec.runes.fire.damage)}"
                         f" -> 8.0"]
    assert cli.main(["rules", str(path), "--against", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["changes"] == [] and data["rules_hash"] == data["against_hash"] == rules.hash
    assert cli.main(["rules", str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
