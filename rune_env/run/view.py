"""Text views of boards and run states: the hex diagram, the status lines, choices described.

Used by `python -m rune_env play` and by the envs' render_mode="ansi". The diagram: flat-topped
hexes, column = axial q, row = 2r + q (half rows), the core in the middle; a cell shows its rune
as a kind code and grade digit (`Fi2` = fire, grade II), `..` when empty and open, `##` when in a
closed sector; an artifact on a cell adds its lower-case letter (`Fi2w`, `..m`).
"""
from __future__ import annotations

from ..rules.board import Board
from ..rules.config import KINDS, Rules
from ..rules.geometry import geometry
from .loop import income, sector_cost
from .ranks import rank_effects
from .state import RunState


# -- codes and the diagram ----------------------------------------------------------------------
def _unique_codes(names, make) -> dict[str, str]:
    codes: dict[str, str] = {}
    for name in names:
        for cand in make(name):
            if cand not in codes.values():
                codes[name] = cand
                break
        else:  # pragma: no cover - only with very many similar names
            raise ValueError(f"no unique code for {name!r}")
    return codes


def _rune_candidates(name: str):
    letters = name.replace("_", "")
    for ch in letters[1:]:
        yield letters[0].upper() + ch.lower()
    for a in "abcdefghijklmnopqrstuvwxyz":
        yield letters[0].upper() + a


def _artifact_candidates(name: str):
    words = name.split("_")
    for w in words:
        yield w[0].lower()
    for ch in name.replace("_", ""):
        yield ch.lower()
    yield from "abcdefghijklmnopqrstuvwxyz"


RUNE_CODES: dict[str, str] = _unique_codes(KINDS, _rune_candidates)


def artifact_codes(rules: Rules) -> dict[str, str]:
    return _unique_codes(list(rules.spec.artifacts), _artifact_candidates)


def rune_code(kind: str, grade: int) -> str:
    """`Fi2` for fire grade II."""
    return f"{RUNE_CODES[kind]}{grade}"


def _core_token(core: str | None) -> str:
    return "(" + (core[:3].capitalize() if core else "--") + ")"


def draw_board(rules: Rules, runes: dict[int, tuple[str, int]], artifacts: dict[int, str],
               open_sectors, core: str | None, names: bool = False) -> list[str]:
    """The hex diagram, one string per line: 2*radius+1 columns of flat-topped hexes, a cell's
    neighbours in the next column half a row up or down. With `names`, cells show "ring:index"."""
    geo = geometry(rules.radius)
    R = geo.radius
    width = 6
    art_code = artifact_codes(rules)
    rows = [[" "] * ((2 * R + 1) * width) for _ in range(4 * R + 1)]

    def put(q: int, r: int, token: str) -> None:
        row = rows[2 * r + q + 2 * R]
        x = (q + R) * width + (width - len(token)) // 2
        row[x:x + len(token)] = list(token)

    put(0, 0, _core_token(core))
    for cell in range(geo.n_cells):
        q, r = geo.coords[cell]
        if names:
            token = geo.name(cell)
        else:
            sec = geo.sector[cell]
            if cell in runes:
                token = rune_code(*runes[cell])
            elif sec >= 0 and sec not in open_sectors:
                token = "##"
            else:
                token = ".."
            if cell in artifacts:
                token += art_code[artifacts[cell]]
        put(q, r, token)
    return ["".join(row).rstrip() for row in rows]


def board_lines(rules: Rules, board: Board) -> list[str]:
    return draw_board(rules, board.runes, board.artifacts, board.open_sectors, board.core)


# -- describing things --------------------------------------------------------------------------
def _modifier_text(model) -> str:
    data = model.model_dump(exclude_defaults=True)
    data.pop("price", None)
    if not data:
        return "no effect"
    parts = []
    for k, v in data.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a} x{b:g}" for a, b in v.items())
        elif isinstance(v, float):
            v = f"{v:g}"
        parts.append(f"{k} {v}")
    return "; ".join(parts)


def describe_option(rules: Rules, kind: str, option: str) -> str:
    spec = rules.spec
    run = spec.run
    if kind == "core":
        return f"{option}: {_modifier_text(spec.cores[option])}"
    if kind == "relic":
        return f"{option}: {_modifier_text(spec.relics[option])}"
    if option == "mana":
        return f"mana: +{run.reward_mana} mana"
    if option == "hand_slot":
        return f"hand_slot: +{run.reward_hand_slots} hand slot"
    if option == "artifact_slot":
        return f"artifact_slot: +{run.reward_artifact_slots} artifact slot"
    if option == "base_stat":
        return f"base_stat: max HP +{run.reward_base_stat_hp_x:.0%}"
    if option.startswith("artifact:"):
        art = option.split(":", 1)[1]
        return f"{option}: a free {art} ({_modifier_text(spec.artifacts[art])})"
    return option


def fmt(x: float) -> str:
    return f"{x:.1f}"


def view(state: RunState) -> list[str]:
    """The whole state as the player sees it: board, status, shop, hand, artifacts."""
    rules = state.rules
    spec = rules.spec
    run = spec.run
    geo = geometry(rules.radius)
    art_code = artifact_codes(rules)
    lines = [f"== Round {state.round} ({rules.spec.ranks[state.rank].id}) =="]
    lines += draw_board(rules, state.board, state.artifacts, state.open_sectors, state.core)
    lamps_max = rank_effects(rules, state.rank).lamps
    lines.append(f"mana {state.mana}   lamps {state.lamps}/{lamps_max}"
                 + (f" (+{state.lamp_saves} saved by feather)" if state.lamp_saves else "")
                 + f"   wins {state.wins}/{run.wins_to_clear}   losses {state.losses}"
                 f"   draws {state.draws}   max HP {state.max_hp:g}   income {income(state)}")
    core = state.core or "not chosen"
    if state.sun_element:
        core += f" (element {state.sun_element})"
    lines.append(f"core {core}   relics: {', '.join(state.relics) or 'none'}")
    now = state.boss_rules
    bosses = [f"round {r}: {'+'.join(b)}" for r, b in sorted(state.boss_schedule.items())
              if r > state.round]
    lines.append("boss: " + (f"this round's opponent is a boss with {'+'.join(now)}" if now
                                else "none this round")
                 + ("; next " + ", ".join(bosses[:3]) if bosses else ""))
    shop = []
    for i, offer in enumerate(state.shop_runes):
        shop.append(f"[{i}] sold" if offer is None else
                    f"[{i}] {offer} {RUNE_CODES[offer]}1 {rules.prices[offer]}m")
    lines.append("shop: " + "  ".join(shop))
    arts = []
    for i, offer in enumerate(state.shop_artifacts):
        arts.append(f"[{i}] sold" if offer is None else
                    f"[{i}] {offer} {spec.artifacts[offer].price}m ({_modifier_text(spec.artifacts[offer])})")
    lines.append("      artifacts: " + ("  ".join(arts) or "none")
                 + f"   reroll {run.reroll_cost}m")
    hand = "  ".join(f"[{i}] {rune_code(k, g)} {k}" for i, (k, g) in enumerate(state.hand))
    lines.append(f"hand {len(state.hand)}/{state.hand_slots}: {hand or 'empty'}")
    inv = "  ".join(f"[{i}] {a}" for i, a in enumerate(state.artifact_inventory))
    placed = ", ".join(f"{art_code[a]}={a} at {geo.name(c)}" for c, a in sorted(state.artifacts.items()))
    lines.append(f"artifacts {len(state.artifacts) + len(state.artifact_inventory)}/"
                 f"{state.artifact_slots}: inventory {inv or 'empty'}; placed {placed or 'none'}")
    cost = sector_cost(state)
    closed = [s for s in range(6) if s not in state.open_sectors]
    lines.append(f"sectors open: {', '.join(map(str, sorted(state.open_sectors))) or 'none'}"
                 + (f"; next opening costs {cost}m (closed: {', '.join(map(str, closed))})"
                    if cost is not None and closed else ""))
    lines.append(f"actions this round: {state.prep_actions}/{run.action_cap}")
    lines += pending_lines(state)
    return lines


def pending_lines(state: RunState) -> list[str]:
    pend = state.pending
    if not pend:
        return []
    out = [f"Choose a {pend['kind']} (choose N):"]
    for i, opt in enumerate(pend["options"]):
        out.append(f"  [{i}] {describe_option(state.rules, pend['kind'], opt)}")
    return out
