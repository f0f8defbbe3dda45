"""A league's saved state, league.json (agents/train/league.py writes it at each snapshot and at
the end): what `league.py --resume` goes on from, checked whole before anything of the run is
written or trained (`check_league_state`), and the resume point it gives (`resume_point`)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rune_env.files import load_json, read_text, shown

from .config import ConfigError

if TYPE_CHECKING:
    from .league import League, LeagueConfig

LEAGUE_VERSION = 1
FINAL = "final"       # the finished learner's member name (rated, never sampled)


def check_league_state(data: Any, cfg: LeagueConfig) -> int:
    """The steps of league state `data` (league.json, as `League.to_json` writes it) if it is one
    this league can go on from, else a one-line ConfigError naming what is wrong: its version; its
    steps, whole and at most cfg.total_timesteps; its fixed members the config's; its snapshots
    distinct `snap_<steps>` names of at most its steps; every name in its results, scores and
    ratings one of its members; every score in [0, 1]."""
    def bad(what: str) -> ConfigError:
        return ConfigError(f"league.json: {what}")

    def whole(x) -> bool:
        return type(x) is int and x >= 0
    if not isinstance(data, dict):
        raise bad("not a league state (a JSON object)")
    if data.get("version") != LEAGUE_VERSION or type(data.get("version")) is not int:
        raise bad(f"version {shown(data.get('version'), 40)}; this rune-env reads version "
                  f"{LEAGUE_VERSION}")
    missing = [k for k in ("steps", "members", "fixed", "snapshots", "results", "scores",
                           "ratings_history") if k not in data]
    if missing:
        raise bad(f"lacks {', '.join(missing)}")
    steps = data["steps"]
    if not whole(steps) or steps > cfg.total_timesteps:
        raise bad(f"steps {shown(steps, 40)}: a whole number of at most total_timesteps "
                  f"({cfg.total_timesteps}; pass a larger --total-timesteps to go on)")
    fixed = [m.name for m in cfg.members]
    if data["fixed"] != fixed:
        raise bad(f"its fixed members {shown(data['fixed'], 200)} are not the config's {fixed}")
    snaps = data["snapshots"]
    if not isinstance(snaps, list) or len(set(map(str, snaps))) != len(snaps) or not all(
            isinstance(s, str) and (m := _SNAPSHOT.fullmatch(s)) and int(m[1]) <= steps
            for s in snaps):
        raise bad(f"snapshots must be distinct snap_<steps> names of at most {steps} steps")
    members = data["members"]
    names = set(fixed) | set(snaps)
    if not isinstance(members, dict) or not names <= set(members) <= names | {FINAL} \
            or not all(isinstance(v, str) for v in members.values()):
        raise bad("members must map its fixed members and snapshots (and final) to agents")
    names |= set(members)
    results = data["results"]
    if not isinstance(results, list) or not all(
            isinstance(r, list) and len(r) == 3 and r[0] in names and r[1] in names
            and r[0] != r[1] and _share(r[2]) for r in results):
        raise bad("results must be [member, other member, score in [0, 1]] triples")
    scores = data["scores"]
    if not isinstance(scores, dict) or not set(scores) <= names or not all(
            isinstance(v, list) and all(map(_share, v)) for v in scores.values()):
        raise bad("scores must map members to lists of scores in [0, 1]")
    history = data["ratings_history"]
    if not isinstance(history, list) or not all(
            isinstance(h, dict) and isinstance(h.get("ratings"), dict) for h in history):
        raise bad("ratings_history must be a list of {steps, ratings} entries")
    return steps


_SNAPSHOT = re.compile(r"snap_(0|[1-9][0-9]{0,15})")


def _share(x) -> bool:
    """A score: a number in [0, 1] (JSON's numbers come back finite: rune_env.files.load_json)."""
    return type(x) in (int, float) and 0 <= x <= 1


def resume_point(cfg: LeagueConfig, league: League, state_file: Path) -> tuple[int, Path | None]:
    """(steps, checkpoint) a resumed league goes on from, its state put into `league`, or (0,
    None) when it has no snapshot yet; each part checked first (ConfigError / PolicyLoadError,
    one line): league.json whole, the checkpoint signed, every snapshot loads."""
    from agents.policy import PolicyLoadError
    from agents.policy.trust import UntrustedCheckpoint, check_checkpoint
    if not state_file.is_file():
        return 0, None
    saved = load_json(read_text(state_file, "league state", ConfigError), str(state_file),
                      ConfigError)
    steps = check_league_state(saved, cfg)
    ckpt = state_file.parent / "checkpoints" / f"league_{steps}.zip"
    if not (steps and ckpt.is_file()):
        return 0, None
    league.load_json(saved, state_file.parent)
    try:
        check_checkpoint(ckpt)     # a pickle: only the league's own (signed) checkpoint
    except UntrustedCheckpoint as exc:
        raise PolicyLoadError(str(exc)) from None
    for name in league.snapshots:  # each loads (or is one line) before training goes on
        try:
            league.agent(name)
        except (ValueError, OSError) as exc:
            raise ConfigError(f"league.json: snapshot {name}: {exc}") from None
    return steps, ckpt
