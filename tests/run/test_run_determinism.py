"""Determinism and persistence of runs: same seed and actions give the identical run; a saved run
resumes exactly; a run record replays exactly; corrupt saves, records and pool files are refused
with clear errors; pool files are written atomically.

Battles here are real, against small fixed stub opponents (quick), so "the same battle results"
means the engine's results, compared whole.
"""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
from conftest import board, frozen_rules

import rune_env.files as files_module
from rune_env.run.actions import action_table
from rune_env.run.loop import IllegalAction, apply, legal_actions, new_run
from rune_env.run.opponents import (Pool, PoolError, PoolOpponents, load_pool, opponent_budget,
                                    save_pool)
from rune_env.run.ranks import rank_effects
from rune_env.run.record import RecordError, RunRecord
from rune_env.run.state import BattleSummary, PendingChoice, RunState, RunStateError

WEAK = board({"1:0": ("water", 1), "2:3": ("earth", 1)})      # never attacks
MIDDLE = board({"1:0": ("fire", 2), "1:3": ("water", 1), "2:0": ("wind", 1)})


def opponents(rnd, effects, boss, rng):
    """A stub source: a middling board every 4th round, a passive one otherwise (so that runs
    last: random boards win or draw against it)."""
    return MIDDLE if rnd % 4 == 0 else WEAK


def random_actions(state: RunState, n: int, seed: int, ready_bias: float = 0.08) -> list[int]:
    """Play up to `n` random legal actions on `state` (ready with probability `ready_bias`, so
    that rounds pass), returning the action ids taken."""
    rng = np.random.default_rng(seed)
    ready = action_table(state.rules).id("ready")
    taken = []
    while len(taken) < n and not state.over:
        legal = legal_actions(state)
        if ready in legal and rng.random() < ready_bias:
            a = ready
        else:
            a = legal[int(rng.integers(len(legal)))]
        apply(state, a, opponents)
        taken.append(a)
    return taken


def replay(seed, rules, actions, **kw) -> RunState:
    s = new_run(seed, rules, **kw)
    for a in actions:
        apply(s, a, opponents)
    return s


# -- same seed, same actions ----------------------------------------------------------------------
@pytest.mark.parametrize("seed,kw", [(1, {"core": "sun"}), (7, {"rank": "journeyman"}),
                                     (12, {"rank": "sage", "core": "tree"})])
def test_same_seed_and_actions_same_run(rules, seed, kw):
    """A run is a function of (seed, rules, settings, actions): replaying the actions on a fresh
    run gives an identical `dumps()` (battles, offers, rewards, relics, generator state)."""
    a = new_run(seed, rules, **kw)
    actions = random_actions(a, 250, seed)
    assert len(a.battles) >= 5                       # rounds were played
    b = replay(seed, rules, actions, **kw)
    assert b.dumps() == a.dumps()
    assert b.battles == a.battles


def test_different_seeds_differ(rules):
    """The seed drives the generator: different seeds give different shops or boss schedules."""
    dumps = {new_run(s, rules, core="moon").dumps() for s in range(5)}
    assert len(dumps) == 5
    offers = {(tuple(new_run(s, rules, core="moon").shop_runes)) for s in range(5)}
    assert len(offers) > 1


def test_json_round_trip_is_exact(rules):
    """to_json / from_json keep everything: loads(dumps()) dumps the same text."""
    s = new_run(3, rules, rank="mentor")
    random_actions(s, 150, 3)
    text = s.dumps()
    assert RunState.loads(text, rules).dumps() == text
    assert RunState.from_json(json.loads(text), rules).dumps() == text


# -- save, load, continue -------------------------------------------------------------------------
@pytest.mark.parametrize("cut", [0, 1, 37, 90])
def test_save_load_continue_equals_uninterrupted(rules, cut):
    """A run saved after `cut` actions, loaded and continued with the same actions, equals the run
    played without interruption: the same later offers and the same battle results."""
    seed = 21
    full = new_run(seed, rules)
    actions = random_actions(full, 180, seed)
    assert len(full.battles) >= 4
    part = replay(seed, rules, actions[:cut])
    resumed = RunState.loads(part.dumps(), rules)
    offers_seen = []
    for a in actions[cut:]:
        apply(resumed, a, opponents)
        offers_seen.append((tuple(resumed.shop_runes), tuple(resumed.shop_artifacts)))
    assert resumed.dumps() == full.dumps()
    assert resumed.battles == full.battles
    # and the next draws agree too: a reroll after both gives the same offers
    if not full.over:
        full.mana = resumed.mana = 5
        r = action_table(rules).id("reroll")
        if full.pending is None:
            apply(full, r, opponents)
            apply(resumed, r, opponents)
            assert resumed.shop_runes == full.shop_runes
            assert resumed.shop_artifacts == full.shop_artifacts


def test_saved_pending_choice_and_battle_summaries_keep_their_json_form(rules):
    """The saved form of a pending choice (with a queue) and of a battle summary is plain JSON:
    {"kind", "options", "queue": [{"kind", "options"}, ...]}, and the summary's keys, with
    lamp_saved only when true; both load back equal."""
    s = new_run(2, rules, core="moon")
    apply(s, action_table(rules).id("ready"), opponents)
    s.pending = PendingChoice("relic", ["big_bag", "bulwark"], [PendingChoice("reward", ["mana"])])
    data = json.loads(s.dumps())
    assert data["pending"] == {"kind": "relic", "options": ["big_bag", "bulwark"],
                               "queue": [{"kind": "reward", "options": ["mana"]}]}
    assert set(data["battles"][0]) == {"round", "outcome", "seat", "time", "hp", "max_hp",
                                       "casts", "seals", "boss_rules", "core", "kinds", "board",
                                       "opponent"}
    t = RunState.from_json(data, rules)
    assert t.pending == s.pending and t.battles == s.battles and t.dumps() == s.dumps()
    saved = BattleSummary.from_json({**data["battles"][0], "lamp_saved": True})
    assert saved.lamp_saved and saved.to_json()["lamp_saved"] is True


def test_save_with_pending_choice_resumes(rules):
    """A run saved while a reward choice is pending resumes with the same options and goes on
    identically (the relic and reward queue included)."""
    s = new_run(2, rules, core="moon")
    ready = action_table(rules).id("ready")
    for _ in range(3):
        apply(s, ready, opponents)
    assert s.round == 4 and s.pending.kind == "reward"
    t = RunState.loads(s.dumps(), rules)
    assert t.pending == s.pending
    for x in (s, t):
        apply(x, action_table(rules).id("choose_reward", 1), opponents)
        apply(x, ready, opponents)
    assert t.dumps() == s.dumps()


def test_clone_continues_identically_and_independently(rules):
    """clone() copies the generator: the clone plays on exactly as the original would, and
    changing the clone leaves the original alone."""
    s = new_run(8, rules, core="star")
    random_actions(s, 60, 8)
    before = s.dumps()
    c = s.clone()
    assert c.dumps() == before
    more = random_actions(c, 80, 99)
    assert s.dumps() == before                     # the original is untouched
    for a in more:
        apply(s, a, opponents)
    assert s.dumps() == c.dumps()


# -- run records ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"core": "eclipse", "rank": "journeyman"},
                                {"unlocked": ["fire", "wind", "water"]}])
def test_record_replay_rebuilds_the_run(rules, tmp_path, kw):
    """RunRecord.of(state) holds seed, rules hash, settings and actions; replaying it (also after
    a save and load) rebuilds the identical run."""
    s = new_run(5, rules, **kw)
    random_actions(s, 200, 5)
    rec = RunRecord.of(s, core=kw.get("core"), unlocked=kw.get("unlocked"))
    assert rec.actions == s.actions_taken and rec.seed == 5 and rec.rules_hash == rules.hash
    assert rec.replay(rules, opponents).dumps() == s.dumps()
    path = tmp_path / "run.json"
    rec.save(path)
    loaded = RunRecord.load(path)
    assert loaded.to_json() == rec.to_json()
    assert loaded.replay(rules, opponents).dumps() == s.dumps()


def test_record_refuses_other_rules(rules):
    """A record made under other rules is refused (RecordError naming both hashes)."""
    rec = RunRecord(seed=1, rules_hash="0123456789abcdef", core="moon", actions=[])
    with pytest.raises(RecordError, match="0123456789abcdef"):
        rec.replay(rules, opponents)


@pytest.mark.parametrize("text,why", [
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": 0, "core": nul', "truncated"),
    ('[1, 2, 3]', "not an object"),
    ('{"version": 2, "seed": 1, "rules_hash": "x", "rank": 0, "core": null, "unlocked": null, '
     '"actions": []}', "version"),
    ('{"version": 1, "seed": 1, "rank": 0, "core": null, "unlocked": null, "actions": []}',
     "missing key"),
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": 0, "core": null, "unlocked": null, '
     '"actions": ["ready"]}', "bad action"),
    # each field its own type: these were read as rank 1, rank 0, seed 5, actions [0, 1] and
    # the kinds f, i, r, e (red team)
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": true, "core": null, "unlocked": null, '
     '"actions": []}', "rank must be a whole number"),
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": 0.9, "core": null, "unlocked": null, '
     '"actions": []}', "rank must be a whole number"),
    ('{"version": 1, "seed": "5", "rules_hash": "x", "rank": 0, "core": null, "unlocked": null, '
     '"actions": []}', "seed must be a whole number"),
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": 0, "core": null, "unlocked": null, '
     '"actions": [0.5, true]}', "actions must be a list of whole numbers"),
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": 0, "core": null, "unlocked": "fire", '
     '"actions": []}', "unlocked must be a list of rune kinds"),
    ('{"version": 1, "seed": 1, "rules_hash": "x", "rank": 0, "core": ["moon"], "unlocked": null, '
     '"actions": []}', "core must be a core's name"),
    ('{"version": true, "seed": 1, "rules_hash": "x", "rank": 0, "core": null, "unlocked": null, '
     '"actions": []}', "version"),
])
def test_corrupt_record_file_refused(tmp_path, text, why):
    """A corrupt record file gives RecordError naming the file."""
    path = tmp_path / "rec.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match="rec.json") as caught:
        RunRecord.load(path)
    if " must be " in why:               # the field named, as the case says
        assert why in str(caught.value), str(caught.value)
    with pytest.raises(RecordError):
        RunRecord.load(tmp_path / "missing.json")


def test_record_with_illegal_action_refused(rules):
    """A record whose action list was tampered with (an action illegal at its point: here `ready`
    while the core choice is pending, and an id outside the table) is a corrupt record: its replay
    should fail with a RecordError saying which action, not a bare IllegalAction."""
    table = action_table(rules)
    s = new_run(4, rules)
    random_actions(s, 30, 4)
    for bad in (table.id("ready"), len(table) + 5):
        rec = RunRecord.of(s)
        rec.actions = [bad] + rec.actions          # `ready` before the core choice: illegal
        with pytest.raises(RecordError):
            rec.replay(rules, opponents)


# -- corrupt saved runs -----------------------------------------------------------------------------
def _saved(rules) -> dict:
    s = new_run(6, rules, core="moon")
    random_actions(s, 40, 6)
    s.board[0] = ("fire", 1)
    return s.to_json()


@pytest.mark.parametrize("edit,match", [
    (lambda d: d.update(version=99), "version"),
    (lambda d: d.update(rules_hash="feedfacefeedface"), "rules"),
    (lambda d: d.pop("mana"), "malformed"),
    (lambda d: d.update(mana="lots"), "malformed"),
    (lambda d: d["board"].update({"4:0": ["fire", 1]}), "malformed"),
    (lambda d: d.update(rng="not a generator state"), "malformed"),
    (lambda d: d["hand"].append("fire"), "malformed"),
])
def test_corrupt_saved_run_refused(rules, edit, match):
    """A saved run that cannot be resumed gives RunStateError with the problem named."""
    data = _saved(rules)
    edit(data)
    with pytest.raises(RunStateError, match=match):
        RunState.from_json(json.loads(json.dumps(data)), rules)


@pytest.mark.parametrize("edit", [
    lambda d: d["board"].update({"1:1": ["plasma", 1]}),      # no such rune kind
    lambda d: d["hand"].append(["fire", 7]),                  # grades are 1..3
    lambda d: d.update(core="comet"),                          # no such core
], ids=["unknown-kind", "grade-7", "unknown-core"])
def test_hand_edited_saved_run_with_impossible_content_refused(rules, edit):
    """A saved run edited into an impossible state (a rune kind, grade or core the rules do not
    have) is corrupt too: it should be refused on load with RunStateError, not resumed and left
    to crash later in a battle."""
    data = _saved(rules)
    edit(data)
    with pytest.raises(RunStateError):
        RunState.from_json(data, rules)


def test_truncated_saved_run_refused(rules):
    """A truncated save file: RunStateError "not valid JSON"; a JSON array: "a JSON object"."""
    text = new_run(1, rules, core="moon").dumps()
    with pytest.raises(RunStateError, match="not valid JSON"):
        RunState.loads(text[: len(text) // 2], rules)
    with pytest.raises(RunStateError, match="JSON object"):
        RunState.loads("[1, 2]", rules)


# -- pool files -------------------------------------------------------------------------------------
def _ghost(b, rnd, agent="greedy", seed=0):
    # a ghost's board is of the round it is filed under (load_pool refuses another round)
    return {"board": b.replace(round=rnd).to_json(frozen_rules()), "agent": agent, "seed": seed,
            "round": rnd,
            "rank": "apprentice"}


def _pool(rules) -> Pool:
    return Pool(rules_hash=rules.hash, rank="apprentice",
                rounds={1: [_ghost(WEAK, 1), _ghost(MIDDLE, 1, seed=1)],
                        3: [_ghost(board({"1:0": ("ice", 1), "2:4": ("earth", 2)},
                                         core="star", relics=["bulwark"]), 3)]},
                provenance={"made_by": "test", "note": "round trip"})


def test_pool_round_trip(rules, tmp_path):
    """save_pool / load_pool keep the pool exactly, and its boards parse back to the originals."""
    pool = _pool(rules)
    path = tmp_path / "pool.json"
    save_pool(pool, path)
    loaded = load_pool(path, rules)
    assert loaded.to_json() == pool.to_json()
    assert loaded.boards(1, rules) == [WEAK, MIDDLE]
    assert loaded.boards(2, rules) == []
    assert [b.relics for b in loaded.boards(3, rules)] == [("bulwark",)]
    assert [p.name for p in tmp_path.iterdir()] == ["pool.json"]   # no temp file left


def test_pool_opponents_use_the_pool_and_fall_back(rules, tmp_path):
    """PoolOpponents fields ghosts of the round; a round without ghosts falls back; runs against a
    pool are deterministic too."""
    path = tmp_path / "pool.json"
    save_pool(_pool(rules), path)
    pool = load_pool(path, rules)
    fallback_calls = []

    def fallback(rnd, effects, boss, rng):
        fallback_calls.append(rnd)
        return WEAK

    src = PoolOpponents(pool, rules, fallback=fallback)
    e = rank_effects(rules, 0)
    got = [src(1, e, [], np.random.default_rng(i)) for i in range(20)]
    assert all(b in (WEAK, MIDDLE) for b in got)
    assert WEAK in got and MIDDLE in got
    assert fallback_calls == []
    assert src(2, e, [], np.random.default_rng(0)) == WEAK and fallback_calls == [2]
    runs = []
    for _ in range(2):
        s = new_run(9, rules, core="moon")
        src = PoolOpponents(load_pool(path, rules), rules, fallback=fallback)
        for _ in range(3):
            apply(s, action_table(rules).id("ready"), src)
        runs.append(s.dumps())
    assert runs[0] == runs[1]


def test_truncated_pool_refused(rules, tmp_path):
    """A truncated pool file is refused with PoolError (not valid JSON)."""
    path = tmp_path / "pool.json"
    save_pool(_pool(rules), path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) * 2 // 3], encoding="utf-8")
    with pytest.raises(PoolError, match="not valid JSON"):
        load_pool(path, rules)
    with pytest.raises(PoolError, match="cannot read"):
        load_pool(tmp_path / "nowhere.json", rules)


@pytest.mark.parametrize("edit,match", [
    (lambda d: d.pop("format"), "not a rune-env pool file"),
    (lambda d: d.update(version=7), "pool version 7"),
    (lambda d: d.pop("rounds"), "missing 'rounds'"),
    (lambda d: d.update(rounds=[1, 2]), "rounds"),
    (lambda d: d["rounds"].update({"zero": []}), "not a round number"),
    (lambda d: d["rounds"].update({"0": []}), "not a round number"),
    (lambda d: d["rounds"].update({"2": {"board": {}}}), "list of ghosts"),
    (lambda d: d["rounds"]["1"].append({"agent": "x"}), "needs a \"board\""),
    (lambda d: d["rounds"]["1"][0]["board"]["runes"].update({"1:2": ["plasma", 1]}), "plasma"),
    (lambda d: d["rounds"]["1"][0]["board"]["runes"].update({"3:0": ["fire", 1]}), "3:0"),
    (lambda d: d["rounds"]["1"][1]["board"]["runes"].update({"1:5": ["fire", 4]}), "grade"),
])
def test_hand_broken_pool_refused(rules, tmp_path, edit, match):
    """A pool edited by hand into something invalid is refused with PoolError naming the problem
    (a bad ghost board: unknown kind, a closed cell, a grade outside 1-3)."""
    data = _pool(rules).to_json()
    data = json.loads(json.dumps(data))
    edit(data)
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PoolError, match=match):
        load_pool(path, rules)


def test_pool_hash_mismatch_warns_and_strict_refuses(rules, tmp_path):
    """A pool made under other rules loads with a warning; with strict=True it is refused."""
    pool = _pool(rules)
    pool.rules_hash = "00000000deadbeef"
    path = tmp_path / "pool.json"
    save_pool(pool, path)
    with pytest.warns(UserWarning, match="00000000deadbeef"):
        loaded = load_pool(path, rules)
    assert loaded.boards(1, rules) == [WEAK, MIDDLE]
    with pytest.raises(PoolError, match="00000000deadbeef"):
        load_pool(path, rules, strict=True)
    # the matching hash loads silently
    save_pool(_pool(rules), path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_pool(path, rules, strict=True)


def test_interrupted_pool_write_keeps_the_previous_file(rules, tmp_path, monkeypatch):
    """Pool files are written atomically: a write that fails midway (the file's write raising
    after half of the text went out) leaves the previous file whole and no temp file behind."""
    path = tmp_path / "pool.json"
    first = _pool(rules)
    save_pool(first, path)
    before = path.read_bytes()
    real_fdopen = files_module.os.fdopen

    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            raise OSError("disk full (simulated)")

    monkeypatch.setattr(files_module.os, "fdopen", lambda *a, **k: HalfWriter(real_fdopen(*a, **k)))
    second = _pool(rules)
    second.rounds[5] = [_ghost(WEAK, 5)]
    with pytest.raises(OSError, match="simulated"):
        save_pool(second, path)
    monkeypatch.setattr(files_module.os, "fdopen", real_fdopen)
    assert path.read_bytes() == before
    assert load_pool(path, rules).to_json() == first.to_json()
    assert sorted(os.listdir(tmp_path)) == ["pool.json"]
    # and a write that goes through replaces it
    save_pool(second, path)
    assert sorted(load_pool(path, rules).rounds) == [1, 3, 5]


def test_opponent_budget_is_deterministic_in_round_and_rank(rules):
    """D-44 budget depends on round and rank only (mentor x1.15): round 4 = 10 + 10 x 3 = 40,
    mentor floor(40 x 1.15 = 46) = 46."""
    assert opponent_budget(rules, 4, rank_effects(rules, "apprentice")) == 40
    assert opponent_budget(rules, 4, rank_effects(rules, "mentor")) == 46


def test_illegal_replay_action_is_still_an_error(rules):
    """Replaying an action that is illegal at its point never passes silently."""
    s = new_run(4, rules)
    with pytest.raises((IllegalAction, RecordError)):
        RunRecord(seed=4, rules_hash=rules.hash, actions=[action_table(rules).id("ready")]) \
            .replay(rules, opponents)
    assert s.round == 1
