"""The command-line pieces the scripts share.

- `ScriptParser`: argparse that reports a bad command line as ONE line, `error: ...`, on stderr
  and exits with status 2 (no usage block, no traceback; --help has the usage).
- `script_parser(doc)`: a ScriptParser whose --help shows the script's whole docstring.
- argparse `type=` checks, so every number is checked where it enters: `positive_int`,
  `non_negative_int`, `seed_int`, `jobs_int`, `int_in(low, high)`, `positive_float`,
  `non_negative_float`; `agent_name` (an --agent/--agents value: not blank).
  A bad value reads `error: --battles must be a whole number >= 1; got '-5'`.
- The options several scripts share, each with its check and a help that states its default:
  `add_count_argument` (a count >= 1, or 1..high), `add_seed_argument` (--seed),
  `add_jobs_argument` (--jobs), `add_rules_argument` (--rules), `add_json_argument` (--json),
  `add_opponents_argument` (--opponents).
- `parse_with_rules(build_parser, argv)`: the command line and the rules its --rules names,
  read first, so the options those rules bound are checked against them; `rules_env_kwargs`:
  the env keyword that plays under them.
- `check_output(path, option, suffixes)`: why an output file could not be written there (before
  the work); `check_output_dir(path, option)`: the same for an output directory; both try the
  folder for real (root passes os.access even on /proc); `check_runs_dir(path)`: the scripts'
  --runs-dir check, its error line printed (status 2, or None). `make_output_dir`/`remove_made`:
  make an output directory and take away what was made after a failure.
- `fail(msg)`: print `error: msg` on stderr and return 2, for checks after parsing (files,
  ranks, agents).
- `load_pool_once(path, rules, strict, rank)`: load a pool file, saying a pool of other rules as
  one `warning: ...` line on stderr, once (the envs that load it later stay quiet about it); with
  the rank that fields it, also a pool of another rank and the rounds it has no ghosts of
  (`pool_for_rank_warnings`).
- The switches of the scripts that play agents against pools (evaluate, ladder,
  calibrate_ranks): the battle engine, strict pools, torch's threads and the progress bars.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import warnings

from rune_env.battle.engines import add_engine_argument, use_engine
from rune_env.files import ascii_number, printable_line

from .progress import add_progress_argument

# Seeds the scripts take: 32-bit (rune_env's command line has the same bound), so that the run
# seeds derived from them (evaluation seeds are 2**30 + seed * 1_000_003 + episode) stay far
# inside the int64 that numpy and torch seed with.
from rune_env.cli import SEED_MAX  # noqa: E402

# The file names a chart may be saved as (matplotlib's savefig picks the format by the suffix).
CHART_SUFFIXES = (".png", ".svg", ".pdf")

# Upper bounds of the counts the scripts take, one per kind of count. They are input bounds, not
# game numbers: each is days of work or more on one machine, so a value above it is a typo (an
# extra 0, a 10**12), refused at once instead of growing to gigabytes before anything is played.
# Runs: whole runs of a draft (--episodes, --runs, --games); a run plays up to run.round_cap
# battles in tens of milliseconds, so 10**6 of them are hours per agent.
MAX_RUNS = 1_000_000
# Battles: single board pairs (--battles, --pairs); the fast engine plays thousands a second.
MAX_BATTLES = 10**8
# Samples drawn for each item (ladder's pool boards per agent board): each is a battle kept in
# memory for the rating fit, times runs x rounds.
MAX_SAMPLES = 1000
# Repeats of one measurement (benchmark's passes) and things shown or checked one by one.
MAX_REPEATS = 100_000
# Bootstrap resamples (ladder's rating intervals): each refits the ratings, milliseconds apiece.
MAX_RESAMPLES = 100_000
# Environment and training steps: 10**10 is months of PPO at the speeds in docs/RESULTS.md.
MAX_STEPS = 10**10
# CPUs handed to Ray, envs of one training (each a process with vec_env subproc) and torch
# threads: more than any machine here holds.
MAX_CPUS = 4096
MAX_ENVS = 1024
MAX_THREADS = 1024
# A rollout's steps per env (PPO's n_steps, RLlib's batches): the rollout buffer holds that many
# observations per env, allocated at once.
MAX_ROLLOUT = 10**7


class ScriptParser(argparse.ArgumentParser):
    """argparse that reports a bad argument as one `error: ...` line on stderr (exit status 2)."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        # "argument --battles: must be ..." (our type checks) reads "--battles must be ..."
        m = re.match(r"argument ([^:]+): (must .*)$", message, re.S)
        if m:
            message = f"{m.group(1)} {m.group(2)}"
        else:
            message = re.sub(r"^argument ([^:]+): ", r"\1: ", message)
        self.exit(2, f"error: {' '.join(message.split())}\n")


_WARNED: set[str] = set()


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # once a process: the same file met again (a policy made as each rank's, each duel's,
    # each league member's agent) says nothing new
    text = str(message)
    if text not in _WARNED:
        _WARNED.add(text)
        print(f"warning: {printable_line(text)}", file=file or sys.stderr)


def _input_errors() -> tuple[type, ...]:
    """The errors that name a bad input (a file, a number, a name) in one line: a script that
    meets one where it did not expect it (a policy that does not fit the env, found at its first
    action) still says it in that line."""
    from rune_env.rules import BoardError, RulesError
    from rune_env.run.opponents import PoolError
    from rune_env.run.record import RecordError
    from rune_env.run.state import RunStateError
    found: list[type] = [BoardError, RulesError, PoolError, RecordError, RunStateError]
    for module, name in (("agents.policy", "PolicyLoadError"),
                         ("agents.train.config", "ConfigError")):
        kind = getattr(sys.modules.get(module), name, None)
        if kind is not None:
            found.append(kind)
    return tuple(found)


def _interrupted_hook(previous):
    """sys.excepthook that says a Ctrl-C as one line, `interrupted`, not its traceback through
    whatever the script was doing (the exit status stays Python's for SIGINT), a closed output
    pipe as nothing (exit status 1), and an uncaught
    bad-input error (`_input_errors`) as its one `error: ...` line (exit status 1); any other
    uncaught exception goes to `previous`."""
    def hook(kind, value, tb):
        if issubclass(kind, BrokenPipeError):
            # the reader went away (`... | head`): nothing more to say to it, and no traceback;
            # stdout goes to /dev/null so Python's own flush at exit does not fail again
            import os
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
        elif issubclass(kind, KeyboardInterrupt):
            print("interrupted", file=sys.stderr)
        elif issubclass(kind, _input_errors()):
            print(f"error: {printable_line(value)}", file=sys.stderr)
        else:
            previous(kind, value, tb)
    hook.quiet_interrupts = True
    return hook


def script_parser(doc: str | None, **kwargs) -> ScriptParser:
    """A ScriptParser whose --help shows `doc` (the script's docstring) in full, as written.
    Making one also makes the script's warnings one `warning: ...` line on stderr (a pool or a
    policy of other rules, for instance), without Python's file and line, each said once, and a
    Ctrl-C one
    `interrupted` line (the scripts write their files atomically, so nothing half-written is
    left)."""
    warnings.showwarning = _one_line_warning
    if not getattr(sys.excepthook, "quiet_interrupts", False):
        sys.excepthook = _interrupted_hook(sys.excepthook)
    kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
    return ScriptParser(description=(doc or "").strip() or None, **kwargs)


def _nearest_existing(path):
    """`path` itself if it exists, else its nearest existing ancestor."""
    from pathlib import Path
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _cannot_write_in(folder) -> bool:
    """Whether nothing can be made in the existing directory `folder`: tried for real (a
    temporary folder made and removed at once), not os.access, which root always passes (and
    /proc, a read-only mount or a full disk refuse anyway)."""
    import os
    import tempfile
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".write-check-", dir=folder))
    except OSError:
        return True
    return False


def check_output(path, option: str, suffixes: tuple[str, ...] | None = None,
                 inputs=()) -> str | None:
    """Why a file cannot be written at `path` (None if it can, as far as can be told before the
    work): `path` is a directory, is one of the files `inputs` names (the run would overwrite
    what it reads), its name does not end in one of `suffixes` (e.g. (".png", ".svg", ".pdf");
    any name without them), or its nearest existing folder is a file or cannot be written in
    (tried, not guessed: nothing is left there)."""
    import os
    from pathlib import Path
    path = Path(path)
    if not path.name or path.is_dir():
        return f"{option} {path}: is a directory (give a file name)"
    for given in inputs:
        try:
            same = os.path.samefile(path, given)
        except OSError:             # either missing: not the same file
            same = False
        if same:
            return f"{option} {path}: is the input {given} (it would be overwritten)"
    if suffixes and path.suffix.lower() not in suffixes:
        return (f"{option} {path}: the file's name must end in {', '.join(suffixes[:-1])}"
                f"{' or ' if len(suffixes) > 1 else ''}{suffixes[-1]}")
    return _folder_problem(path, _nearest_existing(path.parent), option)


def _folder_problem(path, folder, option: str) -> str | None:
    """Why nothing can be written for `path` in `folder`, its nearest existing folder: it is a
    file, or cannot be written in; None if it can."""
    if not folder.is_dir():
        return f"{option} {path}: {folder} is not a directory"
    if _cannot_write_in(folder):
        return f"{option} {path}: cannot write in {folder}"
    return None


def owned_dir(path, marks: tuple[str, ...]) -> bool:
    """Whether `path` is a real directory (not a symlink) holding one of `marks`: files only the
    script that made it writes there, so that its --force replaces its own output and never a
    directory of the same name that is not (exploit.py, expert_iteration.py)."""
    from pathlib import Path
    path = Path(path)
    return not path.is_symlink() and any((path / m).is_file() for m in marks)


def check_output_dir(path, option: str) -> str | None:
    """Why `path` cannot be a directory to write in (None if it can, as far as can be told
    before the work): a file is there, or its nearest existing folder is a file or cannot be
    written in (tried, not guessed: nothing is left there)."""
    from pathlib import Path
    path = Path(path)
    if path.exists() and not path.is_dir():
        return f"{option} {path}: not a directory"
    return _folder_problem(path, _nearest_existing(path), option)


def check_runs_dir(path) -> int | None:
    """The --runs-dir DIR check of the scripts that make run directories under it (train,
    train_rllib, league, exploit, sweep), before any work: when DIR cannot be a directory to
    write in (`check_output_dir`), its one `error: --runs-dir DIR: ...` line on stderr and 2
    (`fail`); None when it can."""
    problem = check_output_dir(path, "--runs-dir")
    return fail(problem) if problem else None


def make_output_dir(path) -> list:
    """Make the directory `path` (and its missing parents); the folders made, deepest first, for
    `remove_made` to take away again after a failure (an OSError if it cannot be made)."""
    from pathlib import Path
    path = Path(path)
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    path.mkdir(parents=True, exist_ok=True)
    return missing


def remove_made(made, contents: bool = False) -> None:
    """Remove the folders `make_output_dir` made (deepest first), each only while empty; with
    `contents`, the outermost one made and all in it (what this invocation wrote there)."""
    import os
    import shutil
    if contents and made:
        shutil.rmtree(made[-1], ignore_errors=True)
        return
    for p in made:
        try:
            os.rmdir(p)
        except OSError:
            break


def fail(message: str) -> int:
    """Report an error as one line on stderr; returns 2, the scripts' exit status for it."""
    print(f"error: {printable_line(message)}", file=sys.stderr)
    return 2


# -- type checks ------------------------------------------------------------------------------
def _whole(text: str, low: int, high: int | None) -> int:
    bounds = f">= {low}" if high is None else f"in {low}..{high}"
    try:
        value = int(ascii_number(text), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number {bounds}; got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"must be a whole number {bounds}; got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    return _whole(text, 1, None)


def non_negative_int(text: str) -> int:
    """A whole number >= 0."""
    return _whole(text, 0, None)


def seed_int(text: str) -> int:
    """A seed: a whole number 0..SEED_MAX."""
    return _whole(text, 0, SEED_MAX)


def usable_cores() -> int:
    """The CPUs this process may run on."""
    import os
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not Linux
        return os.cpu_count() or 1


# Worker processes a script may start: a few per core at most (more only cost memory and
# start-up time; a process pool starts them all at once, so a typo like 2000 would swamp the
# machine).
MAX_JOBS = 4 * usable_cores()


def jobs_int(text: str) -> int:
    """A number of worker processes: 1..MAX_JOBS (4 per usable core)."""
    try:
        return _whole(text, 1, MAX_JOBS)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a whole number in 1..{MAX_JOBS} (4 per usable "
                                         f"core); got {text!r}") from None


def int_in(low: int, high: int, bound: str | None = None):
    """A type check for a whole number in low..high; `bound` names where `high` comes from
    (e.g. "run.round_cap"), for the message."""
    def check(text: str) -> int:
        try:
            return _whole(text, low, high)
        except argparse.ArgumentTypeError:
            if bound is None:
                raise
            raise argparse.ArgumentTypeError(f"must be a whole number in {low}..{high} "
                                             f"({bound}); got {text!r}") from None
    check.__name__ = f"int_in_{low}_{high}"
    return check


def _real(text: str, low: float, strict: bool) -> float:
    bounds = f"> {low:g}" if strict else f">= {low:g}"
    try:
        value = float(ascii_number(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number {bounds}; got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number {bounds}; got {text!r}")
    if value < low or (strict and value == low):
        raise argparse.ArgumentTypeError(f"must be {bounds}; got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    return _real(text, 0.0, True)


def non_negative_float(text: str) -> float:
    """A finite number >= 0."""
    return _real(text, 0.0, False)


def _float_to(high: float, strict: bool, bounds: str, name: str):
    """A type check for a number > 0 (`strict`) or >= 0, and <= `high`; `bounds` says which."""
    def check(text: str) -> float:
        value = _real(text, 0.0, strict)
        if value > high:
            raise argparse.ArgumentTypeError(f"must be {bounds}; got {text!r}")
        return value
    check.__name__ = f"{name}_{high:g}"
    return check


def positive_float_to(high: float):
    """A type check for a number > 0 and <= `high`."""
    return _float_to(high, True, f"> 0 and <= {high:g}", "positive_float_to")


def non_negative_float_to(high: float):
    """A type check for a number >= 0 and <= `high`."""
    return _float_to(high, False, f"in [0, {high:g}]", "non_negative_float_to")


def agent_name(text: str) -> str:
    """An agent as make_agent takes it (greedy, planner:boards=100, a policy path, ...): here only
    not blank (an empty name would be taken for the current directory); make_agent checks the
    rest."""
    if not str(text).strip():
        raise argparse.ArgumentTypeError("an empty agent name (give greedy, planner, a policy "
                                         "file, ...)")
    return text


# -- the options several scripts share ---------------------------------------------------------
def add_count_argument(parser: argparse.ArgumentParser, option: str, default: int, what: str,
                       *, high: int, metavar: str = "N", low: int = 1) -> None:
    """`option`, a whole number in `low`..`high` (every count has an upper bound: one of the
    MAX_ constants above), checked as it enters; its help reads "<what>, 1..<high> (default
    <default>)"."""
    parser.add_argument(option, type=int_in(low, high), default=default, metavar=metavar,
                        help=f"{what}, {low}..{high} (default {default})")


def add_seed_argument(parser: argparse.ArgumentParser, what: str = "evaluation seed") -> None:
    """--seed S, a seed 0..SEED_MAX (default 0); its help reads "<what>, 0..2**32-1 (default 0)"."""
    parser.add_argument("--seed", type=seed_int, default=0, metavar="S",
                        help=f"{what}, 0..2**32-1 (default 0)")


def add_jobs_argument(parser: argparse.ArgumentParser, what: str = "worker processes",
                      default: int = 2) -> None:
    """--jobs J, worker processes 1..MAX_JOBS (default `default`, at most MAX_JOBS)."""
    default = min(default, MAX_JOBS)
    parser.add_argument("--jobs", type=jobs_int, default=default, metavar="J",
                        help=f"{what}, 1..{MAX_JOBS} (default {default})")


def add_rules_argument(parser: argparse.ArgumentParser) -> None:
    """--rules FILE, a rules YAML file (default None: the shipped configs/rules/default.yaml)."""
    parser.add_argument("--rules", default=None, metavar="FILE",
                        help="a rules YAML file (default configs/rules/default.yaml)")


def add_opponents_argument(parser: argparse.ArgumentParser,
                           what: str = "what the agents fight") -> None:
    """--opponents POOL|generator, what the envs field (default None: the rank's shipped pool)."""
    parser.add_argument("--opponents", default=None, metavar="POOL",
                        help=f"{what}: a pool file, or 'generator' for the budget drafter "
                             f"(default: the rank's shipped pool for the rules, as RuneRun-v0)")


def _rules_named(path: str | None):
    from rune_env.rules import default_rules, load_rules
    return load_rules(path) if path else default_rules()


def parse_with_rules(build_parser, argv: list[str] | None):
    """(args, rules): `argv` parsed by `build_parser(rules)`, where `rules` are the ones its
    `--rules FILE` names (the shipped defaults without it), read first, so that the options the
    rules bound (a round within run.round_cap, the cells of a board, the ranks) are checked
    against that file's numbers (spelled out, `--rules FILE` or `--rules=FILE`; abbreviated, the
    file is read after the parse, whose bounds were then the defaults'). A file that does not
    load is one `error: --rules: ...` line and exit status 2 (SystemExit, as argparse's errors)."""
    pre = ScriptParser(add_help=False, allow_abbrev=False)
    add_rules_argument(pre)
    from rune_env.rules import RulesError
    named, _ = pre.parse_known_args(argv)
    try:
        rules = _rules_named(named.rules)
        args = build_parser(rules).parse_args(argv)
        if args.rules != named.rules:       # `--rul FILE`: the file is read now
            rules = _rules_named(args.rules)
    except RulesError as exc:
        pre.exit(2, f"error: --rules: {' '.join(str(exc).split())}\n")
    return args, rules


def rules_env_kwargs(args: argparse.Namespace) -> dict:
    """The env keyword that plays under `--rules FILE`: {"rules": FILE's absolute path} (a path,
    so that the Ray tasks of --ray, started elsewhere, read the same file), {} without it."""
    from pathlib import Path
    return {"rules": str(Path(args.rules).resolve())} if args.rules else {}


def add_json_argument(parser: argparse.ArgumentParser,
                      what: str = "one JSON object instead of the table") -> None:
    """--json, a switch; its help reads "print <what> (default off)"."""
    parser.add_argument("--json", action="store_true", help=f"print {what} (default off)")


# -- pools ------------------------------------------------------------------------------------
POOL_WARNING = ".*pool was made under rules"    # load_pool's warning for a pool of other rules


def load_pool_once(path, rules, strict: bool = False, rank: str | None = None):
    """`rune_env.run.opponents.load_pool`, its warning about a pool made under other rules
    printed as one `warning: ...` line on stderr; later loads of pools (by the envs) no longer
    repeat it. With `rank` (the rank whose runs will field it) also `pool_for_rank_warnings`.
    Raises PoolError as load_pool does."""
    from rune_env.run.opponents import load_pool
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pool = load_pool(path, rules, strict=strict)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    warnings.filterwarnings("ignore", message=POOL_WARNING)
    for line in pool_for_rank_warnings(pool, path, rules, rank) if rank is not None else ():
        print(f"warning: {line}", file=sys.stderr)
    return pool


def pool_for_rank_warnings(pool, path, rules, rank: str) -> list[str]:
    """What a player of `rank`'s runs should know of the pool fielded against them (a pool is
    still fielded for any rank: a designer may measure one rank's pool as another's):
    - a pool drafted for another rank, or for a rank these rules do not have;
    - the rounds a run of the rank plays when it neither draws nor saves a lamp (1 .. the wins
      to clear + the rank's lamps - 1) that the pool has no ghosts of: those battles are
      against the budget drafter (PoolOpponents' fallback), not the pool."""
    from rune_env.run.ranks import rank_effects
    names = [r.id for r in rules.spec.ranks]
    out = []
    if pool.rank != rank:
        whose = (f"rank {pool.rank!r}, which these rules do not have" if pool.rank not in names
                 else f"rank {pool.rank}")
        out.append(f"{path}: a pool drafted for {whose}, fielded for {rank}")
    last = rules.spec.run.wins_to_clear + rank_effects(rules, rank).lamps - 1
    missing = [r for r in range(1, last + 1) if r not in pool.rounds]
    if missing:
        out.append(f"{path}: no ghosts of round{'s' if len(missing) > 1 else ''} "
                   f"{round_ranges(missing)}, which {rank}'s runs reach without draws (1-{last}): "
                   f"there they meet the budget drafter")
    return out


def round_ranges(rounds: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    spans: list[list[int]] = []
    for r in rounds:
        if spans and r == spans[-1][1] + 1:
            spans[-1][1] = r
        else:
            spans.append([r, r])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


# -- the play switches ------------------------------------------------------------------------
def add_trust_pickle_argument(parser: argparse.ArgumentParser) -> None:
    """--trust-pickle: load SB3 checkpoints no training run on this machine signed."""
    parser.add_argument("--trust-pickle", action="store_true", dest="trust_pickle",
                        help="load stable-baselines3 checkpoints (.zip) that no training run on "
                             "this machine signed (agents/policy/trust.py); a checkpoint is a pickle and "
                             "can run any code, so only for files you trust (default: off; an "
                             "exported .pt policy is data and never needs it)")


def apply_trust_pickle(args: argparse.Namespace) -> None:
    """With --trust-pickle: trust pickled checkpoints here and in the processes started later."""
    if getattr(args, "trust_pickle", False):
        from agents.policy.trust import trust_pickle
        trust_pickle()


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    """--engine, --strict, --torch-threads, --trust-pickle and --progress."""
    add_engine_argument(parser)
    parser.add_argument("--strict", action="store_true",
                        help="refuse a pool or a policy made under other rules (default: warn "
                             "and use it)")
    parser.add_argument("--torch-threads", type=jobs_int, default=1, metavar="N",
                        help=f"torch threads for policies, 1..{MAX_JOBS} (default 1: fastest for "
                             f"one observation)")
    add_trust_pickle_argument(parser)
    add_progress_argument(parser)


def apply_play_arguments(args: argparse.Namespace) -> None:
    """Make the parsed engine this process's default, set torch's threads and --trust-pickle."""
    use_engine(args.engine)
    apply_trust_pickle(args)
    from agents.policy import limit_torch_threads
    limit_torch_threads(args.torch_threads)
