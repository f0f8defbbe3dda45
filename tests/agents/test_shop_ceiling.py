"""The shop ceiling (`agents/design/metagame/shop_ceiling.py`, `exploitability.py --shop-ceiling`):
the best board a player who foresaw its own shop views could field, within what they offered and
the mana it has had."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from agents.design.audit import board_cost
from agents.design.metagame.clear_ceiling import fielded_ghosts, run_outcome
from agents.design.metagame.shop_ceiling import (SHOP_STREAM, ShopRound, core_bounds,
                                                 format_shop_ceiling, shop_budget, shop_ceiling,
                                                 shop_draw)
from agents.search.rolling import draw_views
from rune_env.rules import Board, load_rules
from rune_env.run.loop import draw_shop, new_run
from rune_env.run.opponents import Pool, load_pool, save_pool

REPO = Path(__file__).resolve().parents[2]
RULES = load_rules(None)
ARCHMAGE = load_pool(REPO / "configs/opponents/archmage.json.gz", RULES)
BOARDS = 60          # a small search: these tests check the bounds, not the strength


def test_the_mana_a_player_has_had():
    """Start mana 10, income 10, reward mana 6 at rounds 4, 7, 10 (reward_first_round 4, every
    3), the rank's income delta from sorcerer up (-1). Apprentice: round 1 10, round 2 20, round
    4 10 + 3 x 10 + 6 = 46, round 7 10 + 6 x 10 + 2 x 6 = 82. Archmage (income 9): round 2 19,
    round 4 10 + 27 + 6 = 43, round 10 10 + 81 + 18 = 109."""
    assert [shop_budget(RULES, r, "apprentice") for r in (1, 2, 3, 4, 7)] == [10, 20, 30, 46, 82]
    assert [shop_budget(RULES, r, "archmage") for r in (1, 2, 4, 10)] == [10, 19, 43, 109]


def test_views_are_drawn_as_the_run_draws_its_shop():
    """A view is what `draw_shop` shows from the same generator state: the same 5 runes and the
    artifact offer."""
    state = new_run(0, RULES, rank="archmage")
    state.rng = np.random.default_rng(42)
    draw_shop(state)
    view = draw_views(RULES, list(state.unlocked), 1, np.random.default_rng(42))[0]
    assert view == (list(state.shop_runes), list(state.shop_artifacts))
    assert len(view[0]) == RULES.spec.run.shop_rune_offers


@pytest.mark.parametrize("round_,draw", [(1, 0), (2, 3)])
def test_the_board_is_made_of_what_the_views_offered(round_, draw):
    """The draw's board holds no more grade-I runes of a kind than the round's free views (one a
    round) and its paid views offered, no artifact they did not offer, and costs at most the
    mana had less the paid views' price (1 each)."""
    views = 2
    win, drawn, paid, board, _ = shop_draw(RULES, ARCHMAGE, "archmage", round_, draw, views,
                                        BOARDS, seed=7)
    seen = draw_views(RULES, list(new_run(0, RULES, rank="archmage").unlocked),
                      round_ + views, np.random.default_rng([7, round_, SHOP_STREAM, draw]))
    offered = Counter(x for v in seen[:round_ + paid] for x in v[0])
    units = Counter()
    merge = RULES.spec.grades.merge_count
    for kind, grade in [*board.runes.values(), *board.hand]:
        units[kind] += merge ** (grade - 1)
    assert all(units[k] <= offered[k] for k in units), (units, offered)
    arts = Counter(x for v in seen[:round_ + paid] for x in v[1])
    assert all(Counter(board.artifacts.values())[a] <= arts[a] for a in board.artifacts.values())
    assert 0 <= paid <= views
    assert board_cost(board, RULES) <= shop_budget(RULES, round_, "archmage") - paid
    assert 0.0 <= win <= 1.0 and 0.0 <= drawn <= 1.0 - win


def test_each_cores_best_is_kept_and_the_draws_best_is_the_best_core():
    """Beside the draw's best board, the best board of each core of the rules (same searches):
    one (win, draw) a core, none scoring above the draw's best, and the best core's rates are
    the draw's."""
    win, drawn, _, board, by_core = shop_draw(RULES, ARCHMAGE, "archmage", 1, 2, 1, BOARDS,
                                              seed=7)
    assert len(by_core) == len(RULES.spec.cores)
    scores = [w + d / 2 for w, d in by_core]
    assert max(scores) == pytest.approx(win + drawn / 2)
    assert by_core[list(RULES.spec.cores).index(board.core)] == (win, drawn)
    assert all(0.0 <= w <= 1.0 and 0.0 <= d <= 1.0 - w for w, d in by_core)


def test_the_same_seed_gives_the_same_ceiling_and_the_run_is_run_outcome():
    """Same seed, same draws, same boards. The run's figures are `run_outcome` of each round's
    mean rates: with round 1 alone measured at 2 lamps, a run that loses round 1 keeps a lamp and
    wins rounds 2-11 (counted won): it always clears, with 10 wins."""
    first = shop_ceiling(RULES, ARCHMAGE, "archmage", [1], draws=2, views=1, boards=BOARDS,
                         seed=3)
    again = shop_ceiling(RULES, ARCHMAGE, "archmage", [1], draws=2, views=1, boards=BOARDS,
                         seed=3)
    assert first.to_json(RULES) == again.to_json(RULES)
    (r1,) = first.rounds
    assert first.point == pytest.approx(1.0) and first.wins == pytest.approx(10.0)
    assert first.counted_won == tuple(range(2, 12))
    assert len(r1.wins) == 2 and r1.win_rate == pytest.approx(sum(r1.wins) / 2)
    lo, hi = r1.ci
    assert lo <= r1.win_rate <= hi
    assert (first.point, first.wins) == run_outcome({1: (r1.win_rate, r1.draw_rate)}, 2, 10, 20)
    assert "round 1: mana 10" in format_shop_ceiling(first, RULES)
    # beside it, every kind on offer at the same mana: a rate, and the run it allows
    win, drawn = r1.free
    assert 0.0 <= win <= 1.0 and 0.0 <= drawn <= 1.0 - win
    assert (first.free_point, first.free_wins) == run_outcome({1: r1.free}, 2, 10, 20)


def _round(number: int, by_core) -> ShopRound:
    wins = tuple(max(w for w, _ in draw) for draw in by_core)
    return ShopRound(number, 10, wins, (0.0,) * len(wins), (0,) * len(wins), Board(), (1.0, 0.0),
                     tuple(by_core))


def test_the_runs_core_is_picked_once_seeing_round_one():
    """Two cores, one lamp, 2 wins clear, rounds 1-2. Round 1's two draws: draw A wins with core
    0 only, draw B with core 1 only; round 2: core 0 wins half its battles, core 1 all.
    Core 0 all run: round 1 0.5, round 2 0.5: clears 0.5 x 0.5 = 0.25, wins 0.5 x (1 + 0.5) =
    0.75. Core 1: 0.5 x 1 = 0.5 and 0.5 x (1 + 1) = 1.0, the best core. Picked seeing round 1:
    draw A takes core 0 (round 1 won, round 2 at 0.5: 0.5 and 1.5; core 1 would lose round 1),
    draw B core 1 (1.0 and 2.0): the mean is 0.75 clears and 1.75 wins, above either core held
    blind."""
    r1 = _round(1, [((1.0, 0.0), (0.0, 0.0)), ((0.0, 0.0), (1.0, 0.0))])
    r2 = _round(2, [((0.5, 0.0), (1.0, 0.0)), ((0.5, 0.0), (1.0, 0.0))])
    fixed, point, wins = core_bounds([r1, r2], ["a", "b"], lamps=1, wins_to_clear=2, round_cap=2)
    assert fixed["a"] == pytest.approx((0.25, 0.75)) and fixed["b"] == pytest.approx((0.5, 1.0))
    assert (point, wins) == pytest.approx((0.75, 1.75))
    # without round 1 measured (counted won), the core is the best one held all run: core 1
    fixed, point, wins = core_bounds([r2], ["a", "b"], lamps=1, wins_to_clear=2, round_cap=2)
    assert (point, wins) == pytest.approx((1.0, 2.0)) and fixed["a"] == pytest.approx((0.5, 1.5))


def test_one_core_reads_as_that_cores_column_of_all():
    """`cores` limits the clairvoyant's cores; a core's searches draw from its number in the
    rules' cores, so moon alone gives the moon column of the search over all five, draw by draw,
    and its run is the ceiling's too (one core: the pick seeing round 1 is that core)."""
    every = shop_ceiling(RULES, ARCHMAGE, "archmage", [1], draws=2, views=1, boards=BOARDS,
                         seed=5)
    moon = shop_ceiling(RULES, ARCHMAGE, "archmage", [1], draws=2, views=1, boards=BOARDS,
                        seed=5, cores=["moon"])
    column = list(RULES.spec.cores).index("moon")
    assert moon.rounds[0].cores == ("moon",)
    assert [d[0] for d in moon.rounds[0].by_core] == [d[column] for d in every.rounds[0].by_core]
    assert moon.rounds[0].wins == tuple(d[column][0] for d in every.rounds[0].by_core)
    assert moon.fixed_cores == {"moon": every.fixed_cores["moon"]}
    assert (moon.core_point, moon.core_wins) == pytest.approx((moon.point, moon.wins))
    with pytest.raises(ValueError, match="unknown core 'lune'"):
        shop_ceiling(RULES, ARCHMAGE, "archmage", [1], draws=2, cores=["lune"])


def test_every_kind_on_offer_is_one_search_without_views():
    """Draw -1 is the every-kind search: no paid views, a board within the round's mana."""
    win, drawn, paid, board, _ = shop_draw(RULES, ARCHMAGE, "archmage", 2, -1, 3, BOARDS, seed=7)
    assert paid == 0 and board_cost(board, RULES) <= shop_budget(RULES, 2, "archmage")
    assert 0.0 <= win <= 1.0


def test_a_lost_round_one_ends_an_apprentice_mirror_run_never():
    """A pool of one ghost (archmage's heaviest round-1 board, a metagame board) at apprentice:
    no extra runes, so the ghosts as fielded are that one board, in the player's seat of round 1
    (side 0), weight 3."""
    entries = ARCHMAGE.rounds[1]
    ghost = max(zip(ARCHMAGE.boards(1, RULES), (e.get("count", 1) for e in entries)),
                key=lambda bc: bc[1])[0]
    pool = Pool(RULES.hash, "apprentice", {1: [{"board": ghost.to_json(RULES), "count": 3}]})
    boards, weights, seat = fielded_ghosts(pool, RULES, "apprentice", 1)
    assert len(boards) == 1 and weights.tolist() == [3.0] and seat == 0
    c = shop_ceiling(RULES, pool, "apprentice", [1], draws=2, views=0, boards=BOARDS)
    # one ghost, one battle a board: each draw's board wins it or not (draws aside)
    assert all(w in (0.0, 1.0) for w in c.rounds[0].wins)
    assert c.rounds[0].views == (0, 0)


def test_the_script_prints_and_writes_the_shop_ceiling(capsys, tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    import exploitability as script
    argv = ["--pool", str(REPO / "configs/opponents/archmage.json.gz"), "--quick", "--rounds",
            "1", "--planner-seeds", "0", "--shop-ceiling", "--shop-draws", "2", "--shop-views",
            "1", "--planner-boards", str(BOARDS), "--no-progress"]
    assert script.main(argv + ["--json"]) == 0
    s = json.loads(capsys.readouterr().out)["shop_ceiling"]
    assert [r["round"] for r in s["rounds"]] == [1] and s["lamps"] == 2
    assert len(s["rounds"][0]["wins"]) == 2 and s["rounds"][0]["mana"] == 10
    # the run's core: each core held all run, and the pick seeing round 1 (round 2 on counted won)
    core = s["run_core"]
    assert set(core["fixed"]) == set(RULES.spec.cores) == set(s["rounds"][0]["by_core"])
    assert core["best_core"] in RULES.spec.cores
    assert core["point"] >= max(x["point"] for x in core["fixed"].values()) - 1e-12
    assert script.main(argv) == 0
    text = capsys.readouterr().out
    assert "shop ceiling (2 lamps)" in text and "with the run's core" in text
    assert "; by core sun " in text
    # bounds are checked where they enter, and a pool without a rank is refused
    for bad in (["--shop-draws", "1"], ["--shop-views", "21"]):
        with pytest.raises(SystemExit) as exc:
            script.main(argv + bad)
        assert exc.value.code == 2
    capsys.readouterr()
    for bad, message in ((["--shop-cores", "lune"], "--shop-cores: unknown core 'lune'"),
                         (["--shop-cores", "moon", "moon"], "--shop-cores: a core is named twice")):
        assert script.main(argv + bad) == 2
        assert message in capsys.readouterr().err
    plain = [x for x in argv if x != "--shop-ceiling"]
    assert script.main(plain + ["--shop-cores", "moon"]) == 2
    assert "add --shop-ceiling" in capsys.readouterr().err
    # a pool of a rank the rules do not have: the ceiling plays at the pool's rank (lamps, income)
    stray = tmp_path / "stray.json"
    save_pool(Pool(RULES.hash, "grandmaster", ARCHMAGE.rounds), stray)
    code = script.main(["--pool", str(stray), "--quick", "--rounds", "1", "--shop-ceiling",
                        "--no-progress"])
    assert code == 2
    assert "'grandmaster' is not one of apprentice" in capsys.readouterr().err


def test_the_shop_ceiling_goes_to_tensorboard(capsys, tmp_path):
    pytest.importorskip("torch.utils.tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    sys.path.insert(0, str(REPO / "scripts"))
    import exploitability as script
    argv = ["--pool", str(REPO / "configs/opponents/archmage.json.gz"), "--quick", "--rounds",
            "1", "2", "--planner-seeds", "0", "--shop-ceiling", "--shop-draws", "2",
            "--shop-views", "0", "--planner-boards", str(BOARDS), "--no-progress", "--json",
            "--tb", str(tmp_path)]
    assert script.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    s = out["shop_ceiling"]
    ea = EventAccumulator(str(tmp_path / f"exploitability_{out['rules_hash']}_s0"),
                          size_guidance={"scalars": 0})
    ea.Reload()
    for tag, value in (("shop_clear_ceiling", s["point"]), ("shop_wins_ceiling", s["wins"]),
                       ("shop_core_clear_ceiling", s["run_core"]["point"]),
                       ("shop_core_wins_ceiling", s["run_core"]["wins"])):
        (event,) = ea.Scalars(f"exploitability/archmage/{tag}")
        assert event.step == 0 and event.value == pytest.approx(value)
    events = ea.Scalars("exploitability/archmage/shop/win_rate")
    assert [e.step for e in events] == [1, 2]
    assert [e.value for e in events] == pytest.approx([r["win_rate"] for r in s["rounds"]])
