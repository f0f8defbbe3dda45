"""How agents are named in tables, JSON and TensorBoard (agents/evaluation/labels.py): a policy
file as <folder>/<stem>, and two different files that would share that name told apart by more
of their paths, where evaluate.py and the benchmark table refused them as "given twice"."""
import shutil
from pathlib import Path

from agents.evaluation.labels import agent_label, agent_labels, same_agent

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "agents" / "models" / "apprentice_s0.pt"


def test_two_runs_files_of_one_short_name_are_told_apart_by_their_folders(tmp_path):
    """exit1/iter_2/policy.pt and exit2/iter_2/policy.pt: both 'iter_2/policy' alone; one more
    folder each tells them apart. Builtin names and unclashing files keep their labels."""
    a, b = tmp_path / "exit1" / "iter_2" / "policy.pt", tmp_path / "exit2" / "iter_2" / "policy.pt"
    for p in (a, b):
        p.parent.mkdir(parents=True)
        shutil.copy(SHIPPED, p)
    assert agent_label(str(a)) == agent_label(str(b)) == "iter_2/policy"
    assert agent_labels([str(a), str(b), "greedy", str(SHIPPED)]) == [
        "exit1/iter_2/policy", "exit2/iter_2/policy", "greedy", "models/apprentice_s0"]
    # a copy of a shipped policy: agents/models/... against <tmp>/models/...
    copy = tmp_path / "models" / "apprentice_s0.pt"
    copy.parent.mkdir()
    shutil.copy(SHIPPED, copy)
    assert agent_labels([str(SHIPPED), str(copy)]) == [
        "agents/models/apprentice_s0", f"{tmp_path.name}/models/apprentice_s0"]


def test_one_file_by_two_paths_is_one_agent(tmp_path):
    link = tmp_path / "link.pt"
    link.symlink_to(SHIPPED)
    assert same_agent(str(SHIPPED), str(link)) and same_agent("greedy", "greedy")
    assert not same_agent("greedy", "greedy:0.5") and not same_agent(str(SHIPPED), "greedy")
    assert not same_agent(str(SHIPPED), str(tmp_path / "missing.pt"))


def test_evaluate_plays_two_files_of_one_short_name(tmp_path, script_main):
    a, b = tmp_path / "exit1" / "iter_2" / "policy.pt", tmp_path / "exit2" / "iter_2" / "policy.pt"
    for p in (a, b):
        p.parent.mkdir(parents=True)
        shutil.copy(SHIPPED, p)
    r = script_main("evaluate", "--agents", a, b, "--episodes", "1", "--out", tmp_path / "ev",
                    "--no-progress", "--json")
    assert r.returncode == 0, r.stderr
    import json
    assert set(json.loads(r.stdout)["agents"]) == {"exit1/iter_2/policy", "exit2/iter_2/policy"}
    r = script_main("evaluate", "--agents", a, a, "--episodes", "1", "--out", tmp_path / "ev2",
                    "--no-progress")
    assert r.returncode == 2 and r.stderr.strip() == f"error: --agents: '{a}' is given twice"


def test_files_no_folder_tells_apart_get_their_whole_paths(tmp_path):
    """x/policy.pt and x/checkpoints/policy.pt (a checkpoint's label skips checkpoints/), or
    a.pt and a.zip of one folder: no number of folders separates them, and evaluate.py kept one
    of the two under their shared label. Their whole paths do."""
    run = tmp_path / "runs" / "x"
    (run / "checkpoints").mkdir(parents=True)
    for p in (run / "policy.pt", run / "checkpoints" / "policy.pt", run / "a.pt"):
        shutil.copy(SHIPPED, p)
    (run / "a.zip").write_bytes(b"not read here")
    names = [str(run / "policy.pt"), str(run / "checkpoints" / "policy.pt")]
    assert agent_labels(names) == names
    names = [str(run / "a.pt"), str(run / "a.zip"), "greedy"]
    assert agent_labels(names) == [*names[:2], "greedy"]


def test_labels_that_would_share_a_tensorboard_run_get_their_own():
    """a_b/x and a/b_x are both a_b_x as a TensorBoard folder ('/' becomes '_'): evaluate.py wrote
    both agents there and the second replaced the first. The later one gets ~2."""
    from agents.evaluation.labels import tb_dir_names
    assert tb_dir_names(["a_b/x", "a/b_x", "greedy", "a_b_x"]) == {
        "a_b/x": "a_b_x", "a/b_x": "a_b_x~2", "greedy": "greedy", "a_b_x": "a_b_x~3"}
