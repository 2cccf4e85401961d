"""The fork server the exercises' meta-tests run pytest in (tests/forkrun.py): each run is a process of its
own, with its own directory, environment, output and exit code, and nothing a run before it left."""

import os
from pathlib import Path

from tests.forkrun import ForkRunner

ROOT = Path(__file__).resolve().parents[1]

TESTS = '''
import os
import sys


def test_the_run_sees_its_own_environment_and_nothing_an_earlier_run_imported():
    assert os.environ["FORKRUN_WHICH"] in ("first", "second")
    assert "forkrun_marker" not in sys.modules
    sys.modules["forkrun_marker"] = sys  # left behind on purpose: the next run must not see it
    print("ran", os.environ["FORKRUN_WHICH"])


def test_fails_when_asked():
    assert os.environ.get("FORKRUN_FAIL") != "1", "asked to fail"
'''


def test_each_run_is_a_fresh_process_with_its_own_environment_code_and_output(tmp_path):
    (tmp_path / "test_probe.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    runner = ForkRunner(str(ROOT), env)
    try:
        argv = [str(tmp_path / "test_probe.py"), "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)]
        first = runner.run(argv, dict(env, FORKRUN_WHICH="first"))
        second = runner.run(argv, dict(env, FORKRUN_WHICH="second", FORKRUN_FAIL="1"))
        server = runner._server
    finally:
        runner.close()
    assert first.returncode == 0 and "ran first" in first.stdout and "2 passed" in first.stdout, first.stdout
    assert second.returncode == 1 and "ran second" in second.stdout, second.stdout
    assert "1 failed, 1 passed" in second.stdout and "asked to fail" in second.stdout
    assert server is not None and server.returncode == 0  # one server for both runs, ended by close()


def test_a_run_past_its_timeout_is_ended(tmp_path):
    (tmp_path / "test_slow.py").write_text("import threading\n\n\ndef test_waits():\n    threading.Event().wait()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    runner = ForkRunner(str(ROOT), env)
    try:
        result = runner.run([str(tmp_path / "test_slow.py"), "-q", "-p", "no:cacheprovider"], env, timeout=1)
    finally:
        runner.close()
    assert result.returncode == -14  # SIGALRM
