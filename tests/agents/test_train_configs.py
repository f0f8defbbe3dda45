"""The shipped training configs (configs/train/*.yaml) stay runnable as the models and pools they
name change: each validates, builds its env, and names a teacher that loads; and each shipped
policy whose card names a training config names one that exists, with the seed its command
gives."""
from __future__ import annotations

import json
import shlex
import warnings
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "configs" / "train").glob("*.yaml"))


def test_the_configs_are_there():
    # quick.yaml is the README's run; expert.yaml, distill.yaml and distill_v2.yaml ship models
    names = {p.name for p in CONFIGS}
    assert {"quick.yaml", "expert.yaml", "distill.yaml", "distill_v2.yaml"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_each_config_validates_and_its_teacher_loads(path, monkeypatch):
    from agents.train.pretrain import check_pretrain
    from agents.train.config import eval_rules, rules_hash
    from agents.train.train_config import check_env, read_config
    monkeypatch.chdir(REPO)                  # the configs name models relative to the repository
    cfg = read_config(path)
    with warnings.catch_warnings():          # long_mentor's 15 lamps: the pools warn of their rules
        warnings.simplefilter("ignore")
        check_env(cfg, str(path))
    if cfg.pretrain is not None and cfg.pretrain.agent is not None:
        with warnings.catch_warnings():      # teachers trained under other rules say so
            warnings.simplefilter("ignore")
            assert check_pretrain(cfg.pretrain, cfg.env_kwargs, rules_hash(cfg.env_kwargs),
                                  str(path)) is None     # an agent, not a demonstrations file
        from agents.policy.schedule import PREFIX, parse_schedule
        agent = cfg.pretrain.agent
        cap = eval_rules(cfg.env_kwargs).spec.run.round_cap
        parts = [a for _, a in parse_schedule(agent, cap)] if agent.startswith(PREFIX) else [agent]
        for name in parts:
            if name.endswith(".pt"):         # a shipped teacher has its card beside it
                assert (REPO / name).is_file() and (REPO / name).with_suffix(".json").is_file()


def test_distill_v2_distils_ppo_s2s_opening_and_long_mentors_middle_game():
    # the issue #33 student: rounds 1-2 from the strongest opening at archmage, 3+ from a spender
    from agents.policy.schedule import parse_schedule
    from agents.train.config import eval_rules
    from agents.train.train_config import read_config
    cfg = read_config(REPO / "configs" / "train" / "distill_v2.yaml")
    cap = eval_rules(cfg.env_kwargs).spec.run.round_cap
    assert parse_schedule(cfg.pretrain.agent, cap) == [(1, "agents/models/apprentice_s2.pt"),
                                                       (3, "agents/models/long_mentor_s1.pt")]
    ranks = cfg.env_kwargs["rank"]
    assert "mentor" not in ranks             # mentor's pool is half drafted by a distilled agent
    assert ranks.count("archmage") == 4 and len(ranks) == 8


def test_each_cards_config_exists_with_the_cards_seed():
    cards = [json.loads(p.read_text(encoding="utf-8"))
             for p in sorted((REPO / "agents" / "models").rglob("*.json"))]
    checked = 0
    for card in cards:
        config = card.get("config")
        if not config or not config.startswith("configs/train/"):
            continue
        assert (REPO / config).is_file(), card["policy"]
        words = shlex.split(card["command"])
        assert words[words.index("--config") + 1] == config
        assert int(words[words.index("--seed") + 1]) == card["seed"], card["policy"]
        checked += 1
    assert checked >= 4      # the apprentice seeds, expert s1, distill s1, distill_v2 s1, ...


@pytest.mark.parametrize("policy_kwargs, words", [
    ({"net_arch": [128, 0]}, "policy_kwargs: net_arch must be a whole number in 1..16384, got 0"),
    ({"net_arch": {"pi": [64], "vf": [0]}}, "net_arch.vf must be a whole number in 1..16384"),
    ({"net_arch": [64] * 17}, "net_arch must be a list of at most 16 layer widths"),
    ({"activation_fn": "swish"}, "activation_fn must be one of Tanh, ReLU"),
    ({"ortho_init": "yes"}, "ortho_init must be true or false"),
    ({"features_extractor_class": "os.system"}, "unknown key 'features_extractor_class'"),
])
def test_policy_kwargs_an_exported_policy_could_not_keep_are_refused(tmp_path, policy_kwargs,
                                                                      words):
    """A zero-width layer trained to the end and failed at export (no final_policy.pt, and
    --resume then wrote a card naming it); a name trained nothing (TypeError in SB3): both are
    one ConfigError naming policy_kwargs, before anything is built."""
    from agents.train.config import ConfigError
    from agents.train.train_config import read_config
    cfg = yaml.safe_load((REPO / "configs" / "train" / "quick.yaml").read_text())
    cfg["policy_kwargs"] = policy_kwargs
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError) as caught:
        read_config(path)
    assert words in str(caught.value) and str(caught.value).startswith(f"{path}: policy_kwargs")


def test_an_activation_is_named_in_any_case_and_built_as_its_torch_class(tmp_path):
    import torch.nn
    from agents.train.config import sb3_policy_kwargs
    from agents.train.train_config import read_config
    cfg = yaml.safe_load((REPO / "configs" / "train" / "quick.yaml").read_text())
    cfg["policy_kwargs"] = {"net_arch": [8], "activation_fn": "tanh", "ortho_init": False}
    path = tmp_path / "tanh.yaml"
    path.write_text(yaml.safe_dump(cfg))
    kwargs = read_config(path).policy_kwargs
    assert kwargs == {"net_arch": [8], "activation_fn": "Tanh", "ortho_init": False}
    assert sb3_policy_kwargs(kwargs) == {"net_arch": [8], "activation_fn": torch.nn.Tanh,
                                         "ortho_init": False}
    assert sb3_policy_kwargs({}) is None


def test_an_empty_config_still_takes_the_command_lines_overrides(tmp_path):
    """An empty file (or one of comments) is every key at its default; --seed and
    --total-timesteps still hold (they were dropped: the file read as None)."""
    from agents.train.train_config import read_config
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing but a comment\n")
    cfg = read_config(path, {"seed": 7, "total_timesteps": 100})
    assert (cfg.seed, cfg.total_timesteps, cfg.name) == (7, 100, "empty")


def test_a_shipped_config_reads_its_files_from_any_directory(tmp_path, monkeypatch):
    """distill.yaml names its teachers from the repository root (agents/models/...): from
    another directory it was "no such policy file". A relative path that names no file from the
    current directory is read from the repository; one that does is read where it is."""
    from agents.train.train_config import read_config
    monkeypatch.chdir(tmp_path)
    cfg = read_config(REPO / "configs" / "train" / "distill.yaml")
    assert cfg.pretrain.agent == (f"by_round:1={REPO}/agents/models/expert_s1_2000k.pt;"
                                  f"3={REPO}/agents/models/long_mentor_s1.pt")
    # written down (config.yaml, the run's identity) as from the repository root: a run
    # started in one directory resumes from another
    from agents.train.resume import run_identity
    written = cfg.to_yaml()["pretrain"]["agent"]
    assert written == ("by_round:1=agents/models/expert_s1_2000k.pt;"
                       "3=agents/models/long_mentor_s1.pt")
    away = run_identity(cfg)
    monkeypatch.chdir(REPO)
    assert run_identity(read_config(REPO / "configs" / "train" / "distill.yaml")) == away
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "agents" / "models" / "expert_s1_2000k.pt"
    mine.parent.mkdir(parents=True)
    mine.write_bytes((REPO / "agents" / "models" / "expert_s1_2000k.pt").read_bytes())
    cfg = read_config(REPO / "configs" / "train" / "distill.yaml")
    assert cfg.pretrain.agent.startswith("by_round:1=agents/models/expert_s1_2000k.pt;3=/")
