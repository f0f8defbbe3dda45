"""The clear ceiling as a run fields the ghosts (`fielded_rates`, `clear_ceiling(pool=...)`): the
player in the run's seat of each round, the rank's extra runes drawn from a seeded generator."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.design.metagame.clear_ceiling import FIELDINGS, clear_ceiling, fielded_rates
from rune_env.rules import load_rules
from rune_env.run.opponents import Pool, load_pool

REPO = Path(__file__).resolve().parents[2]
RULES = load_rules(None)
ARCHMAGE = load_pool(REPO / "configs/opponents/archmage.json.gz", RULES)
ROUNDS = range(1, 7)


def _heaviest(round_):
    """Archmage's heaviest ghost of the round (a metagame board), as the round's board."""
    entries = ARCHMAGE.rounds[round_]
    return max(zip(ARCHMAGE.boards(round_, RULES), (e.get("count", 1) for e in entries)),
               key=lambda bc: bc[1])[0].replace(round=round_)


@pytest.fixture(scope="module")
def mirrors():
    """Rounds 1-6, each with one ghost: the board itself (a mirror match)."""
    boards = {r: _heaviest(r) for r in ROUNDS}
    ghosts = {r: [{"board": b.to_json(RULES), "count": 3}] for r, b in boards.items()}
    return boards, ghosts


def test_the_player_moves_first_in_odd_rounds(mirrors):
    """A board against itself is decided by the first mover (D-8: side 0 acts first within a
    millisecond; each of these boards knocks out its mirror first from side 0), and a run gives
    the player side 0 in odd rounds (player_seat). With no extra runes (apprentice) each round is
    one battle: won in rounds 1, 3, 5, lost in 2, 4, 6, never drawn."""
    boards, ghosts = mirrors
    rates = fielded_rates(boards, Pool(RULES.hash, "apprentice", ghosts), RULES, "apprentice")
    assert rates == {1: (1.0, 0.0), 2: (0.0, 0.0), 3: (1.0, 0.0), 4: (0.0, 0.0),
                     5: (1.0, 0.0), 6: (0.0, 0.0)}


def test_the_run_over_those_rounds(mirrors):
    """With 3 lamps (apprentice) a run of W L W L W L loses its third lamp in round 6 with 3
    wins: it never clears, and wins 3. The both-seatings ceiling of the same rounds, given as
    half won, is another figure: clear_ceiling keeps both."""
    boards, ghosts = mirrors
    results = [SimpleNamespace(round=r, board=b, measured=SimpleNamespace(
        win_rate=0.5, draws=0, battles=2, ci=(0.1, 0.9))) for r, b in boards.items()]
    c = clear_ceiling(results, RULES, "apprentice", pool=Pool(RULES.hash, "apprentice", ghosts))
    assert c.fielded.point == 0.0 and c.fielded.wins == pytest.approx(3.0)
    assert c.fielded.fieldings == 1                      # apprentice adds no runes to draw
    assert c.point > 0                                   # 0.5 a round, rounds 7-12 counted won
    assert c.to_json()["fielded"]["rates"]["2"] == {"win": 0.0, "draw": 0.0}


def test_the_extra_runes_are_drawn_from_the_seed(mirrors):
    """At archmage each ghost is fielded FIELDINGS times with a random extra rune: one ghost a
    round gives rates in steps of 1/FIELDINGS, the same for the same seed."""
    boards, ghosts = mirrors
    pool = Pool(RULES.hash, "archmage", ghosts)
    first = fielded_rates(boards, pool, RULES, "archmage", seed=5)
    assert first == fielded_rates(boards, pool, RULES, "archmage", seed=5)
    for win, draw in first.values():
        assert (win * FIELDINGS) == pytest.approx(round(win * FIELDINGS))
        assert (draw * FIELDINGS) == pytest.approx(round(draw * FIELDINGS))
    # the extra rune breaks the mirror: some round's outcome differs from the seat's rule
    plain = fielded_rates(boards, Pool(RULES.hash, "apprentice", ghosts), RULES, "apprentice")
    assert first != plain


def test_the_script_prints_and_writes_the_fielded_ceiling(capsys):
    sys.path.insert(0, str(REPO / "scripts"))
    import exploitability as script
    argv = ["--pool", str(REPO / "configs/opponents/archmage.json.gz"), "--quick", "--rounds",
            "1", "--planner-seeds", "0", "--clear-ceiling", "--no-progress"]
    assert script.main(argv + ["--json"]) == 0
    f = json.loads(capsys.readouterr().out)["clear_ceiling"]["fielded"]
    # round 1 alone is measured: a loss there leaves one of the two lamps and rounds 2-11 count
    # as won, so every run clears with its ten wins, whatever round 1's rate
    assert f["fieldings"] == FIELDINGS and list(f["rates"]) == ["1"]
    assert f["point"] == pytest.approx(1.0) and f["wins"] == pytest.approx(10.0)
    assert 0.0 <= f["rates"]["1"]["win"] <= 1.0
    assert script.main(argv) == 0
    text = capsys.readouterr().out
    assert "the same boards against the ghosts as a run fields them (the run's seat each " \
           f"round, the rank's extra runes drawn {FIELDINGS} times a ghost" in text
