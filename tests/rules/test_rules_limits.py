"""Rules that always make a finishing battle (rune_env/rules/limits.py, config.MAX_BATTLE_S):
times that round to 0 ms, times longer than the battle, battles longer than the bound, an
interval that the multipliers bring under 1 ms and counts repeated within a turn are refused in
one RulesError naming the key; numbers that YAML reads as text say so. The worst rules file the
checks accept still ends its battles, and the engines end a battle at its time limit even for
rules that skipped the checks."""
from __future__ import annotations

import re
import time

import pytest
import yaml

from rune_env.battle.engines import battle_function
from rune_env.rules import Board, RulesError, load_rules
from rune_env.rules.config import DEFAULT_RULES_PATH, MAX_BATTLE_S, Rules, RulesSpec

DEFAULT = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))


def refused(overrides: dict) -> str:
    with pytest.raises(RulesError) as exc:
        load_rules(overrides=overrides)
    message = str(exc.value)
    assert "\n" not in message
    return message


# -- times ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, value, zero_ok", [
    ("battle.base_interval_s", 0.0001, False),     # the issue's: 0.1 ms rounds to 0 ms
    ("battle.base_interval_s", 0.00049, False),    # 0.49 ms + 0.5 -> floor 0
    ("runes.ice.freeze_s", 0.0004, True),
    ("runes.dark.curse_s", 0.0001, True),
    ("flows.8.storm_delay_s", 0.0002, True),       # storm: from thunder to wind
    ("relics.warding_seal.unseal_after_s", 0.0003, True),
])
def test_a_time_that_rounds_to_0_ms_is_refused(key, value, zero_ok):
    message = refused({key: value})
    key = re.sub(r"\.(\d+)\.", r"[\1].", key)     # named as the schema's errors are: flows[8]
    assert message.startswith(f"{key}: {value:g} s rounds to 0 ms") and "at least 0.001 s" in message
    assert ("or 0 for none" in message) == zero_ok


def test_times_of_1_ms_and_0_where_allowed_load():
    # 0.0005 s is 0.5 ms: + 0.5 -> 1.0 -> 1 ms (half up, D-6a)
    rules = load_rules(overrides={"runes.ice.freeze_s": 0.0005, "runes.dark.curse_s": 0.0,
                                  "flows.8.storm_delay_s": 0.0, "overdrive.start_s": 0.0})
    assert Rules.ms(rules.spec.runes.ice.freeze_s) == 1


@pytest.mark.parametrize("key, value", [
    ("battle.base_interval_s", 61.0), ("overdrive.start_s", 60.5), ("runes.dark.curse_s", 100.0),
    ("relics.warding_seal.unseal_after_s", 61.0), ("flow_limits.storm_budget_s", 90.0),
])
def test_a_time_longer_than_the_battle_is_refused(key, value):
    # the shipped battle lasts 60 s
    assert refused({key: value}) .startswith(
        f"{key}: {value:g} s is longer than the battle (battle.duration_s: 60 s)")
    load_rules(overrides={key: 60.0})         # as long as the battle: fine


def test_the_battle_length_has_an_upper_bound():
    assert MAX_BATTLE_S == 600.0
    load_rules(overrides={"battle.duration_s": MAX_BATTLE_S})
    for value in (600.5, 1.0e12):             # the 30,000 years
        assert refused({"battle.duration_s": value}).startswith(
            "battle.duration_s: Input should be less than or equal to 600")


@pytest.mark.parametrize("text, spelling", [("1.0e300", "1.0e+300"), ("1e300", "1.0e+300"),
                                            ("1e3", "1000.0"), ("5e-1", "0.5")])
def test_a_number_yaml_reads_as_text_says_so(tmp_path, text, spelling):
    """PyYAML (YAML 1.1) needs a dot and a signed exponent: 1.0e300 is a string to it."""
    path = tmp_path / "r.yaml"
    path.write_text(f"extends: {DEFAULT_RULES_PATH}\nbattle:\n  duration_s: {text}\n")
    assert yaml.safe_load(path.read_text())["battle"]["duration_s"] == text     # text indeed
    with pytest.raises(RulesError) as exc:
        load_rules(path)
    assert str(exc.value).startswith(
        f"battle.duration_s: expected a number, got the text '{text}': YAML reads "
        f"{text} as a string; write {spelling}")
    assert yaml.safe_load(f"x: {spelling}")["x"] == float(text)                  # and the fix reads


def test_the_fastest_side_turns_at_least_every_millisecond():
    """The fastest board combines the moon core (x0.8), the swift boss rule (x0.85) and the
    hourglass relic (x0.9): x0.612 of the base interval."""
    # 0.0008 s x 0.612 = 0.4896 ms -> rounds to 0 ms, though 0.8 ms alone would be fine
    message = refused({"battle.base_interval_s": 0.0008})
    assert message.startswith("battle.base_interval_s: 0.0008 s times the interval multipliers "
                              "one board can combine (cores.moon.interval_x, "
                              "boss_rules.swift.interval_x, relics.hourglass.interval_x) is 0.49 ms")
    # 0.0009 s x 0.612 = 0.5508 ms -> 1 ms
    load_rules(overrides={"battle.base_interval_s": 0.0009})
    # a multiplier alone can do it: 0.5 s x 0.0001 x 0.85 x 0.9 = 0.038 ms
    assert "0.0382 ms, which rounds to 0 ms" in refused({"cores.moon.interval_x": 0.0001})


@pytest.mark.parametrize("key, value", [("runes.fire.hits", 1001), ("runes.fire.hits", 10**12),
                                        ("erosion.per_cycle", 5000),
                                        ("boss_rules.corrosion.extra_erosions", 1001),
                                        ("flows.6.extra_casts", 10**9)])
def test_counts_repeated_within_a_turn_are_bounded(key, value):
    assert DEFAULT["flows"][6].get("extra_casts") == 1      # thundercloud, the one extra cast
    named = re.sub(r"\.(\d+)\.", r"[\1].", key)
    assert refused({key: value}).startswith(f"{named}: {value} is more than 1000")
    load_rules(overrides={key: 1000})


# -- battles end -------------------------------------------------------------------------------------
def worst_rules(tmp_path, base_s: float = 0.001) -> Rules:
    """The worst a rules file may be: the longest battle (600 s), the smallest base interval
    (1 ms) and every interval multiplier below 1, set so that a core (a board has one) and all
    the boss rules and relics together bring it to 0.51 ms, which still rounds to 1 ms; every
    cycle one turn long."""
    data = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    data["battle"].update(duration_s=MAX_BATTLE_S, base_interval_s=base_s, min_cycle_turns=1)
    n = 1 + len(data["boss_rules"]) + len(data["relics"])
    for section in ("cores", "boss_rules", "relics"):
        for m in data[section].values():
            m["interval_x"] = 0.51 ** (1 / n)
    path = tmp_path / "worst.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_rules(path)


def healer(rules) -> Board:
    """Two water runes and every relic and boss rule (the fastest side there can be): it heals
    and never hurts, so two of them battle until the time runs out."""
    spec = rules.spec
    return Board.from_json({"runes": {"1:0": ["water", 1], "1:1": ["water", 1]}, "core": "moon",
                            "relics": list(spec.relics), "boss_rules": list(spec.boss_rules)},
                           rules, source="healer")


def test_the_worst_rules_file_loads_and_a_hair_worse_does_not(tmp_path):
    rules = worst_rules(tmp_path)
    assert rules.spec.battle.duration_s == 600.0
    with pytest.raises(RulesError, match="is 0.49 ms, which rounds to 0 ms"):
        worst_rules(tmp_path, base_s=0.00096)        # 0.96 ms x 0.51 = 0.4896 ms


@pytest.mark.parametrize("engine, seconds", [
    ("fast", 30), pytest.param("reference", 120, marks=pytest.mark.outside_mutation_check)])
def test_the_worst_battle_ends_at_its_time_limit(tmp_path, engine, seconds):
    rules = worst_rules(tmp_path)
    b = healer(rules)
    fight = battle_function(engine)
    fight(healer(load_rules()), b, load_rules())     # compile the kernel outside the clock
    t0 = time.monotonic()
    r = fight(b, b, rules)
    elapsed = time.monotonic() - t0
    # turns every 1 ms from t = 1 ms to t = 600,000 ms: 600,000 turns a side, then the timeout
    assert r.reason == "timeout" and r.time == 600.0
    assert r.turns == (600_000, 600_000) and r.rests == (0, 0)
    assert elapsed < seconds, elapsed


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_an_interval_of_0_ms_still_ends_the_battle(engine):
    """Rules built around the checks (Rules(spec) instead of load_rules): a base interval of
    0.1 ms, 0 ms once rounded. The engines take every interval as at least 1 ms, so the battle
    ends at its 2 s with a turn every ms (2,000 a side) instead of stalling at t = 0."""
    data = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    data["battle"].update(duration_s=2.0, base_interval_s=0.0001, min_cycle_turns=1)
    rules = Rules(RulesSpec.model_validate(data), data, source="unchecked")
    b = Board.from_json({"runes": {"1:0": ["water", 1]}, "core": "tree"}, rules, source="b")
    r = battle_function(engine)(b, b, rules)
    assert r.reason == "timeout" and r.time == 2.0 and r.turns == (2000, 2000)


def test_a_cut_battle_keeps_times_longer_than_it():
    """Rules.cut_at: the audit's battles cut at the opponent's second turn (0.8 s here) keep the
    3-s curse and the 1.5-s freeze, which a rules file could not (no time longer than the
    battle); a cut outside 1 ms..the battle's length is refused naming the key."""
    from rune_env.rules import RulesError, load_rules
    rules = load_rules()
    cut = rules.cut_at(0.8)
    assert cut.spec.battle.duration_s == 0.8 and cut.spec.runes.dark.curse_s == 3
    assert rules.spec.battle.duration_s == 60
    for bad in (0.0, 0.0004, 60.5, float("nan")):
        with pytest.raises(RulesError, match="battle.duration_s"):
            rules.cut_at(bad)


def test_plausible_mistakes_in_a_rules_file_are_said_in_its_terms(tmp_path):
    """A designer's likely slips, each one line saying what to write (pydantic's words were
    'Input should be a valid integer / tuple / dictionary or instance of BattleSpec')."""
    cases = {
        "battle:\n  base_hp: 120\n":       # no extends: the defaults' keys all missing
            "version: required key missing (and ",
        "extends: default.yaml\nrun:\n  lamps: 1e3\n":
            "run.lamps: expected a whole number, got the text '1e3': YAML reads 1e3 as a "
            "string; write 1000",
        "extends: default.yaml\nrun:\n  lamps: 3.0\n":
            "run.lamps: expected a whole number, got 3.0; write 3",
        "extends: default.yaml\nranks: {archmage: {lamps: 3}}\n":
            "ranks: expected a list (given whole: it replaces the extended file's list), got a "
            "mapping",
        "extends: default.yaml\nbattle: null\n":
            "battle: expected a mapping of keys (a section), got nothing (null)",
    }
    for i, (text, words) in enumerate(cases.items()):
        path = tmp_path / f"r{i}.yaml"
        path.write_text(text)
        with pytest.raises(RulesError) as exc:
            load_rules(path)
        assert str(exc.value).startswith(words), str(exc.value)
    with pytest.raises(RulesError) as exc:
        load_rules(tmp_path / "r0.yaml")
    assert "; a file of only the changes starts with `extends: default.yaml`" in str(exc.value)


def test_an_override_that_breaks_the_rules_names_itself():
    with pytest.raises(RulesError) as exc:
        load_rules(overrides={"run.lamps": -1})
    assert str(exc.value).startswith("run.lamps: Input should be greater than or equal to 1")
    assert str(exc.value).endswith(f"[{DEFAULT_RULES_PATH} with the override run.lamps]")


def test_counts_and_times_that_multiply_past_the_battle_work_bound_are_refused(tmp_path):
    """600 s at a turn every 1 ms (the fastest interval, 0.001 s x moon 0.8 x swift 0.85 x
    hourglass 0.9 = 0.612 ms, rounds to 1 ms): 600,000 turns a side. At the shipped counts
    (wind's 2 hits, thundercloud's 1 extra cast) that is 600,000 x 2 x 2 = 2,400,000 hits a
    battle, the bound: accepted. 3 hits: 3,600,000, refused; the red team's 1000 hits and 1000
    extra casts (each within MAX_REPEATS) played one battle for about 27 minutes."""
    head = "extends: default.yaml\nbattle: {duration_s: 600, base_interval_s: 0.001}\n"
    path = tmp_path / "at_bound.yaml"
    path.write_text(head)
    load_rules(path)
    wind = yaml.safe_load(DEFAULT_RULES_PATH.read_text())["runes"]["wind"]
    for hits, work in ((3, "3,600,000"), (1000, "1,200,000,000")):
        path = tmp_path / f"hits{hits}.yaml"
        path.write_text(head + yaml.safe_dump({"runes": {"wind": {**wind, "hits": hits}}}))
        with pytest.raises(RulesError) as exc:
            load_rules(path)
        assert str(exc.value).startswith(
            f"battle.duration_s: 600 s at the fastest turn (1 ms: 600,000 turns a side) x {hits} "
            f"hits (runes.wind.hits) x 2 casts a turn (flows[6].extra_casts) is {work} hits a "
            f"battle; at most 2,400,000")
    # the same 1000 hits in a battle of the defaults' 60 s and intervals: 196 turns, accepted
    path = tmp_path / "hits_default_times.yaml"
    path.write_text("extends: default.yaml\n"
                    + yaml.safe_dump({"runes": {"wind": {**wind, "hits": 1000}}}))
    load_rules(path)
