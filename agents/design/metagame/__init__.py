"""Game-theoretic measures of boards: how exploitable a set of boards is, and the metagame of a
round (the mixture of boards no board beats by much).

    results = exploitability(rules, load_pool(path, rules), ExploitSettings(rounds=(3, 6)))
    meta = metagame_round(rules, 6, MetaSettings(rounds=(6,)))

Modules: `solver` (the zero-sum matrix game by linear programming, entropy), `oracle` (the
payoff objective, `PayoffEvaluator`, the player's budget and the best-response search),
`exploitability` (a pool's best response chosen on one part of its ghosts and measured on a
disjoint part), `planner_search` (its second search: the search player's target search from
scratch), `clear_ceiling` (how often a player as good as the best response every round would
clear a run at the pool's rank), `shop_ceiling` (the same for a player who must buy from the
shop, at best: clairvoyant of its own shop views), `players` (the boards players field in runs at a pool's
rank, measured the same way: how close they come to the best response), `double_oracle` (the
generic loop) and `metagame` (the loop over boards, the mixture's statistics, the gap and the
mixture as a pool file). Each module's docstring has its method. Everything random is drawn
from generators seeded from the settings' seed.
"""
from __future__ import annotations

from .clear_ceiling import ClearCeiling, ceiling_rounds, clear_ceiling, clear_chance
from .double_oracle import DoubleOracleResult, double_oracle
from .exploitability import (ExploitSettings, FamilyBest, RoundExploit, exploit_round,
                             exploit_table, exploitability, format_exploit,
                             quick_exploit_settings, split_pool)
from .metagame import (MIXTURE_TOTAL, MetaSettings, RoundMeta, casting_runes, metagame_round,
                       metagame_rounds,
                       mixture_counts, mixture_pool, mixture_shares, quick_meta_settings)
from .oracle import (PayoffEvaluator, PayoffScore, SearchSettings, best_responses,
                     payoff_matrix, player_budget, search_budget, search_starts)
from .planner_search import planner_responses
from .shop_ceiling import ShopCeiling, ShopRound, format_shop_ceiling, shop_ceiling
from .solver import Solution, SolverError, effective_size, entropy, solve_zero_sum

__all__ = [
    "Solution", "SolverError", "solve_zero_sum", "entropy", "effective_size",
    "SearchSettings", "PayoffScore", "PayoffEvaluator", "payoff_matrix", "player_budget",
    "search_budget", "search_starts", "best_responses", "ExploitSettings", "RoundExploit",
    "quick_exploit_settings", "split_pool", "exploit_round", "exploitability", "format_exploit",
    "exploit_table", "FamilyBest", "planner_responses", "ClearCeiling", "ceiling_rounds",
    "clear_ceiling", "clear_chance", "ShopCeiling", "ShopRound", "format_shop_ceiling",
    "shop_ceiling",
    "DoubleOracleResult", "double_oracle", "MIXTURE_TOTAL", "MetaSettings", "RoundMeta",
    "quick_meta_settings", "mixture_counts", "casting_runes", "mixture_shares",
    "metagame_round", "metagame_rounds", "mixture_pool",
]
