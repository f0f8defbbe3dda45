"""The run loop: state, the action table, shop, economy, rewards, bosses, relics, ranks,
opponents and the heuristic drafter. Plain rules code; knows nothing of Gymnasium."""
from .actions import Action, ActionTable, action_table
from .loop import (IllegalAction, StepInfo, apply, income, legal_actions, legal_mask, new_run,
                   why_illegal)
from .ranks import RankEffects, rank_effects, rank_index
from .state import RunState, RunStateError

__all__ = ["Action", "ActionTable", "IllegalAction", "RankEffects", "RunState", "RunStateError",
           "StepInfo", "action_table", "apply", "income", "legal_actions", "legal_mask",
           "new_run", "rank_effects", "rank_index", "why_illegal"]
