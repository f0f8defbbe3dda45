"""The balance audit round by round and as a whole: each family's best board chosen on the choose
set and measured on the report set, the report (JSON and text). The method is described in the
package docstring (`agents/design/audit/__init__.py`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from rune_env.rules import Board, Rules, geometry
from rune_env.run.opponents import Pool

from .families import (mono_kind_boards, one_rune_boards, open_search, trick_boards,
                       two_rune_boards)
from .scoring import (_SPLIT_STREAM, _START_STREAM, AuditError, AuditSettings, Evaluator,
                      FastKillScore, Opponents, Score, board_cost, drafted_boards, pool_boards,
                      round_budget, shop_notes, split_opponents)
from .towers import distinct_fast, fast_kill_search, tower_boards

FAMILIES: tuple[str, ...] = ("one_rune", "two_rune", "mono_kind", "tricks", "open_search",
                             "fast_kill")
# what each family needs computed first (its candidates grow out of their best boards)
_NEEDS: dict[str, tuple[str, ...]] = {
    "one_rune": (), "two_rune": ("one_rune",), "mono_kind": (),
    "tricks": ("one_rune", "two_rune"),
    "open_search": ("one_rune", "two_rune", "mono_kind", "tricks"),
    "fast_kill": ("one_rune", "two_rune", "mono_kind", "tricks", "open_search"),
}
STAGES: tuple[str, ...] = ("reference boards",) + FAMILIES + ("report set",)


# -- one round --------------------------------------------------------------------------------
@dataclass
class FamilyResult:
    family: str
    board: Board
    cost: int
    choose: Score              # on the choose set (optimistic: it was picked there)
    report: Score              # on the report set (the estimate)
    candidates: int            # boards scored
    over_budget: int           # boards of the family dropped for the budget
    notes: list[str]
    objective: FastKillScore | None = None   # fast_kill: what it was chosen by (choose set)

    @property
    def hole(self) -> bool:
        """A fast kill on the report set: a knockout of a full-HP reference board (every
        reference board starts whole) before its second turn."""
        return self.report.fast_kills > 0

    def to_json(self, rules: Rules) -> dict:
        b = self.board
        out = {"board": b.to_json(rules),
               "size": {"casting": sum(k in rules.casting_kinds for k, _ in b.runes.values()),
                        "runes": len(b.runes), "hand": len(b.hand),
                        "artifacts": len(b.artifacts)},
               "kinds": sorted(k for k, _ in b.runes.values()), "core": b.core,
               "sun_element": b.sun_element, "cost": self.cost,
               **self.report.to_json(), "choose_win_rate": self.choose.win_rate,
               "choose_fast_kill_rate": self.choose.fast_kill_rate,
               "candidates": self.candidates, "over_budget": self.over_budget,
               "notes": self.notes}
        if self.objective is not None:
            out["objective"] = {"fast_kill_rate": self.objective.fast_kill_rate,
                                "reach": self.objective.reach}
        return out


@dataclass
class RoundAudit:
    round: int
    budget: int
    reference: str
    choose: Opponents
    report: Opponents
    baseline: Score
    families: dict[str, FamilyResult]

    @property
    def holes(self) -> list[FamilyResult]:
        """The reported boards that fast-kill a reference board of the report set."""
        return [f for f in self.families.values() if f.hole]

    def to_json(self, rules: Rules) -> dict:
        costs = [board_cost(b, rules) for b in self.choose.boards + self.report.boards]
        return {"budget": self.budget, "reference": self.reference,
                "choose_boards": self.choose.total, "report_boards": self.report.total,
                "reference_cost": {"mean": float(np.mean(costs)), "max": int(max(costs))},
                "baseline": self.baseline.to_json(),
                "families": {name: f.to_json(rules) for name, f in self.families.items()},
                "holes": [{"family": f.family, "fast_kill_rate": f.report.fast_kill_rate,
                           "fast_kills": f.report.fast_kills, "battles": f.report.battles,
                           "fastest_knockout": f.report.to_json()["fastest_knockout"],
                           "cost": f.cost, "budget": self.budget,
                           "board": describe(f.board, rules)} for f in self.holes]}


def _ranked(evaluator: Evaluator, boards: list[Board], choose: Opponents,
            budget: int) -> tuple[list[tuple[Board, Score]], int]:
    """The budget-legal boards, scored on the choose set, best first; and how many were over."""
    legal = [b for b in boards if board_cost(b, evaluator.rules) <= budget]
    scores = evaluator.scores(legal, choose)
    ranked = sorted(zip(legal, scores), key=lambda bs: bs[1].key(), reverse=True)  # stable
    return ranked, len(boards) - len(legal)


def _distinct_best(ranked: list[tuple[Board, Score]], count: int, rules: Rules) -> list[Board]:
    """The `count` best boards whose battles differ (a sun element that reaches no rune plays the
    same battles as another: it would only fill a place)."""
    out, seen = [], set()
    for board, score in ranked:
        if score in seen:
            continue
        seen.add(score)
        out.append(board)
        if len(out) >= count:
            break
    return out


def reference_sets(rules: Rules, round_: int, settings: AuditSettings,
                   pool: Pool | None) -> tuple[Opponents, Opponents, str]:
    """The round's disjoint choose and report sets and a line naming their source."""
    count = settings.choose_boards + settings.report_boards
    draws: list[Board] = []
    source = "budget drafter"
    if pool is not None:
        draws = pool_boards(pool, rules, round_, count, settings.seed)
        source = "pool" if draws else "budget drafter (the pool has no boards of this round)"
    if not draws:
        draws = drafted_boards(rules, round_, count, settings.seed)
    choose, report = split_opponents(draws, settings.choose_boards / count, rules,
                                     np.random.default_rng([settings.seed, round_, _SPLIT_STREAM]))
    return choose, report, source


def audit_round(rules: Rules, round_: int, settings: AuditSettings, pool: Pool | None = None,
                families: Sequence[str] = FAMILIES, evaluator: Evaluator | None = None,
                progress: Callable[[str], None] | None = None) -> RoundAudit:
    """Audit one round (see the package docstring); `families` picks what to report (what they
    grow out of is computed too). `progress(stage)` is called after each stage."""
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise AuditError(f"unknown family {unknown[0]!r} (one of {', '.join(FAMILIES)})")
    needed = set(families) | {n for f in families for n in _NEEDS[f]}
    evaluator = evaluator or Evaluator(rules, settings.jobs)
    tick = progress or (lambda stage: None)
    budget = round_budget(rules, round_)
    choose, report, source = reference_sets(rules, round_, settings, pool)
    tick("reference boards")
    grades = [g for g in settings.small_grades if g <= rules.max_grade]
    ranked: dict[str, list[tuple[Board, Score]]] = {}
    counts: dict[str, tuple[int, int]] = {}
    objectives: dict[str, FastKillScore] = {}

    def run_family(name: str, boards: list[Board]) -> None:
        ranked[name], over = _ranked(evaluator, boards, choose, budget)
        counts[name] = (len(ranked[name]), over)

    for name in FAMILIES:
        if name not in needed:
            tick(name)
            continue
        if name == "one_rune":
            run_family(name, one_rune_boards(rules, round_, grades))
        elif name == "two_rune":
            parents = _distinct_best(ranked["one_rune"], settings.two_rune_parents, rules)
            run_family(name, two_rune_boards(rules, round_, parents, grades))
        elif name == "mono_kind":
            run_family(name, mono_kind_boards(rules, round_, grades, settings.mono_sizes))
        elif name == "tricks":
            bases = [b for fam in ("one_rune", "two_rune")
                     for b in _distinct_best(ranked[fam], settings.trick_bases, rules)]
            run_family(name, trick_boards(rules, round_, bases))
        elif name == "open_search":
            so_far = max((r[0] for fam, r in ranked.items() if r), key=lambda bs: bs[1].key())
            drafted = drafted_boards(rules, round_, settings.search_drafted_starts, settings.seed,
                                     _START_STREAM)
            board, score, scored = open_search(evaluator, choose, [so_far[0], *drafted], round_,
                                               budget, settings)
            ranked[name], counts[name] = [(board, score)], (scored, 0)
        else:
            board, objectives[name], scored, over = _fast_kill(
                evaluator, choose, round_, budget, settings, ranked["open_search"][0][0])
            ranked[name] = [(board, evaluator.scores([board], choose)[0])]
            counts[name] = (scored, over)
        tick(name)
    results: dict[str, FamilyResult] = {}
    for name in families:
        if not ranked[name]:
            continue           # every candidate over the budget
        board, chosen = ranked[name][0]
        measured = evaluator.scores([board], report)[0]
        cost = board_cost(board, rules)
        scored, over = counts[name]
        notes = [f"cost {cost}/{budget}"] + shop_notes(board, rules)
        if over:
            notes.append(f"{over} of {scored + over} candidates over the budget")
        results[name] = FamilyResult(name, board, cost, chosen, measured, scored, over, notes,
                                     objectives.get(name))
    baseline = evaluator.baseline(choose, report)
    tick("report set")
    return RoundAudit(round_, budget, source, choose, report, baseline, results)


def _fast_kill(evaluator: Evaluator, choose: Opponents, round_: int, budget: int,
               settings: AuditSettings, searched: Board) -> tuple[Board, FastKillScore, int, int]:
    """The fast_kill family: the towers, then the fast-kill hill climb from the best of them and
    from the open search's best board. Returns the board, its objective on the choose set, the
    boards scored and the towers over the budget (none: they are built within it)."""
    rules = evaluator.rules
    towers = tower_boards(rules, round_, budget, settings)
    legal = [b for b in towers if board_cost(b, rules) <= budget]
    scores = evaluator.fast_kill_scores(legal, choose)
    starts = distinct_fast(legal, scores, settings.fast_starts, rules) + [searched]
    board, objective, scored = fast_kill_search(evaluator, choose, starts, round_, budget,
                                                settings)
    return board, objective, len(legal) + scored, len(towers) - len(legal)


# -- the whole audit --------------------------------------------------------------------------
@dataclass
class AuditReport:
    rules: Rules
    rules_path: str | None
    pool_path: str | None
    settings: AuditSettings
    rounds: list[RoundAudit]
    battles: int

    def to_json(self) -> dict:
        return {"rules_hash": self.rules.hash, "rules": self.rules_path or self.rules.source,
                "pool": self.pool_path,
                "seed": self.settings.seed, "settings": self.settings.to_json(),
                "battles": self.battles,
                "rounds": {str(r.round): r.to_json(self.rules) for r in self.rounds}}


def check_auditable(rules: Rules, settings: AuditSettings) -> None:
    """Refuse what the audit cannot do, before any work."""
    if rules.spec.variant != "deterministic":
        raise AuditError(f"the audit plays the deterministic variant only (rules variant: "
                         f"{rules.spec.variant!r})")
    cap = rules.spec.run.round_cap
    bad = [r for r in settings.rounds if not 1 <= r <= cap]
    if not settings.rounds or bad:
        raise AuditError(f"rounds must be within 1..{cap} (run.round_cap); got "
                         f"{bad[0] if bad else 'none'}")
    if settings.choose_boards < 1 or settings.report_boards < 1:
        raise AuditError("choose_boards and report_boards must be at least 1")


def audit(rules: Rules, settings: AuditSettings, pool: Pool | None = None,
          rules_path: str | None = None, pool_path: str | None = None,
          families: Sequence[str] = FAMILIES,
          progress: Callable[[int, str], None] | None = None,
          ray: str | None = None) -> AuditReport:
    """The audit of every round of `settings.rounds`; `progress(round, stage)` after each stage.
    `ray`: a Ray address (agents/cli/fanout.py) to audit the rounds as Ray tasks, one a round (each
    its own evaluator on one fast-engine thread unless settings.jobs says otherwise; a round's
    battles and scores are its own, so the report is the same); `progress` then hears each
    round's stages when the round is done."""
    check_auditable(rules, settings)
    if ray is not None:
        from agents.cli.fanout import run_tasks
        ticks = _RoundTicks(progress, len(settings.rounds))
        done = run_tasks(_round_task, [(rules, r, settings, pool, tuple(families))
                                       for r in settings.rounds], ray, ticks,
                         weights=[len(STAGES)] * len(settings.rounds))
        return AuditReport(rules, rules_path, pool_path, settings, [d[0] for d in done],
                           sum(d[1] for d in done))
    evaluator = Evaluator(rules, settings.jobs)
    rounds = []
    for r in settings.rounds:
        tick = (lambda stage, r=r: progress(r, stage)) if progress else None
        rounds.append(audit_round(rules, r, settings, pool, families, evaluator, tick))
    return AuditReport(rules, rules_path, pool_path, settings, rounds, evaluator.battles)


def _round_task(rules: Rules, round_: int, settings: AuditSettings, pool: Pool | None,
                families: tuple[str, ...]) -> tuple[RoundAudit, int]:
    """One round of a fanned-out audit: (its audit, the battles it played)."""
    evaluator = Evaluator(rules, settings.jobs or 1)
    return audit_round(rules, round_, settings, pool, families, evaluator), evaluator.battles


class _RoundTicks:
    """The audit's progress(round, stage) fed from run_tasks' update(stages) per finished round."""

    def __init__(self, progress: Callable[[int, str], None] | None, rounds: int):
        self.progress, self.rounds, self.done = progress, rounds, 0

    def update(self, stages: int) -> None:
        self.done += 1
        for _ in range(stages):
            if self.progress is not None:
                self.progress(self.done, f"{self.done} of {self.rounds} rounds done (Ray)")


# -- text -------------------------------------------------------------------------------------
def _roman(grade: int) -> str:
    numerals = ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
    out = ""
    for value, letters in numerals:
        while grade >= value:
            out += letters
            grade -= value
    return out


def describe(board: Board, rules: Rules) -> str:
    """A board in one line: its runes (with cells when few), artifacts, hand and core."""
    geo = geometry(rules.radius)
    if len(board.runes) <= 3:
        runes = ", ".join(f"{k} {_roman(g)} {geo.name(c)}"
                          for c, (k, g) in sorted(board.runes.items()))
    else:
        tally = Counter(board.runes.values())
        runes = ", ".join(f"{n}x {k} {_roman(g)}" if n > 1 else f"{k} {_roman(g)}"
                          for (k, g), n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
    parts = [runes or "no runes"]
    if board.artifacts:
        parts.append(" + ".join(f"{a} {geo.name(c)}" for c, a in sorted(board.artifacts.items())))
    if board.hand:
        tally = Counter(board.hand)
        parts.append("hand " + ", ".join(f"{n}x {k} {_roman(g)}"
                                         for (k, g), n in sorted(tally.items())))
    core = board.core or "no core"
    if board.sun_element:
        core += f"({board.sun_element})"
    return "; ".join(parts) + f" | {core}"


def _pct(x: float) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}"


def _ko(score: Score) -> str:
    """The fastest knockout won: seconds / the opponent's turns by then ("-": none)."""
    if score.fastest_ko is None:
        return "-"
    return f"{score.fastest_ko:.1f}/{score.fastest_ko_turns}"


def _hole_line(f: FamilyResult, budget: int, rules: Rules) -> str:
    return (f"  HOLE {f.family}: fast-kills {_pct(f.report.fast_kill_rate).strip()}% of the "
            f"report battles (fastest knockout {f.report.fastest_ko:.1f} s, the opponent had "
            f"taken {f.report.fastest_ko_turns} turn(s)); cost {f.cost}/{budget}: "
            f"{describe(f.board, rules)}")


def _notes_line(f: FamilyResult) -> str:
    chosen = f"chosen at {_pct(f.choose.win_rate).strip()}% of {f.candidates}"
    if f.objective is not None:
        chosen = (f"chosen at {_pct(f.objective.fast_kill_rate).strip()}% fast kills (damage by "
                  f"the 2nd turn {_pct(f.objective.reach).strip()}%) of {f.candidates}")
    times = []
    if f.family == "open_search":
        times = [f"battle times median {f.report.median_time:.1f} s, fastest "
                 f"{f.report.fastest_time:.1f} s"]
    return "; ".join([chosen, *times, *f.notes])


def format_report(report: AuditReport) -> str:
    rules = report.rules
    lines = [f"balance audit  rules {report.rules_path or rules.source} ({rules.hash})  "
             f"pool {report.pool_path or 'none (budget drafter)'}  seed {report.settings.seed}"]
    holes = 0
    for ra in report.rounds:
        lines.append("")
        lines.append(f"round {ra.round}  budget {ra.budget}  reference: {ra.reference}, "
                     f"choose {ra.choose.total} / report {ra.report.total} boards")
        lines.append(f"  {'family':<12} {'size':>5}  {'win %':>5} {'[95% CI]':>13}  "
                     f"{'median s':>8}  {'fast %':>6} {'fastest KO':>10}  board / notes")
        pad = f"  {'':<12} {'':>5}  {'':>5} {'':>13}  {'':>8}  {'':>6} {'':>10}  "
        for name, f in ra.families.items():
            casting = sum(k in rules.casting_kinds for k, _ in f.board.runes.values())
            lo, hi = f.report.ci
            lines.append(f"  {name:<12} {casting:>2}/{len(f.board.runes):<2}  "
                         f"{_pct(f.report.win_rate)} [{_pct(lo)},{_pct(hi)}]  "
                         f"{f.report.median_time:>8.1f}  {_pct(f.report.fast_kill_rate):>6} "
                         f"{_ko(f.report):>10}  {describe(f.board, rules)}")
            lines.append(pad + _notes_line(f))
        b = ra.baseline
        lo, hi = b.ci
        lines.append(f"  {'baseline':<12} {'':>5}  {_pct(b.win_rate)} [{_pct(lo)},{_pct(hi)}]  "
                     f"{b.median_time:>8.1f}  {_pct(b.fast_kill_rate):>6} {_ko(b):>10}  "
                     f"reference boards: choose set against report set")
        lines += [_hole_line(f, ra.budget, rules) for f in ra.holes]
        holes += len(ra.holes)
    lines.append("")
    lines.append(f"size: casting runes / runes on the board; win %: the chosen board against the "
                 f"report set, both seatings (draws are not wins); fast %: its fast kills there "
                 f"(knockouts won before the opponent's second turn); fastest KO: its earliest "
                 f"knockout win, s / the opponent's turns by then; {report.battles:,} battles")
    if holes:
        lines.append(f"{holes} HOLE line(s): a reported board knocks out a full-HP reference "
                     f"board before that board's second turn")
    return "\n".join(lines)
