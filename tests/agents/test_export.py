"""Shipped artefacts: the exported policy format (float16, no value head) and its card
(agents/train/export.py, scripts/export_policy.py); policies of other rules warn like pools; the
compressed pool files (rune_env/files.py) and which shipped pool the envs pick per rules."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from rune_env.files import gzip_bytes, read_text, write_text_atomic
from rune_env.rules import default_rules, load_rules

REPO = Path(__file__).resolve().parents[2]
RULES = default_rules()
LITERAL = load_rules(REPO / "configs" / "rules" / "seed_literal.yaml")


# -- compressed files ----------------------------------------------------------------------------
def test_gz_files_round_trip_reproducibly_and_corruption_is_one_error(tmp_path):
    text = '{"a": "b"}\n' * 200 + "é\n"
    path = tmp_path / "x.json.gz"
    write_text_atomic(path, text)
    assert gzip.decompress(path.read_bytes()).decode("utf-8") == text
    assert read_text(path, "pool file", ValueError) == text
    first = path.read_bytes()
    write_text_atomic(path, text)               # no time or name in the header: same bytes
    assert path.read_bytes() == first == gzip_bytes(text)
    assert len(first) < len(text.encode()) / 10
    plain = tmp_path / "x.json"                 # other names stay plain text
    write_text_atomic(plain, text)
    assert plain.read_text(encoding="utf-8") == text
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(first[: len(first) // 2])   # truncated
    with pytest.raises(ValueError, match=r"bad.json.gz: not a valid gzip file, truncated or corrupt"):
        read_text(bad, "pool file", ValueError)
    bad.write_bytes(b"plain text, not gzip")
    with pytest.raises(ValueError, match=r"not a valid gzip file"):
        read_text(bad, "pool file", ValueError)
    with pytest.raises(ValueError, match=r"nowhere.json.gz: cannot read pool file"):
        read_text(tmp_path / "nowhere.json.gz", "pool file", ValueError)


def test_compressed_pools_load_and_say_their_rules_hash(tmp_path):
    from rune_env.run.opponents import Pool, load_pool, pool_rules_hash, save_pool
    board = {"runes": {"1:0": ["fire", 1], "1:1": ["ice", 1]}, "core": "moon"}
    pool = Pool(RULES.hash, "apprentice", {1: [{"board": board, "count": 2}]})
    for name in ("p.json", "p.json.gz"):
        save_pool(pool, tmp_path / name, compact=True)
        assert pool_rules_hash(tmp_path / name) == RULES.hash
        back = load_pool(tmp_path / name, RULES, strict=True)
        assert back.counts(1) == [2] and back.rounds[1][0]["board"]["core"] == "moon"
    assert gzip.decompress((tmp_path / "p.json.gz").read_bytes()) == (tmp_path / "p.json").read_bytes()
    (tmp_path / "junk.json.gz").write_bytes(b"junk")
    assert pool_rules_hash(tmp_path / "junk.json.gz") is None
    assert pool_rules_hash(tmp_path / "none.json") is None


def test_the_envs_pick_the_shipped_pool_of_their_rules():
    """configs/opponents/<rank>.json.gz: the default rules' pools; seed_literal/: the rules as
    written. Each rules file gets its own, so neither warns."""
    from rune_env.envs.run_env import RuneRunEnv, shipped_pool
    from rune_env.run.opponents import pool_rules_hash
    for i, rank in enumerate(r.id for r in RULES.spec.ranks):
        mine = shipped_pool(LITERAL, i)
        assert mine.name == f"{rank}.json.gz" and mine.parent.name == "seed_literal"
        assert pool_rules_hash(mine) == LITERAL.hash
        default = shipped_pool(RULES, i)
        if pool_rules_hash(default) == RULES.hash:
            assert default.parent.name == "opponents"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = RuneRunEnv(rank="mentor", rules=str(REPO / "configs" / "rules" / "seed_literal.yaml"))
    assert type(env.opponents).__name__ == "PoolOpponents"


# -- the exported policy -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A run folder as train.py leaves it (config.yaml, a checkpoint, its training seconds and
    a periodic evaluation at that step), with a tiny MaskablePPO."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from rune_env.envs.run_env import RuneRunEnv
    run = tmp_path_factory.mktemp("runs") / "tiny__s3"
    (run / "checkpoints").mkdir(parents=True)
    env_kwargs = {"rank": "apprentice", "opponents": "generator", "max_rounds": 2}
    model = MaskablePPO("MlpPolicy", RuneRunEnv(**env_kwargs), n_steps=32, batch_size=32,
                        n_epochs=1, seed=3, policy_kwargs={"net_arch": [16, 16]}, device="cpu",
                        verbose=0)
    model.learn(64)
    checkpoint = run / "checkpoints" / "model_64_steps.zip"
    from agents.policy.trust import save_checkpoint
    save_checkpoint(model, checkpoint)          # signed, as train.py saves it
    (run / "config.yaml").write_text(yaml.safe_dump({"name": "quick", "seed": 3,
                                                     "env_kwargs": env_kwargs}))
    (run / "train_seconds.json").write_text(json.dumps({"64": 1.5}))
    (run / "eval_history.jsonl").write_text(json.dumps(
        {"timesteps": 64, "episodes": 5, "battle_win_rate": 0.25, "mean_wins": 0.5,
         "clear_rate": 0.0, "rounds_survived": 2.0}) + "\n")
    return {"run": run, "checkpoint": checkpoint, "model": model, "env_kwargs": env_kwargs}


def _pairs(env_kwargs, n=60):
    from agents.baselines import RandomAgent
    from rune_env.envs.run_env import RuneRunEnv
    env, agent, out = RuneRunEnv(**env_kwargs), RandomAgent(0), []
    obs, info = env.reset(options={"run_seed": 5})
    while len(out) < n:
        out.append((obs.copy(), info["action_mask"].copy()))
        obs, _, term, trunc, info = env.step(agent.act(obs, info["action_mask"]))
        if term or trunc:
            obs, info = env.reset(options={"run_seed": 5 + len(out)})
    return out


@pytest.mark.outside_mutation_check
def test_export_keeps_the_acting_network_in_float16(tiny_run, tmp_path):
    import torch
    from safetensors import safe_open
    from agents.policy import PolicyAgent, export_policy, load_policy
    model = tiny_run["model"]
    half, full = tmp_path / "half.pt", tmp_path / "full.pt"
    export_policy(model, half)
    export_policy(model, full, dtype="float32")
    # a safetensors file: the tensors, and the network's description as JSON in its header
    with safe_open(str(half), framework="pt") as f:
        desc = json.loads(f.metadata()["rune-env-policy"])
        saved = {k: f.get_tensor(k) for k in f.keys()}
    assert desc["format"] == "rune-env-policy" and desc["version"] == 3 and desc["dtype"] == "float16"
    assert desc["class"] == "MaskableActorCriticPolicy"        # the training subclass loads as its base
    assert desc["net_arch"] == [16, 16] and desc["activation_fn"] == "Tanh"
    assert desc["observation_space"]["shape"] == [int(model.observation_space.shape[0])]
    assert desc["action_space"] == {"type": "Discrete", "n": int(model.action_space.n), "start": 0}
    assert all(v.dtype == torch.float16 for v in saved.values())
    assert not any(k.startswith(("value_net.", "mlp_extractor.value_net.")) for k in saved)
    # [16, 16] over D inputs and A actions: (D*16 + 16) + (16*16 + 16) + (16*A + A) weights
    d, n = int(model.observation_space.shape[0]), int(model.action_space.n)
    assert sum(v.numel() for v in saved.values()) == d * 16 + 16 + 16 * 16 + 16 + 16 * n + n
    # the acting weights: float16 of the model's (to float16's precision), float32 exact
    own = model.policy.state_dict()
    for path, tol in ((half, 1e-3), (full, 0.0)):
        policy = load_policy(path)
        for k, v in policy.state_dict().items():
            if k.startswith(("value_net.", "mlp_extractor.value_net.")):
                assert not v.any(), k                           # not exported: zeros, not random
            else:
                assert torch.allclose(v, own[k], rtol=tol, atol=tol), k
    # the same choices as the model on real observations
    pairs = _pairs(tiny_run["env_kwargs"])
    ref = [PolicyAgent(model).act(o, m) for o, m in pairs]
    assert [PolicyAgent(str(half)).act(o, m) for o, m in pairs] == ref
    assert [PolicyAgent(str(full)).act(o, m) for o, m in pairs] == ref
    # exporting twice writes the same bytes (nothing of the time or the machine in the file)
    again = tmp_path / "again.pt"
    export_policy(model, again)
    assert again.read_bytes() == half.read_bytes()
    with pytest.raises(ValueError, match="dtype"):
        export_policy(model, tmp_path / "x.pt", dtype="int8")


@pytest.mark.outside_mutation_check
def test_load_policy_names_a_bad_file(tmp_path):
    import torch
    from agents.policy import PolicyLoadError, load_policy
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x00" * 100)
    with pytest.raises(PolicyLoadError, match="junk.pt: not an exported policy .not a safetensors file"):
        load_policy(junk)
    other = tmp_path / "other.pt"
    torch.save({"weights": 1}, other)          # a pickle: refused unread, with the way out
    with pytest.raises(PolicyLoadError, match="other.pt: a pickled policy .*--convert .*--trust"):
        load_policy(other)
    from safetensors.torch import save_file
    bare = tmp_path / "bare.pt"                # safetensors without the description
    save_file({"w": torch.zeros(2)}, str(bare))
    with pytest.raises(PolicyLoadError, match="bare.pt: not an exported policy .no 'rune-env-policy'"):
        load_policy(bare)
    with pytest.raises(PolicyLoadError, match="nowhere.pt: no such policy file"):
        load_policy(tmp_path / "nowhere.pt")


@pytest.mark.outside_mutation_check
def test_export_script_writes_the_policy_and_its_card(tiny_run, tmp_path, script_main):
    out = tmp_path / "models" / "tiny_64.pt"
    cmd = [sys.executable, str(REPO / "scripts" / "export_policy.py"), str(tiny_run["checkpoint"]),
           "--out", str(out), "--check", "2", "--note", "a test policy", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    card = json.loads(r.stdout)
    assert card == json.loads(out.with_suffix(".json").read_text())
    assert card["timesteps"] == 64 and card["seed"] == 3 and card["rules_hash"] == RULES.hash
    assert card["train_seconds"] == 1.5 and card["note"] == "a test policy"
    assert card["train_periodic_eval"] == {"episodes": 5, "battle_win_rate": 0.25,
                                           "mean_wins": 0.5, "clear_rate": 0.0}
    agree = card["agreement"]
    assert agree["episodes"] == 2 and agree["steps"] > 0 and 0 <= agree["same_actions"] <= agree["steps"]
    import hashlib
    assert card["checkpoint_sha256"] == hashlib.sha256(tiny_run["checkpoint"].read_bytes()).hexdigest()
    assert out.stat().st_size < tiny_run["checkpoint"].stat().st_size
    from agents.evaluation.runs import training_step
    assert training_step(out) == 64
    # an existing file is kept without --force; bad input is one error line, nothing written
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert again.returncode == 2 and again.stderr.startswith("error:") and "--force" in again.stderr
    for args, words in (([str(tmp_path / "none.zip"), "--out", str(tmp_path / "a.pt")], "no such checkpoint"),
                        ([str(REPO / "README.md"), "--out", str(tmp_path / "b.pt")], "not a stable-baselines3 checkpoint"),
                        ([str(tiny_run["checkpoint"]), "--out", str(tmp_path / "c.zip")], "must end in .pt"),
                        ([str(tiny_run["checkpoint"]), "--out", str(tmp_path / "d.pt"), "--check", "-1"], "--check")):
        r = script_main("export_policy", *args)         # in this process (the case above ran one)
        assert r.returncode == 2 and r.stderr.startswith("error:") and words in r.stderr, r.stderr
        assert not list(tmp_path.glob("[abcd].*"))


@pytest.mark.outside_mutation_check
def test_a_policy_of_other_rules_warns_and_strict_refuses(tiny_run, tmp_path, script_main):
    from agents import make_agent
    from agents.policy import export_policy
    path = tmp_path / "old.pt"
    export_policy(tiny_run["model"], path)
    path.with_suffix(".json").write_text(json.dumps({"rules_hash": LITERAL.hash, "timesteps": 64}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_agent(str(path), RULES)
    assert any(LITERAL.hash in str(w.message) and RULES.hash in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="trained under rules " + LITERAL.hash):
        make_agent(str(path), RULES, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_agent(str(path), LITERAL, strict=True)            # its own rules: quiet
        path.with_suffix(".json").unlink()
        make_agent(str(path), RULES, strict=True)              # no card: nothing known, quiet
    # the scripts say it in one line, and --strict refuses it
    path.with_suffix(".json").write_text(json.dumps({"rules_hash": LITERAL.hash, "timesteps": 64}))
    base = [sys.executable, str(REPO / "scripts" / "evaluate.py"), "--agents", str(path),
            "--episodes", "1", "--opponents", "generator", "--out", str(tmp_path / "ev"), "--no-progress"]
    r = subprocess.run(base, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stderr.splitlines() if line.startswith("warning:")] == \
        [f"warning: {path}: policy was trained under rules {LITERAL.hash}, the current rules are {RULES.hash}"]
    r = script_main("evaluate", *base[2:], "--strict")     # (refused before playing: in this process)
    assert r.returncode == 2 and r.stderr.startswith("error:") and LITERAL.hash in r.stderr


def test_shipped_models_carry_their_rules_and_fit_the_budget():
    """Every shipped policy has a card naming its rules (in agents/models/ the defaults' before
    the amplify cap, configs/rules/balance_v2.yaml, until they are retrained, but the cloned
    agents of configs/train/expert.yaml, expert_*.pt, the distilled ones of distill.yaml
    and distill_v2.yaml, distill_*.pt, and those of scripts/expert_iteration.py, exit_*.pt,
    trained under today's defaults, and long_mentor_s1.pt,
    their teacher, under them with 15 lamps; the rules as written in seed_literal/), and the
    shipped models and pools stay under issue #32's 15 MB."""
    from rune_env.rules import default_rules
    models = REPO / "agents" / "models"
    balance_v2 = load_rules(REPO / "configs" / "rules" / "balance_v2.yaml")
    long_runs = default_rules().with_overrides({"run.lamps": 15})   # long_mentor.yaml's
    for pt in sorted(models.rglob("*.pt")):
        card = json.loads(pt.with_suffix(".json").read_text(encoding="utf-8"))
        assert card["policy"] == pt.relative_to(REPO).as_posix()
        expected = (LITERAL.hash if pt.parent.name == "seed_literal" else
                    long_runs.hash if pt.name.startswith("long_mentor_") else
                    default_rules().hash if pt.name.startswith(("expert_", "distill_", "exit_"))
                    else balance_v2.hash)
        assert card.get("rules_hash") == expected, pt
    # "15 MB" read the stricter way, 15 * 10^6 bytes (15 MiB would allow 0.73 MB more)
    total = sum(p.stat().st_size for d in (models, REPO / "configs" / "opponents")
                for p in d.rglob("*") if p.is_file())
    assert total < 15_000_000, total


@pytest.mark.outside_mutation_check
def test_evaluate_plays_another_rules_file_with_its_own_policies_and_pools(tmp_path, script_main):
    """--rules configs/rules/seed_literal.yaml: the old policies and the old pools are that file's,
    so nothing warns; under the defaults the same policy warns in one line. (A missing --rules
    file is main(argv) in this process: refused before anything is played.)"""
    old = REPO / "agents" / "models" / "seed_literal" / "apprentice_s0.pt"
    base = [sys.executable, str(REPO / "scripts" / "evaluate.py"), "--agents", str(old),
            "--episodes", "1", "--out", str(tmp_path / "ev"), "--no-progress", "--json"]
    r = subprocess.run(base + ["--rules", str(REPO / "configs" / "rules" / "seed_literal.yaml")],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    out = json.loads(r.stdout)
    assert out["rules_hash"] == LITERAL.hash and "seed_literal" in out["opponents"]
    r = subprocess.run(base, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0 and "trained under rules " + LITERAL.hash in r.stderr
    r = script_main("evaluate", *base[2:], "--rules", tmp_path / "none.yaml")
    assert r.returncode == 2 and r.stderr.startswith("error:") and "none.yaml" in r.stderr


def test_shipped_policies_are_data_and_the_pools_provenance_still_leads_to_them():
    """Every shipped policy is in the data format (safetensors, not a pickle) and says where it
    was converted from (the older ones, once pickles) or, exported in that format from its
    checkpoint, that it chose the checkpoint's action at every step checked (or, written by
    scripts/expert_iteration.py itself, its sha256 and the commands that made it); the default rules' pools name each drafting policy's sha256 as it was
    when they were drafted: the file's own (a pool drafted since the conversion, as sorcerer's)
    or the card's converted_from.sha256 (the old pickled file, for a pool drafted before; a
    policy exported straight to the data format has no older file)."""
    import gzip
    import hashlib
    from agents.policy.file import looks_pickled
    models = REPO / "agents" / "models"
    for pt in sorted(models.rglob("*.pt")):
        assert not looks_pickled(pt.read_bytes()[:8]), pt
        card = json.loads(pt.with_suffix(".json").read_text(encoding="utf-8"))
        assert card["format"].startswith("rune-env-policy v3") and "no pickle" in card["format"]
        if "converted_from" in card:
            conv = card["converted_from"]
            assert conv["same_weights"] and conv["check"]["same_actions"] == conv["check"]["steps"] > 0
        elif card.get("made_by") == "scripts/expert_iteration.py":
            # written by the script itself (no checkpoint to agree with): the file is the one the
            # script wrote, named by its sha256 below, and the card says how it was made
            assert card["sha256"] and card["lineage"] and card["copied_from"], pt
        else:
            check = card["agreement"]
            assert check["same_actions"] == check["steps"] > 0, pt
        if "sha256" in card:                                   # league_s0's card names its file's
            assert card["sha256"] == hashlib.sha256(pt.read_bytes()).hexdigest()
    named = 0
    for pool in sorted((REPO / "configs" / "opponents").glob("*.json.gz")):
        prov = json.loads(gzip.decompress(pool.read_bytes()))["provenance"]
        for path, entry in prov.get("policies", {}).items():
            card = json.loads((REPO / path).with_suffix(".json").read_text(encoding="utf-8"))
            now = hashlib.sha256((REPO / path).read_bytes()).hexdigest()
            converted = card.get("converted_from", {}).get("sha256")   # exported ones have none
            assert entry["sha256"] in (now, converted), (pool.name, path)
            assert entry["provenance"] == Path(path).with_suffix(".json").as_posix()
            named += 1
    assert named == 2      # sorcerer's PPO seed 0 at 2M steps, mentor's distilled agent


@pytest.mark.outside_mutation_check
def test_a_dict_observation_policy_exports_and_plays_the_same(tmp_path):
    """MultiInputPolicy over obs_mode="dict" (a Dict of Boxes, CombinedExtractor) round-trips
    through the data format: the same spaces, and float32 export acts exactly as the model."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from agents.policy import PolicyAgent, export_policy, load_policy
    from rune_env.envs.run_env import RuneRunEnv
    env = RuneRunEnv(obs_mode="dict", max_rounds=2, opponents="generator")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=32, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    path = tmp_path / "dict.pt"
    export_policy(model, path, dtype="float32")
    policy = load_policy(path)
    assert type(policy).__name__ == "MaskableMultiInputActorCriticPolicy"
    assert policy.observation_space == model.observation_space
    obs, info = env.reset(options={"run_seed": 3})
    ref, exp = PolicyAgent(model), PolicyAgent(policy)
    for _ in range(30):
        a = ref.act(obs, info["action_mask"])
        assert exp.act(obs, info["action_mask"]) == a
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            obs, info = env.reset(options={"run_seed": 4})


def test_a_runs_history_lines_that_are_not_evaluations_are_left_out(tmp_path):
    """eval_history.jsonl as export_policy.py's card and a resume read it: a line cut by a kill
    was a JSONDecodeError traceback in export_policy.py, a 100,000-deep line a RecursionError
    there and in --resume; both, and lines that are not evaluations, are left out."""
    from agents.train.export import _history, _train_seconds
    from agents.train.run_dirs import keep_history, read_history
    good = ['{"timesteps": 64, "battle_win_rate": 0.5}', '{"timesteps": 128, "battle_win_rate": 0.6}']
    hostile = ['{"timesteps": 192, "battle_win', "[" * 100_000 + "]" * 100_000, '[1, 2]',
               '{"timesteps": "64"}', '{"timesteps": NaN}']
    (tmp_path / "eval_history.jsonl").write_text("\n".join([good[0], *hostile, good[1]]) + "\n")
    assert [e["timesteps"] for e in read_history(tmp_path)] == [64, 128]
    assert _history(tmp_path) == read_history(tmp_path)
    keep_history(tmp_path, 100)            # a resume at 100 steps keeps the evaluations up to it
    assert (tmp_path / "eval_history.jsonl").read_text() == good[0] + "\n"
    (tmp_path / "train_seconds.json").write_text('["not", "a", "table"]')
    assert _train_seconds(tmp_path, 64) is None
    (tmp_path / "train_seconds.json").write_text('{"64": 12.5}')
    assert _train_seconds(tmp_path, 64) == 12.5


def test_the_card_names_the_config_and_command_that_trained_the_run(tmp_path):
    """The card named configs/train/<name>.yaml and its command whatever the run had changed: a
    copy of quick.yaml with ent_coef 0.02 got quick.yaml's command, which trains another model.
    Now: the shipped file and its command (with --total-timesteps when the run's differs) only
    when the run's config is that file's; else the run's own config.yaml."""
    from agents.cli.provenance import shown
    from agents.train.export import _reproduction
    from agents.train.train_config import read_config
    quick = REPO / "configs" / "train" / "quick.yaml"
    run = tmp_path / "run"
    run.mkdir()
    same = read_config(quick).to_yaml()
    assert _reproduction({**same, "seed": 3}, run, REPO) == (
        "configs/train/quick.yaml", "python scripts/train.py --config configs/train/quick.yaml --seed 3")
    assert _reproduction({**same, "total_timesteps": 1024}, run, REPO)[1] == (
        "python scripts/train.py --config configs/train/quick.yaml --seed 0 --total-timesteps 1024")
    changed = {**same, "ppo": {**same["ppo"], "ent_coef": 0.02}}
    own = shown(run / "config.yaml", REPO)
    assert _reproduction(changed, run, REPO) == (own, f"python scripts/train.py --config {own}")
    # a name of no shipped file: the run's own too (it said "--config None")
    assert _reproduction({**same, "name": "mine"}, run, REPO)[0] == own
