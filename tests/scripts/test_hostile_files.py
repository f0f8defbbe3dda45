"""Hostile policy files run no code: a `.pt` whose pickle calls os.system and an SB3 `.zip` whose
pickled `data` does the same, passed to every script that takes a policy or a checkpoint and to
the library's loaders, leave the marker file they would write absent, and are refused in one
line (scripts: `error: ...`, exit status 2).

The payloads are live: the first test unpickles them the way the old loaders did (torch.load
with weights_only=False, SB3's load) and sees the marker appear, so the other tests' "absent" is
not the absence of a dud."""
from __future__ import annotations

import base64
import importlib.util
import json
import os
import pickle
import shlex
import time
import zipfile
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("safetensors")

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"


class Payload:
    """Unpickling this runs `touch MARKER` (os.system, as in the issue's report)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {shlex.quote(self.marker)}",))


@pytest.fixture
def evil(tmp_path):
    """The hostile files and their marker: evil.pt (torch's zip pickle, shaped as the old export
    format's dict), evil_raw.pt (a bare pickle), evil.zip (an SB3 checkpoint whose data's
    serialized policy_class is the payload, as SB3's json_to_data reads it)."""
    import torch
    marker = tmp_path / "MARKER"
    files = {"marker": marker, "dir": tmp_path}
    files["pt"] = tmp_path / "evil.pt"
    torch.save({"format": "rune-env-policy", "version": 2, "state_dict": Payload(marker),
                "data": {}}, str(files["pt"]))
    files["raw"] = tmp_path / "evil_raw.pt"
    files["raw"].write_bytes(pickle.dumps(Payload(marker)))
    files["zip"] = tmp_path / "evil.zip"
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    with zipfile.ZipFile(files["zip"], "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":type:": "<class>", ":serialized:": blob},
                                       "num_timesteps": 64}))
    return files


def test_the_payloads_run_code_when_unpickled(evil):
    import torch
    from sb3_contrib import MaskablePPO
    torch.load(str(evil["pt"]), weights_only=False)
    assert evil["marker"].exists()
    evil["marker"].unlink()
    try:
        MaskablePPO.load(str(evil["zip"]))
    except Exception:  # noqa: BLE001 - it fails after the payload ran
        pass
    assert evil["marker"].exists()


def _main(name: str):
    spec = importlib.util.spec_from_file_location(f"hostile_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _league_config(d: Path, member: Path) -> Path:
    cfg = yaml.safe_load((REPO / "configs" / "league" / "quick.yaml").read_text())
    cfg["members"] = [{"name": "greedy", "agent": "greedy"}, {"name": "evil", "agent": str(member)}]
    path = d / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _recipe(d: Path, member: Path) -> Path:
    path = d / "ranks.yaml"
    path.write_text(f"version: 1\ndefaults: {{max_round: 2, sample: false, min_trained_share: 0.0}}\n"
                    f"ranks:\n  mentor:\n    seed: 7\n    agents:\n"
                    f"      - {{agent: {json.dumps(str(member))}, runs: 1}}\n")
    return path


def _best_response_config(d: Path, warm: Path) -> Path:
    cfg = yaml.safe_load((REPO / "configs" / "league" / "best_response.yaml").read_text())
    cfg.update({"warm_start": str(warm), "n_envs": 1, "steps": 64,
                "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}})
    path = d / "best_response.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _forged_run(d: Path, checkpoint: Path) -> str:
    """A run directory laid out as train.py writes one (config.yaml, checkpoints/), holding the
    hostile checkpoint: the layout alone is not a reason to unpickle."""
    run = d / "runs" / "forged"
    (run / "checkpoints").mkdir(parents=True)
    cfg = yaml.safe_load((REPO / "configs" / "train" / "quick.yaml").read_text())
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    (run / "checkpoints" / "model_64_steps.zip").write_bytes(checkpoint.read_bytes())
    return "forged"


# Every script that takes a policy or a checkpoint: (script, argv for a hostile file F in dir D).
# Each refuses F before playing, training or writing anything.
POLICY_ENTRIES = {
    "evaluate": lambda f, d: ["--agents", str(f), "--episodes", "1", "--out", str(d / "ev"),
                              "--no-progress"],
    "ladder": lambda f, d: ["--agents", "greedy", str(f), "--episodes", "1", "--no-progress"],
    "calibrate_ranks": lambda f, d: ["--agent", str(f), "--episodes", "1", "--no-progress"],
    "board_stats": lambda f, d: ["--agents", str(f), "--episodes", "1", "--no-progress"],
    "make_opponents": lambda f, d: ["--rank", "mentor", "--agents", str(f), "--runs", "1",
                                    "--out", str(d / "pool.json"), "--no-progress"],
    "exploit": lambda f, d: ["--target", str(f), "--steps", "64", "--runs-dir", str(d / "runs"),
                             "--no-progress"],
    "build_pools": lambda f, d: ["--config", str(_recipe(d, f)), "--out-dir", str(d / "pools"),
                                 "--no-progress"],
    "league": lambda f, d: ["--config", str(_league_config(d, f)), "--runs-dir", str(d / "runs"),
                            "--no-progress"],
}
CHECKPOINT_ONLY = {
    "export_policy": lambda f, d: [str(f), "--out", str(d / "out.pt"), "--check", "1",
                                   "--no-progress"],
    "train": lambda f, d: ["--resume", "--run-name", _forged_run(d, f), "--runs-dir",
                           str(d / "runs"), "--no-progress"],
}
POLICY_ONLY = {
    "export_policy --convert without --trust": ("export_policy", lambda f, d: ["--convert", str(f)]),
    "exploit's warm_start": ("exploit", lambda f, d: [
        "--target", "greedy", "--config", str(_best_response_config(d, f)), "--runs-dir",
        str(d / "runs"), "--no-progress"]),
}
CASES = [(s, s, kind, argv) for s, argv in POLICY_ENTRIES.items() for kind in ("pt", "raw", "zip")] \
    + [(s, s, "zip", argv) for s, argv in CHECKPOINT_ONLY.items()] \
    + [(label, s, kind, argv) for label, (s, argv) in POLICY_ONLY.items() for kind in ("pt", "raw")]


@pytest.mark.outside_mutation_check
@pytest.mark.parametrize("label,script,kind,argv", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_no_script_runs_a_hostile_file(evil, capsys, label, script, kind, argv):
    main = _main(script)
    args = argv(evil[kind], evil["dir"])
    capsys.readouterr()
    t0 = time.monotonic()
    code = main(args)
    seconds = time.monotonic() - t0
    err = capsys.readouterr().err
    assert not evil["marker"].exists(), f"{label} ran the payload of {evil[kind].name}"
    assert code == 2, (label, code, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    # the file named: the hostile one (train.py --resume names the forged run's checkpoint)
    named = "model_64_steps.zip" if script == "train" else evil[kind].name
    assert "Traceback" not in err and named in lines[0], lines[0]
    # what it says: a pickle is refused, with the way out (convert, export, or trust)
    assert any(w in lines[0] for w in ("--trust", "pickle")), lines[0]
    assert seconds < 5, (label, seconds)


@pytest.mark.outside_mutation_check
def test_the_library_loaders_refuse_them(evil):
    from agents import make_agent
    from agents.train.league import warm_start
    from agents.policy import PolicyAgent, PolicyLoadError, load_model, load_policy
    from agents.train.config import ConfigError
    from rune_env.rules import default_rules
    rules = default_rules()
    for kind in ("pt", "raw"):
        for load in (load_policy, PolicyAgent, lambda p: make_agent(str(p), rules)):
            with pytest.raises(PolicyLoadError, match="a pickled policy .*refused.*--convert .*--trust") as exc:
                load(evil[kind])
            assert "\n" not in str(exc.value)
        with pytest.raises(ConfigError, match="warm_start"):
            warm_start(None, evil[kind], 1031)
    for load in (load_model, PolicyAgent, lambda p: make_agent(str(p), rules)):
        with pytest.raises(PolicyLoadError, match="not saved by a training run on this machine.*--trust-pickle") as exc:
            load(evil["zip"])
        assert "\n" not in str(exc.value)
    with pytest.raises(PolicyLoadError, match="an exported policy"):
        load_policy(evil["zip"])               # a checkpoint where a policy is expected
    assert not evil["marker"].exists()


@pytest.mark.outside_mutation_check
def test_the_ranks_recipes_refuse_them(evil):
    """configs/ranks.yaml's loading (load_recipes, then plan_build loads every policy before any
    drafting): a recipe naming a hostile file stops with a BuildError naming it."""
    from agents.design.pools import BuildError, load_recipes, plan_build
    from rune_env.rules import default_rules
    rules = default_rules()
    for kind in ("pt", "zip"):
        config = _recipe(evil["dir"], evil[kind])
        recipes = load_recipes(config, rules, REPO)
        with pytest.raises(BuildError, match=evil[kind].name):
            plan_build(recipes, None, rules, config, evil["dir"] / "pools", False)
    assert not evil["marker"].exists()


@pytest.mark.outside_mutation_check
def test_a_signature_is_the_only_way_in_without_trust(evil, tmp_path, monkeypatch):
    """A signature made under another key (a colleague's machine, a copied run) or a copied
    signature file does not let a checkpoint in; --trust-pickle (RUNE_ENV_TRUST_PICKLE=1) does,
    and then the payload runs, as that switch says it may."""
    from agents.policy import PolicyLoadError, load_model
    from agents.policy.trust import TRUST_ENV, is_signed, write_signature
    other = tmp_path / "other.key"
    monkeypatch.setenv("RUNE_ENV_KEY_FILE", str(other))
    write_signature(evil["zip"], evil["zip"])          # signed, but under the other key
    assert is_signed(evil["zip"])
    monkeypatch.setenv("RUNE_ENV_KEY_FILE", str(tmp_path / "mine.key"))
    assert not is_signed(evil["zip"])
    with pytest.raises(PolicyLoadError, match="--trust-pickle"):
        load_model(evil["zip"])
    assert not evil["marker"].exists()
    monkeypatch.setenv(TRUST_ENV, "1")
    with pytest.raises(PolicyLoadError):             # trusted: unpickled, and SB3 fails after
        load_model(evil["zip"])
    assert evil["marker"].exists()


@pytest.mark.outside_mutation_check
def test_signed_checkpoints_load_and_any_change_unsigns_them(tmp_path):
    from sb3_contrib import MaskablePPO
    from agents.policy import PolicyLoadError, load_model
    from agents.policy.trust import is_signed, save_checkpoint, signature_path
    from rune_env.envs.run_env import RuneRunEnv
    model = MaskablePPO("MlpPolicy", RuneRunEnv(max_rounds=1), n_steps=16, batch_size=16,
                        n_epochs=1, seed=0, policy_kwargs={"net_arch": [8]}, device="cpu")
    path = save_checkpoint(model, tmp_path / "run" / "final_model")    # ".zip" is added
    assert path.name == "final_model.zip" and is_signed(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["final_model.zip", "final_model.zip.sig"]
    assert load_model(path).num_timesteps == 0
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1                          # one bit flipped
    path.write_bytes(bytes(data))
    assert not is_signed(path)
    with pytest.raises(PolicyLoadError, match="--trust-pickle"):
        load_model(path)
    signature_path(path).write_text("{" * 100_000)     # a hostile signature file: not trusted
    assert not is_signed(path)


# -- fuzzing the policy file -------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70)
                    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@pytest.fixture(scope="module")
def small_policy(tmp_path_factory):
    """A valid small exported policy (8 inputs, [4], 3 actions): its description and tensors."""
    import gymnasium as gym
    from agents.policy import export_policy
    from agents.policy.file import read_policy_file
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    policy = MaskableActorCriticPolicy(gym.spaces.Box(0.0, 1.0, (8,)), gym.spaces.Discrete(3),
                                       lambda _: 0.0, net_arch=[4])
    path = tmp_path_factory.mktemp("small") / "small.pt"
    export_policy(policy, path)
    desc, tensors = read_policy_file(path)
    from safetensors import safe_open
    with safe_open(str(path), framework="pt") as f:
        raw = json.loads(f.metadata()["rune-env-policy"])
    return {"path": path, "raw": raw, "tensors": tensors}


def _loads_or_refuses(path: Path) -> None:
    from agents.policy import PolicyLoadError, load_policy
    t0 = time.monotonic()
    try:
        load_policy(path)
    except PolicyLoadError as exc:
        assert "\n" not in str(exc)
    assert time.monotonic() - t0 < 5


@pytest.mark.outside_mutation_check
@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(sorted(["format", "version", "dtype", "class", "observation_space",
                                   "action_space", "net_arch", "activation_fn", "ortho_init",
                                   "normalize_images", "share_features_extractor",
                                   "features_extractor", "features_extractor_kwargs", "extra"])),
       value=JSON)
def test_fuzzed_descriptions_load_or_raise_policy_load_error(small_policy, tmp_path, key, value):
    """Any value at any key of the description: the file loads, or PolicyLoadError in one line,
    within 5 s (never another exception, never an unbounded allocation)."""
    from agents.policy.file import write_policy_file
    desc = json.loads(json.dumps(small_policy["raw"]))
    desc[key] = value
    path = tmp_path / "fuzz.pt"
    write_policy_file(path, small_policy["tensors"], desc)
    _loads_or_refuses(path)


@pytest.mark.outside_mutation_check
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_bytes_load_or_raise_policy_load_error(small_policy, tmp_path, data):
    """A valid file with bytes changed (the header and the tensors alike), cut short or grown:
    it loads, or PolicyLoadError in one line, within 5 s."""
    blob = bytearray(small_policy["path"].read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob) + 16))
    blob = blob[:cut] + bytes(max(0, cut - len(blob)))
    path = tmp_path / "bytes.pt"
    path.write_bytes(bytes(blob))
    _loads_or_refuses(path)


@pytest.mark.outside_mutation_check
def test_the_command_line_refuses_them_in_one_line(evil):
    """The same through a real process (the scripts' __main__), as the issue ran them."""
    import subprocess
    import sys
    for kind in ("pt", "zip"):
        r = subprocess.run([sys.executable, str(SCRIPTS / "evaluate.py"), "--agents", str(evil[kind]),
                            "--episodes", "1", "--out", str(evil["dir"] / "ev"), "--no-progress"],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
        assert r.returncode == 2 and not evil["marker"].exists()
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {evil[kind]}: "), r.stderr


# -- the red team's files (forty-ninth session) -------------------------------------------------
BOARD = REPO / "configs" / "boards" / "node_links.json"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_pipe_or_a_device_as_an_input_file_is_refused_not_waited_on(tmp_path, cli_main):
    """open() of a FIFO blocks until something writes to it: battle, --rules and --profile
    hung. Only regular files are read."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for argv in (["battle", str(fifo), str(BOARD)], ["battle", str(BOARD), str(BOARD), "--rules",
                                                      str(fifo)]):
        r = cli_main(*argv)
        assert r.returncode == 2 and r.stderr.startswith(f"error: {fifo}: cannot read")
        assert r.stderr.endswith("(not a regular file: a pipe or a device?)\n")
    r = cli_main("battle", str(tmp_path), str(BOARD))
    assert r.returncode == 2 and r.stderr.endswith("(a directory)\n")


def test_control_characters_from_a_file_reach_the_terminal_escaped(tmp_path, cli_main):
    """A file's name or text with a newline or an escape sequence (ESC ] 0; retitles the
    window, ESC [31m recolours it) is printed escaped on one line; a 3 MB value makes an error
    line of at most 1000 characters."""
    from rune_env.files import printable_line
    assert printable_line("a\nb\x1b[31mc\x07") == "a b\\x1b[31mc\\x07"
    assert printable_line("x" * 5000) == "x" * 997 + "..."
    bad = tmp_path / "bad\x1b]0;pwned\x07.json"
    bad.write_text("{")
    r = cli_main("battle", str(bad), str(BOARD))
    assert r.returncode == 2 and "\x1b" not in r.stderr and "\\x1b]0;pwned\\x07" in r.stderr
    assert r.stderr.count("\n") == 1
    rules = tmp_path / "long.yaml"
    rules.write_text("extends: default.yaml\nbattle:\n  base_hp: " + "x" * 300_000 + "\n")
    r = cli_main("battle", str(BOARD), str(BOARD), "--rules", str(rules))
    assert r.returncode == 2 and len(r.stderr) <= len("error: ") + 1000 + 1


def test_a_metagame_weight_that_is_not_a_number_is_refused_before_it_is_used(tmp_path, cli_main):
    """A weight of many digits as text passed float() and the label multiplied the text by 100
    (6.6 GB for 66 MB)."""
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"rounds": [{"round": 1, "mixture": [
        {"weight": "1" * 10_000, "cost": 1, "board": {"runes": {}}}]}]}))
    r = cli_main("sheet", str(meta), "--round", "1", "-o", str(tmp_path / "s.png"))
    assert r.returncode == 2 and "round 1's mixture: each entry a weight 0..1 and a cost, as " \
                                 "numbers" in r.stderr
    assert not (tmp_path / "s.png").exists()


def test_the_card_beside_a_checkpoint_is_read_within_its_bound(tmp_path):
    """The card beside a .zip is read before the checkpoint's trust is checked: a 3 GB sparse
    card took 6.4 GB; now a card over MAX_CARD_BYTES is no card (the refusal is the trust's)."""
    from agents.policy import model_card
    from agents.policy.file import MAX_CARD_BYTES
    card = tmp_path / "evil.json"
    with open(card, "wb") as fh:
        fh.truncate(3 * 2**30)         # sparse: no disk used
    assert model_card(tmp_path / "evil.zip") is None
    card.write_text(json.dumps({"rules_hash": "x", "pad": "y" * (MAX_CARD_BYTES // 2)}))
    assert model_card(tmp_path / "evil.zip")["rules_hash"] == "x"


def test_a_signed_checkpoint_directory_is_exactly_what_was_saved(tmp_path, monkeypatch):
    """RLlib's checkpoints are directories of pickles (train_rllib.py --resume restores them):
    signed as a whole, one loads only if every file is the one saved; a file changed, added,
    removed or turned into a symlink, or a listing edited, unsigns it (--trust-pickle aside)."""
    import os
    import shutil
    from agents.policy.trust import (TRUST_ENV, UntrustedCheckpoint, check_checkpoint_dir,
                                     is_signed_directory, sign_directory, signature_path)
    monkeypatch.setenv("RUNE_ENV_KEY_FILE", str(tmp_path / "key"))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    made = tmp_path / "algo_8.tmp"
    (made / "learner").mkdir(parents=True)
    (made / "state.pkl").write_bytes(b"pickle bytes")
    (made / "learner" / "module.pt").write_bytes(b"weights")
    final = tmp_path / "algo_8"
    sign_directory(made, final)
    made.rename(final)
    assert is_signed_directory(final)
    check_checkpoint_dir(final)

    def tampered(change) -> bool:
        copy = tmp_path / "copy" / "algo_8"
        shutil.rmtree(copy.parent, ignore_errors=True)
        shutil.copytree(final, copy)
        shutil.copy(signature_path(final), signature_path(copy))
        assert is_signed_directory(copy)
        change(copy)
        return not is_signed_directory(copy)
    assert tampered(lambda d: (d / "state.pkl").write_bytes(b"pickle byteZ"))
    assert tampered(lambda d: (d / "extra.pkl").write_bytes(b"new"))
    assert tampered(lambda d: (d / "learner" / "module.pt").unlink())
    assert tampered(lambda d: ((d / "state.pkl").unlink(),
                               os.symlink(final / "state.pkl", d / "state.pkl")))

    def drop_from_both(d):          # the file and its line in the listing: the listing's HMAC
        import json                 # no longer matches it
        sig = json.loads(signature_path(d).read_text())
        del sig["files"]["state.pkl"]
        signature_path(d).write_text(json.dumps(sig))
        (d / "state.pkl").unlink()
    assert tampered(drop_from_both)
    (final / "state.pkl").write_bytes(b"evil")
    with pytest.raises(UntrustedCheckpoint, match="algo_8: an RLlib checkpoint is a directory"):
        check_checkpoint_dir(final)
    monkeypatch.setenv(TRUST_ENV, "1")        # --trust-pickle
    check_checkpoint_dir(final)
