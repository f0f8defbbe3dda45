"""Atomic file writes: a temp file in the same directory, then a rename over the target, so a
crash or a kill never leaves half a file (the old one stays); and `read_text`, a text file read
with one-line errors of the caller's own type.

Every file that crosses a boundary is written with these (board files, saved runs, run records,
pools, profiles, the scripts' reports; docs/ARCHITECTURE.md, "Files that cross boundaries").
This module imports nothing of rune_env; every layer may use it.

It also reads within bounds (`read_text`, `load_json`, `safe_load_yaml`): sizes, nesting,
numbers and YAML aliases, so that a hostile file is refused in one line before it costs memory.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import zlib
from pathlib import Path
from typing import Any

import yaml


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
    """Write `text` (UTF-8) atomically (`write_bytes_atomic`). A name ending in .gz is written
    gzip-compressed (`gzip_bytes`)."""
    write_bytes_atomic(path, gzip_bytes(text) if is_gzip_name(path) else text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to a temp file beside `path`, then rename it over `path`: a crash or a kill
    never leaves half a file (the old one stays). The file is readable by all, as a plain write
    would make it (mkstemp makes it private)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def shown(value: Any, limit: int = 80) -> str:
    """`repr(value)`, cut to `limit` characters: an error line stays one short line whatever a
    caller or a file passed (a 5000-digit string, a whole dict)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def printable_line(text: Any, limit: int = 1000) -> str:
    """`text` as one printable line for a terminal: whitespace runs as one space, any other
    control character escaped as Python writes it (ESC as \\x1b, so a file's name or text cannot
    move the cursor, retitle the window or recolour the screen), cut to `limit` characters (a
    3 MB value in a rules file made a 3 MB error line)."""
    out = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1]
                  for c in " ".join(str(text).split()))
    return out if len(out) <= limit else out[:limit - 3] + "..."


# -- bounded reading ---------------------------------------------------------------------------
# The input bounds below are not game numbers: they keep a hostile or broken file from costing
# more than a few hundred MB and a few seconds before it is refused (issue 28). Each is far above
# what the project writes: the shipped pools are under 0.5 MiB decompressed, rules files 17 KB.
MAX_FILE_BYTES = 64 * 2**20     # a file's bytes after decompression (pools, boards, rules, configs)
MAX_JSON_DEPTH = 64             # nesting of arrays/objects in a JSON file (boards use 3 levels)
# values in a JSON file (the shipped pools hold about 65,000): parsed, each costs Python 30-70
# bytes, so a 64 MiB file of "[[],[],..." would take 1.6 GB; 2 million stay under 200 MB
MAX_JSON_VALUES = 2_000_000
# digits of a JSON integer: below Python's 4,300-digit limit of int(text) (past it a ValueError,
# not a JSON error); the validators then bound each number where its meaning is known
MAX_JSON_INT_DIGITS = 1000
MAX_YAML_BYTES = 4 * 2**20      # a YAML file (rules, configs, recipes: a few KB each)
MAX_YAML_NODES = 1_000_000      # YAML nodes after expanding aliases (an alias bomb's billions)
_CHUNK = 1 << 20                # bytes decompressed at a time


def _read_bounded(path: Path, limit: int, error: type[Exception]) -> bytes:
    """At most `limit` bytes of `path` (decompressed in chunks if .gz: a 1 MB file that expands
    to 1 GB is refused once past `limit`, never held whole)."""
    size_note = f"larger than {_mib(limit)}, the limit for an input file"
    if is_gzip_name(path):
        out = bytearray()
        try:
            with gzip.open(path, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    out += chunk
                    if len(out) > limit:
                        raise error(f"{path}: decompresses to {size_note}")
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise error(f"{path}: not a valid gzip file, truncated or corrupt? ({exc})") from None
        return bytes(out)
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise error(f"{path}: {size_note}")
    return data


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


def read_text(path: Path, what: str, error: type[Exception], limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of `path`, at most `limit` bytes (decompressed). A file that cannot be read
    raises `error("<path>: cannot read <what> (<strerror>)")` (`what` "" reads "cannot read
    (...)"), one that is not UTF-8 raises `error("<path>: not a UTF-8 text file (<reason> at byte
    N)")`, one over `limit` raises `error("<path>: larger than 64 MiB, ...")`; all without a
    traceback. A name ending in .gz is decompressed first, in bounded chunks (a file that is not
    valid gzip raises `error("<path>: not a valid gzip file, truncated or corrupt? (...)")`)."""
    path = Path(path)
    label = f"cannot read {what}" if what else "cannot read"
    # a FIFO blocks in open() until something writes to it (a hang, not an error); a device
    # has no end of its own: only regular files are inputs
    if path.exists() and not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file: a pipe or a device?"
        raise error(f"{path}: {label} ({kind})")
    try:
        data = _read_bounded(path, limit, error)
    except OSError as exc:
        raise error(f"{path}: {label} ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None


# -- bounded JSON ------------------------------------------------------------------------------
# A string, or an unterminated one to the end of the text (a lone backslash last too): a match
# can never fail, so each quote is scanned once. Requiring the closing quote, a text of escaped
# quotes with no end ('"' + '\\"' * n) rescanned to its end from every quote: quadratic, 85 s
# for 160 KB, before any bound was checked. An unterminated string is refused by the parser.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")


class _Refused(ValueError):
    """A JSON number out of bounds, raised from the parser's hooks."""


def json_shape(text: str) -> tuple[int, int]:
    """(how deeply the arrays and objects of JSON `text` nest, at least how many values it
    holds: commas and containers), strings skipped, in linear time and without recursion (the
    parser itself recurses and would end in a RecursionError). At most two copies of the text
    are held at a time."""
    import numpy as np
    data = text.encode("utf-8", "replace")
    data = _JSON_STRING.sub(b'""', data)
    data = data.translate(None, _NOT_STRUCTURE)
    values = data.count(b",") + data.count(b"[") + data.count(b"{")
    data = data.translate(None, b",")
    depth, top = 0, 0
    for start in range(0, len(data), _CHUNK):       # chunks: steps of 4 bytes each
        codes = np.frombuffer(data, np.uint8, count=min(_CHUNK, len(data) - start),
                              offset=start)
        steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int32)
        running = np.cumsum(steps) + depth
        top, depth = max(top, int(running.max())), int(running[-1])
    return top, values


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_INT_DIGITS:
        raise _Refused(f"an integer of {len(text.lstrip('-'))} digits (at most "
                       f"{MAX_JSON_INT_DIGITS})")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"the number {text[:40]} is out of a float's range")
    return value


def _json_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows (write a finite number)")


def load_json(text: str, source: str, error: type[Exception], object_pairs_hook=None) -> Any:
    """Parse JSON `text` within bounds, or raise `error("<source>: ...")` as one line: nesting
    at most MAX_JSON_DEPTH, at most MAX_JSON_VALUES values, integers at most MAX_JSON_INT_DIGITS digits, every number finite
    (no NaN, Infinity or 1e400). `object_pairs_hook` as json.loads's (it may raise `error`)."""
    depth, values = json_shape(text)
    if depth > MAX_JSON_DEPTH:
        raise error(f"{source}: JSON nested {depth} deep (at most {MAX_JSON_DEPTH})")
    if values > MAX_JSON_VALUES:
        raise error(f"{source}: more than {MAX_JSON_VALUES:,} JSON values (an input bound; "
                    f"{values:,} here)")
    try:
        return json.loads(text, parse_int=_json_int, parse_float=_json_float,
                          parse_constant=_json_constant, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as exc:
        raise error(f"{source}: not valid JSON, truncated or corrupt? ({exc.msg} at line "
                    f"{exc.lineno}, column {exc.colno})") from None
    except _Refused as exc:
        raise error(f"{source}: {exc}") from None
    except RecursionError:      # not reached after json_shape; kept so it can never be a traceback
        raise error(f"{source}: JSON nested too deeply") from None


# -- bounded YAML ------------------------------------------------------------------------------
MAX_YAML_DEPTH = 64             # nesting of YAML collections (rules files nest 4 levels)


class _TooDeep(Exception):
    """Raised while composing a YAML document nested past MAX_YAML_DEPTH."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that stops composing past MAX_YAML_DEPTH levels (the composer recurses once
    per level: without this a deep document ends in a slow RecursionError)."""

    _depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _TooDeep()
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _yaml_children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_unique_keys(node, source: str, error: type[Exception]) -> None:
    """Refuse a YAML mapping that gives a key twice: PyYAML keeps the last one silently, so
    `base_hp: 50` then `base_hp: 100` would read as 100 (as JSON object hooks refuse it for
    boards and pools). Keys compare by tag and text (`1` and `"1"` differ, as they load); a
    merge key (`<<`) may repeat, as YAML allows."""
    seen: dict = {}
    for key, _value in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        ident = (key.tag, key.value)
        if ident in seen:
            raise error(f"{source}: key {key.value!r} given twice in one mapping (line "
                        f"{key.start_mark.line + 1}, first at line {seen[ident]}; YAML would keep "
                        f"only the last)")
        seen[ident] = key.start_mark.line + 1


# A YAML number is built after composing: PyYAML builds a base-60 one (1:59:59...) by a loop
# of big-integer products, quadratic in its length (minutes for 4 MB), and a long decimal one
# through int(), so a number is refused by its length first. 100 characters is far above any
# number a config writes (a float's repr is at most 24).
MAX_YAML_NUMBER_CHARS = 100
_YAML_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _check_yaml_nodes(root, source: str, error: type[Exception]) -> None:
    """Refuse a composed YAML document whose aliases expand past MAX_YAML_NODES nodes, nest past
    MAX_YAML_DEPTH or refer to themselves, one whose mapping gives a key twice
    (`_check_unique_keys`), or one with a number longer than MAX_YAML_NUMBER_CHARS. An alias is the same node object as its anchor, so
    each node is measured once (memo by identity) and a bomb is caught before it is built."""
    measured: dict[int, tuple[int, int]] = {}     # id(node) -> (expanded nodes, depth)
    ancestors: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in measured:
            continue
        children = _yaml_children(node)
        if not done:
            if isinstance(node, yaml.MappingNode):
                _check_unique_keys(node, source, error)
            elif isinstance(node, yaml.ScalarNode) and node.tag in _YAML_NUMBER_TAGS \
                    and len(node.value) > MAX_YAML_NUMBER_CHARS:
                raise error(f"{source}: a number of {len(node.value):,} characters at line "
                            f"{node.start_mark.line + 1} (at most {MAX_YAML_NUMBER_CHARS})")
            ancestors.add(id(node))
            stack.append((node, True))
            for child in children:
                if id(child) in ancestors:
                    raise error(f"{source}: a YAML alias refers to its own anchor (a recursive "
                                f"structure)")
                stack.append((child, False))
            continue
        ancestors.discard(id(node))
        parts = [measured[id(c)] for c in children]
        size = 1 + sum(p[0] for p in parts)
        depth = 1 + max((p[1] for p in parts), default=0)
        if size > MAX_YAML_NODES:
            raise error(f"{source}: YAML aliases expand to more than {MAX_YAML_NODES:,} values "
                        f"(an alias bomb?)")
        if depth > MAX_YAML_DEPTH:
            raise error(f"{source}: YAML nested more than {MAX_YAML_DEPTH} deep")
        measured[id(node)] = (size, depth)


def ascii_number(text: str) -> str:
    """`text` stripped, for int() or float() to read, if it is ASCII; else a ValueError. Python
    reads any script's digits as numbers ('٣' as 3, '²' passes isdigit()); a number on a command
    line or in an agent's name is written in ASCII, as the docs and the files say."""
    text = str(text).strip()
    if not text.isascii():
        raise ValueError(f"{text!r} is not a number written in ASCII digits")
    return text


def yaml_problem(exc: Exception) -> str:
    """PyYAML's error as one phrase in the file's own terms: "at line L, column C: <problem>
    (<context> at line L', column C')" (PyYAML's str() names the text "<unicode string>", since
    the file is read first and parsed from a string)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or not problem:
        return " ".join(str(exc).replace('in "<unicode string>", ', "").split())
    out = f"at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, where = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and where is not None:
        out += f" ({context} at line {where.line + 1}, column {where.column + 1})"
    return " ".join(out.split())


def safe_load_yaml(text: str, source: str, error: type[Exception]) -> Any:
    """`yaml.safe_load(text)` (no tags that build objects) within bounds: at most MAX_YAML_BYTES,
    aliases expanding to at most MAX_YAML_NODES values, nesting at most MAX_YAML_DEPTH, no key
    given twice in a mapping; a bound broken raises `error("<source>: ...")` as one line. Bad
    YAML raises yaml.YAMLError, as safe_load does, for the caller's own message."""
    if len(text) > MAX_YAML_BYTES:
        raise error(f"{source}: larger than {_mib(MAX_YAML_BYTES)}, the limit for a YAML file")
    loader = _BoundedLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except (_TooDeep, RecursionError):
            raise error(f"{source}: YAML nested more than {MAX_YAML_DEPTH} deep") from None
        if node is None:
            return None
        _check_yaml_nodes(node, source, error)
        return loader.construct_document(node)
    finally:
        loader.dispose()
