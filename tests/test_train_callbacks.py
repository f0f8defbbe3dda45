"""The training callbacks (agents/train/callbacks.py): the periodic evaluations are logged under the
rules the config trains under (its env_kwargs' rules and overrides), not always the defaults."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3")

from agents.train.callbacks import (Checkpoints, GameMetrics, PeriodicEval,  # noqa: E402
                                    build_callbacks)
from agents.train.run_dirs import TrainClock  # noqa: E402
from agents.train.train_config import read_config  # noqa: E402
from rune_env.rules import default_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def test_periodic_evaluations_use_the_configs_rules(tmp_path):
    defaults = default_rules()
    overrides = {"run.income": defaults.spec.run.income + 1}     # any rules but the defaults
    cfg = read_config(REPO / "configs" / "train" / "quick.yaml")
    cfg = cfg.model_copy(update={"env_kwargs": {**cfg.env_kwargs, "rules_overrides": overrides}})
    callbacks = build_callbacks(cfg, tmp_path, TrainClock(tmp_path, 0.0), progress=False)
    evaluation = next(cb for cb in callbacks if isinstance(cb, PeriodicEval))
    assert evaluation.rules.hash != defaults.hash
    assert evaluation.rules.spec.run.income == overrides["run.income"]
    # the evaluation hears a rollout boundary before the checkpoint does, so the checkpoint
    # keeps the evaluation's counter as of after it (a resume does not evaluate that step again)
    assert [type(cb) for cb in callbacks][:3] == [PeriodicEval, Checkpoints, GameMetrics]
    assert evaluation.at_end is False       # quick.yaml makes a final evaluation at the end
