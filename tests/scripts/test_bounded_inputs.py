"""Bounded inputs, checked where they enter (issue 28, item 4): the scripts' counts, pool files,
YAML files and boards. Each hostile case of the issue is refused with one line (scripts:
`error: ...` and exit status 2; the library: its own error type) within 5 s and 500 MB (Python's
allocations, measured with tracemalloc), and never gets a traceback. Then one fuzz test per file
type (board, pool, rules): every generated input loads or raises the project's error.

The scripts run in-process through their `main(argv)`; the bad counts stop them in argparse."""
from __future__ import annotations

import contextlib
import gzip
import importlib.util
import json
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml

from rune_env.files import MAX_FILE_BYTES, MAX_YAML_BYTES, MAX_YAML_NODES
from rune_env.rules import Board, BoardError, RulesError, default_rules, load_rules
from rune_env.rules.board import MAX_HP_BOUND, load_board
from rune_env.run.opponents import MAX_GHOST_COUNT, PoolError, load_pool

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
RULES = default_rules()
ROUND_CAP = RULES.spec.run.round_cap
BOARD = {"runes": {"1:0": ["fire", 1], "2:0": ["wind", 2]}, "round": 1}
SECONDS, BYTES = 5.0, 500 * 2**20


@contextlib.contextmanager
def bounded(seconds: float = SECONDS, peak: int = BYTES):
    """The block takes under `seconds` and allocates under `peak` bytes at its peak."""
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        yield
    finally:
        elapsed = time.monotonic() - t0
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.1f} s"
    assert top < peak, f"peaked at {top / 2**20:.0f} MiB"


def refused(error: type[Exception], call, *needles: str) -> str:
    """`call()` raises `error` in one line holding the needles, within the bounds."""
    with bounded():
        with pytest.raises(error) as info:
            call()
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


def _main(name: str):
    spec = importlib.util.spec_from_file_location(f"bounded_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.fixture(scope="module")
def imported():
    """The modules the scripts import inside main (torch and SB3 take seconds, whatever the
    input): imported once, so the bounds measure the input's cost alone."""
    import agents.evaluation.runs  # noqa: F401
    import agents.policy  # noqa: F401
    import rune_env.envs  # noqa: F401
    with contextlib.suppress(ImportError):
        import sb3_contrib  # noqa: F401
        import torch.utils.tensorboard  # noqa: F401


def script_refuses(capsys, name: str, argv: list[str], *needles: str) -> str:
    """The script's main(argv) exits 2 with one `error: ...` line holding the needles."""
    main = _main(name)
    with bounded():
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:     # argparse's error
            status = exc.code
    err = capsys.readouterr().err
    assert status == 2, (status, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def pool_json(rounds: dict) -> dict:
    return {"format": "rune-env-pool", "version": 1, "rules_hash": RULES.hash, "rank": "apprentice",
            "provenance": {}, "rounds": rounds}


def write_pool(path: Path, rounds: dict) -> Path:
    path.write_text(json.dumps(pool_json(rounds)), encoding="utf-8")
    return path


def ghost(board: dict | None = None, **extra) -> dict:
    return {"board": dict(board or BOARD), "agent": "greedy", "seed": 0, **extra}


# -- the scripts' counts ------------------------------------------------------------------------
HUGE = str(10**12)
COUNTS = [
    ("balance_report", ["--battles", HUGE], "--battles", "1..100000"),
    ("balance_report", ["--runs", HUGE], "--runs", "1..100000"),
    ("ladder", ["--agents", "greedy", "random", "--samples", HUGE], "--samples", "1..1000"),
    ("ladder", ["--agents", "greedy", "random", "--episodes", HUGE], "--episodes", "1..1000003"),
    ("calibrate_ranks", ["--agent", "greedy", "--episodes", HUGE], "--episodes", "1..1000003"),
    ("make_opponents", ["--agents", "greedy", "--out", "x.json", "--runs", HUGE], "--runs",
     "1..1000000"),
    ("build_pools", ["--runs-scale", "1e12"], "--runs-scale", "<= 1000"),
    ("evaluate", ["--agents", "greedy", "--episodes", HUGE], "--episodes", "1..1000003"),
    ("board_stats", ["--agents", "greedy", "--episodes", HUGE], "--episodes", "1..1000003"),
    ("benchmark", ["--pairs", HUGE], "--pairs", "1..100000000"),
    ("benchmark", ["--env-steps", str(10**11)], "--env-steps", "0..10000000000"),
    ("parity_check", ["--pairs", HUGE], "--pairs", "0..100000000"),
    ("export_policy", ["x.zip", "--check", HUGE], "--check", "0..1000003"),
    ("train", ["--config", "configs/train/quick.yaml", "--total-timesteps", str(10**11)],
     "--total-timesteps", "1..10000000000"),
    ("exploit", ["--target", "greedy", "--games", HUGE], "--games", "1..100000"),
]


@pytest.mark.parametrize("name,argv,option,bound", COUNTS,
                         ids=[f"{c[0]}{c[2]}" for c in COUNTS])
def test_a_count_above_its_bound_is_one_line_and_exit_2(capsys, imported, name, argv, option,
                                                         bound):
    script_refuses(capsys, name, argv, option, bound)


@pytest.mark.parametrize("name,option,bound", [
    ("balance_report", "--battles", "1..100000"), ("ladder", "--samples", "1..1000"),
    ("ladder", "--episodes", "1..1000003"), ("make_opponents", "--runs", "1..1000000"),
    ("calibrate_ranks", "--episodes", "1..1000003"), ("build_pools", "--runs-scale", "<= 1000")])
def test_help_states_each_bound(capsys, name, option, bound):
    with pytest.raises(SystemExit):
        _main(name)(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    entry = text[text.rindex(option + " "):][:300]     # the options section, after the usage
    assert bound in entry, entry


def test_build_pools_refuses_a_scale_past_the_runs_bound(capsys, tmp_path):
    """A recipe of 600,000 runs an agent, scaled by 2, before anything is drafted."""
    recipes = tmp_path / "ranks.yaml"
    recipes.write_text((REPO / "configs" / "ranks.yaml").read_text().replace("runs: 80",
                                                                            "runs: 600000"))
    script_refuses(capsys, "build_pools", ["--config", recipes, "--out-dir", tmp_path / "out",
                                           "--runs-scale", "2"],
                   "--runs-scale 2", "1200000 runs, more than 1000000")


def test_balance_report_reads_its_tasks_lazily():
    """The per-round tasks are a generator, handed to the workers WINDOW at a time: --battles
    100000 never builds a list of 100,000 tasks, and the results stay in task order."""
    from concurrent.futures import Future
    report = importlib.util.spec_from_file_location("bounded_br", SCRIPTS / "balance_report.py")
    module = importlib.util.module_from_spec(report)
    report.loader.exec_module(module)
    state = {"made": 0, "read": 0, "ahead": 0}

    class Pool:
        def submit(self, fn, task):
            done = Future()
            done.set_result([{"task": task}])
            return done

    def tasks():
        for i in range(10_000):
            state["made"] += 1
            state["ahead"] = max(state["ahead"], state["made"] - state["read"])
            yield i

    class Bar:
        def update(self, n):
            state["read"] += n

    rows = module._played(Pool(), tasks(), Bar())
    assert [r["task"] for r in rows] == list(range(10_000))
    assert state["ahead"] <= module.WINDOW + 1


def test_the_duel_bounds_max_cycles():
    from rune_env.duel.env import MAX_CYCLES, RuneDuelEnv
    with pytest.raises(ValueError, match="max_cycles"):
        RuneDuelEnv(max_cycles=MAX_CYCLES + 1)


@pytest.mark.parametrize("key,value", [
    ("n_envs", 10**6), ("total_timesteps", 10**12), ("torch_threads", 10**5),
    ("ppo", {"n_steps": 10**12}), ("ppo", {"batch_size": 10**12}), ("ppo", {"n_epochs": 10**6}),
    ("checkpoint_every", 10**12), ("eval", {"every": 10**12})])
def test_a_training_configs_counts_are_bounded(tmp_path, key, value):
    """The config's counts, refused before any env or rollout buffer is made."""
    from agents.train.config import ConfigError
    from agents.train.train_config import read_config
    path = tmp_path / "big.yaml"
    data = yaml.safe_load((REPO / "configs" / "train" / "quick.yaml").read_text())
    data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    path.write_text(yaml.safe_dump(data))
    name = key if not isinstance(value, dict) else f"{key}.{next(iter(value))}"
    refused(ConfigError, lambda: read_config(path), "big.yaml", name)


# -- pools -------------------------------------------------------------------------------------
def test_a_gzip_bomb_is_refused_at_the_size_limit_without_reading_it_whole(tmp_path):
    """1 GB of zeros compressed to about 1 MB: refused once 64 MiB are decompressed."""
    path = tmp_path / "bomb.json.gz"
    zeros = bytes(2**20)
    with gzip.open(path, "wb", compresslevel=1) as fh:
        for _ in range(1024):
            fh.write(zeros)
    assert path.stat().st_size < 8 * 2**20
    refused(PoolError, lambda: load_pool(path, RULES), "bomb.json.gz", "decompresses to",
            "64 MiB")


def test_a_plain_file_past_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)      # sparse: no 64 MiB written
    refused(PoolError, lambda: load_pool(path, RULES), "big.json", "larger than 64 MiB")


def test_an_unterminated_string_of_escaped_quotes_is_scanned_once(tmp_path):
    """'"' + '\\"' * n has no closing quote: the shape scan (before the parser and every bound)
    rescanned it to its end from each quote, 85 s for 160 KB and hours for 1 MB. Now one pass
    (a few ms); the bound here (5 s for 120 KB, which took about 40 s) only catches the
    quadratic scan again, it is no speed claim."""
    import time
    path = tmp_path / "quad.json"
    path.write_text('"' + '\\"' * 60_000)
    started = time.monotonic()
    refused(BoardError, lambda: load_board(path, RULES), "quad.json", "not valid JSON")
    assert time.monotonic() - started < 5


def test_json_nested_200k_deep_is_refused_quickly(tmp_path):
    path = tmp_path / "deep.json"
    deep = "[" * 200_000 + "]" * 200_000
    path.write_text(json.dumps(pool_json({})).replace('"provenance": {}', f'"provenance": {deep}'))
    refused(PoolError, lambda: load_pool(path, RULES), "deep.json", "nested 200001 deep",
            "at most 64")
    board = tmp_path / "deep_board.json"
    board.write_text('{"runes": ' + deep + "}")
    refused(BoardError, lambda: load_board(board, RULES), "deep_board.json", "nested")


def test_a_file_of_millions_of_tiny_values_is_refused_before_parsing(tmp_path):
    """60 MiB of "[],": parsed it would take 1.5 GB of lists; refused from a scan of the text."""
    path = tmp_path / "tiny.json"
    with open(path, "w") as fh:
        fh.write("[" + "[]," * (20 * 2**20) + "[]]")
    refused(PoolError, lambda: load_pool(path, RULES), "tiny.json", "more than 2,000,000 JSON values")


@pytest.mark.parametrize("count", [10**30, 2**62, MAX_GHOST_COUNT + 1, 0, -3, 2.5, True])
def test_counts_out_of_range_are_refused_at_load(tmp_path, count):
    path = write_pool(tmp_path / "counts.json",
                      {"1": [ghost(count=count), ghost({**BOARD, "label": "b"}, count=count)]})
    refused(PoolError, lambda: load_pool(path, RULES), "rounds['1'][0].count",
            f"1..{MAX_GHOST_COUNT}")


def test_the_largest_counts_load_and_draw_without_overflow(tmp_path):
    """Counts at the bound, summed in int64 over many ghosts: the draw stays exact."""
    import numpy as np
    from rune_env.run.opponents import PoolOpponents
    from rune_env.run.ranks import rank_effects
    ghosts = [ghost({**BOARD, "label": str(i)}, count=MAX_GHOST_COUNT) for i in range(64)]
    pool = load_pool(write_pool(tmp_path / "max.json", {"1": ghosts}), RULES)
    source = PoolOpponents(pool, RULES)
    effects = rank_effects(RULES, 0)
    labels = {source(1, effects, [], np.random.default_rng(i)).label for i in range(50)}
    assert labels <= {str(i) for i in range(64)} and len(labels) > 1


@pytest.mark.parametrize("key,shown", [
    ("²", "'²'"), ("5" * 5000, "5000 characters"), ("0", "'0'"), ("01", "'01'"), ("-1", "'-1'"),
    (" 1", "' 1'"), ("1.0", "'1.0'"), (str(ROUND_CAP + 1), repr(str(ROUND_CAP + 1))),
    ("١", "'١'")])
def test_round_keys_are_whole_decimal_numbers_within_the_round_cap(tmp_path, key, shown):
    path = write_pool(tmp_path / "keys.json", {key: [ghost()]})
    refused(PoolError, lambda: load_pool(path, RULES), "not a round number", shown,
            f"1..{ROUND_CAP}")


def test_a_ghost_must_be_of_the_round_it_is_filed_under(tmp_path):
    """The issue's ghost: under key 1, a board of round 30 with max HP 1e308."""
    path = write_pool(tmp_path / "ghost.json",
                      {"1": [ghost({**BOARD, "round": ROUND_CAP, "max_hp": 1e308})]})
    refused(PoolError, lambda: load_pool(path, RULES), "rounds['1'][0]", "max_hp")
    path = write_pool(tmp_path / "round.json", {"1": [ghost({**BOARD, "round": ROUND_CAP})]})
    refused(PoolError, lambda: load_pool(path, RULES),
            f"a ghost of round {ROUND_CAP} filed under round 1")
    path = write_pool(tmp_path / "said.json", {"2": [ghost({**BOARD, "round": 2}, round=3)]})
    refused(PoolError, lambda: load_pool(path, RULES), "a ghost of round 3 filed under round 2")
    ok = write_pool(tmp_path / "ok.json", {"2": [ghost({**BOARD, "round": 2}, round=2)],
                                           "3": [ghost({"runes": {}}, round=3)]})
    assert sorted(load_pool(ok, RULES).rounds) == [2, 3]


@pytest.mark.parametrize("text,needle", [
    ('"max_hp": NaN', "NaN"), ('"max_hp": Infinity', "Infinity"), ('"max_hp": 1e400', "1e400"),
    ('"max_hp": ' + "9" * 5000, "5000 digits")])
def test_numbers_a_json_parser_would_take_are_refused(tmp_path, text, needle):
    board = json.dumps({**BOARD, "max_hp": 1})
    path = tmp_path / "nums.json"
    path.write_text(json.dumps(pool_json({"1": []})).replace(
        '"rounds": {"1": []}', '"rounds": {"1": [{"board": ' + board.replace('"max_hp": 1', text)
        + "}]}"))
    refused(PoolError, lambda: load_pool(path, RULES), "nums.json", needle)


def test_a_key_given_twice_is_refused(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(pool_json({"1": [ghost()]}))[:-2] + ', "1": []}}')
    refused(PoolError, lambda: load_pool(path, RULES), "dup.json", "key '1' given twice")
    path.write_text(json.dumps(pool_json({"1": [ghost()]})).replace(
        '"round": 1}', '"round": 1, "round": 2}'))
    refused(PoolError, lambda: load_pool(path, RULES), "dup.json", "key 'round' given twice")


def test_a_saved_run_has_the_same_json_bounds():
    from rune_env.run.state import RunState, RunStateError
    refused(RunStateError, lambda: RunState.loads("[" * 200_000 + "]" * 200_000), "saved run",
            "nested 200000 deep")
    refused(RunStateError, lambda: RunState.loads('{"seed": ' + "9" * 5000 + "}"), "saved run",
            "5000 digits")


def test_run_records_and_profiles_have_the_same_json_bounds(tmp_path):
    from rune_env.terminal.profile import Profile, ProfileError
    from rune_env.run.record import RecordError, RunRecord
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    refused(RecordError, lambda: RunRecord.load(path), "deep.json", "nested 200000 deep")
    refused(ProfileError, lambda: Profile.load(path), "deep.json", "nested 200000 deep")
    path.write_text('{"version": NaN}')
    refused(ProfileError, lambda: Profile.load(path), "deep.json", "NaN")
    # a string or a mapping where the names go would be read letter by letter or key by key
    # ("apprentice" as 10 ranks cleared), and version true equals 1 in Python
    for text, needle in [('{"version": 1, "cleared_ranks": "apprentice", "achievements": []}',
                          "cleared_ranks must be a list of names"),
                         ('{"version": 1, "cleared_ranks": [], "achievements": {"a": 1}}',
                          "achievements must be a list of names"),
                         ('{"version": true, "cleared_ranks": [], "achievements": []}',
                          "not a version-1 rune-env profile")]:
        path.write_text(text)
        refused(ProfileError, lambda: Profile.load(path), "deep.json", needle)


def test_a_hostile_pool_is_one_line_and_exit_2_in_the_scripts(tmp_path, capsys, imported):
    """The same PoolError through the scripts that take a pool, before anything is played."""
    path = write_pool(tmp_path / "overflow.json", {"1": [ghost(count=2**62),
                                                         ghost({**BOARD, "label": "b"},
                                                               count=2**62)]})
    for name, argv in [("ladder", ["--agents", "greedy", "--pools", path]),
                       ("evaluate", ["--agents", "greedy", "--opponents", path]),
                       ("board_stats", ["--agents", "greedy", "--opponents", path])]:
        script_refuses(capsys, name, argv, "overflow.json", "count", f"1..{MAX_GHOST_COUNT}")


# -- boards ------------------------------------------------------------------------------------
@pytest.mark.parametrize("max_hp", [10**400, 1e308, MAX_HP_BOUND + 1, 0, -1, float("nan"),
                                    float("inf"), True, "100"])
def test_board_max_hp_is_finite_positive_and_bounded(max_hp):
    refused(BoardError, lambda: Board.from_json({**BOARD, "max_hp": max_hp}, RULES), "max_hp",
            "(0, 1e+15]")


def test_a_board_file_with_a_400_digit_max_hp_is_refused(tmp_path, capsys):
    path = tmp_path / "hp.json"
    path.write_text('{"runes": {"1:0": ["fire", 1]}, "max_hp": ' + "7" * 400 + "}")
    message = refused(BoardError, lambda: load_board(path, RULES), "hp.json", "max_hp",
                      "400 characters")
    assert len(message) < 300
    good = tmp_path / "good.json"
    good.write_text(json.dumps(BOARD))
    from rune_env.cli import main
    with bounded():
        try:
            status = main(["battle", str(good), str(path)])
        except SystemExit as exc:
            status = exc.code
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and "max_hp" in err, err


def test_max_hp_at_the_bound_loads():
    assert Board.from_json({**BOARD, "max_hp": MAX_HP_BOUND}, RULES).max_hp == MAX_HP_BOUND


# -- YAML --------------------------------------------------------------------------------------
BOMB = "\n".join(["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
                 + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]"
                    for p, c in zip("abcdefgh", "bcdefghi")]) + "\n"


def test_the_alias_bomb_is_small():
    assert len(BOMB.encode()) < 600 and 9**9 > 100 * MAX_YAML_NODES


def test_an_alias_bomb_is_refused_as_rules_config_and_recipes(tmp_path, capsys):
    from agents.design.pools import RecipeError, load_recipes
    from agents.train.config import ConfigError
    from agents.train.train_config import read_config
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    refused(RulesError, lambda: load_rules(path), "bomb.yaml", "alias")
    refused(ConfigError, lambda: read_config(path), "bomb.yaml", "alias")
    refused(RecipeError, lambda: load_recipes(path, RULES), "bomb.yaml", "alias")
    script_refuses(capsys, "balance_report", ["--rules", path], "bomb.yaml", "alias")


def test_a_recursive_alias_and_deep_yaml_are_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [1, *a]\n")
    refused(RulesError, lambda: load_rules(path), "loop.yaml", "refers to its own anchor")
    path.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    refused(RulesError, lambda: load_rules(path), "loop.yaml", "nested more than 64 deep")


def test_a_yaml_file_past_its_size_limit_is_refused(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("# " + "x" * MAX_YAML_BYTES + "\n")
    refused(RulesError, lambda: load_rules(path), "huge.yaml", "larger than 4 MiB")


@pytest.mark.parametrize("number", [
    "1" + ":59" * 200,        # base 60 to YAML 1.1: built by a quadratic loop (minutes at 4 MB)
    "1" + "0" * 400,          # int() of it, then float(): OverflowError, a traceback
    "0x" + "f" * 1000,
    "1." + "5" * 200,
])
def test_a_number_of_more_than_100_characters_is_refused_before_it_is_built(tmp_path, number):
    path = tmp_path / "long.yaml"
    path.write_text(f"extends: default.yaml\nbattle:\n  duration_s: {number}\n")
    refused(RulesError, lambda: load_rules(path), "long.yaml",
            f"a number of {len(number):,} characters at line 3 (at most 100)")
    from agents.train.config import ConfigError, read_yaml
    refused(ConfigError, lambda: read_yaml(path), "long.yaml", "a number of")


def test_a_few_aliases_still_load(tmp_path):
    """Aliases are bounded, not refused: a small file using them reads as safe_load reads it."""
    text = "extends: " + str(REPO / "configs" / "rules" / "default.yaml") + \
        "\nbattle: &b\n  duration_s: 30\nx_unused: *b\n"
    from rune_env.files import safe_load_yaml
    assert safe_load_yaml(text, "t", ValueError) == yaml.safe_load(text)


def test_yaml_tags_are_still_refused(tmp_path):
    path = tmp_path / "tag.yaml"
    path.write_text("battle: !!python/object/apply:os.system [echo hi]\n")
    refused(RulesError, lambda: load_rules(path), "tag.yaml", "not valid YAML")


# -- fuzzing boards, pools and rules ---------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70)
                    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
BOARD_KEYS = ["runes", "artifacts", "hand", "core", "sun_element", "open_sectors", "relics",
              "max_hp", "boss_rules", "round", "label", "extra"]
FULL_BOARD = {"core": "sun", "sun_element": "fire", "round": 3,
              "runes": {"1:0": ["fire", 1], "2:0": ["wind", 2]}, "hand": [["water", 1]],
              "open_sectors": [0], "max_hp": 100, "boss_rules": [], "label": "x"}
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _loads_or(error: type[Exception], call) -> None:
    with bounded():
        try:
            call()
        except error as exc:
            assert "\n" not in str(exc)


def _mutated(data, draw) -> str:
    """`data` as JSON text with a few characters changed, cut short or grown."""
    text = list(json.dumps(data))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text) - 1))
        text[i] = draw(st.sampled_from(list('[]{}",:0123456789e-.aNI ²')))
    cut = draw(st.integers(0, len(text)))
    return "".join(text[:cut]) if draw(st.booleans()) else "".join(text)


@pytest.mark.outside_mutation_check
@FUZZ
@given(key=st.sampled_from(BOARD_KEYS), value=JSON, data=st.data())
def test_fuzzed_boards_load_or_raise_board_error(tmp_path, key, value, data):
    board = {**FULL_BOARD, key: value}
    _loads_or(BoardError, lambda: Board.from_json(board, RULES))
    path = tmp_path / "board.json"
    path.write_text(_mutated(FULL_BOARD, data.draw), encoding="utf-8")
    _loads_or(BoardError, lambda: load_board(path, RULES))


@pytest.mark.outside_mutation_check
@FUZZ
@given(where=st.sampled_from(["key", "count", "round", "board", "ghost", "rounds", "rank",
                              "provenance"]),
       value=JSON, key=st.text(max_size=6), data=st.data())
def test_fuzzed_pools_load_or_raise_pool_error(tmp_path, where, value, key, data):
    g = ghost(FULL_BOARD, round=3, count=2)
    rounds: dict = {"3": [g]}
    pool = pool_json(rounds)
    if where == "key":
        rounds[key] = [ghost({**FULL_BOARD, "round": 1})]
    elif where in ("count", "round", "board"):
        g[where] = value
    elif where == "ghost":
        rounds["3"].append(value)
    else:
        pool[where] = value
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(pool), encoding="utf-8")
    _loads_or(PoolError, lambda: load_pool(path, RULES))
    path.write_text(_mutated(pool_json({"3": [ghost(FULL_BOARD, round=3)]}), data.draw))
    _loads_or(PoolError, lambda: load_pool(path, RULES))


def _rules_keys() -> list[str]:
    data = yaml.safe_load((REPO / "configs" / "rules" / "default.yaml").read_text())
    out = []
    for section, body in data.items():
        if isinstance(body, dict):
            out += [f"{section}.{k}" for k in body]
    return sorted(out)


RULES_KEYS = _rules_keys()
YAML_VALUE = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70)
                          | st.floats() | st.text(max_size=12),
                          lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=8)


@pytest.mark.outside_mutation_check
@FUZZ
@given(key=st.sampled_from(RULES_KEYS), value=YAML_VALUE, raw=st.text(max_size=40))
def test_fuzzed_rules_files_load_or_raise_rules_error(tmp_path, key, value, raw):
    """A rules file over the defaults with one key set to anything (as YAML writes it), then
    the same with a line of raw text appended: it loads, or RulesError in one line."""
    section, name = key.split(".", 1)
    path = tmp_path / "fuzz.yaml"
    head = f"extends: {REPO / 'configs' / 'rules' / 'default.yaml'}\n"
    path.write_text(head + yaml.safe_dump({section: {name: value}}), encoding="utf-8")
    _loads_or(RulesError, lambda: load_rules(path))
    path.write_text(head + yaml.safe_dump({section: {name: value}}) + raw + "\n", encoding="utf-8")
    _loads_or(RulesError, lambda: load_rules(path))


@pytest.mark.outside_mutation_check
def test_a_key_with_a_newline_is_named_on_one_line(tmp_path):
    """The fuzz above once found it: a rules file whose unknown key is a newline (`{"\\n": null}`
    under a boss rule) gave a two-line message. The key is now shown quoted with its escape:
    boss_rules.corrosion.'\\n': unknown key (the keys here: ...)."""
    path = tmp_path / "newline_key.yaml"
    head = f"extends: {REPO / 'configs' / 'rules' / 'default.yaml'}\n"
    path.write_text(head + yaml.safe_dump({"boss_rules": {"corrosion": {"\n": None}}}), encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        load_rules(path)
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("boss_rules.corrosion.'\\n': unknown key"), message
