#!/usr/bin/env python3
"""The metagame of each round: a double oracle over budget-legal boards.

    python scripts/metagame.py [--rules FILE] [--rounds 3 6 9 12] [--budget player|rank]
                               [--iterations N] [--search-budget N] [--seed S] [--json]
                               [--out DIR [--charts]] [--tb DIR] [--quick] [--jobs J]
                               [--ray [ADDRESS]] [--no-progress]

Per round: a set of boards grows by the best responses a search finds against the current
mixture, the mixture being the zero-sum game's solution among the set (linprog, HiGHS; the
payoff a board's win rate over both seatings, draws one half). Reported: the mixture (boards,
weights, costs, casting runes), its support size, entropy H and exp(H), core, sun-element and
kind shares, and the gap: a fresh best response (another seed, 4x the search budget) against
the final mixture, its win rate with a Wilson 95% interval. Beside the mixture, the round's
alpha-Rank over every board the loop found (agents/evaluation/alpharank.py): the share of its
mass on the mixture's boards, its effective size, and its heaviest boards (up to 5, each >= 1%). A round whose fresh best response
wins more than 60% is said so (NOT REACHED). The mixtures are written as a pool file
DIR/meta_<rules hash>.json.gz (`source: metagame`, counts proportional to the weights), which
any script taking --pool can field; --charts draws PNGs beside it, and --tb DIR logs the same
pictures and the numbers (gap, support size, entropy by round; each round's double-oracle
curve) to TensorBoard in DIR/metagame_<rules hash>_s<seed>/. The method is in
agents/design/metagame/ (its docstrings).

A bad option is one `error: ...` line on stderr and exit status 2. Progress goes to stderr only.
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

from agents.cli.args import (add_rules_argument, check_output, check_output_dir, fail, int_in,
                             script_parser, seed_int)
from agents.cli.progress import bar
from agents.design.metagame import (MetaSettings, metagame_rounds, mixture_pool,
                                    quick_meta_settings)
from agents.design.metagame.charts import charts_problem, matrix_chart, shares_chart
from agents.design.metagame.cli import (MAX_ITERATIONS, add_common, add_run_options,
                                        checked_start, with_search_budget)
from agents.design.metagame.tblog import log_metagame, tb_problem
from rune_env.run.opponents import save_pool

DEFAULT_ROUNDS, QUICK_ROUNDS = "3 6 9 12", "3 6"
DEFAULTS = MetaSettings(rounds=())


def build_parser():
    p = script_parser(__doc__)
    add_rules_argument(p)
    add_common(p, DEFAULT_ROUNDS, QUICK_ROUNDS, DEFAULTS.search.budget,
               quick_meta_settings(()).search.budget)
    p.add_argument("--iterations", type=int_in(1, MAX_ITERATIONS), default=None, metavar="N",
                   help=f"double-oracle iterations at most a round, 1..{MAX_ITERATIONS} (default "
                        f"{DEFAULTS.iterations}; with --quick {quick_meta_settings(()).iterations})")
    p.add_argument("--rank", default=None, metavar="R",
                   help="with --budget rank: the rank whose opponent budget the boards get (a "
                        "name or 0..5; default: the first rank, whose budget is a player's); its "
                        "pool is written as meta_<rules hash>_<rank>.json.gz")
    p.add_argument("--seed", type=seed_int, default=0, metavar="S",
                   help="seed of the drafted boards and the searches, 0..2**32-1 (default 0)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write the mixtures as DIR/meta_<rules hash>.json.gz (default: not "
                        "written); an existing file is kept unless --force")
    p.add_argument("--force", action="store_true",
                   help="replace an existing DIR/meta_<rules hash>.json.gz (default: keep it and "
                        "stop before anything is solved; configs/meta holds the shipped ones, "
                        "which the planner and the recipes' metagame agent read)")
    p.add_argument("--charts", action="store_true",
                   help="also draw PNGs beside the pool in --out: the mixture's core and kind "
                        "shares by round, and the support's payoff matrices (needs matplotlib, "
                        "the 'charts' extra; default off)")
    p.add_argument("--tb", default=None, metavar="DIR",
                   help="log the charts as images and the gap, support size and entropy by round "
                        "as scalars to TensorBoard in DIR/metagame_<rules hash>_s<seed>/ (needs "
                        "the train and charts extras; default: no TensorBoard)")
    add_run_options(p)
    return p


def settings_of(a, rounds) -> MetaSettings:
    if a.quick:
        s = quick_meta_settings(rounds, a.seed, a.budget, a.iterations)
    else:
        s = MetaSettings(rounds=rounds, budget=a.budget, seed=a.seed,
                         iterations=a.iterations or DEFAULTS.iterations)
    s = with_search_budget(s, a.search_budget)
    return MetaSettings(**{**s.__dict__, "jobs": a.jobs, "rank": a.rank})


def format_round(r, rules) -> str:
    j = r.to_json(rules)
    g = j["gap"]
    verdict = "reached" if g["passed"] else (
        "NOT REACHED (the loop had converged: its searches missed this counter)" if j["converged"]
        else "NOT REACHED (iterations used up before the loop converged: try more --iterations)")
    lines = [f"round {r.round} (budget {r.budget}): {len(r.result.strategies)} boards, support "
             f"{j['support_size']}, entropy {j['entropy']:.3f} (exp {j['effective_size']:.2f}), "
             f"{'converged' if j['converged'] else 'iterations used up'}, {r.seconds:.0f} s",
             f"  gap: a fresh best response wins {100 * g['win_rate']:.1f}% "
             f"[{100 * g['ci'][0]:.1f}, {100 * g['ci'][1]:.1f}] (payoff {100 * g['payoff']:.1f}%)"
             f" against the mixture: target <= {100 * g['target']:.0f}% {verdict}",
             f"    {g['describe']} (cost {g['cost']})"]
    sh = j["shares"]
    lines.append("  cores: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in sh["core"].items()))
    if sh["sun_element"]:
        lines.append("  sun elements: " + ", ".join(f"{k} {100 * v:.0f}%"
                                                    for k, v in sh["sun_element"].items()))
    lines.append("  kinds: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in sh["kind"].items()
                                         if v > 0.005))
    lines.append(f"  mean casting runes {sh['mean_casting_runes']:.2f}, mean cost "
                 f"{sh['mean_cost']:.1f}")
    for m in j["mixture"]:
        lines.append(f"  {100 * m['weight']:5.1f}%  cost {m['cost']:>3}  casting "
                     f"{m['casting_runes']}  {m['describe']}")
    ar = j["alpharank"]
    lines.append(f"  alpha-Rank over all {len(r.result.strategies)} boards: "
                 f"{100 * ar['on_mixture']:.0f}% of its mass on the mixture's, effective size "
                 f"{ar['effective_size']:.2f}")
    for t in ar["top"]:
        lines.append(f"  {100 * t['mass']:5.1f}%  cost {t['cost']:>3}  "
                     f"{'in the mixture ' if t['in_mixture'] else 'outside it     '}"
                     f"{t['describe']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    start = checked_start(a, a.rounds or (QUICK_ROUNDS if a.quick else DEFAULT_ROUNDS).split())
    if isinstance(start, int):
        return start
    rules, rounds = start
    if a.rank is not None:
        if a.budget != "rank":
            return fail("--rank: for --budget rank (the player's budget is the same at every rank)")
        from rune_env.envs.arguments import check_rank
        try:
            a.rank = rules.spec.ranks[check_rank(rules, a.rank, "--rank")].id
        except ValueError as exc:
            return fail(str(exc))
    out_path = None
    if a.out is not None:
        # a rank's budget gives another metagame: beside the player's, never in its place
        name = f"meta_{rules.hash}" + (f"_{a.rank}" if a.rank else "")
        out_path = Path(a.out) / f"{name}.json.gz"
        if Path(a.out).exists() and not Path(a.out).is_dir():
            return fail(f"--out {a.out}: not a directory")
        if out_path.exists() and not a.force:
            return fail(f"--out {a.out}: {out_path} exists (pass --force to replace it)")
        if (problem := check_output(out_path, "--out")):
            return fail(problem)
    if a.charts and a.out is None:
        return fail("--charts: give --out DIR to write the charts in")
    if a.force and a.out is None:
        return fail("--force: replaces the pool --out DIR writes; give --out")
    if a.charts and (problem := charts_problem()):
        return fail(f"--charts: {problem}")
    if a.tb is not None and (problem := tb_problem() or check_output_dir(a.tb, "--tb")):
        return fail(problem)
    settings = settings_of(a, rounds)
    t0 = time.perf_counter()
    results = []
    with bar(len(rounds) * settings.iterations, "metagame", a.progress, unit="it") as b:
        def step(r, it, info):
            b.set_description(f"round {r}: {info['strategies']} boards, best response "
                              f"{100 * info['best_response']:.0f}%")
            b.update(1)

        def round_done(_):
            if a.ray is not None:       # Ray: no iteration ticks, a round's worth at its end
                b.update(settings.iterations)
        results = metagame_rounds(rules, settings, a.ray, step, round_done)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        save_pool(mixture_pool(results, rules, settings), out_path, compact=True)
        missed = [r.round for r in results if not r.passed]
        if missed:     # the planner and the recipes' metagame agent field it as it is
            warnings.warn(f"{out_path}: round{'s' if len(missed) > 1 else ''} "
                 f"{', '.join(map(str, missed))} did not reach the target (a "
                 f"fresh best response beats the mixture by more than it should): the pool is "
                 f"written, but its boards there are beatable; more --iterations or "
                 f"--search-budget, or without --quick")
    if a.charts:
        data = [r.to_json(rules) for r in results]
        title = f"rules {rules.hash}, seed {a.seed}" + (f", {a.rank}'s budget" if a.rank else "")
        stem = out_path.name.removesuffix(".json.gz")
        shares_chart(data, out_path.parent / f"{stem}_shares.png", title)
        matrix_chart(data, out_path.parent / f"{stem}_matrix.png", title)
    if a.tb is not None:
        log_metagame(a.tb, [r.to_json(rules) for r in results], rules.hash, a.seed)
    if a.json:
        print(json.dumps({"rules_hash": rules.hash, "settings": settings.to_json(),
                          "pool": None if out_path is None else str(out_path),
                          "rounds": [r.to_json(rules) for r in results]}, indent=1))
    else:
        print(f"metagame under rules {rules.hash}, seed {a.seed}, "
              + (f"{a.rank}'s opponent budget" if a.rank else f"budget {a.budget}"))
        for r in results:
            print(format_round(r, rules))
        print(f"{sum(r.passed for r in results)} of {len(results)} rounds reach the target; "
              f"{time.perf_counter() - t0:.0f} s" + (f"; pool {out_path}" if out_path else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
