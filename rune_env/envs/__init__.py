"""Gymnasium environments: thin adapters over rune_env.run."""
from .agent import Agent
from .observation import Encoder, ObservationLayout
from .run_env import ENV_VERSION, RuneDraftEnv, RuneRunEnv

__all__ = ["Agent", "ENV_VERSION", "Encoder", "ObservationLayout", "RuneDraftEnv", "RuneRunEnv"]
