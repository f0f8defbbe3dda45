"""The words of an agent's name, one home for each: what `agents.make_agent` reads, what the
agents it builds parse the rest of their name by, and what the pool tools check names against."""
from rune_env.files import ascii_number

BASELINES = ("random", "scripted", "greedy")
PLANNER = "planner"               # agents.search.planner: planner, planner:KEY=VALUE,... or
#                                   planner:PRESET[,KEY=VALUE,...] (agents.search.settings)
SCHEDULE_PREFIX = "by_round:"     # agents.policy.schedule: agents by round, by_round:1=A;3=B
SAMPLED_PREFIX = "sampled:"       # agents.search.sampled: a policy improved by search at play time


def parse_knobs(name: str, body: str, kinds: dict, what: str, example: str,
                wanted: dict | None = None) -> dict:
    """The knobs of an agent's name, `body` being its KEY=VALUE,... part: KEY -> kinds[KEY](VALUE).
    ValueError with a one-line reason naming `name`: an unknown key (listing `kinds`, with
    `example`), a key given twice, or a value its kind refuses (`wanted[KEY]` says what it
    takes, "a number" by default). `what`: whose knobs, as the error names them."""
    values: dict = {}
    for part in body.split(","):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in kinds:
            raise ValueError(f"agent {name!r}: {what} knobs are KEY=VALUE with KEY one of "
                             f"{', '.join(kinds)} (e.g. {example})")
        if key in values:       # the last would win silently: one of the two is a mistake
            raise ValueError(f"agent {name!r}: the knob {key} is given twice")
        try:
            if kinds[key] is not str:
                ascii_number(value)     # planner:boards=١٠٠ was read as 100
            values[key] = kinds[key](value.strip())
        except ValueError:
            need = (wanted or {}).get(key, "a number")
            raise ValueError(f"agent {name!r}: {key} needs {need}, got {value!r}") from None
    return values


__all__ = ["BASELINES", "PLANNER", "SAMPLED_PREFIX", "SCHEDULE_PREFIX", "parse_knobs"]
