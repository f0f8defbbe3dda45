#!/usr/bin/env python3
"""Balance audit for designers: the best small and searched boards of each round.

    python scripts/balance_audit.py [--rules FILE] [--pool FILE] [--rounds 1-12 | --rounds 3,6,9]
                                    [--quick] [--json] [--seed S] [--jobs J] [--ray [ADDRESS]]
                                    [--against FILE|none] [--no-progress]

Per round, against round-matched reference boards (the budget drafter's, or with --pool a pool's
ghosts of the round): the best one-rune, two-rune, mono-kind, trick and open-search board, each
chosen on one set of reference boards and measured on a disjoint one (win rate with a Wilson 95%
interval, median battle time, notes on its cost and on what a shop could not give it yet), and
the reference boards' baseline against themselves. The fast_kill family hunts the earliest
knockouts instead: amplify towers, then a hill climb, chosen by their fast kills (knockouts won
before the opponent's second turn). Every board's fast-kill rate and fastest knockout are in its
row; a reported board with a fast kill on the report set gets a HOLE line (JSON: "holes"); the
exit status does not change. The method is in agents/design/audit/ (its docstring).

The report ends with the verdicts: whether each limit docs/BALANCE.md holds the defaults to is
met (one rune at most 20% and two runes at most 55% from round 3 on, no hole in any round;
`agents/design/audit/verdicts.py`). With a rules file other than the defaults it also audits the
defaults (or `--against FILE`; `--against none` skips it) with the same settings and seed and
lists what moved: each family's win and fast-kill rate there and here (JSON: "verdicts",
"against").

A bad number, rules file or pool file is one `error: ...` line on stderr and exit status 2,
before anything is played. Progress bars go to stderr when it is a terminal (--progress forces
them, --no-progress hides them); never to stdout, so --json prints one JSON object only.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

from agents.cli.args import (MAX_JOBS, fail, jobs_int, load_pool_once, script_parser,
                             seed_int)
from agents.cli.fanout import add_ray_argument
from agents.cli.progress import add_progress_argument, bar
from agents.design.audit import (STAGES, AuditError, audit, check_auditable,
                                 format_report, full_settings, quick_settings)
from agents.design.audit.verdicts import format_moved, format_verdicts, moved, verdicts
from agents.design.metagame.cli import checked_start
from agents.design.metagame.cli import parse_rounds as parse_round_items
from rune_env.rules import RulesError, load_rules
from rune_env.rules.config import DEFAULT_RULES_PATH
from rune_env.run.opponents import PoolError

DEFAULT_ROUNDS = "1-12"
QUICK_ROUNDS = "3,6,9"


def parse_rounds(text: str, round_cap: int) -> tuple[int, ...]:
    """'1-12', '3,6,9' or a mix ('2-4,9') -> sorted distinct rounds, each within 1..round_cap;
    a ValueError says what is wrong (the metagame scripts' parser, on one argument)."""
    return parse_round_items([text], round_cap)


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--rules", default=None, metavar="FILE",
                   help=f"a rules YAML file (default {DEFAULT_RULES_PATH.relative_to(REPO)})")
    p.add_argument("--pool", default=None, metavar="FILE",
                   help="an opponent pool whose ghosts of each round are the reference boards "
                        "(default none: the budget drafter's boards)")
    p.add_argument("--rounds", default=None, metavar="SPEC",
                   help=f"rounds to audit, e.g. 1-12 or 3,6,9, within 1..run.round_cap "
                        f"(default {DEFAULT_ROUNDS}; with --quick {QUICK_ROUNDS})")
    p.add_argument("--quick", action="store_true",
                   help="fewer rounds, opponents and candidates (every family, the fast_kill "
                        "one with fewer towers and a shorter climb): a first look in well under "
                        "a minute (default off)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object instead of the tables (default off)")
    p.add_argument("--seed", type=seed_int, default=0, metavar="S",
                   help="seed of the reference boards, their split and the search, "
                        "0..2**32-1 (default 0)")
    p.add_argument("--jobs", type=jobs_int, default=None, metavar="J",
                   help=f"fast-engine threads, 1..{MAX_JOBS}; the results do not depend on it "
                        "(default: every usable core)")
    p.add_argument("--against", default=None, metavar="FILE",
                   help="a rules file to compare with: the same audit under it, and what moved "
                        "(default: the defaults when --rules names another file; 'none': no "
                        "comparison)")
    add_progress_argument(p)
    add_ray_argument(p)
    return p


def _against_path(a) -> str | None:
    """The rules file to compare with, or None."""
    if a.against is not None:
        return None if a.against == "none" else a.against
    if a.rules is None or Path(a.rules).resolve() == DEFAULT_RULES_PATH.resolve():
        return None
    return str(DEFAULT_RULES_PATH)


def _run(rules, settings, pool, a, rules_path: str, label: str):
    with bar(len(settings.rounds) * len(STAGES), label, a.progress, unit="stage") as b:
        def step(round_: int, stage: str) -> None:
            b.set_description(f"{label}: round {round_}: {stage}")
            b.update(1)
        return audit(rules, settings, pool, pool_path=a.pool, progress=step,
                     rules_path=rules_path, ray=a.ray)


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    start = checked_start(a, [a.rounds or (QUICK_ROUNDS if a.quick else DEFAULT_ROUNDS)])
    if isinstance(start, int):
        return start
    rules, rounds = start
    against_path = _against_path(a)
    against_rules = None
    if against_path is not None:
        try:
            against_rules = load_rules(against_path)
        except RulesError as exc:
            return fail(f"--against: {exc}")
    pool = None
    if a.pool is not None:
        try:
            pool = load_pool_once(a.pool, rules)
        except PoolError as exc:
            return fail(f"--pool: {exc}")
    settings = (quick_settings if a.quick else full_settings)(rounds, seed=a.seed, jobs=a.jobs)
    try:
        check_auditable(rules, settings)
        if against_rules is not None:
            check_auditable(against_rules, settings)
        report = _run(rules, settings, pool, a,
                      a.rules or str(DEFAULT_RULES_PATH.relative_to(REPO)), "balance audit")
        other = None if against_rules is None else _run(
            against_rules, settings, pool, a, against_path, "against")
    except AuditError as exc:        # e.g. a pool round with a single board: nothing to split
        return fail(str(exc))
    judged = verdicts(report)
    if a.json:
        out = report.to_json()
        out["verdicts"] = [v.to_json() for v in judged]
        if other is not None:
            out["against"] = {"rules": against_path, "rules_hash": against_rules.hash,
                              "verdicts": [v.to_json() for v in verdicts(other)],
                              "moved": [m.to_json() for m in moved(report, other)]}
        print(json.dumps(out, indent=1))
        return 0
    text = [format_report(report), "", format_verdicts(judged)]
    if other is not None:
        text += ["", format_moved(moved(report, other), f"{against_path} ({against_rules.hash})"),
                 "", f"under {against_path}:", format_verdicts(verdicts(other))]
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
