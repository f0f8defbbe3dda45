#!/usr/bin/env python3
"""Build the shipped opponent pools, one per rank, from the recipes in configs/ranks.yaml.

    python scripts/build_pools.py [--config configs/ranks.yaml] [--ranks R ...]
                                  [--out-dir configs/opponents] [--runs-scale X] [--force] [--json]
                                  [--engine fast|reference] [--no-progress]

A rank's recipe names the agents that draft its ghosts (greedy:NOISE, or the path of a trained
policy), the runs each plays, the seed, the last round, whether the trained policies sample their
actions, and `min_trained_share`. Each agent plays its runs through scripts/make_opponents.py's
`ghosts_of`: under the opponent side's economy of the rank (from mentor up the drafting agent's
income and start mana x the rank's budget factor), endless, against the budget drafter, one board
per round 1..max_round per run. Journeyman's extra rune and sage's boss rules are added when a
ghost is fielded, not here. Agent i of a rank drafts on evaluation seed `seed * 1000 + i`.

Duplicates: a board is kept once per (round, agent) with a "count" of the runs that drafted it,
and the pool fields it with that weight (PoolOpponents samples by count), so a deterministic
policy that drafts the same board in many runs is met as often as it drafts it. Trained share of
a round, counted two ways, and both must reach `min_trained_share`:
  boards  the share of the round's pool entries (distinct boards of an agent) drafted by a trained
          policy;
  drafts  the share of the round's drafts (entries weighted by count, i.e. of the boards a player
          meets) drafted by a trained policy.
A rank whose share falls short in any round is refused: nothing is written for it and the script
exits 2 (the other ranks are still built). Pools are written atomically and compactly (one ghost
per line), with provenance: the recipe, seeds, runs scale, commit, rules hash, the policy files
with their sha256, and the shares. An existing pool is kept unless --force (checked for every
rank before anything is built). `--runs-scale X` multiplies every agent's runs (at least 1 each),
for quick trial builds. `--json` prints the per-rank report as JSON on stdout (the summaries go
to stderr). A bad argument, recipe, rank, output folder or policy file is one `error: ...` line
and exit status 2, found before any pool is built or written. A progress bar (drafting runs of
every rank) goes to stderr when it is a terminal (--progress forces it, --no-progress hides it).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from make_opponents import (DRAFTING_OPPONENTS, by_round, drafting_overrides,  # noqa: E402
                            ghosts_of, is_trained, make_drafting_agent, summary, tally)
from agents import make_agent  # noqa: E402
from agents.progress import CountRuns, add_progress_argument, bar  # noqa: E402
from agents.progress import say as progress_say  # noqa: E402
from agents.script_args import check_output, fail, positive_float, script_parser  # noqa: E402
from rune_env.battle.engines import add_engine_argument, use_engine  # noqa: E402
from rune_env.rules import default_rules  # noqa: E402
from rune_env.run.opponents import Pool, ghost_count, save_pool  # noqa: E402
from rune_env.run.ranks import rank_index  # noqa: E402

DEFAULT_CONFIG = ROOT / "configs" / "ranks.yaml"
DEFAULT_OUT = ROOT / "configs" / "opponents"
RECIPE_VERSION = 1
TOP_KEYS = ("version", "defaults", "ranks")
DEFAULT_KEYS = ("max_round", "sample", "min_trained_share")
RANK_KEYS = ("seed", "agents", *DEFAULT_KEYS)
AGENT_KEYS = ("agent", "runs", "sample")
SEED_STRIDE = 1000   # agent i of a rank drafts on evaluation seed rank_seed * SEED_STRIDE + i


class RecipeError(ValueError):
    """A recipe file that cannot be used; the message names the file and the key path."""


@dataclass(frozen=True)
class AgentRecipe:
    agent: str               # as written in the recipe; the ghosts' "agent" label
    runs: int
    sample: bool             # a trained policy samples its actions (always False for baselines)
    path: Path | None        # the policy file of a trained agent

    @property
    def trained(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class RankRecipe:
    rank: str
    seed: int
    max_round: int
    min_trained_share: float
    agents: tuple[AgentRecipe, ...]

    def to_json(self) -> dict:
        return {"seed": self.seed, "max_round": self.max_round,
                "min_trained_share": self.min_trained_share,
                "agents": [{"agent": a.agent, "runs": a.runs, "sample": a.sample}
                           for a in self.agents]}


# -- the recipe file ------------------------------------------------------------------------------
def _check_keys(data, allowed, where: str, source: str, what: str = "key") -> dict:
    if not isinstance(data, dict):
        raise RecipeError(f"{source}: {where}: expected a mapping, got {type(data).__name__}")
    unknown = [k for k in data if k not in allowed]
    if unknown:
        prefix = "" if where == "(top level)" else f"{where}."
        raise RecipeError(f"{source}: {prefix}{unknown[0]}: unknown {what} (expected one of "
                          f"{', '.join(allowed)})")
    return data


def _whole(value, where: str, source: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low \
            or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in {low}..{high}"
        raise RecipeError(f"{source}: {where}: expected a whole number {bounds}, got {value!r}")
    return value


def _share(value, where: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise RecipeError(f"{source}: {where}: expected a share between 0 and 1, got {value!r}")
    return float(value)


def _flag(value, where: str, source: str) -> bool:
    if not isinstance(value, bool):
        raise RecipeError(f"{source}: {where}: expected true or false, got {value!r}")
    return value


def _agent(spec, where: str, source: str, rules, rank_sample: bool, root: Path) -> AgentRecipe:
    spec = _check_keys(spec, AGENT_KEYS, where, source)
    for key in ("agent", "runs"):
        if key not in spec:
            raise RecipeError(f"{source}: {where}.{key}: missing")
    name = spec["agent"]
    if not isinstance(name, str) or not name:
        raise RecipeError(f"{source}: {where}.agent: expected an agent name or a policy path, "
                          f"got {name!r}")
    runs = _whole(spec["runs"], f"{where}.runs", source, 1)
    if not is_trained(name):
        try:
            make_agent(name, rules, seed=0)   # greedy:NOISE's noise checked here
        except ValueError as exc:
            raise RecipeError(f"{source}: {where}.agent: {exc}") from None
        if spec.get("sample", False) is not False:
            raise RecipeError(f"{source}: {where}.sample: only trained policies sample their "
                              f"actions ({name!r} is not one)")
        return AgentRecipe(name, runs, False, None)
    if not name.endswith((".pt", ".zip")):
        raise RecipeError(f"{source}: {where}.agent: unknown agent {name!r}: use random, scripted, "
                          f"greedy, greedy:NOISE or the path of a policy (.pt) or model (.zip), "
                          f"relative to the repository root")
    path = Path(name) if Path(name).is_absolute() else root / name
    if not path.is_file():
        raise RecipeError(f"{source}: {where}.agent: no such policy file {name!r} (paths are "
                          f"relative to the repository root {root})")
    sample = _flag(spec.get("sample", rank_sample), f"{where}.sample", source)
    return AgentRecipe(name, runs, sample, path)


def load_recipes(path: str | Path, rules, root: Path = ROOT) -> dict[str, RankRecipe]:
    """Read and validate a recipe file; the recipes by rank, in the rules' order of ranks."""
    path = Path(path)
    source = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecipeError(f"{source}: cannot read the recipe file ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"{source}: not valid YAML ({exc})") from None
    data = _check_keys(data, TOP_KEYS, "(top level)", source)
    for key in TOP_KEYS:
        if key not in data:
            raise RecipeError(f"{source}: {key}: missing")
    if data["version"] != RECIPE_VERSION:
        raise RecipeError(f"{source}: version: {data['version']!r}; this script reads version "
                          f"{RECIPE_VERSION}")
    defaults = _check_keys(data["defaults"], DEFAULT_KEYS, "defaults", source)
    ranks = _check_keys(data["ranks"], [r.id for r in rules.spec.ranks], "ranks", source, "rank")
    if not ranks:
        raise RecipeError(f"{source}: ranks: no rank has a recipe")
    round_cap = rules.spec.run.round_cap
    out: dict[str, RankRecipe] = {}
    for rank in (r.id for r in rules.spec.ranks):
        if rank not in ranks:
            continue
        where = f"ranks.{rank}"
        spec = _check_keys(ranks[rank], RANK_KEYS, where, source)
        merged = {**defaults, **spec}
        for key in RANK_KEYS:
            if key not in merged:
                raise RecipeError(f"{source}: {where}.{key}: missing (and not in defaults)")

        def origin(key: str) -> str:
            return f"{where}.{key}" if key in spec else f"defaults.{key}"

        seed = _whole(merged["seed"], origin("seed"), source, 0)
        max_round = _whole(merged["max_round"], origin("max_round"), source, 1, round_cap)
        min_share = _share(merged["min_trained_share"], origin("min_trained_share"), source)
        sample = _flag(merged["sample"], origin("sample"), source)
        if not isinstance(merged["agents"], list) or not merged["agents"]:
            raise RecipeError(f"{source}: {where}.agents: expected a non-empty list of "
                              f"{{agent, runs}}")
        agents = tuple(_agent(a, f"{where}.agents[{i}]", source, rules, sample, root)
                       for i, a in enumerate(merged["agents"]))
        # every run drafts exactly one board per round, so the drafts share is known already
        trained_runs = sum(a.runs for a in agents if a.trained)
        all_runs = sum(a.runs for a in agents)
        if Fraction(trained_runs, all_runs) < Fraction(str(min_share)):
            raise RecipeError(f"{source}: {origin('min_trained_share')}: {min_share} cannot be met: "
                              f"trained policies play {trained_runs} of the {all_runs} runs")
        out[rank] = RankRecipe(rank, seed, max_round, min_share, agents)
    return out


# -- building -------------------------------------------------------------------------------------
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


def git_commit(root: Path = ROOT) -> str:
    """HEAD's short hash, "+dirty" when tracked files differ from it; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _shown(path: Path, root: Path = ROOT) -> str:
    """A path as the repository names it where it lies inside it (no machine-specific prefix)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def build_rank(recipe: RankRecipe, rules, config: Path, runs_scale: float = 1.0,
               log=None, commit: str | None = None,
               progress=None) -> tuple[Pool, dict[int, dict]]:
    """Draft the rank's ghosts from its recipe; the pool (not yet written) and its shares.
    `commit`: the code's commit for the provenance (default: now; main() takes it once, before
    it writes any pool, so a pool written earlier in the same build does not count as a change).
    `progress`: a bar (agents.progress.bar) moved by one per drafting run."""
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
            if agent is not None:
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
                                 "provenance": _shown(card) if card.is_file() else None}
    provenance = {
        "script": "scripts/build_pools.py",
        "config": _shown(config), "config_sha256": sha256_of(config),
        "recipe": recipe.to_json(), "runs_scale": runs_scale,
        "agents": agents_played, "policies": policies,
        "commit": commit or git_commit(), "rules_hash": rules.hash,
        "drafting": {"opponents": DRAFTING_OPPONENTS, "rank": rules.spec.ranks[0].id,
                     "rules_overrides": drafting_overrides(rules, rank)},
        "counting": "one entry per distinct (round, agent, board); count = runs that drafted it; "
                    "fielded with weight count",
        "trained_share": {str(r): {"boards": s["trained_boards"] / s["boards"] if s["boards"] else 0.0,
                                   "drafts": s["trained_drafts"] / s["drafts"] if s["drafts"] else 0.0}
                          for r, s in shares.items()},
    }
    pool = Pool(rules_hash=rules.hash, rank=recipe.rank, rounds=rounds, provenance=provenance)
    return pool, shares


def build_parser():
    p = script_parser(__doc__)
    p.add_argument("--config", default=str(DEFAULT_CONFIG), metavar="FILE",
                   help="the recipe file (default configs/ranks.yaml)")
    p.add_argument("--ranks", nargs="+", default=None, metavar="RANK",
                   help="the ranks to build (default: every rank with a recipe)")
    p.add_argument("--out-dir", default=str(DEFAULT_OUT), metavar="DIR",
                   help="where the pools <rank>.json go (default configs/opponents)")
    p.add_argument("--runs-scale", type=positive_float, default=1.0, metavar="X",
                   help="multiply every agent's runs (at least 1 each), for trial builds; > 0 "
                        "(default 1.0)")
    p.add_argument("--force", action="store_true",
                   help="replace existing pool files (default: keep them and stop)")
    p.add_argument("--json", action="store_true",
                   help="the report as JSON on stdout, the summaries on stderr (default off)")
    add_engine_argument(p)     # both engines play the same battles: the same pools
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    use_engine(a.engine)
    rules = default_rules()
    out_file = sys.stderr if a.json else sys.stdout

    def say(msg: str) -> None:
        progress_say(msg, file=out_file)

    config = Path(a.config)
    try:
        recipes = load_recipes(config, rules)
    except RecipeError as exc:
        return fail(str(exc))
    commit = git_commit()    # once, before this build writes any pool file
    names = [r.id for r in rules.spec.ranks]
    wanted = a.ranks or list(recipes)
    for rank in wanted:
        if rank not in names:
            return fail(f"unknown rank {rank!r} (one of {', '.join(names)})")
        if rank not in recipes:
            return fail(f"rank {rank!r} has no recipe in {config}")
    wanted = [r for r in names if r in wanted]
    out_dir = Path(a.out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        return fail(f"--out-dir {out_dir}: not a directory")
    for rank in wanted:
        problem = check_output(out_dir / f"{rank}.json", "--out-dir")
        if problem:
            return fail(problem)
    existing = [out_dir / f"{r}.json" for r in wanted if (out_dir / f"{r}.json").exists()]
    if existing and not a.force:
        return fail(f"{', '.join(map(str, existing))} exist(s) (pass --force to replace)")
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
                    return fail(f"{rank}: {exc}")
                checked.add(ag.path)
    total = sum(scaled_runs(ag.runs, a.runs_scale) for r in wanted for ag in recipes[r].agents)
    report: dict = {"config": _shown(config), "rules_hash": rules.hash, "ranks": {}}
    refused = False
    progress = bar(total, "drafting", a.progress)
    for rank in wanted:
        recipe = recipes[rank]
        out = out_dir / f"{rank}.json"
        try:
            pool, shares = build_rank(recipe, rules, config, a.runs_scale, log=say, commit=commit,
                                      progress=progress)
        except ValueError as exc:      # a policy that does not load, for instance
            progress.close()
            return fail(f"{rank}: {exc}")
        say(summary(pool))
        say(share_table(shares, recipe.min_trained_share))
        short = shortfalls(shares, recipe.min_trained_share)
        entry = {"path": _shown(out), "written": not short,
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
                progress.close()
                return fail(f"{out}: cannot write the pool ({exc.strerror or exc})")
            entry["bytes"] = out.stat().st_size
            say(f"written {out} ({entry['bytes']} bytes)")
        report["ranks"][rank] = entry
    progress.close()
    if a.json:
        print(json.dumps(report))
    return 2 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
