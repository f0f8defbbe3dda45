"""--rules FILE on the scripts that draft, field and inspect boards (issue 31, item 1), and the
pieces under it: the drafting runs play under the rules they are given (their rank's economy on
top, whatever those rules' source), the command line reads the file before its bounds, the
scripts default to the pools shipped for the rules, a drafting policy of other rules warns, and
board_stats splits a pool by drafter in aligned columns. The whole path, command by command, is
tests/scripts/test_designer_path.py."""
from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest

from agents.cli.args import parse_with_rules, rules_env_kwargs
from agents.design.pools.drafting import drafting_overrides, ghosts_of, make_drafting_agent
from agents.evaluation.board_stats import (by_drafter, drafter_lines, format_source, pool_boards,
                                           summarise)
from rune_env.envs.run_env import resolve_rules
from rune_env.rules import RulesError, default_rules, load_rules
from rune_env.rules.hp import round_max_hp
from rune_env.run.opponents import Pool

from conftest import retuned_rules

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
DEFAULTS = default_rules()


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"everywhere_{name}", REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def longer_rules(tmp_path) -> Path:
    """A designer's file with a longer run: run.round_cap 5 past the defaults'."""
    path = tmp_path / "longer.yaml"
    path.write_text(f"extends: default.yaml\nrun:\n  round_cap: {DEFAULTS.spec.run.round_cap + 5}\n",
                    encoding="utf-8")
    return path


def test_overrides_apply_on_top_of_any_rules():
    """A retuned dict's rules (no file to reload) with a rank's drafting economy on top: the
    retuned numbers stay, the override lands, a bad key is a RulesError."""
    retuned = retuned_rules()
    drafted = resolve_rules(retuned, {"run.endless": True, "run.income": 13})
    assert drafted.spec.battle.base_hp == retuned.spec.battle.base_hp != DEFAULTS.spec.battle.base_hp
    assert drafted.spec.run.endless and drafted.spec.run.income == 13
    assert resolve_rules(retuned, None) is retuned
    with pytest.raises(RulesError, match="no_such"):
        retuned.with_overrides({"run.no_such": 1})


def test_ghosts_are_drafted_under_the_rules_given(tmp_path):
    """The drafting env plays the file's numbers: round 1's ghosts have its max HP."""
    path = tmp_path / "hp.yaml"
    path.write_text("extends: default.yaml\nbattle:\n  base_hp: 130\n", encoding="utf-8")
    rules = load_rules(path)
    ghosts = ghosts_of("greedy", 0, 1, 0, 1, rules)
    assert [g["board"]["max_hp"] for g in ghosts] == [round_max_hp(rules, 1)] == [130]
    assert drafting_overrides(rules, 0) == drafting_overrides(DEFAULTS, 0)


def test_the_command_line_is_bounded_by_the_rules_file(longer_rules, capsys):
    """make_opponents' --max-round goes to the file's run.round_cap; past the defaults' it is
    refused without the file; a file that does not load is one error line, exit 2."""
    build = _script("make_opponents").build_parser
    cap = DEFAULTS.spec.run.round_cap + 5
    argv = ["--rank", "apprentice", "--agents", "greedy", "--out", "x.json",
            "--max-round", str(cap)]
    args, rules = parse_with_rules(build, argv + ["--rules", str(longer_rules)])
    assert args.max_round == cap and rules.spec.run.round_cap == cap
    assert rules_env_kwargs(args) == {"rules": str(longer_rules.resolve())}
    with pytest.raises(SystemExit) as stop:
        parse_with_rules(build, argv)
    assert stop.value.code == 2 and f"1..{cap - 5}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        parse_with_rules(build, argv + ["--rules=" + str(longer_rules.parent / "none.yaml")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith("error: --rules: ") and err.count("\n") == 1
    args, rules = parse_with_rules(build, argv[:-2])
    assert rules is DEFAULTS and rules_env_kwargs(args) == {}


def test_calibration_fields_the_pools_shipped_for_its_rules():
    """Without --pools-dir, each rank's pool is the one the envs field under the rules: under
    the rules as written, configs/opponents/seed_literal/ (strict: no other hash passes)."""
    literal = load_rules(REPO / "configs" / "rules" / "seed_literal.yaml")
    a = argparse.Namespace(pools_dir=None, strict=True)
    pools = _script("calibrate_ranks").pools_of(a, literal, ["apprentice", "mentor"], {})
    assert [p.parent.name for p in pools.values()] == ["seed_literal", "seed_literal"]


def test_build_pools_under_other_rules_needs_an_out_dir(tmp_path, script_main):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: default.yaml\nbattle:\n  base_hp: 130\n", encoding="utf-8")
    r = script_main("build_pools", "--rules", path)
    assert r.returncode == 2 and "give --out-dir DIR" in r.stderr and r.stderr.count("\n") == 1


def test_build_pools_without_the_rules_metagame_stops_before_drafting(tmp_path, script_main):
    """Archmage's recipe drafts from the metagame, which no file of these rules has: the build
    stops at the plan, so apprentice (first in order) is not drafted or written either."""
    path = tmp_path / "mine.yaml"
    path.write_text("extends: default.yaml\nbattle:\n  base_hp: 130\n", encoding="utf-8")
    out = tmp_path / "pools"
    r = script_main("build_pools", "--rules", path, "--out-dir", out, "--ranks", "apprentice",
                    "archmage", "--runs-scale", "0.01", "--no-progress", "--no-exploitability")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: archmage: metagame: no metagame shipped for the rules")
    assert "written" not in r.stdout and not out.exists()


def test_a_drafting_policy_of_other_rules_warns():
    policy = REPO / "agents" / "models" / "seed_literal" / "apprentice_s0.pt"
    with pytest.warns(UserWarning, match="trained under rules"):
        make_drafting_agent(str(policy), DEFAULTS, 0)


def test_a_pool_split_by_drafter_in_aligned_columns():
    """Two drafters, one of them with p90 of two digits: every row keeps its columns."""
    small = {"runes": {"1:0": ["fire", 1]}, "core": "moon"}
    big = {"runes": {f"{ring}:{i}": ["fire", 1] for ring in (1, 2, 3) for i in range(4)},
           "core": "sun"}
    rounds = {r: [{"board": dict(small, round=r), "agent": "greedy", "count": 3, "round": r},
                  {"board": dict(big, round=r), "agent": "p.pt", "count": 1, "round": r}]
              for r in (1, 2, 3)}
    entries = pool_boards(Pool(rules_hash=DEFAULTS.hash, rank="apprentice", rounds=rounds))
    groups = by_drafter(entries)
    assert list(groups) == ["greedy", "p.pt"] and [len(g) for g in groups.values()] == [3, 3]
    drafters = {n: summarise(g, DEFAULTS) for n, g in groups.items()}
    lines = drafter_lines(drafters)
    assert "greedy" in lines[0] and "9 boards ( 75%)" in lines[0]
    assert "p.pt" in lines[1] and "3 boards ( 25%)" in lines[1]
    table = format_source("pool", summarise(entries, DEFAULTS), 2).splitlines()
    head, rows = table[1], table[2:-1]
    assert any("[1, 12]" in row for row in rows)
    core = head.index("top core")
    for row in rows:        # the median under "med", the spread under "[p10", the core last
        assert row.index("[") == head.index("[p10")
        assert row[head.index("med") + 2] != " " and row[head.index("med") + 3] == " "
        assert row[core - 1] == " " and row[core:] == "moon 75%"
