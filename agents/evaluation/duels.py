"""Duels between agents: one duel, a match of many with seats alternating, win rates with
intervals, and the win-rate matrix as a picture (matplotlib). Used by the league, exploit.py
and the tests."""
from __future__ import annotations

from typing import Any

import numpy as np

from rune_env.duel import AGENTS, RuneDuelEnv
from rune_env.duel.single import opponent_action

from .runs import wilson

DUEL_SEED_BASE = 2**30      # evaluation duels use seeds from here on; training duels draw below


def match_seed(seed: int, game: int) -> int:
    """The duel seed of game `game` of a match on evaluation seed `seed`."""
    return DUEL_SEED_BASE + seed * 100_003 + game


def play_duel(env: RuneDuelEnv, players: tuple[Any, Any], duel_seed: int,
              agent_seeds: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    """One whole duel of `players` (player_0's agent, player_1's); returns the winner (0, 1 or
    None), the rounds and each player's lamps and wins."""
    obs, _ = env.reset(options={"duel_seed": int(duel_seed)})
    for agent, s in zip(players, agent_seeds):
        agent.reset(seed=int(s))
    n = len(env.table)
    duel = env.duel
    while env.agents:
        actions = {}
        for i, name in enumerate(AGENTS):
            actions[name] = env.wait if duel.waiting[i] else \
                opponent_action(players[i], obs[name], n, state=duel.players[i])
        obs, _r, _term, _trunc, _info = env.step(actions)
    return {"winner": duel.winner, "rounds": duel.round,
            "lamps": [p.lamps for p in duel.players], "wins": [p.wins for p in duel.players]}


def play_match(a: Any, b: Any, games: int, seed: int = 0, duel_kwargs: dict | None = None,
               env: RuneDuelEnv | None = None, progress=None) -> dict[str, Any]:
    """`games` duels of agent `a` against agent `b`: game g on duel seed match_seed(seed, g),
    `a` as player_0 in even games and player_1 in odd ones (each seed is not replayed with the
    seats swapped: a deterministic pair would then only mirror its own result). Returns a's
    wins, losses, draws, its score (wins + draws / 2, per game), and the win and loss rates with
    95% Wilson intervals."""
    env = env or RuneDuelEnv(**(duel_kwargs or {}))
    wins = losses = draws = 0
    for g in range(games):
        a_seat = g % 2
        players = (a, b) if a_seat == 0 else (b, a)
        res = play_duel(env, players, match_seed(seed, g), agent_seeds=(g, g))
        if res["winner"] is None:
            draws += 1
        elif res["winner"] == a_seat:
            wins += 1
        else:
            losses += 1
        if progress is not None:
            progress.update(1)
    return match_summary(wins, losses, draws)


def match_summary(wins: int, losses: int, draws: int) -> dict[str, Any]:
    n = wins + losses + draws
    return {"games": n, "wins": wins, "losses": losses, "draws": draws,
            "score": (wins + draws / 2) / n if n else None,
            "win_rate": wins / n if n else None, "win_ci": list(wilson(wins, n)),
            "loss_rate": losses / n if n else None, "loss_ci": list(wilson(losses, n)),
            # the win rate's interval lies wholly above the loss rate's
            "beats": bool(n and wilson(wins, n)[0] > wilson(losses, n)[1])}


def matrix_image(names: list[str], scores: np.ndarray) -> np.ndarray:
    """The win-rate matrix as an (H, W, 3) uint8 picture for TensorBoard: row i, column j is
    the score of member i against member j (red 0, white 0.5, blue 1; grey: not played), drawn
    by matplotlib (`agents.evaluation.charts.win_matrix_figure`; the charts extra, which the
    train extra brings: an ImportError naming it without)."""
    from .charts import to_array, win_matrix_figure
    return to_array(win_matrix_figure(names, scores))
