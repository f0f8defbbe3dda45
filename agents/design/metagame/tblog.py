"""The metagame's and exploitability's pictures and numbers in TensorBoard (the scripts' --tb DIR).

A run writes one TensorBoard run, DIR/<kind>_<rules hash>_s<seed>/ (its old event files deleted
first, so a rerun replaces its curves instead of mixing with them, and runs of other rules or
seeds sit beside it to compare), through torch's `SummaryWriter` as the trainers do.

The metagame (`log_metagame`): per round, at step = the round, the scalars metagame/gap
(the fresh best response's win rate against the mixture), metagame/gap_payoff,
metagame/support_size, metagame/entropy, metagame/effective_size, metagame/strategies,
metagame/seconds, metagame/alpharank_on_mixture (alpha-Rank's mass on the mixture's boards) and
metagame/alpharank_effective_size; per round r, at step = the double oracle's iteration,
metagame/round_<r>/best_response and metagame/round_<r>/support; and the images
metagame/shares (core and kind shares by round, stacked), metagame/payoff_matrix (the support's
payoffs) and metagame/exploitability (the gap - 1/2 by round).

Exploitability (`log_exploitability`): per pool, at step = the round,
exploitability/<pool>/win_rate, .../ci_low, .../ci_high and .../exploitability; per player
measured against it (`--players`), exploitability/<pool>/player/<agent>/win_rate and .../gap
(with --holdings also .../holdings_display and .../holdings_every_kind);
and the image exploitability/chart (every pool by round, as `--chart` draws it), with
--holdings also exploitability/gap (where each player's gap comes from, as `--gap-chart` draws
it).

It needs TensorBoard (the train extra) and matplotlib (the charts extra): `tb_problem` says which
is missing, so a script refuses --tb before any work.
"""
from __future__ import annotations

from pathlib import Path

from .charts import (charts_problem, exploitability_figure, gap_figure, matrix_figure,
                     shares_figure, to_array)


def tb_problem() -> str | None:
    """Why --tb cannot be used here (a missing extra), or None."""
    try:
        from torch.utils.tensorboard import SummaryWriter  # noqa: F401
    except ImportError:
        return "--tb needs TensorBoard: pip install 'rune-env[train]'"
    return charts_problem()


def run_dir(tb_dir: str | Path, kind: str, rules_hash: str, seed: int) -> Path:
    """DIR/<kind>_<rules hash>_s<seed>, emptied of earlier event files."""
    from agents.evaluation.labels import fresh_tb_run
    return fresh_tb_run(Path(tb_dir) / f"{kind}_{rules_hash}_s{seed}")


def _image(w, tag: str, fig) -> None:
    w.add_image(tag, to_array(fig), 0, dataformats="HWC")


def log_metagame(tb_dir: str | Path, rounds: list[dict], rules_hash: str, seed: int) -> Path:
    """The metagame's rounds (`RoundMeta.to_json` dicts) as the module docstring says; returns
    the run's directory."""
    from torch.utils.tensorboard import SummaryWriter
    d = run_dir(tb_dir, "metagame", rules_hash, seed)
    title = f"rules {rules_hash}, seed {seed}"
    with SummaryWriter(str(d)) as w:
        for r in rounds:
            step, gap = r["round"], r["gap"]
            for tag, value in (("gap", gap["win_rate"]), ("gap_payoff", gap["payoff"]),
                               ("support_size", r["support_size"]), ("entropy", r["entropy"]),
                               ("effective_size", r["effective_size"]),
                               ("strategies", r["strategies"]), ("seconds", r["seconds"]),
                               ("alpharank_on_mixture", r["alpharank"]["on_mixture"]),
                               ("alpharank_effective_size", r["alpharank"]["effective_size"])):
                w.add_scalar(f"metagame/{tag}", value, step)
            for h in r["history"]:
                w.add_scalar(f"metagame/round_{step}/best_response", h["best_response"],
                             h["iteration"])
                w.add_scalar(f"metagame/round_{step}/support", h["support"], h["iteration"])
        if rounds:
            _image(w, "metagame/shares", shares_figure(rounds, title))
            _image(w, "metagame/payoff_matrix", matrix_figure(rounds, title))
            gaps = {"metagame": {r["round"]: r["gap"]["win_rate"] - 0.5 for r in rounds}}
            _image(w, "metagame/exploitability",
                   exploitability_figure(gaps, f"the mixture's gap - 1/2, {title}"))
    return d


def log_exploitability(tb_dir: str | Path, pools: list[tuple[str, list[dict]]],
                       rules_hash: str, seed: int,
                       players: list[tuple[str, str, list[dict]]] = (),
                       ceilings: dict[str, dict] | None = None,
                       shops: dict[str, dict] | None = None) -> Path:
    """Each pool's rounds ((name, `RoundExploit.to_json` dicts) pairs, distinct names) and their
    chart; `players`: (pool name, agent label, `PlayerRound.to_json` dicts) triples, each
    player's win rate and gap to the best response by round beside its pool's; `ceilings`: pool
    name -> `ClearCeiling.to_json`, its point and upper clear and wins ceilings (and those of its
    `fielded` part, `clear_ceiling_fielded` and `wins_ceiling_fielded`) as scalars at step 0 (one
    number a pool and seed: the run's directory names the seed); `shops`: pool name ->
    `ShopCeiling.to_json`, its clear and wins ceilings (`shop_clear_ceiling`,
    `shop_wins_ceiling`, step 0; with the run's core, `shop_core_clear_ceiling` and
    `shop_core_wins_ceiling`) and each round's shop-limited win rate (`shop/win_rate`, by
    round), also drawn in the chart as the pool's dotted line."""
    from torch.utils.tensorboard import SummaryWriter
    d = run_dir(tb_dir, "exploitability", rules_hash, seed)
    table = {name: {r["round"]: r["exploitability"] for r in rounds} for name, rounds in pools}
    with SummaryWriter(str(d)) as w:
        for name, rounds in pools:
            for r in rounds:
                m = r["measured"]
                for tag, value in (("win_rate", m["win_rate"]), ("ci_low", m["ci"][0]),
                                   ("ci_high", m["ci"][1]),
                                   ("exploitability", r["exploitability"])):
                    w.add_scalar(f"exploitability/{name}/{tag}", value, r["round"])
        for name, c in (ceilings or {}).items():
            w.add_scalar(f"exploitability/{name}/clear_ceiling", c["point"], 0)
            w.add_scalar(f"exploitability/{name}/clear_ceiling_upper", c["upper"], 0)
            w.add_scalar(f"exploitability/{name}/wins_ceiling", c["wins"], 0)
            w.add_scalar(f"exploitability/{name}/wins_ceiling_upper", c["wins_upper"], 0)
            if "fielded" in c:          # the same boards as a run fields the ghosts
                w.add_scalar(f"exploitability/{name}/clear_ceiling_fielded",
                             c["fielded"]["point"], 0)
                w.add_scalar(f"exploitability/{name}/wins_ceiling_fielded",
                             c["fielded"]["wins"], 0)
        for name, c in (shops or {}).items():
            w.add_scalar(f"exploitability/{name}/shop_clear_ceiling", c["point"], 0)
            w.add_scalar(f"exploitability/{name}/shop_wins_ceiling", c["wins"], 0)
            w.add_scalar(f"exploitability/{name}/shop_free_clear_ceiling", c["free_point"], 0)
            w.add_scalar(f"exploitability/{name}/shop_free_wins_ceiling", c["free_wins"], 0)
            if "run_core" in c:         # the run's core picked once (`core_bounds`)
                w.add_scalar(f"exploitability/{name}/shop_core_clear_ceiling",
                             c["run_core"]["point"], 0)
                w.add_scalar(f"exploitability/{name}/shop_core_wins_ceiling",
                             c["run_core"]["wins"], 0)
            for r in c["rounds"]:
                w.add_scalar(f"exploitability/{name}/shop/win_rate", r["win_rate"], r["round"])
                w.add_scalar(f"exploitability/{name}/shop/free_win_rate", r["free"]["win"],
                             r["round"])
        for name, agent, rounds in players:
            for r in rounds:
                w.add_scalar(f"exploitability/{name}/player/{agent}/win_rate", r["win_rate"],
                             r["round"])
                if r["gap"] is not None:
                    w.add_scalar(f"exploitability/{name}/player/{agent}/gap", r["gap"],
                                 r["round"])
                for part, held in r.get("holdings", {}).items():
                    w.add_scalar(f"exploitability/{name}/player/{agent}/holdings_{part}",
                                 held["win_rate"], r["round"])
        if table:
            mine: dict = {}
            for name, agent, rounds in players:
                mine.setdefault(name, {})[agent] = {r["round"]: r["win_rate"] - 0.5
                                                    for r in rounds}
            shop = {name: {r["round"]: r["win_rate"] - 0.5 for r in c["rounds"]}
                    for name, c in (shops or {}).items()}
            _image(w, "exploitability/chart",
                   exploitability_figure(table, f"rules {rules_hash}, seed {seed}", mine, shop))
        held = [(name, agent, rounds) for name, agent, rounds in players
                if any(r.get("holdings") for r in rounds)]
        if held:
            _image(w, "exploitability/gap", gap_figure(held, f"rules {rules_hash}, seed {seed}"))
    return d
