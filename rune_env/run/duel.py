"""A duel: two players, each with a whole run of their own, whose boards fight each other.
Plain rules code, no Gymnasium or PettingZoo (rune_env/duel/ is the adapter).

    duel = new_duel(seed=7)
    masks = [duel_mask(duel, i) for i in (0, 1)]          # bool per action id, + `wait`
    result = step_duel(duel, [a0, a1])                     # the battle once both are ready

Each player has its own `RunState`: its own shop stream, mana, hand, board, relics and lamps.
What they share comes from the duel's seed: the boss schedule, and the reward and relic draws
(each state's `choice_seed`: the same options for the same state, see loop._choice_rng). Each
round both prepare at the same time; a player whose preparation has ended (`ready`, or the
action cap, D-41) waits, and its only legal action is `wait` (id `len(action table)`). When
both wait, their two boards battle, player 0 in side `player_seat(round)` and player 1 in the
other, so seats alternate by round. The loser loses a lamp (a phoenix feather saves it, as in a
run). The duel ends when a player has no lamps left or at the round cap.

DECISIONS (the rules describe one player against drafted opponents; configs/rules/default.yaml
names these too, under `run:`):
- boss rounds are mirror matches: both boards carry the round's boss rules, and the winner of a
  boss round has beaten a boss (its relic choice follows);
- the rank's player-side effects hold for both players (lamps, income delta, boss-rule count);
  its opponent-side effects (extra opponent runes, opponent budgets) do not: nobody is drafted;
- `wins_to_clear` does not end a duel (only the lamps and the round cap do), and nobody
  `clears` it;
- the winner is the player with lamps left when the other has none; at the round cap, the
  player with more lamps, then the one with more wins; else the duel is drawn.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..rules.board import Board
from ..rules.config import Rules, default_rules
from .actions import action_table
from .legal import legal_mask
from .loop import (ApplyResult, BattleFn, IllegalAction, apply, boss_schedule, fight_boards,
                   new_run, next_round, player_seat, record_battle)
from .ranks import rank_effects, rank_index
from .state import BattleSummary, RunState

PLAYERS = 2
# SeedSequence spawn keys of the duel's seed: players 0 and 1's runs, the shared boss schedule,
# the shared choice draws, the battles' dice
_SEAT_KEYS = (0, 1)
_BOSS_KEY, _CHOICE_KEY, _BATTLE_KEY = 2, 3, 4
SEED_LIMIT = 2**63


def _derived_seed(seed: int, key: int) -> int:
    words = np.random.SeedSequence(entropy=int(seed), spawn_key=(key,)).generate_state(2, np.uint64)
    return int(words[0]) % SEED_LIMIT


@dataclass
class DuelState:
    rules: Rules
    seed: int
    rank: int
    players: list[RunState]
    rng: np.random.Generator                # the battles' own draws (dice)
    waiting: list[bool] = field(default_factory=lambda: [False] * PLAYERS)
    # each player's board as it was in the last battle (what its opponent observes), or None
    last_boards: list[Board | None] = field(default_factory=lambda: [None] * PLAYERS)
    battles: list[tuple[BattleSummary, BattleSummary]] = field(default_factory=list)
    over: bool = False
    winner: int | None = None               # set when over: 0, 1, or None for a draw

    @property
    def round(self) -> int:
        return self.players[0].round

    def clone(self) -> "DuelState":
        rng = np.random.Generator(type(self.rng.bit_generator)())
        rng.bit_generator.state = self.rng.bit_generator.state
        return DuelState(self.rules, self.seed, self.rank, [p.clone() for p in self.players], rng,
                         list(self.waiting), list(self.last_boards), list(self.battles),
                         self.over, self.winner)


@dataclass
class DuelStep:
    """What one step of the duel did: each player's applied action (None for `wait`) and, if
    the round's battle was fought, its summary from each player's side."""

    applied: list[ApplyResult | None]
    battle: tuple[BattleSummary, BattleSummary] | None = None


def wait_action(rules: Rules) -> int:
    """The `wait` action's id: one past the run's action table."""
    return len(action_table(rules))


def new_duel(seed: int, rules: Rules | None = None, rank: int | str = 0, core: str | None = None,
             unlocked: list[str] | None = None) -> DuelState:
    """A new duel. `core` fixes both players' cores (else each chooses its own first)."""
    rules = rules or default_rules()
    r = rank_index(rules, rank)
    players = [new_run(_derived_seed(seed, k), rules, rank=r, core=core, unlocked=unlocked)
               for k in _SEAT_KEYS]
    # the shared boss schedule, drawn as a run draws its own
    shared = boss_schedule(rules, rank_effects(rules, r),
                           np.random.default_rng(_derived_seed(seed, _BOSS_KEY)))
    choice_seed = _derived_seed(seed, _CHOICE_KEY)
    for p in players:
        p.boss_schedule = {k: list(v) for k, v in shared.items()}
        p.choice_seed = choice_seed
    # round 1 has no reward choice (rewards start at run.reward_first_round), so no option was
    # drawn from the players' own generators before choice_seed was set
    assert all(p.pending is None or p.pending.kind == "core" for p in players)
    return DuelState(rules, int(seed), r, players,
                     np.random.default_rng(_derived_seed(seed, _BATTLE_KEY)))


def duel_mask(duel: DuelState, player: int) -> np.ndarray:
    """The legal actions of a player: the run's legal mask and then `wait`, which is the only
    legal action of a player that waits (and, as a placeholder, of both once the duel is over)."""
    n = len(action_table(duel.rules))
    mask = np.zeros(n + 1, dtype=bool)
    if duel.over or duel.waiting[player]:
        mask[n] = True
    else:
        mask[:n] = legal_mask(duel.players[player])
    return mask


def step_duel(duel: DuelState, actions: list[int | None], battle_fn: BattleFn | None = None,
              variant: str | None = None, assume_legal: bool = False) -> DuelStep:
    """Apply both players' actions (each must be legal for its player: IllegalAction otherwise,
    before anything changes; None is a no-op, which the env's penalty mode uses for an illegal
    action), then fight the round's battle if both now wait. `assume_legal`: the caller has
    checked both actions against the players' masks (the env does, every step)."""
    if duel.over:
        raise RuntimeError("the duel is over")
    if len(actions) != PLAYERS:
        raise ValueError(f"a duel step takes {PLAYERS} actions, one per player; got {len(actions)}")
    wait = wait_action(duel.rules)
    masks = [] if assume_legal else [duel_mask(duel, i) for i in range(PLAYERS)]
    for i, a in enumerate(actions if not assume_legal else ()):
        if a is None:
            continue
        a = int(a)
        if not (0 <= a < len(masks[i]) and masks[i][a]):
            name = "wait" if a == wait else (action_table(duel.rules).actions[a].name
                                             if 0 <= a < wait else str(a))
            why = "the player waits for the battle: only wait is legal" if duel.waiting[i] \
                else ("wait is legal only once the preparation has ended" if a == wait
                      else "not legal now")
            raise IllegalAction(f"player_{i}: illegal action {a} ({name}): {why}")
    applied: list[ApplyResult | None] = []
    for i, a in enumerate(actions):
        if a is None or int(a) == wait:
            applied.append(None)
            continue
        res = apply(duel.players[i], int(a), None, assume_legal=True, defer_battle=True)
        if res.ready:
            duel.waiting[i] = True
        applied.append(res)
    step = DuelStep(applied)
    if all(duel.waiting):
        step.battle = _duel_battle(duel, battle_fn, variant)
    return step


def _duel_battle(duel: DuelState, battle_fn: BattleFn | None,
                 variant: str | None) -> tuple[BattleSummary, BattleSummary]:
    """Both boards battle; each player counts it from its side; then the duel ends or both go
    to the next round."""
    rules = duel.rules
    p0, p1 = duel.players
    boss = p0.boss_rules      # the same schedule for both: a mirror match under the boss rules
    boards = [p.to_board().replace(boss_rules=tuple(boss)) for p in duel.players]
    seat0 = player_seat(p0.round)
    result = fight_boards(boards[0], boards[1], seat0, rules, battle_fn, variant, duel.rng)
    seats = (seat0, 1 - seat0)
    recorded = [record_battle(p, result, seats[i], boards[i], boards[1 - i])
                for i, p in enumerate(duel.players)]
    summaries = (recorded[0][0], recorded[1][0])
    duel.battles.append(summaries)
    duel.last_boards = boards
    duel.waiting = [False] * PLAYERS
    run = rules.spec.run
    if p0.lamps <= 0 or p1.lamps <= 0 or p0.round >= run.round_cap:
        _end(duel)
    else:
        for p, (_summary, boss_win) in zip(duel.players, recorded):
            next_round(p, boss_win)
    return summaries


def _end(duel: DuelState) -> None:
    duel.over = True
    for p in duel.players:
        p.over = True
    p0, p1 = duel.players
    key0, key1 = (p0.lamps, p0.wins), (p1.lamps, p1.wins)
    duel.winner = None if key0 == key1 else (0 if key0 > key1 else 1)


def duel_lamps(rules: Rules, rank: int) -> int:
    """Each player's lamps at the start of a duel of this rank."""
    return rank_effects(rules, rank).lamps
