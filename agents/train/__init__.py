"""Training drafters and what is made from them:

- `config`: the primitives of the strict YAML configs (ConfigError, the checked number types,
  `Section`, read_yaml / read_json / write_json, run names) that every trainer's config uses.
- `train_config`: configs/train/*.yaml (`TrainConfig`, `PPOConfig`, `EvalConfig`).
- `run_dirs`: run directories, their checkpoints and the training clock.
- `callbacks`: the SB3 callbacks (checkpoints, the game's TensorBoard metrics, evaluations).
- `ppo`: the MaskablePPO model, its envs and the train loop of scripts/train.py.
- `masking`: the fast masked action distribution; `resume`: resume states of checkpoints.
- `export`: a checkpoint to a policy file with its card.
- `league`, `exploit`: self-play leagues and best responses in the duel env.
- `sweep`: hyperparameter sweeps under Ray Tune; `rllib`, `rllib_config`: RLlib's PPO.
"""
