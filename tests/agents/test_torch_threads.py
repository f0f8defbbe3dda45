"""`limit_torch_threads` (agents/policy): the scripts' --torch-threads reaches torch when a
policy loads it, and a process that plays no policy never imports torch (its modules double the
objects each full garbage collection walks, and so the search player's time per round)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "agents" / "models" / "apprentice_s0.pt"


def run(code: str) -> list[str]:
    """The lines a fresh interpreter prints running `code` (in the checkout)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_count_waits_for_a_policy_to_import_torch():
    out = run(f"""
import sys
from agents.policy import limit_torch_threads, load_policy
limit_torch_threads(3)
print('torch' in sys.modules)
load_policy({str(POLICY)!r})
import torch
print(torch.get_num_threads())
limit_torch_threads(2)            # torch imported: set at once
print(torch.get_num_threads())
""")
    assert out == ["False", "3", "2"]


def test_a_planner_run_never_imports_torch():
    # the scripts' arguments applied (engine, --torch-threads 1, pickles), a planner made and
    # one action of a run taken, as evaluate and planner_report do
    out = run("""
import argparse, sys
from agents import make_agent
from agents.cli.args import add_play_arguments, apply_play_arguments
from rune_env.envs.run_env import RuneRunEnv
p = argparse.ArgumentParser()
add_play_arguments(p)
apply_play_arguments(p.parse_args([]))
env = RuneRunEnv(rank='apprentice')
obs, info = env.reset(options={'run_seed': 1})
agent = make_agent('planner:boards=40', env.rules, seed=1)
agent.act(obs, info['action_mask'], state=env.state)
print('torch' in sys.modules)
""")
    assert out == ["False"]
