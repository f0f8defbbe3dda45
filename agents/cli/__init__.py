"""The command-line pieces the scripts share, below everything else in agents/ (they import
only agents.policy):

- `args`: the parser that reports a bad command line in one line, the checked argument types and
  the options several scripts share (seeds, counts, jobs, rules, --json, ...).
- `progress`: the --progress switch and its bars.
- `fanout`: --ray and `run_tasks`, independent tasks played here or as Ray tasks.
- `provenance`: where the checkout is, its commit, file hashes and repository-relative names,
  for the provenance that built files record.
"""
