"""The run loop: state, the action table, legality, shop, economy, rewards, bosses, relics,
ranks, opponents and the heuristic drafter. Plain rules code; knows nothing of Gymnasium.
`apply(state, a, default_opponents(state.rules))` plays against the budget drafter."""
from .actions import Action, ActionTable, action_table
from .legal import legal_actions, legal_mask, why_illegal
from .loop import ApplyResult, IllegalAction, apply, income, new_draft, new_run
from .opponents import default_opponents
from .ranks import RankEffects, rank_effects, rank_index
from .state import BattleSummary, PendingChoice, RunState, RunStateError

__all__ = ["Action", "ActionTable", "ApplyResult", "BattleSummary", "IllegalAction",
           "PendingChoice", "RankEffects", "RunState", "RunStateError", "action_table", "apply",
           "default_opponents", "income", "legal_actions", "legal_mask", "new_draft", "new_run",
           "rank_effects", "rank_index", "why_illegal"]
