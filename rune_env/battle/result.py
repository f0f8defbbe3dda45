"""The outcome of one battle."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BattleResult:
    """winner: 0, 1 or None (a draw); time: seconds when the deciding hit landed (the duration at
    a timeout); hp: clamped at 0; casts: turns in which the rune cast; turns: turns taken by
    turn cells; seals: runes sealed minus unsealed (D-32); reason: "knockout" or "timeout" (the
    dice variant also "burst": the loser's stored mana burst, and "burn": a mana burn downed the
    loser, D-47); rests: rest turns taken (D-50; not in `turns`); events: the trace."""

    winner: int | None
    time: float
    hp: tuple[float, float]
    max_hp: tuple[float, float]
    casts: tuple[int, int]
    turns: tuple[int, int] = (0, 0)
    seals: tuple[int, int] = (0, 0)
    reason: str = "timeout"
    rests: tuple[int, int] = (0, 0)
    events: list[dict[str, Any]] | None = None

    def to_json(self, with_events: bool | None = None) -> dict[str, Any]:
        """The battle command's JSON object (RULES section 11), with "events" if traced."""
        out: dict[str, Any] = {"winner": self.winner, "time": self.time, "hp": list(self.hp),
                               "max_hp": list(self.max_hp), "casts": list(self.casts)}
        if self.events is not None and with_events is not False:
            out["events"] = self.events
        return out

    def trace_hash(self) -> str:
        """A digest of the result and trace; golden tests pin it (floats written with repr)."""
        text = json.dumps(self.to_json(with_events=True), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]
