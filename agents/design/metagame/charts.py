"""PNG charts of the metagame and of exploitability (matplotlib's Agg backend: no display), and
the same pictures as arrays for TensorBoard.

matplotlib is an optional extra (`pip install rune-env[charts]`); `charts_problem()` says why
charts cannot be drawn, so a script can refuse the option before any work. Each chart is a
figure builder (`shares_figure`, `matrix_figure`, `exploitability_figure`) written by `save`
or turned into an (H, W, 3) uint8 array by `to_array` (agents/evaluation/charts.py, shared
with the league's chart); `shares_chart` and the others write a PNG.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from agents.evaluation.charts import charts_problem, save, to_array  # noqa: F401 (the scripts')
from agents.evaluation.charts import pyplot as _plt


def _colour(name: str) -> str:
    """A rune kind's or a core's colour as the board pictures draw it (fire orange, earth
    brown, ...), the same in every chart whichever names it holds (they were tab20's by their
    sorted place, so a kind's colour changed with the kinds present)."""
    from rune_env.pictures import glyphs as G
    if name in G.CORE_COLOURS:
        return G.CORE_COLOURS[name]
    if name == "none":                  # no core: the pictures' colour of the coreless board
        return G.CORE_COLOURS[None]
    return G.kind_colour(name)


def _stacked(ax, rounds: Sequence[int], shares: list[dict], title: str) -> None:
    names = sorted({k for s in shares for k, v in s.items() if v > 0})
    bottom = [0.0] * len(rounds)
    labels = [str(r) for r in rounds]
    for name in names:
        vals = [s.get(name, 0.0) for s in shares]
        ax.bar(labels, vals, bottom=bottom, label=name, color=_colour(name),
               edgecolor="white", linewidth=0.4)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_title(title)
    ax.set_xlabel("round")
    ax.set_ylabel("share of the mixture")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))


def shares_chart(rounds: list[dict], path: str | Path, title: str = "") -> Path:
    """Core and kind shares of each round's mixture (`RoundMeta.to_json` dicts), stacked."""
    return save(shares_figure(rounds, title), path)


def shares_figure(rounds: list[dict], title: str = ""):
    plt = _plt()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    numbers = [r["round"] for r in rounds]
    _stacked(a, numbers, [r["shares"]["core"] for r in rounds], "cores")
    _stacked(b, numbers, [r["shares"]["kind"] for r in rounds], "rune kinds")
    fig.suptitle(title or "the metagame's mixture by round")
    fig.tight_layout()
    return fig


def matrix_chart(rounds: list[dict], path: str | Path, title: str = "") -> Path:
    """Each round's payoff matrix among the support (row board's payoff against the column's),
    boards in the mixture's order (heaviest first), as heat maps."""
    return save(matrix_figure(rounds, title), path)


def matrix_figure(rounds: list[dict], title: str = ""):
    plt = _plt()
    fig, axes = plt.subplots(1, len(rounds), figsize=(3.6 * len(rounds), 3.6), squeeze=False)
    image = None
    for ax, r in zip(axes[0], rounds):
        m = r["support_matrix"]
        # blue above one half, red below, as the ladder's and the league's matrices
        image = ax.imshow(m, vmin=0, vmax=1, cmap="RdBu")
        ax.set_title(f"round {r['round']} (support {r['support_size']})")
        ticks = range(len(m))
        ax.set_xticks(list(ticks), [f"{100 * x['weight']:.0f}%" for x in r["mixture"]],
                      fontsize=6, rotation=90)
        ax.set_yticks(list(ticks), [f"{100 * x['weight']:.0f}%" for x in r["mixture"]],
                      fontsize=6)
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="payoff (row vs column)")
    fig.suptitle(title or "payoffs among the support")
    return fig


def exploitability_chart(table: dict[str, dict[int, float]], path: str | Path,
                         title: str = "", players: dict | None = None,
                         shops: dict | None = None, bands: dict | None = None) -> Path:
    """Exploitability (best response's report win rate - 1/2) by round, a line per pool, with
    `bands` ({pool: {round: (low, high)}}, the same - 1/2) its 95% interval shaded; with
    `players` ({pool: {agent: {round: win rate - 1/2}}}), a dashed line per player in its
    pool's colour; with `shops` ({pool: {round: win rate - 1/2}}), the pool's shop-limited best
    (`shop_ceiling.py`, against the ghosts as a run fields them) dotted in its colour."""
    return save(exploitability_figure(table, title, players, shops, bands), path)


PLAYER_MARKERS = "s^vDx+*"


def exploitability_figure(table: dict[str, dict[int, float]], title: str = "",
                          players: dict | None = None, shops: dict | None = None,
                          bands: dict | None = None):
    from matplotlib.ticker import MaxNLocator
    plt = _plt()
    players, shops, bands = players or {}, shops or {}, bands or {}
    # players and shop lines add a line each: the legend goes beside the axes, where it hides none
    fig, ax = plt.subplots(figsize=(8.5, 4) if players or shops else (6.5, 4))
    for name, by_round in table.items():
        rounds = sorted(by_round)
        line, = ax.plot(rounds, [by_round[r] for r in rounds], marker="o", label=name)
        band = bands.get(name, {})
        if band:
            shown = [r for r in rounds if r in band]
            ax.fill_between(shown, [band[r][0] for r in shown], [band[r][1] for r in shown],
                            color=line.get_color(), alpha=0.15, linewidth=0)
        for i, (agent, mine) in enumerate(players.get(name, {}).items()):
            mine_rounds = sorted(mine)
            ax.plot(mine_rounds, [mine[r] for r in mine_rounds], linestyle="--",
                    color=line.get_color(), marker=PLAYER_MARKERS[i % len(PLAYER_MARKERS)],
                    label=f"{name}: {agent}")
        if name in shops:
            shop_rounds = sorted(shops[name])
            ax.plot(shop_rounds, [shops[name][r] for r in shop_rounds], linestyle=":",
                    color=line.get_color(), marker=".", label=f"{name}: shop-limited")
    ax.set_xlabel("round" + (" (shaded: the best response's 95% interval)" if bands else ""))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))     # rounds, not 3.5
    ax.set_ylabel("exploitability (win rate - 0.5)" if not players and not shops
                  else "win rate - 0.5\n(solid: best response; dashed: a player;\n"
                       "dotted: shop-limited)" if shops
                  else "win rate - 0.5 (solid: best response; dashed: a player)")
    # a pool can be below 0 (the best response found on one part loses on the other part), and
    # a player far below: the axis reaches down to the lowest point instead of cutting it off
    values = [v for by_round in table.values() for v in by_round.values()]
    values += [v for agents in players.values() for mine in agents.values()
               for v in mine.values()]
    values += [v for by_round in shops.values() for v in by_round.values()]
    lowest = min(values, default=0.0)
    ax.set_ylim(min(-0.05, lowest - 0.05), 0.55)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.grid(alpha=0.3)
    if players or shops:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        ax.legend(fontsize=8)
    ax.set_title(title or "exploitability by pool and round")
    fig.tight_layout()
    return fig


# the three parts of a player's gap to the best response (--holdings), from the bottom up
GAP_PARTS = (("display", "its play in the round", "tab:green"),
             ("every_kind", "the round's shop", "tab:orange"),
             ("best_response", "its earlier rounds", "tab:red"))


def gap_chart(panels: Sequence[tuple[str, str, list[dict]]], path: str | Path,
              title: str = "") -> Path:
    """Where each player's gap to the best response comes from, by round: a panel per (pool
    name, agent label, `PlayerRound.to_json` dicts with holdings) triple (`gap_figure`)."""
    return save(gap_figure(panels, title), path)


def gap_figure(panels: Sequence[tuple[str, str, list[dict]]], title: str = ""):
    """A panel per (pool, player): by round, four win rates on the report ghosts, bottom to top
    as a rule: the player's own boards, the best board from its holdings with the shop on
    display, the same with every kind on offer, and the best response. The bands between them
    are the gap's parts, its play in the round, the round's shop and its earlier rounds
    (`GAP_PARTS`), filled where the upper line is above the lower one. A part can be negative
    (a player that rerolled beats the display board it held): the lines are drawn too, so a
    crossing shows, and no band is filled there."""
    plt = _plt()
    legend_width = 1.8              # inches beside the panels, where the legend hides none
    width = 4.2 * len(panels) + legend_width
    fig, axes = plt.subplots(1, len(panels), figsize=(width, 3.8), squeeze=False)
    for ax, (pool, agent, rows) in zip(axes[0], panels):
        rows = sorted((r for r in rows if r.get("holdings") and r["best_response"] is not None),
                      key=lambda r: r["round"])
        rounds = [r["round"] for r in rows]
        levels = {"own": [r["win_rate"] for r in rows],
                  "display": [r["holdings"]["display"]["win_rate"] for r in rows],
                  "every_kind": [r["holdings"]["every_kind"]["win_rate"] for r in rows],
                  "best_response": [r["best_response"] for r in rows]}
        lower = levels["own"]
        for key, label, colour in GAP_PARTS:
            upper = levels[key]
            ax.fill_between(rounds, lower, upper, where=[u >= v for u, v in zip(upper, lower)],
                            color=colour, alpha=0.3, label=label, interpolate=True)
            lower = upper
        # each line its own marker and shade too: at the legend's size "--" and "-." looked
        # alike, and the two holdings lines could not be told apart
        for key, label, style, marker, colour in (
                ("best_response", "best response", "-", "o", "black"),
                ("every_kind", "its holdings, every kind", "--", "s", "#555555"),
                ("display", "its holdings, display", ":", "^", "#555555"),
                ("own", "its boards", "-", "o", "tab:blue")):
            ax.plot(rounds, levels[key], style, marker=marker, markersize=3.5, label=label,
                    color=colour, linewidth=1.2)
        ax.set_title(f"{pool}: {agent}", fontsize=9)
        ax.set_xlabel("round")
        ax.set_xticks(rounds)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("win rate on the report ghosts")
    handles, labels = axes[0][-1].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="center right")
    fig.suptitle(title or "where each player's gap to the best response comes from")
    fig.tight_layout(rect=(0, 0, 1 - legend_width / width, 1))
    return fig
