"""The balance audit: how far small, cheap boards get against round-matched boards, round by round.

    report = audit(rules, AuditSettings(rounds=(3, 6, 9)))        # the budget drafter's boards
    report = audit(rules, settings, pool=load_pool(path, rules))  # or a pool's ghosts

It answers a designer's question: "is there a cheap board that beats what players field?". For
each round r it searches families of candidate boards and measures the best of each against
reference boards of the same round.

**Reference boards.** By default the budget drafter's: `draft_board(rules, r, budget, rng)` with
the round's opponent budget of the first (easiest) rank, `opponent_budget(rules, r,
rank_effects(rules, "apprentice"))` (D-44), board i of round r drafted from the generator seeded
[seed, r, 0, i], so an audit is reproducible bit for bit from its seed (and does not depend on
--jobs: the fast engine's output never depends on its threads). With a pool, the pool's ghosts of
the round, each weighted by its `count`: all of them when the round has no more ghosts than the
audit asks for, else that many weighted draws (seeded). A round the pool has no ghosts of falls
back to the budget drafter, as `PoolOpponents` does. Reference boards are fielded as in a round
without a boss (E-30): round r, the round's max HP, no boss rules; the audit measures boards, not
bosses.

**Choose and report.** The reference boards of a round are split into two disjoint sets: a
"choose" set (`choose_boards`, 100 by default) on which every candidate is scored and each
family's best is picked, and a "report" set (`report_boards`, 200) on which only the picked board
is measured. Picking the best of thousands of candidates on one sample overrates it (the winner's
curse); the report set has never been looked at, so its win rate is an honest estimate. The split
is by content: identical boards drawn twice become one board of weight 2, and the distinct boards
are dealt (in a seeded random order) to the choose set until it holds its share of the weight,
the rest to the report set, so no board is in both.

**Battles.** Every candidate fights every opponent of a set in both seatings (candidate as side 0
and as side 1; D-8 gives side 0 the first move on ties), on the fast engine in big batches. A win
is a battle the candidate wins; draws are not wins. A board's score is its weighted win rate with a
Wilson 95% interval (`agents.evaluation.wilson`), the median battle time, and, to break ties while
choosing, its mean HP-ratio margin (own HP / max HP minus the opponent's). Per round the baseline
is the reference boards against themselves: the choose set against the report set, both seatings
(about 50% by symmetry; its median time is the typical battle length of the round). Its
interval counts battles, which repeat the same boards: how far the baseline strays from 50%
(a few points) shows how much the sampling of boards, which the interval leaves out, moves a
rate.

**Budget.** A board costs what a player pays for it in a run (RULES §16): each rune, on the board
or in the hand, `price(kind)` x `merge_count`^(grade - 1) (a grade-II rune is merge_count grade-I
runes), plus each artifact's price, plus the ring-3 sectors it needs, opened in order
(`sectors.open_costs`). It is a lower bound: rerolls to find the runes are not counted. A round's
budget is the reference opponents' budget of that round; candidates above it are dropped (each
family says how many). Checked: a one-rune board always fits (at most the dearest attack kind at
grade II, 2 x 3 = 6 mana against 10 in round 1); a two-rune board does not always: in round 1, two
grade-II runes (12-15 mana) exceed the budget of 10, so that family is cut by the budget there.
Apart from the budget, a board may hold what no shop run could give it yet: more artifacts than a
run starts with slots for (`run.artifact_slots`; rewards add more), a larger hand than the run's
hand slots (`run.hand_slots` + the core's `hand_slots`), or a kind that a player's profile must
unlock first (`achievements`; research runs unlock everything). Each reported board carries a note
for each of these.

**Families** (each chosen on the choose set; `FAMILIES`):

- `one_rune`: every board of one attack rune (`ATTACK_KINDS`) of grade I or II, in ring 1 or ring
  2, with each core (a flowing core, the sun, with each casting element that acts differently on
  the rune: each that feeds its kind, and one that feeds nothing for the rest, which play the
  same battles; `acting_elements`). One cell per ring
  suffices: a lone rune has no neighbour, so no flow, attunement, resonance, opposition, amplify,
  delay or mimic can reach it, and every rule that looks at position sees the same thing from any
  cell of its ring: it is the outermost ring with runes wherever it stands (eclipse's penalty,
  earth's wards, erosion's target), it is its side's only turn and its only "strongest" rune.
  Corner and edge cells of ring 2 differ only in their inward neighbours, which a lone rune does
  not have (`tests/test_balance_audit.py` checks that every cell of a ring plays the same
  battles). The rings differ: ring power (`rings.power_x`) and the sun flows into ring 1 only.
- `two_rune`: the `two_rune_parents` best one-rune boards, each with a second rune of every kind
  (all 13), grade I or II, on every other cell of rings 1-2.
- `mono_kind`: 3-6 runes of one casting kind and grade (I or II) in ring 1: the first n cells,
  and the symmetric placements of the resonance patterns (a three-fold orbit, two-fold orbits,
  the whole ring) filled up to n cells, with each core (the sun as for one rune); budget-legal
  ones only.
- `tricks`: the best few one- and two-rune boards with reserves in the hand (copies of a board
  rune, from one up to the hand slots), a reserve-any-kind core (the tree) with a hand of any
  kind, a ward stone, a scapegoat doll or a mana spring on or next to a rune (each artifact found
  by its effect: `wards`, `absorbs`, `grade_bonus`), alone and two at a time.
- `open_search`: a (1 + lambda) hill climb over budget-legal boards of any size, started from the
  best board found so far and from a few freshly drafted boards (seeded [seed, r, 4, i]). Each
  generation makes `search_mutants` distinct mutants of the current board (add, remove, move,
  swap, re-kind or re-grade a rune, change the core or the sun's element, add, move or remove an
  artifact, add or remove a hand rune; a rune may go to ring 3, which opens its sector), scores
  them on the choose set and moves to the best if it beats the current board; a start stops after
  `search_patience` generations without a move. Its boards keep to a fresh run's slots (artifacts
  and hand), use every kind (unlock notes as above) and any grade; mutations never add the mana
  furnace, which acts in the run only (a drafted start may keep its own).

**Speed.** Measured with `time python scripts/balance_audit.py ...` on the 2-core machine this
was written on, while it was shared with a training run (load average 3-4): the full audit
(rounds 1-12, the defaults; about 15 million battles) took 3 min 44 s under the default rules and
3 min 40 s under configs/rules/seed_literal.yaml; `--quick` (rounds 3, 6, 9; 40 + 80 reference
boards; about 1 million battles) took 14.5 s under either. Drafting the reference boards takes 10-20%
of the time; the rest is the fast engine.

**Modules.** `agents.audit.scoring`: the settings, the reference boards and their choose/report
split, board costs and shop notes, `Score` and the `Evaluator`; `agents.audit.families`: the
candidate families (`Layout`, the board builders, the tricks) and the open search (`Mutator`,
`open_search`); `agents.audit.report`: one round (`audit_round`), the whole audit (`audit`,
`AuditReport`) and the text report (`format_report`). Every name is also importable from
`agents.audit` itself.
"""
from __future__ import annotations

from .families import (Layout, Mutator, acting_elements, core_variants, mono_kind_boards,
                       mono_placements, one_rune_boards, open_ring_cells, open_rings, open_search,
                       trick_boards, two_rune_boards)
from .report import (FAMILIES, STAGES, AuditReport, FamilyResult, RoundAudit, audit, audit_round,
                     check_auditable, describe, format_report, reference_sets)
from .scoring import (MAX_BATCH_PAIRS, AuditError, AuditSettings, Evaluator, Opponents, Score,
                      board_cost, board_key, drafted_boards, field_reference, full_settings,
                      hand_slots, pool_boards, quick_settings, round_budget, shop_notes,
                      split_opponents)

__all__ = [
    "MAX_BATCH_PAIRS", "AuditError", "AuditSettings", "full_settings", "quick_settings",
    "round_budget", "board_key", "field_reference", "drafted_boards", "pool_boards", "Opponents",
    "split_opponents", "board_cost", "hand_slots", "shop_notes", "Score", "Evaluator", "Layout",
    "open_rings", "open_ring_cells", "acting_elements", "core_variants", "one_rune_boards",
    "two_rune_boards", "mono_placements", "mono_kind_boards", "trick_boards", "Mutator",
    "open_search", "FAMILIES", "STAGES", "FamilyResult", "RoundAudit", "reference_sets",
    "audit_round", "AuditReport", "check_auditable", "audit", "describe", "format_report",
]
