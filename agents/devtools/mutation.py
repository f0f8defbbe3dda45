"""The mutation check (scripts/mutation_check.py is its command line; its docstring says what is
mutated and how a kill is confirmed): every battle number of the frozen rules changed in turn,
the battle tests run on each mutant.

- The numbers: `mutations(data)` lists a `Mutation` per battle number (floats +10%, ints +1,
  booleans flipped; `SECTIONS` and `SKIP` say which), `normalise_path` reads the --only forms,
  `apply` makes a mutated copy.
- Running the tests: `Suite` (what runs, what is left out), `baseline` (the unmutated run:
  failing tests deselected, files ordered), `check` (one mutant: killed, survived, refused,
  timeout or error, each kill confirmed by `confirmed`), `check_all` (on a thread pool).
- `report` prints the summary; `outcomes_json` is the --json file's content.
- This module is also the pytest plugin of those runs (`-p agents.devtools.mutation`): its two hooks log
  each test's outcome to the file named by $MUTATION_CHECK_LOG.
"""
from __future__ import annotations

import copy
import fnmatch
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.cli.provenance import REPO

FROZEN = REPO / "tests" / "data" / "rules.yaml"
PLUGIN = __name__     # this module, loaded into each pytest run with -p (its two hooks below)

SECTIONS = ("battle", "rings", "grades", "runes", "flows", "flow_limits", "attunement",
            "resonance", "opposition", "affinity", "overdrive", "erosion", "freeze", "cores",
            "boss_rules", "relics", "artifacts")
SKIP = ("runes.*.price", "artifacts.*.price", "artifacts.*.income_per_runes",
        "relics.*.income", "relics.*.hand_slots", "relics.*.lamp_saves", "cores.*.hand_slots",
        "grades.merge_count")
# Optional numbers that the frozen rules leave off (null) are mutated by turning them on at a value
# that acts on the rule tests' boards: the amplify cap (D-54) at 2 (two grade-I amplifies already
# multiply by 3.0625).
TURN_ON = {"runes.amplify.max_factor": 2.0}
LOG_ENV = "MUTATION_CHECK_LOG"


# -- the pytest plugin (loaded into each pytest run with -p agents.devtools.mutation) ------------------

def pytest_runtest_logreport(report):  # pragma: no cover - runs inside pytest
    log = os.environ.get(LOG_ENV)
    if log and (report.failed or report.when == "call"):
        status = "test" if report.failed else "pass"
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{status}\t{report.nodeid}\t{report.duration:.4f}\n")


def pytest_collectreport(report):  # pragma: no cover - runs inside pytest
    log = os.environ.get(LOG_ENV)
    if log and report.failed:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"collect\t{report.nodeid}\t0\n")


# -- the numbers ------------------------------------------------------------------------------

@dataclass
class Mutation:
    path: str            # dotted override path, list indices as numbers: flows.0.multiplier
    label: str           # readable: flows[firestorm].multiplier
    old: Any
    new: Any


@dataclass
class Outcome:
    mutation: Mutation
    status: str          # killed | survived | refused | timeout | error
    detail: str = ""
    seconds: float = 0.0


def mutate_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return float(f"{value * 1.1:.12g}") if value != 0 else 0.1
    raise TypeError(value)


def _skipped(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, pat) for pat in SKIP)


def mutations(data: dict) -> list[Mutation]:
    out: list[Mutation] = []

    def walk(node: Any, path: list[str], label: list[str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, path + [str(key)], label + [str(key)])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                name = value.get("id") if isinstance(value, dict) else None
                walk(value, path + [str(i)],
                     label[:-1] + [f"{label[-1]}[{name if name is not None else i}]"])
        elif isinstance(node, (bool, int, float)):
            dotted = ".".join(path)
            if not _skipped(dotted):
                out.append(Mutation(dotted, ".".join(label), node, mutate_value(node)))
        elif node is None and ".".join(path) in TURN_ON:
            dotted = ".".join(path)
            out.append(Mutation(dotted, ".".join(label), None, TURN_ON[dotted]))

    for section in SECTIONS:
        if section in data:
            walk(data[section], [section], [section])
    return out


def normalise_path(path: str, data: dict) -> str:
    """flows[0].multiplier / flows.firestorm.multiplier -> flows.0.multiplier."""
    path = re.sub(r"\[([^\]]+)\]", r".\1", path.strip())
    parts = path.split(".")
    node: Any = data
    for i, part in enumerate(parts):
        if isinstance(node, list):
            if not part.isdigit():
                ids = [e.get("id") if isinstance(e, dict) else None for e in node]
                if part in ids:
                    parts[i] = part = str(ids.index(part))
            node = node[int(part)] if part.isdigit() and int(part) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            node = None
    return ".".join(parts)


def apply(data: dict, m: Mutation) -> dict:
    data = copy.deepcopy(data)
    node: Any = data
    parts = m.path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last: Any = int(parts[-1]) if isinstance(node, list) else parts[-1]
    node[last] = m.new
    return data


def write_yaml(data: dict, directory: Path, name: str) -> Path:
    import yaml
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def refusal(path: Path) -> str | None:
    """The RulesError message if load_rules refuses the file, else None."""
    from rune_env.rules import load_rules
    try:
        load_rules(path)
    except Exception as exc:  # noqa: BLE001 - any refusal counts
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return re.sub(r"\s*\[[^\]]*\]$", "", first)     # drop the " [temp file]" suffix
    return None


# -- running the tests --------------------------------------------------------------------------

# Test files likeliest to catch a mutated number run first (with -x the first failure ends the
# run); the others follow, fastest first (timed in the baseline run).
FIRST = ("tests/battle/test_smoke.py", "tests/rules/test_rules_*.py", "tests/rules/test_whole_battles.py",
         "tests/battle/test_golden.py", "tests/rules/test_config.py", "tests/rules/test_geometry.py")


@dataclass
class Suite:
    deselect: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    timeout: float = 900.0
    files: list[str] = field(default_factory=lambda: ["tests/"])
    baseline_file: Path | None = None          # the unmutated copy, to confirm kills
    confirm: bool = True
    flaky: set[str] = field(default_factory=set)   # kills not confirmed: left out from then on
    lock: threading.Lock = field(default_factory=threading.Lock)


def order_files(seconds_by_file: dict[str, float]) -> list[str]:
    files = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py"))

    def key(f: str):
        first = [i for i, pat in enumerate(FIRST) if fnmatch.fnmatchcase(f, pat)]
        return (first[0] if first else len(FIRST), seconds_by_file.get(f, 0.0), f)
    return sorted(files, key=key)


def run_pytest(rules_file: Path, suite: Suite, stop_first: bool, workdir: Path, tag: str,
               targets: list[str] | None = None, collect_only: bool = False):
    """(returncode or None on timeout, [(kind, nodeid)] failures, output tail,
    {nodeid: seconds} of the tests that passed). `targets` replaces the suite's files (and its
    deselections)."""
    log = workdir / f"{tag}.log"
    log.unlink(missing_ok=True)
    with suite.lock:
        deselect = list(suite.deselect) + sorted(suite.flaky)
        ignore = list(suite.ignore)
        files = list(suite.files)
    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "not outside_mutation_check",
           "-p", "no:cacheprovider", "-p", PLUGIN, "-W", "ignore::pytest.PytestUnknownMarkWarning",
           "--tb=no", "-o", "addopts="]
    if stop_first:
        cmd.append("-x")
    if collect_only:
        cmd.append("--collect-only")
    if targets is not None:
        cmd += targets
    else:
        cmd += files
        for nodeid in deselect:
            cmd += ["--deselect", nodeid]
        for path in ignore:
            cmd += ["--ignore", path]
    env = dict(os.environ)
    env["RUNE_TEST_RULES"] = str(rules_file)
    env[LOG_ENV] = str(log)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=suite.timeout)
    except subprocess.TimeoutExpired:
        return None, [], "", {}
    failures, seconds = [], {}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            kind, nodeid, duration = line.split("\t")
            if kind == "pass":
                seconds[nodeid] = float(duration)
            else:
                failures.append((kind, nodeid))
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
    return proc.returncode, failures, tail, seconds


def baseline(data: dict, suite: Suite, workdir: Path) -> Suite:
    rules_file = write_yaml(data, workdir, "baseline.yaml")
    why = refusal(rules_file)
    if why:
        raise SystemExit(f"mutation_check: the unmutated rules do not load: {why}")
    code, failures, tail, seconds = run_pytest(rules_file, suite, stop_first=False,
                                               workdir=workdir, tag="baseline")
    if code is None:
        raise SystemExit("mutation_check: the baseline test run timed out")
    if code not in (0, 1):
        raise SystemExit(f"mutation_check: the baseline test run failed to run (exit {code}):\n{tail}")
    by_file: dict[str, float] = {}
    for nodeid, sec in seconds.items():
        f = nodeid.split("::")[0]
        by_file[f] = by_file.get(f, 0.0) + sec
    out = Suite(list(suite.deselect), list(suite.ignore), suite.timeout, order_files(by_file),
                baseline_file=rules_file, confirm=suite.confirm)
    for kind, nodeid in failures:
        if kind == "collect":
            out.ignore.append(nodeid.split("::")[0])
        elif nodeid not in out.deselect:
            out.deselect.append(nodeid)
    out.files = [f for f in out.files if f not in out.ignore]
    return out


def confirmed(nodeid: str, rules_file: Path, suite: Suite, workdir: Path, tag: str,
              collect_only: bool = False) -> bool:
    """A kill counts if the test (or, for a collection error, the file's collection), run
    alone, fails on the mutant and passes on the baseline (so a flaky or order-dependent test,
    or a file being edited, cannot kill a mutant)."""
    if not suite.confirm or suite.baseline_file is None:
        return True
    code, _, _, _ = run_pytest(rules_file, suite, False, workdir, f"{tag}.mut", [nodeid],
                               collect_only)
    if code in (0, None):
        return False
    code, _, _, _ = run_pytest(suite.baseline_file, suite, False, workdir, f"{tag}.base",
                               [nodeid], collect_only)
    return code == 0


def check(m: Mutation, data: dict, suite: Suite, workdir: Path, tag: str,
          retries: int = 3) -> Outcome:
    t0 = time.monotonic()
    rules_file = write_yaml(apply(data, m), workdir, f"{tag}.yaml")
    why = refusal(rules_file)
    if why:
        return Outcome(m, "refused", why, time.monotonic() - t0)
    for _ in range(retries + 1):
        code, failures, tail, _ = run_pytest(rules_file, suite, stop_first=True,
                                             workdir=workdir, tag=tag)
        if code is None:
            return Outcome(m, "timeout", f"no result after {suite.timeout:.0f} s",
                           time.monotonic() - t0)
        if code == 0:
            return Outcome(m, "survived", "", time.monotonic() - t0)
        if not failures:
            if code in (1, 2):
                return Outcome(m, "killed", tail.splitlines()[-1] if tail else f"exit {code}",
                               time.monotonic() - t0)
            return Outcome(m, "error", f"pytest exit {code}: {tail}", time.monotonic() - t0)
        kind, nodeid = failures[0]
        collect = kind == "collect"
        if confirmed(nodeid, rules_file, suite, workdir, tag, collect_only=collect):
            return Outcome(m, "killed", f"collection error in {nodeid}" if collect else nodeid,
                           time.monotonic() - t0)
        with suite.lock:
            if collect:
                if nodeid not in suite.ignore:
                    suite.ignore.append(nodeid)
                    suite.files = [f for f in suite.files if f != nodeid]
            else:
                suite.flaky.add(nodeid)
        print(f"  (not confirmed, left out from now on: {nodeid})", flush=True)
    return Outcome(m, "error", "too many unconfirmed failures", time.monotonic() - t0)


# -- all mutants, and the summary ---------------------------------------------------------------

def check_all(todo: list[Mutation], data: dict, suite: Suite, workdir: Path,
              jobs: int) -> list[Outcome]:
    """Every mutant checked, `jobs` pytest runs at a time, a line printed as each one ends; the
    outcomes in the order of `todo`."""
    lock = threading.Lock()
    outcomes: list[Outcome] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(check, m, data, suite, workdir, f"m{i}")
                   for i, m in enumerate(todo)]
        for n, fut in enumerate(as_completed(futures), start=1):
            o = fut.result()
            outcomes.append(o)
            with lock:
                print(f"[{n}/{len(todo)}] {o.status:<8} {o.mutation.label}: "
                      f"{o.mutation.old!r} -> {o.mutation.new!r}"
                      + (f"  ({o.detail})" if o.detail else "") + f"  {o.seconds:.1f} s",
                      flush=True)
    order = {m.path: i for i, m in enumerate(todo)}
    outcomes.sort(key=lambda o: order[o.mutation.path])
    return outcomes


STATUSES = ("survived", "refused", "timeout", "error", "killed")


def report(outcomes: list[Outcome], suite: Suite) -> dict[str, list[Outcome]]:
    """Print the summary: counts, what was left out, then the refused, timed-out, broken and
    surviving mutants; returns the outcomes by status."""
    groups = {s: [o for o in outcomes if o.status == s] for s in STATUSES}
    print()
    print(f"{len(outcomes)} mutations: " + ", ".join(f"{len(v)} {k}" for k, v in groups.items()))
    if suite.deselect or suite.ignore:
        print(f"(tests failing unmutated were left out: {len(suite.deselect)} deselected, "
              f"{len(suite.ignore)} files ignored)")
    if suite.flaky:
        print("(failures not confirmed when re-run alone, left out: "
              + ", ".join(sorted(suite.flaky)) + ")")
    for status, title in (("refused", "REFUSED (the mutated config does not load; not survivors)"),
                          ("timeout", "TIMEOUT (counted as killed)"),
                          ("error", "ERROR (pytest could not run)"),
                          ("survived", "SURVIVORS (no test failed)")):
        if groups[status]:
            print(f"\n{title}:")
            for o in groups[status]:
                print(f"  {o.mutation.path:<40} {o.mutation.old!r} -> {o.mutation.new!r}"
                      + (f"  [{o.mutation.label}]" if o.mutation.label != o.mutation.path else "")
                      + (f"  {o.detail}" if o.detail and status != "survived" else ""))
    return groups


def outcomes_json(outcomes: list[Outcome], suite: Suite) -> dict:
    return {"deselected": suite.deselect, "ignored": suite.ignore, "flaky": sorted(suite.flaky),
            "outcomes": [asdict(o) for o in outcomes]}
