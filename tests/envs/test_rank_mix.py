"""RuneRun-v0's rank mix: `rank` may be a list of ranks, and each run plays the one its run seed
draws (`run_rank`), against that rank's opponents. A curriculum over ranks for training, with
the same runs whatever the order, the number of envs, training or evaluation."""
import numpy as np
import pytest

from agents.evaluation.runs import eval_context
from rune_env.envs.arguments import RANK_MIX_TAG, check_rank_mix, run_rank
from rune_env.envs.run_env import RuneRunEnv
from rune_env.rules import default_rules

MIX = ("journeyman", "mentor", "archmage")


def _first_steps(env, run_seed, steps=25):
    """The observations of a run's first steps, always taking the lowest legal action that is
    not `ready` when there is one (a fixed policy, so two envs can be compared)."""
    obs, info = env.reset(options={"run_seed": run_seed})
    seen = [obs.copy()]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, _, term, trunc, info = env.step(int(legal[-1]))
        seen.append(obs.copy())
        if term or trunc:
            break
    return seen


def test_a_run_plays_the_rank_its_seed_draws_against_that_ranks_pool():
    rules = default_rules()
    mix = check_rank_mix(rules, list(MIX))
    assert mix == (1, 3, 5)      # journeyman, mentor, archmage: indices in RULES' rank order
    env = RuneRunEnv(rank=list(MIX))
    for run_seed in (10**7, 10**7 + 1, 10**7 + 2, 10**7 + 3):
        env.reset(options={"run_seed": run_seed})
        # the rank is the one a generator seeded by (run seed, tag) draws, and nothing else
        want = mix[int(np.random.default_rng([run_seed, RANK_MIX_TAG]).integers(3))]
        assert env.rank == want == run_rank(mix, run_seed)
        assert env.state.rank == want
        assert env.opponents.pool.rank == rules.spec.ranks[want].id


def test_a_mixed_env_plays_each_run_exactly_as_an_env_of_that_one_rank():
    mixed = RuneRunEnv(rank=list(MIX))
    for run_seed in (10**7 + 5, 10**7 + 6, 10**7 + 7):
        rank = run_rank(mixed.rank_mix, run_seed)
        single = RuneRunEnv(rank=rank)
        a, b = _first_steps(mixed, run_seed), _first_steps(single, run_seed)
        assert len(a) == len(b)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_the_ranks_drawn_do_not_depend_on_the_order_of_runs():
    env = RuneRunEnv(rank=list(MIX))
    seeds = list(range(10**7, 10**7 + 12))
    forward = []
    for s in seeds:
        env.reset(options={"run_seed": s})
        forward.append(env.rank)
    backward = []
    for s in reversed(seeds):
        env.reset(options={"run_seed": s})
        backward.append(env.rank)
    assert forward == backward[::-1]
    assert len(set(forward)) > 1     # 12 runs of a 3-rank mix do not all draw one rank


def test_the_draw_is_uniform_and_a_rank_listed_twice_is_drawn_twice_as_often():
    # 3,000 run seeds over (1, 3, 3): rank 1 expected 1,000 times, with a binomial standard
    # deviation of sqrt(3000 x 1/3 x 2/3) = 25.8; six deviations either side is 845..1,155
    counts = {1: 0, 3: 0}
    for s in range(3000):
        counts[run_rank((1, 3, 3), s)] += 1
    assert 845 <= counts[1] <= 1155
    assert counts[1] + counts[3] == 3000
    # a one-rank mix is that rank, whatever the seed
    assert {run_rank((4,), s) for s in range(50)} == {4}


def test_drawn_run_seeds_give_the_same_ranks_for_the_same_env_seed():
    def ranks(seed):
        env = RuneRunEnv(rank=list(MIX))
        env.reset(seed=seed)
        out = [env.rank]
        for _ in range(7):
            env.reset()
            out.append(env.rank)
        return out
    assert ranks(3) == ranks(3)


def test_a_reset_option_sets_one_rank_or_a_new_mix():
    env = RuneRunEnv(rank=list(MIX))
    env.reset(options={"run_seed": 10**7, "rank": "sage"})
    assert env.rank == 4 and env.rank_mix == (4,)
    env.reset(options={"run_seed": 10**7})       # the option stays, as a single rank always did
    assert env.rank == 4
    env.reset(options={"run_seed": 10**7, "rank": ["apprentice", "sorcerer"]})
    assert env.rank_mix == (0, 2) and env.rank == run_rank((0, 2), 10**7)


@pytest.mark.parametrize("rank, message", [
    ([], "rank as a list must name 1..64 ranks; got 0"),
    (["mentor", "wizard"], "rank[1] must be a rank name"),
    (["mentor", 9], "rank[1] must be a rank name"),
    (["mentor"] * 65, "rank as a list must name 1..64 ranks; got 65"),
])
def test_a_bad_mix_is_one_error_naming_the_entry(rank, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        RuneRunEnv(rank=rank)
    env = RuneRunEnv()
    with pytest.raises(ValueError, match="reset option 'rank'"):
        env.reset(options={"rank": rank})


def test_an_evaluation_of_a_mix_names_its_ranks_and_pools():
    ctx = eval_context({"rank": ["mentor", "sage"]}, 10, 0, default_rules())
    assert ctx["rank"] == "mentor+sage"
    assert ctx["opponents"] == "shipped pool mentor.json.gz, sage.json.gz"
