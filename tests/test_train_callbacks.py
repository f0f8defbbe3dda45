"""The training callbacks (agents/train/callbacks.py): the periodic evaluations are logged under the
rules the config trains under (its env_kwargs' rules and overrides), not always the defaults."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3")

from agents.train.callbacks import GameMetrics, PeriodicEval, build_callbacks  # noqa: E402
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
    assert [type(cb) for cb in callbacks][1] is GameMetrics     # the order resume states keep
