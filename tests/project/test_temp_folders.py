"""A test process keeps what it writes outside pytest's tmp_path in one folder of its own
(conftest.py), and a worker process a test starts (SubprocVecEnv, a multiprocessing pool) makes
none: such a worker imports conftest.py only to unpickle its target and ends without running
exit handlers, so each left an empty rune-tests-* folder in the temp directory (two a run of
the suite, from tests/envs/test_envs_input.py's SubprocVecEnv)."""
from __future__ import annotations

import multiprocessing
import os

import conftest


def _what_a_worker_sees(queue) -> None:
    import conftest as worker_conftest   # the worker's own import, as an unpickled target's
    queue.put((worker_conftest._PROCESS_TMP, os.environ.get("RUNE_ENV_KEY_FILE")))


def test_a_worker_makes_no_folder_and_keeps_the_test_processs():
    assert conftest._PROCESS_TMP is not None and conftest._PROCESS_TMP.is_dir()
    context = multiprocessing.get_context("spawn")    # a fresh interpreter, as forkserver's
    queue = context.Queue()
    worker = context.Process(target=_what_a_worker_sees, args=(queue,))
    worker.start()
    folder, key_file = queue.get(timeout=120)
    worker.join(timeout=120)
    assert worker.exitcode == 0
    assert folder is None
    assert key_file == str(conftest._PROCESS_TMP / "checkpoint.key")
