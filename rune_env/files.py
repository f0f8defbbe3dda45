"""Atomic file writes: a temp file in the same directory, then a rename over the target, so a
crash or a kill never leaves half a file (the old one stays); and `read_text`, a text file read
with one-line errors of the caller's own type.

Every file that crosses a boundary is written with these (board files, saved runs, run records,
pools, profiles, the scripts' reports; docs/ARCHITECTURE.md, "Files that cross boundaries").
This module imports nothing of rune_env; every layer may use it.
"""
from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any) -> None:
    """`data` as JSON (indent 1, UTF-8 kept as is, a final newline), written atomically."""
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def is_gzip_name(path: Path) -> bool:
    """Files whose name ends in .gz are read and written gzip-compressed (the shipped pools:
    JSON of thousands of boards, about a tenth of the size compressed)."""
    return Path(path).name.endswith(".gz")


def gzip_bytes(text: str) -> bytes:
    """`text` as UTF-8, gzip-compressed reproducibly: no file name and no time in the header
    (mtime 0), so the same text always gives the same bytes (a rebuilt pool diffs as equal)."""
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path`: a crash or a kill
    never leaves half a file (the old one stays). The file is readable by all, as a plain write
    would make it (mkstemp makes it private). A name ending in .gz is written gzip-compressed
    (`gzip_bytes`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(gzip_bytes(text) if is_gzip_name(path) else text.encode("utf-8"))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_text(path: Path, what: str, error: type[Exception]) -> str:
    """The UTF-8 text of `path`. A file that cannot be read raises
    `error("<path>: cannot read <what> (<strerror>)")` (`what` "" reads "cannot read (...)"),
    one that is not UTF-8 raises `error("<path>: not a UTF-8 text file (<reason> at byte N)")`;
    both without the OSError's traceback. A name ending in .gz is decompressed first (a file
    that is not valid gzip raises `error("<path>: not a valid gzip file, truncated or corrupt?
    (...)")`)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        label = f"cannot read {what}" if what else "cannot read"
        raise error(f"{path}: {label} ({exc.strerror or exc})") from None
    if is_gzip_name(path):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise error(f"{path}: not a valid gzip file, truncated or corrupt? ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
