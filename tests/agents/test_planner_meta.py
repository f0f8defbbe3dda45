"""The metagame the search player plays against and builds towards (`planner:meta`): the one
shipped for the rules by default, a designer's file by name, and a warning where the rules have
none (agents/search/reference.py, `load_metagame`)."""
from __future__ import annotations

import warnings
from pathlib import Path

from rune_env.rules import default_rules
from rune_env.run.legal import legal_mask
from rune_env.run.loop import new_run

from agents import make_agent
from agents.search.boards import Layout, fast_key
from agents.search.reference import Reference, ReferenceSpec, meta_path
from test_planner import _prepare

REPO = Path(__file__).resolve().parents[2]
RULES = default_rules()
META_STAND_IN = str(REPO / "configs/opponents/apprentice.json.gz")   # any pool file serves


def test_meta_names_the_metagame_of_the_reference_and_of_the_goal():
    """`meta=FILE` (a designer's metagame, `scripts/metagame.py --out`): the reference's `meta`
    part is FILE's boards, as FILE named as a reference part gives them (same seed, same
    fielding), and the goal is one of FILE's boards; with `auto` both come from the shipped
    metagame, whose boards differ (so the check bites)."""
    from rune_env.run.opponents import load_pool
    spec = ReferenceSpec("meta", size=8, meta=META_STAND_IN)
    named = Reference(RULES, spec, 0, seed=1).boards(3)[0]
    assert [b.to_json() for b in named] == \
        [b.to_json() for b in Reference(RULES, ReferenceSpec(META_STAND_IN, size=8), 0,
                                        seed=1).boards(3)[0]]
    shipped = Reference(RULES, ReferenceSpec("meta", size=8), 0, seed=1).boards(3)[0]
    assert {fast_key(b) for b in named} != {fast_key(b) for b in shipped}

    def goal_runes(meta):
        agent = make_agent(f"planner:boards=40,meta={meta}", RULES, seed=3)
        state = new_run(3, RULES, core="moon")
        agent.act(None, legal_mask(state), state=state)   # the first preparation action
        return agent.goal.runes

    def boards_of(path):
        pool = load_pool(path, RULES)
        return [Layout.of(b).runes for r in pool.rounds for b in pool.boards(r, RULES)]

    assert goal_runes(META_STAND_IN) in boards_of(META_STAND_IN)
    shipped_meta = str(meta_path(RULES))
    assert goal_runes("auto") in boards_of(shipped_meta)
    assert goal_runes("auto") not in boards_of(META_STAND_IN)
    # naming the shipped file is the same player as auto: the same actions
    first = _prepare(make_agent("planner:boards=40", RULES, seed=3), new_run(3, RULES, core="moon"))
    named_file = make_agent(f"planner:boards=40,meta={shipped_meta}", RULES, seed=3)
    assert _prepare(named_file, new_run(3, RULES, core="moon")) == first


def test_rules_without_a_shipped_metagame_warn_and_the_planner_plays_without_a_goal():
    """A designer's rules (here the defaults with rerolls at 2 mana) have another hash and no
    metagame in configs/meta: `auto` says so once, in one line naming the way out, and the
    player drafts its reference and has no goal; `meta=FILE` takes FILE (with the pool
    loader's warning that FILE was made under other rules)."""
    other = RULES.with_overrides({"run.reroll_cost": 2})
    assert other.hash != RULES.hash and not meta_path(other).is_file()

    def first_action(name):
        agent = make_agent(name, other, seed=3)
        state = new_run(3, other, core="moon")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agent.act(None, legal_mask(state), state=state)
        return agent, [str(w.message) for w in caught]

    agent, said = first_action("planner:boards=40")
    missing = [m for m in said if m.startswith("no metagame")]
    # (the planner reads its metagame once, for its reference's meta part and its goal)
    assert missing and set(missing) == {
        f"no metagame is shipped for rules {other.hash} (configs/meta/meta_{other.hash}.json.gz): "
        f"the planner drafts its reference boards and has no goal; make one with "
        f"scripts/metagame.py --rules FILE --out DIR and pass "
        f"planner:meta=DIR/meta_{other.hash}.json.gz"}
    assert agent.goal is None
    named, said = first_action(f"planner:boards=40,meta={META_STAND_IN}")
    assert not any(m.startswith("no metagame") for m in said)
    assert any(m.startswith(f"{META_STAND_IN}: pool was made under rules") for m in said)
    assert named.goal is not None


def test_the_rank_part_takes_no_pool_of_other_rules(tmp_path):
    """Under a designer's rules the `rank` part loaded the defaults' shipped pool (ghosts priced
    and fielded under other rules) with the pool's own warning, naming apprentice while a sage
    pool was drafted. It now says it is the planner's reference and drafts instead (None), and
    under the defaults still takes the rank's shipped pool."""
    import pytest
    from rune_env.rules import load_rules
    variant = tmp_path / "variant.yaml"
    variant.write_text("extends: default.yaml\nbattle:\n  base_hp: 120\n")
    rules = load_rules(variant)
    with pytest.warns(UserWarning, match=r"the planner's reference: no pool is shipped for rules "
                                         + rules.hash):
        reference = Reference(rules, ReferenceSpec("rank"), 4, seed=1)
    assert reference.parts == [(None, 0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # the defaults: their own pool, no warning
        (pool, _), = Reference(RULES, ReferenceSpec("rank"), 4, seed=1).parts
    assert pool is not None and pool.rules_hash == RULES.hash
