"""Random legal boards, for invariant tests, golden traces, parity checks and benchmarks.

`random_board(rng, round)` draws a board a player could plausibly field in that round: more and
higher-grade runes as rounds go on, a random core (and sun element), some open sectors,
artifacts, relics after the first boss, and now and then boss rules and a hand of reserves.
Every draw comes from the `numpy.random.Generator` passed in, so a seed gives the same boards.
`standard_pairs(n, seed)` is the benchmark's standard set: n pairs, rounds 1..12 evenly.
"""
from __future__ import annotations

import numpy as np

from .board import Board
from .config import CASTING_KINDS, KINDS, Rules, default_rules
from .geometry import geometry


def random_board(rng: np.random.Generator, round: int = 1, rules: Rules | None = None,
                 supports: bool = True) -> Board:
    rules = rules or default_rules()
    spec = rules.spec
    geo = geometry(rules.radius)
    kinds = KINDS if supports else CASTING_KINDS
    n_open = int(rng.integers(0, min(6, round // 2) + 1))
    open_sectors = frozenset(int(s) for s in rng.choice(6, size=n_open, replace=False))
    cells = [c for c in range(geo.n_cells)
             if geo.sector[c] < 0 or geo.sector[c] in open_sectors]
    n_runes = int(min(len(cells), max(1, rng.integers(1, 4 + round))))
    # inner cells are likelier: players fill ring 1 and 2 first
    weights = np.array([1.0 / geo.ring[c] for c in cells])
    chosen = rng.choice(len(cells), size=n_runes, replace=False, p=weights / weights.sum())
    top = min(rules.max_grade, 1 + round // 4)
    runes = {}
    for i in chosen:
        kind = kinds[int(rng.integers(len(kinds)))]
        runes[cells[int(i)]] = (kind, int(rng.integers(1, top + 1)))
    cores = list(spec.cores)
    core = cores[int(rng.integers(len(cores)))] if rng.random() < 0.9 else None
    sun_element = None
    if core is not None and spec.cores[core].core_flow_strength > 0:
        sun_element = CASTING_KINDS[int(rng.integers(len(CASTING_KINDS)))]
    artifacts = {}
    n_art = int(rng.integers(0, spec.run.artifact_slots + 1))
    names = list(spec.artifacts)
    for i in rng.choice(len(cells), size=n_art, replace=False):
        artifacts[cells[int(i)]] = names[int(rng.integers(len(names)))]
    relics: tuple[str, ...] = ()
    if round > spec.run.boss_every or rng.random() < 0.15:
        relic_names = list(spec.relics)
        k = int(rng.integers(0, 3))
        relics = tuple(relic_names[int(i)] for i in rng.choice(len(relic_names), size=k, replace=False))
    boss_rules: tuple[str, ...] = ()
    if round % spec.run.boss_every == 0 or rng.random() < 0.1:
        boss_names = list(spec.boss_rules)
        k = int(rng.integers(1, 3))
        boss_rules = tuple(boss_names[int(i)] for i in rng.choice(len(boss_names), size=k, replace=False))
    hand = tuple((kinds[int(rng.integers(len(kinds)))], int(rng.integers(1, top + 1)))
                 for _ in range(int(rng.integers(0, 3))))
    return Board(runes=runes, artifacts=artifacts, hand=hand, core=core, sun_element=sun_element,
                 open_sectors=open_sectors, relics=relics, boss_rules=boss_rules, round=round)


def standard_pairs(n: int = 1000, seed: int = 0, rules: Rules | None = None
                   ) -> list[tuple[Board, Board]]:
    """The benchmark's standard set: n seeded pairs, rounds 1..12 evenly."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        rnd = 1 + i % 12
        pairs.append((random_board(rng, rnd, rules), random_board(rng, rnd, rules)))
    return pairs
