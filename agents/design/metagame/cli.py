"""Command-line pieces the exploitability and metagame scripts share (and, for the first checks,
the balance audit's)."""
from __future__ import annotations

import argparse

from agents.cli.args import MAX_JOBS, add_json_argument, fail, int_in, jobs_int
from agents.cli.fanout import add_ray_argument, ray_problem
from agents.cli.progress import add_progress_argument
from rune_env.files import ascii_number
from rune_env.rules import RulesError, load_rules

from .oracle import SearchSettings

# the searched boards of one best response: a battle of each against each opponent, so a bound on
# the battles a search plays (the audit's full search scores about 10**4 boards)
MAX_SEARCH_BUDGET = 10**6
# double-oracle iterations a round: each adds at most a few boards to the support
MAX_ITERATIONS = 10_000

BUDGETS = ("player", "rank")


def parse_rounds(items: list[str], round_cap: int) -> tuple[int, ...]:
    """'3 6 9 12', '3,6,9', '1-12' or a mix -> sorted distinct rounds within 1..round_cap; a
    ValueError says what is wrong."""
    rounds: set[int] = set()
    for part in (p.strip() for item in items for p in item.split(",")):
        lo, sep, hi = part.partition("-")
        try:
            first, last = int(ascii_number(lo)), int(ascii_number(hi if sep else lo))
        except ValueError:
            raise ValueError(f"{part!r} is not a round or a range like 3-6 or 1-12") from None
        if first > last:
            raise ValueError(f"the range {part!r} runs backwards")
        if first < 1 or last > round_cap:
            raise ValueError(f"rounds are 1..{round_cap} (run.round_cap); got {part!r}")
        rounds.update(range(first, last + 1))
    return tuple(sorted(rounds))


def add_common(p: argparse.ArgumentParser, default_rounds: str, quick_rounds: str,
               search_default: int, quick_search: int) -> None:
    p.add_argument("--rounds", nargs="+", default=None, metavar="R",
                   help=f"rounds, e.g. 3 6 9 12, 3,6,9 or 3-6, within 1..run.round_cap "
                        f"(default {default_rounds}; with --quick {quick_rounds})")
    p.add_argument("--budget", choices=BUDGETS, default="player",
                   help="the searched boards' mana: player = a player's mana by the round "
                        "(run.start_mana + run.income x (round - 1)), rank = a rank's "
                        "opponent budget (D-44): metagame.py's --rank, exploitability.py's "
                        "pool's rank (default player)")
    p.add_argument("--search-budget", type=int_in(1, MAX_SEARCH_BUDGET), default=None, metavar="N",
                   help=f"boards the best-response search scores at most, all starts together, "
                        f"1..{MAX_SEARCH_BUDGET} (default {search_default}; with --quick "
                        f"{quick_search})")
    p.add_argument("--quick", action="store_true",
                   help="fewer rounds, boards and a smaller search: a first look in well under "
                        "a minute (default off)")


def add_run_options(p: argparse.ArgumentParser) -> None:
    """--jobs (the fast engine's threads), --json, --progress and --ray."""
    p.add_argument("--jobs", type=jobs_int, default=None, metavar="J",
                   help=f"fast-engine threads, 1..{MAX_JOBS} (4 per usable core); results do not "
                        "depend on it (default: every usable core)")
    add_json_argument(p)
    add_progress_argument(p)
    add_ray_argument(p)


def with_search_budget(settings, budget: int | None):
    """`settings` (MetaSettings or ExploitSettings) with its search's budget set to `budget`;
    None or 0: as they are."""
    if not budget:
        return settings
    search = SearchSettings(**{**settings.search.__dict__, "budget": budget})
    return type(settings)(**{**settings.__dict__, "search": search})


def checked_start(a: argparse.Namespace, round_items: list[str]):
    """The checks these scripts make first, in this order: Ray usable if --ray was given, the
    --rules file, the rounds (`round_items`, within the rules' run.round_cap). (rules, rounds),
    or the exit status of the first check that fails, its `error: ...` line printed."""
    if a.ray is not None and (problem := ray_problem()):
        return fail(problem)
    try:
        rules = load_rules(a.rules)
    except RulesError as exc:        # missing, not YAML, or against the schema
        return fail(f"--rules: {exc}")
    try:
        rounds = parse_rounds(round_items, rules.spec.run.round_cap)
    except ValueError as exc:
        return fail(f"--rounds: {exc}")
    return rules, rounds
