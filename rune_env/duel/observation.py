"""The duel's observation of one player: its own state in RuneRun-v0's flat encoding, then what
it knows of its opponent.

    own        (D,)       the run's flat observation (rune_env/envs/observation.py), unchanged
    opp_board  (36, F)    the opponent's board as it was in the last battle, per cell as the
                          own board part (kind one-hot, grade / 3, open, artifact one-hot, power)
    opp_core   (C+E,)     that board's core one-hot and sun element one-hot
    opp_relics (R,)       that board's relics
    opp_scalars (4,)      a battle has been fought (0/1), the opponent's lamps / run.lamps, its
                          wins / run.round_cap, its losses / run.round_cap

Not the opponent's current preparation: its shop, hand, mana and the board it is building now
stay hidden until they fight. The own part comes first so a policy trained on RuneRun-v0 can act
in a duel on `observation[:D]`.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..rules.board import Board
from ..rules.config import CASTING_KINDS, Rules
from ..run.duel import DuelState
from ..envs.observation import Encoder

OPP_SCALARS = ("seen", "lamps", "wins", "losses")


class DuelEncoder:
    """Observations and masks of a duel's players. `size`: the observation's length;
    `own_size`: the run part's (a RuneRun-v0 observation); `slices`: every part's slice."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.run_encoder = Encoder(rules)
        layout = self.run_encoder.layout
        spec = rules.spec
        shapes = {
            "own": (layout.size,),
            "opp_board": layout.shapes["board"],
            "opp_core": (len(spec.cores) + len(CASTING_KINDS),),
            "opp_relics": (len(spec.relics),),
            "opp_scalars": (len(OPP_SCALARS),),
        }
        self.shapes = shapes
        self.slices = {}
        start = 0
        for name, shape in shapes.items():
            n = int(np.prod(shape))
            self.slices[name] = slice(start, start + n)
            start += n
        self.size = start
        self.own_size = layout.size
        self._core_i = {c: i for i, c in enumerate(spec.cores)}
        self._elem_i = {e: i for i, e in enumerate(CASTING_KINDS)}
        self._relic_i = {r: i for i, r in enumerate(spec.relics)}

    def observe(self, duel: DuelState, player: int) -> tuple[np.ndarray, np.ndarray]:
        """(observation float32 in [0, 1], legal mask with `wait` last) of `player`."""
        own, run_mask = self.run_encoder.observe(duel.players[player])
        out = np.zeros(self.size, dtype=np.float32)
        out[self.slices["own"]] = own
        self._opponent_part(duel, 1 - player, out)
        # the compiled run mask (tested equal to legal_mask) and `wait`: duel_mask's values,
        # without computing the run's legality a second time
        mask = np.zeros(len(run_mask) + 1, dtype=bool)
        if duel.over or duel.waiting[player]:
            mask[-1] = True
        else:
            mask[:-1] = run_mask
        return out, mask

    def _opponent_part(self, duel: DuelState, opponent: int, out: np.ndarray) -> None:
        run = self.rules.spec.run
        them = duel.players[opponent]
        board: Board | None = duel.last_boards[opponent]
        s = self.slices["opp_scalars"]
        out[s] = [1.0 if board is not None else 0.0, min(1.0, them.lamps / run.lamps),
                  min(1.0, them.wins / run.round_cap), min(1.0, them.losses / run.round_cap)]
        if board is None:
            return
        view = SimpleNamespace(board=dict(board.runes), artifacts=dict(board.artifacts),
                               open_sectors=sorted(board.open_sectors), core=board.core,
                               sun_element=board.sun_element, relics=list(board.relics))
        out[self.slices["opp_board"]] = self.run_encoder._board_block(view)
        base = self.slices["opp_core"].start
        if board.core is not None:
            out[base + self._core_i[board.core]] = 1.0
        if board.sun_element is not None:
            out[base + len(self._core_i) + self._elem_i[board.sun_element]] = 1.0
        base = self.slices["opp_relics"].start
        for r in board.relics:
            out[base + self._relic_i[r]] = 1.0

    def describe(self) -> str:
        return "\n".join(f"{name:<12} {str(self.shapes[name]):<12} [{s.start}:{s.stop}]"
                         for name, s in self.slices.items())
