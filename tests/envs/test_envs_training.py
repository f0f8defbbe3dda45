"""The envs inside the training stack: SB3's env checker, Gymnasium's and SB3's vector envs
(masks through `call` / `env_method`), and a short MaskablePPO run.

Needs the `train` extra (stable-baselines3, sb3-contrib, torch); skipped without it. Marked
`outside_mutation_check` (not a battle-rule test): a plain `pytest` runs it (~15 s, mostly importing
torch). The longer training run is `heavy` (`pytest --heavy` runs it).
"""
from __future__ import annotations


import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

import rune_env  # noqa: E402,F401  (registers the env ids)
from test_envs_masks_cloning import DRAFT_ID, N_ACTIONS, READY, RUN_ID, mixed_opponent, pick  # noqa: E402

pytestmark = pytest.mark.outside_mutation_check


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The networks here are tiny: torch's thread pool only costs time (10 s of 20 on a busy
    two-core machine)."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_run(**kw):
    """A module-level factory (picklable for subprocess vector envs)."""
    kw.setdefault("opponents", mixed_opponent)
    return gym.make(RUN_ID, **kw)


def make_draft(**kw):
    kw.setdefault("opponents", mixed_opponent)
    return gym.make(DRAFT_ID, **kw)


@pytest.mark.parametrize("env_id", [RUN_ID, DRAFT_ID])
@pytest.mark.parametrize("obs_mode", ["flat", "dict"])
def test_sb3_env_checker(env_id, obs_mode):
    """SB3's checker steps unmasked random actions: penalty mode. (Its advice to flatten the
    dict mode's 2-D parts is a warning, not an error.)"""
    from stable_baselines3.common.env_checker import check_env
    env = gym.make(env_id, obs_mode=obs_mode, illegal_action="penalty")
    check_env(env.unwrapped, warn=True)


# -- Gymnasium vector envs ---------------------------------------------------------------------------
def _drive_gym_vector(venv, steps: int, seed: int) -> dict:
    """Masked random actions through a Gymnasium vector env (next-step autoreset). Masks come from
    `call("action_masks")` and must agree with the batched info["action_mask"]."""
    obs, info = venv.reset(seed=[seed + i for i in range(venv.num_envs)])
    assert venv.observation_space.contains(obs)
    rng = np.random.default_rng(seed)
    seen = {"battles": 0, "episodes": 0}
    for _ in range(steps):
        masks = np.stack(venv.call("action_masks"))
        assert masks.shape == (venv.num_envs, N_ACTIONS) and masks.dtype == np.bool_
        has = info.get("_action_mask", np.zeros(venv.num_envs, dtype=bool))
        assert np.array_equal(info["action_mask"][has], masks[has])
        # an env whose episode just ended offers only ready; its next action is ignored (the
        # vector env resets it instead)
        assert all(m.any() for m in masks)
        actions = np.array([pick(rng, m) for m in masks])
        obs, reward, terminated, truncated, info = venv.step(actions)
        assert venv.observation_space.contains(obs)
        assert reward.shape == (venv.num_envs,)
        battle = info.get("battle")
        if isinstance(battle, dict):            # batched summaries: one mask per field
            seen["battles"] += int(battle["_round"].sum())
        seen["episodes"] += int((terminated | truncated).sum())
    return seen


def _run_closing(venv, steps: int, seed: int) -> dict:
    try:
        seen = _drive_gym_vector(venv, steps, seed)
    except BaseException:
        # an error inside AsyncVectorEnv.step_wait leaves it "waiting": a plain close() would
        # wait for the workers forever
        venv.close(terminate=True) if isinstance(venv, gym.vector.AsyncVectorEnv) else venv.close()
        raise
    venv.close()
    return seen


@pytest.mark.parametrize("vector_cls", [gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv],
                         ids=["sync", "async"])
def test_gymnasium_vector_envs(vector_cls):
    """Two RuneRun-v0 and two RuneDraft-v0 (dict observations) side by side: the infos of envs
    that did and did not fight a battle in the same step must batch."""
    seen = _run_closing(vector_cls([make_run, make_run]), 200, seed=1)
    assert seen["battles"] >= 10 and seen["episodes"] >= 1
    seen = _run_closing(vector_cls([lambda: make_draft(obs_mode="dict")] * 2), 120, seed=2)
    assert seen["episodes"] >= 2


# -- SB3 vector envs -----------------------------------------------------------------------------------
def _drive_sb3_vector(venv, steps: int, seed: int) -> int:
    from sb3_contrib.common.maskable.utils import get_action_masks
    venv.seed(seed)
    obs = venv.reset()
    assert obs.shape == (venv.num_envs, *venv.observation_space.shape)
    rng = np.random.default_rng(seed)
    dones = 0
    for _ in range(steps):
        masks = venv.env_method("action_masks")
        assert len(masks) == venv.num_envs
        stacked = np.stack(masks)
        assert stacked.shape == (venv.num_envs, N_ACTIONS) and stacked.any(axis=1).all()
        assert np.array_equal(get_action_masks(venv), stacked)
        actions = np.array([pick(rng, m) for m in stacked])
        obs, rewards, done, infos = venv.step(actions)     # raise mode: an illegal one would fail
        assert all(venv.observation_space.contains(o) for o in obs)
        for d, info in zip(done, infos):
            if d:
                dones += 1
                assert venv.observation_space.contains(info["terminal_observation"])
                assert info["over"] and np.flatnonzero(info["action_mask"]).tolist() == [READY]
            else:
                assert info["action_mask"].any()
    return dones


def test_sb3_dummy_vec_env():
    from stable_baselines3.common.vec_env import DummyVecEnv
    venv = DummyVecEnv([make_run, make_run])
    try:
        assert _drive_sb3_vector(venv, 300, seed=3) >= 1
    finally:
        venv.close()


def test_sb3_subproc_vec_env():
    """env_method("action_masks") through the pipes; the registered env with its default
    opponents (no lambdas: the env factories are pickled to the workers)."""
    from stable_baselines3.common.vec_env import SubprocVecEnv
    venv = SubprocVecEnv([make_run, lambda: gym.make(RUN_ID)], start_method="fork")
    try:
        assert _drive_sb3_vector(venv, 150, seed=4) >= 1
    finally:
        venv.close()


# -- MaskablePPO ---------------------------------------------------------------------------------------
def test_maskable_ppo_learns_a_few_steps():
    from sb3_contrib import MaskablePPO
    env = gym.make(RUN_ID)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=2, seed=0,
                        device="cpu", verbose=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs, info = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
    assert info["action_mask"][int(action)]


def test_maskable_ppo_dict_observations():
    from sb3_contrib import MaskablePPO
    env = make_draft(obs_mode="dict")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        device="cpu", verbose=0)
    model.learn(total_timesteps=128)
    assert model.num_timesteps >= 128


@pytest.mark.heavy
def test_maskable_ppo_longer_run_on_subprocesses_heavy():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv
    venv = SubprocVecEnv([make_run] * 2, start_method="fork")
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=128, seed=0, device="cpu",
                            verbose=0)
        model.learn(total_timesteps=4096)
        assert model.num_timesteps >= 4096
    finally:
        venv.close()


def test_benchmark_stub_env_has_the_spaces_and_fixed_episodes():
    """rune_env/envs/stub.py (the benchmark's baseline): RuneRun-v0's spaces, a constant
    observation (the one it is given), every action legal, reward 0, episodes of exactly
    `episode_length` steps; bad arguments are refused."""
    from gymnasium.utils.env_checker import check_env as gym_check

    from rune_env.envs import RuneRunEnv
    from rune_env.envs.stub import StubRunEnv
    real = RuneRunEnv(opponents="generator")
    first, _ = real.reset(seed=0)
    stub = StubRunEnv(real.observation_space, real.action_space, 3, first)
    gym_check(stub, skip_render_check=True)
    obs, info = stub.reset(seed=0)
    assert np.array_equal(obs, first) and info["action_mask"].all()
    assert stub.action_masks().shape == (real.action_space.n,)
    ends = []
    for _ in range(3):
        obs, reward, term, trunc, _ = stub.step(0)
        assert reward == 0.0 and not trunc and np.array_equal(obs, first)
        ends.append(term)
    assert ends == [False, False, True]
    with pytest.raises(ValueError, match="episode_length must be at least 1"):
        StubRunEnv(real.observation_space, real.action_space, 0)
    with pytest.raises(ValueError, match="observation shape"):
        StubRunEnv(real.observation_space, real.action_space, 5, np.zeros(3, np.float32))
