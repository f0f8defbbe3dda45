"""rune-env: Rune Circle as a research environment.

Layers (imports point down only): rules -> battle -> run -> envs. Importing the package registers
the Gymnasium environments "rune_env/RuneRun-v0" and "rune_env/RuneDraft-v0".

The episode's step cap comes from the rules of each env that `gym.make` builds, not from the
default rules: the ids register `rune_env.envs.time_limit.RulesTimeLimit` as an additional
wrapper, which truncates at `max_episode_steps(env.rules, ...)` steps unless `gym.make(...,
max_episode_steps=N)` gives a limit of its own (then N governs, above the cap or below it). So
the ids are registered without `max_episode_steps` (`gym.spec(id).max_episode_steps` is None),
while every made env's `spec.max_episode_steps` is its limit (1861 and 63 with the default
rules). Importing the package reads no rules file and does not import `envs`.
"""
from __future__ import annotations

from importlib import import_module

__version__ = "0.1.0"


def max_episode_steps(rules, draft: bool = False) -> int:
    """The most steps an episode can take under `rules`: a run has at most round_cap rounds, each
    at most action_cap preparation steps (the last one forces ready) plus its relic and reward
    choices; plus the core choice. A draft episode is one such round (and the core choice)."""
    run = rules.spec.run
    per_round = run.action_cap + 2
    return (1 if draft else run.round_cap) * per_round + 1


class _EnvFactory:
    """A registered entry point: builds the env class named by `target` with make's keyword
    arguments (the step limit is the registered `RulesTimeLimit`'s). `metadata` is the class's
    (read lazily, at make time), so `gym.make` checks render modes as for the class."""

    def __init__(self, target: str, draft: bool):
        self.target, self.draft = target, draft

    def env_class(self):
        module, name = self.target.split(":")
        return getattr(import_module(module), name)

    @property
    def metadata(self) -> dict:
        return self.env_class().metadata

    def __call__(self, **kwargs):
        return self.env_class()(**kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target!r})"


make_run_env = _EnvFactory("rune_env.envs.run_env:RuneRunEnv", draft=False)
make_draft_env = _EnvFactory("rune_env.envs.run_env:RuneDraftEnv", draft=True)


def _register() -> None:
    try:
        import gymnasium
    except ImportError:  # the rules and battle work without Gymnasium
        return
    from gymnasium.envs.registration import WrapperSpec
    for name, entry, draft in (("RuneRun-v0", "rune_env:make_run_env", False),
                               ("RuneDraft-v0", "rune_env:make_draft_env", True)):
        env_id = f"rune_env/{name}"
        limit = WrapperSpec("RulesTimeLimit", "rune_env.envs.time_limit:RulesTimeLimit",
                            {"draft": draft})
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry, additional_wrappers=(limit,))


_register()
