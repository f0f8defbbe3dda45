"""The sweep config: `SweepConfig` (with `Dimension`, `ASHAConfig`), strict pydantic models like
agents/train/train_config.py's `TrainConfig`; `read_sweep` reads a file with the command line's
overrides (a problem is a `ConfigError` naming the file and the key); `train_path_problem`,
`set_path` / `get_path` (train-config keys by dotted path); `tune_problem`."""
from __future__ import annotations

import copy
import itertools
import math
from pathlib import Path
from typing import Annotated, Any, Literal, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from agents.cli.args import SEED_MAX
from ..config import RUN_NAME, Mapping, Number, Whole, read_yaml, validate_model
from ..train_config import SECTIONS, TrainConfig


# What a trial reports to Tune from each evaluation (agents.evaluation.runs.summarise's numbers); the
# sweep's `metric` is one of them.
REPORTED_METRICS = ("battle_win_rate", "mean_wins", "clear_rate", "rounds_survived", "lamps_left")
# Tune's time attribute, env steps: ASHA's rungs and max_t are in it, and under Tune's own name for
# it Tune's TensorBoard files use it as their step, so they line up with train.py's curves
TIME_ATTR = "timesteps_total"
MAX_TRIALS = 10_000            # a typo like num_samples: 1e6 is refused before anything starts
DIMENSION_KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
STATUSES = ("finished", "stopped_early", "error", "interrupted", "not_started")


# -- the sweep config ----------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _dimension(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError(f"a dimension is a mapping of one kind ({', '.join(DIMENSION_KINDS)}) to "
                         f"its values, e.g. {{grid: [0, 1]}}; got {value!r}")
    return value


class Dimension(_Strict):
    """One key of the search space: exactly one of
    grid: [v, ...]       every value, each in its own trials (a grid's keys form their product);
    choice: [v, ...]     one value drawn per trial, each equally likely;
    uniform: [lo, hi]    a number drawn uniformly from lo..hi;
    loguniform: [lo, hi] a number whose logarithm is uniform (0 < lo < hi: learning rates);
    randint: [lo, hi]    a whole number lo <= x < hi (hi excluded, as in Tune and numpy)."""
    grid: list[Any] | None = Field(None, min_length=1)
    choice: list[Any] | None = Field(None, min_length=1)
    uniform: tuple[Number, Number] | None = None
    loguniform: tuple[Number, Number] | None = None
    randint: tuple[Whole, Whole] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> "Dimension":
        given = [k for k in DIMENSION_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"a dimension has exactly one kind of {', '.join(DIMENSION_KINDS)}; "
                             f"got {', '.join(given) or 'none'}")
        kind = given[0]
        if kind in ("uniform", "loguniform", "randint"):
            lo, hi = getattr(self, kind)
            if not lo < hi:
                raise ValueError(f"{kind}: [lo, hi] needs lo < hi; got [{lo}, {hi}]")
            if kind == "loguniform" and lo <= 0:
                raise ValueError(f"loguniform: [lo, hi] needs 0 < lo; got [{lo}, {hi}]")
            if kind == "uniform" and not math.isfinite(hi - lo):
                raise ValueError(f"uniform: [lo, hi] spans more than a float holds; got [{lo}, {hi}]")
            if kind == "randint" and not (-2**63 <= lo and hi <= 2**63 - 1):
                raise ValueError(f"randint: [lo, hi] must lie within a 64-bit integer's range; "
                                 f"got [{lo}, {hi}]")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in DIMENSION_KINDS if getattr(self, k) is not None)


class ASHAConfig(_Strict):
    """ASHA's settings, in timesteps (Tune's AsyncHyperBandScheduler with time_attr timesteps).
    A trial can be stopped at each rung grace_period * reduction_factor**k < max_t if its metric
    is below the best 1/reduction_factor of the trials that reached that rung."""
    grace_period: Whole | None = Field(None, ge=1)   # default: the trials' eval.every
    # at least 1.1: rungs grace_period x factor^k up to max_t, about 240 at most then (1.000001
    # listed 23 million rungs, 1 + 1e-12 never finished)
    reduction_factor: Number = Field(3.0, ge=1.1, le=1000)
    max_t: Whole | None = Field(None, ge=1)          # default: the trials' total_timesteps


def _scheduler(value: Any) -> Any:
    return "none" if value is None else value         # `scheduler:` with nothing, or null


def _space(value: Any) -> Any:
    return {} if value is None else value


class SweepConfig(_Strict):
    """A sweep config (configs/sweeps/*.yaml; keys in configs/sweeps/README.md)."""
    name: str | None = Field(None, pattern="^" + RUN_NAME.pattern + "$")
    base: str                                        # the trials' training config
    overrides: Mapping = {}                          # dotted train-config key -> fixed value
    space: Annotated[dict[str, Annotated[Dimension, BeforeValidator(_dimension)]],
                     BeforeValidator(_space)] = {}
    num_samples: Whole = Field(1, ge=1, le=MAX_TRIALS)
    search_seed: Whole = Field(0, ge=0, le=SEED_MAX)
    metric: Literal[REPORTED_METRICS] = "battle_win_rate"
    mode: Literal["max", "min"] = "max"
    scheduler: Annotated[Literal["none", "asha"], BeforeValidator(_scheduler)] = "none"
    asha: Annotated[ASHAConfig, BeforeValidator(lambda v: {} if v is None else v)] = ASHAConfig()
    cpus_per_trial: Whole = Field(1, ge=1)
    max_concurrent: Whole | None = Field(None, ge=1)  # default: as many as the CPUs allow

    @model_validator(mode="after")
    def _consistent(self) -> "SweepConfig":
        for section, keys in (("overrides", self.overrides), ("space", self.space)):
            for key in keys:
                if problem := train_path_problem(key):
                    raise ValueError(f"{section}: {problem}")
        keys = [*self.overrides, *self.space]
        for a, b in itertools.permutations(keys, 2):
            if a == b or b.startswith(a + "."):
                where = "in both overrides and space" if a == b else f"under {a!r}"
                raise ValueError(f"{b!r} is set twice ({where}): give each train-config key once")
        if "asha" in self.model_fields_set and self.scheduler != "asha":
            raise ValueError("asha: ASHA's settings are given but scheduler is 'none' (set "
                             "scheduler: asha, or remove them)")
        return self

    def to_yaml(self) -> dict[str, Any]:
        """The validated config as a sweep YAML reads (sweep.yaml of the sweep directory)."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["space"] = {k: d.model_dump(mode="json", exclude_none=True)
                         for k, d in self.space.items()}
        if self.scheduler != "asha":
            data.pop("asha")
        return data


class _SweepSections(dict):
    """The models by key path, for the list of keys an unknown key is not (space.<key> is a
    Dimension whatever the key)."""

    def get(self, section, default=None):
        if len(section) == 2 and section[0] == "space":
            return Dimension
        return super().get(section, default)


SWEEP_SECTIONS = _SweepSections({(): SweepConfig, ("asha",): ASHAConfig})


def read_sweep(path: str | Path, overrides: dict | None = None) -> SweepConfig:
    """A sweep config file with the command line's overrides (None: not given), validated; the
    name defaults to the file's stem."""
    path = Path(path)
    data = read_yaml(path, overrides)
    if isinstance(data, dict) and data.get("name") is None:
        data["name"] = path.stem
    return validate_model(SweepConfig, data, str(path), "a sweep config", SWEEP_SECTIONS)


def tune_problem() -> str | None:
    """Why Ray Tune cannot be used here (the ray extra is not installed), or None."""
    try:
        import ray.tune  # noqa: F401
    except ImportError:
        return ('a sweep runs its trials under Ray Tune, which is not installed: '
                'pip install -e ".[ray]"')
    return None


def train_path_problem(key: str) -> str | None:
    """Why `key` (dotted, e.g. ppo.learning_rate) names no field of the training config, or None.
    Below a free mapping (env_kwargs, policy_kwargs) any key is accepted: the env and SB3 check
    those when the trial starts (env_kwargs before Ray starts, see plan_trials)."""
    parts = key.split(".")
    if not all(parts):
        return f"{key!r} is not a dotted train-config key (e.g. ppo.learning_rate)"
    model: type[BaseModel] | None = TrainConfig
    prefix: tuple = ()
    for part in parts:
        if model is None:                       # under env_kwargs or policy_kwargs
            return None
        if part not in model.model_fields:
            where = f" of {'.'.join(prefix)}" if prefix else ""
            return (f"unknown train-config key {key!r} (keys{where}: "
                    f"{', '.join(model.model_fields)})")
        annotation = model.model_fields[part].annotation
        prefix += (part,)
        if prefix in SECTIONS:
            model = SECTIONS[prefix]
        elif get_origin(annotation) is dict or annotation is dict:
            model = None
        elif len(prefix) < len(parts):
            return f"train-config key {key!r}: {'.'.join(prefix)} is a value, not a section"
    return None


def set_path(data: dict, key: str, value: Any) -> None:
    """Set the dotted `key` of a config mapping to `value`; a mapping value is merged into the
    mapping there (so `eval: {every: 1024}` keeps the base's eval.episodes and eval.seed)."""
    *parents, last = key.split(".")
    node = data
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if isinstance(value, dict) and isinstance(node.get(last), dict):
        for k, v in value.items():
            set_path(node[last], k, v)
    else:
        node[last] = copy.deepcopy(value)


def get_path(data: dict, key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node
