"""The message of a rules file that fails the schema: the first problem, key path first, with
the closest allowed key for a typo (`validation_message`)."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from .schema import RulesSpec


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + _key_text(part)
    return out or "<root>"


def _key_text(key) -> str:
    """A key as the message shows it: as written, or quoted with escapes when it is empty or holds
    a character that would break the one-line message (a newline, a tab, a control character)."""
    text = str(key)
    return text if text and text.isprintable() else repr(text)



def validation_message(exc: ValidationError) -> str:
    """The first problem of a rules mapping, key path first (`Rules.from_dict`).

    An unknown key comes first, with the closest allowed key at its place: a typo such as
    `battle.base_hpp` gives ``battle.base_hpp: unknown key (did you mean 'base_hp'?)`` rather than
    the `battle.base_hp: Field required` it also causes (a required key left out at that place is
    preferred as the suggestion, and is not counted as another problem)."""
    import difflib

    errors = exc.errors()
    missing = {(tuple(e["loc"][:-1]), e["loc"][-1]) for e in errors
               if e["type"] == "missing" and e["loc"]}
    unknown = []        # (error, the allowed keys at its place, the suggestion or None)
    for e in errors:
        if e["type"] != "extra_forbidden" or not e["loc"]:
            continue
        parent, key = tuple(e["loc"][:-1]), str(e["loc"][-1])
        allowed = _keys_at(parent) or []
        close = difflib.get_close_matches(key, allowed, n=3, cutoff=0.6)
        close.sort(key=lambda k: (parent, k) not in missing)   # stable: closest first otherwise
        unknown.append((e, allowed, close[0] if close else None))
    explained = {(tuple(e["loc"][:-1]), guess) for e, _, guess in unknown if guess is not None}
    others = len(errors) - 1 - sum(1 for m in missing if m in explained)
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others > 0 else ""
    if unknown:
        err, allowed, guess = unknown[0]
        if guess is not None:
            hint = f" (did you mean {guess!r}?)"
        elif allowed:
            hint = f" (the keys here: {', '.join(allowed)})"
        else:
            hint = ""
        return f"{_path(err['loc'])}: unknown key{hint}{more}"
    err = errors[0]
    if err["type"] == "missing":
        # a top-level key missing: most often a file of changes without its `extends:`
        hint = ("; a file of only the changes starts with `extends: default.yaml`"
                if len(err["loc"]) == 1 else "")
        return f"{_path(err['loc'])}: required key missing{more}{hint}"
    words = _TYPE_WORDS.get(err["type"], err["msg"].removeprefix("Value error, "))
    return f"{_path(err['loc'])}: {words}" \
           f"{_got(err) if err['type'] in _TYPE_WORDS else ''}{more}"


# pydantic's words for a value of the wrong kind, in a rules file's terms: a list given as a
# mapping (as with `ranks: {archmage: ...}`: a list is given whole, it replaces the base's list),
# a section given as a number or left empty (`battle: null`)
_TYPE_WORDS = {
    "tuple_type": "expected a list (given whole: it replaces the extended file's list)",
    "list_type": "expected a list (given whole: it replaces the extended file's list)",
    "model_type": "expected a mapping of keys (a section)",
    "dict_type": "expected a mapping of names",
}


def _got(err: dict) -> str:
    value = err.get("input")
    kind = {dict: "a mapping", list: "a list", type(None): "nothing (null)", str: "text",
            bool: "true/false"}.get(type(value), "a number")
    return f", got {kind}"


def _keys_at(loc: tuple) -> list[str] | None:
    """The keys the schema allows at a pydantic error location (None where it is not a section
    of named keys: a number, a list, a table of free names such as `cores`)."""
    tp = _schema_at(loc)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [field.alias or name for name, field in tp.model_fields.items()]
    return None


def _schema_at(loc: tuple) -> Any:
    """The schema type at a location: RulesSpec's fields by key, dict values by any name, tuple
    items by index (None if the location leaves the schema)."""
    from typing import get_args, get_origin

    tp: Any = RulesSpec
    for part in loc:
        tp = _bare_type(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            tp = next((field.annotation for name, field in tp.model_fields.items()
                       if (field.alias or name) == part), None)
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        elif get_origin(tp) is tuple and isinstance(part, int):
            args = get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                tp = args[0]
            else:
                tp = args[part] if 0 <= part < len(args) else None
        else:
            return None
        if tp is None:
            return None
    return _bare_type(tp)


def _bare_type(tp: Any) -> Any:
    """`tp` without `Annotated[...]` and without `| None`."""
    import types
    from typing import Union, get_args, get_origin

    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp
