"""Run records: (seed, rules hash, settings, actions). Replaying one rebuilds the identical run."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..files import load_json, read_text, write_json_atomic
from ..rules.config import Rules
from .loop import OpponentSource, apply, new_run
from .opponents import default_opponents
from .state import RunState

RECORD_VERSION = 1


class RecordError(ValueError):
    pass


@dataclass
class RunRecord:
    seed: int
    rules_hash: str
    rank: int = 0
    core: str | None = None
    unlocked: list[str] | None = None
    actions: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, state: RunState, core: str | None = None, unlocked: list[str] | None = None) -> "RunRecord":
        return cls(seed=state.seed, rules_hash=state.rules.hash, rank=state.rank, core=core,
                   unlocked=unlocked, actions=list(state.actions_taken))

    def replay(self, rules: Rules, opponents: OpponentSource | None = None) -> RunState:
        """The recorded run, played again against `opponents` (default: the budget drafter)."""
        if rules.hash != self.rules_hash:
            raise RecordError(f"record was made under rules {self.rules_hash}, not {rules.hash}")
        try:
            state = new_run(self.seed, rules, rank=self.rank, core=self.core, unlocked=self.unlocked)
        except ValueError as exc:
            raise RecordError(f"record cannot start its run: {exc}") from None
        opponents = opponents or default_opponents(rules)
        for i, a in enumerate(self.actions):
            try:
                apply(state, a, opponents)
            except ValueError as exc:  # IllegalAction is a ValueError
                raise RecordError(f"record action #{i} ({a}) cannot be replayed: {exc}") from None
        return state

    def to_json(self) -> dict:
        return {"version": RECORD_VERSION, "seed": self.seed, "rules_hash": self.rules_hash,
                "rank": self.rank, "core": self.core, "unlocked": self.unlocked,
                "actions": list(self.actions)}

    def save(self, path: str | Path) -> None:
        write_json_atomic(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> "RunRecord":
        try:
            data = load_json(read_text(Path(path), "run record", RecordError), str(path),
                             RecordError)
            if data.get("version") != RECORD_VERSION:
                raise RecordError(f"{path}: not a version-{RECORD_VERSION} run record")
            return cls(seed=int(data["seed"]), rules_hash=str(data["rules_hash"]),
                       rank=int(data["rank"]), core=data["core"], unlocked=data["unlocked"],
                       actions=[int(a) for a in data["actions"]])
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"{path}: cannot read run record ({exc})") from None
