"""scripts/expert_iteration.py (agents/train/expert_iteration.py): an iteration's files, the
policy fitted to its search's actions, the same files for the same arguments, and one-line errors.
Tiny settings (4 archmage runs, 4 rollouts a round, 5 epochs) from the shipped distill_v2_s1.pt."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "expert_iteration.py"
POLICY = "agents/models/distill_v2_s1.pt"
TINY = ["--policy", POLICY, "--runs", "4", "--n", "4", "--epochs", "5", "--no-progress"]


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_an_iteration_fits_the_policy_to_its_search_and_is_reproducible(tmp_path):
    from agents.evaluation.demos import load_demos
    from agents.policy import PolicyAgent
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        r = run(*TINY, "--out", out, "--json")
        assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    row, = report["iterations"]
    assert row["teacher"] == f"sampled:policy={POLICY},n=4,temperature=2"
    assert row["demo_seed"] == 1 and row["runs"] == 4
    # the search's labels are mostly the policy's own greedy actions, and fitting takes more
    # of them (the accuracy on its own demonstrations rises, or is already whole)
    assert 0.5 < row["accuracy_before"] <= row["accuracy"] <= 1.0
    assert row["accuracy"] > row["accuracy_before"] or row["accuracy_before"] == 1.0
    demos = load_demos(outs[1] / "iter_1" / "demos.npz")
    assert len(demos) == row["steps"] and demos.meta["agent"] == row["teacher"]
    # the fitted policy takes the labelled action where the accuracy says, counted here
    fitted = PolicyAgent(str(outs[1] / "iter_1" / "policy.pt"))
    masks = demos.legal()
    hits = sum(fitted.act(o, m) == a for o, m, a in zip(demos.obs, masks, demos.actions))
    assert hits == round(row["accuracy"] * len(demos))
    card = json.loads((outs[1] / "iter_1" / "policy.json").read_text())
    assert card["rules_hash"] == report["rules_hash"] and card["teacher"] == row["teacher"]
    # the same arguments, the same files
    for name in ("iter_1/demos.npz", "iter_1/policy.pt"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


@pytest.mark.parametrize("args,words", [
    (["--n", "0"], "--n"),
    (["--temperature", "0"], "--temperature"),
    (["--iterations", "51"], "--iterations"),
    (["--epsilon", "0"], "--epsilon"),
    (["--epsilon", "1.5"], "--epsilon"),
    (["--core", "pluto"], "core is one of"),
    (["--waste", "-0.1"], "--waste"),
    (["--waste", "inf"], "--waste"),
    (["--invest", "10.5"], "--invest"),
    (["--rank", "grandmaster"], "--rank"),
])
def test_bad_arguments_are_one_line(tmp_path, args, words):
    r = run(*TINY, "--out", tmp_path / "x", *args)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and words in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "x").exists()


def test_a_missing_policy_or_an_existing_folder_is_refused(tmp_path):
    r = run("--policy", "no/such.pt", "--out", tmp_path / "x", "--no-progress")
    assert r.returncode == 2 and "no policy file" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "x").exists()
    (tmp_path / "x").mkdir()
    r = run(*TINY, "--out", tmp_path / "x")
    assert r.returncode == 2 and "exists (--force replaces it)" in r.stderr, r.stderr
    # --force replaces only this script's own output: a folder of anything else is kept
    (tmp_path / "x" / "thesis.tex").write_text("chapter 1")
    r = run(*TINY, "--out", tmp_path / "x", "--force")
    assert r.returncode == 2 and "is not an expert_iteration.py output" in r.stderr, r.stderr
    assert (tmp_path / "x" / "thesis.tex").read_text() == "chapter 1"


def test_a_stop_keeps_the_finished_iterations_and_drops_the_rest(tmp_path):
    """drop_unfinished after a stop: with iteration 1 of 3 listed as finished, iter_2 (begun)
    goes and iter_1 stays; with none finished the whole folder goes."""
    import importlib.util
    import json
    spec = importlib.util.spec_from_file_location("exit_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "out"
    for name in ("iter_1", "iter_2"):
        (out / name).mkdir(parents=True)
    (out / mod.RESULT).write_text(json.dumps({"iterations": [{"iteration": 1}]}))
    mod.drop_unfinished(out)
    assert sorted(p.name for p in out.iterdir()) == ["expert_iteration.json", "iter_1"]
    (out / mod.RESULT).unlink()
    mod.drop_unfinished(out)
    assert not out.exists()


def test_the_teacher_is_named_with_its_knobs():
    """The teacher's agent name carries the settings' knobs, each as it reads back exactly, and
    epsilon only below 1, waste and invest above 0 (their defaults: the names of before the
    knobs)."""
    from agents import make_agent
    from agents.search.sampled import parse_sampled
    from agents.train.expert_iteration import ExitSettings, teacher_name
    from rune_env.rules import default_rules
    assert teacher_name(POLICY, ExitSettings(policy=POLICY)) == \
        f"sampled:policy={POLICY},n=16,temperature=2"
    s = ExitSettings(policy=POLICY, n=8, temperature=2.5, epsilon=0.1, core="moon")
    name = teacher_name(POLICY, s)
    assert name == f"sampled:policy={POLICY},n=8,temperature=2.5,epsilon=0.1,core=moon"
    settings = parse_sampled(name)
    assert (settings.n, settings.temperature, settings.epsilon, settings.core) == \
        (8, 2.5, 0.1, "moon")
    assert make_agent(name, default_rules()).settings.epsilon == 0.1
    s = ExitSettings(policy=POLICY, core="moon", waste=0.5, invest=0.1)
    name = teacher_name(POLICY, s)
    assert name == f"sampled:policy={POLICY},n=16,temperature=2,core=moon,waste=0.5,invest=0.1"
    settings = make_agent(name, default_rules()).settings
    assert (settings.waste, settings.invest) == (0.5, 0.1)


def test_holdout_keeps_the_best_epoch_and_keep_demos_aggregates(tmp_path):
    """--holdout 0.25 --keep-demos 2 over 2 iterations of 4 runs: the second iteration fits both
    iterations' runs (8; 2 of them, a quarter, held out), so its fitted and held-out steps add
    up to both iterations' steps; the exported policy's held-out loss, recomputed here from the
    held-out runs, is the one the row reports, the lowest of its start's and every epoch's."""
    from agents.evaluation.demos import load_demos
    from agents.policy import load_acting_policy
    from agents.train.expert_iteration import split_holdout
    from agents.train.pretrain import fit_quality
    out = tmp_path / "h"
    r = run(*TINY, "--iterations", "2", "--holdout", "0.25", "--keep-demos", "2",
            "--epochs", "4", "--patience", "4", "--out", out, "--json")
    assert r.returncode == 0, r.stderr
    first, second = json.loads(r.stdout)["iterations"]
    assert first["holdout_runs"] == 1 and second["holdout_runs"] == 2     # round(0.25 x 4, x 8)
    assert second["fit_steps"] + second["holdout_steps"] == first["steps"] + second["steps"]
    both = load_demos(out / "iter_1" / "demos.npz").extend(load_demos(out / "iter_2" / "demos.npz"))
    _, held = split_holdout(both, 0.25, 0, 2)
    assert len(held) == second["holdout_steps"]
    # the row's loss is the float32 fit's, the file's weights are float16 (export_policy's
    # default): equal to a few parts in ten thousand
    _, loss = fit_quality(load_acting_policy(str(out / "iter_2" / "policy.pt")).float(), held)
    assert loss == pytest.approx(second["val_loss"], rel=2e-3)
    curve = second["epoch_val_losses"]
    assert 1 <= len(curve) <= 4 and second["val_loss"] == min([second["val_loss_before"], *curve])
    kept = second["epochs_fitted"]
    assert kept == 0 or curve[kept - 1] == second["val_loss"]


def test_split_holdout_is_whole_runs_drawn_by_seed():
    """A held-out run is held out whole, the two parts share no run, and the draw is the
    seed's: the same seed and iteration, the same split."""
    import numpy as np

    from agents.evaluation.demos import Demos
    from agents.train.expert_iteration import split_holdout
    seeds = np.repeat(np.arange(10), 3)          # 10 runs of 3 steps
    z = np.zeros((30, 1), np.float32)
    d = Demos(z, np.zeros((30, 1), np.uint8), np.zeros(30, np.int64), np.zeros(30, np.float32),
              seeds, {"actions": 8, "runs": 10, "steps": 30})
    fitted, held = split_holdout(d, 0.2, 7, 1)
    assert len(held) == 6 and len(fitted) == 24 and held.meta["runs"] == 2
    assert not set(held.run_seeds) & set(fitted.run_seeds)
    again, _ = split_holdout(d, 0.2, 7, 1)
    assert np.array_equal(again.run_seeds, fitted.run_seeds)
    with pytest.raises(ValueError, match="at least 2 runs"):
        split_holdout(d.select(seeds == 0), 0.2, 7, 1)
