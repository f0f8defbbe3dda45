"""The command-line switches shared by the scripts that play agents against pools (evaluate,
ladder, calibrate_ranks): the battle engine, strict pools, and torch's threads."""
from __future__ import annotations

import argparse

from rune_env.battle.engines import add_engine_argument, use_engine


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    """--engine, --strict and --torch-threads."""
    add_engine_argument(parser)
    parser.add_argument("--strict", action="store_true",
                        help="refuse a pool made under other rules (default: warn and use it)")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch threads for policies (default 1: fastest for one observation)")


def apply_play_arguments(args: argparse.Namespace) -> None:
    """Make the parsed engine this process's default and set torch's threads."""
    use_engine(args.engine)
    from .policy import limit_torch_threads
    limit_torch_threads(args.torch_threads)
