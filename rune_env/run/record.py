"""Run records: (seed, rules hash, settings, actions). Replaying one rebuilds the identical run."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..files import load_json, read_text, shown, write_json_atomic
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
        """The record in `path`, each field of its own type (RecordError, one line naming the
        field, otherwise: `true` read as rank 1, 0.9 as rank 0, "fire" as the kinds f, i, r, e)."""
        data = load_json(read_text(Path(path), "run record", RecordError), str(path), RecordError)
        if not isinstance(data, dict) or type(data.get("version")) is not int \
                or data["version"] != RECORD_VERSION:
            raise RecordError(f"{path}: not a version-{RECORD_VERSION} run record")

        def bad(key: str, what: str) -> RecordError:
            return RecordError(f"{path}: {key} must be {what}; got {shown(data.get(key), 60)}")
        for key in ("seed", "rank"):
            if type(data.get(key)) is not int or data[key] < 0:
                raise bad(key, "a whole number >= 0")
        if not isinstance(data.get("rules_hash"), str):
            raise bad("rules_hash", "text")
        if data.get("core") is not None and not isinstance(data["core"], str):
            raise bad("core", "a core's name or null")
        unlocked = data.get("unlocked")
        if unlocked is not None and not (isinstance(unlocked, list)
                                         and all(isinstance(k, str) for k in unlocked)):
            raise bad("unlocked", "a list of rune kinds or null")
        actions = data.get("actions")
        if not isinstance(actions, list) or not all(type(a) is int for a in actions):
            raise bad("actions", "a list of whole numbers (action ids)")
        return cls(seed=data["seed"], rules_hash=data["rules_hash"], rank=data["rank"],
                   core=data.get("core"), unlocked=unlocked, actions=list(actions))
