"""One trial: train.py as a subprocess (`TrainRun`, no Ray) and the evaluations it has written."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..config import read_json

from .config import REPORTED_METRICS, TIME_ATTR


# -- one trial: train.py as a subprocess ---------------------------------------------------------
class TrialFailed(RuntimeError):
    """train.py ended with an error; the message is its status and the last line of its log."""


class TrainRun:
    """One train.py run in a subprocess, and the evaluations it has written so far.

    `start()` writes the trial's config and starts `python scripts/train.py --config <config>
    --run-name <name> --runs-dir <trials dir> --no-progress`, its output into `log_path`.
    `next_report()` waits for the next evaluation: a new row of the run's eval_history.jsonl
    (train.py appends one per periodic evaluation), or, when train.py has exited, the final
    evaluation from eval.json (`final: 1`). A periodic evaluation at the run's last step
    (timesteps >= total_timesteps) is not reported: the final evaluation of the finished model,
    at the same step, comes next and takes its place (so a scheduler's max_t at total_timesteps
    never stops a trial before its final evaluation). `stop()` interrupts train.py as Ctrl-C
    would (SIGINT: it closes its envs and leaves a run train.py --resume continues), then kills
    it if it has not ended within `grace` seconds."""

    POLL_SECONDS = 0.5

    def __init__(self, train_script: str | Path, config: dict, config_path: Path, run_name: str,
                 trials_dir: Path, log_path: Path, python: str | None = None):
        self.command = [python or sys.executable, str(train_script), "--config", str(config_path),
                        "--run-name", run_name, "--runs-dir", str(trials_dir), "--no-progress"]
        self.config = config
        self.config_path = config_path
        self.run_dir = trials_dir / run_name
        self.log_path = log_path
        self.total_timesteps = int(config["total_timesteps"])
        self.proc: subprocess.Popen | None = None
        self._log = None
        self._offset = 0                 # how far eval_history.jsonl has been read
        self._pending: list[dict] = []
        self.finished = False

    def start(self) -> None:
        import yaml
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(yaml.safe_dump(self.config, sort_keys=False))
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.run_dir.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}     # the log follows the run as it goes
        # its own session: a Ctrl-C on the sweep's terminal reaches Tune (which stops the trials
        # through stop()), not every train.py at once
        self.proc = popen_interruptible(self.command, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env, start_new_session=True)

    def _new_rows(self) -> None:
        path = self.run_dir / "eval_history.jsonl"
        if not path.is_file():
            return
        with open(path, "rb") as fh:
            fh.seek(self._offset)
            chunk = fh.read()
        end = chunk.rfind(b"\n") + 1           # whole lines only: a row may be half written
        self._offset += end
        for line in chunk[:end].decode("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if int(row["timesteps"]) < self.total_timesteps:
                    self._pending.append(report_from(row, final=False))

    def next_report(self) -> dict:
        """The next evaluation as a Tune result (see the class docstring); raises TrialFailed if
        train.py exits with an error."""
        while True:
            self._new_rows()
            if self._pending:
                return self._pending.pop(0)
            code = self.proc.poll()
            if code is not None:
                self._new_rows()                # rows written just before it exited
                if self._pending:
                    return self._pending.pop(0)
                self._close_log()
                if code != 0:
                    raise TrialFailed(f"train.py exited with status {code}: "
                                      f"{last_line(self.log_path)} (log: {self.log_path})")
                final = read_json(self.run_dir / "eval.json")
                self.finished = True
                out = report_from(final, final=True)
                out["train_seconds"] = final.get("train_seconds")
                return out
            time.sleep(self.POLL_SECONDS)

    def stop(self, grace: float = 30.0) -> int | None:
        """End train.py if it is still running (SIGINT, then SIGKILL after `grace` s); returns
        its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_log()
        return self.proc.returncode

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


# Run a Python script (argv[1], its arguments after it) with SIGINT as Ctrl-C: unblocked and
# raising KeyboardInterrupt, whatever the parent left it as (see popen_interruptible)
_INTERRUPTIBLE = ("import runpy, signal, sys; "
                  "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); "
                  "signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def popen_interruptible(command: list[str], **kwargs) -> subprocess.Popen:
    """subprocess.Popen of `[python, script, args...]` whose script receives SIGINT as Ctrl-C.
    A child inherits both the parent's blocked signals and its ignored ones through exec: Ray's
    workers block SIGINT (measured: an ASHA-stopped trial trained on to its end), and a shell
    without job control starts background commands with SIGINT ignored (then Python installs no
    KeyboardInterrupt handler at all: a sweep started with `&` could not stop a trial). So the
    child's Python first unblocks SIGINT and installs the handler, then runs the script as
    `__main__` (its argv and __doc__ as if run directly)."""
    python, script, *args = command
    return subprocess.Popen([python, "-c", _INTERRUPTIBLE, script, *args], **kwargs)


def report_from(evaluation: dict, final: bool) -> dict:
    """A Tune result from an evaluation summary (a row of eval_history.jsonl, or eval.json)."""
    out = {TIME_ATTR: int(evaluation["timesteps"]), "eval_episodes": evaluation.get("episodes"),
           "final": int(final)}
    out.update({k: evaluation[k] for k in REPORTED_METRICS if k in evaluation})
    return out


def last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1] if lines else "(empty log)"
