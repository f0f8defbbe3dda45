"""A designer's change, end to end (issue 31): the commands of docs/DESIGNERS.md, "A rules change,
end to end", run as the page gives them, with tiny budgets and /tmp replaced by a fresh folder.

A rules file that `extends: default.yaml` with one changed number goes through the audit (a real
process, started in that folder), two pools drafted under it, a ghost and a contact sheet,
board_stats, the calibration and the ladder (in-process `main(argv)`), each with `--rules`. Every
step exits 0 and nothing warns (neither a `warning:` line on stderr nor a Python warning): the
pools drafted under the file carry its hash. The audit and the calibration print their verdicts,
the pictures are PNGs, the pools and the ladder record the file's rules hash."""
from __future__ import annotations

import os
import json
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from PIL import Image

from rune_env.rules import default_rules, load_rules
from rune_env.rules.hp import round_max_hp
from rune_env.run.opponents import load_pool

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "DESIGNERS.md"
SECTION = "## A rules change, end to end"
# the docs' budgets, cut to a few seconds a step; the audit audits one round (and the defaults);
# the pools keep the docs' 12 rounds, every round a run reaches without draws (fewer warn)
TINY = {"--runs": "2", "--max-round": "12", "--episodes": "2"}
AUDIT_TINY = ["--rounds", "3"]

pytestmark = pytest.mark.outside_mutation_check


def documented_commands() -> list[str]:
    """The section's bash block, a command a line (continuations joined, comments cut)."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text[text.index(SECTION):], re.S).group(1)
    lines = block.replace("\\\n", " ").splitlines()
    return [re.sub(r"\s+#\s.*$", "", line).strip() for line in lines if line.strip()]


def what(step: list[str]) -> str:
    """A step's program: "printf", a script's path, or "rune_env COMMAND"."""
    if step[0] != "python":
        return step[0]
    return f"rune_env {step[3]}" if step[1] == "-m" else step[1]


def tiny(args: list[str]) -> list[str]:
    """The arguments with TINY's values in place of the docs' budgets."""
    return [TINY[args[i - 1]] if i and args[i - 1] in TINY else a for i, a in enumerate(args)]


def test_the_documented_path_runs_under_the_rules_file_without_a_warning(tmp_path, script_main,
                                                                          cli_main):
    commands = [c.replace("/tmp/", f"{tmp_path}/") for c in documented_commands()]
    steps = [shlex.split(c, comments=True) for c in commands]
    assert [what(s) for s in steps] == [
        "printf", "rune_env rules", "scripts/balance_audit.py", "scripts/make_opponents.py",
        "scripts/make_opponents.py", "rune_env render", "rune_env sheet",
        "scripts/board_stats.py", "scripts/calibrate_ranks.py", "scripts/ladder.py"]
    assert all("--rules" in s for s in steps[2:]), "every step takes the rules file"
    rules_file = tmp_path / "my_try.yaml"

    subprocess.run(["bash", "-c", commands[0]], check=True, cwd=tmp_path)
    rules = load_rules(rules_file)
    assert rules.spec.battle.base_hp != default_rules().spec.battle.base_hp
    assert rules.hash != default_rules().hash
    # `rules` says the file's hash and the one value it changes
    r = cli_main(*steps[1][3:])
    assert r.returncode == 0 and rules.hash in r.stdout, r.stderr
    assert r.stdout.splitlines()[1].split()[0] == "battle.base_hp"
    steps = [steps[0], *steps[2:]]

    # the audit: a real process, started in the folder of the rules file
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    audit = subprocess.run([sys.executable, str(REPO / steps[1][1]), *steps[1][2:], *AUDIT_TINY,
                            "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=300)
    assert audit.returncode == 0, audit.stderr
    assert "warning" not in audit.stderr
    verdicts = audit.stdout[audit.stdout.index("verdicts (docs/BALANCE.md's limits):"):]
    assert re.search(r"^  (holds|unclear|FAILS)  one_rune wins at most 20%", verdicts, re.M)
    assert "what moved against" in audit.stdout and rules.hash in audit.stdout

    outputs = {}
    for step in steps[2:]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("always")
            if step[1] == "-m":
                r = cli_main(*step[3:])
            else:
                r = script_main(Path(step[1]).stem, *tiny(step[2:]), "--no-progress")
        assert r.returncode == 0, (step, r.stderr)
        assert "warning" not in r.stderr, (step, r.stderr)
        assert not [str(w.message) for w in caught if "rules" in str(w.message)], step
        outputs.setdefault(what(step), []).append(r.stdout)

    for rank in ("apprentice", "journeyman"):
        pool = load_pool(tmp_path / f"my_{rank}.json.gz", rules, strict=True)
        assert pool.rules_hash == rules.hash and pool.rank == rank
        assert max(pool.rounds) == int(TINY["--max-round"])
        # drafted under the file, not only stamped with its hash: round 1's boards have its HP
        assert {g["board"]["max_hp"] for g in pool.rounds[1]} == {round_max_hp(rules, 1)}
    for name in ("ghost.png", "sheet.png"):
        assert Image.open(tmp_path / name).format == "PNG"
        assert any(f"wrote {tmp_path / name}" in out
                   for out in outputs["rune_env render"] + outputs["rune_env sheet"])
    stats = outputs["scripts/board_stats.py"][0]
    assert f"rules {rules.hash}" in stats and "by drafter:" in stats and "greedy:0.5" in stats
    calibration = outputs["scripts/calibrate_ranks.py"][0].strip().splitlines()
    assert calibration[-1] == "graded" or calibration[-1].startswith("not graded: ")
    ladder = (tmp_path / "my_ladder" / "ladder.json").read_text(encoding="utf-8")
    assert f'"rules_hash": "{rules.hash}"' in ladder
    # what was played, recorded beside the ratings and printed above them (the docs' 10 runs,
    # cut to TINY's 2; the default 4 samples; seed 0)
    settings = json.loads(ladder)
    assert {k: settings[k] for k in ("seed", "episodes", "samples")} == {
        "seed": 0, "episodes": int(TINY["--episodes"]), "samples": 4}
    assert outputs["scripts/ladder.py"][0].startswith(f"rules {rules.hash}, seed 0, ")
