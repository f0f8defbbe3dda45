"""Hex geometry of the circle (RULES section 2, D-3 .. D-5) and the resonance patterns' cells.

Every expected coordinate below is worked out by hand from D-3: flat-topped hexes, axial (q, r),
N = (0,-1), NE = (+1,-1), SE = (+1,0), S = (0,+1), SW = (-1,+1), NW = (-1,0); cell (k, i): index 0
is (0,-k), then the ring is walked clockwise, k steps each SE, S, SW, NW, N, NE.
"""
import pytest

from conftest import board

from rune_env.battle.explain import explain
from rune_env.rules import Board, BoardError, geometry

GEO = geometry(3)


def cid(name: str) -> int:
    return GEO.parse(name)


def names(cells) -> set[str]:
    return {GEO.name(c) for c in cells}


# Ring 1: start (0,-1); 1 step SE (1,-1); S (1,0); SW (0,1); NW (-1,1); N (-1,0); (NE back to start).
RING1 = {"1:0": (0, -1), "1:1": (1, -1), "1:2": (1, 0), "1:3": (0, 1), "1:4": (-1, 1), "1:5": (-1, 0)}
# Ring 2: start (0,-2); SE,SE: (1,-2) (2,-2); S,S: (2,-1) (2,0); SW,SW: (1,1) (0,2);
# NW,NW: (-1,2) (-2,2); N,N: (-2,1) (-2,0); NE: (-1,-1) (then back to (0,-2)).
RING2 = {"2:0": (0, -2), "2:1": (1, -2), "2:2": (2, -2), "2:3": (2, -1), "2:4": (2, 0),
         "2:5": (1, 1), "2:6": (0, 2), "2:7": (-1, 2), "2:8": (-2, 2), "2:9": (-2, 1),
         "2:10": (-2, 0), "2:11": (-1, -1)}
# Ring 3: start (0,-3); SE x3: (1,-3) (2,-3) (3,-3); S x3: (3,-2) (3,-1) (3,0); SW x3: (2,1) (1,2)
# (0,3); NW x3: (-1,3) (-2,3) (-3,3); N x3: (-3,2) (-3,1) (-3,0); NE x2: (-2,-1) (-1,-2).
RING3 = {"3:0": (0, -3), "3:1": (1, -3), "3:2": (2, -3), "3:3": (3, -3), "3:4": (3, -2),
         "3:5": (3, -1), "3:6": (3, 0), "3:7": (2, 1), "3:8": (1, 2), "3:9": (0, 3),
         "3:10": (-1, 3), "3:11": (-2, 3), "3:12": (-3, 3), "3:13": (-3, 2), "3:14": (-3, 1),
         "3:15": (-3, 0), "3:16": (-2, -1), "3:17": (-1, -2)}


def test_cell_ids_and_axial_coords():
    """Ring k has 6k cells, ids ring by ring (1: 0..5, 2: 6..17, 3: 18..35); every cell's axial
    coordinate follows the clockwise walk from the top.

    Covers: D-3"""
    assert GEO.n_cells == 6 + 12 + 18
    assert cid("1:0") == 0 and cid("1:5") == 5
    assert cid("2:0") == 6 and cid("2:11") == 17
    assert cid("3:0") == 18 and cid("3:17") == 35
    for table in (RING1, RING2, RING3):
        for name, qr in table.items():
            assert GEO.coords[cid(name)] == qr, name
    # every cell at hex distance k from the core (0, 0): max(|q|, |r|, |q + r|) = k
    for c in range(GEO.n_cells):
        q, r = GEO.coords[c]
        assert max(abs(q), abs(r), abs(q + r)) == GEO.ring[c]


def test_neighbours_inward_outward_of_ring1_top():
    """1:0 = (0,-1). Its neighbours: N (0,-2) = 2:0, NE (1,-2) = 2:1, SE (1,-1) = 1:1, S (0,0) =
    the core (not a cell), SW (-1,0) = 1:5, NW (-1,-1) = 2:11. Inward: none (only the core);
    outward: 2:0, 2:1, 2:11.

    Covers: D-3"""
    c = cid("1:0")
    assert names(GEO.neighbors[c]) == {"1:1", "1:5", "2:0", "2:1", "2:11"}
    assert GEO.inward[c] == ()
    assert names(GEO.outward[c]) == {"2:0", "2:1", "2:11"}
    # every ring-1 cell has no inward cell (the core is inward-adjacent to all of ring 1)
    for c in GEO.ring_cells[1]:
        assert GEO.inward[c] == ()
        assert len(GEO.outward[c]) == 3


def test_neighbours_of_ring2_and_ring3_cells():
    """2:1 = (1,-2): N (1,-3) = 3:1, NE (2,-3) = 3:2, SE (2,-2) = 2:2, S (1,-1) = 1:1,
    SW (0,-1) = 1:0, NW (0,-2) = 2:0; inward 1:0, 1:1; outward 3:1, 3:2.
    2:0 = (0,-2), a corner: N (0,-3) = 3:0, NE (1,-3) = 3:1, SE (1,-2) = 2:1, S (0,-1) = 1:0,
    SW (-1,-1) = 2:11, NW (-1,-2) = 3:17; inward 1:0; outward 3:0, 3:1, 3:17.
    3:0 = (0,-3): N (0,-4), NE (1,-4), NW (-1,-3) are off the board (distance 4); SE (1,-3) = 3:1,
    S (0,-2) = 2:0, SW (-1,-2) = 3:17; inward 2:0; outward none.
    3:1 = (1,-3): SE (2,-3) = 3:2, S (1,-2) = 2:1, SW (0,-2) = 2:0, NW (0,-3) = 3:0.

    Covers: D-3"""
    c = cid("2:1")
    assert names(GEO.neighbors[c]) == {"3:1", "3:2", "2:2", "1:1", "1:0", "2:0"}
    assert names(GEO.inward[c]) == {"1:0", "1:1"}
    assert names(GEO.outward[c]) == {"3:1", "3:2"}
    c = cid("2:0")
    assert names(GEO.neighbors[c]) == {"3:0", "3:1", "2:1", "1:0", "2:11", "3:17"}
    assert names(GEO.inward[c]) == {"1:0"}
    assert names(GEO.outward[c]) == {"3:0", "3:1", "3:17"}
    c = cid("3:0")
    assert names(GEO.neighbors[c]) == {"3:1", "2:0", "3:17"}
    assert names(GEO.inward[c]) == {"2:0"}
    assert GEO.outward[c] == ()
    c = cid("3:1")
    assert names(GEO.neighbors[c]) == {"3:2", "2:1", "2:0", "3:0"}
    assert names(GEO.inward[c]) == {"2:0", "2:1"}
    # 2:3 = (2,-1): N (2,-2) = 2:2, NE (3,-2) = 3:4, SE (3,-1) = 3:5, S (2,0) = 2:4,
    # SW (1,0) = 1:2, NW (1,-1) = 1:1
    c = cid("2:3")
    assert names(GEO.neighbors[c]) == {"2:2", "3:4", "3:5", "2:4", "1:2", "1:1"}
    assert names(GEO.inward[c]) == {"1:1", "1:2"}
    # adjacency is symmetric, and inward/outward are the two halves of it between rings
    for a in range(GEO.n_cells):
        for b in GEO.neighbors[a]:
            assert a in GEO.neighbors[b]
            if GEO.ring[b] == GEO.ring[a] + 1:
                assert b in GEO.outward[a] and a in GEO.inward[b]


def test_adjacency_drives_attunement_in_battle(rules):
    """Attunement follows inward adjacency: fire 1:0 is inward of 2:1 (x1.25) but not of 2:2.
    2:1: 6 x 1.25 (ring 2) x 1.25 (attunement) = 9.375; 2:2: 6 x 1.25 = 7.5.

    Covers: D-3"""
    rep = explain(board({"1:0": ("fire", 1), "2:1": ("fire", 1), "2:2": ("fire", 1)}), rules)
    assert rep["cells"]["2:1"]["power"] == pytest.approx(9.375, rel=1e-12)
    assert rep["cells"]["2:2"]["power"] == pytest.approx(7.5, rel=1e-12)


def test_core_is_not_a_cell(rules):
    """The core holds no rune: "0:0" is refused.

    Covers: D-3"""
    with pytest.raises(BoardError, match="core"):
        Board.from_json({"runes": {"0:0": ["fire", 1]}}, rules)
    with pytest.raises(BoardError):
        Board.from_json({"runes": {"1:6": ["fire", 1]}}, rules)  # ring 1 has indices 0..5


def test_sectors_of_ring3():
    """Sector s of ring 3 = indices {3s, 3s+1, 3s+2}; rings 1-2 are in no sector.

    Covers: D-4"""
    assert names(GEO.sector_cells[0]) == {"3:0", "3:1", "3:2"}
    assert names(GEO.sector_cells[1]) == {"3:3", "3:4", "3:5"}
    assert names(GEO.sector_cells[4]) == {"3:12", "3:13", "3:14"}
    assert names(GEO.sector_cells[5]) == {"3:15", "3:16", "3:17"}
    assert GEO.sector[cid("3:8")] == 2
    assert GEO.sector[cid("3:9")] == 3
    assert GEO.sector[cid("1:0")] == -1 and GEO.sector[cid("2:11")] == -1


def test_rune_on_closed_sector_is_refused(rules):
    """A rune (or artifact) on a closed ring-3 sector is a BoardError; open, it is fine. 3:4 is in
    sector 1 (indices 3..5).

    Covers: D-4"""
    with pytest.raises(BoardError, match="sector 1"):
        Board.from_json({"runes": {"3:4": ["fire", 1]}, "open_sectors": [0]}, rules)
    with pytest.raises(BoardError, match="sector"):
        Board.from_json({"runes": {"3:0": ["fire", 1]}}, rules)  # no sector open by default
    with pytest.raises(BoardError, match="sector"):
        Board.from_json({"runes": {}, "artifacts": {"3:17": "ward_stone"}, "open_sectors": [4]},
                        rules)
    ok = Board.from_json({"runes": {"3:4": ["fire", 1], "3:17": ["wind", 1]},
                          "open_sectors": [1, 5]}, rules)
    assert ok.runes[cid("3:4")] == ("fire", 1)
    # rings 1 and 2 are open from the start
    assert Board.from_json({"runes": {"2:7": ["fire", 1], "1:3": ["ice", 1]}}, rules).runes


def test_rotation_by_60_degrees():
    """(k, i) -> (k, i + k mod 6k); geometrically the 60-degree clockwise turn of axial coords,
    (q, r) -> (-r, q + r): 1:0 (0,-1) -> (1,-1) = 1:1; 1:5 -> 1:0; 2:11 -> 2:1; 3:17 -> 3:2.

    Covers: D-5"""
    assert GEO.name(GEO.rotate[cid("1:0")]) == "1:1"
    assert GEO.name(GEO.rotate[cid("1:5")]) == "1:0"
    assert GEO.name(GEO.rotate[cid("2:0")]) == "2:2"
    assert GEO.name(GEO.rotate[cid("2:11")]) == "2:1"
    assert GEO.name(GEO.rotate[cid("3:17")]) == "3:2"
    assert GEO.name(GEO.rotate[cid("3:9")]) == "3:12"
    for c in range(GEO.n_cells):
        q, r = GEO.coords[c]
        assert GEO.coords[GEO.rotate[c]] == (-r, q + r)
        # six turns are the identity; adjacency is preserved
        x = c
        for _ in range(6):
            x = GEO.rotate[x]
        assert x == c
        assert {GEO.rotate[n] for n in GEO.neighbors[c]} == set(GEO.neighbors[GEO.rotate[c]])


def test_rotated_board_has_the_same_powers(rules):
    """Rotation preserves every adjacency, so a rotated board's runes keep their powers:
    fire 1:0 -> wind 2:0 firestorm: 3 x 1.25 x 2 = 7.5 on both boards.

    Covers: D-5"""
    runes = {"1:0": ("fire", 1), "2:0": ("wind", 1), "2:1": ("water", 1)}
    rotated = {GEO.name(GEO.rotate[cid(n)]): v for n, v in runes.items()}
    assert rotated == {"1:1": ("fire", 1), "2:2": ("wind", 1), "2:3": ("water", 1)}
    a = explain(board(runes), rules)["cells"]
    b = explain(board(rotated), rules)["cells"]
    assert a["2:0"]["power"] == pytest.approx(7.5, rel=1e-12)
    assert b["2:2"]["power"] == pytest.approx(7.5, rel=1e-12)
    for n in runes:
        assert b[GEO.name(GEO.rotate[cid(n)])]["power"] == pytest.approx(a[n]["power"], rel=1e-12)


def test_resonance_pattern_counts_and_members():
    """Ring k has 6k cells: 3k two-fold pairs {i, i+3k}, 2k three-fold triples {i, i+2k, i+4k},
    one whole ring. Radius 3: pairs 3 + 6 + 9 = 18, triples 2 + 4 + 6 = 12, whole rings 3.

    Covers: D-3, D-24, resonance:twofold, resonance:threefold, resonance:sixfold"""
    per_ring = {f: {k: [set(names(cells)) for ring, cells in GEO.patterns[f] if ring == k]
                    for k in (1, 2, 3)} for f in (2, 3, 6)}
    assert [len(per_ring[2][k]) for k in (1, 2, 3)] == [3, 6, 9]
    assert [len(per_ring[3][k]) for k in (1, 2, 3)] == [2, 4, 6]
    assert [len(per_ring[6][k]) for k in (1, 2, 3)] == [1, 1, 1]
    # members
    assert per_ring[2][1] == [{"1:0", "1:3"}, {"1:1", "1:4"}, {"1:2", "1:5"}]
    assert {"2:0", "2:6"} in per_ring[2][2] and {"2:5", "2:11"} in per_ring[2][2]
    assert {"3:8", "3:17"} in per_ring[2][3]
    assert per_ring[3][1] == [{"1:0", "1:2", "1:4"}, {"1:1", "1:3", "1:5"}]
    assert {"2:1", "2:5", "2:9"} in per_ring[3][2] and {"2:3", "2:7", "2:11"} in per_ring[3][2]
    assert {"3:0", "3:6", "3:12"} in per_ring[3][3] and {"3:5", "3:11", "3:17"} in per_ring[3][3]
    assert per_ring[6][2] == [{f"2:{i}" for i in range(12)}]
    assert len(per_ring[6][3][0]) == 18
    # every pattern lies in one ring, and every cell is in exactly one pattern of each fold
    for f in (2, 3, 6):
        seen = [c for _, cells in GEO.patterns[f] for c in cells]
        assert sorted(seen) == list(range(GEO.n_cells))
        for ring, cells in GEO.patterns[f]:
            assert {GEO.ring[c] for c in cells} == {ring}
