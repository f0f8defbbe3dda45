"""Playing agents and measuring them:

- `runs`: whole runs of the run env (`evaluate`, `play_run`, the evaluation seeds, the summary and
  its TensorBoard tags, Wilson intervals, the calibration grading).
- `duels`: matches of two agents in the duel env.
- `ratings`: Bradley-Terry ratings on an Elo scale from game results.
- `board_stats`: the boards agents and pools take into battle.
"""
