"""Every number of a rules file is bounded where it enters (rune_env/rules/schema.py: the safety
bounds MAX_*, and `run_mana_bound`): a copy of configs/rules/default.yaml with one line changed to
a value that used to exhaust memory, hang reset, fail late at reset or step, or be accepted
silently is refused at load in one RulesError line naming the key; the shipped rules files load
with the hashes they had; a YAML mapping that gives a key twice is refused (rune_env/files.py)."""
from __future__ import annotations

import glob
from pathlib import Path

import gymnasium as gym
import pytest

import rune_env  # noqa: F401  (registers the envs)
from rune_env.files import safe_load_yaml
from rune_env.rules import RulesError, load_rules
from rune_env.rules.config import DEFAULT_RULES_PATH
from rune_env.rules.schema import (MAX_ACTIONS, MAX_OFFERS, MAX_ROUNDS, MAX_SLOTS,
                                   STEP_RECORD_MAX, run_mana_bound)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TEXT = DEFAULT_RULES_PATH.read_text(encoding="utf-8")


def edited(tmp_path: Path, old: str, new: str, name: str = "edited.yaml") -> Path:
    """A copy of the default rules with the one line `old` replaced by `new`."""
    lines = DEFAULT_TEXT.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.rstrip("\n") == old]
    assert len(hits) == 1, f"{old!r} is not one line of default.yaml"
    lines[hits[0]] = new + "\n"
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def refused_file(path: Path) -> str:
    with pytest.raises(RulesError) as exc:
        load_rules(path)
    message = str(exc.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# (the line of default.yaml, the line it becomes, the key path the error starts with, a word of
# the reason). The audit's cases: memory exhaustion (1), a hang at reset (2), late errors at
# reset/step (3), negative costs (4), values accepted silently (5).
CASES = [
    # 1. the action table has hand_slots_max x cells place actions: 10^9 x 37 ran out of memory
    ("  hand_slots_max: 8", "  hand_slots_max: 1000000000", "run.hand_slots_max",
     f"less than or equal to {MAX_SLOTS}"),
    ("  artifact_slots_max: 4", "  artifact_slots_max: 1000000000", "run.artifact_slots_max",
     f"less than or equal to {MAX_SLOTS}"),
    ("  shop_rune_offers: 5", "  shop_rune_offers: 1000000000", "run.shop_rune_offers",
     f"less than or equal to {MAX_OFFERS}"),
    # 2. reset built a boss schedule of 2 * 10^11 boss rounds
    ("  round_cap: 30", "  round_cap: 1000000000000", "run.round_cap",
     f"less than or equal to {MAX_ROUNDS}"),
    # 3. past the int32 step record (2,147,483,647) at reset, or infinite powers
    ("  start_mana: 10", "  start_mana: 1000000000000000000000", "run.start_mana",
     "less than or equal to 10000"),
    ("  income: 10", "  income: 100000000000000000000", "run.income",
     "less than or equal to 10000"),
    ("  lamps: 3", "  lamps: 1000000000000", "run.lamps", "less than or equal to 1000"),
    ("  reroll_cost: 1", "  reroll_cost: 1000000000000000000000", "run.reroll_cost",
     "less than or equal to 10000"),
    ("  fire:    {price: 2, damage: 6, hits: 1}",
     "  fire:    {price: 2, damage: 1.0e+308, hits: 1}",
     "runes.fire.damage", "less than or equal to 1000000"),
    ("  action_cap: 60            # actions per preparation; then ready is forced",
     "  action_cap: 1000000", "run.action_cap", f"less than or equal to {MAX_ACTIONS}"),
    # 4. a sector that pays the player to open it
    ("  open_costs: [3, 4, 5, 6, 7, 8]", "  open_costs: [-3, 4, 5, 6, 7, 8]",
     "sectors.open_costs[0]", "greater than or equal to 0"),
    # 5. accepted silently before
    ("  faces_by_rank: [3, 4, 6, 8, 10, 12, 12]   # rank 1..7; rank 0 is a fixed 1",
     "  faces_by_rank: [-3, 0, 6, 8, 10, 12, 1000000000000000000000]",
     "dice.faces_by_rank[0]", "greater than or equal to 1"),
    ("  faces_by_rank: [3, 4, 6, 8, 10, 12, 12]   # rank 1..7; rank 0 is a fixed 1",
     "  faces_by_rank: [3, 4, 6, 8, 10, 12, 1000000000000000000000]",
     "dice.faces_by_rank[6]", "less than or equal to 1000000"),
    ("  faces_by_rank: [3, 4, 6, 8, 10, 12, 12]   # rank 1..7; rank 0 is a fixed 1",
     "  faces_by_rank: [3, 0, 6, 8, 10, 12, 12]",          # a 0-faced die: n % 0
     "dice.faces_by_rank[1]", "greater than or equal to 1"),
    ("  weak_pl: [1, 3, 5, 7, 9, 11, 13]          # PL needed for ranks 1..7",
     "  weak_pl: [1, -3, 5, 7, 9, 11, 13]", "dice.weak_pl[1]", "greater than or equal to 0"),
    ("  coin_purse:       {income: 2}", "  coin_purse:       {income: -1000000000000}",
     "relics.coin_purse.income", "greater than or equal to -10000"),
    ("  - {id: sorcerer, income_delta: -1}", "  - {id: sorcerer, income_delta: -1000000000000}",
     "ranks[2].income_delta", "greater than or equal to -10000"),
    ("  resonance_mirror: {resonance_add: 0.2}", "  resonance_mirror: {resonance_add: -100.0}",
     "relics.resonance_mirror.resonance_add", "greater than or equal to -1"),
    ("  slope: 0.6", "  slope: -1.0e+300", "affinity.slope", "greater than or equal to -100"),
    ("  slope: 0.6", "  slope: 1.0e+300", "affinity.slope", "less than or equal to 100"),
    ("  moon:    {interval_x: 0.8, power_x: 0.9}", "  moon:    {interval_x: 0.8, power_x: -0.9}",
     "cores.moon.power_x", "greater than or equal to 0"),
    ("  ember_jar:        {power_x_by_kind: {fire: 1.2, thunder: 1.2}}",
     "  ember_jar:        {power_x_by_kind: {fire: -1.2, thunder: 1.2}}",
     "relics.ember_jar.power_x_by_kind.fire", "greater than or equal to 0"),
    ("  ember_jar:        {power_x_by_kind: {fire: 1.2, thunder: 1.2}}",
     "  ember_jar:        {power_x_by_kind: {fire: 1.2, thunder: 1.0e+300}}",
     "relics.ember_jar.power_x_by_kind.thunder", "less than or equal to 100"),
    ("  power_x: [1.0, 1.25, 1.5]  # ring 1, 2, 3; the number of entries is the board's radius",
     "  power_x: [1.0, -1.25, 1.5]", "rings.power_x[1]", "greater than or equal to 0"),
    ("  light:   {price: 3, heal: 3, unseals_by_grade: [1, 1, 2]}",
     "  light:   {price: 3, heal: 3, unseals_by_grade: [1, -1, 2]}",
     "runes.light.unseals_by_grade[1]", "greater than or equal to 0"),
    ("  opponent_bank: 64         # drafted opponents per round and budget, drawn uniformly "
     "(0: always fresh)",
     "  opponent_bank: 1000000000", "run.opponent_bank", "less than or equal to 10000"),
    ("  - {id: mentor, opponent_budget_x: 1.15}", "  - {id: mentor, opponent_budget_x: 1.0e+300}",
     "ranks[3].opponent_budget_x", "less than or equal to 100"),
    ("  base_hp: 100              # max HP in round 1", "  base_hp: 1.0e+308",
     "battle.base_hp", "less than or equal to 1000000"),
]


@pytest.mark.parametrize("old, new, key, reason", CASES, ids=[c[2] + ":" + c[1].split(":", 1)[1]
                                                              .strip()[:20] for c in CASES])
def test_an_out_of_bounds_number_is_refused_at_load_naming_its_key(tmp_path, old, new, key,
                                                                   reason):
    path = edited(tmp_path, old, new)
    message = refused_file(path)
    assert message.startswith(f"{key}: "), message
    assert reason in message, message
    assert message.endswith(f"[{path}]"), message          # the file is named too


@pytest.mark.parametrize("overrides, key", [
    ({"run.round_cap": 10**12}, "run.round_cap"),
    ({"run.hand_slots_max": 10**9}, "run.hand_slots_max"),
    ({"run.reroll_cost": 10**21}, "run.reroll_cost"),
    ({"relics.coin_purse.income": -10**12}, "relics.coin_purse.income"),
])
def test_the_env_refuses_the_same_numbers_as_rules_overrides_at_make(overrides, key):
    with pytest.raises(RulesError) as exc:
        gym.make("rune_env/RuneRun-v0", rules_overrides=overrides)
    assert str(exc.value).startswith(f"{key}: ") and "\n" not in str(exc.value)


def test_meaningful_negative_and_edge_values_still_load():
    rules = load_rules(overrides={
        "ranks.2.income_delta": -10,                      # a harder rank lowers the income
        "relics.coin_purse.income": -3,                    # a cursed relic
        "relics.resonance_mirror.resonance_add": -0.2,     # weakens resonance: 1.2 -> 1.0
        "affinity.slope": -0.6,                            # reversed affinity
        "run.round_cap": MAX_ROUNDS, "run.hand_slots_max": MAX_SLOTS,
        "run.artifact_slots_max": MAX_SLOTS, "run.shop_rune_offers": MAX_OFFERS,
    })
    assert rules.spec.ranks[2].income_delta == -10
    assert rules.spec.relics["resonance_mirror"].resonance_add == -0.2
    assert rules.spec.run.round_cap == 1000


def test_the_largest_slots_offers_and_rounds_still_reset_and_step():
    # the bounds are what the action table and the observation tolerate: 64 hand slots x 36
    # cells = 2,304 place actions, 64 x 36 = 2,304 place_artifact actions, and so on
    env = gym.make("rune_env/RuneRun-v0", rules_overrides={
        "run.hand_slots_max": MAX_SLOTS, "run.artifact_slots_max": MAX_SLOTS,
        "run.shop_rune_offers": MAX_OFFERS, "run.round_cap": MAX_ROUNDS,
        "run.start_mana": 10_000, "run.lamps": 1000}, core="moon", opponents="generator")
    try:
        table = env.unwrapped.table
        assert table.groups["place"][1] == (MAX_SLOTS, 36)
        obs, info = env.reset(seed=0)
        assert env.unwrapped.state.mana == 10_000
        obs, *_ = env.step(table.id("reroll"))          # reroll_cost 1: 10,000 - 1
        assert env.unwrapped.state.mana == 9_999
        assert ((obs >= 0) & (obs <= 1)).all()
    finally:
        env.close()


def test_the_mana_a_run_can_hold_is_bounded_by_the_step_record(tmp_path):
    # default.yaml by hand: start = max(start_mana 10, the last round's opponent budget at the
    # rank whose factors multiply highest: floor((10 + 10 * 29) * 1.15) = 345) = 345; a round:
    # income 10 + coin purse 2 + furnaces 7 * 36 cells = 252 -> 264, reward mana 6 -> 270, and
    # 60 actions x the best sale max(1 * 3^2 = 9, floor(7 * 0.5) = 3) = 540 -> 810;
    # 345 + 30 * 810 = 24,645
    assert run_mana_bound(load_rules().spec) == (24645, "345 at the start and up to 810 a round")
    # each number within its own bound, together past int32: start floor((10 + 10 * 999) * 1.15)
    # = 11,500; a round 270 + 1000 * max(10,000 * 9, 3) = 90,000,270; 11,500 + 1000 * 90,000,270
    # = 90,000,281,500
    with pytest.raises(RulesError) as exc:
        load_rules(overrides={"run.round_cap": 1000, "run.action_cap": 1000,
                              "run.rune_sell_per_unit": 10_000})
    message = str(exc.value)
    assert message.startswith("run.round_cap: a run of 1000 rounds could hold up to "
                              "90,000,281,500 mana") and f"{STEP_RECORD_MAX:,}" in message
    assert "\n" not in message
    # a check across keys names the file as the schema's checks do, and the overrides on it
    assert message.endswith(f"[{load_rules().source} with the overrides run.round_cap, "
                            f"run.action_cap, run.rune_sell_per_unit]")
    # the shipped economy over the longest run fits: start floor((10 + 10 * 999) * 1.15) =
    # 11,500, then 1000 rounds of at most 810: 11,500 + 810,000 = 821,500
    most, _ = run_mana_bound(load_rules(overrides={"run.round_cap": 1000}).spec)
    assert most == 821_500 < STEP_RECORD_MAX


SHIPPED_HASHES = {     # the hashes before the bounds existed (they must not move)
    "configs/rules/balance_v2.yaml": "69f9e0fd53e3fb7d",
    "configs/rules/default.yaml": "184758c7a8528bca",
    "configs/rules/seed_literal.yaml": "0fd5fa957cdeaf9d",
    "tests/data/amplify_cap_rules.yaml": "184758c7a8528bca",
    "tests/data/default_rules.yaml": "69f9e0fd53e3fb7d",
    "tests/data/rules.yaml": "86a1d7b43152c5ad",
}


def test_every_shipped_rules_file_loads_with_its_hash():
    found = sorted(str(Path(p).relative_to(REPO)) for pattern in
                   ("configs/rules/*.yaml", "tests/data/*.yaml")
                   for p in glob.glob(str(REPO / pattern)))
    assert found == sorted(SHIPPED_HASHES)        # a new file: add its hash here
    for name, expected in SHIPPED_HASHES.items():
        assert load_rules(REPO / name).hash == expected, name


# -- duplicate keys (rune_env/files.py) ----------------------------------------------------------
def test_a_rules_key_given_twice_is_refused_with_the_key_and_its_line(tmp_path):
    path = edited(tmp_path, "  base_hp: 100              # max HP in round 1",
                  "  base_hp: 50\n  base_hp: 100")
    line = DEFAULT_TEXT.splitlines().index("  base_hp: 100              # max HP in round 1") + 1
    message = refused_file(path)
    assert message == (f"{path}: key 'base_hp' given twice in one mapping (line {line + 1}, "
                       f"first at line {line}; YAML would keep only the last)")


def test_a_key_given_twice_in_a_flow_mapping_or_at_the_top_is_refused(tmp_path):
    path = edited(tmp_path, "  coin_purse:       {income: 2}",
                  "  coin_purse:       {income: 2, income: 200}")
    assert "key 'income' given twice" in refused_file(path)
    path = tmp_path / "top.yaml"
    path.write_text(DEFAULT_TEXT + "\nversion: 1\n", encoding="utf-8")
    assert "key 'version' given twice" in refused_file(path)


def test_the_yaml_loader_refuses_duplicates_for_every_caller_but_allows_merge_keys():
    with pytest.raises(ValueError, match=r"^cfg: key 'lr' given twice in one mapping \(line 3, "
                                         r"first at line 2;"):
        safe_load_yaml("train:\n  lr: 1\n  lr: 2\n", "cfg", ValueError)
    # the same name in different mappings, and 1 next to "1" (an int and a string key), are fine
    assert safe_load_yaml("a: {x: 1}\nb: {x: 2}\n1: p\n'1': q\n", "cfg", ValueError) == \
        {"a": {"x": 1}, "b": {"x": 2}, 1: "p", "1": "q"}
    # YAML merge keys may repeat (`<<: *a` then `<<: *b`)
    data = safe_load_yaml("a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: *a\n  <<: *b\n", "cfg",
                          ValueError)
    assert data["c"] == {"x": 1, "y": 2}


def test_every_shipped_yaml_config_has_no_key_twice():
    paths = [p for pattern in ("configs/**/*.yaml", "tests/**/*.yaml")
             for p in glob.glob(str(REPO / pattern), recursive=True)]
    assert len(paths) >= 20
    for p in paths:
        safe_load_yaml(Path(p).read_text(encoding="utf-8"), p, ValueError)   # raises if twice
