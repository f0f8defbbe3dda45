"""Smoke tests of scripts/train.py, run as the user runs them (subprocesses): --resume, bad input
(the bad-config and bad-argument cases call its main(argv) in this process, tests/conftest.py's
`script_main`), torch threads and --help.

Not battle-rule tests (no `Covers:` ids), so the module is marked `outside_mutation_check`. Resume
tests work on copies of the shared tiny training run (tests/conftest.py's `smoke`); the helpers are
tests/agents/test_train_runs.py's. Needs the `train` extra; skipped without it.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from test_train_runs import (  # noqa: E402
    EVALUATE, REPO, TRAIN, accumulator, assert_one_line_error, copy_run, files_of, run,
    script_module, steps_of, summary_of, tiny_config)

pytestmark = pytest.mark.outside_mutation_check


# -- train.py: --resume ----------------------------------------------------------------------------
def test_train_resume_of_a_finished_run_changes_nothing(smoke, tmp_path, script_main):
    """A finished run says so and exits 0; final model, policy, evaluation and timings stay as
    they are (found by --run-name, or as the newest run of the config's name and seed). (main(argv)
    in this process: nothing is trained, so a process of its own adds only its start.)"""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    names = ("final_model.zip", "final_policy.pt", "final_policy.json", "eval.json", "train_seconds.json")
    before = files_of(d, *names)
    for args in (("--run-name", d.name), ("--config", smoke["config"], "--seed", 1),
                 ("--run-name", d.name, "--total-timesteps", 256),
                 ("--run-name", d.name, "--total-timesteps", 128)):
        r = script_main("train", "--runs-dir", d.parent, "--resume", *args)
        assert r.returncode == 0, (args, r.stderr)
        assert "is finished" in r.stdout and "--total-timesteps" in r.stdout, r.stdout
        assert summary_of(r)["timesteps"] == 256
        assert files_of(d, *names) == before, args
        assert sorted(p.name for p in (d / "checkpoints").glob("*.zip")) == \
            ["model_128_steps.zip", "model_256_steps.zip"]


def test_train_resume_continues_the_run(smoke, tmp_path):
    """A larger --total-timesteps trains a finished run on, from its final model."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    first = json.loads((d / "eval.json").read_text())["train_seconds"]
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", d.parent, "--resume",
            "--total-timesteps", 512)
    assert r.returncode == 0, r.stderr
    assert "final_model.zip" in r.stdout and "256 steps" in r.stdout
    summary = summary_of(r)
    assert Path(summary["run_dir"]) == d and summary["timesteps"] == 512
    # 256 more timesteps: checkpoints at 384 and 512 join the old ones, in the same run dir
    assert sorted(p.name for p in (d / "checkpoints").glob("*.zip")) == \
        ["model_128_steps.zip", "model_256_steps.zip", "model_384_steps.zip", "model_512_steps.zip"]
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 512
    ev = json.loads((d / "eval.json").read_text())
    assert ev["timesteps"] == 512 and ev["train_seconds"] > first      # both sessions counted
    assert json.loads((d / "final_policy.json").read_text())["timesteps"] == 512
    assert yaml.safe_load((d / "config.yaml").read_text())["total_timesteps"] == 512
    # TensorBoard continues the same run (run_1), with steps past the resume point
    assert [p.name for p in (d / "tb").iterdir()] == ["run_1"]
    ea = accumulator(d / "tb" / "run_1")
    assert steps_of(ea, "rollout/ep_len_mean")[-1] == 512
    assert max(steps_of(ea, "game/battle_win_rate")) > 256
    assert steps_of(ea, "eval/clear_rate") == [256, 512]


def test_train_resume_a_killed_run(smoke, tmp_path):
    """A run killed after its first checkpoint continues from it; the seconds before count."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    for name in ("final_model.zip", "final_policy.pt", "final_policy.json", "eval.json",
                 "checkpoints/model_256_steps.zip"):
        (d / name).unlink()
    before = json.loads((d / "train_seconds.json").read_text())["128"]
    r = run(TRAIN, "--runs-dir", d.parent, "--resume", "--run-name", d.name, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "model_128_steps.zip" in r.stdout and "128 steps" in r.stdout
    ev = json.loads((d / "eval.json").read_text())
    assert ev["timesteps"] == 256 and ev["train_seconds"] > before
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256


def test_train_resume_without_a_checkpoint_exits_2(smoke, tmp_path, script_main):
    """(main(argv) in this process, as for the other bad input: each case ends before training.)"""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    # nothing to resume at all
    r = script_main("train", "--config", smoke["config"], "--run-name", "never_ran",
                    "--runs-dir", tmp_path / "empty_runs", "--resume")
    assert_one_line_error(r, "never_ran")
    r = script_main("train", "--config", smoke["config"], "--runs-dir", tmp_path / "empty_runs",
                    "--resume")
    assert_one_line_error(r, "nothing to resume")
    # a killed run directory whose checkpoints are gone
    d = copy_run(smoke, tmp_path)
    shutil.rmtree(d / "checkpoints")
    (d / "final_model.zip").unlink()
    r = script_main("train", "--config", smoke["config"], "--seed", 1, "--runs-dir", d.parent,
                    "--resume")
    assert_one_line_error(r, "checkpoint")


def test_train_resume_skips_a_checkpoint_that_does_not_load(smoke, tmp_path, script_main):
    """A kill during a save left the newest checkpoint truncated (as SB3's own save did): the
    resume says so and goes on from the newest one that loads."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    (d / "final_model.zip").unlink()                       # killed before the end
    latest = d / "checkpoints" / "model_256_steps.zip"
    latest.write_bytes(latest.read_bytes()[:1000])        # truncated
    r = run(TRAIN, "--config", smoke["config"], "--seed", 1, "--runs-dir", d.parent, "--resume",
            "--no-progress")
    assert r.returncode == 0, r.stderr
    skipped = [line for line in r.stdout.splitlines() if line.startswith("skipped: ")]
    assert skipped == [f"skipped: {latest}: not a stable-baselines3 checkpoint (not a zip archive; "
                       f"truncated or corrupt?)"]
    assert "resuming from " + str(d / "checkpoints" / "model_128_steps.zip") in r.stdout
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256
    # when none loads (here: none signed on this machine), one line says so, naming the newest
    # (main(argv) in this process: it ends before training)
    d2 = copy_run(smoke, tmp_path / "again")
    for sig in d2.rglob("*.zip.sig"):
        sig.unlink()
    (d2 / "final_model.zip").unlink()
    r = script_main("train", "--runs-dir", d2.parent, "--resume", "--run-name", d2.name)
    assert_one_line_error(r, "no saved model loads (2 tried", "model_256_steps.zip", "--trust-pickle")


def _weights(path: Path) -> dict:
    """A saved model's policy weights and optimizer state, as tensors."""
    from agents.policy import load_model
    model = load_model(path)
    opt = model.policy.optimizer.state_dict()["state"]
    return {"steps": model.num_timesteps, "policy": model.policy.state_dict(),
            "optimizer": {f"{i}.{k}": v for i, s in opt.items() for k, v in s.items()
                          if hasattr(v, "shape")}}


def assert_same_weights(a: Path, b: Path) -> None:
    import torch
    wa, wb = _weights(a), _weights(b)
    assert wa["steps"] == wb["steps"]
    for part in ("policy", "optimizer"):
        assert wa[part].keys() == wb[part].keys()
        differ = [k for k in wa[part] if not torch.equal(wa[part][k], wb[part][k])]
        assert not differ, (part, differ)


def test_a_resumed_run_is_the_uninterrupted_run(tmp_path):
    """Killed at a checkpoint and resumed, or stopped at that step and resumed with a larger
    --total-timesteps, a run (the quick config, shrunk) ends with the uninterrupted run's weights
    and optimizer state bit for bit, its checkpoints on the same steps, and the same evaluations
    in eval_history.jsonl (evaluations every 192 steps, off the checkpoints' grid: at the rollout
    boundaries at or past 192 and 384, 256 and 384 with rollouts of 128 steps; the killed
    session's evaluation past its last checkpoint is dropped and made again, not doubled; the
    stopped session leaves its last step to its final evaluation, and the resumed one makes the
    periodic evaluation of that step at its first boundary, as the straight run did)."""
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps=512, checkpoint_every=256,
                         eval={"every": 192, "episodes": 2, "seed": 0})
    cfg = yaml.safe_load(config.read_text())
    cfg["ppo"]["n_epochs"] = 2
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    runs = tmp_path / "runs"

    def train(*args):
        r = run(TRAIN, "--runs-dir", runs, "--no-progress", *args)
        assert r.returncode == 0, r.stderr[-3000:]
        return r

    train("--config", config, "--run-name", "straight")
    straight = runs / "straight"
    history = (straight / "eval_history.jsonl").read_text()
    assert [json.loads(line)["timesteps"] for line in history.splitlines()] == [256, 384]
    ckpts = sorted(p.name for p in (straight / "checkpoints").glob("*.zip"))
    assert ckpts == ["model_256_steps.zip", "model_512_steps.zip"]

    # killed just after its checkpoint at 256 (its evaluation at 384 made, then the kill)
    killed = runs / "killed"
    shutil.copytree(straight, killed)
    for p in [*killed.glob("final_*"), killed / "eval.json", *killed.glob("checkpoints/model_512_*")]:
        p.unlink()
    r = train("--resume", "--run-name", "killed")
    assert "resuming from " + str(killed / "checkpoints" / "model_256_steps.zip") in r.stdout
    assert "not exact" not in r.stdout
    # stopped at 256 (its final model), then trained on to 512
    train("--config", config, "--run-name", "stopped", "--total-timesteps", 256)
    stopped = runs / "stopped"
    r = train("--resume", "--run-name", "stopped", "--total-timesteps", 512)
    assert "resuming from " + str(stopped / "final_model.zip") in r.stdout
    assert "not exact" not in r.stdout

    for d in (killed, stopped):
        assert_same_weights(straight / "final_model.zip", d / "final_model.zip")
        assert_same_weights(straight / "checkpoints" / "model_512_steps.zip",
                            d / "checkpoints" / "model_512_steps.zip")
        assert sorted(p.name for p in (d / "checkpoints").glob("*.zip")) == ckpts
        assert (d / "eval_history.jsonl").read_text() == history, d.name
        ev, ev0 = (json.loads((x / "eval.json").read_text()) for x in (d, straight))
        assert {k: v for k, v in ev.items() if k != "train_seconds"} == \
            {k: v for k, v in ev0.items() if k != "train_seconds"}
    # TensorBoard: SB3's and the game's scalars on the same steps with the same values (the
    # stopped run: the killed one's tb/ still holds the events its session wrote past 256; time/*
    # is wall-clock, and eval/* has the stopped session's final evaluation at 256 too)
    def scalars(d):
        ea = accumulator(d / "tb" / "run_1")
        return {t: [(e.step, e.value) for e in ea.Scalars(t)] for t in ea.Tags()["scalars"]
                if t.split("/")[0] in ("train", "rollout", "game")}
    expected = scalars(straight)
    assert "train/loss" in expected and "rollout/ep_rew_mean" in expected
    assert scalars(stopped) == expected


def test_a_checkpoint_without_its_resume_state_resumes_and_says_so(smoke, tmp_path):
    """A checkpoint whose resume state is missing (a run from before it) still resumes, from new
    episodes, with a line saying the run is no longer the uninterrupted one."""
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    for name in ("final_model.zip", "final_model.state.json", "eval.json",
                 "checkpoints/model_256_steps.zip", "checkpoints/model_128_steps.state.json"):
        (d / name).unlink()
    r = run(TRAIN, "--runs-dir", d.parent, "--resume", "--run-name", d.name, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stdout.splitlines() if line.startswith("not exact: ")] == \
        [f"not exact: {d / 'checkpoints' / 'model_128_steps.state.json'}: missing; the envs start "
         f"new episodes and the generators are reseeded, so the run goes on but is no longer the "
         f"uninterrupted one"]
    from agents.policy import load_model
    assert load_model(d / "final_model.zip").num_timesteps == 256



def test_a_checkpoint_of_another_run_is_refused(smoke, tmp_path):
    """A checkpoint copied from a run of another config (here: the run's config.yaml edited to
    another evaluation seed, which is the same to the check) trained on, under a config.yaml
    that was not its own (another net_arch's weights kept training under a config saying 64).
    Each checkpoint's signature names the run that saved it (resume.run_identity); another is
    one line, before anything is written. Its state alone, of another run, is not put back
    (load_state: ResumeStateError)."""
    from agents.train.resume import ResumeStateError, load_state
    assert smoke["result"].returncode == 0, smoke["result"].stderr
    d = copy_run(smoke, tmp_path)
    for name in ("final_model.zip", "final_model.state.json", "eval.json",
                 "checkpoints/model_256_steps.zip", "checkpoints/model_256_steps.state.json"):
        (d / name).unlink()
    cfg = yaml.safe_load((d / "config.yaml").read_text())
    cfg["eval"]["seed"] += 1
    (d / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    before = files_of(d, "config.yaml")
    r = run(TRAIN, "--runs-dir", d.parent, "--resume", "--run-name", d.name, "--no-progress")
    checkpoint = d / "checkpoints" / "model_128_steps.zip"
    assert_one_line_error(r, f"{checkpoint}: saved by a run of another config than "
                             f"{d / 'config.yaml'}")
    assert files_of(d, "config.yaml") == before and not (d / "final_model.zip").exists()
    with pytest.raises(ResumeStateError, match="the state of another run"):
        load_state(checkpoint, 128, run="0123456789abcdef")


def test_a_resume_state_that_does_not_fit_the_envs_is_refused_whole(tmp_path):
    """check_state refuses, in one line and before anything is changed, a state saved with
    another number of envs, observations of another shape, or an env state its env refuses (a
    rank out of range); the envs keep their own state."""
    from agents.train.resume import ResumeStateError, check_state, collect_state
    venv, model = _trained(n_envs=2, steps=32)
    state = collect_state(model, [])
    check_state(state, venv, "s.json")         # its own state fits
    before = venv.env_method("get_state")

    def refused(bad: dict, words: str) -> None:
        with pytest.raises(ResumeStateError) as e:
            check_state(bad, venv, "s.json")
        assert str(e.value).startswith("s.json: ") and words in str(e.value), str(e.value)
        assert "\n" not in str(e.value)
        assert json.dumps(venv.env_method("get_state"), default=str) == \
            json.dumps(before, default=str)

    refused({**state, "envs": state["envs"][:1]}, "1 envs saved, 2 now")
    one_env = {**state["last_obs"], "shape": [1, state["last_obs"]["shape"][1] * 2]}
    refused({**state, "last_obs": one_env}, "its observations have shape (1, 2062)")
    # env 1's run at rank 99: env 0's entry is fine, and env 0 must not be changed either
    broken = json.loads(json.dumps(state["envs"]))
    broken[1]["env"]["rank"] = 99
    refused({**state, "envs": broken}, "env 1: ")
    venv.close()


def test_a_resume_state_saved_before_the_rules_time_limit_still_resumes_exactly(tmp_path):
    """Checkpoints saved before the fifty-first session kept the step count of a TimeLimit
    beneath PassiveEnvChecker; the stack now has RulesTimeLimit outermost under the Monitor. Such
    a state (made here from today's by moving the entry back) fits, and its count goes to the
    RulesTimeLimit: without that it resumed "not exact" (new episodes, reseeded generators)."""
    from agents.train.resume import check_state, collect_state
    venv, model = _trained(n_envs=1, steps=16)
    state = collect_state(model, [])
    (env_state,) = state["envs"]
    names = [n for n, _ in env_state["wrappers"]]
    assert names == ["Monitor", "RulesTimeLimit", "OrderEnforcing", "PassiveEnvChecker"]
    count = env_state["wrappers"][1][1]["_elapsed_steps"]
    assert count > 0
    old = [w for w in env_state["wrappers"] if w[0] != "RulesTimeLimit"]
    old.append(["TimeLimit", {"_elapsed_steps": count}])
    old_state = {**state, "envs": [{**env_state, "wrappers": old}]}
    check_state(old_state, venv, "s.json")
    (limit,) = [w for w in _stack(venv.envs[0]) if type(w).__name__ == "RulesTimeLimit"]
    limit._elapsed_steps = 0
    venv.env_method("set_resume_state", old_state["envs"][0])
    assert limit._elapsed_steps == count
    venv.close()


def _trained(n_envs: int, steps: int):
    """A tiny MaskablePPO of seed 0 trained `steps` steps on `n_envs` envs: (venv, model)."""
    from agents.train.ppo import make_venv, new_model, seed_everything
    from agents.train.train_config import validate_config
    cfg = validate_config({"env_kwargs": {"opponents": "generator"}, "n_envs": n_envs,
                           "seed": 0, "vec_env": "dummy",
                           "ppo": {"n_steps": 16, "batch_size": 16},
                           "policy_kwargs": {"net_arch": [8]}}, "test")
    seed_everything(0)
    venv = make_venv(cfg)
    model = new_model(cfg, venv)
    model.learn(total_timesteps=steps)
    return venv, model


def _stack(env) -> list:
    out = []
    while hasattr(env, "env"):
        out.append(env)
        env = env.env
    return out


# -- train.py: bad input ---------------------------------------------------------------------------
BAD_CONFIGS = {
    "unknown key": ({"learning_rate": 0.001}, "learning_rate"),      # belongs under ppo:
    "unknown ppo key": ({"ppo": {"n_stepz": 64}}, "ppo.n_stepz"),
    "unknown eval key": ({"eval": {"evry": 64}}, "eval.evry"),
    "negative timesteps": ({"total_timesteps": -5}, "total_timesteps"),
    "no envs": ({"n_envs": 0}, "n_envs"),
    "not a number": ({"n_envs": "two"}, "n_envs"),
    "a fraction": ({"checkpoint_every": 12.5}, "checkpoint_every"),
    "a bool": ({"torch_threads": True}, "torch_threads"),
    "bad ppo value": ({"ppo": {"n_steps": 0}}, "ppo.n_steps"),
    "bad gamma": ({"ppo": {"gamma": 1.5}}, "ppo.gamma"),
    "bad masking": ({"masking": "quick"}, "masking must be one of"),    # fast | sb3
    "bad vec_env": ({"vec_env": "threads"}, "vec_env"),
    "bad name": ({"name": "a/b"}, "name"),
    "bad rank": ({"env_kwargs": {"rank": 9, "opponents": "generator"}}, "rank"),
    "bad env option": ({"env_kwargs": {"colour": "red"}}, "colour"),
    "bad env id": ({"env_id": "rune_env/Nope-v0"}, "env_id"),
    # each count within its bound, together too big: 10^7 steps x 2 envs of 1031 observation
    # values and 593 mask entries is 122 GiB (it allocated 22 GiB with one env, then died);
    # 16 layers of 16384 are 4.3e9 weights (and 2 of 8192 trained a policy its loader refused)
    "rollout too big": ({"ppo": {"n_steps": 10_000_000}},
                        "ppo.n_steps x n_envs = 10000000 x 2: the rollout buffer would hold 122."),
    "network too big": ({"policy_kwargs": {"net_arch": [8192, 8192]}},
                        "policy_kwargs.net_arch: the network would have 156,009,042 parameters"),
    "learning rate past 1": ({"ppo": {"learning_rate": 1e300}}, "ppo.learning_rate"),
    "entropy past 100": ({"ppo": {"ent_coef": 1e6}}, "ppo.ent_coef"),
}


@pytest.mark.parametrize("case", list(BAD_CONFIGS))
def test_train_bad_config_exits_2(tmp_path, case, script_main):
    """A bad config: one `error:` line naming the key, exit 2, nothing written."""
    change, words = BAD_CONFIGS[case]
    cfg = yaml.safe_load(tiny_config(tmp_path / "base.yaml").read_text())
    for key, value in change.items():
        if isinstance(value, dict) and key in ("ppo", "eval"):
            cfg[key].update(value)
        else:
            cfg[key] = value
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    args = ("--config", config, "--runs-dir", tmp_path / "runs")
    # the first case in a real process: its stderr, as the user sees it, has no traceback
    r = run(TRAIN, *args) if case == next(iter(BAD_CONFIGS)) else script_main("train", *args)
    assert_one_line_error(r, str(config), words)
    assert not (tmp_path / "runs").exists()               # refused before creating anything


@pytest.mark.parametrize("text,words", [("a: [1, 2\n", "not valid YAML at line"),
                                        ("- 1\n- 2\n", "a YAML mapping")])
def test_train_unreadable_config_exits_2(tmp_path, text, words, script_main):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    r = script_main("train", "--config", config, "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, words)
    r = script_main("train", "--config", tmp_path / "missing.yaml", "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, "missing.yaml", "cannot read")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("args,words", [
    (("--seed", "-1"), "--seed"), (("--seed", "x"), "--seed"),
    (("--total-timesteps", "0"), "--total-timesteps"), (("--run-name", "a/b"), "--run-name"),
    (("--run-name", "x:y"), "--run-name"), ((), "--config"),
])
def test_train_bad_command_line_exits_2(tmp_path, args, words, script_main):
    config = () if not args else ("--config", tiny_config(tmp_path / "tiny.yaml"))
    r = script_main("train", *config, *args, "--runs-dir", tmp_path / "runs")
    assert_one_line_error(r, words)
    assert not (tmp_path / "runs").exists()


def test_config_yaml_numbers_are_read_as_numbers(tmp_path):
    """PyYAML reads 3e-4 and 1e4 as text; the typed config reads them as the numbers they spell."""
    mod = script_module(TRAIN, "scripts_train")
    config = tiny_config(tmp_path / "tiny.yaml", total_timesteps="1e4")
    cfg = yaml.safe_load(config.read_text())
    cfg["ppo"]["learning_rate"] = "3e-4"
    config.write_text(yaml.safe_dump(cfg))
    c = mod.read_config(config)
    assert c.total_timesteps == 10000 and c.ppo.learning_rate == pytest.approx(3e-4)
    assert mod.read_config(config, {"seed": 7}).seed == 7


def test_ppo_section_keys_are_maskableppo_arguments():
    import inspect

    from sb3_contrib import MaskablePPO
    mod = script_module(TRAIN, "scripts_train")
    assert set(mod.PPOConfig.model_fields) <= set(inspect.signature(MaskablePPO.__init__).parameters)


# -- torch threads, help ---------------------------------------------------------------------------
def test_subprocess_envs_set_torch_threads():
    """Each env sets torch's threads as it starts: in a SubprocVecEnv worker (a fresh process
    with torch's default of one thread per core) it is the config's number."""
    code = ("import importlib.util, sys, torch\n"
            f"spec = importlib.util.spec_from_file_location('t', {str(TRAIN)!r})\n"
            "m = importlib.util.module_from_spec(spec); sys.modules['t'] = m\n"
            "spec.loader.exec_module(m)\n"
            "torch.set_num_threads(3)\n"
            "m.make_env_fn('rune_env/RuneRun-v0', {'opponents': 'generator'}, 0, 0, 1)()\n"
            "print(torch.get_num_threads())\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1"]


@pytest.mark.parametrize("script", [TRAIN, EVALUATE], ids=["train", "evaluate"])
def test_every_option_shows_its_default_in_help(script):
    mod = script_module(script, f"scripts_{script.stem}")
    parser = mod.build_parser()
    for action in parser._actions:
        if action.dest == "help":
            continue
        assert action.help and "default" in action.help, (action.option_strings, action.help)
    r = run(script, "--help")
    assert r.returncode == 0 and "default" in r.stdout
