#!/usr/bin/env python
"""Mutation check: is every battle number of the rules pinned down by some test?

    python scripts/mutation_check.py [--jobs N] [--only PATH ...] [--list] [--rules FILE]

Walks every battle number of the frozen rules (tests/data/rules.yaml), changes it (floats +10%,
ints +1, booleans flipped; an optional number left off, null, is turned on: the amplify cap at
2), writes the mutated copy to a temp file and runs the battle tests on it
(`pytest -x -q tests/ -m "not outside_mutation_check"` with RUNE_TEST_RULES=<temp file>;
tests/conftest.py reads the rules from there). A number whose change makes NO test fail is a
"survivor": the tests would not notice if the engine ignored it. Exit status 1 if any survive
(or a run broke), else 0.

Mutated: the sections battle, rings, grades, runes (not price), flows, flow_limits, attunement,
resonance, opposition, affinity, overdrive, erosion, freeze, cores, boss_rules, relics,
artifacts (not price or income_per_runes). Not mutated: version, variant, sectors, run, ranks, achievements,
dice, the run-only fields (relic income / hand_slots / lamp_saves, core hand_slots, grades
merge_count) and strings (flow kinds, pairs, ids).

A mutated config that `load_rules` refuses (e.g. fold 3 -> 4) is "refused", reported apart and
not a survivor. Before mutating, a baseline run on the unmutated copy finds the tests that fail
anyway (kept-failing engine disagreements, the coverage test while ids are uncovered): they are
deselected from every mutation run and listed, so they cannot "kill" mutants. A kill is
confirmed by re-running the failing test alone on the mutant (it must fail) and on the baseline
(it must pass); a test that fails that check (flaky, order-dependent, being edited) is left out
from then on and the mutant is tried again. Test files run rules-tests first (see FIRST), the
rest fastest first, so `-x` stops early for most mutants.

Options:
  --list          list the key paths (with value -> mutated value) and exit
  --only PATH     mutate only this path (repeatable), e.g. --only flows.0.multiplier
                  (flows[0].multiplier and flows.firestorm.multiplier are accepted too)
  --jobs N        pytest runs in parallel (default 2)
  --timeout S     seconds per pytest run before it counts as "timeout" (default 900)
  --no-confirm    take the first failing test as the kill, without re-running it
  --skip-baseline skip the unmutated run (nothing deselected, kills not confirmed)
  --json FILE     also write the results as JSON
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from agents.devtools.mutation import (FROZEN, Suite, baseline, check_all, mutations,
                                      normalise_path, outcomes_json, report)
from agents.cli.args import add_jobs_argument, check_output, positive_float_to, script_parser

MAX_TIMEOUT = 86400      # a day: a suite that runs longer has hung


def build_parser() -> argparse.ArgumentParser:
    parser = script_parser(__doc__)
    parser.add_argument("--rules", type=Path, default=FROZEN, metavar="FILE",
                        help="rules to mutate (default tests/data/rules.yaml, the frozen copy)")
    parser.add_argument("--only", action="append", metavar="PATH",
                        help="mutate only this key path, repeatable (default: every battle number)")
    add_jobs_argument(parser, "parallel pytest runs")
    parser.add_argument("--list", action="store_true",
                        help="list the key paths and exit (default off)")
    parser.add_argument("--timeout", type=positive_float_to(MAX_TIMEOUT), default=900.0,
                        metavar="S", help=f"seconds per pytest run before it times out, > 0 and "
                                          f"<= {MAX_TIMEOUT} (default 900)")
    parser.add_argument("--skip-baseline", action="store_true",
                        help="do not run the unmutated suite first, so nothing is deselected "
                             "(default off: run it)")
    parser.add_argument("--no-confirm", action="store_true",
                        help="take the first failing test as the kill without re-running it "
                             "(default off: confirm each kill)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the results here (default: none)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json is not None and (problem := check_output(args.json, "--json")):
        print(f"error: {problem}", file=sys.stderr)       # before hours of pytest runs
        return 2

    import yaml

    from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml
    try:
        data = safe_load_yaml(read_text(args.rules, "rules file", ValueError, limit=MAX_YAML_BYTES),
                              str(args.rules), ValueError)
    except (ValueError, yaml.YAMLError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    todo = mutations(data)
    if args.only:
        by_path = {m.path: m for m in todo}
        chosen = []
        for raw in args.only:
            path = normalise_path(raw, data)
            if path not in by_path:
                parser.error(f"--only {raw}: not a mutated battle number (see --list)")
            chosen.append(by_path[path])
        todo = chosen

    if args.list:
        width = max(len(m.path) for m in todo)
        for m in todo:
            label = f"  ({m.label})" if m.label != m.path else ""
            print(f"{m.path:<{width}}  {m.old!r} -> {m.new!r}{label}")
        print(f"{len(todo)} numbers")
        return 0

    suite = Suite(timeout=args.timeout, confirm=not args.no_confirm)
    with tempfile.TemporaryDirectory(prefix="mutation_check.") as tmp:
        workdir = Path(tmp)
        if not args.skip_baseline:
            t0 = time.monotonic()
            suite = baseline(data, suite, workdir)
            print(f"baseline: {time.monotonic() - t0:.1f} s; test files in the order run: "
                  + " ".join(Path(f).name for f in suite.files), flush=True)
            for nodeid in suite.deselect:
                print(f"  fails unmutated, deselected: {nodeid}", flush=True)
            for path in suite.ignore:
                print(f"  does not collect unmutated, ignored: {path}", flush=True)
        outcomes = check_all(todo, data, suite, workdir, args.jobs)

    groups = report(outcomes, suite)
    if args.json:
        from rune_env.files import write_text_atomic     # temp file + os.replace: never half
        write_text_atomic(args.json, json.dumps(outcomes_json(outcomes, suite), indent=1,
                                                default=str))
    return 1 if groups["survived"] or groups["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
