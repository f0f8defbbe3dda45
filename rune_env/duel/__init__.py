"""RuneDuel: two players, each with a whole run, whose boards fight each other every round.

    from rune_env import duel
    env = duel.parallel_env(rank="apprentice")        # PettingZoo Parallel API
    aec = duel.env()                                   # AEC, through PettingZoo's conversion
    single = duel.DuelVsAgent(opponent=GreedyAgent())  # one player's Gymnasium view, for SB3

The rules of a duel are in rune_env/run/duel.py, the env's spec in `RuneDuelEnv`'s docstring
and docs/ENVS.md ("RuneDuel").
"""
from __future__ import annotations

from pettingzoo.utils.conversions import parallel_to_aec

from .env import AGENTS, RuneDuelEnv, max_duel_steps
from .observation import DuelEncoder
from .single import DuelVsAgent


def parallel_env(**kwargs) -> RuneDuelEnv:
    """The duel in the Parallel API (keywords: `RuneDuelEnv`'s options)."""
    return RuneDuelEnv(**kwargs)


def env(**kwargs):
    """The duel in the AEC API: PettingZoo's `parallel_to_aec` over `parallel_env(**kwargs)`
    (agents act in turn, player_0 first; the battle is fought once both have acted)."""
    return parallel_to_aec(parallel_env(**kwargs))


raw_env = parallel_env

__all__ = ["AGENTS", "DuelEncoder", "DuelVsAgent", "RuneDuelEnv", "env", "max_duel_steps",
           "parallel_env", "raw_env"]
