"""The callbacks of a MaskablePPO training (agents.train.ppo's `train`): `build_callbacks` makes
`Checkpoints` (at rollout boundaries, with their resume states), `GameMetrics` (the game's
TensorBoard scalars) and `PeriodicEval` (evaluations appended to eval_history.jsonl), all on the
global step count, so a resumed run keeps them where the uninterrupted one has them
(agents/train/resume.py); `progress_callback` is the training bar, `tb_writers` the logger's
TensorBoard writers. Importing this module imports stable-baselines3 (the train extra)."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from stable_baselines3.common.callbacks import BaseCallback

from agents.cli.progress import bar, say
from agents.evaluation.runs import evaluate, kind_shares, log_evaluation, summary_line
from agents.policy import PolicyAgent
from agents.policy.trust import save_checkpoint
from rune_env.rules.config import KINDS

from .resume import collect_state, restore_pending_log, run_identity, save_state
from .config import eval_rules, run_env_kwargs
from .run_dirs import TrainClock
from .train_config import TrainConfig


def progress_callback():
    """SB3's progress bar (tqdm.rich), drawn on stderr: stdout keeps the run's lines and its final
    JSON. Without rich, a plain tqdm bar on stderr."""
    try:
        import rich  # noqa: F401
        from rich.console import Console
        from stable_baselines3.common.callbacks import ProgressBarCallback
        from tqdm import TqdmExperimentalWarning
        from tqdm.rich import tqdm as rich_tqdm
    except ImportError:
        return PlainProgressBar()

    import warnings

    class StderrProgressBar(ProgressBarCallback):
        def _on_training_start(self) -> None:
            warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)
            stdout_tty = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()
            # printed lines go above the bar when both are on the terminal; to stdout untouched
            # when it is a file or a pipe
            self.pbar = rich_tqdm(total=self.locals["total_timesteps"] - self.model.num_timesteps,
                                  unit="step", options={"console": Console(stderr=True),
                                                        "redirect_stdout": stdout_tty})
    return StderrProgressBar()


class PlainProgressBar(BaseCallback):
    """The training bar without rich: a plain tqdm bar on stderr."""

    def _on_training_start(self) -> None:
        self.pbar = bar(self.locals["total_timesteps"] - self.model.num_timesteps,
                        "training", True, unit="step")

    def _on_step(self) -> bool:
        self.pbar.update(self.training_env.num_envs)
        return True

    def _on_training_end(self) -> None:
        self.pbar.close()


class Checkpoints(BaseCallback):
    """A checkpoint each time training passes a multiple of `every` timesteps (the global
    model.num_timesteps, so a resumed run keeps the grid), taken at the next rollout boundary
    (after the rollout's update: before the next rollout starts, or at the end of training),
    so that a resume starts a new rollout as the uninterrupted run does. Each is
    checkpoints/model_<steps>_steps.zip (SB3's names), written atomically and signed
    (agents/policy/trust.py), with its resume state beside it (agents/train/resume.py) and the
    training seconds up to it (`clock`, train_seconds.json); `run`: the run's identity
    (resume.run_identity), kept in each state."""

    def __init__(self, every: int, save_path: str, clock: TrainClock, run: str | None = None):
        super().__init__()
        self.every, self.save_path, self.clock, self.run = every, Path(save_path), clock, run
        self.last = 0
        self.peers: list = []        # the callbacks whose counters the resume state keeps
        self.pending_log: list = []  # a resumed run's logger scalars not yet written

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps
        # model.learn has made its logger: the resumed update's train/* go out with the
        # next rollout's scalars, as in the uninterrupted run
        restore_pending_log(self.logger, self.pending_log)
        self.pending_log = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        self.maybe_save()

    def _on_training_end(self) -> None:
        self.maybe_save()

    def maybe_save(self) -> None:
        steps = int(self.model.num_timesteps)    # (the callback's own copy is per step)
        if steps // self.every > self.last // self.every:
            self.last = steps
            path = self.save_path / f"model_{steps}_steps.zip"
            # the state first: the zip's rename is what makes the checkpoint exist
            save_state(collect_state(self.model, self.peers, self.run), path)
            save_checkpoint(self.model, path, self.run)
            self.clock.record(steps)

    def resume_state(self) -> dict:
        return {"last": self.last}

    def set_resume_state(self, s: dict) -> None:
        self.last = s["last"]


class Episode(NamedTuple):
    """What GameMetrics keeps of a finished run (a tuple, so resume states store it as a list)."""
    wins: int
    cleared: bool
    rounds: int
    lamps: int
    core: Any


class GameMetrics(BaseCallback):
    """Game scalars from the envs' infos, written every `every` steps."""

    def __init__(self, every: int):
        super().__init__()
        self.every = every
        self.reset_stats()
        self.last = 0

    def reset_stats(self):
        self.battles, self.durations, self.kinds = [], [], []
        self.episodes: list[Episode] = []

    def _on_step(self) -> bool:
        infos = self.locals["infos"]
        dones = self.locals["dones"]
        for info, done in zip(infos, dones):
            b = info.get("battle")
            if b is not None:
                self.battles.append(b["outcome"] == "win")
                self.durations.append(b["time"])
                self.kinds.extend(b.get("kinds", []))
            if done and "wins" in info:
                self.episodes.append(Episode(info["wins"], info["cleared"], info["round"],
                                             info["lamps"], (b or {}).get("core")))
        return True

    def _on_rollout_end(self) -> None:
        # SB3 writes the log after each rollout's update: record once per rollout so no
        # window's scalars are overwritten before they are written
        if self.num_timesteps - self.last >= self.every:
            self.flush()

    def flush(self):
        self.last = self.num_timesteps
        rec = self.logger.record
        if self.battles:
            rec("game/battle_win_rate", sum(self.battles) / len(self.battles))
            rec("game/battle_duration", sum(self.durations) / len(self.durations))
        if self.episodes:
            self._record_episodes(rec)
        if self.kinds:
            self._record_kinds(rec)
        self.reset_stats()

    def _record_episodes(self, rec) -> None:
        n = len(self.episodes)
        rec("game/wins_per_run", sum(e.wins for e in self.episodes) / n)
        rec("game/clear_rate", sum(e.cleared for e in self.episodes) / n)
        rec("game/rounds_survived", sum(e.rounds for e in self.episodes) / n)
        rec("game/lamps_left", sum(e.lamps for e in self.episodes) / n)
        cores = {}
        for e in self.episodes:
            cores.setdefault(str(e.core), []).append(e.cleared)
        for core, cleared in cores.items():
            rec(f"game/clear_rate_core/{core}", sum(cleared) / len(cleared))

    def _record_kinds(self, rec) -> None:
        # each kind's share of the runes on the boards that fought, by name; and the histogram
        # of the same (bins are the kinds' indices in KINDS)
        for kind, share in kind_shares(Counter(self.kinds)).items():
            rec(f"game/kind_share/{kind}", share)
        import numpy as np
        for writer in tb_writers(self.logger):
            writer.add_histogram("game/board_kinds", np.array([KINDS.index(k) for k in self.kinds]),
                                 self.num_timesteps, bins=np.arange(len(KINDS) + 1) - 0.5)
            writer.flush()

    def resume_state(self) -> dict:
        return {"last": self.last, "battles": self.battles, "durations": self.durations,
                "kinds": self.kinds, "episodes": self.episodes}

    def set_resume_state(self, s: dict) -> None:
        self.last = s["last"]
        self.battles, self.durations, self.kinds = s["battles"], s["durations"], s["kinds"]
        self.episodes = [Episode(*e) for e in s["episodes"]]


class PeriodicEval(BaseCallback):
    """An evaluation at the first rollout boundary at or past each multiple of `every` timesteps
    (of the global model.num_timesteps: a resumed run evaluates on the same steps), on envs of
    `env_kwargs` under their `rules`, appended to run_dir/eval_history.jsonl. At a boundary the
    rollout's update is made, so "evaluation at N steps" plays the weights of N steps, those of
    checkpoints/model_N_steps.zip (inside a rollout it would play the weights of the rollout
    before, under the later step's name). It comes before Checkpoints in the callback list, so a
    checkpoint at the same boundary keeps it as made. At the end of training it evaluates only
    when `at_end` (the run makes no final evaluation, which is the one at the last step)."""

    def __init__(self, every: int, episodes: int, seed: int, env_kwargs: dict, rules,
                 run_dir: Path, at_end: bool = True):
        super().__init__()
        self.every, self.episodes, self.seed = every, episodes, seed
        self.env_kwargs, self.rules, self.run_dir = env_kwargs, rules, run_dir
        self.at_end = at_end
        self.last = 0
        self.restored = False

    def _on_training_start(self) -> None:
        # a run resumed from a model without a resume state: its evaluations so far unknown,
        # the next at the next multiple; with a state, its counter (a run stopped at its final
        # model evaluates the step it stopped at, at the first boundary, as if never stopped)
        if not self.restored:
            self.last = self.num_timesteps

    def resume_state(self) -> dict:
        return {"last": self.last}

    def set_resume_state(self, s: dict) -> None:
        self.last = s["last"]
        self.restored = True

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        self.maybe_evaluate()

    def _on_training_end(self) -> None:
        if self.at_end:
            self.maybe_evaluate()

    def maybe_evaluate(self) -> None:
        steps = int(self.model.num_timesteps)    # (the callback's own copy is per step)
        if self.every and steps // self.every > self.last // self.every:
            self.last = steps
            # no bar of its own: the training bar is showing
            res = evaluate(PolicyAgent(self.model, rules=self.rules), self.episodes, self.seed,
                           self.env_kwargs)
            for writer in tb_writers(self.logger):
                log_evaluation(writer, res, steps, self.rules, image_tag="boards/eval",
                               cores=list(self.rules.spec.cores), context=res["played_against"])
            say(summary_line(res, f"evaluation at {steps} steps"))
            res.pop("runs")
            with open(self.run_dir / "eval_history.jsonl", "a") as fh:
                fh.write(json.dumps({"timesteps": steps, **res}) + "\n")


def build_callbacks(cfg: TrainConfig, run_dir: Path, clock: TrainClock, progress: bool) -> list:
    """The training's callbacks, in the order they hear each event (their resume states are kept
    by class name); the evaluations
    play under the config's own rules (its env_kwargs' rules and overrides)."""
    ckpt = Checkpoints(cfg.checkpoint_every, str(run_dir / "checkpoints"), clock,
                       run_identity(cfg))
    # the evaluation first: a boundary's checkpoint then keeps its counter as of after it
    callbacks = [PeriodicEval(cfg.eval.every, cfg.eval.episodes, cfg.eval.seed,
                              run_env_kwargs(cfg.env_kwargs),
                              eval_rules(cfg.env_kwargs), run_dir,
                              at_end=not cfg.final_eval_episodes),
                 ckpt, GameMetrics(cfg.metrics_every)]
    ckpt.peers = callbacks
    if progress:
        callbacks.append(progress_callback())
    return callbacks


def tb_writers(logger):
    return [w for w in (getattr(f, "writer", None) for f in logger.output_formats) if w is not None]
