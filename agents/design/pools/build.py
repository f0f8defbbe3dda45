"""Building the shipped pools from their recipes: `build_rank` drafts one rank's pool and its
trained shares; `plan_build` checks the ranks, the output folder and the policies before anything
is drafted; `build_pools` builds and writes every rank, refusing a rank whose trained share is
short (`shortfalls`)."""
from __future__ import annotations

import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Callable

from agents.cli.progress import CountRuns, bar
from agents.cli.provenance import REPO, git_commit, sha256_of, shown
from agents.search.settings import parse_planner
from agents.search.reference import META_AUTO, meta_path
from rune_env.run.opponents import Pool, ghost_count, save_pool
from rune_env.run.ranks import rank_index

from .drafting import (DRAFTING_OPPONENTS, METAGAME, SEED_STRIDE, by_round, drafting_overrides,
                       ghosts_of, make_drafting_agent, metagame_ghosts, summary, tally)
from .recipes import RankRecipe

RAY_CHUNK = 5        # drafting runs per Ray task (--ray): a few seconds to a minute each


def scaled_runs(runs: int, runs_scale: float) -> int:
    return max(1, int(round(runs * runs_scale)))


def trained_shares(rounds: dict[int, list[dict]], max_round: int,
                   trained: set[str]) -> dict[int, dict]:
    """Per round 1..max_round: boards (pool entries) and drafts (entries x count), all and those
    of trained agents."""
    out = {}
    for rnd in range(1, max_round + 1):
        ghosts = rounds.get(rnd, [])
        mine = [g for g in ghosts if g.get("agent") in trained]
        out[rnd] = {"boards": len(ghosts), "trained_boards": len(mine),
                    "drafts": sum(ghost_count(g) for g in ghosts),
                    "trained_drafts": sum(ghost_count(g) for g in mine)}
    return out


def shortfalls(shares: dict[int, dict], min_share: float) -> list[str]:
    """The rounds (and which count) whose trained share is below min_share; exact fractions, so
    40 of 80 meets 0.5."""
    need = Fraction(str(min_share))
    out = []
    for rnd, s in shares.items():
        for what in ("boards", "drafts"):
            got = Fraction(s[f"trained_{what}"], s[what]) if s[what] else Fraction(0)
            if got < need:
                out.append(f"round {rnd} {what} {s[f'trained_{what}']}/{s[what]} = {float(got):.2f}")
    return out


def share_table(shares: dict[int, dict], min_share: float) -> str:
    lines = [f"trained share per round (min {min_share:.2f}): boards = distinct boards of an agent, "
             f"drafts = boards weighted by count"]
    for rnd, s in shares.items():
        b = s["trained_boards"] / s["boards"] if s["boards"] else 0.0
        d = s["trained_drafts"] / s["drafts"] if s["drafts"] else 0.0
        lines.append(f"round {rnd:>2}: boards {s['trained_boards']:>4}/{s['boards']:<4} {b:.2f}   "
                     f"drafts {s['trained_drafts']:>4}/{s['drafts']:<4} {d:.2f}")
    return "\n".join(lines)


def _share_of(s: dict, what: str) -> float:
    return s[f"trained_{what}"] / s[what] if s[what] else 0.0


def _ghost_chunk(agent_name: str, path, sample: bool, seed: int, rank: int, start: int,
                 runs: int, max_round: int, rules) -> list[dict]:
    """One task of a fanned-out build (`--ray`): runs start.. of one recipe agent, the agent
    rebuilt here."""
    from agents.policy import limit_torch_threads
    limit_torch_threads(1)
    agent = make_drafting_agent(agent_name, rules, seed, sample=sample, path=path)
    return ghosts_of(agent_name, rank, runs, seed, max_round, rules, agent=agent, start=start)


def build_rank(recipe: RankRecipe, rules, config: Path, runs_scale: float = 1.0,
               log=None, commit: str | None = None, progress=None,
               root: Path = REPO, ray: str | None = None) -> tuple[Pool, dict[int, dict]]:
    """Draft the rank's ghosts from its recipe; the pool (not yet written) and its shares.
    `commit`: the code's commit for the provenance (default: now; build_pools takes it once,
    before it writes any pool, so a pool written earlier in the same build does not count as a
    change). `progress`: a bar (agents.cli.progress.bar) moved by one per drafting run. `ray`: the
    Ray address to play the drafting runs on as tasks of RAY_CHUNK runs (agents/cli/fanout.py; the
    same ghosts, so the same pool), None: here."""
    rank = rank_index(rules, recipe.rank)
    ghosts: list[dict] = []
    agents_played = []
    for i, a in enumerate(recipe.agents):
        seed = recipe.seed * SEED_STRIDE + i
        runs = scaled_runs(a.runs, runs_scale)
        started = time.monotonic()
        agent = make_drafting_agent(a.agent, rules, seed, sample=a.sample, path=a.path)
        if progress is not None:
            progress.set_description(f"{recipe.rank}: {a.agent}")
        if a.agent == METAGAME:
            try:
                ghosts += metagame_ghosts(rules, rank, runs, recipe.max_round)
            except ValueError as exc:
                raise BuildError(f"{recipe.rank}: {exc}") from None
            if progress is not None:
                progress.update(runs)
        elif ray is not None:
            from agents.cli.fanout import run_tasks
            tasks = [(a.agent, a.path, a.sample, seed, rank, start, min(RAY_CHUNK, runs - start),
                      recipe.max_round, rules) for start in range(0, runs, RAY_CHUNK)]
            ghosts += [g for chunk in run_tasks(_ghost_chunk, tasks, ray, progress,
                                                weights=[t[6] for t in tasks]) for g in chunk]
        else:
            if progress is not None and agent is not None:
                agent = CountRuns(agent, progress)
            ghosts += ghosts_of(a.agent, rank, runs, seed, recipe.max_round, rules, agent=agent)
            if isinstance(agent, CountRuns):
                agent.finish(runs)
            elif progress is not None:
                progress.update(runs)
        if log:
            mode = "" if not a.trained else (", sampling" if a.sample else ", deterministic")
            log(f"{recipe.rank}: {a.agent}{mode}: {runs} runs on seed {seed}, "
                f"{time.monotonic() - started:.0f} s")
        agents_played.append({"agent": a.agent, "seed": seed, "runs": runs, "sample": a.sample,
                              "trained": a.trained})
    rounds = by_round(tally(ghosts))
    trained = {a.agent for a in recipe.agents if a.trained}
    shares = trained_shares(rounds, recipe.max_round, trained)
    policies = {}
    for a in recipe.agents:
        if a.trained and a.agent not in policies:
            card = a.path.with_suffix(".json")
            policies[a.agent] = {"sha256": sha256_of(a.path),
                                 "provenance": shown(card, root) if card.is_file() else None}
    # the data files the drafting read besides the policies: the shipped metagame (the
    # metagame agent's boards; the planner's goal and its reference `meta`), so a rebuild can
    # tell whether it drafts from the same metagame
    data = {}
    for meta in _metagames_read(recipe, rules):
        data[shown(meta, root)] = sha256_of(meta)
    provenance = {
        "script": "scripts/build_pools.py",
        "config": shown(config, root), "config_sha256": sha256_of(config),
        "recipe": recipe.to_json(), "runs_scale": runs_scale,
        "agents": agents_played, "policies": policies, "data": data,
        "commit": commit or git_commit(root), "rules_hash": rules.hash,
        "drafting": {"opponents": DRAFTING_OPPONENTS, "rank": rules.spec.ranks[0].id,
                     "rules_overrides": drafting_overrides(rules, rank)},
        "counting": "one entry per distinct (round, agent, board); count = runs that drafted it; "
                    "fielded with weight count",
        "trained_share": {str(r): {"boards": _share_of(s, "boards"), "drafts": _share_of(s, "drafts")}
                          for r, s in shares.items()},
    }
    pool = Pool(rules_hash=rules.hash, rank=recipe.rank, rounds=rounds, provenance=provenance)
    return pool, shares


class BuildError(ValueError):
    """A build that cannot start or go on (a bad rank, output folder or policy, a failed write)."""


def plan_build(recipes: dict[str, RankRecipe], ranks: list[str] | None, rules, config: Path,
               out_dir: Path, force: bool) -> list[str]:
    """The ranks to build, in the rules' order, after every check that can be made before
    drafting: known ranks with recipes, a writable output folder, no pool replaced without
    `force`, and every trained policy loads. A problem is a BuildError."""
    from agents.cli.args import check_output
    names = [r.id for r in rules.spec.ranks]
    wanted = ranks or list(recipes)
    for rank in wanted:
        if rank not in names:
            raise BuildError(f"unknown rank {rank!r} (one of {', '.join(names)})")
        if rank not in recipes:
            raise BuildError(f"rank {rank!r} has no recipe in {config}")
    wanted = [r for r in names if r in wanted]
    if out_dir.exists() and not out_dir.is_dir():
        raise BuildError(f"--out-dir {out_dir}: not a directory")
    for rank in wanted:
        problem = check_output(pool_file(out_dir, rank), "--out-dir")
        if problem:
            raise BuildError(problem)
    existing = [pool_file(out_dir, r) for r in wanted if pool_file(out_dir, r).exists()]
    if existing and not force:
        raise BuildError(f"{', '.join(map(str, existing))} exist(s) (pass --force to replace)")
    from agents.policy import limit_torch_threads
    limit_torch_threads(1)   # one observation at a time: extra threads only spin
    # every trained policy is loaded once before anything is built: a file that does not load
    # stops the build before any pool is written
    checked = set()
    for rank in wanted:
        for ag in recipes[rank].agents:
            if ag.trained and ag.path not in checked:
                try:
                    make_drafting_agent(ag.agent, rules, 0, sample=ag.sample, path=ag.path)
                except ValueError as exc:
                    raise BuildError(f"{rank}: {exc}") from None
                checked.add(ag.path)
    # the metagame's boards too: no metagame of the rules, or a round with no board the rank
    # could field, stops the build here, not after the ranks before it were drafted and written
    for rank in wanted:
        recipe = recipes[rank]
        if any(ag.agent == METAGAME for ag in recipe.agents):
            try:
                metagame_ghosts(rules, rank_index(rules, rank), 1, recipe.max_round)
            except ValueError as exc:
                raise BuildError(f"{rank}: {exc}") from None
    return wanted


def pool_file(out_dir: Path, rank: str) -> Path:
    """Where a rank's built pool goes: <rank>.json.gz, gzip-compressed (a pool of 1,200 boards is
    about 0.5 MB of JSON and 50 KB compressed; `zcat` shows it one ghost per line)."""
    return out_dir / f"{rank}.json.gz"


def build_pools(recipes: dict[str, RankRecipe], wanted: list[str], rules, config: Path,
                out_dir: Path, runs_scale: float, commit: str, say: Callable[[str], None],
                progress: bool | None, root: Path = REPO,
                ray: str | None = None) -> tuple[dict, bool]:
    """Build and write the `wanted` ranks' pools (plan_build's list); (the report, whether a
    rank was refused). A rank whose trained share falls short is refused (an `error: ...` line
    on stderr) and not written; the others are. A failed build or write is a BuildError."""
    from agents.cli.progress import say as progress_say
    total = sum(scaled_runs(ag.runs, runs_scale) for r in wanted for ag in recipes[r].agents)
    report: dict = {"config": shown(config, root), "rules_hash": rules.hash, "ranks": {}}
    refused = False
    pb = bar(total, "drafting", progress)
    for rank in wanted:
        recipe = recipes[rank]
        out = pool_file(out_dir, rank)
        try:
            pool, shares = build_rank(recipe, rules, config, runs_scale, log=say, commit=commit,
                                      progress=pb, root=root, ray=ray)
        except BuildError:             # it names the rank already
            pb.close()
            raise
        except ValueError as exc:      # a policy that does not load, for instance
            pb.close()
            raise BuildError(f"{rank}: {exc}") from None
        say(summary(pool))
        say(share_table(shares, recipe.min_trained_share))
        short = shortfalls(shares, recipe.min_trained_share)
        entry = {"path": shown(out, root), "written": not short,
                 "boards": sum(s["boards"] for s in shares.values()),
                 "drafts": sum(s["drafts"] for s in shares.values()),
                 "min_trained_share": recipe.min_trained_share,
                 "trained_share": pool.provenance["trained_share"], "shortfalls": short}
        if short:
            refused = True
            progress_say(f"error: {rank}: the trained share is below min_trained_share "
                         f"{recipe.min_trained_share} in {'; '.join(short)}; nothing written for "
                         f"{rank}", file=sys.stderr)
        else:
            try:
                save_pool(pool, out, compact=True)    # atomic: an error leaves the old file
            except OSError as exc:
                pb.close()
                raise BuildError(f"{out}: cannot write the pool ({exc.strerror or exc})") from None
            entry["bytes"] = out.stat().st_size
            say(f"written {out} ({entry['bytes']} bytes)")
        report["ranks"][rank] = entry
    pb.close()
    return report, refused


def _metagames_read(recipe: RankRecipe, rules) -> list[Path]:
    """The metagame files the recipe's drafting reads: the shipped one (`meta_path`) for the
    metagame agent and for a planner with `meta=auto`, a planner's `meta=FILE` otherwise (a
    designer's metagame), in the order first read, each once."""
    shipped = meta_path(rules)
    paths: list[Path] = []
    for a in recipe.agents:
        if a.agent == METAGAME:
            path = shipped
        elif a.agent == "planner" or a.agent.startswith("planner:"):
            meta = parse_planner(a.agent, rules).meta
            path = shipped if meta == META_AUTO else Path(meta)
        else:
            continue
        if path.is_file() and path not in paths:
            paths.append(path)
    return paths
