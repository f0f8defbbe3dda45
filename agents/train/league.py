"""A self-play league in the duel (the library part of scripts/league.py).

MaskablePPO learns in `DuelVsAgent` against opponents sampled from the league's members: the
fixed members of the config (greedy, the apprentice PPO policies, ...) and the learner's own
snapshots, one every `snapshot_every` steps. Sampling is prioritised fictitious self-play
(Vinyals et al. 2019): member m is drawn with weight f(p_m), p_m the learner's recent score
against m (wins + draws / 2 over the last `pfsp.window` duels, with a prior of `pfsp.prior_games`
half-won duels), f "hard" = (1 - p)^power (favours the members it does not yet beat), "even" =
p (1 - p) (those it beats half the time), "uniform" = 1; plus `pfsp.floor` so that none is
dropped for good.

At each snapshot the new member plays `rating_games` duels against every other member; the
ratings of all members are a Bradley-Terry fit of those duels on an Elo scale (agents/evaluation/ratings.py).
TensorBoard (runs/<name>/tb) gets the learner's curves (SB3's, and league/score/<member>,
league/weight/<member>), the ratings over time (league/rating/<member>) and the win-rate matrix
as an image (league/win_matrix). eval.json has the final ratings with their intervals and the
members' alpha-Rank (where a population copying the better member spends its time). The league's state (members, results, the learner's scores)
is league.json; with each snapshot comes a checkpoint, and `--resume` continues from the last.
"""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from rune_env.files import load_json, read_text, write_text_atomic

from agents.cli.progress import bar, say
from agents.cli.args import MAX_ENVS, MAX_ROLLOUT, MAX_RUNS, MAX_STEPS, MAX_THREADS, SEED_MAX

from .config import (RUN_NAME, ConfigError, Mapping, Number, PolicyKwargs, Section, Whole,
                     read_yaml, sb3_policy_kwargs, validate_model)
from .league_state import FINAL, LEAGUE_VERSION, check_league_state, resume_point  # noqa: F401
from .train_config import PPOConfig

RATING_RESAMPLES = 200  # bootstrap resamples of the rating duels for eval.json's 95% intervals


class MemberConfig(Section):
    name: str = Field(pattern="^" + RUN_NAME.pattern + "$")
    agent: str                                     # greedy[:NOISE], planner[:KEY=VALUE,...] or a policy path


class PFSPConfig(Section):
    weighting: Literal["hard", "even", "uniform"] = "hard"
    power: Number = Field(2.0, gt=0)
    window: Whole = Field(200, ge=1, le=MAX_ROLLOUT)
    prior_games: Number = Field(4.0, ge=0)
    floor: Number = Field(0.02, ge=0)


class DuelLearnerConfig(Section):
    """What a MaskablePPO learner in the duel needs (the league's and the best response's)."""
    seed: Whole = Field(0, ge=0, le=SEED_MAX)
    duel_kwargs: Mapping = {}                      # RuneDuelEnv's keywords (rank, battle_reward, ...)
    n_envs: Whole = Field(16, ge=1, le=MAX_ENVS)
    torch_threads: Whole = Field(1, ge=1, le=MAX_THREADS)
    masking: Literal["fast", "sb3"] = "fast"
    ppo: PPOConfig = PPOConfig()
    policy_kwargs: PolicyKwargs = {}
    warm_start: str | None = None                  # a RuneRun-v0 policy (.pt) to start from


class LeagueConfig(DuelLearnerConfig):
    """A league config (configs/league/*.yaml; keys in configs/league/README.md)."""
    name: str = Field("league", pattern="^" + RUN_NAME.pattern + "$")
    total_timesteps: Whole = Field(1_000_000, ge=1, le=MAX_STEPS)
    members: list[MemberConfig] = Field(min_length=1)
    snapshot_every: Whole = Field(250_000, ge=1, le=MAX_STEPS)
    max_snapshots: Whole = Field(8, ge=1, le=10_000)          # snapshots sampled as opponents: the latest
    rating_games: Whole = Field(8, ge=2, le=MAX_RUNS)
    pfsp: PFSPConfig = PFSPConfig()
    final_eval_games: Whole = Field(200, ge=0, le=100_000)
    final_eval_seed: Whole = Field(0, ge=0, le=SEED_MAX)


def read_league_config(path: str | Path, overrides: dict | None = None) -> LeagueConfig:
    """A league config file with the command line's overrides, validated (ConfigError)."""
    cfg = validate_model(LeagueConfig, read_yaml(path, overrides), str(path), "a league config",
                         {(): LeagueConfig, ("pfsp",): PFSPConfig, ("ppo",): PPOConfig})
    names = [m.name for m in cfg.members]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: members: two members share a name ({names})")
    return cfg


def check_duel_learner(cfg: DuelLearnerConfig, source: str):
    """The rules of a duel learner's config (the league's, the best response's), once its
    duel_kwargs build a DuelVsAgent and its learner fits on it (train_config.check_learner_size);
    a ConfigError naming `source` otherwise."""
    from rune_env.duel import DuelVsAgent
    from rune_env.envs.run_env import resolve_rules
    from rune_env.rules import RulesError

    from .train_config import check_learner_size
    try:
        rules = resolve_rules(cfg.duel_kwargs.get("rules"), cfg.duel_kwargs.get("rules_overrides"))
        env = DuelVsAgent({"check": None}, **cfg.duel_kwargs)
    except (TypeError, ValueError, KeyError, OSError, RulesError) as exc:
        raise ConfigError(f"{source}: duel_kwargs: {' '.join(str(exc).split())}") from None
    try:
        check_learner_size(cfg.ppo, cfg.n_envs, cfg.policy_kwargs, env, source)
    finally:
        env.close()
    return rules


def check_league(cfg: LeagueConfig, source: str = "the league config"):
    """What a league run needs before its directory is made, each a ConfigError naming `source`
    (the config file): duel_kwargs that RuneDuelEnv takes (known keys, values it accepts), every
    member an agent that loads (a pickled checkpoint no training here signed is refused here, as
    a PolicyLoadError is), and matplotlib for the win-rate matrix. Returns the League (its rules
    those played), its members' networks loaded, for `run_league` to use rather than load them
    again."""
    rules = check_duel_learner(cfg, source)
    league = League(cfg, rules)
    for m in cfg.members:
        try:
            league.agent(m.name)
        except (TypeError, ValueError, KeyError, OSError) as exc:   # PolicyLoadError is a ValueError
            raise ConfigError(f"{source}: members: {m.name} ({m.agent}): "
                              f"{' '.join(str(exc).split())}") from None
    from agents.evaluation.charts import charts_problem
    if (problem := charts_problem()):     # the win-rate matrix is drawn at every snapshot
        raise ConfigError(f"the league's {problem}")
    return league


# -- the league's state --------------------------------------------------------------------------
class League:
    """The members (name -> agent spec), the rating duels among them, and the learner's recent
    scores against each (for PFSP)."""

    def __init__(self, cfg: LeagueConfig, rules):
        self.cfg = cfg
        self.rules = rules
        self.members: dict[str, str] = {m.name: m.agent for m in cfg.members}
        self.fixed = [m.name for m in cfg.members]
        self.snapshots: list[str] = []
        self.results: list[tuple[str, str, float]] = []     # (a, b, a's score) per rating duel
        self.scores: dict[str, deque] = {}
        self.ratings_history: list[dict] = []
        self._models: dict[str, Any] = {}

    # PFSP
    def sampled(self) -> list[str]:
        return self.fixed + self.snapshots[-self.cfg.max_snapshots:]

    def score(self, name: str) -> float:
        p = self.cfg.pfsp
        recent = self.scores.get(name, ())
        return (sum(recent) + p.prior_games / 2) / (len(recent) + p.prior_games) \
            if (recent or p.prior_games) else 0.5

    def weights(self) -> dict[str, float]:
        p = self.cfg.pfsp
        out = {}
        for name in self.sampled():
            x = self.score(name)
            f = {"hard": (1.0 - x) ** p.power, "even": x * (1.0 - x), "uniform": 1.0}[p.weighting]
            out[name] = f + p.floor
        total = sum(out.values())
        return {k: v / total for k, v in out.items()}

    def report(self, name: str, score: float) -> None:
        self.scores.setdefault(name, deque(maxlen=self.cfg.pfsp.window)).append(float(score))

    # agents
    def agent(self, name: str, seed: int = 0):
        """A fresh agent of member `name` (policies share one loaded network per member)."""
        from agents import make_agent
        from agents.policy import PolicyAgent, load_policy
        spec = self.members[name]
        if not spec.endswith((".pt", ".zip")):
            return make_agent(spec, self.rules, seed)
        if name not in self._models:
            self._models[name] = make_agent(spec, self.rules, seed).model \
                if spec.endswith(".zip") else load_policy(spec)
        agent = PolicyAgent(self._models[name])
        agent.name = name
        return agent

    def add_snapshot(self, name: str, path: str) -> None:
        self.members[name] = path
        self.snapshots.append(name)

    def add_final(self, path: str) -> None:
        """The final learner: a member for the ratings, not an opponent (training is over)."""
        self.members[FINAL] = path

    def ratings(self) -> dict[str, float]:
        from agents.evaluation.ratings import fit_bradley_terry
        return fit_bradley_terry(self.results)

    def matrix(self) -> tuple[list[str], np.ndarray]:
        """(members, each one's mean score against each other; NaN where two never met, the
        diagonal included: a member never duels itself)."""
        from agents.evaluation.ratings import score_matrix
        names = list(self.members)
        scores, _ = score_matrix(self.results, names)
        np.fill_diagonal(scores, np.nan)
        return names, scores

    def to_json(self, steps: int) -> dict[str, Any]:
        return {"version": LEAGUE_VERSION, "steps": steps, "members": self.members,
                "fixed": self.fixed, "snapshots": self.snapshots,
                "results": [list(r) for r in self.results],
                "scores": {k: list(v) for k, v in self.scores.items()},
                "ratings_history": self.ratings_history}

    def load_json(self, data: Any, run_dir: Path) -> int:
        """Take the league state `data` (league.json of `run_dir`, checked whole first:
        `check_league_state`); returns its steps. The snapshots are the run's own files,
        run_dir/members/<name>.pt (wherever league.json says they were: a moved run resumes,
        and the file cannot name another)."""
        steps = check_league_state(data, self.cfg)
        self.members = {n: self.members[n] for n in self.fixed}
        self.members.update({n: str(Path(run_dir) / "members" / f"{n}.pt")
                             for n in data["snapshots"]})
        self.snapshots = list(data["snapshots"])
        self.results = [(a, b, float(s)) for a, b, s in data["results"]]
        self.scores = {k: deque(v, maxlen=self.cfg.pfsp.window) for k, v in data["scores"].items()}
        self.ratings_history = list(data["ratings_history"])
        # a finished league resumed to more steps: its old final member is replaced at the end
        self.members.pop(FINAL, None)
        self.results = [r for r in self.results if FINAL not in r[:2]]
        self.ratings_history = [h for h in self.ratings_history if FINAL not in h["ratings"]]
        return steps


class LeagueSampler:
    """One env's opponent sampler: PFSP over the league's sampled members, each member's agent
    made once per env (so no two envs share an agent's state)."""

    def __init__(self, league: League, env_index: int):
        self.league = league
        self.env_index = env_index
        self.agents: dict[str, Any] = {}

    def sample(self, rng: np.random.Generator) -> tuple[str, Any]:
        weights = self.league.weights()
        names = list(weights)
        name = names[int(rng.choice(len(names), p=np.array([weights[n] for n in names])))]
        if name not in self.agents:
            self.agents[name] = self.league.agent(name, seed=self.env_index)
        return name, self.agents[name]

    def report(self, name: str, score: float) -> None:
        self.league.report(name, score)


# -- warm start ----------------------------------------------------------------------------------
def warm_start(model, path: str | Path, own_size: int) -> None:
    """Copy a RuneRun-v0 policy's acting network into `model`'s: the first layer's weights for
    the run part of the duel observation (its first `own_size` inputs), zeros for the rest (the
    opponent part starts with no influence), every other acting weight as it is. The value
    network keeps its fresh initialisation (an exported policy has none)."""
    import torch

    from agents.policy import PolicyLoadError, load_policy
    try:
        source = load_policy(path).state_dict()
    except PolicyLoadError as exc:
        raise ConfigError(f"warm_start: {exc}") from None
    target = model.policy.state_dict()
    with torch.no_grad():
        for key, value in source.items():
            if key not in target or key.startswith(("mlp_extractor.value_net.", "value_net.")):
                continue
            t = target[key]
            if t.shape == value.shape:
                t.copy_(value)
            elif t.dim() == 2 and t.shape[0] == value.shape[0] and value.shape[1] == own_size:
                t.zero_()
                t[:, :own_size].copy_(value)
            else:
                raise ConfigError(f"warm_start {path}: {key} has shape {tuple(value.shape)}, "
                                  f"the learner's is {tuple(t.shape)}")
    model.policy.load_state_dict(target)


# -- training ------------------------------------------------------------------------------------
def make_league_venv(cfg: LeagueConfig, league: League):
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rune_env.duel import DuelVsAgent

    def fn(i: int):
        def _init():
            env = Monitor(DuelVsAgent(LeagueSampler(league, i), **cfg.duel_kwargs))
            env.reset(seed=cfg.seed * 1000 + i)
            return env
        return _init
    venv = DummyVecEnv([fn(i) for i in range(cfg.n_envs)])
    venv.seed(cfg.seed * 1000)
    return venv


def new_learner(cfg: LeagueConfig, venv):
    from sb3_contrib import MaskablePPO

    from .masking import policy_class
    return MaskablePPO(policy_class("MlpPolicy", cfg.masking), venv, seed=cfg.seed, verbose=0,
                       policy_kwargs=sb3_policy_kwargs(cfg.policy_kwargs), device="cpu", **cfg.ppo.kwargs())


def rate_member(league: League, name: str, steps: int, progress: bool = False,
                against: list[str] | None = None) -> None:
    """The new member `name` plays `rating_games` duels against every other member (or those
    `against`); the ratings of all are fitted again and kept in the history."""
    from agents.evaluation.duels import play_match
    from rune_env.duel import RuneDuelEnv
    cfg = league.cfg
    env = RuneDuelEnv(**cfg.duel_kwargs)
    others = [m for m in (against if against is not None else league.members) if m != name]
    index = list(league.members).index(name)
    with bar(len(others) * cfg.rating_games, f"rating {name}", progress, unit="duel") as pb:
        for k, other in enumerate(others):
            res = play_match(league.agent(name), league.agent(other), cfg.rating_games,
                             seed=cfg.seed * 10_007 + index * 101 + k, env=env, progress=pb)
            for _ in range(res["wins"]):
                league.results.append((name, other, 1.0))
            for _ in range(res["losses"]):
                league.results.append((name, other, 0.0))
            for _ in range(res["draws"]):
                league.results.append((name, other, 0.5))
    league.ratings_history.append({"steps": steps, "ratings": league.ratings()})


def league_callback(cfg: LeagueConfig, league: League, run_dir: Path, progress: bool):
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import Image

    from agents.evaluation.duels import matrix_image
    from agents.policy import export_policy
    from agents.policy.trust import save_checkpoint

    class LeagueCallback(BaseCallback):
        def __init__(self):
            super().__init__()
            self.scores: list[float] = []
            self.next_at = 0

        def _on_training_start(self) -> None:
            # the next multiple of snapshot_every (a resumed league goes on from its own steps)
            self.next_at = (self.model.num_timesteps // cfg.snapshot_every + 1) * cfg.snapshot_every

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done and "score" in info:
                    self.scores.append(info["score"])
            if self.num_timesteps >= self.next_at:
                self.snapshot()
            # stop at total_timesteps exactly, not at the end of the rollout in flight: then a
            # league whose last snapshot is at its total ends with that snapshot's weights, and
            # a league stopped after a snapshot and resumed with --total-timesteps at it ends
            # the same as one run to that total
            return self.num_timesteps < cfg.total_timesteps

        def _on_rollout_end(self) -> None:
            rec = self.logger.record
            if self.scores:
                rec("league/learner_score", sum(self.scores) / len(self.scores))
                self.scores = []
            for name, w in league.weights().items():
                rec(f"league/weight/{name}", w)
                rec(f"league/score/{name}", league.score(name))

        def snapshot(self) -> None:
            steps = int(self.num_timesteps)
            name = f"snap_{steps}"
            path = run_dir / "members" / f"{name}.pt"
            export_policy(self.model, path)
            write_text_atomic(path.with_suffix(".json"), json.dumps(
                {"member": name, "timesteps": steps, "seed": cfg.seed,
                 "rules_hash": league.rules.hash, "league": cfg.name}, indent=2) + "\n")
            league.add_snapshot(name, str(path))
            rate_member(league, name, steps, progress=False)
            ratings = league.ratings_history[-1]["ratings"]
            for member, r in ratings.items():
                self.logger.record(f"league/rating/{member}", r)
            names, scores = league.matrix()
            self.next_at = (steps // cfg.snapshot_every + 1) * cfg.snapshot_every
            self.logger.record("league/win_matrix", Image(matrix_image(names, scores), "HWC"),
                               exclude=("stdout", "log", "json", "csv"))
            save_checkpoint(self.model, run_dir / "checkpoints" / f"league_{steps}.zip")
            write_text_atomic(run_dir / "league.json", json.dumps(league.to_json(steps)) + "\n")
            best = max(ratings, key=ratings.get)
            say(f"snapshot {name} at {steps} steps: rating {ratings[name]:.0f} "
                f"(best {best} {ratings[best]:.0f}; {len(league.members)} members)")

    return LeagueCallback()


def run_league(cfg: LeagueConfig, run_dir: Path, resume: bool = False, progress: bool = True,
               league: League | None = None, on_start=None) -> dict:
    """Train the league's learner to cfg.total_timesteps (from the last snapshot with `resume`),
    export it, rate it against every member and evaluate it against the fixed ones. `league`:
    the one `check_league(cfg)` returned, its members already loaded (else they load here).
    `on_start`, if given, is called once everything is checked, before anything is written (the
    script writes config.yaml then: a refused resume leaves the run as it was). The
    run is the same either way: loading a member draws on (or, for a .zip, reseeds) the global
    generators, but nothing before the learner reads them, and the learner seeds them again."""
    from sb3_contrib import MaskablePPO

    from rune_env.duel import DuelEncoder
    from rune_env.envs.run_env import resolve_rules

    from agents.policy import export_policy
    from .callbacks import progress_callback
    from .ppo import seed_everything, set_torch_threads
    from agents.policy.trust import save_checkpoint
    set_torch_threads(cfg.torch_threads)
    seed_everything(cfg.seed)
    if league is None:
        league = League(cfg, resolve_rules(cfg.duel_kwargs.get("rules"),
                                           cfg.duel_kwargs.get("rules_overrides")))
        for m in cfg.members:
            league.agent(m.name)          # every member loads (or fails) before training starts
    rules = league.rules
    from agents.evaluation.charts import charts_problem
    if (problem := charts_problem()):     # the win-rate matrix is drawn at every snapshot
        raise ConfigError(f"the league's {problem}")
    state_file = run_dir / "league.json"
    finished = run_dir / "eval.json"
    if resume and finished.is_file():
        # a finished league is not trained or evaluated again (as train.py's runs): its result
        done = load_json(read_text(finished, "league result", ConfigError), str(finished),
                         ConfigError)
        if isinstance(done, dict) and isinstance(done.get("timesteps"), int) \
                and done["timesteps"] >= cfg.total_timesteps:
            say(f"{run_dir} is finished: its final policy has {done['timesteps']} steps "
                f"(total_timesteps {cfg.total_timesteps}); nothing to do, nothing changed")
            return done
    steps, ckpt = resume_point(cfg, league, state_file) if resume else (0, None)
    resumed = ckpt is not None
    if on_start is not None:
        on_start()
    if resumed:
        venv = make_league_venv(cfg, league)
        model = MaskablePPO.load(ckpt, env=venv, device="cpu")
        say(f"resuming {run_dir} at {steps} steps ({len(league.members)} members)")
    else:
        if resume:
            say(f"{run_dir}: nothing to resume (no snapshot yet); starting anew")
        steps = 0
        # the fixed members play each other first, so the ratings and the matrix start whole
        for i, name in enumerate(league.fixed[1:], 1):
            rate_member(league, name, 0, progress, against=league.fixed[:i])
        venv = make_league_venv(cfg, league)
        model = new_learner(cfg, venv)
        if cfg.warm_start:
            warm_start(model, cfg.warm_start, DuelEncoder(rules).own_size)
    model.tensorboard_log = str(run_dir / "tb")
    callbacks = [league_callback(cfg, league, run_dir, progress)]
    if progress:
        callbacks.append(progress_callback())
    model.learn(total_timesteps=cfg.total_timesteps - steps, callback=callbacks,
                tb_log_name="league", reset_num_timesteps=not resumed,
                progress_bar=False)
    venv.close()
    final_steps = int(model.num_timesteps)
    save_checkpoint(model, run_dir / "final_model.zip")
    export_policy(model, run_dir / "final_policy.pt")
    league.add_final(str(run_dir / "final_policy.pt"))
    rate_member(league, FINAL, final_steps, progress)
    log_final_ratings(league, run_dir, final_steps)
    res = final_evaluation(cfg, league, run_dir / "final_policy.pt", progress)
    from agents.evaluation.ratings import rating_intervals
    # each rating duel is its own game (its own seeds): the bootstrap resamples them one by one
    res.update({"timesteps": final_steps, "ratings": league.ratings(),
                "ratings_ci": rating_intervals([[r] for r in league.results], RATING_RESAMPLES,
                                               cfg.seed),
                "alpharank": members_alpharank(league),
                "rules_hash": rules.hash, "members": league.members})
    write_text_atomic(run_dir / "league.json", json.dumps(league.to_json(final_steps)) + "\n")
    write_text_atomic(run_dir / "final_policy.json", json.dumps(
        {"checkpoint": "final_model.zip", "timesteps": final_steps, "seed": cfg.seed,
         "rules_hash": rules.hash, "league": cfg.name,
         "duel_kwargs": cfg.duel_kwargs}, indent=2) + "\n")
    write_text_atomic(run_dir / "eval.json", json.dumps(res, indent=2) + "\n")
    return res


def members_alpharank(league: League) -> dict[str, float] | None:
    """alpha-Rank's mass on each member (agents/evaluation/alpharank.py) from their head-to-head
    matrix: every member has duelled every other (each new member plays all before it), so the
    matrix is whole; None if a pair never met."""
    from agents.evaluation.alpharank import alpha_rank
    names, scores = league.matrix()
    off = ~np.eye(len(names), dtype=bool)
    if len(names) < 2 or np.isnan(scores[off]).any():
        return None
    return {n: float(w) for n, w in zip(names, alpha_rank(scores))}


def log_final_ratings(league: League, run_dir: Path, steps: int) -> None:
    """The ratings with the final member, and the whole matrix, in TensorBoard at the last step
    (league/rating/<member>, the image league/win_matrix)."""
    from torch.utils.tensorboard import SummaryWriter

    from agents.evaluation.duels import matrix_image
    names, scores = league.matrix()
    with SummaryWriter(str(run_dir / "tb" / "league_final")) as w:
        for member, r in league.ratings_history[-1]["ratings"].items():
            w.add_scalar(f"league/rating/{member}", r, steps)
        w.add_image("league/win_matrix", matrix_image(names, scores), steps, dataformats="HWC")


def final_evaluation(cfg: LeagueConfig, league: League, policy: Path, progress: bool) -> dict:
    """The final learner against each fixed member: `final_eval_games` duels each."""
    from agents.evaluation.duels import play_match
    from agents.policy import PolicyAgent
    from rune_env.duel import RuneDuelEnv
    out: dict[str, Any] = {"against": {}}
    if not cfg.final_eval_games:
        return out
    env = RuneDuelEnv(**cfg.duel_kwargs)
    learner = PolicyAgent(str(policy))
    with bar(len(league.fixed) * cfg.final_eval_games, "final evaluation", progress,
             unit="duel") as pb:
        for name in league.fixed:
            res = play_match(learner, league.agent(name), cfg.final_eval_games,
                             seed=cfg.final_eval_seed, env=env, progress=pb)
            out["against"][name] = res
            say(f"final vs {name}: win {res['win_rate']:.3f} [{res['win_ci'][0]:.3f}, "
                f"{res['win_ci'][1]:.3f}], loss {res['loss_rate']:.3f}"
                f"{'  (beats it)' if res['beats'] else ''}")
    return out
