"""Hostile demonstration files (.npz, `agents.evaluation.demos.load_demos`): each is refused when
loaded as one DemosError line naming the file and the member, before anything is allocated from
what the file claims: an .npy header saying (10**11, 1031), a `meta` nested 100,000 deep, a
pickled member, observations outside [0, 1], mask bits past the last action, run seeds that are
not training run seeds. `scripts/collect_demos.py --check` says it in one `error:` line.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.evaluation.demos import (KEYS, MAX_META_BYTES, Demos, DemosError, demo_run_seed,
                                     load_demos, save_demos)
from rune_env.envs.run_env import TRAINING_SEED_LIMIT

REPO = Path(__file__).resolve().parents[2]
N, SIZE, ACTIONS = 6, 5, 11           # 11 actions: 2 mask bytes, the last with 5 padding bits


def demos() -> Demos:
    rng = np.random.default_rng(0)
    legal = rng.random((N, ACTIONS)) < 0.5
    actions = np.array([int(np.flatnonzero(row)[0]) if row.any() else 0 for row in legal],
                       np.int32)
    legal[np.arange(N), actions] = True
    meta = {"format": 1, "agent": "greedy", "seed": 2, "runs": 2, "rules_hash": "x",
            "obs_size": SIZE, "actions": ACTIONS, "steps": N}
    return Demos(obs=rng.random((N, SIZE)).astype(np.float32),
                 masks=np.packbits(legal, axis=1), actions=actions,
                 rewards=rng.normal(size=N).astype(np.float32),
                 run_seeds=np.repeat([demo_run_seed(2, 0), demo_run_seed(2, 1)], N // 2),
                 meta=meta)


def members(d: Demos) -> dict[str, bytes]:
    """The .npy bytes of each member of `d`'s file."""
    out = {}
    meta = np.frombuffer(json.dumps(d.meta).encode(), np.uint8)
    for k in KEYS:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, meta if k == "meta" else getattr(d, k), allow_pickle=False)
        out[k] = buf.getvalue()
    return out


def npz(path: Path, parts: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for k, data in parts.items():
            z.writestr(f"{k}.npy", data)
    return path


def header(descr: str, shape: tuple, fortran: bool = False) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": fortran,
                                               "shape": shape})
    return buf.getvalue()


def refused(path: Path) -> str:
    with pytest.raises(DemosError) as info:
        load_demos(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    assert len(message) < 300, message
    return message


def test_a_sound_file_loads_and_round_trips(tmp_path):
    d = demos()
    save_demos(d, tmp_path / "d.npz")
    back = load_demos(tmp_path / "d.npz")
    for k in ("obs", "masks", "actions", "rewards", "run_seeds"):
        assert np.array_equal(getattr(back, k), getattr(d, k)) and getattr(back, k).dtype == KEYS[k]
    assert back.meta == d.meta
    back.obs[0, 0] = 0.5        # writable arrays, as read_array gave
    # the hand-written members load the same (the helpers below build files as save_demos does)
    again = load_demos(npz(tmp_path / "e.npz", members(d)))
    assert np.array_equal(again.obs, d.obs) and again.meta == d.meta


def test_a_header_claiming_375_tib_is_refused_unread(tmp_path):
    parts = members(demos())
    parts["obs"] = header("<f4", (10**11, 1031)) + b"\0" * 64
    message = refused(npz(tmp_path / "huge.npz", parts))
    assert message.endswith("obs.npy: the header claims shape (100000000000, 1031) "
                            "(412,400,000,000,000 bytes), the member holds 64 bytes of data")


@pytest.mark.parametrize("key,descr,shape,expected", [
    ("obs", "<f4", (N * SIZE,), "obs.npy: shape (30,), expected 2 dimensions of sizes >= 0"),
    ("obs", "<f8", (N, SIZE), "obs.npy: not a demonstrations file (obs must be float32, <f4; got <f8)"),
    ("obs", ">f4", (N, SIZE), "obs.npy: not a demonstrations file (obs must be float32, <f4; got >f4)"),
    ("actions", "<i4", (N + 1,), "actions.npy: the header claims shape (7,) (28 bytes), the "
                                 "member holds 24 bytes of data"),
    ("masks", "|u1", (N, 1), "masks.npy: the header claims shape (6, 1) (6 bytes), the member "
                             "holds 12 bytes of data"),
    ("meta", "<f4", (4,), "meta.npy: not a demonstrations file (meta must be uint8, |u1; got <f4)"),
    ("run_seeds", "<i8", (-1,), "run_seeds.npy: shape (-1,), expected 1 dimension of sizes >= 0"),
])
def test_a_header_that_does_not_match_its_member_is_refused(tmp_path, key, descr, shape,
                                                             expected):
    d = demos()
    parts = members(d)
    data = getattr(d, key).tobytes() if key != "meta" else b"\0" * 16
    parts[key] = header(descr, shape) + data
    assert refused(npz(tmp_path / "h.npz", parts)).endswith(expected)


def test_a_pickled_member_is_refused(tmp_path):
    parts = members(demos())
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array([{"a": 1}] * N, dtype=object), allow_pickle=True)
    parts["actions"] = buf.getvalue()
    assert refused(npz(tmp_path / "p.npz", parts)).endswith(
        "actions.npy: not a demonstrations file (actions must be int32, <i4; got |O)")


def test_a_member_that_is_not_npy_is_refused(tmp_path):
    parts = members(demos())
    parts["rewards"] = b"PK\x03\x04 not an array"
    assert "rewards.npy: not an .npy array" in refused(npz(tmp_path / "n.npz", parts))


def test_meta_nested_100k_deep_is_one_line(tmp_path):
    parts = members(demos())
    text = "[" * 100_000 + "]" * 100_000
    meta = np.frombuffer(text.encode(), np.uint8)
    buf = io.BytesIO()
    np.lib.format.write_array(buf, meta)
    parts["meta"] = buf.getvalue()
    message = refused(npz(tmp_path / "deep.npz", parts))
    assert message.startswith(f"{tmp_path / 'deep.npz'}: meta.npy: JSON nested "), message
    assert "100000 deep" in message


def test_meta_too_large_is_refused_unread(tmp_path):
    parts = members(demos())
    parts["meta"] = header("|u1", (MAX_META_BYTES + 1,)) + b" " * (MAX_META_BYTES + 1)
    assert refused(npz(tmp_path / "big.npz", parts)).endswith(
        f"meta.npy: {MAX_META_BYTES + 1:,} bytes of metadata (at most {MAX_META_BYTES:,})")


@pytest.mark.parametrize("value", [1e30, -1.0, float("nan"), 1.0000001])
def test_observations_outside_0_1_are_refused(tmp_path, value):
    d = demos()
    d.obs[3, 2] = np.float32(value)
    save_demos(d, tmp_path / "o.npz")
    message = refused(tmp_path / "o.npz")
    assert message.endswith(f"obs.npy: observations are in [0, 1]; step 3 has "
                            f"{float(np.float32(value))!r} at 2")


def test_observations_at_the_bounds_load(tmp_path):
    d = demos()
    d.obs[0, :] = 0.0
    d.obs[1, :] = 1.0
    save_demos(d, tmp_path / "b.npz")
    assert load_demos(tmp_path / "b.npz").obs[1, 0] == 1.0


def test_mask_bytes_0xff_are_refused(tmp_path):
    d = demos()
    d.masks[4, :] = 0xFF
    save_demos(d, tmp_path / "m.npz")
    assert refused(tmp_path / "m.npz").endswith(
        "masks.npy: step 4's mask sets bits past action 10 (masks are 11 packed booleans)")


def test_an_illegal_action_is_still_named(tmp_path):
    d = demos()
    d.masks[2, :] = 0
    d.masks[2, 1] = 0b0010_0000      # action 10 only
    d.actions[2] = 3
    save_demos(d, tmp_path / "i.npz")
    assert refused(tmp_path / "i.npz").endswith("step 2's action 3 is illegal under its mask")


@pytest.mark.parametrize("seed", [-1, TRAINING_SEED_LIMIT, -2**63])
def test_run_seeds_outside_the_training_seeds_are_refused(tmp_path, seed):
    d = demos()
    d.run_seeds[5] = seed
    save_demos(d, tmp_path / "s.npz")
    assert refused(tmp_path / "s.npz").endswith(
        f"run_seeds.npy: step 5's run seed {seed} is not a training run seed "
        f"(0..{TRAINING_SEED_LIMIT - 1})")


def test_collect_demos_check_says_a_hostile_file_in_one_line(tmp_path):
    d = demos()
    # sized as the default env's (1031 observation values, 593 actions), so the file passes
    # --check's comparison with the env and meets the header check
    d.meta.update(obs_size=1031, actions=593)
    parts = members(d)
    parts["obs"] = header("<f4", (10**11, 1031)) + b"\0" * 64
    path = npz(tmp_path / "huge.npz", parts)
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "collect_demos.py"), "--check",
                        str(path)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"error: {path}: obs.npy: the header claims shape "
                               f"(100000000000, 1031)") and r.stderr.count("\n") == 1, r.stderr
