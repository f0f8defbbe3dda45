"""`Assets.varied` (agents/search/assets.py): the same holdings with another shop on display or
other mana, sharing the plans remembered per rune multiset, kind and artifact layout, which the
rolling lookahead prices once for all its views of one holding."""
from __future__ import annotations

import numpy as np
import pytest

from rune_env.rules import default_rules, geometry
from rune_env.run.loop import new_run

from agents.search.assets import Assets
from agents.search.target import TargetMutator

RULES = default_rules()
GEO = geometry(RULES.radius)


def mid_run_state(mana=14, shop=("fire", "fire", "wind", "ice", "amplify")):
    state = new_run(3, RULES, core="moon")
    state.mana, state.shop_runes, state.shop_artifacts = mana, list(shop), ["mana_spring"]
    state.hand = [("fire", 1)]
    state.board = {GEO.parse("1:0"): ("wind", 2), GEO.parse("2:3"): ("ice", 1)}
    return state


def test_varied_assets_price_every_layout_as_fresh_assets_of_that_shop_and_mana():
    # 400 random edits priced first on the base (filling the shared plans), then on a varied
    # copy with another shop and less mana: each price must be that of assets read afresh from
    # a state showing that shop with that mana (a shared plan that read the shop or the mana
    # would give the base's answer instead)
    base = Assets.of(mid_run_state())
    other_shop, other_mana = ("thunder", "node", "node", "dark", "light"), 9
    varied = base.varied(shop_runes=other_shop, shop_artifacts=("ward_stone",), mana=other_mana)
    state = mid_run_state(mana=other_mana, shop=other_shop)
    state.shop_artifacts = ["ward_stone"]
    fresh = Assets.of(state)
    mutator = TargetMutator(base, np.random.default_rng(7))
    parent, edits, differ = base.layout(), [], 0
    for _ in range(400):
        child = parent.copy()
        if mutator._pick(mutator.ops)(child):
            edits.append(child)
            base.price(child)
            if base.price(child) is not None:
                parent = child
    for child in edits:
        assert varied.price(child) == fresh.price(child)
        differ += varied.price(child) != base.price(child)
    assert len(edits) > 300 and differ > 20         # the shop and mana do change prices
    assert varied._rune_plans is base._rune_plans and varied._kind_plans is base._kind_plans
    assert (varied.mana, varied.shop_runes) == (other_mana, other_shop)


def test_only_the_shop_and_the_mana_may_vary():
    base = Assets.of(mid_run_state())
    with pytest.raises(ValueError, match="varied: only mana, shop_artifacts, shop_runes may "
                                         "vary; got hand"):
        base.varied(hand=())
