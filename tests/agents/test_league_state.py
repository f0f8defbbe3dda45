"""A league's saved state (league.json, agents/train/league.py's `check_league_state`): what a
`league.py --resume` goes on from is checked whole, and refused in one line naming what is wrong,
before anything of the run is written; the snapshots it names are the run's own files.

Not battle-rule tests, so the module is marked `outside_mutation_check`."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

pytest.importorskip("sb3_contrib")

pytestmark = pytest.mark.outside_mutation_check


def _cfg(total: int = 1000):
    from agents.train.league import LeagueConfig
    return LeagueConfig.model_validate({"members": [{"name": "a", "agent": "greedy"},
                                                    {"name": "b", "agent": "random"}],
                                        "total_timesteps": total})


def _state() -> dict:
    """league.json as League.to_json writes it after a snapshot at 10 steps and the final rating."""
    from agents.train.league import League
    from rune_env.rules import default_rules
    league = League(_cfg(), default_rules())
    league.add_snapshot("snap_10", "runs/x/members/snap_10.pt")
    league.results = [("snap_10", "a", 1.0), ("a", "b", 0.5)]
    league.report("a", 1.0)
    league.ratings_history.append({"steps": 10, "ratings": {"a": 1000.0}})
    league.add_final("runs/x/final_policy.pt")
    league.results.append(("final", "a", 0.0))
    return json.loads(json.dumps(league.to_json(10)))


def _with(change) -> dict:
    data = copy.deepcopy(_state())
    change(data)
    return data


BAD = {
    "a key missing": (lambda d: d.pop("results"), "lacks results"),
    "version": (lambda d: d.update(version=True), "version True"),
    "steps text": (lambda d: d.update(steps="10"), "steps '10': a whole number"),
    "steps past the total": (lambda d: d.update(steps=2000), "steps 2000: a whole number of at "
                                                            "most total_timesteps (1000"),
    "fixed members": (lambda d: d.update(fixed=["a"]), "its fixed members ['a'] are not the "
                                                       "config's ['a', 'b']"),
    "snapshot name": (lambda d: d.update(snapshots=["../../etc/x"]), "snapshots must be distinct"),
    "snapshot after its steps": (lambda d: d.update(snapshots=["snap_20"]),
                                 "snapshots must be distinct snap_<steps> names of at most 10"),
    "snapshot twice": (lambda d: d.update(snapshots=["snap_10", "snap_10"]), "distinct"),
    "member not in the league": (lambda d: d["members"].update(c="greedy"), "members must map"),
    "member spec a number": (lambda d: d["members"].update(a=3), "members must map"),
    "unknown name in results": (lambda d: d["results"].append(["a", "zz", 1.0]), "results must be"),
    "a score above 1": (lambda d: d["results"].append(["a", "b", 1.5]), "results must be"),
    "a duel with itself": (lambda d: d["results"].append(["a", "a", 1.0]), "results must be"),
    "scores of a stranger": (lambda d: d["scores"].update(zz=[1.0]), "scores must map"),
    "scores as text": (lambda d: d["scores"].update(a="1"), "scores must map"),
    "ratings history": (lambda d: d.update(ratings_history=[3]), "ratings_history must be"),
}


def test_its_own_state_is_taken_and_its_snapshots_are_the_runs_files(tmp_path):
    from agents.train.league import League, check_league_state
    from rune_env.rules import default_rules
    assert check_league_state(_state(), _cfg()) == 10
    with pytest.raises(ValueError, match="^league.json: not a league state"):
        check_league_state([_state()], _cfg())
    league = League(_cfg(), default_rules())
    assert league.load_json(_state(), tmp_path) == 10
    # the fixed members' agents are the config's; the snapshot is run_dir/members/snap_10.pt,
    # not the path the file recorded; the old final member and its duel are dropped
    assert league.members == {"a": "greedy", "b": "random",
                              "snap_10": str(tmp_path / "members" / "snap_10.pt")}
    assert league.results == [("snap_10", "a", 1.0), ("a", "b", 0.5)]


@pytest.mark.parametrize("case", list(BAD))
def test_a_state_it_cannot_go_on_from_is_one_line(case):
    from agents.train.config import ConfigError
    from agents.train.league import check_league_state
    change, words = BAD[case]
    with pytest.raises(ConfigError) as e:
        check_league_state(_with(change), _cfg())
    message = str(e.value)
    assert message.startswith("league.json: ") and words in message and "\n" not in message, message


def test_resume_refuses_a_bad_state_before_writing(script_main, tmp_path):
    """league.py --resume on a run whose league.json is broken (NaN, an unknown member in its
    results, a snapshot outside the run) exits 2 with one line, and leaves the run as it was
    (its config.yaml not rewritten, the run directory kept)."""
    from test_train_runs import assert_one_line_error
    config = tmp_path / "lg.yaml"
    config.write_text(yaml.safe_dump({"name": "lg", "n_envs": 1, "total_timesteps": 64,
                                      "members": [{"name": "greedy", "agent": "greedy"}]}))
    run = tmp_path / "runs" / "lg"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("an earlier session's record\n")
    good = {"version": 1, "steps": 32, "members": {"greedy": "greedy"}, "fixed": ["greedy"],
            "snapshots": [], "results": [], "scores": {}, "ratings_history": []}
    cases = {
        "NaN": ('{"version": 1, "steps": NaN}', "league.json: NaN is not a number JSON allows"),
        "unknown member": (json.dumps({**good, "results": [["greedy", "ghost", 1.0]]}),
                           "league.json: results must be"),
        "outside the run": (json.dumps({**good, "snapshots": ["/tmp/evil"],
                                        "members": {"greedy": "greedy", "/tmp/evil": "/tmp/x.pt"}}),
                            "league.json: snapshots must be distinct"),
    }
    for text, words in cases.values():
        (run / "league.json").write_text(text)
        r = script_main("league", "--config", config, "--runs-dir", tmp_path / "runs",
                        "--resume", "--no-progress")
        assert_one_line_error(r, words)
        assert (run / "config.yaml").read_text() == "an earlier session's record\n"
        assert (run / "league.json").read_text() == text
