"""Opponent pools from agents' boards ("ghosts"): drafting them, the recipe file of the shipped
pools (configs/ranks.yaml) and building every rank's pool from it. scripts/make_opponents.py and
scripts/build_pools.py are the command lines over this module (their docstrings say what the
pools are and how they are counted).

- Drafting: `drafting_overrides` (the opponent side's economy of a rank), `make_drafting_agent`,
  `ghosts_of` (one ghost per battle of drafting runs), `tally` (one entry per distinct (round,
  agent, board) with its count), `by_round`, `summary`; `make_agents` and `draft_ghosts`, the
  loop of make_opponents.
- The recipe file: `load_recipes` reads and validates it into `RankRecipe`s; the file's shape is
  the strict models `RecipeFile`, `DefaultsSpec`, `RankSpec` and `AgentSpec` (pydantic,
  unknown keys refused). A problem is a `RecipeError` naming the file and the key path.
- Building: `build_rank` drafts one rank's pool and its trained shares; `plan_build` checks the
  ranks, the output folder and the policies before anything is drafted; `build_pools` builds
  and writes every rank, refusing a rank whose trained share is short (`shortfalls`).
"""
from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Callable, ClassVar

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from . import BASELINES, make_agent
from .evaluation import eval_run_seed
from .progress import CountRuns, bar
from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml

from .script_args import MAX_RUNS
from rune_env.run.opponents import Pool, ghost_count, save_pool
from rune_env.run.ranks import rank_effects, rank_index

REPO = Path(__file__).resolve().parents[1]   # policy paths in a recipe are relative to it
# what the drafting runs battle: the budget drafter (the opponents the PPO agents trained
# against), never a shipped pool, so a pool does not depend on the pools already shipped
DRAFTING_OPPONENTS = "generator"
SEED_STRIDE = 1000   # agent i drafts on evaluation seed seed * SEED_STRIDE + i
RAY_CHUNK = 5        # drafting runs per Ray task (--ray): a few seconds to a minute each
RECIPE_VERSION = 1


# -- drafting ghosts ------------------------------------------------------------------------------
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
    from .policy import PolicyAgent
    return PolicyAgent(str(path or agent_name), deterministic=not sample)


def ghosts_of(agent_name: str, rank: int, runs: int, seed: int, max_round: int,
              rules, env_kwargs: dict | None = None, agent=None, start: int = 0) -> list[dict]:
    """Play `runs` drafting runs (runs start.. of seed `seed`) and return a ghost per battle
    (rounds 1..max_round), labelled `agent_name`. `agent`: an agent object to play (default:
    make_agent(agent_name)). A run depends only on its run seed (the agent is reset with it), so
    runs may be played in any split (agents/fanout.py)."""
    from rune_env.envs.run_env import RuneRunEnv
    agent = agent if agent is not None else make_agent(agent_name, rules, seed=seed)
    kwargs = {"opponents": DRAFTING_OPPONENTS, **(env_kwargs or {})}
    env = RuneRunEnv(rank=0, rules_overrides=drafting_overrides(rules, rank), **kwargs)
    rank_name = rules.spec.ranks[rank].id
    out = []
    for i in range(start, start + runs):
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


def make_agents(names: list[str], seed: int, sample: bool, rules) -> list[tuple[str, int, Any]]:
    """(name, drafting seed, agent) of each name, agent i on seed seed * SEED_STRIDE + i; every
    agent is made (a policy loaded) before anything is drafted. `sample` reaches the trained
    policies only. A ValueError names the agent."""
    if any(is_trained(name) for name in names):
        from .policy import limit_torch_threads
        limit_torch_threads(1)   # one observation at a time: extra threads only spin
    agents = []
    for i, name in enumerate(names):
        agent_seed = seed * SEED_STRIDE + i
        try:
            agents.append((name, agent_seed, make_drafting_agent(
                name, rules, agent_seed, sample=sample and is_trained(name))))
        except ValueError as exc:   # an unknown name, a policy file that does not load
            raise ValueError(str(exc) if name in str(exc) else f"agent {name!r}: {exc}") from None
    return agents


def draft_ghosts(agents: list[tuple[str, int, Any]], rank: int, runs: int, max_round: int,
                 rules, progress: bool | None) -> list[dict]:
    """Every agent's ghosts of `runs` drafting runs, with a bar of the runs (`progress`: the
    --progress flag). A ValueError names the agent."""
    ghosts: list[dict] = []
    with bar(len(agents) * runs, "drafting", progress) as pb:
        for name, seed, agent in agents:
            pb.set_description(f"drafting {name}")
            counted = CountRuns(agent, pb)
            try:
                ghosts += ghosts_of(name, rank, runs, seed, max_round, rules, agent=counted)
            except ValueError as exc:
                raise ValueError(f"agent {name!r}: {exc}") from None
            counted.finish(runs)
    return ghosts


# -- the recipe file ------------------------------------------------------------------------------
class RecipeError(ValueError):
    """A recipe file that cannot be used; the message names the file and the key path."""


class _KeyProblem(ValueError):
    """A validator's problem with one key of a mapping (the key joins the error's path)."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


def _whole(value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low \
            or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"expected a whole number {bounds}, got {value!r}")
    return value


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"expected a share between 0 and 1, got {value!r}")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


Seed = Annotated[int, BeforeValidator(lambda v: _whole(v, 0))]
# drafting runs of one agent: the scripts' bound for runs (agents/script_args.py, MAX_RUNS)
Runs = Annotated[int, BeforeValidator(lambda v: _whole(v, 1, MAX_RUNS))]


class _Spec(BaseModel):
    """A mapping of the recipe file: unknown keys refused. KEYS: its keys as messages list them."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    KEYS: ClassVar[tuple[str, ...]] = ()
    SECTIONS: ClassVar[dict[str, type["_Spec"]]] = {}     # the nested mappings, by key


class _Rounds(_Spec):
    """The keys a rank's recipe may take from `defaults` (checked as given; left out, None)."""

    @field_validator("max_round", mode="before", check_fields=False)
    @classmethod
    def _max_round(cls, v: Any, info: ValidationInfo) -> Any:
        return _whole(v, 1, info.context["round_cap"])

    @field_validator("min_trained_share", mode="before", check_fields=False)
    @classmethod
    def _min_share(cls, v: Any) -> Any:
        return _share(v)

    @field_validator("sample", mode="before", check_fields=False)
    @classmethod
    def _sample(cls, v: Any) -> Any:
        return _flag(v)


class DefaultsSpec(_Rounds):
    """`defaults`: what a rank's recipe leaves out."""
    KEYS = ("max_round", "sample", "min_trained_share")
    max_round: int | None = None
    sample: bool | None = None
    min_trained_share: float | None = None


class RecipeFile(_Spec):
    """The whole file: its version, the defaults, and each rank's recipe (as written)."""
    KEYS = ("version", "defaults", "ranks")
    SECTIONS = {"defaults": DefaultsSpec}
    version: int
    defaults: DefaultsSpec
    ranks: dict[Any, Any]

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        if v != RECIPE_VERSION:
            raise ValueError(f"{v!r}; this script reads version {RECIPE_VERSION}")
        return v

    @field_validator("ranks")
    @classmethod
    def _ranks(cls, v: dict, info: ValidationInfo) -> dict:
        names = info.context["ranks"]
        for key in v:
            if key not in names:
                raise _KeyProblem(str(key), f"unknown rank (expected one of {', '.join(names)})")
        if not v:
            raise ValueError("no rank has a recipe")
        return v


class RankSpec(_Rounds):
    """One rank's recipe with the defaults filled in (fields in the order they are checked)."""
    KEYS = ("seed", "agents", "max_round", "sample", "min_trained_share")
    seed: Seed
    max_round: int
    min_trained_share: float
    sample: bool
    agents: list[Any]

    @field_validator("agents", mode="before")
    @classmethod
    def _agents(cls, v: Any) -> Any:
        if not isinstance(v, list) or not v:
            raise ValueError("expected a non-empty list of {agent, runs}")
        return v


class AgentSpec(_Spec):
    """One drafting agent of a rank: greedy:NOISE, a baseline or a policy file's path."""
    KEYS = ("agent", "runs", "sample")
    agent: str
    runs: Runs
    sample: bool | None = None

    @field_validator("agent", mode="before")
    @classmethod
    def _agent(cls, v: Any) -> Any:
        if not isinstance(v, str) or not v:
            raise ValueError(f"expected an agent name or a policy path, got {v!r}")
        return v

    @field_validator("sample", mode="before")
    @classmethod
    def _sample(cls, v: Any, info: ValidationInfo) -> Any:
        agent = info.data.get("agent")
        if isinstance(agent, str) and not is_trained(agent):
            return v is not False      # a baseline: anything but false is refused, as sampling
        return _flag(v)

    @model_validator(mode="after")
    def _known(self, info: ValidationInfo) -> "AgentSpec":
        name = self.agent
        if not is_trained(name):
            try:
                make_agent(name, info.context["rules"], seed=0)   # greedy:NOISE's noise checked
            except ValueError as exc:
                raise _KeyProblem("agent", str(exc)) from None
            if self.sample:
                raise _KeyProblem("sample", f"only trained policies sample their actions "
                                            f"({name!r} is not one)")
            return self
        if not name.endswith((".pt", ".zip")):
            raise _KeyProblem("agent", f"unknown agent {name!r}: use random, scripted, greedy, "
                                       f"greedy:NOISE or the path of a policy (.pt) or model "
                                       f"(.zip), relative to the repository root")
        root = info.context["root"]
        if not policy_path(name, root).is_file():
            raise _KeyProblem("agent", f"no such policy file {name!r} (paths are relative to the "
                                       f"repository root {root})")
        return self


def policy_path(name: str, root: Path) -> Path:
    return Path(name) if Path(name).is_absolute() else root / name


def _validated(model: type[_Spec], data: Any, where: str, source: str, context: dict,
               origin: Callable[[str], str] | None = None, missing: str = "missing"):
    """`model` validated from `data`, or its first problem as a RecipeError. `where` is the path
    of `data` in the file ("(top level)" for the file); `origin(key)`, where a key's value came
    from (a rank's own key or the defaults); `missing`, the words for a missing key."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        err = _first(model, exc.errors(include_url=False))
    loc = [str(p) for p in err["loc"]]
    kind, ctx = err["type"], err.get("ctx") or {}
    if isinstance(ctx.get("error"), _KeyProblem):
        loc.append(ctx["error"].key)
    if loc and origin is not None:
        loc[0] = origin(loc[0])
    elif where != "(top level)" or not loc:
        loc.insert(0, where)
    if kind == "extra_forbidden":
        section = model.SECTIONS.get(str(err["loc"][0])) if len(err["loc"]) == 2 else None
        problem = f"unknown key (expected one of {', '.join((section or model).KEYS)})"
    elif kind == "missing":
        problem = missing
    elif kind in ("model_type", "dict_type", "model_attributes_type"):
        problem = f"expected a mapping, got {type(err['input']).__name__}"
    else:
        problem = err["msg"].removeprefix("Value error, ")
    raise RecipeError(f"{source}: {'.'.join(loc)}: {problem}")


def _first(model: type[_Spec], errors: list[dict]) -> dict:
    """The problem reported, in the order the keys are checked: an unknown key of `model`, then
    a missing one (in the order of model.KEYS), then values (in the order of the fields)."""
    def order(ie: tuple[int, dict]) -> tuple:
        i, err = ie
        loc, kind = err["loc"], err["type"]
        if len(loc) == 1 and kind == "extra_forbidden":
            return (0, i)
        if len(loc) == 1 and kind == "missing":
            return (1, model.KEYS.index(loc[0]) if loc[0] in model.KEYS else i)
        return (2, i)
    return min(enumerate(errors), key=order)[1]


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


def load_recipes(path: str | Path, rules, root: Path = REPO) -> dict[str, RankRecipe]:
    """Read and validate a recipe file; the recipes by rank, in the rules' order of ranks."""
    path = Path(path)
    source = str(path)
    text = read_text(path, "the recipe file", RecipeError, limit=MAX_YAML_BYTES)
    try:
        data = safe_load_yaml(text, source, RecipeError)
    except yaml.YAMLError as exc:
        raise RecipeError(f"{source}: not valid YAML ({exc})") from None
    names = [r.id for r in rules.spec.ranks]
    context = {"rules": rules, "root": root, "ranks": names,
               "round_cap": rules.spec.run.round_cap}
    recipe = _validated(RecipeFile, data, "(top level)", source, context)
    defaults = recipe.defaults.model_dump(exclude_unset=True)
    out: dict[str, RankRecipe] = {}
    for rank in (r for r in names if r in recipe.ranks):
        where = f"ranks.{rank}"
        spec = recipe.ranks[rank]
        if not isinstance(spec, dict):
            raise RecipeError(f"{source}: {where}: expected a mapping, got {type(spec).__name__}")

        def origin(key: str, spec=spec, where=where) -> str:
            return f"{where}.{key}" if key in spec or key not in defaults else f"defaults.{key}"

        r = _validated(RankSpec, {**defaults, **spec}, where, source, context, origin,
                       missing="missing (and not in defaults)")
        agents = []
        for i, a in enumerate(r.agents):
            a = _validated(AgentSpec, a, f"{where}.agents[{i}]", source, context)
            trained = is_trained(a.agent)
            agents.append(AgentRecipe(a.agent, a.runs,
                                      trained and (r.sample if a.sample is None else a.sample),
                                      policy_path(a.agent, root) if trained else None))
        # every run drafts exactly one board per round, so the drafts share is known already
        trained_runs = sum(a.runs for a in agents if a.trained)
        all_runs = sum(a.runs for a in agents)
        if Fraction(trained_runs, all_runs) < Fraction(str(r.min_trained_share)):
            raise RecipeError(f"{source}: {origin('min_trained_share')}: {r.min_trained_share} "
                              f"cannot be met: trained policies play {trained_runs} of the "
                              f"{all_runs} runs")
        out[rank] = RankRecipe(rank, r.seed, r.max_round, r.min_trained_share, tuple(agents))
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


def git_commit(root: Path = REPO) -> str:
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


def shown(path: Path, root: Path = REPO) -> str:
    """A path as the repository names it where it lies inside it (no machine-specific prefix)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _share_of(s: dict, what: str) -> float:
    return s[f"trained_{what}"] / s[what] if s[what] else 0.0


def _ghost_chunk(agent_name: str, path, sample: bool, seed: int, rank: int, start: int,
                 runs: int, max_round: int, rules) -> list[dict]:
    """One task of a fanned-out build (`--ray`): runs start.. of one recipe agent, the agent
    rebuilt here."""
    from .policy import limit_torch_threads
    limit_torch_threads(1)
    agent = make_drafting_agent(agent_name, rules, seed, sample=sample, path=path)
    return ghosts_of(agent_name, rank, runs, seed, max_round, rules, agent=agent, start=start)


def build_rank(recipe: RankRecipe, rules, config: Path, runs_scale: float = 1.0,
               log=None, commit: str | None = None, progress=None,
               root: Path = REPO, ray: str | None = None) -> tuple[Pool, dict[int, dict]]:
    """Draft the rank's ghosts from its recipe; the pool (not yet written) and its shares.
    `commit`: the code's commit for the provenance (default: now; build_pools takes it once,
    before it writes any pool, so a pool written earlier in the same build does not count as a
    change). `progress`: a bar (agents.progress.bar) moved by one per drafting run. `ray`: the
    Ray address to play the drafting runs on as tasks of RAY_CHUNK runs (agents/fanout.py; the
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
        if ray is not None:
            from .fanout import run_tasks
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
    provenance = {
        "script": "scripts/build_pools.py",
        "config": shown(config, root), "config_sha256": sha256_of(config),
        "recipe": recipe.to_json(), "runs_scale": runs_scale,
        "agents": agents_played, "policies": policies,
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
    from .script_args import check_output
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
    from .policy import limit_torch_threads
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
    from .progress import say as progress_say
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
