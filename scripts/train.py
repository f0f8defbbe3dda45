#!/usr/bin/env python3
"""Train a MaskablePPO drafter from a config.

    python scripts/train.py --config configs/train/quick.yaml [--seed S] [--total-timesteps N]
                            [--run-name NAME [--force]] [--resume] [--runs-dir DIR] [--no-progress]

Every hyperparameter comes from the YAML (keys in configs/train/README.md; it is read into the
typed `TrainConfig` of agents/train/train_config.py: an unknown key, a wrong type or a value out of range is one
`error: ...` line naming the key, exit status 2, nothing written). `--seed` and
`--total-timesteps` override the YAML.

The run directory: DIR/<name>__s<seed>__<UTC time>/ (e.g. runs/quick__s0__20250611T101500Z/;
sortable, a new one per run, so the same command works twice), or DIR/NAME/ with --run-name NAME
(refused if it exists, unless --resume continues it or --force deletes it first). Either is
claimed atomically before anything is built: of two starts with one --run-name, whatever the
timing, one trains and the other is refused at once. The script prints it first. It holds config.yaml (the resolved config), tb/ (TensorBoard: SB3's scalars and
the game's: battle win rate, wins per run, clear rate, rounds survived, lamps left, battle
duration, clear rate per core, each rune kind's share of the boards (game/kind_share/<kind>) and
their histogram; the periodic evaluations (eval/*, images boards/eval/<i>) and the final one
(eval/* at the last step, images boards/final/<i>)), checkpoints/ and final_model.zip (each
written to a temp name and renamed, with a .sig beside it: agents/policy/trust.py; a kill never leaves
half a checkpoint under its name),
final_policy.pt (the network alone) with final_policy.json (its provenance: timesteps, config,
seed), eval.json (the final evaluation, timesteps, train_seconds over every session) and
train_seconds.json.

A config with a `pretrain:` section (agents/train/pretrain.py) first clones the policy from
demonstrations (a file of scripts/collect_demos.py, or an agent's runs played then; DAgger rounds
optionally), from a new network or, with `pretrain.init`, from a policy file's weights (a
fine-tune); TensorBoard pretrain/* under tb/pretrain/, and pretrain.json (the demonstrations,
timings and each epoch); a broken demonstrations file, an unknown agent or an init policy of
another network is one `error: ...` line before anything is written. A resumed run is not
cloned again.

--resume continues a run from its newest model that loads (the last checkpoint, or the final
model; each newer one that does not, truncated or unsigned, is skipped with a line saying why),
in the same TensorBoard run. A resumed run is the uninterrupted run (agents/train/resume.py): checkpoints
are taken at rollout boundaries, at the first one at or past each multiple of checkpoint_every of
the run's global step count, and each has a signed resume state beside it (<name>.state.json:
the envs' states, the last observations, the global generators, SB3's and the callbacks'
counters), so a run killed at any checkpoint and resumed ends with the same weights bit for bit,
the same checkpoints, evaluations on the same steps and the same eval_history.jsonl (cut back to
the resume step, then appended) as the run never killed; what still differs (wall-clock
figures, TensorBoard events a killed session wrote past its last checkpoint) is in docs/ENVS.md.
A model without a usable resume state (a run from before it) resumes with a line saying the run
is no longer the uninterrupted one. A checkpoint is a pickle: only this machine's training's (its .sig)
loads, or any with --trust-pickle (a run made before checkpoints were signed needs it). A finished run (its final model has total_timesteps) is not trained again:
the script says so and exits with status 0, leaving every file as it is; pass a larger
--total-timesteps to train it on. A final model is never replaced by an older one.

Speed and reproducibility: torch runs on the config's torch_threads (1 by default) in this
process and in every subprocess env, set before any torch work (with torch's default of one
thread per core, 512 steps took 12.8 s instead of 2.2 s on 2 busy cores, 86 s instead of 3.5 s
with subprocess envs). Seeds are fixed. A progress bar (SB3's, on stderr) shows when stderr is a
terminal; each evaluation prints one line.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import yaml

from agents.evaluation.runs import training_step
from agents.cli.progress import add_progress_argument, progress_on, say
from agents.cli.args import (add_trust_pickle_argument, apply_trust_pickle, check_runs_dir,
                             fail, int_in, script_parser, seed_int, MAX_STEPS)
# PPOConfig and make_env_fn are not used here: tests/agents/test_train_resume.py reads them from the script
from agents.train.config import RUN_NAME, ConfigError, read_json, rules_hash  # noqa: E402,F401
from agents.train.ppo import (final_evaluation, make_env_fn, make_venv,  # noqa: E402,F401
                              new_model, seed_everything, set_torch_threads, summary_json, train)
from agents.train.run_dirs import (TrainClock, claim_named_run, claim_run_dir,  # noqa: E402,F401
                                   default_run_name, latest_run, saved_models, tb_run_dir)
from agents.train.pretrain import check_pretrain, init_from, pretrain  # noqa: E402
from agents.train.train_config import PPOConfig, check_env, read_config  # noqa: E402,F401
from rune_env.files import write_text_atomic


# -- the command line ----------------------------------------------------------------------------
def build_parser():
    # (export_policy.py's build_parser has this shape, not these options: see its comment)
    p = script_parser(__doc__)
    p.add_argument("--config", metavar="YAML",
                   help="the training config (configs/train/*.yaml); required, except with "
                        "--resume --run-name, which reads the run's own config.yaml; given with "
                        "--resume, it must be that config (a change is refused, naming the key; "
                        "its total_timesteps aside) (default: none)")
    p.add_argument("--seed", type=seed_int, metavar="S",
                   help="the model's seed, 0..2**32-1; env i is seeded S*1000+i (default: the "
                        "config's seed)")
    p.add_argument("--total-timesteps", type=int_in(1, MAX_STEPS), dest="total_timesteps",
                   metavar="N", help=f"env steps to train for in all, 1..{MAX_STEPS}, in whole rollouts "
                        "(n_steps x n_envs: training stops at the first rollout boundary at or "
                        "past N); with --resume, a larger N trains a run on (default: the "
                        "config's total_timesteps)")
    p.add_argument("--run-name", metavar="NAME",
                   help="the run directory's name under --runs-dir; an existing one is refused "
                        "unless --resume or --force (default: <name>__s<seed>__<UTC time>, a new "
                        "directory per run)")
    p.add_argument("--force", action="store_true",
                   help="with --run-name: delete that run's directory first and start again "
                        "(default: off; an existing run is refused)")
    p.add_argument("--resume", action="store_true",
                   help="continue a run from its newest model: --run-name's, else the newest run "
                        "of the config's name and seed. A finished run is not trained again: the "
                        "script says so and exits with status 0 (default: off)")
    p.add_argument("--runs-dir", default=str(ROOT / "runs"), metavar="DIR",
                   help="where run directories go (default: runs/ of the repository)")
    from rune_env.battle.engines import add_engine_argument
    add_engine_argument(p)     # or env_kwargs: {engine: reference} in the config
    add_trust_pickle_argument(p)   # --resume of a run no training on this machine signed
    add_progress_argument(p)
    return p


def check_run_name(name: str) -> str | None:
    if not RUN_NAME.fullmatch(name):
        return (f"--run-name {name!r}: a run directory's name is letters, digits and ._+=- "
                f"(no '/', ':' or spaces), starting with a letter or digit")
    return None


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.force and a.resume:
        return fail("--force and --resume contradict each other: --force deletes the run, "
                    "--resume continues it")
    if a.config is None and not (a.resume and a.run_name):
        return fail("--config YAML is required (only --resume --run-name NAME reads the run's own "
                    "config)")
    if a.run_name is not None and (problem := check_run_name(a.run_name)):
        return fail(problem)
    if a.force and a.run_name is None:
        return fail("--force needs --run-name: it deletes that run's directory first (without a "
                    "name every run gets a new directory)")
    from rune_env.battle.engines import use_engine
    use_engine(a.engine)
    apply_trust_pickle(a)
    runs_dir = Path(a.runs_dir)
    progress = progress_on(a.progress)
    if (status := check_runs_dir(a.runs_dir)) is not None:
        return status
    try:
        return (resume if a.resume else start)(a, runs_dir, progress)
    except ConfigError as exc:
        return fail(str(exc))


def start(a, runs_dir: Path, progress: bool) -> int:
    cfg = read_config(a.config, {"seed": a.seed, "total_timesteps": a.total_timesteps})
    check_env(cfg, str(a.config))
    demos = None
    if cfg.pretrain is not None:      # a bad demonstrations file or agent: refused before any write
        demos = check_pretrain(cfg.pretrain, cfg.env_kwargs, rules_hash(cfg.env_kwargs), str(a.config))
    run_dir = runs_dir / a.run_name if a.run_name else None
    made_runs_dir = not runs_dir.exists()
    if run_dir is not None:
        # claimed before the model is built: a second start with this name is refused at once
        problem = claim_named_run(run_dir, a.force)
        if problem:
            return fail(problem)
    set_torch_threads(cfg.torch_threads)       # before any torch work
    seed_everything(cfg.seed)
    venv = make_venv(cfg)
    try:
        model = new_model(cfg, venv)
        if cfg.pretrain is not None and cfg.pretrain.init is not None:
            init_from(model.policy, cfg.pretrain.init)    # before the run is written: refused whole
    except (TypeError, ValueError, AssertionError) as exc:   # e.g. policy_kwargs SB3 cannot use
        venv.close()
        if run_dir is not None:            # claimed above, nothing in it yet: let it go again
            shutil.rmtree(run_dir, ignore_errors=True)
            if made_runs_dir:
                try:
                    runs_dir.rmdir()       # only if empty: another run may have started there
                except OSError:
                    pass
        if str(exc).startswith("pretrain.init"):
            return fail(f"{a.config}: {exc}")
        return fail(f"{a.config}: cannot build the model ({type(exc).__name__}: {exc})")
    if run_dir is None:
        run_dir = claim_run_dir(runs_dir, default_run_name(cfg.name, cfg.seed))
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_yaml(), sort_keys=False))
    say(f"run: {run_dir}  (torch threads {cfg.torch_threads}; tensorboard --logdir {run_dir / 'tb'})")
    try:
        if cfg.pretrain is not None:
            demos = pretrain(cfg, model, run_dir, demos, progress)
        res = train(cfg, run_dir, model, venv, False, 0.0, progress, demos=demos)
    except BaseException as exc:
        if from_ctrl_c(exc):
            return interrupted(run_dir)
        raise
    print(summary_json(run_dir, res))
    return 0


def config_change(path: str, cfg) -> str | None:
    """The first key (dotted) in which the config file at `path` differs from a run's `cfg`, or
    None; its name, seed and total are the run's (--total-timesteps extends a run, and a
    different --seed is refused on its own)."""
    given = read_config(path, {"seed": cfg.seed, "total_timesteps": cfg.total_timesteps}).to_yaml()
    kept = cfg.to_yaml()
    given["name"] = kept["name"]

    def first(a, b, prefix: str) -> str | None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                if (found := first(a.get(key), b.get(key), f"{prefix}{key}.")) is not None:
                    return found
            return None
        return None if a == b else prefix.rstrip(".")
    return first(given, kept, "")


def from_ctrl_c(exc: BaseException) -> bool:
    """Whether `exc` is a Ctrl-C (SIGINT: KeyboardInterrupt), or an error raised while one
    unwound: code it interrupts halfway may fail in its own cleanup and raise that failure with
    the KeyboardInterrupt as its context (a checkpoint save stopped inside zipfile: "Can't close
    the ZIP file while there is an open writing handle on it"; torch's zip writer: "unexpected
    pos"). Such a run was stopped, not broken: its checkpoints are written atomically."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__context__
    return False


def interrupted(run_dir: Path) -> int:
    print(f"interrupted: continue it with python scripts/train.py --resume --run-name "
          f"{run_dir.name} --runs-dir {run_dir.parent}", file=sys.stderr)
    return 130


def resume(a, runs_dir: Path, progress: bool) -> int:
    from agents.policy import PolicyLoadError, load_model
    if a.run_name:
        run_dir = runs_dir / a.run_name
    else:
        first = read_config(a.config, {"seed": a.seed})
        run_dir = latest_run(runs_dir, first.name, first.seed)
        if run_dir is None:
            return fail(f"nothing to resume: no run {first.name}__s{first.seed}__<time> under "
                        f"{runs_dir} (pass --run-name NAME for another run)")
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        return fail(f"{run_dir}: nothing to resume (no config.yaml)")
    # a resumed run keeps the config it was started with (a new total may extend it)
    cfg = read_config(saved, {"total_timesteps": a.total_timesteps})
    if a.seed is not None and a.seed != cfg.seed:
        return fail(f"--seed {a.seed}: {run_dir} was trained with seed {cfg.seed}")
    if a.config is not None and (key := config_change(a.config, cfg)):
        return fail(f"--config {a.config}: {key} differs from {saved}'s; a resumed run keeps the "
                    f"config it started with (leave --config out, or start a new run)")
    final = run_dir / "final_model.zip"
    final_steps = training_step(final) if final.exists() else None
    if final_steps is not None and final_steps >= cfg.total_timesteps:
        ev = read_json(run_dir / "eval.json")
        if ev.get("timesteps") == final_steps:
            say(f"{run_dir} is finished: its final model has {final_steps} timesteps "
                f"(total_timesteps {cfg.total_timesteps}); nothing to do, nothing changed. To "
                f"train it on, pass --resume --total-timesteps N with N > {final_steps}.")
            print(summary_json(run_dir, ev))
            return 0
        # trained to the end but killed before its final evaluation: evaluate it now
        say(f"{run_dir}: trained ({final_steps} timesteps) but not evaluated; evaluating it")
        set_torch_threads(cfg.torch_threads)
        try:
            res = final_evaluation(cfg, run_dir, final_steps, TrainClock.before(run_dir, final_steps),
                                   tb_run_dir(run_dir), progress)
        except PolicyLoadError as exc:
            return fail(str(exc))
        print(summary_json(run_dir, res))
        return 0
    set_torch_threads(cfg.torch_threads)       # before any torch work
    loaded = newest_that_loads(run_dir, load_model, PolicyLoadError)
    if isinstance(loaded, str):
        return fail(loaded)
    model, source, steps = loaded
    from agents.evaluation.demos import DemosError
    from agents.policy.trust import signed_run
    from agents.train.keep import resumed_demos
    from agents.train.resume import ResumeStateError, check_state, load_state, run_identity
    saved_by = signed_run(source)
    if saved_by is not None and saved_by != run_identity(cfg):
        # another run's weights (another network, other settings), or config.yaml edited since
        return fail(f"{source}: saved by a run of another config than {saved} (copied from "
                    f"another run, or the config edited since); resume the run it belongs to, "
                    f"or start a new one")
    try:          # before anything is written: the keep term's demonstrations, if it has one
        demos = resumed_demos(cfg, run_dir)
    except DemosError as exc:
        return fail(f"{exc} (the keep term's demonstrations, saved when the run started)")
    seed_everything(cfg.seed)
    venv = make_venv(cfg)
    try:
        state = load_state(source, int(model.num_timesteps), run_identity(cfg))
        check_state(state, venv, str(source))
    except ResumeStateError as exc:
        state = None
        say(f"not exact: {exc}; the envs start new episodes and the generators are reseeded, so "
            f"the run goes on but is no longer the uninterrupted one")
    if state is None:
        model.set_env(venv)
    if a.total_timesteps is not None:
        write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_yaml(), sort_keys=False))
    say(f"run: {run_dir}  (torch threads {cfg.torch_threads}; tensorboard --logdir {run_dir / 'tb'})")
    say(f"resuming from {source} at {model.num_timesteps} steps, on to {cfg.total_timesteps}")
    try:
        res = train(cfg, run_dir, model, venv, True, TrainClock.before(run_dir, steps), progress,
                    state, demos)
    except ResumeStateError as exc:       # checked above: a state check_state missed
        return fail(f"{source}: {exc}")
    except BaseException as exc:
        if from_ctrl_c(exc):
            return interrupted(run_dir)
        raise
    print(summary_json(run_dir, res))
    return 0


def newest_that_loads(run_dir: Path, load_model, error: type[Exception]):
    """(model, its file, its steps) of the newest saved model of the run that loads (checkpoints
    and the final model, `saved_models`); each newer one that does not (truncated by a kill,
    corrupt, unsigned) is skipped with a line saying why. If none loads: why, as one line."""
    skipped = []
    for path, steps in saved_models(run_dir):
        try:
            model = load_model(path)
        except error as exc:
            say(f"skipped: {exc}")
            skipped.append(str(exc))
            continue
        return model, path, int(model.num_timesteps if steps is None else steps)
    if not skipped:
        return f"{run_dir / 'checkpoints'}: no checkpoint to resume from"
    return (f"{run_dir}: no saved model loads ({len(skipped)} tried; the newest: {skipped[0]})")


if __name__ == "__main__":
    sys.exit(main())
