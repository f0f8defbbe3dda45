"""agents/cli/tables.py: the printed tables' columns."""
from __future__ import annotations

import pytest

from agents.cli.tables import text_table


def test_names_left_figures_right_headers_over_their_values():
    # widths: "agent"/"greedy" 6, "runs"/"100" 4, "mean wins"/"5.27 [4.51, 6.03]" 17; gap 2
    lines = text_table(["agent", "runs", "mean wins"],
                       [["greedy", "100", "5.27 [4.51, 6.03]"], ["random", "7", "0.1 [0, 1]"]])
    assert lines == ["agent   runs          mean wins",
                     "greedy   100  5.27 [4.51, 6.03]",
                     "random     7         0.1 [0, 1]"]


def test_a_row_of_another_width_is_refused():
    with pytest.raises(ValueError, match="a row of 2 cells under a header of 3"):
        text_table(["a", "b", "c"], [["1", "2"]])
