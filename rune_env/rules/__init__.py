"""Rules of Rune Circle: the config, the hex geometry and the board. Knows nothing of the run,
the battle loop or Gymnasium."""
from .board import Board, BoardError, load_board, save_board
from .config import (ATTACK_KINDS, CASTING_KINDS, KINDS, SUPPORT_KINDS, Rules, RulesError,
                     default_rules, load_rules)
from .geometry import Geometry, geometry

__all__ = ["ATTACK_KINDS", "Board", "BoardError", "CASTING_KINDS", "Geometry", "KINDS",
           "Rules", "RulesError", "SUPPORT_KINDS", "default_rules", "geometry", "load_board",
           "load_rules", "save_board"]
