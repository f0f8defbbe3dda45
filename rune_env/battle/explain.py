"""Why a board is strong: every rune's power at battle start and the multipliers that make it."""
from __future__ import annotations

from typing import Any

from ..rules.board import Board
from ..rules.config import Rules, default_rules
from .analysis import SideSetup, affinity_multipliers, analyse
from .dice import die_for_power, magic_value


def explain(board: Board, rules: Rules | None = None, against: Board | None = None,
            variant: str | None = None) -> dict[str, Any]:
    """{"cells": {"1:0": {"kind", "grade", "power", "multipliers": {name: value}}}, ...}.

    `power` follows RULES D-12 (null for supports, which never cast); `grade` is the effective
    grade. A rune whose amplifies multiply past the cap (D-54) has "amplify_cap" among its
    multipliers in their place and "amplify_capped": {"product", "cap"}. With `against`, attacking runes also get "affinity" among their multipliers (applied
    per hit, so not part of `power`) and "hit" = power x affinity at t = 0.

    With the dice variant (`variant`, None: the rules' `variant`), every casting rune also gets
    "dice": {"pl", "rank", "die", "table", "mean"}: its power level ⌊power / 4⌋ and the die it rolls
    at battle start (D-46: the strong table for attacks, the weak one for healing and barrier).
    """
    rules = rules or default_rules()
    dice = rules.spec.dice if (variant or rules.spec.variant) == "dice" else None
    setup = SideSetup.of(board, rules)
    occ = [board.runes.get(c) for c in range(setup.geo.n_cells)]
    analysis = analyse(setup, occ, [False] * setup.geo.n_cells)
    affinity = affinity_multipliers(rules, SideSetup.of(against, rules)) if against else None
    cells: dict[str, Any] = {}
    for c in sorted(board.runes):
        kind, _ = board.runes[c]
        entry: dict[str, Any] = {"kind": kind, "grade": analysis.effective_grade[c], "power": None,
                                 "multipliers": {}}
        rp = analysis.powers.get(c)
        if rp is not None:
            entry["power"] = rp.power
            entry["multipliers"] = dict(rp.multipliers)
            if rp.flows:
                entry["flows"] = dict(rp.flows)
            if rp.amplify_uncapped is not None:
                # D-54: the amplifies' product and the cap that replaced it in "multipliers"
                entry["amplify_capped"] = {"product": rp.amplify_uncapped,
                                           "cap": rules.spec.runes.amplify.max_factor}
            if affinity is not None and kind in affinity:
                entry["multipliers"]["affinity"] = affinity[kind]
                entry["hit"] = rp.power * affinity[kind]
            if dice is not None:
                strong = kind in rules.attack_kinds
                pl, die = die_for_power(rp.power, dice, strong)
                entry["dice"] = {"pl": pl, "rank": die.rank, "die": die.name(),
                                 "table": "strong" if strong else "weak", "mean": die.mean}
        if c in analysis.amplify_factor:
            entry["factor"] = analysis.amplify_factor[c]
        if c in analysis.resonance and rp is None:
            entry["multipliers"]["resonance"] = analysis.resonance[c]
        if setup.wards[c]:
            entry["wards"] = setup.wards[c]
        cells[setup.geo.name(c)] = entry
    report = {
        "cells": cells,
        "interval_ms": setup.interval_ms,
        # D-50: the turns of a cycle (turn cells and rest turns) and the rest turns among them
        "turn_cells": len(setup.turn_cells),
        "cycle_turns": setup.cycle_turns,
        "rest_turns": setup.rest_turns,
        "max_hp": setup.max_hp,
        "seal_cap": setup.seal_cap,
        "erosions_per_cycle": setup.erosions_per_cycle,
        "reflect": analysis.reflect,
    }
    if dice is not None:
        report["magic"] = magic_value(board.round, dice)   # D-47: M for the board's round
    return report


def format_explain(report: dict[str, Any]) -> str:
    lines = [f"{'cell':<5} {'kind':<10} {'gr':>2} {'power':>9}  multipliers"]
    for name, e in report["cells"].items():
        power = "-" if e["power"] is None else f"{e['power']:.3f}"
        mults = "  ".join(f"{k} x{v:.4g}" for k, v in e["multipliers"].items())
        extra = []
        if "factor" in e:
            extra.append(f"amplify factor x{e['factor']:.4g}")
        if "amplify_capped" in e:
            a = e["amplify_capped"]
            extra.append(f"amplifies x{a['product']:.4g} capped at x{a['cap']:.4g}")
        if "hit" in e:
            extra.append(f"hit {e['hit']:.3f}")
        if "wards" in e:
            extra.append(f"wards {e['wards']}")
        if "dice" in e:
            d = e["dice"]
            extra.append(f"PL {d['pl']} {d['die']} ({d['table']})")
        if extra:
            mults = (mults + "  " if mults else "") + "(" + ", ".join(extra) + ")"
        lines.append(f"{name:<5} {e['kind']:<10} {e['grade']:>2} {power:>9}  {mults}")
    lines.append(f"interval {report['interval_ms']} ms, max HP {report['max_hp']:g}, "
                 f"seal cap {report['seal_cap']}, erosions per cycle {report['erosions_per_cycle']}, "
                 f"reflect {report['reflect']:.0%}"
                 + (f", magic value M {report['magic']:g}" if "magic" in report else ""))
    if report["rest_turns"]:
        # D-50: a board with fewer turn cells than the minimum cycle rests; say what that costs
        n, m = report["turn_cells"], report["cycle_turns"]
        lines.append(f"{report['rest_turns']} rest turns a cycle: a cycle lasts at least {m} "
                     f"turns and this board casts in {n} of them ({n} casting rune"
                     f"{' has' if n == 1 else 's have'} turns), so each casts once every "
                     f"{m * report['interval_ms']} ms; the erosions come after the rest turns")
    return "\n".join(lines)
