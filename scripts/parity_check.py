#!/usr/bin/env python
"""Parity of the fast engine with the reference, at scale.

    python scripts/parity_check.py [--pairs 100000] [--seed 0] [--rules FILE] [--jobs N]
                                   [--show 10] [--json]

Plays `--pairs` seeded board pairs (`agents.devtools.parity.parity_pairs`: two thirds from
the game's sampler over rounds 1..12, one third crowded "stress" boards) plus every pair of the
coverage boards (every core with every sun element, boss rule, relic, artifact and rune kind)
against a sample of them, with the fast engine (`fast_battles`) and with the reference
(`rune_env.battle.battle`, spread over `--jobs` processes), and compares every field: winner,
time, casts, turns, seals and the reason exactly, HP and max HP within 1e-9 relative.

Prints each mismatch (up to `--show`) with both boards as board-file JSON, then a summary: pairs,
mismatches, how many HP pairs are equal to the last bit, the outcomes, and the time each engine
took. Exit status 1 if any battle differs; 2 (one `error: ...` line) for a bad number or rules
file.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import time

from rune_env.battle import battle
from rune_env.battle.fast import fast_battles
from agents.devtools.parity import (compare, coverage_boards, hp_bits_equal,
                                    parity_pairs)
from agents.cli.args import (MAX_BATTLES, MAX_JOBS, MAX_REPEATS, fail, int_in, jobs_int,
                             script_parser, seed_int, usable_cores)
from rune_env.rules import RulesError, default_rules, load_rules

_RULES = None


def _init(rules_path: str | None) -> None:
    global _RULES
    _RULES = load_rules(rules_path) if rules_path else default_rules()


def _reference(chunk):
    return [battle(a, b, _RULES) for a, b in chunk]


def all_pairs(n: int, seed: int, rules):
    pairs = parity_pairs(n, seed, rules)
    cover = coverage_boards(rules)
    step = max(1, len(cover) // 6)
    pairs += [(a, b) for a in cover for b in cover[::step]]
    return pairs


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__)
    ap.add_argument("--pairs", type=int_in(0, MAX_BATTLES), default=10000, metavar="N",
                    help=f"seeded board pairs, besides the coverage pairs; 0..{MAX_BATTLES} "
                         f"(default 10000)")
    ap.add_argument("--seed", type=seed_int, default=0, metavar="S",
                    help="seed of the pairs, 0..2**32-1 (default 0)")
    ap.add_argument("--rules", default=None, metavar="FILE",
                    help="rules YAML (default: the default rules, configs/rules/default.yaml)")
    ap.add_argument("--jobs", type=jobs_int, default=usable_cores(), metavar="N",
                    help=f"processes for the reference engine, 1..{MAX_JOBS} (default "
                         f"{usable_cores()}: every usable core)")
    ap.add_argument("--show", type=int_in(0, MAX_REPEATS), default=10, metavar="N",
                    help=f"mismatches printed in full, 0..{MAX_REPEATS} (default 10)")
    ap.add_argument("--json", action="store_true",
                    help="print the summary as JSON (default off: as text)")
    args = ap.parse_args(argv)
    if args.rules is not None:
        try:
            load_rules(args.rules)
        except RulesError as exc:
            return fail(f"--rules: {exc}")

    _init(args.rules)
    rules = _RULES
    pairs = all_pairs(args.pairs, args.seed, rules)
    n = len(pairs)

    t0 = time.perf_counter()
    out = fast_battles(pairs, rules)          # includes the compile (or cache load) once
    t_fast_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = fast_battles(pairs, rules)
    t_fast = time.perf_counter() - t0

    t0 = time.perf_counter()
    size = max(1, min(500, n // (4 * max(1, args.jobs)) or 1))
    chunks = [pairs[i:i + size] for i in range(0, n, size)]
    if args.jobs > 1:
        ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
        with ctx.Pool(args.jobs, initializer=_init, initargs=(args.rules,)) as pool:
            refs = [r for part in pool.imap(_reference, chunks) for r in part]
    else:
        refs = [r for part in map(_reference, chunks) for r in part]
    t_ref = time.perf_counter() - t0

    mismatches = 0
    exact = 0
    outcomes = {"knockout": 0, "timeout": 0, "draw": 0, "sealed": 0}
    for j, ((a, b), ref) in enumerate(zip(pairs, refs)):
        bad = compare(out, j, ref)
        exact += hp_bits_equal(out, j, ref)
        outcomes["knockout" if ref.reason == "knockout" else "timeout"] += 1
        outcomes["draw"] += ref.winner is None
        outcomes["sealed"] += ref.seals != (0, 0)
        if bad:
            mismatches += 1
            if mismatches <= args.show:
                print(f"MISMATCH pair {j}:")
                for line in bad:
                    print(f"  {line}")
                print(f"  board0: {json.dumps(a.to_json(rules))}")
                print(f"  board1: {json.dumps(b.to_json(rules))}")
    summary = {
        "pairs": n, "mismatches": mismatches, "hp_bit_exact": exact, "outcomes": outcomes,
        "rules": args.rules or "default", "seed": args.seed,
        "fast_s_first_call": round(t_fast_first, 3), "fast_s": round(t_fast, 3),
        "reference_s": round(t_ref, 3), "reference_jobs": args.jobs,
    }
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"pairs {n}: {mismatches} mismatches; HP equal to the last bit in {exact}")
        print(f"outcomes: {outcomes['knockout']} knockouts, {outcomes['timeout']} timeouts "
              f"({outcomes['draw']} draws), net seals at the end in {outcomes['sealed']} battles")
        print(f"fast engine: {t_fast:.2f} s ({n / t_fast:,.0f} battles/s, all cores; first call "
              f"{t_fast_first:.2f} s); reference: {t_ref:.1f} s on {args.jobs} processes")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
