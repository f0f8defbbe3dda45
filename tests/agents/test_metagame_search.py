"""The metagame's best-response search (agents/design/metagame/mutations.py): the fast mutator
makes the audit's mutants, the counter edits make valid, budget-legal boards, and the climb and
its archive are reproducible."""
from __future__ import annotations

import numpy as np

from agents.design.audit import Layout, Mutator, board_cost, board_key, field_reference
from agents.design.metagame.mutations import CounterMutator, FastMutator, fast_key, layout_key
from rune_env.rules import Board, load_rules
from rune_env.run.opponents import draft_board


def _parents(rules, round_, budget, n=6):
    return [field_reference(draft_board(rules, round_, budget, np.random.default_rng([7, i])),
                            round_) for i in range(n)]


def test_fast_mutator_makes_the_audits_mutants():
    # the same draws, the same legal mutants in the same order: only the checks moved before
    # the board is built (and its key is a tuple, not JSON)
    rules = load_rules(None)
    for round_, budget in ((3, 30), (9, 90)):
        for parent in _parents(rules, round_, budget):
            seen_a, seen_b = {board_key(parent, rules)}, {layout_key(Layout.of(parent))}
            a = Mutator(rules, round_, budget, np.random.default_rng(5))
            b = FastMutator(rules, round_, budget, np.random.default_rng(5))
            for _ in range(4):
                kids_a = a.children(Layout.of(parent), 24, seen_a)
                kids_b = b.children(Layout.of(parent), 24, seen_b)
                assert [k.to_json(rules) for k in kids_a] == [k.to_json(rules) for k in kids_b]


def test_counter_mutants_are_valid_and_within_budget():
    rules = load_rules(None)
    for round_, budget in ((6, 60), (12, 120)):
        m = CounterMutator(rules, round_, budget, np.random.default_rng(3), extra=1.0)
        seen: set = set()
        kids = []
        for parent in _parents(rules, round_, budget):
            kids += m.children(Layout.of(parent), 100, seen)
        assert len(kids) > 300
        for k in kids:
            again = Board.from_json(k.to_json(rules), rules)      # validates
            assert fast_key(again) == fast_key(k)
            assert board_cost(k, rules) == m.cost(Layout.of(k)) <= budget
            assert m.legal(k)
        assert len({fast_key(k) for k in kids}) == len(kids)


def test_counter_edits_each_change_the_board():
    rules = load_rules(None)
    parent = Layout.of(_parents(rules, 9, 90, 1)[0])
    m = CounterMutator(rules, 9, 90, np.random.default_rng(0), extra=1.0)
    for op in CounterMutator.EXTRA_OPS:
        changed = [new for _ in range(30) if (new := getattr(m, f"_{op}")(parent)) is not None
                   and layout_key(new) != layout_key(parent)]
        assert changed, op
    # element: every casting rune of one kind changes kind together, supports stay
    casting = rules.casting_kinds
    for _ in range(20):
        new = m._element(parent)
        moved = {parent.runes[c][0] for c in parent.runes if new.runes[c] != parent.runes[c]}
        assert len(moved) == 1 and moved <= casting
