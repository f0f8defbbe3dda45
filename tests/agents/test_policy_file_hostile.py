"""Hostile and unusual exported-policy files, built in tmp_path from a shipped policy
(agents/policy/file.py): a valid file whose header length's low byte is a pickle's 0x80 (or whose
first bytes are "PK") loads and acts as the original; a NaN, infinite or huge (1e38) weight, a
network whose logits overflow at its first action, a provenance card that is not a card
(timesteps NaN, 10**40, -1 or "many", rules_hash a list, nested 100,000 deep, not an object) are
refused in one line naming the file; a duel policy is refused by scripts/expert_iteration.py
before its output folder exists."""
from __future__ import annotations

import json
import pickle
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents.evaluation.runs import training_step  # noqa: E402
from agents.policy import PolicyAgent, PolicyLoadError, load_policy  # noqa: E402
from agents.policy.file import (MAX_TIMESTEPS, PolicyFileError, looks_pickled,  # noqa: E402
                                looks_safetensors, read_card)

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "agents" / "models"
# the smallest shipped policy (all run policies are 965,890 bytes: the first by name of those)
SOURCE = min(sorted(MODELS.glob("*.pt")), key=lambda p: p.stat().st_size)


def _parts(data: bytes) -> tuple[dict, bytes]:
    """(JSON header, tensor bytes) of a safetensors file: 8 bytes of little-endian header
    length, the header, then the tensors' bytes at the header's data_offsets."""
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]), data[8 + length:]


def _padded(data: bytes, length: int) -> bytes:
    """The same file with its JSON header padded with spaces (as the safetensors format allows)
    to `length` bytes, and the 8-byte length rewritten."""
    (old,) = struct.unpack("<Q", data[:8])
    assert length >= old
    return struct.pack("<Q", length) + data[8:8 + old] + b" " * (length - old) + data[8 + old:]


def _one_line_error(exc: BaseException, *names: str) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    for name in names:
        assert name in text, (name, text)
    return text


def _play_actions(agents: list[PolicyAgent], run_seed: int) -> list[list[int]]:
    """Each agent's action at every step of one run at apprentice, the run stepped by the
    first agent's actions (so every agent sees the same observations)."""
    from rune_env.envs.run_env import RuneRunEnv
    env = RuneRunEnv(rank="apprentice", opponents="generator")
    obs, info = env.reset(options={"run_seed": run_seed})
    actions: list[list[int]] = [[] for _ in agents]
    done = False
    while not done:
        for got, agent in zip(actions, agents):
            got.append(agent.act(obs, info["action_mask"]))
        obs, _r, terminated, truncated, info = env.step(actions[0][-1])
        done = terminated or truncated
    return actions


# -- 1. a safetensors header length that starts like a pickle or a zip --------------------------
def _length_ending_in(low: int, at_least: int) -> int:
    """The smallest header length >= at_least whose low byte is `low`."""
    return at_least + (low - at_least) % 256


@pytest.mark.parametrize("kind", ["0x80", "PK"])
def test_header_length_like_pickle_magic_loads_and_acts_alike(tmp_path, kind):
    data = SOURCE.read_bytes()
    (old,) = struct.unpack("<Q", data[:8])             # 0x458 = 1112 bytes for the shipped ones
    # 0x80: a length whose low byte is 0x80 (0x480 here) starts the file with a raw pickle's
    # first byte; "PK": 0x4b50 = 19280 is b"PK" little-endian, a zip's first two bytes
    length = _length_ending_in(0x80, old) if kind == "0x80" else 0x4B50
    padded = _padded(data, length)
    assert padded[:1] == b"\x80" if kind == "0x80" else padded[:2] == b"PK"
    path = tmp_path / "padded.pt"
    path.write_bytes(padded)
    assert looks_safetensors(padded[:9], len(padded))
    assert not looks_pickled(padded[:9], len(padded))
    assert not looks_pickled(padded[:8])                 # as agents/train/export.py asks it
    original, loaded = load_policy(SOURCE), load_policy(path)
    a, b = original.state_dict(), loaded.state_dict()
    assert a.keys() == b.keys() and all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    # and it plays: the same action at every step of a whole run as the original
    mine, theirs = _play_actions([PolicyAgent(str(SOURCE)), PolicyAgent(str(path))], run_seed=7)
    assert len(mine) > 10 and mine == theirs


def test_real_pickles_are_still_refused_without_being_read(tmp_path):
    import torch
    zipped = tmp_path / "zipped.pt"                      # torch.save's zip archive: "PK\x03\x04"
    torch.save({"w": torch.zeros(2)}, zipped)
    raw = tmp_path / "raw.pt"                            # a raw pickle: 0x80, protocol 2
    raw.write_bytes(pickle.dumps({"w": [0.0, 0.0]}, protocol=2))
    for path in (zipped, raw):
        head = path.read_bytes()[:9]
        assert looks_pickled(head, path.stat().st_size)
        with pytest.raises(PolicyLoadError) as exc:
            load_policy(path)
        assert "a pickled policy" in _one_line_error(exc.value, str(path))


def test_truncated_padded_file_is_not_taken_for_safetensors(tmp_path):
    # the 0x480-byte header no longer fits in the file: not the safetensors layout; refused
    # (as a pickle, by its first byte: either way it is not read)
    data = SOURCE.read_bytes()
    (old,) = struct.unpack("<Q", data[:8])
    cut = _padded(data, _length_ending_in(0x80, old))[:600]
    assert not looks_safetensors(cut[:9], len(cut))
    path = tmp_path / "cut.pt"
    path.write_bytes(cut)
    with pytest.raises(PolicyLoadError) as exc:
        load_policy(path)
    _one_line_error(exc.value, str(path))


# -- 2. weights that are not finite numbers ---------------------------------------------------
# float16 0x7e00 is a quiet NaN, 0x7c00 +infinity, 0xfc00 -infinity
@pytest.mark.parametrize("tensor,index,bits", [
    ("action_net.bias", 0, 0x7E00),
    ("mlp_extractor.policy_net.0.weight", 1031 * 3 + 17, 0x7C00),
    ("mlp_extractor.policy_net.2.weight", 255, 0xFC00)])
def test_non_finite_weight_refused_at_load(tmp_path, tensor, index, bits):
    data = bytearray(SOURCE.read_bytes())
    header, _ = _parts(bytes(data))
    assert header[tensor]["dtype"] == "F16"
    start = 8 + struct.unpack("<Q", data[:8])[0] + header[tensor]["data_offsets"][0] + 2 * index
    data[start:start + 2] = struct.pack("<H", bits)
    path = tmp_path / "bad.pt"
    path.write_bytes(bytes(data))
    with pytest.raises(PolicyLoadError) as exc:
        PolicyAgent(str(path))
    assert "1 non-finite value" in _one_line_error(exc.value, str(path), repr(tensor))


def _float32_copy(path: Path, scale: dict[str, float]) -> None:
    """The source policy written again at `path` as float32 (which, unlike float16's 65504,
    holds weights up to 3.4e38), each tensor named in `scale` set to that value throughout."""
    from agents.policy.file import read_policy_file, write_policy_file
    from safetensors import safe_open
    with safe_open(str(SOURCE), framework="pt") as f:
        description = json.loads(f.metadata()["rune-env-policy"])
    description["dtype"] = "float32"
    _desc, tensors = read_policy_file(SOURCE)
    write_policy_file(path, {k: (v.float() * 0 + scale[k] if k in scale else v.float())
                             for k, v in tensors.items()}, description)


@pytest.mark.parametrize("value,refused", [(1e38, True), (2e6, True), (-2e6, True),
                                           (1e6, False), (58.0, False)])
def test_huge_weight_refused_at_load(tmp_path, value, refused):
    # action_net.bias, 593 entries, all `value`: above MAX_WEIGHT = 1e6 it is refused in one
    # line counting them (593 weights) and giving the largest magnitude (|value|); 1e6 itself and
    # 58 (the largest shipped weight, exit_thrift's action_net) load
    from agents.policy.file import MAX_WEIGHT
    assert MAX_WEIGHT == 1e6
    path = tmp_path / "huge.pt"
    _float32_copy(path, {"action_net.bias": value})
    if not refused:
        assert load_policy(path).action_net.bias.abs().max().item() == abs(value)
        return
    with pytest.raises(PolicyLoadError) as exc:
        PolicyAgent(str(path))
    text = _one_line_error(exc.value, str(path), "'action_net.bias'")
    assert f"593 weights larger than 1e+06 in magnitude (the largest {abs(value):g})" in text


@pytest.mark.parametrize("deterministic", [True, False])
def test_logits_that_overflow_are_one_line_at_act(tmp_path, monkeypatch, deterministic):
    """With the load bound lifted, every weight 1e38: the first layer's sums overflow float32 to
    +inf (1e38 x (set inputs + 1) > 3.4e38), tanh makes them 1, and each logit is 256 x 1e38 +
    1e38 = +inf; the masked distribution's inf - inf is NaN, which torch refuses in many lines.
    The agent says it in one line naming the file, deterministic (the torch path: every logit
    ties, 2.57e40, in the float64 numpy path) or sampling alike."""
    import agents.policy.file as policy_file
    from rune_env.envs.run_env import RuneRunEnv
    path = tmp_path / "huge.pt"
    _float32_copy(path, {k: 1e38 for k in load_policy(SOURCE).state_dict()
                         if not k.startswith(policy_file.VALUE_PARTS)})
    monkeypatch.setattr(policy_file, "MAX_WEIGHT", float("inf"))
    agent = PolicyAgent(str(path), deterministic=deterministic)
    obs, info = RuneRunEnv(rank="apprentice", opponents="generator").reset(
        options={"run_seed": 7})
    assert int(info["action_mask"].sum()) > 1
    with pytest.raises(PolicyLoadError) as exc:
        agent.act(obs, info["action_mask"])
    assert "logits are not finite" in _one_line_error(exc.value, str(path))


# -- 3. the provenance card beside the .pt ------------------------------------------------------
DEEP = 100_000


@pytest.mark.parametrize("text,problem", [
    ('{"timesteps": NaN}', "timesteps"),                 # Python's json reads NaN as a float
    (json.dumps({"timesteps": 10**40}), "timesteps"),    # TensorBoard's step is an int64
    (json.dumps({"timesteps": MAX_TIMESTEPS + 1}), "timesteps"),
    ('{"timesteps": -1}', "timesteps"),
    ('{"timesteps": "many"}', "timesteps"),
    ('{"timesteps": 2048.5}', "timesteps"),
    ('{"timesteps": true}', "timesteps"),
    ('{"rules_hash": ["x"]}', "rules_hash"),
    ('{"rules_hash_now": 7}', "rules_hash_now"),
    ('{"note": ' + "[" * DEEP + "]" * DEEP + "}", "nested too deep"),
    ("[1, 2]", "a JSON object"),
    ('{"timesteps": ', "not JSON"),
    (b"\xff\xfe{}", "cannot read"),                     # not UTF-8
])
def test_bad_card_is_one_line_naming_the_card(tmp_path, text, problem):
    pt = tmp_path / "policy.pt"
    shutil.copyfile(SOURCE, pt)
    card = pt.with_suffix(".json")
    card.write_bytes(text if isinstance(text, bytes) else text.encode())
    for read in (read_card, lambda _c: training_step(pt)):
        with pytest.raises(PolicyFileError) as exc:
            read(card)
        assert problem in _one_line_error(exc.value, str(card))
    with pytest.raises(PolicyLoadError) as exc:     # as scripts/evaluate.py loads its agents
        load_policy(pt)
    assert problem in _one_line_error(exc.value, str(card))
    # make_agent reads the card for its rules check first (model_card): the same one line
    from agents import make_agent
    with pytest.raises(ValueError) as exc:
        make_agent(str(pt))
    assert problem in _one_line_error(exc.value, str(card))


def test_oversized_card_refused(tmp_path):
    from agents.policy.file import MAX_CARD_BYTES
    pt = tmp_path / "policy.pt"
    shutil.copyfile(SOURCE, pt)
    card = pt.with_suffix(".json")
    card.write_text(json.dumps({"note": "x" * MAX_CARD_BYTES}))    # 1 MiB + 12 bytes
    with pytest.raises(PolicyFileError) as exc:
        training_step(pt)
    assert "bytes, more than" in _one_line_error(exc.value, str(card))


def test_good_cards_read(tmp_path):
    pt = tmp_path / "policy.pt"
    shutil.copyfile(SOURCE, pt)
    assert training_step(pt) is None                    # no card: unknown
    load_policy(pt)
    card = pt.with_suffix(".json")
    for value in (0, 2048, MAX_TIMESTEPS, None):
        card.write_text(json.dumps({"timesteps": value, "rules_hash": "184758c7a8528bca"}))
        assert training_step(pt) == value
        load_policy(pt)
    card.write_text("{}")                               # a card without timesteps: unknown
    assert training_step(pt) is None
    # every shipped card reads, with the timesteps it states (the exit_* cards state none)
    for shipped in sorted(MODELS.rglob("*.pt")):
        raw = json.loads(shipped.with_suffix(".json").read_text(encoding="utf-8"))
        assert training_step(shipped) == raw.get("timesteps")


def test_checkpoint_timesteps_bounded(tmp_path):
    """A .zip's `data` (SB3's JSON) number: None unless a whole number in 0..MAX_TIMESTEPS
    (a float one, as 4096.0, is that number); a deep or oversized data part is None too."""
    path = tmp_path / "model.zip"
    for text, want in [('{"num_timesteps": 4096}', 4096), ('{"num_timesteps": 4096.0}', 4096),
                       ('{"num_timesteps": 1e40}', None), ('{"num_timesteps": NaN}', None),
                       ('{"num_timesteps": -5}', None), ('{"num_timesteps": "x"}', None),
                       ('{"a": ' + "[" * DEEP + "]" * DEEP + "}", None)]:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("data", text)
        assert training_step(path) == want, text


# -- 4. scripts/expert_iteration.py and a duel policy ------------------------------------------
def test_expert_iteration_refuses_duel_policy_before_writing(tmp_path, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("exit_script", REPO / "scripts" / "expert_iteration.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    duel = MODELS / "league_s0.pt"          # a duel policy: 1780 inputs, the run's 1031 and more
    out = tmp_path / "D"
    assert script.main(["--policy", str(duel), "--runs", "1", "--epochs", "1", "--out", str(out),
                        "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and str(duel) in err[0] and "1780" in err[0] and "1031" in err[0]
    assert not out.exists()                 # no tb/, no iter_1/demos.npz
    script.check_observation_size(str(SOURCE), "archmage", None)   # a run policy passes


def test_a_dict_observation_is_bounded_by_all_its_parts_together():
    """64 parts of 10^7 entries each passed part by part and built 6.6 GB of bounds before the
    network's size was refused (106 s); the parts' sum is checked first, from the shapes alone."""
    import time
    from agents.policy.file import MAX_INPUTS, space_from_json
    part = {"type": "Box", "shape": [MAX_INPUTS], "dtype": "float32", "low": 0, "high": 1}
    started = time.monotonic()
    with pytest.raises(PolicyFileError) as exc:
        space_from_json({"type": "Dict", "spaces": [[f"p{i}", part] for i in range(64)]}, "obs")
    assert time.monotonic() - started < 5       # no bounds built (no speed claim)
    _one_line_error(exc.value, "obs: its parts hold 640,000,000 entries together, more than "
                               "10,000,000")
    half = dict(part, shape=[MAX_INPUTS // 2])
    space = space_from_json({"type": "Dict", "spaces": [["a", half], ["b", half]]}, "obs")
    assert sum(s.shape[0] for s in space.spaces.values()) == MAX_INPUTS   # at the bound: taken


@pytest.mark.parametrize("entries, actions", [(2000, 593), (1031, 700)])
def test_a_policy_of_another_env_says_so_at_its_first_action(entries, actions):
    """The shipped policy reads 1031 entries and chooses among 593 actions. An env giving more
    entries or more actions is one line naming both shapes: SB3's 'Unexpected observation
    shape' or an IndexError in torch came out of evaluate.py as a 28-line traceback (red team).
    (Fewer entries are a duel policy's in a run, which reads the run's part, zeros after.)"""
    agent = PolicyAgent(str(SOURCE))
    assert (agent.observation_size, agent.action_count) == (1031, 593)
    with pytest.raises(PolicyLoadError) as exc:
        agent.act(np.zeros(entries, dtype=np.float32), np.ones(actions, dtype=bool))
    _one_line_error(exc.value, str(SOURCE), "reads 1031 observation entries and chooses among "
                    f"593 actions; this env gives {entries} entries and {actions} actions")


def test_an_uncaught_bad_input_error_in_a_script_is_one_line():
    """Raised where a script did not expect it (a policy's misfit at its first action), a
    bad-input error is still one `error:` line (script_parser's hook), exit status 1."""
    import subprocess
    import sys
    code = ("from agents.cli.args import script_parser\n"
            "script_parser('x')\n"
            "from agents.policy import PolicyLoadError\n"
            "raise PolicyLoadError('f.pt: the policy reads\\n5 entries')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (1, "error: f.pt: the policy reads 5 entries\n")
