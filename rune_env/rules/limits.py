"""The numbers of a rules file that decide whether a battle ends, checked (Rules.from_dict).

A battle's clock counts whole milliseconds (RULES D-6a: `Rules.ms` rounds half up). The engines'
loop goes from one turn to the next; a side's next turn is its interval later. An interval that
rounds to 0 ms would keep the clock at one instant forever (`battle.base_interval_s: 0.0001` did:
two one-rune boards battled until killed), and a battle of `duration_s: 1.0e+12` does not end in
anyone's lifetime. So, for every time in the file (every key ending in `_s`):

- a time that is not 0 is at least 1 ms once rounded (0.0004 s rounds to 0: refused); 0 stays
  allowed where the key allows it (it means "none": no curse, no storm delay, ...);
- no time is longer than the battle (`battle.duration_s`), whose own bound is
  `config.MAX_BATTLE_S`;
- the interval of the fastest side the rules allow, `battle.base_interval_s` times every
  interval multiplier below 1 a board can combine (the fastest core, and all the boss rules' and
  relics' that speed turns up, as a board may name each of them once), is at least 1 ms.

With intervals of at least 1 ms the clock moves on at every turn, so a battle has at most
duration_ms / 1 turns a side (the engines also take the interval as at least 1 ms, so rules that
bypass this check still end). A turn's own work is bounded too: the counts the engines repeat
within one turn (hits, extra casts, erosions; `REPEATED_COUNTS`) are at most `MAX_REPEATS` each
(`hits: 1.0e+12` would make one turn last for ever). Each problem is one RulesError naming the key.
"""
from __future__ import annotations

from typing import Any, Iterator

import annotated_types
from pydantic import BaseModel

MODIFIER_SECTIONS = ("cores", "boss_rules", "relics")
# Counts the engines loop over within one turn; the shipped rules use 0 to 2 of each. 1000 leaves
# designers room and keeps a turn's work to a few thousand steps.
MAX_REPEATS = 1000
REPEATED_COUNTS = ("hits", "extra_casts", "erosions", "per_cycle", "extra_erosions",
                   "unseals_by_grade")


def _zero_allowed(field) -> bool:
    return not any(isinstance(m, annotated_types.Gt) for m in field.metadata)


def _fields(node: Any, path: str) -> Iterator[tuple[str, str, Any, Any]]:
    """(key path, key, value, pydantic field) of every field of the spec under `node`, models,
    mappings (cores, boss rules, relics...) and lists (flows) included."""
    if isinstance(node, BaseModel):
        for name, field in type(node).model_fields.items():
            key = field.alias or name
            value = getattr(node, name)
            where = f"{path}.{key}" if path else key
            yield where, key, value, field
            yield from _fields(value, where)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _fields(value, f"{path}.{key}")
    elif isinstance(node, tuple):
        for i, value in enumerate(node):
            yield from _fields(value, f"{path}[{i}]")


def _times(node: Any, path: str) -> Iterator[tuple[str, float, bool]]:
    """(key path, seconds, whether 0 is allowed) of every time (`*_s` key) under `node`."""
    for where, key, value, field in _fields(node, path):
        if key.endswith("_s") and isinstance(value, float):
            yield where, value, _zero_allowed(field)


def _counts(node: Any, path: str) -> Iterator[tuple[str, int]]:
    """(key path, value) of every REPEATED_COUNTS entry under `node` (a tuple's items each)."""
    for where, key, value, _ in _fields(node, path):
        if key in REPEATED_COUNTS and isinstance(value, int):
            yield where, value
        elif key in REPEATED_COUNTS and isinstance(value, tuple):
            yield from ((f"{where}[{i}]", v) for i, v in enumerate(value))


def fastest_interval(spec) -> tuple[float, list[str]]:
    """(seconds, the multipliers' keys) of the shortest interval a side can have: the base
    interval times the smallest core multiplier and every boss rule's and relic's below 1, in
    the order the engines multiply them (core, boss rules, relics)."""
    seconds, keys = spec.battle.base_interval_s, []
    x = 1.0
    core = min(spec.cores.items(), key=lambda kv: kv[1].interval_x, default=None)
    if core is not None and core[1].interval_x < 1.0:
        x *= core[1].interval_x
        keys.append(f"cores.{core[0]}.interval_x")
    for section in MODIFIER_SECTIONS[1:]:
        for name, mod in getattr(spec, section).items():
            if mod.interval_x < 1.0:
                x *= mod.interval_x
                keys.append(f"{section}.{name}.interval_x")
    return seconds * x, keys


def check_battle_limits(spec, ms, error: type[Exception]) -> None:
    """Raise `error` (RulesError) naming the first number of `spec` that could stall a battle:
    a time (`check_durations`), a count repeated within a turn above MAX_REPEATS, or counts and
    times that are each within their bounds but together make too long a battle
    (`check_battle_work`)."""
    check_durations(spec, ms, error)
    for where, value in _counts(spec, ""):
        if value > MAX_REPEATS:
            raise error(f"{where}: {value} is more than {MAX_REPEATS} (repeated within one turn; "
                        f"the engines' work per turn is bounded)")
    check_battle_work(spec, ms, error)


# A side's casts in one battle at most: turns a side (the battle over the fastest interval) x
# hits a cast x casts a turn (1 + extra casts). Each count alone is bounded, but they multiply:
# 600 s, a turn every 1 ms, 1000 hits and 1000 extra casts passed every check and played one
# battle for about 27 minutes (red team, forty-ninth session). The bound is the worst file the
# other checks accepted at the shipped rules' counts (600,000 turns x 2 hits x 2 casts), which
# plays in under a second on the fast engine (docs/ENVS.md); the defaults use 784.
MAX_BATTLE_WORK = 2_400_000


def _most(spec, key: str) -> tuple[int, str]:
    """The largest value of a REPEATED_COUNTS key in the spec (a by-grade tuple's largest
    item), and where (0, '' if none)."""
    found = [(max(v, default=0) if isinstance(v, tuple) else v, where)
             for where, k, v, _ in _fields(spec, "") if k == key and isinstance(v, (int, tuple))]
    return max(found, default=(0, ""))


def check_battle_work(spec, ms, error: type[Exception]) -> None:
    """Raise `error` when a side could cast more than MAX_BATTLE_WORK hits in one battle."""
    seconds, _ = fastest_interval(spec)
    turns = ms(spec.battle.duration_s) // max(1, ms(seconds))
    hits, hits_at = _most(spec, "hits")
    extra, extra_at = _most(spec, "extra_casts")
    work = turns * max(1, hits) * (1 + extra)
    if work > MAX_BATTLE_WORK:
        raise error(f"battle.duration_s: {spec.battle.duration_s:g} s at the fastest turn "
                    f"({ms(seconds)} ms: {turns:,} turns a side) x {hits} hits ({hits_at}) x "
                    f"{1 + extra} casts a turn ({extra_at or 'no extra casts'}) is {work:,} hits "
                    f"a battle; at most {MAX_BATTLE_WORK:,}: shorten the battle, slow the turns "
                    f"or lower the counts")


def check_durations(spec, ms, error: type[Exception]) -> None:
    """Raise `error` naming the first time of `spec` that could stall a battle; `ms` is
    Rules.ms."""
    length = spec.battle.duration_s
    for where, seconds, zero_ok in _times(spec, ""):
        if seconds == 0.0 and zero_ok:
            continue
        if ms(seconds) < 1:
            raise error(f"{where}: {seconds:g} s rounds to 0 ms (battle times are whole "
                        f"milliseconds): use at least 0.001 s" + (", or 0 for none" if zero_ok else ""))
        if where != "battle.duration_s" and seconds > length:
            raise error(f"{where}: {seconds:g} s is longer than the battle (battle.duration_s: "
                        f"{length:g} s)")
    seconds, keys = fastest_interval(spec)
    if ms(seconds) < 1:
        raise error(f"battle.base_interval_s: {spec.battle.base_interval_s:g} s times the interval "
                    f"multipliers one board can combine ({', '.join(keys)}) is {seconds * 1000:.3g} "
                    f"ms, which rounds to 0 ms: a side's turns must be at least 1 ms apart")
