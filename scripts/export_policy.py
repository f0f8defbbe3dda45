#!/usr/bin/env python3
"""Export a training checkpoint as a shipped policy: a `.pt` file and its `.json` card; or convert
a policy of the old pickled format.

    python scripts/export_policy.py runs/apprentice_s0/checkpoints/model_1000000_steps.zip \\
        --out agents/models/apprentice_s0_1000k.pt [--dtype float16] [--check N] [--note TEXT]
    python scripts/export_policy.py --convert OLD.pt --trust [--out NEW.pt] [--check N]

The `.pt` holds the acting network alone (no value head, no optimizer), its weights as float16 by
default (about 1 MB for the [256, 256] drafters; float32 doubles it): a safetensors file with the
network's description as JSON, nothing pickled, so loading one runs no code from it
(agents/policy/file.py). It is written by `agents.policy.export_policy` and loaded by
`PolicyAgent(path)`, `evaluate.py --agents`, the pool recipes of configs/ranks.yaml and the envs'
`opponents=`. The checkpoint is a pickle: it is read only if this machine's training saved it
(its .sig, agents/policy/trust.py) or with --trust-pickle. The card beside it (the same name with
`.json`) says where it came from: the checkpoint and its sha256, the run's config, seed and rules
hash, the timesteps and training seconds there, the run's periodic evaluation at that step (if
one was made) and, with `--check N`, how many steps of N evaluation runs the exported policy chose
the same action as the checkpoint (float16 rounding may, rarely, change a choice).

`--convert OLD --trust` rewrites a policy of the pickled format (rune-env-policy v2, or SB3's
policy.save) in the data format, in place unless --out: the same weights bit for bit, checked
(every weight equal, and the same action at every step of --check N evaluation runs of the env
its card names), its card updated (`format`, and `converted_from` with the old file's sha256). It
unpickles OLD, which runs any code OLD holds: --trust says you made the file yourself.

Nothing is written unless the checkpoint loads and the check has run; an existing `--out` is
refused unless `--force`. A bad argument or checkpoint is one `error: ...` line, exit status 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from agents.policy import EXPORT_DTYPES, PolicyLoadError, limit_torch_threads
from agents.cli.progress import add_progress_argument, bar
from agents.cli.args import (add_json_argument, add_seed_argument, check_output,
                             fail, int_in, script_parser)
from agents.evaluation.runs import MAX_EPISODES


def build_parser():
    # argparse declarations share train.py's build_parser's shape (a positional, --out, a
    # choice, a checked count), not its options: a helper would only hide the option names
    p = script_parser(__doc__)
    p.add_argument("checkpoint", metavar="CHECKPOINT", nargs="?",
                   help="a training checkpoint (.zip: runs/<run>/checkpoints/model_<N>_steps.zip "
                        "or runs/<run>/final_model.zip) (required, unless --convert)")
    p.add_argument("--out", metavar="FILE",
                   help="the policy file to write, ending in .pt; its card goes beside it as .json "
                        "(required, unless --convert: then default OLD itself)")
    p.add_argument("--convert", metavar="OLD",
                   help="convert OLD, a policy of the old pickled format, to the data format "
                        "(needs --trust) (default: none)")
    p.add_argument("--trust-pickle", "--trust", action="store_true", dest="trust_pickle",
                   help="unpickle a file this script would refuse: --convert's OLD, or a "
                        "checkpoint no training run on this machine signed; a pickle can run any "
                        "code, so only for files you made yourself (default: off)")
    p.add_argument("--dtype", choices=EXPORT_DTYPES, default="float16",
                   help="how the weights are stored (default float16: half the size)")
    p.add_argument("--check", type=int_in(0, MAX_EPISODES), default=20, metavar="N",
                   help=f"evaluation runs on which the exported policy's choices are compared "
                        f"with the checkpoint's, 0..{MAX_EPISODES} (0: no check; default 20)")
    add_seed_argument(p, "evaluation seed of the check")
    p.add_argument("--note", default=None, metavar="TEXT",
                   help="a sentence for the card, e.g. what the policy is for (default: none)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file and its card (default: keep them and stop)")
    add_json_argument(p, "the card as JSON instead of a summary")
    add_progress_argument(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.convert is not None:
        return convert(a)
    if a.checkpoint is None or a.out is None:
        return fail("a CHECKPOINT and --out FILE are required (or --convert OLD --trust)")
    checkpoint, out = Path(a.checkpoint), Path(a.out)
    if a.trust_pickle:
        from agents.policy.trust import trust_pickle
        trust_pickle()
    if not checkpoint.is_file():
        return fail(f"{checkpoint}: no such checkpoint file")
    problem = _out_problem(out, a.force)
    if problem:
        return fail(problem)
    limit_torch_threads(1)
    from agents.train.export import ExportError, export_checkpoint
    try:
        with bar(a.check, "check", a.progress) as pb:
            card = export_checkpoint(checkpoint, out, a.dtype, a.check, a.seed, a.note, progress=pb)
    except (PolicyLoadError, ExportError) as exc:
        return fail(str(exc))
    if a.json:
        print(json.dumps(card, indent=1))
        return 0
    print(f"written: {out} ({out.stat().st_size / 1e6:.2f} MB, {a.dtype}) and {out.with_suffix('.json')}")
    print(f"  {card['timesteps']} timesteps, rules {card['rules_hash']}, seed {card['seed']}")
    agree = card.get("agreement")
    if agree:
        print(f"  same action as the checkpoint in {agree['same_actions']} of {agree['steps']} steps "
              f"({agree['episodes']} evaluation runs, seed {agree['evaluation_seed']})")
    return 0


def _out_problem(out: Path, overwrite: bool) -> str | None:
    """What is wrong with --out as the policy file to write (and its card beside it), if anything."""
    if out.suffix != ".pt":
        return f"--out {out}: the policy file's name must end in .pt"
    if (out.exists() or out.with_suffix(".json").exists()) and not overwrite:
        return f"--out {out}: exists (pass --force to replace it and its card)"
    return check_output(out, "--out")


def convert(a) -> int:
    old = Path(a.convert)
    out = Path(a.out) if a.out else old
    if a.checkpoint is not None:
        return fail("--convert OLD takes no CHECKPOINT (it converts OLD)")
    if not old.is_file():
        return fail(f"--convert {old}: no such policy file")
    if not a.trust_pickle:
        return fail(f"--convert {old} unpickles it, and a pickle can run any code: pass --trust "
                    f"if you made the file yourself")
    problem = _out_problem(out, a.force or out == old)    # converting in place is the default
    if problem:
        return fail(problem)
    limit_torch_threads(1)
    from agents.train.export import convert_pickled
    try:
        with bar(a.check, "check", a.progress) as pb:
            card = convert_pickled(old, out, a.check, a.seed, progress=pb)
    except (ValueError, OSError) as exc:     # PolicyLoadError, ExportError, a bad card
        return fail(str(exc))
    if a.json:
        print(json.dumps(card, indent=1))
        return 0
    check = card["converted_from"]["check"]
    print(f"converted: {old} -> {out} ({out.stat().st_size / 1e6:.2f} MB), the same weights"
          + (f"; the same action in {check['same_actions']} of {check['steps']} steps "
             f"({check['episodes']} evaluation runs)" if check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
