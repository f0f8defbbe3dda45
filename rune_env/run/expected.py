"""Battles of one board against opponents sampled as a round's battle draws its one: RuneRun-v0's
"expected" reward (rune_env/envs/run_env.py), a training signal that never touches the run."""
from __future__ import annotations

import numpy as np

from ..rules.board import Board
from ..rules.config import Rules
from .loop import BattleFn, OpponentSource, battle_outcome, draw_opponent, fight_boards
from .ranks import rank_effects


def sample_battles(me: Board, round_: int, rank: int, boss, seat: int,
                   opponents: OpponentSource, rules: Rules, battle_fn: BattleFn | None,
                   variant: str | None, rng: np.random.Generator,
                   samples: int) -> list[tuple[str, float, float]]:
    """`me` in side `seat` against `samples` opponents of round `round_` drawn as the round's
    battle draws its one (`draw_opponent`: the same source, bosses and rank effects), each with
    a child generator of `rng`. Returns each battle's (outcome for `me`, my HP ratio, the
    opponent's HP ratio). For RuneRun-v0's "expected" reward: the run's own generator is never
    touched, so the run goes on as it would."""
    effects = rank_effects(rules, rank)
    out = []
    for _ in range(samples):
        child = np.random.default_rng(int(rng.integers(2**63)))
        opp = draw_opponent(opponents, round_, effects, boss, rules, child)
        result = fight_boards(me, opp, seat, rules, battle_fn, variant, child)
        out.append((battle_outcome(result, seat), result.hp[seat] / result.max_hp[seat],
                    result.hp[1 - seat] / result.max_hp[1 - seat]))
    return out
