"""scripts/training_curves.py: a TensorBoard scalar of training runs side by side, read from the
shared tiny training run (tests/conftest.py's `smoke`). Not battle-rule tests, so the module is
marked `outside_mutation_check`."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("tensorboard")

pytestmark = pytest.mark.outside_mutation_check


def test_curves_read_the_runs_scalars(smoke, tmp_path, script_main):
    from test_train_runs import accumulator
    run = smoke["run_dir"]
    out = tmp_path / "c.png"
    r = script_main("training_curves", run, run, "--labels", "a", "b", "--line", "0.5:half",
                    "--out", out, "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    pts = data["runs"][str(run)]
    # the same points as TensorBoard holds for the tag in the run's PPO part
    (tb,) = [d for d in (run / "tb").iterdir() if d.name != "pretrain"]
    expected = [[e.step, e.value] for e in accumulator(tb).Scalars("game/battle_win_rate")]
    assert len(pts) == len(expected) >= 1
    assert [s for s, _ in pts] == [s for s, _ in expected]
    assert [v for _, v in pts] == pytest.approx([v for _, v in expected], rel=1e-6)
    assert out.stat().st_size > 1000


def test_the_chart_says_its_runs_rules_and_seeds_and_shows_a_rate_whole(smoke, monkeypatch,
                                                                        tmp_path, script_main):
    """The title names the tag, the runs' rules hash and seeds (there was no title); a rate
    runs 0..1 on its axis (it was autoscaled to 0.0305-0.034); a curve of one point shows it
    (a line of one point drew nothing); the legend finds a free corner."""
    from agents.train.config import rules_hash
    from agents.train.train_config import read_config
    figures = []
    monkeypatch.setattr("agents.evaluation.charts.save", lambda fig, path: figures.append(fig))
    run = smoke["run_dir"]
    r = script_main("training_curves", run, "--max-steps", "128", "--out", tmp_path / "c.png")
    assert r.returncode == 0, r.stderr
    (ax,) = figures[0].axes
    cfg = read_config(run / "config.yaml")
    assert ax.get_title() == (f"game/battle_win_rate · rules {rules_hash(cfg.env_kwargs)} · "
                              f"seeds {cfg.seed}")
    assert ax.get_ylim() == (0.0, 1.0)
    (line,) = ax.get_lines()
    assert len(line.get_xdata()) == 1 and line.get_marker() == "o"


def test_curves_bad_input_exits_2(smoke, tmp_path, script_main):
    from test_train_runs import assert_one_line_error
    out = tmp_path / "c.png"
    for args, words in (((tmp_path,), ("not a training run",)),
                        ((smoke["run_dir"], "--tag", "no/such"), ("no scalar", "no/such")),
                        ((smoke["run_dir"], "--labels", "a", "b"), ("--labels", "2 labels for 1")),
                        ((smoke["run_dir"], "--line", "high:x"), ("--line", "VALUE:LABEL"))):
        r = script_main("training_curves", *args, "--out", out)
        assert_one_line_error(r, *words)
        assert not out.exists()


def test_hostile_event_files_are_one_line(tmp_path, script_main):
    """A 28-byte event file whose record claims 2^36 bytes (a valid header otherwise) was a
    MemoryError inside TensorBoard, a FIFO named like an event file a hang, and --line 1e308 a
    matplotlib traceback: each is one line now."""
    import os
    from test_train_runs import assert_one_line_error
    out = tmp_path / "c.png"
    huge = tmp_path / "huge" / "tb" / "run_1"
    huge.mkdir(parents=True)
    (huge / "events.out.tfevents.1.x").write_bytes((2**36).to_bytes(8, "little") + b"\0" * 20)
    r = script_main("training_curves", tmp_path / "huge", "--out", out)
    assert_one_line_error(r, "a record at byte 0 claims 68,719,476,736 bytes")
    fifo = tmp_path / "fifo" / "tb" / "run_1"
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / "events.out.tfevents.1.x")
    r = script_main("training_curves", tmp_path / "fifo", "--out", out)
    assert_one_line_error(r, "not a regular file")
    empty = tmp_path / "empty" / "tb" / "run_1"
    empty.mkdir(parents=True)
    (empty / "events.out.tfevents.1.x").write_bytes(b"")
    r = script_main("training_curves", tmp_path / "empty", "--out", out)
    assert_one_line_error(r, "hold no scalars at all: empty, or corrupt")
    r = script_main("training_curves", tmp_path / "empty", "--line", "1e308:x", "--out", out)
    assert_one_line_error(r, "--line", "within +-1e+12")
    r = script_main("training_curves", tmp_path / "empty", "--line", "\u0661:x", "--out", out)
    assert_one_line_error(r, "--line", "VALUE:LABEL")          # an Arabic-Indic 1: not ASCII
    assert not out.exists()
