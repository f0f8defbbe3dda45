"""The run loop: start a run, apply actions, fight the round's battle. Plain rules code, no
Gymnasium.

    state = new_run(seed=1)                        # a pending core choice comes first
    mask = legal_mask(state)                       # bool per action id
    result = apply(state, action_id, opponents)    # mutates state; `ready` fights the battle

A round: (relic choice after a boss win) -> income -> new shop -> (reward choice every 3rd round
from round 4) -> preparation actions -> ready -> battle -> next round. When an action is legal
is stated once, in legal.py (`why_illegal`, `legal_mask`, re-exported here as the loop's
answers); what it does is stated here, one small effect per action group (`EFFECTS`); `apply`
raises `IllegalAction` with legal.py's reason. The battle is fought against the opponent source
the caller gives (any `OpponentSource`; `rune_env.run.opponents.default_opponents(rules)` is the
budget drafter): the loop imports no opponents. `new_draft` is a state for drafting one round's
board (RuneDraft-v0's episodes, drafted opponents).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..battle.analysis import SideSetup, analyse
from ..battle.engines import battle_function
from ..battle.result import BattleResult
from ..files import shown
from ..rules.board import Board
from ..rules.config import CASTING_KINDS, KINDS, Rules, default_rules
from ..rules.geometry import geometry
from .actions import ActionTable, action_table
from .legal import CHOICE_GROUPS, open_cells, sector_cost, why_illegal
from .legal import is_open, legal_actions, legal_mask  # noqa: F401  (the loop's answers too)
from .ranks import RankEffects, opponent_budget, rank_effects, rank_index
from .rewards import ARTIFACT, RewardOption, offered_order
from .state import BattleSummary, PendingChoice, RunState


class IllegalAction(ValueError):
    """An action that is not legal in this state; the message says why."""


OpponentSource = Callable[[int, RankEffects, list, np.random.Generator], Board]
BattleFn = Callable[[Board, Board, Rules], BattleResult]


@dataclass
class ApplyResult:
    """What one applied action did."""

    action: int
    name: str
    battle: BattleSummary | None = None   # if the action was (or forced) `ready`
    forced_ready: bool = False            # the round's last preparation action (D-41)
    ready: bool = False                   # the round's preparation ended (`ready` or the cap)


# -- start --------------------------------------------------------------------------------------
def new_run(seed: int, rules: Rules | None = None, rank: int | str = 0, core: str | None = None,
            unlocked: list[str] | None = None) -> RunState:
    """A new run. With `core` given the core is fixed, else the first action chooses it.
    `unlocked` restricts the shop's rune kinds (default: every kind, the research setting)."""
    rules = rules or default_rules()
    spec = rules.spec
    r = rank_index(rules, rank)
    effects = rank_effects(rules, r)
    kinds = list(unlocked) if unlocked is not None else list(KINDS)
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"unknown rune kind {k!r} in unlocked")
    state = RunState(rules=rules, seed=int(seed), rank=r, rng=np.random.default_rng(seed),
                     mana=spec.run.start_mana, hand_slots=spec.run.hand_slots,
                     artifact_slots=spec.run.artifact_slots, lamps=effects.lamps,
                     unlocked=kinds)
    state.boss_schedule = boss_schedule(rules, effects, state.rng)
    if core is not None:
        set_core(state, core)
    else:
        state.pending = PendingChoice("core", list(spec.cores))
    _start_round(state, first=True)
    return state


def boss_schedule(rules: Rules, effects: RankEffects, rng: np.random.Generator) -> dict[int, list[str]]:
    """D-43: the boss rules of every boss round (every `run.boss_every`-th), drawn when the run
    starts: `effects.boss_rule_count` distinct rules a round."""
    spec = rules.spec
    boss_names = list(spec.boss_rules)
    count = min(effects.boss_rule_count, len(boss_names))
    schedule = {}
    for rnd in range(spec.run.boss_every, spec.run.round_cap + 1, spec.run.boss_every):
        picks = rng.choice(len(boss_names), size=count, replace=False)
        schedule[rnd] = [boss_names[int(i)] for i in picks]
    return schedule


def new_draft(seed: int, rules: Rules | None = None, round_: int = 1, budget: int | None = None,
              rank: int | str = 0, core: str | None = None, unlocked: list[str] | None = None,
              board: Board | None = None, later_bosses: bool = True) -> RunState:
    """A state to draft one round's board from: a new run moved to round `round_`, with `budget`
    mana (default: that round's opponent budget at `rank`, D-44) and a fresh shop.

    `board` starts it from that board: its runes, artifacts, open sectors, relics and hand (as
    many runes as the hand has slots), and its core and element unless `core` is given.
    `later_bosses=False` keeps only this round's boss rules in the schedule (RuneDraft-v0: an
    episode of one round has no boss to come); the drafted opponents keep the whole schedule."""
    rules = rules or default_rules()
    state = new_run(seed, rules, rank=rank, core=core, unlocked=unlocked)
    state.round = round_
    if not later_bosses:
        state.boss_schedule = {r: v for r, v in state.boss_schedule.items() if r == round_}
    state.mana = budget if budget is not None else \
        opponent_budget(rules, round_, rank_effects(rules, state.rank))
    if board is not None:
        state.board = dict(board.runes)
        state.artifacts = dict(board.artifacts)
        state.open_sectors = sorted(board.open_sectors)
        state.relics = list(board.relics)
        if board.core is not None and state.core is None:
            set_core(state, board.core)
            state.pending = None            # the board's core, not a choice
            state.sun_element = board.sun_element
        state.hand = list(board.hand)[: state.hand_slots]   # after the core: a tree's slot counts
    draw_shop(state)
    return state


def end_run(state: RunState) -> None:
    """End the run where it stands (RuneDraft-v0 ends after its one battle, whatever the run
    would do next)."""
    state.over = True


def set_core(state: RunState, core: str) -> None:
    spec = state.rules.spec
    if core not in spec.cores:
        raise ValueError(f"unknown core {core!r} (one of {', '.join(spec.cores)})")
    state.core = core
    mod = spec.cores[core]
    state.hand_slots = min(spec.run.hand_slots_max, state.hand_slots + mod.hand_slots)
    # DECISION: a flowing (sun) core starts as the first element; the player may change it.
    state.sun_element = CASTING_KINDS[0] if mod.core_flow_strength > 0 else None


def income(state: RunState) -> int:
    """D-38: base income + furnaces + relics + the rank's delta (never below 0)."""
    spec = state.rules.spec
    geo = geometry(state.rules.radius)
    total = spec.run.income + rank_effects(state.rules, state.rank).income_delta
    for cell, art in state.artifacts.items():
        per = spec.artifacts[art].income_per_runes
        if per > 0:
            total += sum(1 for c in geo.reach(cell) if c in state.board) // per
    for relic in state.relics:
        total += spec.relics[relic].income
    return max(0, total)


def _start_round(state: RunState, first: bool = False) -> None:
    spec = state.rules.spec
    if not first:
        state.mana += income(state)
    draw_shop(state)
    state.prep_actions = 0
    run = spec.run
    if state.round >= run.reward_first_round and (state.round - run.reward_first_round) % run.reward_every == 0:
        _queue_choice(state, PendingChoice("reward", _reward_options(state)))


def _queue_choice(state: RunState, choice: PendingChoice) -> None:
    if not choice.options:
        return
    if state.pending is None:
        state.pending = choice
    else:
        state.pending.queue.append(choice)


def _next_choice(state: RunState) -> None:
    pend = state.pending
    state.pending = None
    if pend is not None and pend.queue:
        nxt, *rest = pend.queue
        nxt.queue = rest
        state.pending = nxt


def draw_shop(state: RunState) -> None:
    state.shop_runes, state.shop_artifacts = draw_view(state.rules, state.unlocked, state.rng)


def draw_view(rules: Rules, kinds: Sequence[str], rng: np.random.Generator
              ) -> tuple[list[str], list[str]]:
    """One view of the shop: `run.shop_rune_offers` runes uniformly from `kinds`, then
    `run.shop_artifact_offers` artifacts uniformly from the rules' artifacts, in that order."""
    run, arts = rules.spec.run, list(rules.spec.artifacts)
    runes = [kinds[int(i)] for i in rng.integers(0, len(kinds), run.shop_rune_offers)]
    return runes, [arts[int(i)] for i in rng.integers(0, len(arts), run.shop_artifact_offers)]


CHOICE_DRAWS = {"reward": 0, "relic": 1}   # a duel's shared choice generators, by kind


def _choice_rng(state: RunState, kind: str) -> np.random.Generator:
    """The generator a reward or relic choice draws its options from: the run's own, or in a
    duel (`state.choice_seed` set) one seeded by (choice seed, round, kind), the same for both
    players, so they are offered the same draws (rune_env/run/duel.py)."""
    if state.choice_seed is None:
        return state.rng
    return np.random.default_rng([state.choice_seed, state.round, CHOICE_DRAWS[kind]])


def _reward_options(state: RunState) -> list[str]:
    """D-42: distinct categories; only those that can apply now are drawn (a DECISION: a full
    hand or artifact slot maximum removes that category rather than offering a dead option)."""
    spec = state.rules.spec
    rng = _choice_rng(state, "reward")
    cats = [RewardOption("mana"), RewardOption("base_stat")]
    if state.artifacts_held < state.artifact_slots:
        arts = list(spec.artifacts)
        cats.append(RewardOption(ARTIFACT, arts[int(rng.integers(len(arts)))]))
    if state.hand_slots < spec.run.hand_slots_max:
        cats.append(RewardOption("hand_slot"))
    if state.artifact_slots < spec.run.artifact_slots_max:
        cats.append(RewardOption("artifact_slot"))
    cats.sort(key=offered_order)
    k = min(spec.run.reward_choices, len(cats))
    picks = sorted(int(i) for i in rng.choice(len(cats), size=k, replace=False))
    return [str(cats[i]) for i in picks]


def _relic_options(state: RunState) -> list[str]:
    spec = state.rules.spec
    free = [r for r in spec.relics if r not in state.relics]
    k = min(spec.run.relic_choices, len(free))
    rng = _choice_rng(state, "relic")
    picks = sorted(int(i) for i in rng.choice(len(free), size=k, replace=False)) if k else []
    return [free[i] for i in picks]


# -- applying -----------------------------------------------------------------------------------
DICE_SEED_LIMIT = 2**32   # the dice variant's per-battle seeds (D-49 keys take seed * 2^32)


def apply(state: RunState, action: int, opponents: OpponentSource | None = None,
          battle_fn: BattleFn | None = None, variant: str | None = None,
          assume_legal: bool = False, defer_battle: bool = False) -> ApplyResult:
    """Apply one action in place. Raises IllegalAction (with the reason) if it is not legal.
    `opponents` gives the opponent of a battle: needed when the action fights one (`ready`, or
    the round's last preparation action, D-41), else it may be None (a TypeError then, before
    anything changes). `variant` (default: the rules' own) "dice" seeds each battle from the
    run's generator. `battle_fn` (default: the default engine, `rune_env.battle.engines`)
    fights the battles. `assume_legal`: the caller has already checked the action against
    `legal_mask(state)` (the env does, every step), so the check is not repeated.
    `defer_battle`: an action that ends the preparation fights nothing; the result says
    `ready` and the caller fights the battle itself (a duel's two players, rune_env/run/duel.py:
    `fight_boards`, `record_battle`, `next_round`); no opponent source is needed then."""
    table = action_table(state.rules)
    reason = None if assume_legal else why_illegal(state, action)
    if reason is not None:
        name = table.actions[action].name if 0 <= action < len(table) else str(action)
        raise IllegalAction(f"illegal action {action} ({name}): {reason}")
    a = table.actions[action]
    cap = state.rules.spec.run.action_cap
    choice = a.kind in CHOICE_GROUPS
    if opponents is None and not defer_battle \
            and (a.kind == "ready" or (not choice and state.prep_actions + 1 >= cap)):
        raise TypeError(f"{a.name} fights the round's battle: apply needs an opponent source "
                        f"(rune_env.run.opponents.default_opponents(rules): the budget drafter)")
    state.actions_taken.append(int(action))
    result = ApplyResult(action=int(action), name=a.name)
    EFFECTS[a.kind](state, table, *a.args)
    if choice:
        _next_choice(state)
    elif a.kind == "ready":
        result.ready = True
        if not defer_battle:
            result.battle = _fight(state, opponents, battle_fn, variant)
    else:
        # a preparation action
        state.prep_actions += 1
        if state.prep_actions >= cap:
            # D-41: the round's preparation ends by itself
            result.ready = result.forced_ready = True
            if not defer_battle:
                result.battle = _fight(state, opponents, battle_fn, variant)
    return result


# -- the effects: one small function per action group, (state, table, *the action's arguments) --
def _choose_core(state: RunState, table: ActionTable, i: int) -> None:
    set_core(state, table.cores[i])


def _choose_reward(state: RunState, table: ActionTable, i: int) -> None:
    option = RewardOption.parse(state.pending.options[i])
    run = state.rules.spec.run
    if option == RewardOption("mana"):
        state.mana += run.reward_mana
    elif option == RewardOption("hand_slot"):
        state.hand_slots = min(run.hand_slots_max, state.hand_slots + run.reward_hand_slots)
    elif option == RewardOption("artifact_slot"):
        state.artifact_slots = min(run.artifact_slots_max, state.artifact_slots + run.reward_artifact_slots)
    elif option == RewardOption("base_stat"):
        state.hp_bonus += run.reward_base_stat_hp_x
    elif option.gives_artifact:
        state.artifact_inventory.append(option.artifact)
    else:
        raise AssertionError(str(option))


def _choose_relic(state: RunState, table: ActionTable, i: int) -> None:
    relic = state.pending.options[i]
    spec = state.rules.spec
    mod = spec.relics[relic]
    state.relics.append(relic)
    state.hand_slots = min(spec.run.hand_slots_max, state.hand_slots + mod.hand_slots)
    state.lamp_saves += mod.lamp_saves


def _set_sun_element(state: RunState, table: ActionTable, e: int) -> None:
    state.sun_element = table.elements[e]


def _buy_rune(state: RunState, table: ActionTable, i: int) -> None:
    offer = state.shop_runes[i]
    state.mana -= state.rules.prices[offer]
    state.hand.append((offer, 1))
    state.shop_runes[i] = None
    state.units_bought += 1


def _buy_artifact(state: RunState, table: ActionTable, i: int) -> None:
    offer = state.shop_artifacts[i]
    state.mana -= state.rules.spec.artifacts[offer].price
    state.artifact_inventory.append(offer)
    state.shop_artifacts[i] = None


def _reroll(state: RunState, table: ActionTable) -> None:
    state.mana -= state.rules.spec.run.reroll_cost
    draw_shop(state)


def _place(state: RunState, table: ActionTable, h: int, c: int) -> None:
    state.board[c] = state.hand.pop(h)


def _pick_up(state: RunState, table: ActionTable, c: int) -> None:
    state.hand.append(state.board.pop(c))


def units(rules: Rules, grade: int) -> int:
    """Grade-I runes a rune of this grade was made of (I 1, II 3, III 9)."""
    return rules.spec.grades.merge_count ** (grade - 1)


def _sell(state: RunState, table: ActionTable, h: int) -> None:
    _k, g = state.hand.pop(h)
    n = units(state.rules, g)
    state.mana += state.rules.spec.run.rune_sell_per_unit * n
    state.units_sold += n


def _merge_partners(state: RunState, kind: str, grade: int, hand_slot: int | None,
                    cell: int | None) -> tuple[list[int], list[int]]:
    """D-11: the runes a merge onto the target consumes: hand first (lowest slot first), then
    board (latest in casting order first). Returns (hand slots, cells) (legal.py has checked
    that there are enough)."""
    need = state.rules.spec.grades.merge_count - 1
    hand = [i for i, r in enumerate(state.hand) if r == (kind, grade) and i != hand_slot][:need]
    rest = need - len(hand)
    cells = sorted((c for c, r in state.board.items() if r == (kind, grade) and c != cell),
                   reverse=True)[:rest] if rest > 0 else []
    return hand, cells


def _merge(state: RunState, h: int | None, c: int | None) -> None:
    """Merge onto hand slot `h` or cell `c`: the target, one grade up, stays where it was."""
    k, g = state.hand[h] if h is not None else state.board[c]
    hand_slots, cells = _merge_partners(state, k, g, h, c)
    for cell in cells:
        del state.board[cell]
    keep = [r for i, r in enumerate(state.hand) if i not in hand_slots]
    if h is not None:
        # the target keeps its place among the remaining hand runes
        keep[sum(1 for i in range(h) if i not in hand_slots)] = (k, g + 1)
    else:
        state.board[c] = (k, g + 1)
    state.hand = keep


def _merge_hand(state: RunState, table: ActionTable, h: int) -> None:
    _merge(state, h, None)


def _merge_board(state: RunState, table: ActionTable, c: int) -> None:
    _merge(state, None, c)


def _open_sector(state: RunState, table: ActionTable, sector: int) -> None:
    state.mana -= sector_cost(state)
    state.open_sectors.append(sector)


def _place_artifact(state: RunState, table: ActionTable, i: int, c: int) -> None:
    state.artifacts[c] = state.artifact_inventory.pop(i)


def _pick_up_artifact(state: RunState, table: ActionTable, c: int) -> None:
    state.artifact_inventory.append(state.artifacts.pop(c))


def _sell_artifact(state: RunState, table: ActionTable, i: int) -> None:
    spec = state.rules.spec
    art = state.artifact_inventory.pop(i)
    state.mana += int(spec.artifacts[art].price * spec.run.artifact_sell_x)


def _ready(state: RunState, table: ActionTable) -> None:
    """Nothing but the battle, which `apply` fights."""


EFFECTS: dict[str, Callable[..., None]] = {
    "choose_core": _choose_core,
    "set_sun_element": _set_sun_element,
    "buy_rune": _buy_rune,
    "buy_artifact": _buy_artifact,
    "reroll": _reroll,
    "place": _place,
    "pick_up": _pick_up,
    "sell": _sell,
    "merge_hand": _merge_hand,
    "merge_board": _merge_board,
    "open_sector": _open_sector,
    "place_artifact": _place_artifact,
    "pick_up_artifact": _pick_up_artifact,
    "sell_artifact": _sell_artifact,
    "choose_reward": _choose_reward,
    "choose_relic": _choose_relic,
    "ready": _ready,
}


# -- the battle ---------------------------------------------------------------------------------
def field_opponent(board: Board, effects: RankEffects, rules: Rules,
                   rng: np.random.Generator) -> Board:
    """Add the rank's extra runes (journeyman) to an opponent as it is fielded: grade I, a
    seeded-random casting kind (DECISION: supports excluded), in a seeded-random free open cell."""
    if effects.opponent_extra_runes <= 0:
        return board
    open_ = open_cells(rules, board.open_sectors)
    runes = dict(board.runes)
    for _ in range(effects.opponent_extra_runes):
        free = [c for c in range(len(open_)) if c not in runes and open_[c]]
        if not free:
            break
        cell = free[int(rng.integers(len(free)))]
        runes[cell] = (CASTING_KINDS[int(rng.integers(len(CASTING_KINDS)))], 1)
    return board.replace(runes=runes)


def player_seat(round_: int) -> int:
    """DECISION: the player is side 0 in odd rounds and side 1 in even ones, so neither gains
    the first mover's edge of D-8 over a run."""
    return (round_ + 1) % 2


def _fight(state: RunState, opponents: OpponentSource, battle_fn: BattleFn | None,
           variant: str | None = None) -> BattleSummary:
    """The round's battle: field the opponent, fight, log the summary, then apply the outcome
    and start the next round (or end the run)."""
    rules = state.rules
    effects = rank_effects(rules, state.rank)
    child = np.random.default_rng(int(state.rng.integers(2**63)))
    boss = state.boss_rules
    opp = draw_opponent(opponents, state.round, effects, boss, rules, child)
    me = state.to_board()
    seat = player_seat(state.round)
    result = fight_boards(me, opp, seat, rules, battle_fn, variant, child)
    summary, boss_win = record_battle(state, result, seat, me, opp)
    _end_or_next_round(state, boss_win)
    return summary


def draw_opponent(opponents: OpponentSource, round_: int, effects: RankEffects, boss,
                  rules: Rules, rng: np.random.Generator) -> Board:
    """The round's opponent as a battle fields it: drawn from the source, given the round's
    boss rules and number, then the rank's extra runes (`field_opponent`); every draw from
    `rng`, in this order."""
    opp = opponents(round_, effects, boss, rng)
    if not isinstance(opp, Board):
        raise TypeError(f"opponents (a callable) must return a Board for round {round_}; it "
                        f"returned {shown(opp)} of type {type(opp).__name__}")
    opp = opp.replace(boss_rules=tuple(boss), round=round_, max_hp=None)
    return field_opponent(opp, effects, rules, rng)


def fight_boards(me: Board, opp: Board, seat: int, rules: Rules, battle_fn: BattleFn | None,
                 variant: str | None, rng: np.random.Generator) -> BattleResult:
    """Fight `me` in side `seat` against `opp`. The dice variant (`variant`, default the
    rules' own) takes its battle seed from `rng`, so a run seed (and a saved run) fixes its dice
    too."""
    pair = (me, opp) if seat == 0 else (opp, me)
    fight = battle_fn or battle_function()
    if (variant or rules.spec.variant) == "dice":
        return fight(pair[0], pair[1], rules, seed=int(rng.integers(DICE_SEED_LIMIT)),
                     variant="dice")
    return fight(pair[0], pair[1], rules)


def battle_outcome(result: BattleResult, seat: int) -> str:
    """"win", "loss" or "draw" for the side `seat` of a battle."""
    return "draw" if result.winner is None else ("win" if result.winner == seat else "loss")


def record_battle(state: RunState, result: BattleResult, seat: int, me: Board,
                  opp: Board) -> tuple[BattleSummary, bool]:
    """Count a battle the player fought in side `seat` (wins, losses, lamps, achievements) and
    log its summary. Returns (the summary, a win against a boss). The round does not move on:
    `next_round` (or the end of the run) is the caller's."""
    rules = state.rules
    boss = state.boss_rules
    outcome = battle_outcome(result, seat)
    kinds = tuple(sorted(k for k, _ in state.board.values()))
    boss_win, lamp_saved = _count_outcome(state, outcome, bool(boss), me)
    summary = BattleSummary(
        round=state.round, outcome=outcome, seat=seat, time=result.time,
        hp=(result.hp[seat], result.hp[1 - seat]),
        max_hp=(result.max_hp[seat], result.max_hp[1 - seat]),
        casts=(result.casts[seat], result.casts[1 - seat]),
        seals=(result.seals[seat], result.seals[1 - seat]),
        boss_rules=tuple(boss), core=state.core, kinds=kinds,
        board=me.to_json(rules), opponent=opp.to_json(rules), lamp_saved=lamp_saved)
    state.battles.append(summary)
    return summary, boss_win


def _count_outcome(state: RunState, outcome: str, boss: bool, me: Board) -> tuple[bool, bool]:
    """Wins, losses, draws, lamps (a phoenix feather saves one) and achievements. Returns
    (a win against a boss, a lamp saved)."""
    if outcome == "win":
        state.wins += 1
        if boss:
            _achieve(state, "boss_win")
        if _has_sixfold(me, state.rules):
            _achieve(state, "sixfold_win")
        return boss, False
    if outcome == "loss":
        state.losses += 1
        if state.lamp_saves > 0:
            state.lamp_saves -= 1      # the phoenix feather: this loss costs no lamp
            return False, True
        state.lamps -= 1
        return False, False
    state.draws += 1
    return False, False


def _end_or_next_round(state: RunState, boss_win: bool) -> None:
    """D-2: the run ends with no lamp left, at the wins that clear it, or at the round cap; else
    the next round starts (a relic choice first after a boss win)."""
    run = state.rules.spec.run
    if state.lamps <= 0:
        state.over = True
    elif state.wins >= run.wins_to_clear and not run.endless:
        state.over = True
        state.cleared = True
        _achieve(state, "clear_run")
    elif state.round >= run.round_cap:
        state.over = True
    if not state.over:
        next_round(state, boss_win)


def next_round(state: RunState, boss_win: bool) -> None:
    """Start the next round: income, a new shop, the reward choice of its round, and first a
    relic choice after a win against a boss."""
    state.round += 1
    if boss_win:
        _queue_choice(state, PendingChoice("relic", _relic_options(state)))
    _start_round(state)


def _achieve(state: RunState, name: str) -> None:
    if name not in state.achievements:
        state.achievements.append(name)


def _has_sixfold(board: Board, rules: Rules) -> bool:
    """The node achievement's test: a whole-ring (fold 6) resonance on the board at battle start."""
    geo = geometry(rules.radius)
    # a pattern counts only if each of its cells holds a rune: most boards fill no whole ring,
    # and then the analysis is not needed
    if not any(all(c in board.runes for c in cells) for _ring, cells in geo.patterns.get(6, ())):
        return False
    setup = SideSetup.of(board, rules)
    n = setup.geo.n_cells
    occ = [board.runes.get(c) for c in range(n)]
    return 6 in analyse(setup, occ, [False] * n).resonance_fold.values()
