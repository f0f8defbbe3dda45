"""The battle: the reference engine, per-rune analysis, results and traces."""
from .analysis import SideSetup, analyse
from .engine import Battle, battle
from .result import BattleResult

__all__ = ["Battle", "BattleResult", "SideSetup", "analyse", "battle"]
