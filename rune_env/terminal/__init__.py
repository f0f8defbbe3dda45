"""The terminal game: `python -m rune_env play` (play.py), its screens (diagram.py: the board
diagram and text layout; words.py: the rules in words; screen.py: one screen of a run state) and
the player's profile (profile.py)."""
