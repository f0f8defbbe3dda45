"""Tables printed for a terminal: columns as wide as their widest cell, headers over their values.

    text_table(["agent", "runs", "mean wins"], [["greedy", "100", "5.27 [4.51, 6.03]"]])
    -> ["agent   runs          mean wins",
        "greedy   100  5.27 [4.51, 6.03]"]

The first `left` columns (the names) are aligned left, the others (the figures) right, so a
header ends where its values end and the figures of a column line up digit under digit.
"""
from __future__ import annotations


def text_table(header: list[str], rows: list[list[str]], left: int = 1, gap: int = 2) -> list[str]:
    """The header line and one line per row (each row as many cells as the header)."""
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under a header of {len(header)}")
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]

    def line(cells: list[str]) -> str:
        return (" " * gap).join(str(c).ljust(w) if i < left else str(c).rjust(w)
                                for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), *(line(r) for r in rows)]
