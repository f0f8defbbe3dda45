"""Golden traces: pinned battles replayed and compared, result and trace. Three sets:
"literal", 24 battles under the frozen rules as written (tests/data/golden.json); "balance",
the same 24 and 6 small-board battles under a frozen copy of the default rules with the balance
rules D-50..D-52 (tests/data/golden_balance.json, tests/data/default_rules.yaml: the rules of
configs/rules/balance_v2.yaml); and "amplify_cap", those 30 and 5 amplify battles under a frozen
copy of the defaults with the amplify cap D-54 (tests/data/golden_amplify_cap.json,
tests/data/amplify_cap_rules.yaml).

The golden values in tests/data/golden.json were computed ONCE BY THE ENGINE (against the frozen
rules tests/data/rules.yaml) and pinned; they are not worked out by hand and prove nothing about
the rules by themselves: they detect any change of behaviour. 16 battles are random pairs drawn
by `random_board` with fixed seeds across rounds 1..12, 8 are hand-chosen pairs that together
field every core, relic, boss rule, artifact and rune kind. Both boards are stored in the file,
so a change to the sampler does not move them.

On a mismatch the failure names the battle, the result fields that changed and the first
traced event that differs. If the change is intended, re-pin with `python scripts/pin_golden.py`
and give the reason in the commit message (see that script's docstring).

Under a mutated rules file (RUNE_TEST_RULES, scripts/mutation_check.py) the literal set's battles
are played with the mutated numbers and compared with the values pinned for the frozen rules, so a
mutation that changes any golden battle fails here. (The balance and amplify-cap sets always play
under their own frozen copies.)
"""
from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

import pytest
from conftest import frozen_rules


ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden.json"


def _pin_module():
    spec = importlib.util.spec_from_file_location("pin_golden", ROOT / "scripts" / "pin_golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


PIN = _pin_module()
DATA = json.loads(GOLDEN.read_text(encoding="utf-8"))
BATTLES = DATA["battles"]
BALANCE = json.loads(PIN.SETS["balance"][1].read_text(encoding="utf-8"))["battles"]
CAPPED = json.loads(PIN.SETS["amplify_cap"][1].read_text(encoding="utf-8"))["battles"]


@functools.lru_cache(maxsize=None)
def set_rules(name: str):
    """The frozen rules a golden set is pinned under (loaded once)."""
    from rune_env.rules import load_rules
    return load_rules(PIN.SETS[name][0])


def balance_rules():
    return set_rules("balance")


def cap_rules():
    return set_rules("amplify_cap")



def test_golden_set_shape():
    """24 battles, unique names; random pairs over rounds 1..12; the hand-chosen pairs field
    every core, relic, boss rule, artifact and rune kind. (The stored rules hash is only
    information: an edit of the run section must not fail this; the replayed battles detect
    any change that matters.)

    Covers: D-8
    """
    rules = frozen_rules()
    spec = rules.spec
    assert len(BATTLES) == 24
    assert len({b["name"] for b in BATTLES}) == 24
    rounds = {b["board0"].get("round", 1) for b in BATTLES if b["name"].startswith("random")}
    assert rounds == set(range(1, 13))
    seen = {"core": set(), "relic": set(), "boss": set(), "artifact": set(), "kind": set()}
    for b in BATTLES:
        for side in (b["board0"], b["board1"]):
            if side.get("core"):
                seen["core"].add(side["core"])
            seen["relic"].update(side.get("relics", []))
            seen["boss"].update(side.get("boss_rules", []))
            seen["artifact"].update(side.get("artifacts", {}).values())
            seen["kind"].update(k for k, _ in side["runes"].values())
    assert seen["core"] == set(spec.cores)
    assert seen["relic"] == set(spec.relics)
    assert seen["boss"] == set(spec.boss_rules)
    assert seen["artifact"] == set(spec.artifacts)
    assert seen["kind"] == set(rules.kinds)
    outcomes = {(b["result"]["reason"], b["result"]["winner"]) for b in BATTLES}
    assert {("knockout", 0), ("knockout", 1)} <= outcomes
    assert any(reason == "timeout" for reason, _ in outcomes)


def _diff(entry: dict, r) -> str:
    lines = [f"golden battle changed: {entry['name']!r}"]
    now = PIN.result_record(r)
    for key, old in entry["result"].items():
        if now.get(key) != old:
            lines.append(f"  {key}: pinned {old!r}, now {now.get(key)!r}")
    old_hashes = entry["event_hashes"].split()
    new_hashes = [PIN.event_hash(e) for e in r.events]
    if len(old_hashes) != len(new_hashes):
        lines.append(f"  events: pinned {len(old_hashes)}, now {len(new_hashes)}")
    for i, (a, b) in enumerate(zip(old_hashes, new_hashes)):
        if a != b:
            lines.append(f"  first differing event #{i} (pinned hash {a}): now {r.events[i]}")
            if i > 0:
                lines.append(f"  the event before it (unchanged): {r.events[i - 1]}")
            break
    else:
        if len(old_hashes) != len(new_hashes):
            i = min(len(old_hashes), len(new_hashes))
            extra = r.events[i] if i < len(r.events) else "(none: the trace now ends earlier)"
            lines.append(f"  first differing event #{i}: now {extra}")
    lines.append("  if intended: python scripts/pin_golden.py, with the reason in the commit message")
    return "\n".join(lines)


@pytest.mark.parametrize("entry", BATTLES, ids=[b["name"] for b in BATTLES])
def test_golden_battle(entry):
    """Replay one pinned battle: same result, same trace hash, same events (in the same order).

    Covers: D-8
    """
    _replay(entry, frozen_rules())


def _replay(entry: dict, rules) -> None:
    r = PIN.play(entry, rules)
    same = (PIN.result_record(r) == entry["result"] and r.trace_hash() == entry["trace_hash"]
            and len(r.events) == entry["n_events"])
    if not same:
        pytest.fail(_diff(entry, r), pytrace=False)


def test_balance_golden_set_shape():
    """The balance set: the literal set's 24 battles (same boards) and 6 small-board battles,
    pinned under rules with the balance rules on; rest turns happen in it.

    Covers: D-50, D-51, D-52"""
    rules = balance_rules()
    assert rules.spec.battle.min_cycle_turns > 1
    assert rules.spec.erosion.seal_cap_min > 0 and rules.spec.freeze.max_frozen > 0
    assert [b["name"] for b in BALANCE[:24]] == [b["name"] for b in BATTLES]
    assert all(a["board0"] == b["board0"] and a["board1"] == b["board1"]
               for a, b in zip(BALANCE, BATTLES))
    assert len(BALANCE) == 30
    rested = [b["name"] for b in BALANCE
              if sum(b["result"]["turns"]) < 2 * 120 and PIN.play(b, rules).rests != (0, 0)]
    assert len(rested) >= 6


@pytest.mark.parametrize("entry", BALANCE, ids=[b["name"] for b in BALANCE])
def test_balance_golden_battle(entry):
    """Replay one battle of the balance set under its frozen rules.

    Covers: D-50, D-51, D-52"""
    _replay(entry, balance_rules())


def test_amplify_cap_golden_set_shape():
    """The amplify-cap set: the balance set's 30 battles (same boards; where no rune's amplifies
    pass the cap they play as in the balance set) and 5 amplify battles, pinned under the defaults
    with the cap on; in each of those the cap acts (the battle differs without it), except where
    a capped rune only decides a copy (the mimic battle differs too).

    Covers: D-54"""
    rules = cap_rules()
    assert rules.spec.runes.amplify.max_factor is not None
    assert [b["name"] for b in CAPPED[:30]] == [b["name"] for b in BALANCE]
    assert all(a["board0"] == b["board0"] and a["board1"] == b["board1"]
               for a, b in zip(CAPPED, BALANCE))
    assert len(CAPPED) == 35
    uncapped = balance_rules()
    for entry in CAPPED[30:]:
        assert PIN.play(entry, uncapped).trace_hash() != entry["trace_hash"], entry["name"]


@pytest.mark.parametrize("entry", CAPPED, ids=[b["name"] for b in CAPPED])
def test_amplify_cap_golden_battle(entry):
    """Replay one battle of the amplify-cap set under its frozen rules.

    Covers: D-54"""
    _replay(entry, cap_rules())
