"""rune-env: Rune Circle as a research environment.

Layers (imports point down only): rules -> battle -> run -> envs. Importing the package registers
the Gymnasium environments "rune_env/RuneRun-v0" and "rune_env/RuneDraft-v0".
"""
from __future__ import annotations

__version__ = "0.1.0"


def _max_episode_steps() -> tuple[int, int]:
    """A run has at most round_cap rounds; each at most action_cap preparation steps (the last
    one forces ready) plus its relic and reward choices; plus the core choice."""
    from .rules.config import default_rules
    run = default_rules().spec.run
    per_round = run.action_cap + 2
    return run.round_cap * per_round + 1, per_round + 1


def _register() -> None:
    try:
        import gymnasium
    except ImportError:  # the rules and battle work without Gymnasium
        return
    run_steps, draft_steps = _max_episode_steps()
    for name, entry, steps in (("RuneRun-v0", "rune_env.envs.run_env:RuneRunEnv", run_steps),
                               ("RuneDraft-v0", "rune_env.envs.run_env:RuneDraftEnv", draft_steps)):
        env_id = f"rune_env/{name}"
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry, max_episode_steps=steps)


_register()
