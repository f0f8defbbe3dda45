"""Tools for the game's designers, above evaluation:

- `pools`: the graded opponent pools (drafting ghosts, the recipe file configs/ranks.yaml,
  building the shipped pools).
- `audit`: the balance audit (scripts/balance_audit.py).
- `metagame`: the metagame's double oracle and the pools' exploitability.
"""
