"""Pictures of Rune Circle: board images (SVG, PNG, RGB arrays) and the battle replay page.

Needs Pillow for rasters (PNG, arrays); SVG and the replay page need nothing beyond the package.
Imports from rules and battle only (and duck-types a run's state), so envs and scripts may use it.
"""
from .board_image import board_png, board_rgb_array, board_svg, state_rgb_array
from .replay import replay_html

__all__ = ["board_png", "board_rgb_array", "board_svg", "replay_html", "state_rgb_array"]
