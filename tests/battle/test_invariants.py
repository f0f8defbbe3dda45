"""Invariants of the battle engine over random legal boards.

Boards come from `rune_env.rules.sampling.random_board` with seeded numpy generators, rounds
1..12, so a failure is reproducible from its seed and index (printed in the message). The fast
run plays a few hundred traced battles (the file stays under ~5 s: a traced battle costs about
10 ms); the `heavy` test (`pytest --heavy`) adds a run over thousands more boards.

Checked for every battle (bounds are computed from the rules config and the boards, never
from the engine's own set-up):
- every traced HP lies in (0, max HP]; only the deciding event of a knockout may show the loser
  at or below the death threshold (the trace shows HP after the hit, overkill included), and
  the result clamps it to 0; barriers are never negative; event times never go back; t <= 60 s;
- max HP = board max_hp or base + per round x (round - 1), times the hp_x modifiers (D-9);
- the seal count (seals - unseals, D-32), replayed event by event, never exceeds the cap
  floor(n / divisor) and ends equal to the result's `seals`; a seal or ward use always hits a
  rune of the outermost ring that still has unsealed runes (D-31);
- casts <= turns; `casts` equals the traced casts that are neither copies nor repeats;
- turns agree with the interval (D-6, D-6a): with no storm delay on a side, exactly
  floor(T / interval) turns (side 1 one fewer when side 0's turn at that very millisecond
  ended the battle); with storm delays, between floor((T - delays) / interval) - 1 and
  floor(T / interval); a side without casting runes has no turns;
- a winner only with reason knockout (the loser at or below the death threshold) or timeout (the higher HP ratio; a draw
  only at a timeout with ratios within the tolerance, D-1);
- no rune is created or lost: replaying the seal, unseal and reserve events, the runes on the
  board plus those reserves replaced equal the runes at the start plus the hand runes used;
  each reserve takes a just-sealed cell, from a distinct hand slot holding that kind and grade,
  of the sealed rune's kind unless reserves may be of any kind (tree core, D-33);
- a scapegoat doll absorbs at most its uses (D-31).
Determinism: the same boards give an identical result and trace, and tracing changes nothing.
Symmetry: the order of events inside a millisecond (D-8) favours side 0, so two boards swapped
give exactly mirrored results only when one side never acts. That case is checked exactly
against a passive board (supports only, no turns): battle(A, P) mirrors battle(P, A) event by
event. For two identical boards (the swapped battle is the same call) the checks are those of
`test_identical_boards_in_both_seats`.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import FROZEN_RULES, frozen_rules

from rune_env.battle import battle
from rune_env.rules.config import CASTING_KINDS
from rune_env.rules.geometry import geometry
from rune_env.rules.sampling import random_board

# Under a mutated rules file (scripts/mutation_check.py) the invariants still must hold, but the
# sample's variety is not asserted: it would catch mutations wholesale, not by a worked value.
MUTATED = Path(os.environ.get("RUNE_TEST_RULES", FROZEN_RULES)).resolve() != FROZEN_RULES.resolve()


# -- independent set-up of one side ---------------------------------------------------------------
def _mods(b, rules):
    spec = rules.spec
    out = []
    if b.core is not None:
        out.append(spec.cores[b.core])
    out += [spec.boss_rules[x] for x in b.boss_rules]
    out += [spec.relics[x] for x in b.relics]
    return out


def _ms(seconds: float) -> int:
    # D-6a: whole milliseconds, rounded half up
    return int(math.floor(seconds * 1000.0 + 0.5 + 1e-9))


class Side:
    def __init__(self, b, rules):
        spec = rules.spec
        mods = _mods(b, rules)
        ix = 1.0
        hx = 1.0
        for m in mods:
            ix *= m.interval_x
            hx *= m.hp_x
        self.interval = _ms(spec.battle.base_interval_s * ix)
        base = b.max_hp if b.max_hp is not None else (
            spec.battle.base_hp + spec.battle.hp_per_round * (b.round - 1))
        self.max_hp = base * hx
        divisors = [m.seal_cap_divisor for m in mods if m.seal_cap_divisor is not None]
        divisor = max(divisors) if divisors else spec.erosion.seal_cap_divisor
        self.cap = len(b.runes) // divisor
        self.has_turns = any(k in CASTING_KINDS for k, _ in b.runes.values())
        self.any_kind = any(m.reserve_any_kind for m in mods)
        self.doll_uses = sum(spec.artifacts[a].absorbs for a in b.artifacts.values())


# -- the invariants of one traced battle ----------------------------------------------------------
def check_battle(b0, b1, r, rules, where: str) -> None:
    """Every invariant of one traced battle `r` of b0 against b1 (`where` names it in failures)."""
    sides = [Side(b0, rules), Side(b1, rules)]
    assert r.events is not None, where
    _check_outcome(r, sides, rules.spec, where)
    _check_event_bounds(r, rules.spec, where)
    _check_seal_replay(r, [b0, b1], sides, geometry(rules.radius), where)
    _check_casts_and_turns(r, sides, where)


def _check_outcome(r, sides, spec, where: str) -> None:
    """The result's shape, and its winner from the reason (knockout or timeout, D-1, D-10)."""
    death = spec.battle.death_threshold
    duration = spec.battle.duration_s
    ev = r.events
    assert r.reason in ("knockout", "timeout"), where
    assert r.max_hp[0] == pytest.approx(sides[0].max_hp, rel=1e-12), where
    assert r.max_hp[1] == pytest.approx(sides[1].max_hp, rel=1e-12), where
    assert 0.0 <= r.time <= duration, where
    for s in (0, 1):
        assert 0.0 <= r.hp[s] <= r.max_hp[s], where
        assert 0 <= r.casts[s] <= r.turns[s], where
    if r.reason == "knockout":
        assert r.winner in (0, 1), where
        loser = 1 - r.winner
        # The loser is down at HP <= the death threshold (D-10); the result clamps at 0 (RULES
        # section 11: max(0, hp)), so float dust such as 7e-15 may remain: the engine's reading.
        assert 0.0 <= r.hp[loser] <= death, where
        assert r.hp[r.winner] > death, where
        assert ev and ev[-1]["type"] in ("hit", "reflect"), where
        assert ev[-1]["t"] == r.time, where
        assert ev[-1]["hp"][loser] <= death, where
        assert ev[-1]["hp"][r.winner] > death, where
    else:
        assert r.time == duration, where
        r0, r1 = r.hp[0] / r.max_hp[0], r.hp[1] / r.max_hp[1]
        if abs(r0 - r1) <= spec.battle.draw_tolerance:
            assert r.winner is None, where
        else:
            assert r.winner == (0 if r0 > r1 else 1), where


def _check_event_bounds(r, spec, where: str) -> None:
    """Every event's HP in (death threshold, max HP] (but the deciding hit's loser), barriers not
    negative, times never going back."""
    death = spec.battle.death_threshold
    duration = spec.battle.duration_s
    ev = r.events
    last_t = 0.0
    for i, e in enumerate(ev):
        assert last_t <= e["t"] <= duration, (where, i, e)
        last_t = e["t"]
        final = r.reason == "knockout" and i == len(ev) - 1
        for s in (0, 1):
            hp = e["hp"][s]
            assert hp <= r.max_hp[s] * (1 + 1e-12), (where, i, e)
            if not (final and s == 1 - r.winner):
                assert hp > death, (where, i, e)
            assert e["barrier"][s] >= 0.0, (where, i, e)


def _check_seal_replay(r, boards, sides, geo, where: str) -> None:
    """Seals, wards, reserves and dolls replayed event by event: the seal cap (D-32), the
    outermost ring first (D-31), reserves from the hand (D-33), no rune created or lost."""
    ev = r.events
    occ = [dict(b.runes) for b in boards]
    sealed = [set(), set()]
    count = [0, 0]
    hand = [dict(enumerate(b.hand)) for b in boards]
    used: list[list] = [[], []]
    replaced: list[list] = [[], []]
    dolls = [0, 0]
    just_sealed: list = [None, None]
    for i, e in enumerate(ev):
        s, typ = e["side"], e["type"]
        cell = geo.parse(e["cell"]) if e["cell"] is not None else None
        if typ in ("seal", "ward", "seal_capped"):
            assert cell in occ[s] and cell not in sealed[s], (where, i, e)
            live_rings = [geo.ring[c] for c in occ[s] if c not in sealed[s]]
            assert geo.ring[cell] == max(live_rings), (where, i, e)
        if typ == "seal":
            sealed[s].add(cell)
            count[s] += 1
            assert count[s] <= sides[s].cap, (where, i, e, "seal cap")
            just_sealed[s] = cell
            continue
        if typ == "seal_capped":
            assert count[s] >= sides[s].cap, (where, i, e)
        if typ == "unseal":
            assert cell in sealed[s], (where, i, e)
            sealed[s].remove(cell)
            count[s] -= 1
            assert count[s] >= 0, (where, i, e)
        if typ == "reserve":
            assert just_sealed[s] == cell, (where, i, e, "a reserve takes the cell just sealed")
            slot = e["slot"]
            assert hand[s].get(slot) == (e["kind"], e["grade"]), (where, i, e)
            old = occ[s][cell]
            assert sides[s].any_kind or old[0] == e["kind"], (where, i, e)
            del hand[s][slot]
            used[s].append((e["kind"], e["grade"]))
            replaced[s].append(old)
            occ[s][cell] = (e["kind"], e["grade"])
            sealed[s].remove(cell)      # the reserve enters unsealed; the seal still counts
        if typ == "doll":
            dolls[s] += 1
        just_sealed[s] = None
    for s in (0, 1):
        assert count[s] == r.seals[s], where
        assert dolls[s] <= sides[s].doll_uses, where
        assert set(occ[s]) == set(boards[s].runes), where          # no cell gained or lost
        assert Counter(occ[s].values()) + Counter(replaced[s]) == \
            Counter(boards[s].runes.values()) + Counter(used[s]), where


def _check_casts_and_turns(r, sides, where: str) -> None:
    """Casts counted as the trace shows them; turns as the interval gives them (D-6, D-6a), a
    storm delay allowing fewer."""
    ev = r.events
    casts = [0, 0]
    storm = [0, 0]
    for e in ev:
        if e["type"] == "cast" and "copy_of" not in e and not e.get("repeat"):
            casts[e["side"]] += 1
        if e["type"] == "storm_delay":
            storm[e["side"]] += e["value"]
    assert tuple(casts) == r.casts, where
    t_ms = round(r.time * 1000)
    mover = None
    if r.reason == "knockout":
        mover = [e for e in ev if e["type"] == "cast"][-1]["side"]
    for s in (0, 1):
        side = sides[s]
        if not side.has_turns:
            assert r.turns[s] == 0 and r.casts[s] == 0, where
            continue
        upper = t_ms // side.interval
        if s == 1 and mover == 0 and t_ms % side.interval == 0 and storm[1] == 0:
            upper -= 1      # side 0's turn at this millisecond ended it before side 1's
        if storm[s] == 0:
            assert r.turns[s] == upper, (where, s, r.turns, side.interval)
        else:
            assert max(0, (t_ms - storm[s]) // side.interval - 1) <= r.turns[s] <= upper, \
                (where, s, r.turns, side.interval, storm[s])


def _pairs(seed: int, n: int, rules):
    rng = np.random.default_rng(seed)
    for i in range(n):
        rnd = 1 + i % 12
        yield i, rnd, random_board(rng, rnd, rules), random_board(rng, rnd, rules)


def _sweep(seed: int, n: int) -> Counter:
    rules = frozen_rules()
    seen: Counter = Counter()
    for i, rnd, a, b in _pairs(seed, n, rules):
        r = battle(a, b, rules, trace=True)
        check_battle(a, b, r, rules, f"seed {seed} pair {i} round {rnd}")
        seen[(r.reason, r.winner)] += 1
        seen["events"] += len(r.events)
        for e in r.events:
            seen["ev:" + e["type"]] += 1
    return seen


def test_invariants_over_random_boards():
    """Covers: D-1, D-6, D-6a, D-9, D-10, D-31, D-32, D-33, erosion, reserve"""
    seen = _sweep(seed=20240601, n=150)
    if MUTATED:
        return
    # the sample is not degenerate: it reaches knockouts both ways, timeouts, seals, reserves
    assert seen[("knockout", 0)] > 0 and seen[("knockout", 1)] > 0
    assert seen[("timeout", None)] + seen[("timeout", 0)] + seen[("timeout", 1)] > 0
    for typ in ("seal", "unseal", "seal_capped", "ward", "reserve", "reflect", "storm_delay",
                "freeze", "curse", "doll"):
        assert seen["ev:" + typ] > 0, typ


def test_same_boards_same_result_and_trace():
    """Determinism: a battle twice gives the same result and trace; tracing changes nothing.

    Covers: D-8
    """
    rules = frozen_rules()
    for i, rnd, a, b in _pairs(seed=7, n=16, rules=rules):
        r1 = battle(a, b, rules, trace=True)
        r2 = battle(a, b, rules, trace=True)
        r3 = battle(a, b, rules, trace=False)
        assert r1.to_json() == r2.to_json(), (i, rnd)
        assert r1.trace_hash() == r2.trace_hash(), (i, rnd)
        assert r3.events is None
        for field in ("winner", "time", "hp", "max_hp", "casts", "turns", "seals", "reason"):
            assert getattr(r3, field) == getattr(r1, field), (i, rnd, field)


def _flip_event(e: dict) -> dict:
    out = dict(e)
    out["side"] = 1 - e["side"]
    if "by" in e:
        out["by"] = 1 - e["by"]
    out["hp"] = [e["hp"][1], e["hp"][0]]
    out["barrier"] = [e["barrier"][1], e["barrier"][0]]
    return out


def _passive(b):
    """The same board with its casting runes removed (and its hand kept): it never acts."""
    return b.replace(runes={c: r for c, r in b.runes.items() if r[0] not in CASTING_KINDS})


def test_swapping_seats_mirrors_the_result_against_a_passive_side():
    """With one side that never acts, D-8's side-0-first order never decides anything, so
    battle(P, A) is battle(A, P) mirrored: winner, HP, casts, turns, seals, and every event.

    Covers: D-8, D-6
    """
    rules = frozen_rules()
    rng = np.random.default_rng(99)
    checked = 0
    for i in range(48):
        rnd = 1 + i % 12
        a = random_board(rng, rnd, rules)
        p = _passive(random_board(rng, rnd, rules))
        r1 = battle(a, p, rules, trace=True)
        r2 = battle(p, a, rules, trace=True)
        flip = {0: 1, 1: 0, None: None}
        assert r2.winner == flip[r1.winner], i
        assert r2.reason == r1.reason and r2.time == r1.time, i
        for f in ("hp", "max_hp", "casts", "turns", "seals"):
            assert getattr(r2, f) == getattr(r1, f)[::-1], (i, f)
        assert r2.events == [_flip_event(e) for e in r1.events], i
        assert r1.turns[1] == 0
        checked += 1
    assert checked == 48


def test_identical_boards_in_both_seats():
    """Identical boards (the symmetric case). Swapping the seats is the same call, and D-8 lets
    side 0 act first at every shared millisecond, so no mirror can be asked of the outcome.
    What must hold: the invariants above; a board without turns against itself is a draw at full
    HP with nothing traced; both sides take equally many turns at a timeout without storms (same
    interval); and each side's first turn, when nothing of the opponent has touched it yet (no
    seal, freeze or storm before it), casts the same rune at the same power.

    Covers: D-1, D-6, D-8
    """
    rules = frozen_rules()
    rng = np.random.default_rng(4242)
    compared = 0
    for i in range(40):
        rnd = 1 + i % 12
        a = random_board(rng, rnd, rules)
        r = battle(a, a, rules, trace=True)
        check_battle(a, a, r, rules, f"identical {i}")
        if not any(k in CASTING_KINDS for k, _ in a.runes.values()):
            assert r.winner is None and r.reason == "timeout"
            assert r.hp == r.max_hp and r.events == []
            continue
        if r.reason == "timeout" and not any(e["type"] == "storm_delay" for e in r.events):
            assert r.turns[0] == r.turns[1]
        own = [e for e in r.events if e["type"] == "cast" and not e.get("repeat")
               and "copy_of" not in e]
        c0 = [e for e in own if e["side"] == 0]
        c1 = [e for e in own if e["side"] == 1]
        if not c0 or not c1 or c1[0]["t"] != c0[0]["t"]:
            continue
        c0, c1 = c0[0], c1[0]
        touched = any(e["type"] in ("seal", "freeze", "storm_delay") and e["side"] == 1
                      and e["t"] <= c1["t"] for e in r.events)
        if not touched:
            assert (c1["cell"], c1["kind"]) == (c0["cell"], c0["kind"]), i
            assert c1["value"] == c0["value"], i
            compared += 1
    assert MUTATED or compared > 10


@pytest.mark.outside_mutation_check
@pytest.mark.heavy
def test_invariants_over_many_random_boards_heavy():
    """The same invariants over 3000 pairs (6000 boards).

    Covers: D-1, D-6, D-6a, D-9, D-10, D-31, D-32, D-33, erosion, reserve
    """
    seen = _sweep(seed=1, n=3000)
    assert sum(v for k, v in seen.items() if isinstance(k, tuple)) == 3000
