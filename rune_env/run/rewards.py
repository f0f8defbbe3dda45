"""Reward options (D-42): what a reward choice offers, and the order they are offered in.

A pending reward choice holds its options in their string form, the form the saved run state,
run records, JSON output and the terminal game show: the category (`mana`, `hand_slot`, ...),
or `artifact:<name>` for a free artifact. `RewardOption.parse` reads that form and `str()`
writes it back; every reader of an option goes through them."""
from __future__ import annotations

from typing import NamedTuple

# The categories in the order a choice lists them and the observation encodes them (one-hot
# column = index here). Changing it changes every observation and every drawn choice.
REWARD_CATEGORIES = ("artifact", "mana", "hand_slot", "artifact_slot", "base_stat")
ARTIFACT = "artifact"       # the category whose option names the artifact it gives
_SEPARATOR = ":"


class RewardOption(NamedTuple):
    """One reward option: its category, and the artifact it gives (category `artifact` only)."""

    category: str
    artifact: str | None = None

    @classmethod
    def parse(cls, text: str) -> "RewardOption":
        """`"mana"` -> (mana, None); `"artifact:ring"` -> (artifact, ring)."""
        category, separator, artifact = text.partition(_SEPARATOR)
        return cls(category, artifact if separator else None)

    def __str__(self) -> str:
        return self.category if self.artifact is None else \
            f"{self.category}{_SEPARATOR}{self.artifact}"

    @property
    def gives_artifact(self) -> bool:
        return self.category == ARTIFACT and self.artifact is not None


def offered_order(option: RewardOption) -> int:
    """The sort key that lists options in REWARD_CATEGORIES order."""
    return REWARD_CATEGORIES.index(option.category)
