"""Atomic file writes: a temp file in the same directory, then a rename over the target, so a
crash or a kill never leaves half a file (the old one stays).

Every file that crosses a boundary is written with these (board files, saved runs, run records,
pools, profiles, the scripts' reports; docs/ARCHITECTURE.md, "Files that cross boundaries").
This module imports nothing of rune_env; every layer may use it.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any) -> None:
    """`data` as JSON (indent 1, UTF-8 kept as is, a final newline), written atomically."""
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path`: a crash or a kill
    never leaves half a file (the old one stays). The file is readable by all, as a plain write
    would make it (mkstemp makes it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
