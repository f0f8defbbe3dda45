"""The sweep under Ray Tune: `run_sweep` (the trainable, ASHA, the progress lines). Ray is imported
only inside the functions here."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .config import SweepConfig, TIME_ATTR
from .outcome import trial_record
from .trial_run import TrainRun
from .trials import Trial, asha_settings


# -- the sweep under Tune ------------------------------------------------------------------------
def trainable_class():
    """The Tune trainable of a trial (a class, so that Tune's stop reaches `cleanup`, which ends
    train.py). Made here so that importing this module does not import Ray."""
    from ray import tune

    class TrainPyTrial(tune.Trainable):
        """A trial = one train.py run (TrainRun); each step reports its next evaluation."""

        def setup(self, config: dict, plan: dict):
            name = config["trial"]["name"]
            job = plan["trials"][name]
            sweep_dir = Path(plan["sweep_dir"])
            self.run = TrainRun(plan["train_script"], job["config"],
                                sweep_dir / "trial_configs" / f"{name}.yaml", name,
                                sweep_dir / "trials", sweep_dir / "logs" / f"{name}.log")
            self.run.start()

        def step(self) -> dict:
            result = self.run.next_report()
            if result["final"]:
                result["done"] = True
            return result

        def cleanup(self):
            self.run.stop()

    return TrainPyTrial


def recording_asha(settings: dict):
    """Tune's ASHAScheduler on timesteps, which also remembers the trials it stopped (Tune's
    results do not tell a trial ASHA stopped from one that was interrupted). Its metric and mode
    come from the TuneConfig (Tune refuses them in both places)."""
    from ray.tune.schedulers import ASHAScheduler, TrialScheduler

    class RecordingASHA(ASHAScheduler):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.stopped_trials: set[str] = set()

        def on_trial_result(self, tune_controller, trial, result):
            action = super().on_trial_result(tune_controller, trial, result)
            if action == TrialScheduler.STOP and not result.get("final"):
                self.stopped_trials.add(trial.config["trial"]["name"])
            return action

    return RecordingASHA(time_attr=TIME_ATTR, max_t=settings["max_t"],
                         grace_period=settings["grace_period"],
                         reduction_factor=settings["reduction_factor"])


def progress_callback(metric: str):
    """A Tune callback that says each trial's evaluations and end on stderr, one line each."""
    from ray import tune

    from agents.cli.progress import say

    class SweepProgress(tune.Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            value = result.get(metric)
            what = "final evaluation" if result.get("final") else "evaluation"
            shown = f"{value:.3f}" if isinstance(value, (int, float)) else "n/a"
            say(f"{trial.config['trial']['name']}: {what} at {result.get(TIME_ATTR)} steps, "
                f"{metric} {shown}", file=sys.stderr)

        def on_trial_complete(self, iteration, trials, trial, **info):
            how = "finished" if (trial.last_result or {}).get("final") else "stopped early"
            say(f"{trial.config['trial']['name']}: {how}", file=sys.stderr)

        def on_trial_error(self, iteration, trials, trial, **info):
            say(f"{trial.config['trial']['name']}: error (its train.py log: logs/"
                f"{trial.config['trial']['name']}.log)", file=sys.stderr)

    return SweepProgress()


def run_sweep(sweep: SweepConfig, trials: list[Trial], sweep_dir: Path, train_script: Path,
              address: str | None, num_cpus: int | None, progress: bool) -> list[dict]:
    """Run the trials under Tune (Ray at `address`, or a local Ray of `num_cpus` CPUs when
    address is None; it is shut down at the end) and return each trial's record (trial_record),
    in trial order. Tune's own files go to sweep_dir/tune/<trial>/ (progress.csv, result.json,
    TensorBoard events of the reported metrics)."""
    import contextlib

    # Tune's console output: the legacy reporter, which verbose=0 silences (the new one still
    # prints its tables on stdout, where the sweep's table or JSON goes)
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"
    import ray
    from ray import tune
    started_here = not ray.is_initialized()
    if started_here:
        # "local": a new Ray on this machine even when RAY_ADDRESS is set or a `ray start`
        # cluster runs here (ray.init() would join that one, and refuse num_cpus)
        ray.init(address=address or "local", num_cpus=num_cpus if address is None else None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        settings = asha_settings(sweep, trials)
        scheduler = recording_asha(settings) if settings else None
        plan = {"sweep_dir": str(sweep_dir.resolve()), "train_script": str(train_script),
                "trials": {t.name: {"config": t.config.to_yaml()} for t in trials}}
        trainable = tune.with_resources(tune.with_parameters(trainable_class(), plan=plan),
                                        {"cpu": sweep.cpus_per_trial})
        tuner = tune.Tuner(
            trainable,
            param_space={"trial": tune.grid_search([{"name": t.name, "values": t.values}
                                                    for t in trials])},
            tune_config=tune.TuneConfig(
                metric=sweep.metric, mode=sweep.mode, scheduler=scheduler, num_samples=1,
                max_concurrent_trials=sweep.max_concurrent,
                trial_name_creator=lambda t: t.config["trial"]["name"],
                trial_dirname_creator=lambda t: t.config["trial"]["name"]),
            run_config=tune.RunConfig(
                name="tune", storage_path=str(sweep_dir.resolve()), verbose=0,
                callbacks=[progress_callback(sweep.metric)] if progress else None,
                checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=False)))
        with contextlib.redirect_stdout(sys.stderr):      # whatever Tune still prints
            grid = tuner.fit()
        stopped = scheduler.stopped_trials if scheduler is not None else set()
        by_name = {r.config["trial"]["name"]: r for r in grid if r.config}
        return [trial_record(t, by_name.get(t.name), t.name in stopped, sweep_dir)
                for t in trials]
    finally:
        if started_here:
            ray.shutdown()
