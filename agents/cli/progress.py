"""Progress bars for the scripts: tqdm bars on stderr, never on stdout (so `--json` output and
piped tables stay clean).

One convention for every script that has bars (calibrate_ranks, make_opponents, build_pools,
ladder, balance_report):
  default         bars when stderr is a terminal, none when it is not (a pipe, a file, CI);
  --progress      bars on stderr even when it is not a terminal;
  --no-progress   no bars at all.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """--progress / --no-progress (default: bars when stderr is a terminal)."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on stderr, never on stdout (default: shown when "
                             "stderr is a terminal; --progress forces them, --no-progress "
                             "turns them off)")


def progress_on(flag: bool | None) -> bool:
    """The parsed --progress flag (None: not given) -> whether bars are shown."""
    if flag is not None:
        return bool(flag)
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):     # replaced or closed stderr
        return False


def bar(total: int, desc: str, enabled: bool | None, unit: str = "run") -> Any:
    """A tqdm bar on stderr, cleared when closed; a silent one unless `progress_on(enabled)`.
    Use it as a context manager and call `.update(n)`."""
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr,
                disable=not progress_on(enabled), leave=False, dynamic_ncols=True,
                mininterval=0.2)


def say(message: str, file=None) -> None:
    """Print a line (stdout by default) without tearing a bar that is showing on stderr."""
    from tqdm import tqdm
    tqdm.write(message, file=file if file is not None else sys.stdout)


class CountRuns:
    """An agent that counts the runs it plays on a bar: wraps `agent` (everything delegated) and
    moves `progress` by one as each run ends (seen at the next `reset`; `finish()` counts the
    last). For code that plays runs itself and takes an agent (make_opponents.ghosts_of)."""

    def __init__(self, agent, progress):
        self._agent = agent
        self._progress = progress
        self._started = 0
        self._counted = 0

    def reset(self, seed=None):
        if self._started > self._counted:
            self._progress.update(self._started - self._counted)
            self._counted = self._started
        self._started += 1
        return self._agent.reset(seed)

    def act(self, *args, **kwargs):
        return self._agent.act(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._agent, name)

    def finish(self, runs: int | None = None) -> None:
        """Count the runs not yet counted (up to `runs`, if given, the runs there were to play)."""
        total = self._started if runs is None else max(runs, self._started)
        if total > self._counted:
            self._progress.update(total - self._counted)
            self._counted = total
