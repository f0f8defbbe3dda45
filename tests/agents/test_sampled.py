"""Sampled search (agents/search/sampled.py): its knobs and their errors, the policy's own greedy
play at n=1, the choice of the best rollout, fair play (the run's generator never read) and
determinism. The policy is a shipped one (agents/models/distill_v2_s1.pt); the runs are
archmage's (two to four rounds each, so quick).
"""
from __future__ import annotations

import numpy as np
import pytest

from rune_env.envs import RuneRunEnv
from rune_env.rules import default_rules

from agents import make_agent
from agents.evaluation.runs import eval_run_seed
from agents.policy import PolicyAgent
from agents.search.sampled import SampledSearchAgent, SampledSettings, parse_sampled

RULES = default_rules()
POLICY = "agents/models/distill_v2_s1.pt"


def play(agent, run_seed: int, rank: str = "archmage") -> list[int]:
    """One whole run's actions (the agent reset with the run seed, as evaluations do)."""
    env = RuneRunEnv(rank=rank)
    obs, info = env.reset(options={"run_seed": run_seed})
    agent.reset(run_seed)
    actions = []
    while True:
        action = agent.act(obs, info["action_mask"], state=env.state)
        actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return actions


@pytest.mark.parametrize("name,words", [
    ("sampled:n=4", "needs policy=PATH"),
    ("sampled:policy=no/such.pt", "no policy file"),
    (f"sampled:policy={POLICY},n=0", "n is 1..1024"),
    (f"sampled:policy={POLICY},n=1025", "n is 1..1024"),
    (f"sampled:policy={POLICY},n=two", "n needs a number"),
    (f"sampled:policy={POLICY},temperature=0", "temperature is in (0, 100]"),
    (f"sampled:policy={POLICY},temperature=nan", "temperature is in (0, 100]"),
    (f"sampled:policy={POLICY},size=0", "size is 1..1024"),
    (f"sampled:policy={POLICY},margin=-1", "margin is in [0, 10]"),
    (f"sampled:policy={POLICY},epsilon=0", "epsilon is in (0, 1]"),
    (f"sampled:policy={POLICY},epsilon=1.5", "epsilon is in (0, 1]"),
    (f"sampled:policy={POLICY},epsilon=nan", "epsilon is in (0, 1]"),
    (f"sampled:policy={POLICY},waste=-0.5", "waste is in [0, 10]"),
    (f"sampled:policy={POLICY},waste=nan", "waste is in [0, 10]"),
    (f"sampled:policy={POLICY},invest=11", "invest is in [0, 10]"),
    (f"sampled:policy={POLICY},core=pluto", "core is one of sun, star, moon, eclipse, tree"),
    (f"sampled:policy={POLICY},depth=3", "KEY one of policy, n, temperature"),
    (f"sampled:policy={POLICY},reference=rank@x", "sampled"),
    (f"sampled:policy={POLICY},n=4,n=8", "the knob n is given twice"),
])
def test_bad_knobs_are_one_line_errors(name, words):
    with pytest.raises(ValueError) as err:
        make_agent(name, RULES)
    message = str(err.value)
    assert words in message and "\n" not in message and repr(name) in message


def test_knobs_parse():
    s = parse_sampled(f"sampled:policy={POLICY},n=8,temperature=2,reference=meta+rank,size=32,"
                      f"margin=0.5,epsilon=0.25,waste=0.5,invest=0.1")
    assert s == SampledSettings(policy=POLICY, n=8, temperature=2.0, reference="meta+rank",
                                size=32, margin=0.5, epsilon=0.25, waste=0.5, invest=0.1)


def test_one_rollout_is_the_policy_greedy_play():
    """n=1: the only rollout takes the policy's greedy actions, and the player follows it (or
    searches again, greedily, where a reroll shows other offers): the same run, action for
    action, as the policy itself plays it."""
    for episode in range(3):
        seed = eval_run_seed(0, episode)
        assert play(make_agent(f"sampled:policy={POLICY},n=1", RULES), seed) == \
            play(PolicyAgent(POLICY), seed)


def _off_greedy(name: str, run_seed: int) -> tuple[int, int]:
    """(steps, steps whose action is not the policy's greedy one) over every rollout of a
    run's first search, each step checked against the policy's logits at its observation."""
    agent = make_agent(name, RULES)
    made = []
    rollout = agent._rollout

    def recording(state, key, greedy):
        steps, board, mana = rollout(state, key, greedy)
        made.extend(list(steps))
        return steps, board, mana

    agent._rollout = recording
    env = RuneRunEnv(rank="archmage")
    obs, info = env.reset(options={"run_seed": run_seed})
    agent.reset(run_seed)
    agent.act(obs, info["action_mask"], state=env.state)
    off = 0
    for seen, legal, action in made:
        actions = np.flatnonzero(legal)
        off += action != actions[int(np.argmax(agent.net.logits(seen, actions)))]
    return len(made), off


def test_epsilon_samples_that_share_of_a_rollouts_steps():
    """epsilon: each step of a sampled rollout samples with that probability, else takes the
    greedy action. A vanishing epsilon (1e-12: a draw below it has odds of about 1e-12 a step)
    leaves every step of every rollout greedy; at temperature 3 full sampling (epsilon 1, the
    default) takes a non-greedy action on many steps, epsilon 0.2 on some but fewer (about a
    fifth as many: the shares are counted over 12 rollouts of one search, so only the order is
    asserted)."""
    seed = eval_run_seed(0, 4)
    base = f"sampled:policy={POLICY},n=12,temperature=3"
    steps, off = _off_greedy(base + ",epsilon=1e-12", seed)
    assert steps > 12 and off == 0
    steps_full, off_full = _off_greedy(base, seed)
    steps_some, off_some = _off_greedy(base + ",epsilon=0.2", seed)
    assert 0 < off_some / steps_some < off_full / steps_full


def test_core_knob_takes_that_core():
    """core=moon: the run's core choice (its first step, no core fixed) is moon in every
    rollout, so in the run, where the policy alone takes tree (its choice on these runs: each
    of the policies trained so far chooses tree at archmage); the rest of the run is played."""
    from rune_env.run.actions import action_table
    table = action_table(RULES)
    moon = table.id("choose_core", table.cores.index("moon"))
    tree = table.id("choose_core", table.cores.index("tree"))
    for episode in range(2):
        seed = eval_run_seed(0, episode)
        assert play(PolicyAgent(POLICY), seed)[0] == tree
        actions = play(make_agent(f"sampled:policy={POLICY},n=4,core=moon", RULES), seed)
        assert actions[0] == moon and len(actions) > 1


def test_the_best_rollout_is_played():
    """A stand-in score, the number of runes on the board a rollout fields (payoff = runes / 100,
    margin 0): the plan the player follows is that of the rollout with the most runes (the first
    of equals), counted here from every rollout it made."""
    agent = SampledSearchAgent(RULES, 0, parse_sampled(f"sampled:policy={POLICY},n=12"))
    made = []
    rollout = agent._rollout

    def recording(state, key, greedy):
        steps, board, mana = rollout(state, key, greedy)
        made.append((list(steps), board))     # a copy: the player pops its plan's steps
        return steps, board, mana

    class RuneCount:
        def __call__(self, boards):
            return [(len(b.runes) / 100, 0.0) for b in boards]

    agent._rollout = recording
    agent._scorer_for = lambda state: RuneCount()
    env = RuneRunEnv(rank="archmage")
    obs, info = env.reset(options={"run_seed": eval_run_seed(0, 1)})
    agent.reset(eval_run_seed(0, 1))
    first = agent.act(obs, info["action_mask"], state=env.state)
    assert len(made) == 12
    counts = [len(board.runes) for _, board in made]
    best = counts.index(max(counts))
    assert len(set(counts)) > 1                       # the rollouts differ: a real choice
    steps = made[best][0]
    assert first == steps[0][2]
    assert [a for _, _, a in agent._plan] == [a for _, _, a in steps[1:]]


def test_thrift_terms_by_hand():
    """The waste and invest terms of a rollout's score (`_value`, payoff and margin 0): wealth 20 when the search began, a rollout that
    keeps 3 mana and fields a board costing 12 (four grade-I light runes in the hand at 3 mana
    each, configs/rules/default.yaml) lost 20 - 15 = 5 mana (rerolls, say); the base income is
    10, so waste=0.5 takes 0.5 x 5 / 10 = 0.25, and invest=0.1 adds 0.1 x 12 / 15 = 0.08: -0.17.
    A rollout that gained wealth (a reward's mana: wealth 10 before) loses nothing: 0.08. With
    both knobs 0 (the default) the term is 0."""
    from agents.search.boards import board_cost
    from rune_env.rules import Board
    assert RULES.spec.run.income == 10 and RULES.prices["light"] == 3
    board = Board(hand=(("light", 1),) * 4, core="moon")
    assert board_cost(board, RULES) == 12
    agent = SampledSearchAgent(RULES, 0, parse_sampled(
        f"sampled:policy={POLICY},waste=0.5,invest=0.1"))
    assert agent._value(0.0, 0.0, 20, board, 3) == pytest.approx(-0.17)
    assert agent._value(0.0, 0.0, 10, board, 3) == pytest.approx(0.08)
    plain = SampledSearchAgent(RULES, 0, parse_sampled(f"sampled:policy={POLICY}"))
    assert plain._value(0.0, 0.0, 20, board, 3) == 0.0


def test_waste_picks_the_thriftiest_rollout():
    """With battles scoring every rollout alike (a stand-in scorer: payoff 0, margin 0) and
    waste=1, a rollout's value is minus the mana it lost over the income: the player follows
    the first rollout that lost the least, worked out here from each rollout's board and mana
    (wealth at the start: the run's mana, no board yet). The rollouts differ in what they lose
    (the policy rerolls in some): a real choice."""
    from agents.search.boards import board_cost
    agent = SampledSearchAgent(RULES, 0, parse_sampled(f"sampled:policy={POLICY},n=12,waste=1"))
    made = []
    rollout = agent._rollout

    def recording(state, key, greedy):
        steps, board, mana = rollout(state, key, greedy)
        made.append((list(steps), board, mana))
        return steps, board, mana

    agent._rollout = recording
    agent._scorer_for = lambda state: (lambda boards: [(0.0, 0.0)] * len(boards))
    env = RuneRunEnv(rank="archmage")
    obs, info = env.reset(options={"run_seed": eval_run_seed(0, 1)})
    agent.reset(eval_run_seed(0, 1))
    wealth = env.state.mana + board_cost(env.state.to_board(), RULES)
    first = agent.act(obs, info["action_mask"], state=env.state)
    lost = [wealth - mana - board_cost(board, RULES) for _, board, mana in made]
    assert len(made) == 12 and len(set(lost)) > 1
    best = lost.index(min(lost))
    assert first == made[best][0][0][2]
    assert [a for _, _, a in agent._plan] == [a for _, _, a in made[best][0][1:]]


def test_fair_play_and_determinism():
    """The run's generator (the shop's future, the opponent's draw) is never read: the first
    search from a state gives the same plan whatever generator the state holds; and the same
    seed gives the same run twice, another seed another one."""
    env = RuneRunEnv(rank="archmage")
    obs, info = env.reset(options={"run_seed": eval_run_seed(0, 2)})
    plans = []
    for generator_seed in (1, 2):
        state = env.state.clone()
        state.rng = np.random.default_rng(generator_seed)
        agent = make_agent(f"sampled:policy={POLICY},n=8", RULES, seed=5)
        agent.act(obs, info["action_mask"], state=state)
        plans.append([a for _, _, a in agent._plan])
    assert plans[0] == plans[1]
    name = f"sampled:policy={POLICY},n=8"
    seed = eval_run_seed(0, 3)
    assert play(make_agent(name, RULES), seed) == play(make_agent(name, RULES), seed)


def test_refuses_a_duel_and_a_missing_state():
    agent = make_agent(f"sampled:policy={POLICY},n=2", RULES)
    env = RuneRunEnv(rank="archmage")
    obs, info = env.reset(options={"run_seed": 1})
    with pytest.raises(ValueError, match="needs the run state"):
        agent.act(obs, info["action_mask"])
    state = env.state.clone()
    state.choice_seed = 7          # a duel player's state
    with pytest.raises(ValueError, match="one-player runs"):
        agent.act(obs, info["action_mask"], state=state)


def test_pools_refuse_sampled_search():
    from agents.design.pools.drafting import make_drafting_agent
    with pytest.raises(ValueError, match="does not draft pools"):
        make_drafting_agent(f"sampled:policy={POLICY}", RULES, 0)
