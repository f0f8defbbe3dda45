"""What boards an agent, or an opponent pool, takes into battle, round by round.

For the docs (what the PPO agents learned) and for acceptance checks such as "from round 3 on,
fewer than 10% of the boards the agents fight with have two casting runes or fewer".
scripts/board_stats.py is the command line over this module.

Collecting boards (each a *board entry*, the part of a board file that says what fought:
{"round", "weight", "runes": {"ring:index": [kind, grade]}, "core", "sun_element", "artifacts":
{"ring:index": artifact}, "relics": [...]}, plus where it came from):
- `agent_boards(agent, episodes, seed, env)`: the agent plays `episodes` whole runs on the
  evaluation seeds (`eval_run_seed(seed, i)`, as `evaluation.evaluate` plays them); one entry of
  weight 1 per battle (with the run seed and the outcome), and one *run entry* per run: the core,
  the relics and the artifacts (placed and in the inventory) it holds when the run is over.
- `pool_boards(pool)`: every ghost of every round of a pool, weighted by its `count` (the
  drafting runs that drafted it), so a pool counts as the boards it fields, not as its file's
  distinct entries; `by_drafter(entries)` splits them by the agent that drafted them.

Summarising (`summarise`): per round, the boards (total weight) and distinct entries, the
casting runes per board (CASTING_KINDS on the circle; the hand's reserves do not fight and are
not counted): weighted median, 10th and 90th percentile, min, max, mean and the share of boards
with <= K casting runes; the rune kinds' and grades' shares of the runes; the cores' shares of
the boards; the artifacts' shares of the artifacts and the share of boards with any; the share
of boards holding each relic; given a budget per round (`summarise(budget=...)`), the boards'
mean cost (`agents.search.boards.board_cost`: runes on the circle and in the hand, artifacts,
open sectors) and its share of the round's budget (a pool: its rank's opponent budget, D-44,
what the drafting runs were given; an agent: a player's budget of the round, E-36). Then the
"from round R on" share of boards with <= K casting runes (with a 95% Wilson interval), the
least and mean cost share from round R on, and for agents the runs' final holdings
(`run_summary`).

Percentiles are `weighted_quantile`: the inverted weighted CDF, see there. Every share's keys are
the rules' names (every kind, grade, core, artifact and relic, 0.0 where absent), so reports of
different sources line up; round keys are strings ("1", "2", ...), as in pool files, so a report
reads back from JSON equal to itself.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from rune_env.run.opponents import Pool, ghost_count

from .runs import eval_run_seed, kind_shares, play_run, wilson

NO_CORE = "none"            # the cores' key of a board without a core
QUANTILES = {"p10": 0.1, "median": 0.5, "p90": 0.9}
DEFAULT_FROM_ROUND = 3
DEFAULT_MAX_CASTING = 2


# -- collecting ---------------------------------------------------------------------------------
def board_entry(board: dict, round_: int, weight: int = 1, **extra) -> dict[str, Any]:
    """What fought, from a board file: runes per cell, core (and sun element), artifacts per
    cell and relics; the hand, HP and open sectors are left out (they say nothing of the build)."""
    return {"round": int(round_), "weight": int(weight),
            "runes": {cell: list(rune) for cell, rune in board.get("runes", {}).items()},
            "core": board.get("core"), "sun_element": board.get("sun_element"),
            "artifacts": dict(board.get("artifacts", {})), "relics": list(board.get("relics", [])),
            **extra}


def board_cost_of(board: dict, rules) -> int:
    """The mana a run pays for a board of a board file (`agents.search.boards.board_cost`)."""
    from agents.search.boards import board_cost
    from rune_env.rules import Board
    return board_cost(Board.from_json(board, rules, source="a board"), rules)


def agent_boards(agent, episodes: int, seed: int = 0, env=None, env_kwargs: dict | None = None,
                 progress=None) -> tuple[list[dict], list[dict]]:
    """`agent` plays `episodes` runs on evaluation seed `seed` in `env` (default: a RuneRunEnv of
    `env_kwargs`). Returns (board entries, one per battle; run entries, one per run).
    `progress` (e.g. a tqdm bar) gets `.update(1)` after each run."""
    if env is None:
        from rune_env.envs.run_env import RuneRunEnv
        env = RuneRunEnv(**(env_kwargs or {}))
    boards: list[dict] = []
    runs: list[dict] = []
    for i in range(episodes):
        run = play_run(env, agent, eval_run_seed(seed, i))
        for b in run["battles"]:
            boards.append(board_entry(b["board"], b["round"], run_seed=run["run_seed"],
                                      outcome=b["outcome"],
                                      cost=board_cost_of(b["board"], env.rules)))
        # what the run ends with is read from the state: relics and artifacts chosen after the
        # last battle, or artifacts left in the inventory, are on no battle's board
        s = env.state
        runs.append({"run_seed": run["run_seed"], "rounds": run["rounds"], "wins": run["wins"],
                     "cleared": run["cleared"], "core": s.core, "relics": list(s.relics),
                     "artifacts": sorted([*s.artifacts.values(), *s.artifact_inventory])})
        if progress is not None:
            progress.update(1)
    return boards, runs


def pool_boards(pool: Pool, rules=None) -> list[dict]:
    """Every ghost of the pool as a board entry weighted by its count (with its agent; with
    `rules`, its cost)."""
    def extra(g):
        return {} if rules is None else {"cost": board_cost_of(g["board"], rules)}
    return [board_entry(g["board"], round_, ghost_count(g), agent=g.get("agent"), **extra(g))
            for round_, ghosts in sorted(pool.rounds.items()) for g in ghosts]


UNKNOWN_DRAFTER = "?"       # the drafter of a ghost whose entry names none (older pool files)


def by_drafter(entries: list[dict]) -> dict[str, list[dict]]:
    """A pool's board entries split by the agent that drafted them (its entries record it), the
    drafters in the order they first appear."""
    out: dict[str, list[dict]] = {}
    for e in entries:
        out.setdefault(e.get("agent") or UNKNOWN_DRAFTER, []).append(e)
    return out


# -- statistics -----------------------------------------------------------------------------------
def weighted_quantile(values: list, weights: list, q: float):
    """The q-quantile (0 <= q <= 1) of `values` with `weights` > 0, by the inverted weighted
    CDF: the smallest value v whose weight of values <= v is at least q x the total weight.

    With whole-number weights this is the quantile of the sample in which each value stands
    `weight` times, numpy's `quantile(..., method="inverted_cdf")` (definition 1 of Hyndman and
    Fan, 1996): a pool's ghost of count 3 counts as three boards. The result is always one of the
    values, so a count of casting runes stays a whole number; the median of an even sample is
    its lower middle value (1 for the values 1 and 4). None for no values."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in 0..1; got {q!r}")
    pairs = sorted(zip(values, weights))
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        return None
    # a relative tolerance, so that q x total a rounding error above a whole weight (0.1 x 30 =
    # 3.0000000000000004) still takes the value whose cumulative weight is that whole weight
    target = q * total - 1e-9 * total
    cumulative = 0
    for value, weight in pairs:
        cumulative += weight
        if cumulative >= target:
            return value
    return pairs[-1][0]


def casting_count(entry: dict, rules) -> int:
    """The casting runes (rules.casting_kinds) on the entry's circle."""
    return sum(kind in rules.casting_kinds for kind, _ in entry["runes"].values())


def casting_summary(counts: list[int], weights: list[int], max_casting: int) -> dict[str, Any]:
    """Casting runes per board: weighted quantiles (QUANTILES), min, max, mean, and
    `share_at_most_k`, the weight share of boards with <= `max_casting` of them."""
    total = sum(weights)
    out: dict[str, Any] = {name: weighted_quantile(counts, weights, q)
                           for name, q in QUANTILES.items()}
    out["min"] = min(counts) if counts else None
    out["max"] = max(counts) if counts else None
    out["mean"] = sum(c * w for c, w in zip(counts, weights)) / total if total else None
    low = sum(w for c, w in zip(counts, weights) if c <= max_casting)
    out["share_at_most_k"] = low / total if total else None
    return out


def _shares(counts: Counter, keys, total: float) -> dict[str, float]:
    """counts / total for every key of `keys` (0.0 where absent), then any other key counted."""
    names = [*keys, *(k for k in counts if k not in keys)]
    return {str(k): (counts.get(k, 0) / total if total else 0.0) for k in names}


def round_summary(entries: list[dict], rules, max_casting: int,
                  budget: int | None = None) -> dict[str, Any]:
    """The statistics of one round's board entries (see the module docstring), each weighted;
    with the round's `budget` and entries that know their cost, "cost" (the weighted mean) and
    "cost_share" (of the budget)."""
    weights = [e["weight"] for e in entries]
    total = sum(weights)
    cost = {}
    if budget is not None and total and all("cost" in e for e in entries):
        mean = sum(e["cost"] * w for e, w in zip(entries, weights)) / total
        cost = {"cost": mean, "budget": budget, "cost_share": mean / budget if budget else None}
    kinds: Counter = Counter()
    grades: Counter = Counter()
    cores: Counter = Counter()
    artifacts: Counter = Counter()
    relics: Counter = Counter()
    with_artifacts = 0
    for e, w in zip(entries, weights):
        for kind, grade in e["runes"].values():
            kinds[kind] += w
            grades[str(grade)] += w
        cores[e["core"] or NO_CORE] += w
        for art in e["artifacts"].values():
            artifacts[art] += w
        with_artifacts += w if e["artifacts"] else 0
        for relic in set(e["relics"]):
            relics[relic] += w
    runes = sum(kinds.values())
    # a core-less board is rare (a core is chosen in round 1), so "none" is listed only if seen
    return {"boards": total, "entries": len(entries),
            "casting": casting_summary([casting_count(e, rules) for e in entries], weights,
                                       max_casting),
            "runes_per_board": runes / total if total else 0.0,
            "kinds": kind_shares(kinds),
            "grades": _shares(grades, [str(g) for g in range(1, rules.max_grade + 1)], runes),
            "cores": _shares(cores, list(rules.spec.cores), total),
            "artifacts": _shares(artifacts, list(rules.spec.artifacts), sum(artifacts.values())),
            "boards_with_artifacts": with_artifacts / total if total else 0.0,
            "relics": _shares(relics, list(rules.spec.relics), total), **cost}


def cost_from_round(per_round: dict[str, dict], from_round: int) -> dict[str, Any] | None:
    """The least and the mean of the rounds' cost shares from `from_round` on (each round
    counts once), and the round of the least; None without costs or rounds that late."""
    shares = {int(r): s["cost_share"] for r, s in per_round.items()
              if int(r) >= from_round and s.get("cost_share") is not None}
    if not shares:
        return None
    low = min(shares, key=lambda r: (shares[r], r))
    return {"from_round": from_round, "min": shares[low], "min_round": low,
            "mean": sum(shares.values()) / len(shares)}


def from_round_share(entries: list[dict], rules, from_round: int = DEFAULT_FROM_ROUND,
                     max_casting: int = DEFAULT_MAX_CASTING) -> dict[str, Any]:
    """The weight share of the boards of round >= `from_round` with <= `max_casting` casting
    runes, with its 95% Wilson interval (over the weights: whole numbers, boards); share None
    when no board reached that round."""
    late = [e for e in entries if e["round"] >= from_round]
    boards = sum(e["weight"] for e in late)
    low = sum(e["weight"] for e in late if casting_count(e, rules) <= max_casting)
    return {"from_round": from_round, "max_casting": max_casting, "boards": boards,
            "at_most_k": low, "share": low / boards if boards else None,
            "ci": list(wilson(low, boards)) if boards else None}


def run_summary(runs: list[dict], rules) -> dict[str, Any]:
    """The agent's runs at their end: mean rounds played, the cores' shares of the runs, and per
    relic and artifact the share of runs holding it; mean relics per run."""
    n = len(runs)
    cores = Counter(r["core"] or NO_CORE for r in runs)
    relics = Counter(x for r in runs for x in set(r["relics"]))
    artifacts = Counter(x for r in runs for x in set(r["artifacts"]))
    return {"runs": n, "rounds": sum(r["rounds"] for r in runs) / n if n else 0.0,
            "cores": _shares(cores, list(rules.spec.cores), n),
            "relics": _shares(relics, list(rules.spec.relics), n),
            "relics_per_run": sum(len(r["relics"]) for r in runs) / n if n else 0.0,
            "artifacts": _shares(artifacts, list(rules.spec.artifacts), n)}


def summarise(entries: list[dict], rules, from_round: int = DEFAULT_FROM_ROUND,
              max_casting: int = DEFAULT_MAX_CASTING, runs: list[dict] | None = None,
              budget=None) -> dict:
    """A source's report: "boards" (total weight), "per_round" {"1": round_summary, ...},
    "from_round" (from_round_share), given `budget` (round -> mana) "cost_from_round"
    (cost_from_round) and, given the run entries, "runs" (run_summary)."""
    by_round: dict[int, list[dict]] = {}
    for e in entries:
        by_round.setdefault(e["round"], []).append(e)
    per_round = {str(r): round_summary(group, rules, max_casting,
                                       None if budget is None else budget(r))
                 for r, group in sorted(by_round.items())}
    out: dict[str, Any] = {
        "boards": sum(e["weight"] for e in entries),
        "per_round": per_round,
        "from_round": from_round_share(entries, rules, from_round, max_casting)}
    if budget is not None:
        out["cost_from_round"] = cost_from_round(per_round, from_round)
    if runs is not None:
        out["runs"] = run_summary(runs, rules)
    return out


# -- the table ------------------------------------------------------------------------------------
def _top(shares: dict[str, float], n: int) -> str:
    """The `n` largest shares as "name 40%, ..." (ties in the rules' order; none above 0: "-")."""
    best = sorted((item for item in shares.items() if item[1] > 0), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{k} {v:.0%}" for k, v in best) or "-"


def from_round_line(share: dict) -> str:
    """ "from round 3 on: 4.2% of 130 boards have <= 2 casting runes (95% interval ...)"."""
    head = f"from round {share['from_round']} on:"
    k = share["max_casting"]
    if share["share"] is None:
        return f"{head} no boards (no run reached round {share['from_round']})"
    lo, hi = share["ci"]
    return (f"{head} {share['share']:.1%} of {share['boards']} boards have <= {k} casting "
            f"rune{'s' if k != 1 else ''} (95% interval {lo:.1%} to {hi:.1%})")


def format_source(title: str, summary: dict, max_casting: int) -> str:
    """A source's table: a title line, a row per round (boards, casting median [p10, p90],
    share <= K, the top 3 kinds, the top core), the final holdings of an agent's runs, and the
    from-round line."""
    share_head = f"<= {max_casting}"
    # the median right-aligned under "med", its [p10, p90] left-aligned beside it, and the kinds
    # as wide as the widest: a two-digit percentile or a long kind never shifts a column
    kinds = {r: _top(s["kinds"], 3) for r, s in summary["per_round"].items()}
    wide = max([34, *map(len, kinds.values())])
    costs = any(s.get("cost_share") is not None for s in summary["per_round"].values())
    cost_head = f" {'cost/budget':>14}" if costs else ""
    lines = [title, f"  {'round':>5} {'boards':>7} {'casting med':>11} {'[p10, p90]':<10} "
                    f"{share_head:>6}{cost_head}  {'top kinds (of runes)':<{wide}}  top core"]
    for r, s in summary["per_round"].items():
        c = s["casting"]
        spread = f"[{c['p10']}, {c['p90']}]"
        share = s.get("cost_share")
        cost = (f" {s['cost']:>5.1f}/{s['budget']:<3} {share:.2f}" if share is not None
                else f" {'-':>14}") if costs else ""
        lines.append(f"  {r:>5} {s['boards']:>7} {c['median']!s:>11} {spread:<10} "
                     f"{c['share_at_most_k']:>6.0%}{cost}  {kinds[r]:<{wide}}  "
                     f"{_top(s['cores'], 1)}")
    if not summary["per_round"]:
        lines.append("  (no boards)")
    if "runs" in summary:
        u = summary["runs"]
        lines.append(f"  runs end with ({u['runs']} runs, {u['rounds']:.1f} rounds each): cores "
                     f"{_top(u['cores'], 3)}; relics {_top(u['relics'], 3)} "
                     f"({u['relics_per_run']:.2f} a run, shares of the runs)")
        lines.append(f"  artifacts held at the end: {_top(u['artifacts'], 3)} (of the runs)")
    lines.append("  " + from_round_line(summary["from_round"]))
    spend = summary.get("cost_from_round")
    if spend is not None:
        lines.append(f"  from round {spend['from_round']} on: boards cost {spend['min']:.2f} of "
                     f"the round's budget at least (round {spend['min_round']}), "
                     f"{spend['mean']:.2f} on average over the rounds")
    return "\n".join(lines)



def drafter_lines(drafters: dict[str, dict]) -> list[str]:
    """A pool's boards by drafter (`by_drafter`'s groups, each `summarise`d): per drafter its
    boards by count, their share of the pool's, the casting runes' median from round R on and
    the from-round line."""
    total = sum(s["boards"] for s in drafters.values())
    width = max((len(name) for name in drafters), default=0)
    lines = []
    for name, s in drafters.items():
        share = s["boards"] / total if total else 0.0
        lines.append(f"    {name:<{width}} {s['boards']:>6} boards ({share:>4.0%}); "
                     + from_round_line(s["from_round"]))
    return lines
