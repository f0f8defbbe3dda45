"""Text pictures of a board and a run state (the envs' render_mode="ansi", and `play`).

The circle drawn with flat-topped hexes: column = axial q, row = 2r + q (half rows), so each
cell sits between its neighbours above and below. A cell reads `Fi2` (fire, grade II), `..`
(empty, open), `##` (closed sector); a trailing `*`, `+`, `$` or `&` marks a ward stone, mana
spring, mana furnace or scapegoat doll. The core shows its school's initial in brackets.
"""
from __future__ import annotations

from ..rules.board import Board
from ..rules.geometry import geometry

KIND_CODES = {"fire": "Fi", "wind": "Wi", "water": "Wa", "earth": "Ea", "thunder": "Th",
              "dark": "Da", "light": "Li", "ice": "Ic", "amplify": "Am", "resonator": "Re",
              "delay": "De", "node": "No", "mimic": "Mi"}
ARTIFACT_MARKS = {"ward_stone": "*", "mana_spring": "+", "mana_furnace": "$", "scapegoat_doll": "&"}
CELL_WIDTH = 5


def cell_code(rune: tuple[str, int] | None, artifact: str | None, open_: bool) -> str:
    if not open_:
        text = "##"
    elif rune is None:
        text = ".."
    else:
        text = f"{KIND_CODES[rune[0]]}{rune[1]}"
    if artifact is not None:
        text += ARTIFACT_MARKS.get(artifact, "?")
    return text


def draw_board(board: Board, radius: int = 3, labels: bool = False) -> str:
    """The hex diagram of a board (with `labels`, each cell shows its name instead)."""
    geo = geometry(radius)
    rows = 4 * radius + 1
    cols = (2 * radius + 1) * CELL_WIDTH
    grid = [[" "] * cols for _ in range(rows)]

    def put(q: int, r: int, text: str) -> None:
        row = 2 * r + q + 2 * radius
        col = (q + radius) * CELL_WIDTH
        for i, ch in enumerate(text[:CELL_WIDTH - 1]):
            grid[row][col + i] = ch

    core = (board.core or "-")[0].upper()
    put(0, 0, f"({core})")
    for c in range(geo.n_cells):
        q, r = geo.coords[c]
        if labels:
            put(q, r, geo.name(c))
            continue
        s = geo.sector[c]
        open_ = s < 0 or s in board.open_sectors
        put(q, r, cell_code(board.runes.get(c), board.artifacts.get(c), open_))
    return "\n".join("".join(row).rstrip() for row in grid)


def render_state(state, last_battle: dict | None = None) -> str:
    """A run state as text: the board, hand, shop, and the counters."""
    rules = state.rules
    lines = [draw_board(state.to_board(), rules.radius), ""]
    core = state.core or "(not chosen)"
    if state.sun_element:
        core += f" as {state.sun_element}"
    lines.append(f"round {state.round}  mana {state.mana}  lamps {state.lamps}  wins {state.wins}  "
                 f"losses {state.losses}  draws {state.draws}  core {core}")
    hand = ", ".join(f"{i}:{k} {g}" for i, (k, g) in enumerate(state.hand)) or "-"
    lines.append(f"hand ({len(state.hand)}/{state.hand_slots}): {hand}")
    shop = ", ".join(f"{i}:{o} ({rules.prices[o]})" if o else f"{i}:-"
                     for i, o in enumerate(state.shop_runes))
    arts = ", ".join(f"{i}:{o} ({rules.spec.artifacts[o].price})" if o else f"{i}:-"
                     for i, o in enumerate(state.shop_artifacts))
    lines.append(f"shop: {shop} | artifacts: {arts}")
    if state.artifact_inventory:
        lines.append("artifact inventory: " + ", ".join(
            f"{i}:{a}" for i, a in enumerate(state.artifact_inventory)))
    if state.relics:
        lines.append("relics: " + ", ".join(state.relics))
    upcoming = sorted((r, v) for r, v in state.boss_schedule.items() if r >= state.round)
    if upcoming:
        r, v = upcoming[0]
        lines.append(f"next boss: round {r} ({', '.join(v)})")
    if state.pending:
        lines.append(f"choose a {state.pending['kind']}: " + ", ".join(
            f"{i}:{o}" for i, o in enumerate(state.pending["options"])))
    if last_battle:
        b = last_battle
        lines.append(f"last battle (round {b['round']}): {b['outcome']} at {b['time']:.1f} s, "
                     f"HP {b['hp'][0]:.0f}/{b['max_hp'][0]:.0f} vs {b['hp'][1]:.0f}/{b['max_hp'][1]:.0f}")
    if state.over:
        lines.append("run cleared" if state.cleared else "run over")
    return "\n".join(lines)
