"""One screen of the terminal game: `view(state)`, the whole run state as the player sees it.

`view(state)` is one screen of an 80 x 24 terminal: the diagram with the status beside it, then
the shop, hand, artifacts, a pending choice and warnings, at most `VIEW_LINES` lines of at most
`WIDTH` columns (the game adds a result line above it and the prompt below it). Used by
`python -m rune_env play` and by the envs' render_mode="ansi".
"""
from __future__ import annotations

from ..rules.geometry import geometry
from ..run.legal import sector_cost
from ..run.loop import income, player_seat
from ..run.ranks import rank_effects
from ..run.state import RunState
from .diagram import (GAP, WIDTH, artifact_codes, beside, board_width, draw_board, rune_code, wrap,
                      wrap_items)
from .words import (boss_hp_text, describe_option, hp_why, modifier_text, placement_warnings,
                    plural)

VIEW_LINES = 21       # lines of one screen: with the typed command and the "ok" line above it
#                       and the prompt below it, 24


# -- the screen -----------------------------------------------------------------------------------
def status_items(state: RunState) -> list[tuple[int, str]]:
    """The status beside the diagram, as (priority, text): counters, max HP and why, the core in
    words, relics, bosses, sectors, actions. When room is short the lowest priorities go
    first. (The side you are in this round's battle is in the screen's header.)"""
    rules = state.rules
    spec = rules.spec
    run = spec.run
    lamps_max = rank_effects(rules, state.rank).lamps
    items = [
        (9, f"mana {state.mana}   income {income(state)} a round   reroll {run.reroll_cost}"),
        (9, f"lamps {state.lamps}/{lamps_max}"
            + (f" (+{state.lamp_saves} feather)" if state.lamp_saves else "")
            + f"   wins {state.wins}/{run.wins_to_clear}   losses {state.losses}"
            f"   draws {state.draws}"),
        (8, "max HP " + hp_why(rules, state.round, state.hp_bonus, state.core, state.relics)),
    ]
    if state.core:
        core = state.core + (f" (element {state.sun_element})" if state.sun_element else "")
        items.append((8, f"core {core}: {modifier_text(rules, spec.cores[state.core])}"))
    else:
        items.append((8, "core not chosen yet"))
    items.append((7, f"relics: {', '.join(state.relics) or 'none'}"))
    now = state.boss_rules
    if now:
        items.append((9, f"BOSS this round: {'+'.join(now)} "
                         f"({'; '.join(modifier_text(rules, spec.boss_rules[b]) for b in now)})"))
        hp = boss_hp_text(rules, state.round, now)
        if hp:
            items.append((8, f"boss max HP {hp}"))
    later = [f"{r} {'+'.join(b)}" for r, b in sorted(state.boss_schedule.items())
             if r > state.round]
    if later:
        items.append((3, "bosses: round " + ", ".join(later[:3])))
    cost = sector_cost(state)
    opened = ", ".join(map(str, sorted(state.open_sectors))) or "none"
    items.append((4, f"sectors open: {opened}"
                     + (f"; the next costs {cost} mana" if cost is not None else "")))
    items.append((5, f"actions {state.prep_actions}/{run.action_cap} this round"))
    return items


def status_lines(state: RunState, width: int, limit: int | None = None) -> list[str]:
    """The status items wrapped to `width`, at most `limit` lines (dropping the lowest
    priorities first)."""
    items = [(p, wrap(text, width, "  ")) for p, text in status_items(state)]
    while limit is not None and sum(len(ls) for _, ls in items) > limit and items:
        low = min(p for p, _ in items)
        i = max(i for i, (p, _) in enumerate(items) if p == low)
        del items[i]
    return [ln for _, ls in items for ln in ls]


def view(state: RunState) -> list[str]:
    """The whole state as the player sees it, on one 80 x 24 screen: the diagram with the status
    beside it, the shop, hand, artifacts, a pending choice and placement warnings (at most
    VIEW_LINES lines of at most WIDTH columns)."""
    rules = state.rules
    spec = rules.spec
    run = spec.run
    geo = geometry(rules.radius)
    art_code = artifact_codes(rules)
    bw = board_width(rules)
    panel_w = WIDTH - bw - GAP
    seat = player_seat(state.round)
    head = [f"== Round {state.round} of {run.round_cap}, {spec.ranks[state.rank].id}, seed "
            f"{state.seed} == you are side {seat}"
            f"{' (first to move)' if seat == 0 else ''}"[:WIDTH].rstrip()]
    diagram = draw_board(rules, state.board, state.artifacts, state.open_sectors, state.core)
    offers = [f"[{i}] sold" if o is None else f"[{i}] {o} {rules.prices[o]}"
              for i, o in enumerate(state.shop_runes)]
    offers += [f"art [{i}] sold" if o is None else f"art [{i}] {o} {spec.artifacts[o].price}"
               for i, o in enumerate(state.shop_artifacts)]
    shop = wrap_items("shop (mana): ", offers)
    hand = wrap_items(f"hand {len(state.hand)}/{state.hand_slots}: ",
                      [f"[{i}] {rune_code(k, g)} {k}" for i, (k, g) in enumerate(state.hand)]
                      or ["empty"])
    inv = [f"[{i}] {a}" for i, a in enumerate(state.artifact_inventory)]
    placed = [f"{art_code[a]}={a} at {geo.name(c)}" for c, a in sorted(state.artifacts.items())]
    if inv:
        inv[0] = "inventory " + inv[0]
    if placed:
        placed[0] = "placed " + placed[0]
    arts = wrap_items(f"artifacts {len(state.artifacts) + len(state.artifact_inventory)}/"
                      f"{state.artifact_slots}: ", inv + placed or ["none"])
    pend = pending_lines(state)
    warnings = [] if pend else [f"! {w}" for w in placement_warnings(rules, state.board)]
    # what must be below the diagram (and a line for warnings); the status may run past the
    # diagram into what is left
    body = pend if pend else shop + hand + arts
    spare = VIEW_LINES - len(head) - len(diagram) - len(body) - (1 if warnings else 0)
    panel = status_lines(state, panel_w, len(diagram) + max(0, spare))
    lines = head + beside(diagram, panel[:len(diagram)], bw) + panel[len(diagram):]
    budget = VIEW_LINES - len(lines)
    if pend:
        # only the choice's options are legal now: it comes first, the shop and hand if room
        out = pend[:budget]
        for part in (shop, hand, arts):
            if len(out) + len(part) <= budget:
                out += part
        return lines + out
    out = body[:budget]
    room = budget - len(out)
    if warnings and room > 0:
        shown: list[str] = []
        for i, w in enumerate(warnings):
            ws = wrap(w, WIDTH, "  ")
            last = i == len(warnings) - 1
            if len(shown) + len(ws) + (0 if last else 1) > room:
                more = len(warnings) - i
                shown.append(f"! {plural(more, 'support')} {'does' if more == 1 else 'do'} "
                             f"nothing{' more' if shown else ''} where they stand: type check")
                break
            shown += ws
        out += shown[:room]
    return lines + out


def pending_lines(state: RunState) -> list[str]:
    pend = state.pending
    if not pend:
        return []
    out = [f"Choose a {pend.kind}: choose N (or its name); info NAME explains one"]
    for i, opt in enumerate(pend.options):
        out += wrap(f"  [{i}] {describe_option(state.rules, pend.kind, opt)}", WIDTH, "      ")
    return out
