"""The project's own checks, on top of everything else in agents/: `bench` (scripts/benchmark.py),
`mutation` (scripts/mutation_check.py) and `parity` (the two battle engines compared)."""
