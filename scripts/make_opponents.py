#!/usr/bin/env python3
"""Make an opponent pool for a rank from agents' boards ("ghosts").

    python scripts/make_opponents.py --rank R --agents A [A ...] [--runs N] [--seed S]
                                     [--max-round M] [--sample] [--engine E] --out FILE [--force]
                                     [--no-progress]

Each agent plays N runs; every board it takes into battle is recorded with its agent, run seed,
round and rank. Ghosts of rank R are drafted with the opponent side's rules of R: from mentor up
the drafting agent's income and starting mana are x the rank's opponent budget factor (D-44);
journeyman's extra rune and sage's boss rules are added when a ghost is fielded, not here. The
drafting runs play on past lost lamps and the 10th win up to round M (default 15), so every round
gets ghosts. The drafting runs meet the budget drafter (the opponents the PPO agents trained
against), never a shipped pool, so a pool does not depend on the pools already in
configs/opponents/. A board an agent drafted in several runs is kept once with its "count" (the
pool fields it with that weight); a summary (boards and drafts per round, agents, kinds, grades,
cores) is printed; the pool file is written atomically (a killed run leaves the old file) and an
existing file is kept unless --force. A bad argument, rank, agent or output path is one
`error: ...` line and exit status 2, before anything is drafted; a progress bar (drafting runs)
goes to stderr when it is a terminal (--progress forces it, --no-progress hides it).

The functions here (drafting_overrides, make_drafting_agent, ghosts_of, tally, summary) are also
what scripts/build_pools.py builds the shipped pools with.
"""
from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import BASELINES, make_agent  # noqa: E402
from agents.evaluation import eval_run_seed  # noqa: E402
from agents.progress import CountRuns, add_progress_argument, bar  # noqa: E402
from agents.script_args import (check_output, fail, int_in, positive_int,  # noqa: E402
                                script_parser, seed_int)
from rune_env.battle.engines import add_engine_argument, use_engine  # noqa: E402
from rune_env.envs.run_env import RuneRunEnv  # noqa: E402
from rune_env.rules import default_rules  # noqa: E402
from rune_env.run.opponents import Pool, ghost_count, save_pool  # noqa: E402
from rune_env.run.ranks import rank_effects, rank_index  # noqa: E402

# what the drafting runs battle: the budget drafter (see the module docstring)
DRAFTING_OPPONENTS = "generator"


def drafting_overrides(rules, rank: int) -> dict:
    """The opponent side's economy of `rank`: income and start mana x the budget factor."""
    x = rank_effects(rules, rank).opponent_budget_x
    run = rules.spec.run
    out = {"run.endless": True}
    if x != 1.0:
        out["run.income"] = int(math.floor(run.income * x + 1e-9))
        out["run.start_mana"] = int(math.floor(run.start_mana * x + 1e-9))
    return out


def is_trained(agent_name: str) -> bool:
    """A trained policy (a saved model or exported policy), not a baseline or greedy:NOISE."""
    return not (agent_name in BASELINES or agent_name.startswith("greedy:"))


def make_drafting_agent(agent_name: str, rules, seed: int, sample: bool = False,
                        path: str | Path | None = None):
    """The agent `agent_name` (make_agent's names). A trained policy loads from `path` (default:
    the name itself) and, with `sample`, samples its actions from the policy's distribution
    instead of taking the likeliest one (diverse ghosts; reproducible: PolicyAgent seeds torch
    with each run seed)."""
    if not is_trained(agent_name):
        if sample:
            raise ValueError(f"agent {agent_name!r}: only trained policies sample their actions")
        return make_agent(agent_name, rules, seed=seed)
    if path is None and not (agent_name.endswith((".zip", ".pt")) or Path(agent_name).exists()):
        make_agent(agent_name, rules, seed=seed)     # raises make_agent's "unknown agent"
    from agents.policy import PolicyAgent
    return PolicyAgent(str(path or agent_name), deterministic=not sample)


def ghosts_of(agent_name: str, rank: int, runs: int, seed: int, max_round: int,
              rules, env_kwargs: dict | None = None, agent=None) -> list[dict]:
    """Play `runs` drafting runs and return a ghost per battle (rounds 1..max_round), labelled
    `agent_name`. `agent`: an agent object to play (default: make_agent(agent_name))."""
    agent = agent if agent is not None else make_agent(agent_name, rules, seed=seed)
    kwargs = {"opponents": DRAFTING_OPPONENTS, **(env_kwargs or {})}
    env = RuneRunEnv(rank=0, rules_overrides=drafting_overrides(rules, rank), **kwargs)
    rank_name = rules.spec.ranks[rank].id
    out = []
    for i in range(runs):
        run_seed = eval_run_seed(seed, i)
        obs, info = env.reset(options={"run_seed": run_seed})
        agent.reset(run_seed)
        env.state.lamps = 10**6   # play on past lost lamps (observations clip lamps at 1)
        while True:
            state = env.state if getattr(agent, "needs_state", False) else None
            obs, _, term, trunc, info = env.step(agent.act(obs, info["action_mask"], state=state))
            b = info.get("battle")
            if b is not None:
                out.append({"board": b["board"], "agent": agent_name, "seed": run_seed,
                            "round": b["round"], "rank": rank_name})
                if b["round"] >= max_round:
                    break
            if term or trunc:
                break
    return out


def _board_key(g: dict) -> str:
    return json.dumps(g["board"], sort_keys=True)


def dedupe(ghosts: list[dict]) -> list[dict]:
    """One ghost per distinct (round, board), the first seen; no counts."""
    seen, out = set(), []
    for g in ghosts:
        key = (g["round"], _board_key(g))
        if key not in seen:
            seen.add(key)
            out.append(g)
    return out


def tally(ghosts: list[dict]) -> list[dict]:
    """One ghost per distinct (round, agent, board), in first-seen order (so its "seed" is the
    first run that drafted it), with "count": the drafts it stands for (existing counts add up).
    Keyed by agent too, so every entry says truly which agent drafted it: a board two agents
    both drafted is kept once for each, with each agent's count."""
    index: dict[tuple, dict] = {}
    out = []
    for g in ghosts:
        key = (g["round"], g.get("agent"), _board_key(g))
        if key in index:
            index[key]["count"] += ghost_count(g)
        else:
            index[key] = {**g, "count": ghost_count(g)}
            out.append(index[key])
    return out


def by_round(ghosts: list[dict]) -> dict[int, list[dict]]:
    rounds: dict[int, list[dict]] = {}
    for g in ghosts:
        rounds.setdefault(g["round"], []).append(g)
    return dict(sorted(rounds.items()))


def summary(pool: Pool) -> str:
    """Per round: distinct boards and the drafts they stand for; agents (boards/drafts), and the
    rune kinds, grades and cores of the distinct boards."""
    n_boards = sum(len(v) for v in pool.rounds.values())
    n_drafts = sum(ghost_count(g) for v in pool.rounds.values() for g in v)
    lines = [f"pool for {pool.rank}: {n_boards} boards ({n_drafts} drafts)"]
    for rnd, ghosts in sorted(pool.rounds.items()):
        kinds = Counter(k for g in ghosts for k, _ in g["board"]["runes"].values())
        grades = Counter(gr for g in ghosts for _, gr in g["board"]["runes"].values())
        cores = Counter(g["board"].get("core") for g in ghosts)
        agents = Counter(g.get("agent") for g in ghosts)
        drafts = Counter()
        for g in ghosts:
            drafts[g.get("agent")] += ghost_count(g)
        lines.append(f"round {rnd:>2}: {len(ghosts):>4} boards {sum(drafts.values()):>4} drafts"
                     " | agents (boards/drafts) "
                     + ", ".join(f"{a} {n}/{drafts[a]}" for a, n in agents.most_common())
                     + " | kinds " + ", ".join(f"{k} {n}" for k, n in kinds.most_common(5))
                     + " | grades " + ", ".join(f"{g}:{n}" for g, n in sorted(grades.items()))
                     + " | cores " + ", ".join(f"{c} {n}" for c, n in cores.most_common()))
    return "\n".join(lines)


def build_parser():
    rules = default_rules()
    p = script_parser(__doc__)
    p.add_argument("--rank", required=True,
                   help="the rank the pool is for: "
                        + ", ".join(r.id for r in rules.spec.ranks)
                        + f", or its number 0..{len(rules.spec.ranks) - 1} (required)")
    p.add_argument("--agents", nargs="+", required=True, metavar="AGENT",
                   help="who drafts the ghosts: random, scripted, greedy, greedy:NOISE or paths "
                        "of saved models (.zip) or exported policies (.pt) (required)")
    p.add_argument("--runs", type=positive_int, default=20, metavar="N",
                   help="drafting runs per agent, >= 1 (default 20)")
    p.add_argument("--seed", type=seed_int, default=0, metavar="S",
                   help="agent i drafts on evaluation seed S * 1000 + i; 0..2**32-1 (default 0)")
    cap = rules.spec.run.round_cap
    p.add_argument("--max-round", type=int_in(1, cap, "run.round_cap"), default=min(15, cap),
                   metavar="M",
                   help=f"the last round drafted, 1..{cap} (run.round_cap) (default "
                        f"{min(15, cap)})")
    p.add_argument("--out", required=True, metavar="FILE", help="the pool file to write (required)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file (default: keep it and stop)")
    p.add_argument("--sample", action="store_true",
                   help="trained policies sample their actions (diverse ghosts) instead of taking "
                        "the likeliest one (default off)")
    add_engine_argument(p)
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    rules = default_rules()
    try:
        rank = rank_index(rules, a.rank if not a.rank.isdigit() else int(a.rank))
    except ValueError as exc:
        return fail(f"--rank: {exc}")
    out = Path(a.out)
    if out.exists() and not out.is_dir() and not a.force:
        return fail(f"{out} exists (pass --force to replace it)")
    problem = check_output(out, "--out")
    if problem:
        return fail(problem)
    use_engine(a.engine)
    if any(is_trained(name) for name in a.agents):
        from agents.policy import limit_torch_threads
        limit_torch_threads(1)   # one observation at a time: extra threads only spin
    # every agent is made (a policy loaded) before anything is drafted
    agents = []
    for i, name in enumerate(a.agents):
        seed = a.seed * 1000 + i
        try:
            agents.append((name, seed, make_drafting_agent(name, rules, seed,
                                                           sample=a.sample and is_trained(name))))
        except ValueError as exc:   # an unknown name, a policy file that does not load
            return fail(str(exc) if name in str(exc) else f"agent {name!r}: {exc}")
    ghosts: list[dict] = []
    with bar(len(agents) * a.runs, "drafting", a.progress) as progress:
        for name, seed, agent in agents:
            progress.set_description(f"drafting {name}")
            counted = CountRuns(agent, progress)
            try:
                ghosts += ghosts_of(name, rank, a.runs, seed, a.max_round, rules, agent=counted)
            except ValueError as exc:
                return fail(f"agent {name!r}: {exc}")
            counted.finish(a.runs)
    pool = Pool(rules_hash=rules.hash, rank=rules.spec.ranks[rank].id, rounds=by_round(tally(ghosts)),
                provenance={"agents": a.agents, "runs": a.runs, "seed": a.seed,
                            "max_round": a.max_round, "sample": a.sample,
                            "script": "scripts/make_opponents.py",
                            "drafting_opponents": DRAFTING_OPPONENTS})
    try:
        save_pool(pool, out, compact=True)      # atomic: an error leaves the old file, or none
    except OSError as exc:
        return fail(f"--out {out}: cannot write the pool ({exc.strerror or exc})")
    print(summary(pool))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
