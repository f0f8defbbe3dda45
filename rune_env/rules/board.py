"""The board model and the JSON board file (docs/RULES.md, "Board files").

A `Board` is one side's circle as it enters battle: runes on cells, artifacts, the hand
(reserves), the core and sun element, open sectors, relics, boss rules, max HP and round.
`Board.from_json` / `load_board` validate everything and raise `BoardError` naming the problem;
`to_json` writes the canonical form that `from_json` reads back to an equal board.

A board file:
    {"core": "sun", "sun_element": "fire", "round": 1,
     "runes": {"1:0": ["fire", 1], "2:0": ["wind", 2]},
     "artifacts": {"1:3": "ward_stone"}, "hand": [["water", 1]], "open_sectors": [0],
     "relics": ["ember_jar"], "max_hp": 100, "boss_rules": [], "label": "free text"}
Only "runes" is required. Defaults: no core, round 1, no artifacts, empty hand, no ring-3 sector
open, no relics, no boss rules, max HP from the round. The round is a whole number in
1..run.round_cap (the last round of a run); max_hp, where given, a number in (0, 10**15].
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..files import load_json, read_text, write_json_atomic
from .config import KINDS, Rules, default_rules
from .geometry import Geometry, geometry


class BoardError(ValueError):
    """A board that breaks a rule; the message names the problem."""


INT32_MAX = 2**31 - 1    # the fast engine encodes boards (round included) as int32 records
# A board's max HP: an input bound, not a game number. Runs reach HP in the thousands (base_hp +
# hp_per_round per round, times the bonuses); 10**15 is far past any of them (the tolerance tests
# use 1.6e12 to put HP ratios 1e-9 apart) and far from float64's overflow (a 400-digit or 1e308
# max_hp only overflows).
MAX_HP_BOUND = 10**15


def max_round(rules: Rules) -> int:
    """The last round a board may be of: run.round_cap, the last round a run reaches (endless
    runs too), and never past what the engine's int32 board records hold."""
    return min(rules.spec.run.round_cap, INT32_MAX)


@dataclass(frozen=True)
class Board:
    runes: dict[int, tuple[str, int]] = field(default_factory=dict)   # cell id -> (kind, grade)
    artifacts: dict[int, str] = field(default_factory=dict)           # cell id -> artifact id
    hand: tuple[tuple[str, int], ...] = ()
    core: str | None = None
    sun_element: str | None = None
    open_sectors: frozenset[int] = frozenset()
    relics: tuple[str, ...] = ()
    max_hp: float | None = None
    boss_rules: tuple[str, ...] = ()
    round: int = 1
    label: str = ""

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: Any, rules: Rules | None = None, source: str = "board") -> "Board":
        """Build and validate a board from parsed JSON (a dict) or a JSON string."""
        rules = rules or default_rules()
        if isinstance(data, (str, bytes)):
            try:
                data = load_json(data if isinstance(data, str) else data.decode("utf-8", "replace"),
                                 source, BoardError, object_pairs_hook=_no_duplicate_keys)
            except _DuplicateKey as exc:    # found while parsing, before the source is known
                raise BoardError(f"{source}: {exc}") from None
        return _parse(data, rules, source)

    def to_json(self, rules: Rules | None = None) -> dict:
        geo = geometry((rules or default_rules()).radius)
        out: dict[str, Any] = {
            "runes": {geo.name(c): [k, g] for c, (k, g) in sorted(self.runes.items())},
        }
        if self.core is not None:
            out["core"] = self.core
        if self.sun_element is not None:
            out["sun_element"] = self.sun_element
        out["round"] = self.round
        if self.artifacts:
            out["artifacts"] = {geo.name(c): a for c, a in sorted(self.artifacts.items())}
        if self.hand:
            out["hand"] = [[k, g] for k, g in self.hand]
        if self.open_sectors:
            out["open_sectors"] = sorted(self.open_sectors)
        if self.relics:
            out["relics"] = list(self.relics)
        if self.max_hp is not None:
            out["max_hp"] = self.max_hp
        if self.boss_rules:
            out["boss_rules"] = list(self.boss_rules)
        if self.label:
            out["label"] = self.label
        return out

    def replace(self, **changes) -> "Board":
        return replace(self, **changes)

    def validate(self, rules: Rules | None = None) -> "Board":
        """Re-check a board built in code (the run loop's boards); returns it unchanged."""
        _parse(self.to_json(rules), rules or default_rules(), "board")
        return self


def load_board(path: str | Path, rules: Rules | None = None) -> Board:
    path = Path(path)
    text = read_text(path, "board file", BoardError)
    return Board.from_json(text, rules, source=str(path))


def save_board(board: Board, path: str | Path, rules: Rules | None = None) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a file."""
    write_json_atomic(Path(path), board.to_json(rules))


# -- validation -------------------------------------------------------------------------------
class _DuplicateKey(BoardError):
    """A key given twice in one JSON object (the message does not name the file yet)."""


def _no_duplicate_keys(pairs: list) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"key {key!r} given twice (a JSON object keeps only one of them)")
        out[key] = value
    return out


_KEYS = {"runes", "core", "sun_element", "round", "artifacts", "hand", "open_sectors", "relics",
         "max_hp", "boss_rules", "label"}


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _known(name: Any, known) -> bool:
    """`name` is a string among `known` (a list, a hashable check would fail on a list)."""
    return isinstance(name, str) and name in known


def _rune(value: Any, where: str, rules: Rules) -> tuple[str, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise BoardError(f"{where}: a rune is [kind, grade], e.g. [\"fire\", 1]; got {value!r}")
    kind, grade = value
    if not _known(kind, KINDS):
        raise BoardError(f"{where}: unknown rune kind {kind!r} (one of {', '.join(KINDS)})")
    if not _is_int(grade) or not 1 <= grade <= rules.max_grade:
        raise BoardError(f"{where}: grade must be a whole number 1..{rules.max_grade}; got {grade!r}")
    return kind, grade


def _names(value: Any, where: str, what: str, known: dict) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise BoardError(f"{where}: expected a list of names")
    for name in value:
        if not _known(name, known):
            raise BoardError(f"{where}: unknown {what} {name!r} (one of {', '.join(known)})")
    if len(set(value)) != len(value):
        raise BoardError(f"{where}: each may appear only once")
    return tuple(value)


def _cell(name: Any, where: str, geo: Geometry, open_sectors: frozenset[int]) -> int:
    try:
        cell = geo.parse(name)
    except ValueError as exc:
        raise BoardError(f"{where}: {exc}") from None
    sector = geo.sector[cell]
    if sector >= 0 and sector not in open_sectors:
        raise BoardError(f"{where}: cell {name} is in sector {sector} of ring {geo.radius}, which "
                         f"is not open (open_sectors: {sorted(open_sectors)})")
    return cell


def _parse(data: Any, rules: Rules, source: str) -> Board:
    spec = rules.spec
    geo = geometry(rules.radius)
    _check_keys(data, source)
    open_sectors = _open_sectors(data.get("open_sectors", []), geo, source)
    runes = _runes(data["runes"], rules, geo, open_sectors, source)
    artifacts = _artifacts(data.get("artifacts", {}), rules, geo, open_sectors, source)
    hand = _hand(data.get("hand", []), rules, source)
    core, sun_element = _core_and_sun(data.get("core"), data.get("sun_element"), rules, source)
    relics = _names(data.get("relics", []), f"{source}: relics", "relic", spec.relics)
    boss_rules = _names(data.get("boss_rules", []), f"{source}: boss_rules", "boss rule",
                        spec.boss_rules)
    rnd = _round(data.get("round", 1), rules, source)
    max_hp = _max_hp(data.get("max_hp"), source)
    label = data.get("label", "")
    if not isinstance(label, str):
        raise BoardError(f"{source}: label must be a string")
    return Board(runes=runes, artifacts=artifacts, hand=hand, core=core, sun_element=sun_element,
                 open_sectors=open_sectors, relics=relics, max_hp=max_hp,
                 boss_rules=boss_rules, round=rnd, label=label)


def _check_keys(data: Any, source: str) -> None:
    if not isinstance(data, dict):
        raise BoardError(f"{source}: a board is a JSON object with at least \"runes\"")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise BoardError(f"{source}: unknown key {unknown[0]!r} (board keys: {', '.join(sorted(_KEYS))})")
    if "runes" not in data:
        raise BoardError(f"{source}: missing \"runes\" (the only required key)")


def _open_sectors(sectors: Any, geo: Geometry, source: str) -> frozenset[int]:
    """The open sectors of the outermost ring: distinct sector numbers of the geometry."""
    n_sectors = len(geo.sector_cells)
    if not isinstance(sectors, list) or not all(_is_int(s) and 0 <= s < n_sectors for s in sectors):
        raise BoardError(f"{source}: open_sectors must be a list of sector numbers "
                         f"0..{n_sectors - 1}; got {sectors!r}")
    if len(set(sectors)) != len(sectors):
        raise BoardError(f"{source}: open_sectors lists a sector twice")
    return frozenset(sectors)


def _runes(raw_runes: Any, rules: Rules, geo: Geometry, open_sectors: frozenset[int],
           source: str) -> dict[int, tuple[str, int]]:
    if not isinstance(raw_runes, dict):
        raise BoardError(f"{source}: runes must be an object {{\"ring:index\": [kind, grade]}}")
    runes: dict[int, tuple[str, int]] = {}
    for name, value in raw_runes.items():
        where = f"{source}: runes[{name!r}]"
        cell = _cell(name, where, geo, open_sectors)
        if cell in runes:
            raise BoardError(f"{where}: cell given twice")
        runes[cell] = _rune(value, where, rules)
    return runes


def _artifacts(raw_art: Any, rules: Rules, geo: Geometry, open_sectors: frozenset[int],
               source: str) -> dict[int, str]:
    spec = rules.spec
    if not isinstance(raw_art, dict):
        raise BoardError(f"{source}: artifacts must be an object {{\"ring:index\": artifact}}")
    if len(raw_art) > spec.run.artifact_slots_max:
        raise BoardError(f"{source}: artifacts: at most {spec.run.artifact_slots_max} "
                         f"artifacts; got {len(raw_art)}")
    artifacts: dict[int, str] = {}
    for name, art in raw_art.items():
        where = f"{source}: artifacts[{name!r}]"
        cell = _cell(name, where, geo, open_sectors)
        if cell in artifacts:
            raise BoardError(f"{where}: cell given twice")
        if not _known(art, spec.artifacts):
            raise BoardError(f"{where}: unknown artifact {art!r} (one of {', '.join(spec.artifacts)})")
        artifacts[cell] = art
    return artifacts


def _hand(raw_hand: Any, rules: Rules, source: str) -> tuple[tuple[str, int], ...]:
    slots = rules.spec.run.hand_slots_max
    if not isinstance(raw_hand, list):
        raise BoardError(f"{source}: hand must be a list of [kind, grade]")
    if len(raw_hand) > slots:
        raise BoardError(f"{source}: hand: at most {slots} runes; got {len(raw_hand)}")
    return tuple(_rune(v, f"{source}: hand[{i}]", rules) for i, v in enumerate(raw_hand))


def _core_and_sun(core: Any, sun_element: Any, rules: Rules, source: str) -> tuple[Any, Any]:
    """The core, and the element it flows as: given exactly when the core flows (sun)."""
    spec = rules.spec
    if core is not None and not _known(core, spec.cores):
        raise BoardError(f"{source}: unknown core {core!r} (one of {', '.join(spec.cores)})")
    flows_from_core = core is not None and spec.cores[core].core_flow_strength > 0
    if sun_element is not None:
        if not flows_from_core:
            raise BoardError(f"{source}: sun_element is only for a core that flows (sun); "
                             f"core is {core!r}")
        if not _known(sun_element, rules.casting_kinds):
            raise BoardError(f"{source}: sun_element {sun_element!r} is not an element "
                             f"(one of {', '.join(sorted(rules.casting_kinds))})")
    elif flows_from_core:
        raise BoardError(f"{source}: core {core!r} needs a sun_element (the element it flows as)")
    return core, sun_element


def _round(rnd: Any, rules: Rules, source: str) -> int:
    top = max_round(rules)
    if not _is_int(rnd) or not 1 <= rnd <= top:
        bound = "run.round_cap, the last round of a run" if top == rules.spec.run.round_cap else \
            "the engine's int32 board records; run.round_cap is larger"
        raise BoardError(f"{source}: round must be a whole number in 1..{top} ({bound}); "
                         f"got {rnd!r}")
    return rnd


def _max_hp(max_hp: Any, source: str) -> float | None:
    if max_hp is None:
        return None
    if isinstance(max_hp, bool) or not isinstance(max_hp, (int, float)) \
            or not 0 < max_hp <= MAX_HP_BOUND:     # NaN fails the comparison
        shown = repr(max_hp) if len(repr(max_hp)) <= 40 else f"{repr(max_hp)[:20]}... " \
            f"({len(repr(max_hp))} characters)"
        raise BoardError(f"{source}: max_hp must be a number in (0, {MAX_HP_BOUND:.0e}] (an "
                         f"input bound: no run reaches such HP); got {shown}")
    return float(max_hp)
