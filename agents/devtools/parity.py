"""Comparing the fast engine with the reference: board pairs to play and a field-by-field check.

Used by `tests/battle/test_fast_parity.py` and `scripts/parity_check.py`.

* `parity_pairs(n, seed, rules)`: n seeded pairs, a fifth each: two boards of the game's own
  sampler (`random_board`, rounds 1..12); two `stress_board`s, which pack rings 1-2 (and some of
  ring 3) with runes of every kind, full hands, many relics and boss rules, up to four artifacts
  and sometimes a small max HP, so that the rarer interactions (mimic copies of a light or a
  thundercloud, node links, delays, warding-seal unseals, tree reserves, storms against the
  budget, reflection, drizzle...) happen often; a `small_board` against a sampled board; two
  small boards. Small boards (1-5 runes, many ices, reserves in hand) are where the balance
  rules act: rest turns (D-50), the seal cap floor (D-51) and the freeze limit (D-52), which the
  other samplers rarely reach. An `amplify_board` (towers of amplifies, nodes and resonators
  around one to three casting runes, springs and the focusing mirror) against a sampled board or
  another: where the amplify cap (D-54) acts.
* `coverage_boards(rules)`: boards that together field every core (and every sun element),
  boss rule, relic, artifact and rune kind, whatever the samplers drew.
* `compare(out, j, ref)`: the fields of row j of `fast_battles` output that differ from the
  reference `BattleResult`: winner, time, casts, turns, seals, rests and the reason exactly, HP
  and max HP within `HP_REL` (relative).
"""
from __future__ import annotations

import math

import numpy as np

from rune_env.rules.board import Board
from rune_env.rules.config import CASTING_KINDS, KINDS, Rules
from rune_env.rules.geometry import geometry
from rune_env.rules.sampling import random_board

HP_REL = 1e-9


def stress_board(rng: np.random.Generator, rules: Rules) -> Board:
    """A crowded legal board: many runes of all kinds, modifiers, artifacts, a full hand."""
    spec = rules.spec
    geo = geometry(rules.radius)
    n_open = int(rng.integers(0, 7))
    open_sectors = frozenset(int(s) for s in rng.choice(6, size=n_open, replace=False))
    cells = [c for c in range(geo.n_cells) if geo.sector[c] < 0 or geo.sector[c] in open_sectors]
    n_runes = int(rng.integers(1, min(len(cells), 24) + 1))
    weights = np.array([1.0 / geo.ring[c] ** 2 for c in cells])
    chosen = rng.choice(len(cells), size=n_runes, replace=False, p=weights / weights.sum())
    # supports are likelier than in the game's sampler: their interactions are the rare ones
    kinds = list(KINDS)
    kw = np.array([1.0 if k in CASTING_KINDS else 1.6 for k in kinds])
    kw /= kw.sum()
    runes = {}
    for i in chosen:
        runes[cells[int(i)]] = (kinds[int(rng.choice(len(kinds), p=kw))],
                                int(rng.integers(1, rules.max_grade + 1)))
    cores = list(spec.cores)
    core = cores[int(rng.integers(len(cores)))] if rng.random() < 0.9 else None
    sun_element = None
    if core is not None and spec.cores[core].core_flow_strength > 0:
        sun_element = CASTING_KINDS[int(rng.integers(len(CASTING_KINDS)))]
    names = list(spec.artifacts)
    n_art = int(rng.integers(0, spec.run.artifact_slots_max + 1))
    artifacts = {cells[int(i)]: names[int(rng.integers(len(names)))]
                 for i in rng.choice(len(cells), size=min(n_art, len(cells)), replace=False)}
    relic_names = list(spec.relics)
    relics = tuple(relic_names[int(i)] for i in rng.choice(
        len(relic_names), size=int(rng.integers(0, min(5, len(relic_names)) + 1)), replace=False))
    boss_names = list(spec.boss_rules)
    bosses = tuple(boss_names[int(i)] for i in rng.choice(
        len(boss_names), size=int(rng.integers(0, min(3, len(boss_names)) + 1)), replace=False))
    hand = tuple((kinds[int(rng.integers(len(kinds)))], int(rng.integers(1, rules.max_grade + 1)))
                 for _ in range(int(rng.integers(0, spec.run.hand_slots_max + 1))))
    rnd = int(rng.integers(1, 13))
    max_hp = float(rng.choice([30.0, 60.0, 150.0, 400.0])) if rng.random() < 0.25 else None
    return Board(runes=runes, artifacts=artifacts, hand=hand, core=core, sun_element=sun_element,
                 open_sectors=open_sectors, relics=relics, boss_rules=bosses, round=rnd,
                 max_hp=max_hp)


def small_board(rng: np.random.Generator, rules: Rules) -> Board:
    """A board of 1-5 runes in rings 1-2: ice in about half of them, sometimes a mimic outward of
    an ice (its copies freeze too), often reserves of the board's kinds in hand, the moon and
    tree cores likelier, now and then an artifact, a relic or a boss rule."""
    spec = rules.spec
    geo = geometry(rules.radius)
    inner = [c for c in range(geo.n_cells) if geo.ring[c] <= min(2, geo.radius)]
    n = int(rng.integers(1, 6))
    cells = [inner[int(i)] for i in rng.choice(len(inner), size=min(n, len(inner)), replace=False)]
    casting = list(CASTING_KINDS)
    runes = {}
    for c in cells:
        kind = "ice" if rng.random() < 0.5 else casting[int(rng.integers(len(casting)))]
        runes[c] = (kind, int(rng.integers(1, min(2, rules.max_grade) + 1)))
    if rng.random() < 0.25:
        ices = [c for c, (k, _) in runes.items() if k == "ice"]
        outward = [o for c in ices for o in geo.outward[c] if o not in runes and o in inner]
        if outward:
            runes[outward[int(rng.integers(len(outward)))]] = ("mimic", 1)
    hand = ()
    if rng.random() < 0.6:
        kinds = [k for k, _ in runes.values()]
        hand = tuple((kinds[int(rng.integers(len(kinds)))], int(rng.integers(1, 3)))
                     for _ in range(int(rng.integers(1, 4))))
    cores = list(spec.cores)
    weights = np.array([3.0 if c in ("moon", "tree") else 1.0 for c in cores])
    core = cores[int(rng.choice(len(cores), p=weights / weights.sum()))]
    sun_element = (casting[int(rng.integers(len(casting)))]
                   if spec.cores[core].core_flow_strength > 0 else None)
    artifacts = {}
    if rng.random() < 0.3:
        names = list(spec.artifacts)
        artifacts[cells[0]] = names[int(rng.integers(len(names)))]
    relics = ()
    if rng.random() < 0.3:
        names = list(spec.relics)
        relics = (names[int(rng.integers(len(names)))],)
    bosses = ()
    if rng.random() < 0.15:
        names = list(spec.boss_rules)
        bosses = (names[int(rng.integers(len(names)))],)
    return Board(runes=runes, artifacts=artifacts, hand=hand, core=core, sun_element=sun_element,
                 relics=relics, boss_rules=bosses, round=int(rng.integers(1, 13)))


def amplify_board(rng: np.random.Generator, rules: Rules) -> Board:
    """An amplify tower: one to three casting runes (rings 2-3), their inward cells and most of
    their neighbours filled with amplifies, nodes and resonators (an amplify reaches a rune
    inward or through a node), often a mana spring on a casting rune, sometimes a focusing
    mirror, a mimic or a delay: where the amplify cap (D-54) acts, in every round."""
    spec = rules.spec
    geo = geometry(rules.radius)
    open_sectors = frozenset(int(s) for s in rng.choice(6, size=int(rng.integers(0, 4)),
                                                        replace=False))
    usable = [c for c in range(geo.n_cells) if geo.sector[c] < 0 or geo.sector[c] in open_sectors]
    outer = [c for c in usable if geo.ring[c] >= 2]
    casting = list(CASTING_KINDS)
    runes: dict[int, tuple[str, int]] = {}
    centres = [outer[int(i)] for i in rng.choice(len(outer), size=int(rng.integers(1, 4)),
                                                  replace=False)]
    for c in centres:
        runes[c] = (casting[int(rng.integers(len(casting)))], int(rng.integers(1, 3)))
    supports = ("amplify", "amplify", "amplify", "node", "node", "resonator")
    for c in centres:
        for inner in geo.inward[c]:
            if inner not in runes and rng.random() < 0.9:
                runes[inner] = ("amplify", int(rng.integers(1, rules.max_grade + 1)))
        for m in geo.neighbors[c]:
            if m in runes or m not in usable or rng.random() < 0.25:
                continue
            runes[m] = (supports[int(rng.integers(len(supports)))], int(rng.integers(1, 3)))
            if runes[m][0] == "node":
                # amplifies around the node reach c through it
                for a in geo.neighbors[m]:
                    if a not in runes and a in usable and rng.random() < 0.6:
                        runes[a] = ("amplify", int(rng.integers(1, rules.max_grade + 1)))
    extra = [c for c in usable if c not in runes]
    if extra and rng.random() < 0.3:
        for c in centres:
            out = [o for o in geo.outward[c] if o in extra]
            if out:
                runes[out[0]] = ("mimic", int(rng.integers(1, rules.max_grade + 1)))
                break
    if rng.random() < 0.2:
        free = [i for c in centres for i in geo.inward[c] if runes.get(i, ("",))[0] == "amplify"]
        if free:
            runes[free[0]] = ("delay", 1)
    springs = [a for a, art in spec.artifacts.items() if art.grade_bonus > 0]
    artifacts = {centres[0]: springs[0]} if springs and rng.random() < 0.6 else {}
    mirrors = [r for r, m in spec.relics.items() if m.amplify_increase_x != 1.0]
    relics = (mirrors[0],) if mirrors and rng.random() < 0.3 else ()
    cores = list(spec.cores)
    core = cores[int(rng.integers(len(cores)))]
    sun_element = (casting[int(rng.integers(len(casting)))]
                   if spec.cores[core].core_flow_strength > 0 else None)
    return Board(runes=runes, artifacts=artifacts, core=core, sun_element=sun_element,
                 open_sectors=open_sectors, relics=relics,
                 round=int(rng.integers(1, spec.run.round_cap + 1)))


def coverage_boards(rules: Rules) -> list[Board]:
    """Boards that together field every core (the sun with every element), boss rule, relic,
    artifact and rune kind (one board per name, crowded rings 1-2)."""
    spec = rules.spec
    geo = geometry(rules.radius)
    inner = [c for c in range(geo.n_cells) if geo.ring[c] < geo.radius]
    out = []
    rng = np.random.default_rng(12345)

    def base(**kw):
        cells = rng.choice(len(inner), size=min(14, len(inner)), replace=False)
        kinds = list(KINDS)
        runes = {inner[int(c)]: (kinds[int(rng.integers(len(kinds)))],
                                 int(rng.integers(1, rules.max_grade + 1))) for c in cells}
        hand = tuple((kinds[int(rng.integers(len(kinds)))], 1) for _ in range(3))
        return Board(runes=runes, hand=hand, round=6, **kw)

    for core, mod in spec.cores.items():
        if mod.core_flow_strength > 0:
            for el in CASTING_KINDS:
                out.append(base(core=core, sun_element=el))
        else:
            out.append(base(core=core))
    for b in spec.boss_rules:
        out.append(base(boss_rules=(b,)))
    for r in spec.relics:
        out.append(base(relics=(r,)))
    for a in spec.artifacts:
        out.append(base(artifacts={inner[0]: a, inner[7]: a}))
    for k in KINDS:
        runes = {c: (k, 1 + c % rules.max_grade) for c in inner[:8]}
        runes.update({c: (CASTING_KINDS[c % len(CASTING_KINDS)], 1) for c in inner[8:16]})
        out.append(Board(runes=runes, hand=((k, 2),), round=4))
    return out


def parity_pairs(n: int, seed: int, rules: Rules) -> list[tuple[Board, Board]]:
    """n seeded pairs, in turn: two random_boards (rounds 1..12), two stress_boards, a
    small_board against a random_board (either seat), two small_boards, an amplify_board against
    a random_board (either seat) or another amplify_board."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        rnd = 1 + i % 12
        mix = i % 5
        if mix == 4:
            tower, other = amplify_board(rng, rules), (
                amplify_board(rng, rules) if i % 3 == 0 else random_board(rng, rnd, rules))
            pairs.append((tower, other) if i % 2 == 0 else (other, tower))
            continue
        if mix == 0:
            pairs.append((random_board(rng, rnd, rules), random_board(rng, rnd, rules)))
        elif mix == 1:
            pairs.append((stress_board(rng, rules), stress_board(rng, rules)))
        elif mix == 2:
            small, other = small_board(rng, rules), random_board(rng, rnd, rules)
            pairs.append((small, other) if i % 8 == 2 else (other, small))
        else:
            pairs.append((small_board(rng, rules), small_board(rng, rules)))
    return pairs


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= HP_REL * max(abs(a), abs(b))


def compare(out: dict, j: int, ref) -> list[str]:
    """The fields of row j of `fast_battles` output that differ from the reference result."""
    bad = []
    w = int(out["winner"][j])
    if (None if w < 0 else w) != ref.winner:
        bad.append(f"winner: fast {w}, reference {ref.winner}")
    if float(out["time"][j]) != ref.time:
        bad.append(f"time: fast {out['time'][j]!r}, reference {ref.time!r}")
    if bool(out["knockout"][j]) != (ref.reason == "knockout"):
        bad.append(f"reason: fast knockout={bool(out['knockout'][j])}, reference {ref.reason}")
    for key in ("casts", "turns", "seals", "rests"):
        fast = (int(out[key][j, 0]), int(out[key][j, 1]))
        if fast != tuple(getattr(ref, key)):
            bad.append(f"{key}: fast {fast}, reference {tuple(getattr(ref, key))}")
    for key in ("hp", "max_hp"):
        fast = (float(out[key][j, 0]), float(out[key][j, 1]))
        refv = tuple(getattr(ref, key))
        if not all(_close(a, b) and not math.isnan(a) for a, b in zip(fast, refv)):
            bad.append(f"{key}: fast {fast!r}, reference {refv!r}")
    return bad


def hp_bits_equal(out: dict, j: int, ref) -> bool:
    """True if both HP values are equal to the last bit."""
    return float(out["hp"][j, 0]) == ref.hp[0] and float(out["hp"][j, 1]) == ref.hp[1]
