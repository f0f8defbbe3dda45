"""Board search: the primitives every board search shares (`boards`: layouts, what a run pays
for a board, the mutator and the hill climb) and the search player built on them (`planner`,
with `rolling`: its lookahead on whether one more view of the shop pays);
`sampled`: a trained policy improved by search at play time, scored with the same reference
boards and scorer."""
