"""A player's profile: cleared ranks and achievements, which unlock delay, node and mimic.

Research use needs no profile: runs default to every rune unlocked. `python -m rune_env play`
keeps one (JSON, written atomically) so that a player unlocks runes and ranks as the game says:
clearing a run opens the next rank; achievements (config `achievements`) unlock runes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..files import load_json, read_text, write_json_atomic
from ..rules.config import KINDS, Rules
from ..run.state import RunState

PROFILE_VERSION = 1


class ProfileError(ValueError):
    pass


@dataclass
class Profile:
    cleared_ranks: list[str] = field(default_factory=list)
    achievements: list[str] = field(default_factory=list)

    def unlocked(self, rules: Rules) -> list[str]:
        """Every kind whose unlocking achievement (if any) has been earned."""
        locks = rules.spec.achievements.model_dump()
        return [k for k in KINDS if k not in locks or locks[k] in self.achievements]

    def open_ranks(self, rules: Rules) -> list[str]:
        """The first rank, and each rank whose easier neighbour has been cleared."""
        names = [r.id for r in rules.spec.ranks]
        return [n for i, n in enumerate(names) if i == 0 or names[i - 1] in self.cleared_ranks]

    def record_run(self, state: RunState) -> list[str]:
        """Fold a finished run in; returns what is new (achievements and cleared ranks)."""
        new = []
        for a in state.achievements:
            if a not in self.achievements:
                self.achievements.append(a)
                new.append(a)
        if state.cleared:
            name = state.rules.spec.ranks[state.rank].id
            if name not in self.cleared_ranks:
                self.cleared_ranks.append(name)
                new.append(f"cleared:{name}")
        return new

    def to_json(self) -> dict:
        return {"version": PROFILE_VERSION, "cleared_ranks": list(self.cleared_ranks),
                "achievements": list(self.achievements)}

    def save(self, path: str | Path) -> None:
        write_json_atomic(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> "Profile":
        path = Path(path)
        if not path.exists():
            return cls()
        data = load_json(read_text(path, "profile", ProfileError), str(path), ProfileError)
        if not isinstance(data, dict) or type(data.get("version")) is not int \
                or data["version"] != PROFILE_VERSION:
            raise ProfileError(f"{path}: not a version-{PROFILE_VERSION} rune-env profile")
        lists = {}
        for key in ("cleared_ranks", "achievements"):
            value = data.get(key)
            # a list of names: a string or a mapping would be taken letter by letter or key by key
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise ProfileError(f"{path}: malformed profile ({key} must be a list of names)")
            lists[key] = list(value)
        return cls(**lists)
