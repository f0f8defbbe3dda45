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
Wilson 95% interval (`agents.evaluation.runs.wilson`), the median battle time, and, to break ties while
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
  not have (`tests/agents/test_balance_audit.py` checks that every cell of a ring plays the same
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
- `fast_kill`: the earliest knockouts (below). Constructive "towers" (`tower_boards`), then the
  open search's hill climb on the fast-kill objective (`fast_kill_search`, seeded [seed, r, 5])
  from the `fast_starts` best towers and from the open search's best board, until a board
  fast-kills every battle of the choose set (nothing could beat it); chosen by that objective,
  not by win rate.

**Fast kills.** A fast kill is a battle the candidate wins by knockout while the opponent has
taken at most one turn (`FAST_KILL_TURNS`): the opponent's `turns` + `rests` in the result, when
the battle ends, at most 1. Turns, not time: a storm delay pushes the opponent's turns later and
the seat tie-break (side 0 moves first at equal times, D-8) decides who acts at a shared time,
and counting the opponent's turns covers both. Every reference board starts at full HP, so a
fast kill is a board that kills before its opponent has had a second turn to answer: a hole,
whatever the family. Every family's reported board is measured for them on the report set (its
fast-kill rate, its fastest knockout win with the opponent's turns by then), and a reported board
with a fast kill there is called out as a hole (`RoundAudit.holes`). The objective of the
`fast_kill` family (`FastKillScore`) is the weighted fast-kill rate over the choose set, ties
(and, where fast kills are rare, nearly every comparison) broken by the reach: the weighted mean
share of the opponent's max HP gone by the time of its second turn (2 of its intervals, fixed at
battle start). The reach comes from the battle cut short: each group of opponents with one such
time h is played under the rules with `battle.duration_s` = h (compiled once per h), and the
battle up to h is the whole battle's, since the engine is deterministic and nothing before a
timeout depends on the duration; the opponent's HP at the timeout is its HP at h. The fast kills
come from the same short battles (a knockout by h with the opponent at most 1 turn in), except a
battle that reaches h before the opponent's second turn (storm delays pushed it, or the opponent
has no turn), which is played whole. Short battles are cheap: about 600,000 a second on one core
against about 100,000 whole ones.

**Towers.** Amplifies stack multiplicatively: every amplify that reaches a casting rune (inward
of it, or beside a node it is beside, D-19) multiplies its power again, so a rune with enough of
them kills with its first cast. `TowerBuilder` grows such boards greedily on the compiled board
analysis (`BoardAnalyser`, no battle): from one target, a casting rune of each attack kind at
grade I or II on each cell of a rotation class (`tower_cells`: the first k cells of ring k), it
adds at each step the edit with the largest gain in log damage per mana that fits the budget,
until none gains. The damage is that of the side's first two turns (`TOWER_TURNS`: with the moon
core's 0.4 s against a 0.5-s side both come before the opponent's second turn): power x hits x
(1 + a thundercloud's extra casts) x (1 + each copying mimic's factor). The edits: an amplify on a
cell that reaches a target; a node beside a target with an amplify beside the node; an amplify,
target, feeder or mimic one grade up; resonators that complete a resonance orbit holding an
amplify or a target; a mana spring (grade bonus) on a target, node or amplify, within the
artifact slots; a feeder (a grade-I rune of a kind that flows into the target, or of its own
kind) on a cell that flows into a target; a mimic outward of a target; another target on a cell
an amplify reaches; at most `tower_casters` casting runes in all. Each tower is built without a
core, with each core that changes how runes combine (the star's loose resonance) and, for a ring-1
target, with the sun flowing as each element that acts on the kind; per kind the
`tower_structures` most damaging are kept and played with every core (`core_variants`). All are
budget-legal by construction and keep to a fresh run's artifact slots; node and mimic carry their
unlock notes. Checked under the defaults (no amplify cap), seed 0, the full settings: the best
towers of round 6 (budget 60), before any climb, fast-kill 99-100% of the report set's 400
battles at 0.4 s (the moon core's first turn); the family's board fast-kills all 400 in rounds 3,
6, 9 and 12. The greedy takes about 1-2 s a round (some 200 towers built, 50 us an edit tried).


**Speed.** Measured with `time python scripts/balance_audit.py ...` on the 2-core machine this
was written on, while it was shared with a training run (load average 3-4): the full audit
(rounds 1-12, the defaults; about 15 million battles) took 3 min 44 s under the default rules and
3 min 40 s under configs/rules/seed_literal.yaml; `--quick` (rounds 3, 6, 9; 40 + 80 reference
boards; about 1 million battles) took 14.5 s under either. Drafting the reference boards takes 10-20%
of the time; the rest is the fast engine. Those times predate the fast_kill family, which adds
1-1.5 s a round, full or quick (round 6, the machine at load 5: 1.05 of 22.6 s full, 1.5 of 5.1 s
quick), most of it building towers: under the defaults a tower fast-kills every choose battle,
which ends its climb at once; `--quick` took 23 s (15 s of CPU) at that load.

**Modules.** `agents.design.audit.scoring`: the settings, the reference boards and their choose/report
split, board costs and shop notes, `Score` and the `Evaluator`; `agents.design.audit.families`: the
candidate families (`Layout`, the board builders, the tricks) and the open search (`Mutator`,
`open_search`, and `hill_climb`, which the fast-kill search shares); `agents.design.audit.towers`: the
fast_kill family (`TowerBuilder`, `tower_boards`, `fast_kill_search`); `agents.design.audit.report`:
one round (`audit_round`), the whole audit (`audit`,
`AuditReport`) and the text report (`format_report`). Every name is also importable from
`agents.design.audit` itself.
"""
from __future__ import annotations

from .families import (Layout, Mutator, acting_elements, core_variants, hill_climb,
                       mono_kind_boards, mono_placements, one_rune_boards, open_ring_cells,
                       open_rings, open_search, trick_boards, two_rune_boards)
from .report import (FAMILIES, STAGES, AuditReport, FamilyResult, RoundAudit, audit, audit_round,
                     check_auditable, describe, format_report, reference_sets)
from .scoring import (EXPANDED_DRAWS_MAX, FAST_KILL_TURNS, MAX_BATCH_PAIRS, AuditError,
                      AuditSettings, Evaluator, FastKillScore, Opponents, Score, board_cost,
                      board_key, drafted_boards, field_reference, full_settings, hand_slots,
                      pool_boards, quick_settings, round_budget, shop_notes, split_opponents)
from .towers import (TOWER_TURNS, TowerBuilder, build_cores, fast_kill_search, tower_boards,
                     tower_cells)

__all__ = [
    "MAX_BATCH_PAIRS", "EXPANDED_DRAWS_MAX", "AuditError", "AuditSettings", "full_settings",
    "quick_settings", "round_budget", "board_key", "field_reference", "drafted_boards",
    "pool_boards", "Opponents",
    "split_opponents", "board_cost", "hand_slots", "shop_notes", "Score", "Evaluator", "Layout",
    "open_rings", "open_ring_cells", "acting_elements", "core_variants", "one_rune_boards",
    "two_rune_boards", "mono_placements", "mono_kind_boards", "trick_boards", "Mutator",
    "open_search", "hill_climb", "FAST_KILL_TURNS", "FastKillScore", "TOWER_TURNS",
    "TowerBuilder", "build_cores", "tower_cells", "tower_boards", "fast_kill_search",
    "FAMILIES", "STAGES", "FamilyResult", "RoundAudit", "reference_sets",
    "audit_round", "AuditReport", "check_auditable", "audit", "describe", "format_report",
]
