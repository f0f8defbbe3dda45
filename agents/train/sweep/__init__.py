"""Hyperparameter sweeps of train.py runs under Ray Tune: the library part of scripts/sweep.py
(its docstring describes the command line and the sweep directory).

A sweep is a training config (`base`, a configs/train/*.yaml), fixed `overrides` applied to it,
and a search `space` over its keys by dotted path (`ppo.learning_rate`, `policy_kwargs.net_arch`,
`seed`, ...). Each trial is one train.py run, started as a subprocess by a Tune trainable, so a
trial is exactly what `python scripts/train.py --config ...` makes (its own run directory,
TensorBoard, checkpoints, eval.json); the trainable follows the run's `eval_history.jsonl` and
reports each periodic evaluation to Tune, then the final one (eval.json). ASHA, if the sweep asks
for it, stops the weaker trials at its rungs (in timesteps); a stopped trial's train.py is
interrupted as Ctrl-C would (SIGINT), which leaves it resumable with train.py --resume.

- The config: `SweepConfig` (with `Dimension`, `ASHAConfig`), strict pydantic models like
  agents/train/train_config.py's `TrainConfig`; `read_sweep` reads a file with the command line's
  overrides; a problem is a `ConfigError` naming the file and the key.
- The trials: `draw_values` (the space's values of every trial: the grid's product, repeated
  num_samples times, the random kinds drawn from search_seed, so the same YAML gives the same
  trials), `plan_trials` (each trial's train config resolved and validated, before Ray starts),
  `asha_settings`, `train_path_problem`, `set_path` / `get_path`.
- Running: `TrainRun` (one train.py subprocess and the evaluations it has written; no Ray),
  `run_sweep` (Ray Tune: the trainable, ASHA, the progress lines).
- The outcome: `trial_record`, `sweep_summary` (sweep.json's content, with the best trial),
  `format_table`.

Ray is imported only inside `run_sweep` and what it calls, so everything else (validation, the
draws, the table) works without the ray extra.

Modules: `config`, `trials`, `trial_run` (one train.py subprocess), `tune` (Ray Tune),
`outcome`; the names above are re-exported here.
"""
from .config import (DIMENSION_KINDS, MAX_TRIALS, REPORTED_METRICS, STATUSES,  # noqa: F401
                     SWEEP_SECTIONS, TIME_ATTR, ASHAConfig, Dimension, SweepConfig, get_path,
                     read_sweep, set_path, train_path_problem, tune_problem)
from .outcome import best_trial, error_line, format_table, sweep_summary, trial_record  # noqa: F401
from .trial_run import TrainRun, TrialFailed, last_line, popen_interruptible, report_from  # noqa: F401
from .trials import (Trial, asha_settings, check_model, check_trial, describe_values,  # noqa: F401
                     draw_values, plan_trials, trial_count)
from .tune import progress_callback, recording_asha, run_sweep, trainable_class  # noqa: F401
