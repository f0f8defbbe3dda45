#!/usr/bin/env python
"""Benchmark: how fast battles run, on the standard set of board pairs.

    python scripts/benchmark.py [--json] [--pairs N] [--seed S] [--rules FILE]
                                [--reference-passes N] [--fast-repeats N] [--fast-seconds S]
                                [--env-steps N] [--train-steps N] [--train-config FILE]

The standard set is `standard_pairs(N, S)` (default 1000 pairs, seed 0; rounds 1..12 evenly).
Measured on ONE core (the process is pinned to one CPU where the OS allows it); only the battles
are timed, not building the boards. The battle engines are timed over whole passes of the set:
the best pass is the figure (the machine's speed swings by up to 1.7x between passes a second
apart on a shared host, and interference only slows a pass down) and the median pass is reported
beside it (`..._median` keys).

Reported:
  reference_battles_per_s   battles per second of the reference engine (rune_env.battle),
                            best of --reference-passes (default 2)
  median_duration           median battle duration in game seconds (60 at a timeout)
  median_casts              median casts per battle, both sides summed
  fast_compile_s            the fast engine's first call (disk-cache load, or a cold compile)
  fast_battles_per_s        the fast engine on one core (board encoding included), best of
                            its passes: at least --fast-repeats (default 20) and as many more
                            as fit in --fast-seconds (default 4)
  fast_speedup              fast / reference, per core (best passes of both)
  batch_battles_per_s       fast_battles over every core (passes as for fast_battles_per_s)
  env_steps_per_s           RuneRun-v0 steps/s, random masked policy, one core, battles included
                            (best of 5 passes of --env-steps / 5 steps)
  duel_steps_per_s          RuneDuel (Parallel API) steps/s, both players random masked, both
                            observations each step, one core, battles included (passes as
                            env_steps_per_s)
  train_fps                 MaskablePPO frames/s on RuneRun-v0 (n_envs and hyperparameters of
                            --train-config, default configs/train/apprentice.yaml), one core
  train_fps_stub            the same on a stub env with the same spaces and no game work
  train_fps_ratio           train_fps / train_fps_stub (the issue asks for >= 0.8)

Extending: each measurement is a function of agents/devtools/bench.py decorated with `@measurement`; it
gets the shared `Context` (options, rules, pairs) and returns a list of `Row`s. The JSON output
has every row's key at the top level, plus "pairs", "machine" and "versions". Later issues add
rows there (a fast engine's battles/s and its speed-up, env steps/s, training frames/s) without
touching the rest.

A bad number, rules file or training config is one `error: ...` line and exit status 2, before
anything is measured.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_FAST_SECONDS = 3600      # an hour of timed passes is far past any useful precision

from agents.devtools.bench import BenchOptions, format_table, run, to_json
from agents.cli.args import (MAX_BATTLES, MAX_REPEATS, MAX_STEPS,
                             add_count_argument, add_json_argument, add_rules_argument,
                             add_seed_argument, fail, int_in, non_negative_float_to,
                             script_parser)
from rune_env.rules import RulesError, load_rules


def build_parser():
    parser = script_parser(__doc__)
    add_json_argument(parser)
    add_count_argument(parser, "--pairs", 1000, "board pairs", high=MAX_BATTLES)
    add_seed_argument(parser, "seed of the pairs")
    add_rules_argument(parser)
    add_count_argument(parser, "--reference-passes", 2,
                       "timed passes of the reference engine over the set", high=MAX_REPEATS)
    add_count_argument(parser, "--fast-repeats", 20,
                       "timed passes of the fast engine, one core and batched, at least",
                       high=MAX_REPEATS)
    parser.add_argument("--fast-seconds", type=non_negative_float_to(MAX_FAST_SECONDS),
                        default=4.0, metavar="S",
                        help="more fast-engine passes until they have taken this long, "
                             f"0..{MAX_FAST_SECONDS} (default 4)")
    parser.add_argument("--env-steps", type=int_in(0, MAX_STEPS), default=10000, metavar="N",
                        help=f"timed env steps after as many warm-up steps, 0..{MAX_STEPS} (0: "
                             f"skip; default 10000)")
    parser.add_argument("--train-steps", type=int_in(0, MAX_STEPS), default=16384, metavar="N",
                        help=f"timed MaskablePPO steps per env kind, 0..{MAX_STEPS} (0: skip; "
                             f"default 16384)")
    parser.add_argument("--train-config", default=str(REPO / "configs" / "train" / "apprentice.yaml"),
                        metavar="FILE",
                        help="the training config whose n_envs and hyperparameters are used "
                             "(default configs/train/apprentice.yaml)")
    return parser


def read_train_config(path: str):
    """The training config as train.py reads it (agents.train.train_config.TrainConfig); a problem is
    a ValueError naming --train-config."""
    import yaml

    from agents.train.config import ConfigError
    from agents.train.train_config import validate_config
    from rune_env.files import MAX_YAML_BYTES, read_text, safe_load_yaml
    try:
        text = read_text(Path(path), "it", ValueError, limit=MAX_YAML_BYTES)
    except ValueError as exc:        # names the file; the option too
        raise ValueError(f"--train-config {exc}") from None
    try:
        cfg = safe_load_yaml(text, f"--train-config {path}", ValueError)
    except yaml.YAMLError as exc:
        raise ValueError(f"--train-config {path}: not valid YAML ({exc})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"--train-config {path}: a training config is a YAML mapping")
    try:
        config = validate_config(cfg, f"--train-config {path}")
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    check_model(config, f"--train-config {path}")
    return config


def check_model(cfg, source: str) -> None:
    """Build the config's model once on one env of it (as train.py does before writing a run), so
    policy_kwargs or PPO settings SB3 cannot use are a ValueError naming `source` up front, not
    a traceback after the engine's half a minute of measurements."""
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv

    import rune_env  # noqa: F401 - registers the envs
    from agents.train.ppo import new_model
    env_kwargs = {k: v for k, v in cfg.env_kwargs.items() if k != "opponents"}   # as bench.py
    try:
        venv = DummyVecEnv([lambda: gym.make(cfg.env_id, **env_kwargs)])
    except (gym.error.Error, TypeError, ValueError, KeyError, OSError) as exc:
        raise ValueError(f"{source}: env_kwargs: {exc}") from None
    try:
        new_model(cfg, venv)                                    # train.py's own model
    except (TypeError, ValueError, AssertionError, KeyError, RuntimeError) as exc:
        raise ValueError(f"{source}: cannot build the model ({type(exc).__name__}: "
                         f"{exc})") from None
    finally:
        venv.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        load_rules(args.rules)     # checked before anything is measured
    except RulesError as exc:
        return fail(f"--rules: {exc}")
    train_config = None
    if args.train_steps > 0:
        try:
            train_config = read_train_config(args.train_config)
        except ValueError as exc:
            return fail(str(exc))
    report = run(BenchOptions(
        pairs=args.pairs, seed=args.seed, rules=args.rules,
        reference_passes=args.reference_passes, fast_repeats=args.fast_repeats,
        fast_seconds=args.fast_seconds, env_steps=args.env_steps, train_steps=args.train_steps,
        train_config=train_config))
    print(json.dumps(to_json(report)) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
