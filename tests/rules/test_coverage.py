"""Every battle rule is checked by some test: the `Covers:` ids of the tests' docstrings must
cover tests/data/rule_ids.txt, and every id they name must be in that list (no typos).
scripts/coverage_table.py collects them (with `ast`) and writes docs/COVERAGE.md."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "coverage_table.py"


def _load():
    spec = importlib.util.spec_from_file_location("scripts_coverage_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["scripts_coverage_table"] = module    # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


ct = _load()


def test_every_rule_id_is_covered():
    _, _, uncovered, _ = ct.coverage()
    assert not uncovered, (f"{len(uncovered)} rule ids of tests/data/rule_ids.txt are in no "
                           f"test's Covers: line: {', '.join(uncovered)}")


def test_covers_ids_are_known():
    _, _, _, unknown = ct.coverage()
    assert not unknown, "Covers: ids not in tests/data/rule_ids.txt: " + "; ".join(
        f"{rid!r} in {t.ref} (line {t.line})" for t, rid in unknown)


def test_rule_ids_file_is_well_formed():
    rules = ct.load_rule_ids()
    ids = [rid for rid, _ in rules]
    assert len(ids) == len(set(ids)), "a rule id is listed twice"
    assert {"D-1", "D-37", "rune:fire", "flow:blizzard", "relic:mana_vein"} <= set(ids)
    assert all(desc for rid, desc in rules if rid.startswith("D-"))


SAMPLE = '''
def helper():
    """Covers: D-1"""


def test_one():
    """Fire.

    Covers: D-1, rune:fire
    """


def test_two():
    """Covers: D-2,
        D-3 rune:wind

    Not covers: D-9
    """


class TestGroup:
    def test_three(self):
        """Covers: D-3"""

    def helper(self):
        """Covers: D-4"""


class Other:
    def test_ignored(self):
        """Covers: D-4"""


def test_nothing():
    pass
'''


def test_collector_parses_covers_lines(tmp_path):
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "helpers.py").write_text('def test_x():\n    """Covers: D-4"""\n')
    ids = tmp_path / "ids.txt"
    ids.write_text("# comment\nD-1 draw\nD-2 two\nD-3 three\nD-4 four\nrune:fire fire\n"
                   "rune:wind\n\n")
    found = {t.ref: t.ids for t in ct.collect(tmp_path)}
    assert found == {
        "test_sample.py::test_one": ("D-1", "rune:fire"),
        "test_sample.py::test_two": ("D-2", "D-3", "rune:wind"),
        "test_sample.py::TestGroup::test_three": ("D-3",),
        "test_sample.py::test_nothing": (),
    }
    rules, by_id, uncovered, unknown = ct.coverage(tmp_path, ids)
    assert [rid for rid, _ in rules] == ["D-1", "D-2", "D-3", "D-4", "rune:fire", "rune:wind"]
    assert by_id["D-3"] == ["test_sample.py::test_two", "test_sample.py::TestGroup::test_three"]
    assert uncovered == ["D-4"]
    assert unknown == []
    (tmp_path / "test_typo.py").write_text('def test_t():\n    """Covers: D-1, rune:fir"""\n')
    _, _, _, unknown = ct.coverage(tmp_path, ids)
    assert [(t.ref, rid) for t, rid in unknown] == [("test_typo.py::test_t", "rune:fir")]


def test_table_is_written(tmp_path):
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    ids = tmp_path / "ids.txt"
    ids.write_text("D-1 draw | tie\nD-4 four\n")
    out = tmp_path / "docs" / "COVERAGE.md"
    assert ct.main(["--out", str(out), "--tests", str(tmp_path), "--rule-ids", str(ids)]) == 0
    text = out.read_text()
    assert "| rule id | description | tests |" in text
    assert "| `D-1` | draw \\| tie | `tests/test_sample.py::test_one` |" in text
    assert "| `D-4` | four | **none** |" in text
    assert "1 of 2 rule ids covered" in text
    assert ct.main(["--out", str(out), "--tests", str(tmp_path), "--rule-ids", str(ids),
                    "--check"]) == 1


@pytest.mark.parametrize("doc, ids", [
    (None, ()),
    ("no ids here", ()),
    ("Covers: D-13, rune:thunder", ("D-13", "rune:thunder")),
    ("  Covers:   affinity:fire>ice  overdrive", ("affinity:fire>ice", "overdrive")),
])
def test_parse_covers(doc, ids):
    assert ct.parse_covers(doc) == ids
