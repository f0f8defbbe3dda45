"""Demonstrations (scripts/collect_demos.py, agents/evaluation/demos.py) and behaviour cloning
(agents/train/pretrain.py, the `pretrain:` section of scripts/train.py's configs): tiny runs of the
greedy drafter, which is fast.

Not battle-rule tests, so the module is marked `outside_mutation_check`. Needs the `train` extra."""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

pytestmark = pytest.mark.outside_mutation_check

REPO = Path(__file__).resolve().parents[2]
COLLECT = REPO / "scripts" / "collect_demos.py"
TRAIN = REPO / "scripts" / "train.py"
ENV = {"rank": "apprentice", "opponents": "generator", "reward_mode": "battle"}


def run(script: Path, *args, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demos") / "greedy.npz"
    r = run(COLLECT, "--agent", "greedy", "--runs", 3, "--seed", 5, "--opponents", "generator",
            "--out", out, "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["steps"] > 0
    return out


def test_demos_are_legal_actions_with_their_rules_hash(demo_file):
    from agents.evaluation.demos import demo_run_seed, load_demos
    from rune_env.envs.run_env import TRAINING_SEED_LIMIT
    from rune_env.rules import default_rules
    d = load_demos(demo_file, default_rules().hash, strict=True)
    legal = d.legal()
    assert legal[np.arange(len(d)), d.actions].all()
    assert d.meta["rules_hash"] == default_rules().hash and d.meta["agent"] == "greedy"
    assert d.meta["runs"] == 3 and d.meta["steps"] == len(d) and d.obs.shape == (len(d), d.meta["obs_size"])
    # training run seeds, never an evaluation's: a clone is not evaluated on the runs it was shown
    assert sorted(set(d.run_seeds.tolist())) == [demo_run_seed(5, i) for i in range(3)]
    assert (d.run_seeds < TRAINING_SEED_LIMIT).all()


def test_same_seed_same_bytes_whatever_the_jobs(demo_file, tmp_path):
    again = tmp_path / "again.npz"
    r = run(COLLECT, "--agent", "greedy", "--runs", 3, "--seed", 5, "--opponents", "generator",
            "--out", again, "--jobs", 2, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert again.read_bytes() == demo_file.read_bytes()


def _rewrite(src: Path, dst: Path, **changes) -> Path:
    """`src` with some arrays replaced (a .npy member per key, written as numpy does)."""
    import io
    with zipfile.ZipFile(src) as z:
        arrays = {n[:-4]: np.lib.format.read_array(io.BytesIO(z.read(n))) for n in z.namelist()}
    arrays.update(changes)
    arrays = {k: v for k, v in arrays.items() if v is not None}
    np.savez(dst, **arrays)
    return dst


def test_a_broken_or_foreign_file_is_one_line(demo_file, tmp_path):
    from agents.evaluation.demos import load_demos
    demos = load_demos(demo_file)
    meta, actions = demos.meta, demos.actions
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip at all")
    foreign = {**meta, "rules_hash": "0000000000000000"}
    cases = {
        garbage: "not a demonstrations file",
        _rewrite(demo_file, tmp_path / "nokey.npz", rewards=None): "missing rewards.npy",
        _rewrite(demo_file, tmp_path / "dtype.npz", actions=actions.astype(np.float64)): "actions must be int32",
        _rewrite(demo_file, tmp_path / "shape.npz", actions=actions[:-1]): "actions has shape",
        _rewrite(demo_file, tmp_path / "illegal.npz",
                 actions=np.full_like(actions, 592)): "illegal under its mask",
        _rewrite(demo_file, tmp_path / "pickle.npz",
                 meta=np.array([{"a": 1}], dtype=object)): "not a demonstrations file",
        # true == 1 in Python; a mapping is no agent's name
        _rewrite(demo_file, tmp_path / "format.npz", meta=np.frombuffer(
            json.dumps({**meta, "format": True}).encode(), np.uint8)): "format True",
        _rewrite(demo_file, tmp_path / "agent.npz", meta=np.frombuffer(
            json.dumps({**meta, "agent": {"a": 1}}).encode(), np.uint8)): "meta agent must be",
    }
    for path, words in cases.items():
        r = run(COLLECT, "--check", path)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and words in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1, r.stderr
    other = _rewrite(demo_file, tmp_path / "foreign.npz",
                     meta=np.frombuffer(json.dumps(foreign).encode(), np.uint8))
    r = run(COLLECT, "--check", other)
    assert r.returncode == 0 and r.stderr.startswith("warning: "), r.stderr
    assert json.loads(r.stdout)["rules_hash"] == "0000000000000000"
    r = run(COLLECT, "--check", other, "--strict")
    assert r.returncode == 2 and "made under rules 0000000000000000" in r.stderr, r.stderr



def test_demonstrations_of_another_env_are_refused_before_anything_is_written(demo_file, tmp_path):
    """A file recorded on an env of another observation size, or whose masks claim another
    number of actions (8 x 4096 = 32768: unpacked, 32 KB a step), is one line naming both sizes,
    from collect_demos --check and from train.py's pretrain section, before a run directory is
    made; an encrypted member is one line too (zipfile would ask for a password)."""
    from agents.evaluation.demos import DemosError, load_demos
    d = load_demos(demo_file)
    n = len(d)
    wide_meta = {**d.meta, "actions": 8 * 4096}
    wide_masks = np.zeros((n, 4096), np.uint8)
    wide_masks[np.arange(n), d.actions // 8] = 1 << (7 - d.actions % 8).astype(np.uint8)
    narrow = _rewrite(demo_file, tmp_path / "narrow.npz", obs=d.obs[:, :-1],
                      meta=np.frombuffer(json.dumps({**d.meta, "obs_size": d.meta["obs_size"] - 1})
                                         .encode(), np.uint8))
    wide = _rewrite(demo_file, tmp_path / "wide.npz", masks=wide_masks,
                    meta=np.frombuffer(json.dumps(wide_meta).encode(), np.uint8))
    load_demos(wide)                  # consistent in itself: its masks are legal for its actions
    cases = {narrow: f"recorded on an env of {d.meta['obs_size'] - 1} observation values and "
                     f"593 actions; this one has {d.meta['obs_size']} and 593",
             wide: f"recorded on an env of {d.meta['obs_size']} observation values and 32768 "
                   f"actions; this one has {d.meta['obs_size']} and 593"}
    for path, words in cases.items():
        r = run(COLLECT, "--check", path)
        assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1, r.stderr
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(yaml.safe_dump({"name": "clone", "env_kwargs": ENV,
                                       "pretrain": {"demos": str(path)}}))
        r = run(TRAIN, "--config", cfg, "--runs-dir", tmp_path / "runs", "--no-progress")
        assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not (tmp_path / "runs").exists()
    # the encrypted flag (bit 0 of the flags, at byte 6 of a member's local header and byte 8
    # of its central directory entry) set on obs.npy: refused unread
    data = bytearray(demo_file.read_bytes())
    with zipfile.ZipFile(demo_file) as z:
        local = z.getinfo("obs.npy").header_offset
    central = data.index(b"PK\x01\x02", data.index(b"obs.npy", local + 30))
    while data[central + 46:central + 53] != b"obs.npy":
        central = data.index(b"PK\x01\x02", central + 4)
    data[local + 6] |= 1
    data[central + 8] |= 1
    locked = tmp_path / "locked.npz"
    locked.write_bytes(bytes(data))
    with pytest.raises(DemosError, match=r"locked.npz: obs.npy is encrypted"):
        load_demos(locked)


def _model(seed: int = 0):
    from agents.train.ppo import make_venv, new_model, seed_everything
    from agents.train.train_config import validate_config
    cfg = validate_config({"env_kwargs": ENV, "n_envs": 1, "seed": seed, "ppo": {"n_steps": 32},
                           "policy_kwargs": {"net_arch": [64, 64]}}, "test")
    seed_everything(seed)
    return new_model(cfg, make_venv(cfg))


def test_cloning_raises_accuracy_and_is_deterministic(demo_file):
    from agents.evaluation.demos import load_demos
    from agents.train.pretrain import PretrainConfig, accuracy, clone
    d = load_demos(demo_file)
    cfg = PretrainConfig(demos=str(demo_file), epochs=30, batch_size=64, learning_rate=0.003)
    weights = []
    for _ in range(2):
        model = _model()
        before = accuracy(model.policy, d)
        history = clone(model.policy, d, cfg, seed=3, gamma=0.99)
        after = accuracy(model.policy, d)
        # An untrained net is near chance (4% here: one of the tens of legal actions of a step).
        # After 30 epochs on these couple of hundred steps a working clone (the masked
        # cross-entropy's gradient reaching the expert's action) picks the expert's action about
        # half the time (greedy reads the run state, which the observation does not show in
        # full, so not all of it); a clone that learnt nothing (a wrong sign, gradients into
        # masked logits only, a detached head) stays near chance.
        assert after > before + 0.3, (before, after)
        assert history[-1]["loss"] < history[0]["loss"]
        weights.append({k: v.clone() for k, v in model.policy.state_dict().items()})
    assert all(bool((weights[0][k] == weights[1][k]).all()) for k in weights[0])


def test_the_pretrain_section_is_checked():
    from agents.train.config import ConfigError
    from agents.train.train_config import validate_config
    for section, words in [({"agent": "greedy", "epochs": 0}, "pretrain.epochs must be >= 1"),
                           ({"agent": "greedy", "batch_size": 1.5}, "pretrain.batch_size"),
                           ({"agent": "greedy", "learning_rate": 0}, "pretrain.learning_rate"),
                           ({"epochs": 3}, "not neither"),
                           ({"agent": "greedy", "demos": "x.npz"}, "not both"),
                           ({"agent": "greedy", "epoch": 3}, "unknown key 'pretrain.epoch'"),
                           ({"demos": "x.npz", "dagger_rounds": 1}, "dagger_rounds needs an agent"),
                           ({"agent": "greedy", "keep": -1}, "pretrain.keep must be >= 0"),
                           ({"agent": "greedy", "keep_end": 101}, "pretrain.keep_end must be <= 100"),
                           ({"demos": "x.npz", "rank": "sage"}, "rank needs an agent")]:
        with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
            validate_config({"pretrain": section}, "x.yaml")
    assert validate_config({"pretrain": {"agent": "greedy"}}, "x.yaml").pretrain.epochs == 10


def test_demonstrations_play_the_sections_own_rank():
    # PPO's env is apprentice (rank 0); pretrain.rank archmage (rank 5 of 0..5) puts every
    # demonstration step at the rank scalar 5 / 5 = 1.0, and a mix of the two gives both 0.0 and
    # 1.0 over 6 runs (each run draws its rank from its seed), nothing else
    from agents.train.pretrain import PretrainConfig, demo_env_kwargs, demonstrations
    from agents.train.config import rules_hash
    from rune_env.envs.observation import SCALARS, ObservationLayout
    from rune_env.rules import default_rules
    at = ObservationLayout.of(default_rules()).slices["scalars"].start + SCALARS.index("rank")
    plain = PretrainConfig(agent="greedy", runs=2)
    assert demo_env_kwargs(plain, ENV) == ENV
    top = PretrainConfig(agent="greedy", runs=2, rank="archmage")
    assert demo_env_kwargs(top, ENV) == {**ENV, "rank": "archmage"}
    demos = demonstrations(top, 0, ENV, rules_hash(ENV))
    assert set(demos.obs[:, at].tolist()) == {1.0}
    mix = PretrainConfig(agent="greedy", runs=6, rank=["apprentice", "archmage"])
    assert set(demonstrations(mix, 0, ENV, rules_hash(ENV)).obs[:, at].tolist()) == {0.0, 1.0}


def test_dagger_counts_the_steps_where_the_actor_took_the_labelled_action():
    # greedy labelling greedy (both reset with the run seed): the same action at every step, so
    # every step agrees; greedy labelling `random`'s runs: random picks one of the legal actions
    # uniformly, so it agrees on some steps and not all (a run of 2 has dozens of steps with
    # several legal actions). A count of disagreements, or of nothing, fails the first line.
    from agents.evaluation.demos import AGREED, collect_demos
    same = collect_demos("greedy", 2, 0, ENV, actor="greedy")
    assert same.meta[AGREED] == len(same) > 0
    mixed = collect_demos("greedy", 2, 0, ENV, actor="random")
    assert 0 < mixed.meta[AGREED] < len(mixed)
    # without an actor (a demonstrations file) the key is absent: the file's metadata is as before
    assert AGREED not in collect_demos("greedy", 1, 0, ENV).meta


def test_a_bad_pretrain_rank_is_one_line(tmp_path):
    cfg = {"name": "bc", "env_kwargs": ENV, "total_timesteps": 32,
           "pretrain": {"agent": "greedy", "rank": ["apprentice", "grandmaster"]}}
    path = tmp_path / "bc.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = run(TRAIN, "--config", path, "--runs-dir", tmp_path / "runs", "--no-progress")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "pretrain.rank[1] must be a rank name" in r.stderr and "'grandmaster'" in r.stderr
    assert not (tmp_path / "runs").exists()


def _weights(path: Path) -> dict:
    from agents.policy import load_policy
    return load_policy(path).state_dict()


def test_collect_demos_refuses_bad_arguments(tmp_path):
    out = ["--out", tmp_path / "x.npz"]
    for args, words in [([*out, "--runs", 0], "--runs must be"), ([*out, "--rank", "nobody"], "rank"),
                        ([*out, "--agent", "nobody"], "unknown agent"),
                        (["--runs", 1], "--out FILE.npz is required"),
                        ([*out, "--opponents", tmp_path / "none.json"], "none.json")]:
        r = run(COLLECT, *args)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and words in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "x.npz").exists()


def test_train_with_pretrain_logs_pretrain_scalars(tmp_path, demo_file):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    cfg = {"name": "bc", "env_kwargs": ENV, "n_envs": 1, "total_timesteps": 32,
           "ppo": {"n_steps": 32, "batch_size": 16, "n_epochs": 1},
           "policy_kwargs": {"net_arch": [16, 16]}, "final_eval_episodes": 0,
           "pretrain": {"agent": "greedy", "runs": 1, "epochs": 2, "batch_size": 64,
                        "dagger_rounds": 1, "dagger_runs": 1}}
    path = tmp_path / "bc.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = run(TRAIN, "--config", path, "--runs-dir", tmp_path / "runs", "--run-name", "bc",
            "--no-progress")
    assert r.returncode == 0, r.stderr
    run_dir = tmp_path / "runs" / "bc"
    ea = EventAccumulator(str(run_dir / "tb" / "pretrain"))
    ea.Reload()
    assert {"pretrain/loss", "pretrain/accuracy", "pretrain/value_loss"} <= set(ea.Tags()["scalars"])
    # two epochs of cloning, then a DAgger round (the clone plays, greedy labels) and two more
    assert [e.step for e in ea.Scalars("pretrain/loss")] == [1, 2, 3, 4]
    info = json.loads((run_dir / "pretrain.json").read_text())
    assert info["agent"] == "greedy" and len(info["epochs"]) == 4
    assert ea.Scalars("pretrain/dagger_steps")[0].value == info["steps"]   # both runs' steps
    # the clone's agreement with greedy on the clone's own states, one share per DAgger round
    agreement = ea.Scalars("pretrain/dagger_agreement")
    assert len(agreement) == 1 and len(info["dagger_agreement"]) == 1
    assert 0.0 <= info["dagger_agreement"][0] <= 1.0
    assert abs(agreement[0].value - info["dagger_agreement"][0]) < 1e-6
    assert not (run_dir / "pretrain_policy.pt").exists()
    # the same seed again: the same demonstrations, clone and PPO, so the same final weights
    r = run(TRAIN, "--config", path, "--runs-dir", tmp_path / "runs", "--run-name", "bc2",
            "--no-progress")
    assert r.returncode == 0, r.stderr
    a, b = (_weights(tmp_path / "runs" / n / "final_policy.pt") for n in ("bc", "bc2"))
    assert a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)
    # a broken demonstrations file: one line naming the key, nothing written
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"junk")
    cfg["pretrain"] = {"demos": str(bad)}
    path.write_text(yaml.safe_dump(cfg))
    r = run(TRAIN, "--config", path, "--runs-dir", tmp_path / "runs2", "--no-progress")
    assert r.returncode == 2 and "pretrain.demos" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "runs2").exists()


# -- the keep term: cloning during PPO (agents/train/keep.py) -------------------------------------
def test_keep_term_adds_the_scaled_cloning_gradient(demo_file):
    import torch as th

    from agents.evaluation.demos import load_demos
    from agents.train.keep import KeepTerm
    d = load_demos(demo_file)
    from stable_baselines3.common.logger import Logger
    model = _model()
    model.set_logger(Logger(None, []))  # what learn() gives it: the term logs its loss
    model.max_grad_norm = 1e9          # no clipping: the gradient is the term's alone
    term = KeepTerm(model, d, keep=0.5, keep_end=0.5, batch_size=len(d), seed=1)
    params = [p for p in model.policy.parameters()]
    # the whole demonstration set is the minibatch (batch_size = its length), so the gradient
    # the hook must add is 0.5 x d(cross-entropy on all steps)/d(params), computed here by hand
    model.policy.optimizer.zero_grad()
    ce, _ = term.loss(np.arange(len(d)))
    expected = th.autograd.grad(0.5 * ce, params, allow_unused=True)
    model.policy.optimizer.zero_grad()
    for p in params:
        p.grad = th.zeros_like(p)      # PPO's gradient, here nothing
    term._before_step(model.policy.optimizer, (), {})
    for p, g in zip(params, expected):
        want = th.zeros_like(p) if g is None else g
        assert th.allclose(p.grad, want, atol=1e-6), p.shape
    assert any(float(p.grad.abs().sum()) > 0 for p in params)   # a real gradient, not zeros
    # with the term installed, Adam's steps fit the policy to the demonstrations: 60 steps with
    # no PPO gradient raise the accuracy well above the untrained net's near-chance level
    from agents.train.pretrain import accuracy
    before = accuracy(model.policy, d)
    term.install()
    for _ in range(60):
        model.policy.optimizer.zero_grad()
        for p in params:
            p.grad = th.zeros_like(p)
        model.policy.optimizer.step()
    term.remove()
    assert accuracy(model.policy, d) > before + 0.2


def test_keep_term_schedule_and_minibatches_are_functions_of_the_run():
    from agents.evaluation.demos import Demos
    from agents.train.keep import KeepTerm

    class Model:                       # what the term reads of a MaskablePPO
        num_timesteps = 4096
        _current_progress_remaining = 0.25
    n = 50
    demos = Demos(np.zeros((n, 3), np.float32), np.zeros((n, 1), np.uint8), np.zeros(n, np.int32),
                  np.zeros(n, np.float32), np.zeros(n, np.int64), {"actions": 8})
    m = Model()
    term = KeepTerm(m, demos, keep=1.0, keep_end=0.2, batch_size=20, seed=9)
    # linear from keep (progress remaining 1) to keep_end (0): 0.2 + (1.0 - 0.2) x 0.25 = 0.4
    assert term.coefficient() == pytest.approx(0.4)
    first, second = term.minibatch(), term.minibatch()
    assert len(set(first.tolist())) == 20 and not np.array_equal(first, second)
    # a new term (a resumed run) at the same step count draws the same minibatches in order
    again = KeepTerm(m, demos, keep=1.0, keep_end=0.2, batch_size=20, seed=9)
    assert np.array_equal(again.minibatch(), first) and np.array_equal(again.minibatch(), second)
    m.num_timesteps = 8192             # the next rollout's update: other draws
    assert not np.array_equal(again.minibatch(), first)
    # more steps asked than the demonstrations have: each step once
    assert sorted(KeepTerm(m, demos, 1.0, 1.0, 500, 9).minibatch().tolist()) == list(range(n))


def test_train_with_keep_logs_it_and_resumes_exactly(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    cfg = {"name": "keep", "env_kwargs": ENV, "n_envs": 2, "seed": 3, "total_timesteps": 1024,
           "ppo": {"n_steps": 256, "batch_size": 128, "n_epochs": 2},
           "policy_kwargs": {"net_arch": [32, 32]}, "checkpoint_every": 512,
           "metrics_every": 512, "final_eval_episodes": 0,
           "pretrain": {"agent": "greedy", "runs": 2, "epochs": 1, "keep": 1.0}}
    path = tmp_path / "keep.yaml"
    path.write_text(yaml.safe_dump(cfg))
    runs = tmp_path / "runs"
    r = run(TRAIN, "--config", path, "--runs-dir", runs, "--run-name", "whole", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert (runs / "whole" / "demos.npz").is_file()      # kept for a resumed run
    ea = EventAccumulator(str(next((runs / "whole" / "tb").glob("run_*"))))
    ea.Reload()
    assert {"train/keep_loss", "train/keep_accuracy", "train/keep_coef"} <= set(ea.Tags()["scalars"])
    assert ea.Scalars("train/keep_coef")[-1].value == 1.0
    # the same run stopped at 512 steps and resumed to 1024: the same weights, bit for bit (the
    # term's minibatches are drawn from (seed, step count), its demonstrations read back)
    r = run(TRAIN, "--config", path, "--runs-dir", runs, "--run-name", "halves",
            "--total-timesteps", 512, "--no-progress")
    assert r.returncode == 0, r.stderr
    # a resume whose kept demonstrations are broken: one line, before anything is written
    import shutil
    broken = runs / "broken"
    shutil.copytree(runs / "halves", broken)
    (broken / "demos.npz").write_bytes(b"not a zip")
    config_before = (broken / "config.yaml").read_bytes()
    r = run(TRAIN, "--resume", "--runs-dir", runs, "--run-name", "broken", "--total-timesteps",
            1024, "--no-progress")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"error: {broken / 'demos.npz'}: not a demonstrations file") and \
        r.stderr.rstrip().endswith("(the keep term's demonstrations, saved when the run started)")
    assert (broken / "config.yaml").read_bytes() == config_before
    r = run(TRAIN, "--resume", "--runs-dir", runs, "--run-name", "halves", "--total-timesteps",
            1024, "--no-progress")
    assert r.returncode == 0, r.stderr
    a, b = (_weights(runs / n / "final_policy.pt") for n in ("whole", "halves"))
    assert all(bool((a[k] == b[k]).all()) for k in a)
    # and the term changes the training: keep 0 (PPO alone after the same clone) ends elsewhere
    cfg["pretrain"]["keep"] = 0.0
    path.write_text(yaml.safe_dump(cfg))
    r = run(TRAIN, "--config", path, "--runs-dir", runs, "--run-name", "none", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert not (runs / "none" / "demos.npz").exists()
    c = _weights(runs / "none" / "final_policy.pt")
    assert not all(bool((a[k] == c[k]).all()) for k in a)


def test_init_starts_the_clone_from_a_policy_file(demo_file, tmp_path):
    """pretrain.init: the new model's acting weights become the file's (the shipped
    distill_v2_s1.pt, [256, 256]): the same greedy action as the file's own policy on every
    demonstration step, and accuracy() then is the file's; a network of other layers is one
    ValueError naming the file and the fix; through train.py a missing file is one error line and
    nothing is written."""
    from agents.evaluation.demos import load_demos
    from agents.policy import PolicyAgent
    from agents.train.ppo import make_venv, new_model, seed_everything
    from agents.train.pretrain import accuracy, init_from
    from agents.train.train_config import validate_config
    shipped = REPO / "agents" / "models" / "distill_v2_s1.pt"
    cfg = validate_config({"env_kwargs": ENV, "n_envs": 1, "ppo": {"n_steps": 32},
                           "policy_kwargs": {"net_arch": [256, 256]}}, "test")
    seed_everything(0)
    model = new_model(cfg, make_venv(cfg))
    d = load_demos(demo_file)
    init_from(model.policy, str(shipped))
    started, own = PolicyAgent(model), PolicyAgent(str(shipped))
    masks = d.legal()
    assert [started.act(o, m) for o, m in zip(d.obs, masks)] == \
        [own.act(o, m) for o, m in zip(d.obs, masks)]
    assert accuracy(model.policy, d) == accuracy(own.model, d)
    with pytest.raises(ValueError, match=r"pretrain\.init: .*distill_v2_s1\.pt's network .* "
                                         r"set policy_kwargs\.net_arch"):
        init_from(_model().policy, str(shipped))            # a [64, 64] network
    path = tmp_path / "bc.yaml"
    path.write_text(yaml.safe_dump({"name": "bc", "env_kwargs": ENV, "total_timesteps": 32,
                                    "pretrain": {"agent": "greedy", "init": "no/such.pt"}}))
    r = run(TRAIN, "--config", path, "--runs-dir", tmp_path / "runs", "--no-progress")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "pretrain.init" in r.stderr and "no/such.pt" in r.stderr
    assert not (tmp_path / "runs").exists()
