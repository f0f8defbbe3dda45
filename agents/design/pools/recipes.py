"""The recipe file of the shipped pools (configs/ranks.yaml): `load_recipes` reads and validates
it into `RankRecipe`s; the file's shape is the strict models `RecipeFile`, `DefaultsSpec`,
`RankSpec` and `AgentSpec` (pydantic, unknown keys refused). A problem is a `RecipeError` naming
the file and the key path."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Callable, ClassVar

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from agents import SCHEDULE_PREFIX, make_agent
from agents.cli.args import MAX_RUNS
from agents.cli.provenance import REPO
from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml, yaml_problem

from .drafting import METAGAME, NO_SCHEDULES, is_trained

RECIPE_VERSION = 1


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


# >= 1: a rank's agent i drafts on evaluation seed seed * 1000 + i, and seed 0 would replay the
# runs of evaluations and calibrations on seeds 0, 1, ... (a ghost met in its own run)
Seed = Annotated[int, BeforeValidator(lambda v: _whole(v, 1))]
# drafting runs of one agent: the scripts' bound for runs (agents/cli/args.py, MAX_RUNS)
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
        if name == METAGAME:
            if self.sample:
                raise _KeyProblem("sample", f"only trained policies sample their actions "
                                            f"({name!r} is not one)")
            return self
        if name.startswith(SCHEDULE_PREFIX):
            raise _KeyProblem("agent", NO_SCHEDULES.format(name))
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
                                       f"planner[:KEY=VALUE,...], metagame, "
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
        raise RecipeError(f"{source}: not valid YAML {yaml_problem(exc)}") from None
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
        shared = next((other for other, done in out.items() if done.seed == r.seed), None)
        if shared is not None:
            raise RecipeError(f"{source}: {origin('seed')}: {r.seed} is ranks.{shared}'s seed too; "
                              f"two ranks on one seed draft on the same runs (keep seeds apart)")
        out[rank] = RankRecipe(rank, r.seed, r.max_round, r.min_trained_share, tuple(agents))
    return out
