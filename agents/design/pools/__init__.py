"""Opponent pools from agents' boards ("ghosts"): drafting them, the recipe file of the shipped
pools (configs/ranks.yaml) and building every rank's pool from it. scripts/make_opponents.py and
scripts/build_pools.py are the command lines over this package (their docstrings say what the
pools are and how they are counted).

- Drafting: `drafting_overrides` (the opponent side's economy of a rank), `make_drafting_agent`,
  `ghosts_of` (one ghost per battle of drafting runs), `tally` (one entry per distinct (round,
  agent, board) with its count), `by_round`, `summary`; `make_agents` and `draft_ghosts`, the
  loop of make_opponents; `metagame_ghosts`, the shipped metagame's boards as ghosts (the
  recipe's `metagame`).
- The recipe file: `load_recipes` reads and validates it into `RankRecipe`s; the file's shape is
  the strict models `RecipeFile`, `DefaultsSpec`, `RankSpec` and `AgentSpec` (pydantic,
  unknown keys refused). A problem is a `RecipeError` naming the file and the key path.
- Building: `build_rank` drafts one rank's pool and its trained shares; `plan_build` checks the
  ranks, the output folder and the policies before anything is drafted; `build_pools` builds
  and writes every rank, refusing a rank whose trained share is short (`shortfalls`).

Modules: `drafting`, `recipes`, `build`; the names above are re-exported here.
"""
from .build import (RAY_CHUNK, BuildError, build_pools, build_rank, plan_build, pool_file,  # noqa: F401
                    scaled_runs, share_table, shortfalls, trained_shares)
from .drafting import (DRAFTING_OPPONENTS, METAGAME, SEED_STRIDE, by_round,  # noqa: F401
                       draft_ghosts, drafting_overrides, ghosts_of, is_trained, make_agents,
                       make_drafting_agent, metagame_ghosts, summary, tally)
from .recipes import (RECIPE_VERSION, AgentRecipe, AgentSpec, DefaultsSpec, RankRecipe,  # noqa: F401
                      RankSpec, RecipeError, RecipeFile, load_recipes, policy_path)
