"""Hex geometry of the circle: cells, adjacency, rings, sectors, rotation, resonance patterns.

Flat-topped hexes in axial coordinates (q, r). The core is (0, 0). Ring k holds the 6k cells at
hex distance k. Cell (ring k, index i): index 0 is (0, -k), straight above the core, and the
ring is walked clockwise: k steps SE, k S, k SW, k NW, k N, k NE.

Directions (axial):  N (0,-1)  NE (+1,-1)  SE (+1,0)  S (0,+1)  SW (-1,+1)  NW (-1,0)

Rings 1 and 2 with their indices ("k:i"); ring 3 continues the same way around them:

                      2:0
               2:11         2:1
        2:10          1:0          2:2
               1:5          1:1
        2:9          core          2:3
               1:4          1:2
        2:8           1:3          2:4
               2:7          2:5
                      2:6

Every cell also has a linear id: ring 1 is ids 0..5, ring 2 is 6..17, ring 3 is 18..35. Linear
order IS casting order (ring by ring, clockwise from the top), so "earliest in casting order"
means "lowest id". The core is not a cell and has no id.

Sector s of the outermost ring k = indices k*s .. k*s + k - 1 (radius 3: {3s, 3s+1, 3s+2}).
Rotation by 60 degrees maps (k, i) to (k, (i + k) mod 6k).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

DIRECTIONS = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))  # N NE SE S SW NW
# The clockwise walk from the top cell of a ring: k steps in each of these, in order.
_WALK = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))  # SE S SW NW N NE

_CELL_NAME = re.compile(r"^(\d+):(\d+)$")


@dataclass(frozen=True)
class Geometry:
    """All tables of a circle of the given radius, built once (see `geometry(radius)`)."""

    radius: int
    n_cells: int
    ring: tuple[int, ...]              # cell id -> ring (1..radius)
    index: tuple[int, ...]             # cell id -> index in its ring
    coords: tuple[tuple[int, int], ...]  # cell id -> axial (q, r)
    neighbors: tuple[tuple[int, ...], ...]  # the up-to-6 hex neighbours (cells only, not the core)
    inward: tuple[tuple[int, ...], ...]     # neighbours in ring k-1 (empty for ring 1: the core)
    outward: tuple[tuple[int, ...], ...]    # neighbours in ring k+1
    ring_cells: tuple[tuple[int, ...], ...]  # ring k -> its cell ids (ring_cells[0] is empty)
    sector: tuple[int, ...]            # cell id -> sector of the outermost ring, else -1
    sector_cells: tuple[tuple[int, ...], ...]
    rotate: tuple[int, ...]            # cell id -> cell after a 60-degree clockwise rotation
    # Resonance patterns: fold -> tuple of (ring, cells) orbits. Fold 2: {i, i+3k}; fold 3:
    # {i, i+2k, i+4k}; fold 6: the whole ring.
    patterns: dict

    def cell_id(self, ring: int, index: int) -> int:
        if not 1 <= ring <= self.radius or not 0 <= index < 6 * ring:
            raise ValueError(f"no cell {ring}:{index} (rings 1..{self.radius}, ring k has 6k cells)")
        return 3 * ring * (ring - 1) + index

    def name(self, cell: int) -> str:
        return f"{self.ring[cell]}:{self.index[cell]}"

    def parse(self, name: str) -> int:
        """'ring:index' -> cell id; raises ValueError naming the problem."""
        if not isinstance(name, str):
            raise ValueError(f"bad cell name {name!r}: expected 'ring:index', e.g. '1:0'")
        m = _CELL_NAME.match(name.strip())
        if not m:
            if name.strip() in ("0:0", "core"):
                raise ValueError(f"cell {name!r} is the core: it holds no rune or artifact")
            raise ValueError(f"bad cell name {name!r}: expected 'ring:index', e.g. '1:0'")
        ring, index = int(m.group(1)), int(m.group(2))
        if ring == 0:
            raise ValueError(f"cell {name!r} is the core: it holds no rune or artifact")
        return self.cell_id(ring, index)

    def reach(self, cell: int) -> tuple[int, ...]:
        """A cell and its neighbours: what an artifact on `cell` reaches."""
        return (cell,) + self.neighbors[cell]


@lru_cache(maxsize=None)
def geometry(radius: int = 3) -> Geometry:
    coords: list[tuple[int, int]] = []
    ring: list[int] = []
    index: list[int] = []
    for k in range(1, radius + 1):
        q, r = 0, -k
        i = 0
        for dq, dr in _WALK:
            for _ in range(k):
                coords.append((q, r))
                ring.append(k)
                index.append(i)
                i += 1
                q, r = q + dq, r + dr
        assert (q, r) == (0, -k)
    by_coord = {c: n for n, c in enumerate(coords)}
    neighbors, inward, outward = [], [], []
    for n, (q, r) in enumerate(coords):
        nb = tuple(sorted(by_coord[(q + dq, r + dr)] for dq, dr in DIRECTIONS
                          if (q + dq, r + dr) in by_coord))
        neighbors.append(nb)
        inward.append(tuple(m for m in nb if ring[m] == ring[n] - 1))
        outward.append(tuple(m for m in nb if ring[m] == ring[n] + 1))
    ring_cells = [()] + [tuple(n for n in range(len(coords)) if ring[n] == k)
                         for k in range(1, radius + 1)]
    outer = ring_cells[radius]
    sector = [-1] * len(coords)
    for n in outer:
        sector[n] = index[n] // radius
    sector_cells = tuple(tuple(n for n in outer if sector[n] == s) for s in range(6))
    rotate = []
    for n in range(len(coords)):
        k, i = ring[n], index[n]
        rotate.append(3 * k * (k - 1) + (i + k) % (6 * k))
    patterns: dict[int, list] = {2: [], 3: [], 6: []}
    for k in range(1, radius + 1):
        cells = ring_cells[k]
        size = 6 * k
        for i in range(size // 2):
            patterns[2].append((k, (cells[i], cells[i + size // 2])))
        for i in range(size // 3):
            patterns[3].append((k, (cells[i], cells[i + size // 3], cells[i + 2 * size // 3])))
        patterns[6].append((k, tuple(cells)))
    return Geometry(
        radius=radius, n_cells=len(coords), ring=tuple(ring), index=tuple(index),
        coords=tuple(coords), neighbors=tuple(neighbors), inward=tuple(inward),
        outward=tuple(outward), ring_cells=tuple(ring_cells), sector=tuple(sector),
        sector_cells=sector_cells, rotate=tuple(rotate),
        patterns={f: tuple(v) for f, v in patterns.items()},
    )
