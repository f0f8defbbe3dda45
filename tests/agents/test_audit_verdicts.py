"""The audit's verdicts and its comparison with other rules (agents/design/audit/verdicts.py), on
hand-made round results (the verdicts read only each family's report-set rates and the holes),
and the script's --against end to end on one quick round."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from agents.design.audit.verdicts import format_moved, format_verdicts, moved, verdicts

REPO = Path(__file__).resolve().parents[2]


def _family(win, fast=0.0, ci=None, name="x"):
    """A family's report set: its win rate, with an interval of just that rate unless given."""
    return NS(family=name, report=NS(win_rate=win, ci=ci or (win, win), fast_kill_rate=fast))


def _round(r, holes=(), **families):
    return NS(round=r, families=families, holes=list(holes))


def test_limits_apply_from_round_3_and_name_the_rounds_over():
    """Round 2's one rune at 50% does not count (the limits start at round 3); round 3's one rune
    at 10% holds (<= 20%); two runes at 60% in round 3 and 56% in round 4 are over 55%; a hole in
    round 4 fails the last verdict."""
    fast = _family(1.0, fast=0.8, name="fast_kill")
    report = NS(rounds=[
        _round(2, one_rune=_family(0.5), two_rune=_family(0.9)),
        _round(3, one_rune=_family(0.1, ci=(0.05, 0.18)), two_rune=_family(0.6)),
        _round(4, holes=[fast], one_rune=_family(0.0), two_rune=_family(0.56), fast_kill=fast)])
    one, two, holes = verdicts(report)
    assert (one.holds, one.detail) == (True, "highest 10% [5%, 18%] in round 3")
    assert not two.holds and two.detail.startswith("over in rounds 3, 4; highest 60%")
    assert not holes.holds and holes.detail == (
        "holes in round 4; the worst: round 4, fast_kill fast-kills 80%")
    text = format_verdicts([one, two, holes])
    assert "  holds  one_rune wins at most 20% from round 3 on" in text
    assert text.count("FAILS") == 2
    # the holes' failure points to where the shipped defaults' own hole is explained, once
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "FAILS  no knockout" in line)
    assert lines[at + 1].strip() == ('(the shipped defaults fail it too: docs/BALANCE.md, "The '
                                     'amplify towers and the cap (D-54)")')
    assert text.count("shipped defaults fail it too") == 1
    assert "## The amplify towers and the cap (D-54)" in (REPO / "docs" / "BALANCE.md").read_text()


def test_no_hole_holds_and_names_the_rounds():
    report = NS(rounds=[_round(3, one_rune=_family(0.0), two_rune=_family(0.3))])
    assert [v.holds for v in verdicts(report)] == [True, True, True]
    assert verdicts(report)[-1].detail == "none in rounds 3"



def test_a_limit_the_intervals_do_not_show_is_unclear():
    """Two runes at 52% [44%, 59%] in round 3 (the designer's report: it said `holds`) and 40%
    [30%, 50%] in round 4: the rates hold (<= 55%), round 3's interval reaches past 55%, so the
    verdict is `unclear`, naming round 3; one rune at 10% [5%, 18%] is shown (18% <= 20%)."""
    report = NS(rounds=[
        _round(3, one_rune=_family(0.1, ci=(0.05, 0.18)), two_rune=_family(0.52, ci=(0.44, 0.59))),
        _round(4, one_rune=_family(0.0), two_rune=_family(0.4, ci=(0.3, 0.5)))])
    one, two, _ = verdicts(report)
    assert (one.holds, one.shown, one.word) == (True, True, "holds")
    assert (two.holds, two.shown, two.word) == (True, False, "unclear")
    assert two.detail == ("highest 52% [44%, 59%] in round 3; not shown: the interval reaches "
                          "past 55% (to 59.0%) in round 3 (more battles narrow it)")
    assert two.to_json()["shown"] is False and one.to_json()["shown"] is True
    assert "  unclear  two_rune wins at most 55% from round 3 on: highest 52%" in \
        format_verdicts([one, two])

def test_moved_lists_rows_past_the_threshold_largest_first():
    """Round 3: two_rune 30% -> 50% (+20), one_rune 1% -> 3% (+2, under 5 points: not listed);
    fast_kill's fast % 90% -> 0% (-90) comes first."""
    mine = NS(rounds=[_round(3, one_rune=_family(0.03), two_rune=_family(0.5),
                             fast_kill=_family(1.0, fast=0.0))])
    theirs = NS(rounds=[_round(3, one_rune=_family(0.01), two_rune=_family(0.3),
                               fast_kill=_family(1.0, fast=0.9)), _round(6)])
    rows = moved(mine, theirs)
    assert [(r.family, r.other_win, r.win) for r in rows] == [
        ("one_rune", 0.01, 0.03), ("two_rune", 0.3, 0.5), ("fast_kill", 1.0, 1.0)]
    lines = format_moved(rows, "default.yaml").splitlines()
    assert lines[0].endswith("2 of 3 family rows):")
    assert "fast_kill" in lines[1] and "fast  90% ->   0%" in lines[1]
    assert "two_rune" in lines[2] and "win  30% ->  50%" in lines[2]


@pytest.mark.outside_mutation_check
def test_script_compares_a_designers_file_with_the_defaults(tmp_path, script_main):
    """A rules file that extends the defaults with one change: the JSON has the verdicts of both
    and the moved rows; --against none leaves the comparison out (main(argv) in this process:
    the real process above showed the script's start and its clean stdout)."""
    rules = tmp_path / "try.yaml"
    rules.write_text(f"extends: {REPO / 'configs' / 'rules' / 'default.yaml'}\n"
                     "freeze:\n  max_frozen: 2\n", encoding="utf-8")
    base = [sys.executable, str(REPO / "scripts" / "balance_audit.py"), "--rules", str(rules),
            "--rounds", "3", "--quick", "--json", "--no-progress"]
    r = subprocess.run(base, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [v["limit"].split()[0] for v in out["verdicts"]] == ["one_rune", "two_rune", "no"]
    assert out["against"]["rules_hash"] != out["rules_hash"]
    assert {m["family"] for m in out["against"]["moved"]} >= {"one_rune", "two_rune"}
    r = script_main("balance_audit", *base[2:], "--against", "none")
    assert r.returncode == 0 and "against" not in json.loads(r.stdout)
