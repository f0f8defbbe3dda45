"""RLlib (agents/train/rllib.py, scripts/train_rllib.py): the masking module, the export to the
project's policy format, training on RuneRun-v0 and in the duel, and the acceptance run (RLlib
PPO beats the random agent with 95% intervals apart on 200 runs).

Without Ray (the ray extra) the RLlib tests are skipped, saying so; the config checks run
either way (a bad config is refused before Ray is needed)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TRAIN_RLLIB = ROOT / "scripts" / "train_rllib.py"
QUICK = ROOT / "configs" / "rllib" / "quick.yaml"
DUEL_QUICK = ROOT / "configs" / "rllib" / "duel_quick.yaml"
HAVE_RAY = importlib.util.find_spec("ray") is not None and importlib.util.find_spec("torch") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install -e \".[ray]\")")


def train(*args, timeout=900):
    return subprocess.run([sys.executable, str(TRAIN_RLLIB), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def tiny_config(tmp_path: Path, base: Path = QUICK, **changes) -> Path:
    """The quick config cut to one iteration of 512 steps (one evaluation, 2 final runs)."""
    cfg = yaml.safe_load(base.read_text())
    cfg.update(total_timesteps=512, checkpoint_every=512, final_eval_episodes=2)
    cfg["ppo"].update(train_batch_size=512, minibatch_size=128, num_epochs=1)
    cfg["model"] = {"net_arch": [32, 32]}
    cfg["eval"].update(every=512, episodes=2)
    cfg.update(changes)
    path = tmp_path / f"{cfg['name']}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


# -- the config, without Ray -----------------------------------------------------------------------
@pytest.mark.outside_mutation_check
@pytest.mark.parametrize("change, words", [
    ({"learning_rate": 0.1}, ["unknown key 'learning_rate'", "ppo"]),
    ({"lr": 0.1}, ["unknown key 'lr'; did you mean ppo.lr?"]),
    ({"ppo": {"lr": -1}}, ["ppo.lr must be > 0"]),
    ({"env_id": "CartPole-v1"}, ["env_id", "rune_env/RuneDuel-v0"]),
    ({"ppo": {"train_batch_size": 64, "minibatch_size": 128}}, ["minibatch_size", "train_batch_size"]),
    ({"model": {"net_arch": [64, 0]}}, ["net_arch"]),
    # an exported policy's bounds (16 layers of at most 16384): 2^24 wide was 64 GiB a worker
    ({"model": {"net_arch": [2**24]}}, ["net_arch sizes must be in 1..16384"]),
    ({"model": {"net_arch": [8] * 17}}, ["net_arch", "at most 16"]),
    # a batch of 10^7 steps of 1031 observation values: 62 GiB; lr 1e300 overflowed in Adam
    ({"ppo": {"train_batch_size": 10**7, "minibatch_size": 256}},
     ["ppo.train_batch_size 10000000: a batch would hold 61.", "more than 8 GiB"]),
    ({"ppo": {"lr": 1e300}}, ["ppo.lr"]),
    # the duel's evaluation opponent is checked before Ray starts (it failed after training)
    ({"env_id": "rune_env/RuneDuel-v0", "env_kwargs": {"rank": "apprentice"},
      "eval": {"every": 0, "opponent": "nobody"}}, ["eval.opponent", "unknown agent 'nobody'"]),
    ({"env_kwargs": {"rank": "wizard"}}, ["env_kwargs", "rank"]),
])
def test_bad_config_is_one_error_line_and_writes_nothing(tmp_path, change, words, script_main):
    """(main(argv) in this process: the config is refused before anything starts, so a process
    of its own would add only its start; --help below runs one.)"""
    cfg = yaml.safe_load(QUICK.read_text())
    cfg.update(change)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = script_main("train_rllib", "--config", path, "--runs-dir", tmp_path / "runs")
    assert r.returncode == 2
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and all(w in line for w in words), r.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.outside_mutation_check
def test_help_works_without_starting_ray():
    r = train("--help")
    assert r.returncode == 0 and "--num-cpus" in r.stdout and "default" in r.stdout


@pytest.mark.outside_mutation_check
@pytest.mark.skipif(HAVE_RAY, reason="Ray is installed: this checks the message without it")
def test_without_ray_a_valid_config_says_what_to_install(tmp_path):
    r = train("--config", QUICK, "--runs-dir", tmp_path / "runs")
    assert r.returncode == 2 and 'pip install -e ".[ray]"' in r.stderr, r.stderr
    assert not (tmp_path / "runs").exists()


# -- the module and its export ---------------------------------------------------------------------
@needs_ray
def test_module_masks_illegal_actions_and_exports_to_policy_agent(tmp_path):
    """The masked logits are FLOAT_MIN exactly where the mask is 0 and the raw logits elsewhere;
    sampling from them never picks an illegal action; the export gives the same logits in
    sb3-contrib's policy (float32) and PolicyAgent, loading the .pt, chooses their argmax."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    from agents.policy import PolicyAgent
    from agents.train.rllib import MaskedActorCritic, export_module, make_env, to_sb3_policy

    torch.manual_seed(0)        # the module's initial weights: the same test every time
    env = make_env("rune_env/RuneRun-v0", {"opponents": "generator"})
    module = MaskedActorCritic(observation_space=env.observation_space,
                               action_space=env.action_space,
                               model_config={"net_arch": [32, 16], "activation": "relu"})
    obs_list = []
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs_list.append(obs)
        legal = np.flatnonzero(obs["action_mask"])
        obs, _r, term, trunc, _i = env.step(int(rng.choice(legal)))
        if term or trunc:
            obs, _ = env.reset(seed=4)
    batch = {k: torch.as_tensor(np.stack([o[k] for o in obs_list])) for k in ("observation", "action_mask")}
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS]
        raw = module.pi_head(module.pi_body(batch["observation"]))
    mask = batch["action_mask"].bool()
    assert torch.all(logits[~mask] == FLOAT_MIN)
    assert torch.equal(logits[mask], raw[mask])
    draws = torch.distributions.Categorical(logits=logits).sample((50,))
    assert bool(mask.gather(1, draws.T).all())

    policy = to_sb3_policy(module, drop_wait=False)
    with torch.no_grad():
        sb3_logits = policy.get_distribution(batch["observation"]).distribution.logits
    # SB3's Categorical normalises its logits: compare log-probabilities of the raw logits
    assert torch.allclose(sb3_logits, torch.log_softmax(raw, -1), atol=1e-5)
    path = tmp_path / "p.pt"
    export_module(module, path, drop_wait=False, dtype="float32")
    agent = PolicyAgent(path)
    # the same action as RLlib's argmax wherever its two best legal logits are further apart
    # than the two frameworks' float differences (1e-5 above): an untrained module's logits are
    # about 1e-4 apart, and a nearer pair may be ordered either way by the two computations
    compared = 0
    for o, lg, m in zip(obs_list, logits, mask):
        legal = lg[m]
        top2 = torch.topk(legal, 2).values if len(legal) > 1 else None
        if top2 is not None and float(top2[0] - top2[1]) <= 1e-4:
            continue
        assert agent.act(o["observation"], o["action_mask"].astype(bool)) == int(torch.argmax(lg))
        compared += 1
    assert compared >= 10


@needs_ray
def test_duel_module_export_drops_wait():
    """A duel module has 594 actions (the run's 593 and wait); its export has 593 and 1780 inputs,
    the shape of the league's policies (agents/models/league_s0.pt)."""
    from agents.train.rllib import DUEL_ENV, MAIN_POLICY, MaskedActorCritic, make_env, to_sb3_policy

    env = make_env(DUEL_ENV, {})
    space, actions = env.observation_space["player_0"], env.action_space["player_0"]
    module = MaskedActorCritic(observation_space=space, action_space=actions,
                               model_config={"net_arch": [16]})
    policy = to_sb3_policy(module, drop_wait=True)
    assert actions.n == 594 and policy.action_space.n == 593
    assert policy.observation_space.shape == (1780,)
    assert MAIN_POLICY == "main"


# -- training ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny training run ("a", the quick config cut to 512 steps), shared by the two tests
    below: the first reads its run directory, the second trains a second run "b" of the same
    config and seed beside it, compares, and resumes "b" (a Ray start and a training fewer)."""
    base = tmp_path_factory.mktemp("rllib")
    cfg = tiny_config(base)
    runs = base / "runs"
    r = train("--config", cfg, "--runs-dir", runs, "--run-name", "a", "--num-cpus", 2,
              "--no-progress")
    return {"result": r, "config": cfg, "runs": runs}


@pytest.mark.outside_mutation_check
@needs_ray
def test_train_rllib_writes_its_run_and_the_policy_plays_in_evaluate(tiny_run, tmp_path):
    r = tiny_run["result"]
    assert r.returncode == 0, r.stderr
    run = tiny_run["runs"] / "a"
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["run_dir"] == str(run) and summary["timesteps"] >= 512
    for name in ("config.yaml", "final_policy.pt", "final_policy.json", "eval.json",
                 "eval_history.jsonl", "train_seconds.json"):
        assert (run / name).is_file(), name
    assert list((run / "checkpoints").glob("algo_*"))
    assert list((run / "tb").glob("events.out.tfevents.*"))
    card = json.loads((run / "final_policy.json").read_text())
    assert card["trainer"] == "rllib" and card["timesteps"] == summary["timesteps"]
    history = [json.loads(line) for line in (run / "eval_history.jsonl").read_text().splitlines()]
    assert history and "battle_win_rate" in history[0]
    ev = subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--agents",
                         str(run / "final_policy.pt"), "--episodes", "2", "--opponents", "generator",
                         "--json", "--no-progress", "--out", str(tmp_path / "ev")],
                        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert ev.returncode == 0, ev.stderr
    (played,) = json.loads(ev.stdout)["agents"].values()
    assert played["episodes"] == 2
    # TensorBoard's tags
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(run / "tb"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"rllib/episode_return_mean", "learner/policy_loss", "learner/vf_loss",
            "eval/battle_win_rate", "time/steps_per_second"} <= tags, tags


@pytest.mark.outside_mutation_check
@needs_ray
def test_train_rllib_is_reproducible_and_resumes(tiny_run):
    """The same config and seed twice: the same exported policy, byte for byte (the driver
    samples; torch on one thread). Then --resume trains the second run on to 1024 steps."""
    assert tiny_run["result"].returncode == 0, tiny_run["result"].stderr
    cfg, runs = tiny_run["config"], tiny_run["runs"]
    r = train("--config", cfg, "--runs-dir", runs, "--run-name", "b", "--num-cpus", 2,
              "--no-progress")
    assert r.returncode == 0, r.stderr
    assert (runs / "a" / "final_policy.pt").read_bytes() == (runs / "b" / "final_policy.pt").read_bytes()
    # a copy whose checkpoint had a pickle replaced (anyone's bytes: they would run as code) is
    # refused in one line before Ray starts; the signed original resumes
    import shutil
    shutil.copytree(runs / "b", runs / "c")
    (ckpt,) = (runs / "c" / "checkpoints").glob("algo_*[0-9]")
    assert (ckpt.parent / f"{ckpt.name}.sig").is_file()
    pkl = sorted(ckpt.rglob("*.pkl"))[0]
    pkl.write_bytes(pkl.read_bytes() + b"\x00")
    r = train("--config", cfg, "--runs-dir", runs, "--run-name", "c", "--resume",
              "--total-timesteps", 1024, "--num-cpus", 2, "--no-progress")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "an RLlib checkpoint is a directory of pickled Python" in r.stderr
    r = train("--config", cfg, "--runs-dir", runs, "--run-name", "b", "--resume",
              "--total-timesteps", 1024, "--num-cpus", 2, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "resumed from" in r.stdout
    assert json.loads(r.stdout.strip().splitlines()[-1])["timesteps"] >= 1024
    assert len(list((runs / "b" / "checkpoints").glob("algo_*[0-9]"))) == 2   # (and their .sig)
    r = train("--config", cfg, "--runs-dir", runs, "--run-name", "a", "--no-progress")
    assert r.returncode == 2 and "exists" in r.stderr


@pytest.mark.outside_mutation_check
@needs_ray
def test_train_rllib_self_play_in_the_duel(tmp_path):
    """The duel through RLlib's PettingZoo wrapper, both seats one policy; the exported policy
    plays duels (agents/evaluation/duels.py) and runs."""
    from agents.evaluation.duels import play_match
    from agents.policy import PolicyAgent

    runs = tmp_path / "runs"
    r = train("--config", tiny_config(tmp_path, DUEL_QUICK), "--runs-dir", runs, "--run-name", "d",
              "--num-cpus", 2, "--no-progress")
    assert r.returncode == 0, r.stderr
    res = json.loads((runs / "d" / "eval.json").read_text())
    assert res["games"] == 2 and res["opponent"] == "greedy"
    agent = PolicyAgent(runs / "d" / "final_policy.pt")
    assert agent.observation_size == 1780
    assert play_match(agent, agent, 2, seed=1)["games"] == 2


# -- the acceptance run --------------------------------------------------------------------------------
@pytest.mark.outside_mutation_check
@needs_ray
def test_rllib_ppo_beats_random_with_intervals_apart(tmp_path):
    """configs/rllib/apprentice.yaml's learner, cut to BEATS_RANDOM_STEPS steps, against the budget
    drafter at the apprentice rank: on the same 200 evaluation runs its battle win rate's 95%
    interval lies wholly above the random agent's (random: 0.127 [0.105, 0.154] on seed 0,
    scripts/evaluate.py --agents random --episodes 200 --opponents generator). Budget: the issue
    asks for 15 minutes on 2 CPUs."""
    from agents import make_agent
    from agents.evaluation.runs import evaluate
    from agents.policy import PolicyAgent

    runs = tmp_path / "runs"
    r = train("--config", ROOT / "configs" / "rllib" / "apprentice.yaml", "--runs-dir", runs,
              "--run-name", "acc", "--total-timesteps", BEATS_RANDOM_STEPS, "--num-cpus", 2,
              "--no-progress", timeout=900)
    assert r.returncode == 0, r.stderr
    kwargs = {"rank": "apprentice", "opponents": "generator"}
    learned = evaluate(PolicyAgent(runs / "acc" / "final_policy.pt"), 200, 0, kwargs)
    random = evaluate(make_agent("random", seed=0), 200, 0, kwargs)
    assert learned["battle_ci"][0] > random["battle_ci"][1], (learned["battle_ci"], random["battle_ci"])


BEATS_RANDOM_STEPS = 100_000
