"""The primitives of the project's strict YAML configs (training, league, best response, sweep,
RLlib): `ConfigError` (a config that cannot be used, naming the file and the key), the checked
YAML number types `Whole`, `Number` and `Mapping`, `PolicyKwargs` (a policy's options, as an
exported policy keeps them; `sb3_policy_kwargs` hands them to SB3), `Section` (a mapping whose unknown keys are
refused), `validate_model` (a mapping as a model, its first problem in words), `read_yaml` (a file
with the command line's overrides), `read_json` / `write_json`, `RUN_NAME` (a run directory's
name), and `eval_rules` / `rules_hash`: the rules an `env_kwargs` mapping's envs play."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml, write_text_atomic, yaml_problem

from agents.cli.provenance import REPO

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=-]*")


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the file and the key."""


def _whole(value: Any) -> Any:
    # YAML whole numbers; 1e6 and 1.0e6 (PyYAML reads the first as text) are fine, true is not
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"expected a whole number, got {value!r}") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"expected a whole number, got {value!r}")
        value = int(value)
    return value


def _number(value: Any) -> Any:
    # YAML numbers; 3e-4 (text to PyYAML) is read as the number it spells; true is refused
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
    if isinstance(value, (int, float)) and not math.isfinite(value):
        raise ValueError("expected a finite number")
    return value


def mapping_or_empty(value: Any) -> Any:
    return {} if value is None else value        # `ppo:` with nothing under it


Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, BeforeValidator(_number)]
Mapping = Annotated[dict[str, Any], BeforeValidator(mapping_or_empty)]

# the policy's options a config may set: those an exported policy keeps as data
# (agents/policy/file.py), so a trained network is always one that can be exported and shared
POLICY_KEYS = ("net_arch", "activation_fn", "ortho_init", "share_features_extractor")


def _policy_kwargs(value: Any) -> dict:
    """A config's policy_kwargs, checked as an exported policy's description checks them, before
    anything trains (a zero-width layer trained, then failed at export); activation_fn is a
    torch.nn class name (Tanh, ReLU, ...; any case), kept as its name (`sb3_policy_kwargs`)."""
    from agents.policy.file import ACTIVATIONS, PolicyFileError, _net_arch
    value = mapping_or_empty(value)
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping of {', '.join(POLICY_KEYS)}, got {value!r}")
    for key in value:
        if key not in POLICY_KEYS:
            raise ValueError(f"unknown key {key!r} (keys: {', '.join(POLICY_KEYS)})")
    out = dict(value)
    if "net_arch" in value:
        try:
            _net_arch(value["net_arch"])
        except PolicyFileError as exc:
            raise ValueError(str(exc)) from None
    if "activation_fn" in value:
        names = {a.lower(): a for a in ACTIVATIONS}
        name = value["activation_fn"]
        if not isinstance(name, str) or name.lower() not in names:
            raise ValueError(f"activation_fn must be one of {', '.join(ACTIVATIONS)}; got {name!r}")
        out["activation_fn"] = names[name.lower()]
    for key in ("ortho_init", "share_features_extractor"):
        if key in value and not isinstance(value[key], bool):
            raise ValueError(f"{key} must be true or false; got {value[key]!r}")
    return out


PolicyKwargs = Annotated[dict[str, Any], BeforeValidator(_policy_kwargs)]


def sb3_policy_kwargs(kwargs: dict) -> dict | None:
    """A checked policy_kwargs as SB3 takes it: activation_fn's name as its torch.nn class."""
    if not kwargs:
        return None
    out = dict(kwargs)
    if "activation_fn" in out:
        import torch.nn
        out["activation_fn"] = getattr(torch.nn, out["activation_fn"])
    return out


class Section(BaseModel):
    """A mapping of a config: unknown keys are refused."""
    model_config = ConfigDict(extra="forbid")


def _problem(err: dict, sections: dict) -> str:
    """One pydantic error as words, with the key's dotted path (`sections`: the config's models by
    key path, for the list of keys an unknown key is not)."""
    loc = ".".join(str(p) for p in err["loc"])
    kind, ctx, got = err["type"], err.get("ctx", {}), err.get("input")
    if kind == "extra_forbidden":
        section = tuple(err["loc"][:-1])
        model, ppo = sections.get(section), sections.get(("ppo",))
        keys = f" (keys{' of ' + '.'.join(section) if section else ''}: " \
               f"{', '.join(model.model_fields)})" if model else ""
        hint = f"; did you mean ppo.{loc}?" if not section and ppo and loc in ppo.model_fields else ""
        return f"unknown key {loc!r}{hint}{keys}"
    bounds = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
    if kind in bounds:
        limit = next(iter(ctx.values()))
        return f"{loc} must be {bounds[kind]} {limit}; got {got!r}"
    if kind == "literal_error":
        return f"{loc} must be one of {ctx.get('expected')}; got {got!r}"
    if kind == "string_pattern_mismatch":
        return f"{loc} must be a run directory's name (letters, digits and ._+=-); got {got!r}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def validate_model(model: type[BaseModel], data: Any, source: str, what: str,
                   sections: dict) -> Any:
    """`data` as a `model` (a strict config), else one ConfigError naming `source` and the key
    (`what`: the config's name in words, "a training config"; `sections`: its models by key path,
    () the top)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {what} is a YAML mapping")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(f"{source}: {_problem(errors[0], sections)}{more}") from None


def read_yaml(path: str | Path, overrides: dict | None = None) -> Any:
    """A YAML config file's content (None: empty, and no overrides), with the command line's
    overrides (None: not given) over its top-level keys (an empty file with overrides: just
    them); a missing file or bad YAML is a ConfigError naming it."""
    path = Path(path)
    text = read_text(path, "", ConfigError, limit=MAX_YAML_BYTES)
    try:
        data = safe_load_yaml(text, str(path), ConfigError)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML {yaml_problem(exc)}") from None
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if data is None and given:      # a file of comments only: --seed and the rest still hold
        data = {}
    if isinstance(data, dict):
        data.update(given)
    return from_repository(data)


# a file named inside a config's text: a path ending so, or such a path inside an agent's name
# (by_round:1=A;3=B, sampled:policy=A,...)
_PATH_END = (".pt", ".zip", ".yaml", ".yml", ".json", ".json.gz", ".npz")
_PATH_TOKEN = re.compile(r"[^;=,\s]+")


def _repo_path(text: str) -> str:
    """`text` as it is when it is no relative file path, or the file exists from the current
    directory; else the repository's file of that path, if there is one."""
    if not text.endswith(_PATH_END) or Path(text).is_absolute() or Path(text).exists():
        return text
    shipped = REPO / text
    return str(shipped) if shipped.is_file() else text


def _map_paths(data: Any, change) -> Any:
    """`data` with `change` applied to every path-like token of its strings (in mappings and
    lists, at any depth; a text past 4096 characters is no path and is left as it is)."""
    if isinstance(data, dict):
        return {k: _map_paths(v, change) for k, v in data.items()}
    if isinstance(data, list):
        return [_map_paths(v, change) for v in data]
    if isinstance(data, str) and len(data) <= 4096:
        return _PATH_TOKEN.sub(lambda m: change(m.group(0)), data)
    return data


def _portable_path(text: str) -> str:
    """An absolute path inside the repository as its path from the repository root; any other
    text as it is."""
    if not text.endswith(_PATH_END) or not Path(text).is_absolute():
        return text
    try:
        return Path(text).relative_to(REPO).as_posix()
    except ValueError:
        return text


def portable(data: Any) -> Any:
    """A config's data as it is written down (config.yaml, a run's identity, comparisons):
    the repository's files by their paths from the repository root, whichever directory the run
    was started from, so `from_repository`'s absolute paths do not make two starts of one config
    two configs."""
    return _map_paths(data, _portable_path)


def from_repository(data: Any) -> Any:
    """A config's data with each relative file path that names no file from the current
    directory but one of the repository (the shipped configs name agents/models/..., configs/...
    from the repository root) made that file's absolute path; every other value as it is. So a
    shipped config runs from any directory, as its --runs-dir default does; a path that exists
    from the current directory is read there, as given."""
    return _map_paths(data, _repo_path)


def read_json(path: Path) -> dict:
    """A run's own JSON record (eval.json, train_seconds.json) as a mapping; {} if it is missing
    or not one (read within the project's JSON bounds: a hostile file is {} too)."""
    from rune_env.files import load_json
    try:
        data = load_json(path.read_text(encoding="utf-8"), str(path), ValueError)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=1))


def eval_rules(env_kwargs: dict | None):
    """The rules a training config's envs play (`env_kwargs`' rules and overrides), for its
    evaluations' records and pictures."""
    # imported here: the env module brings Gymnasium, which a config's checks do not need
    from rune_env.envs.run_env import resolve_rules
    kw = env_kwargs or {}
    return resolve_rules(kw.get("rules"), kw.get("rules_overrides"))


# RuneDraft-v0's own options: a training run's evaluations play whole runs of RuneRun-v0, as
# every agent's do (the game's measure: mean wins and clear rate), so these apply to training only
DRAFT_ONLY_KWARGS = ("round", "budget", "start_board")


def run_env_kwargs(env_kwargs: dict | None) -> dict:
    """A training config's env options as RuneRun-v0 takes them, for its evaluations: RuneDraft-v0's
    own options left out (DRAFT_ONLY_KWARGS)."""
    return {k: v for k, v in (env_kwargs or {}).items() if k not in DRAFT_ONLY_KWARGS}


def rules_hash(env_kwargs: dict) -> str:
    """The hash of the rules an env of these options plays (its `rules`/`rules_overrides`)."""
    return eval_rules(env_kwargs).hash
