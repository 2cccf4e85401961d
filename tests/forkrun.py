"""Run pytest many times over, each run in a fresh process, without paying for Python and pytest each time.

The exercises' meta-tests (``exercises/test_stubs_fail.py``) run pytest some 125 times, once per
exercise and stub or named mutant. Each run needs a process of its own: the engine reads
``MINIDB_IMPL`` when it is first imported, and a run must not see the modules or the state another
run left. But a third of each run was spent starting Python and importing pytest and hypothesis,
which do not depend on the run. So a *fork server* imports them once and forks a child per run:
the child starts with those modules in memory and nothing else of the runs before it (the server
itself never imports minidb nor runs a test), sets the run's working directory and environment,
sends its output to files and calls ``pytest.main``; its exit status is the run's.

``python -m tests.forkrun`` is the server: one request per line on its standard input, a JSON
object ``{"argv": [...], "cwd": "...", "env": {...}, "timeout": seconds}``, one answer per line on
its standard output, ``{"code": N, "stdout": "...", "stderr": "..."}``. A run still going after its
timeout is ended by ``SIGALRM`` (its code is then -14). End of input ends the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading

import hypothesis  # noqa: F401  (imported once here, for every run: the reason this server exists)
import pytest


def run_child(request: dict, out_path: str, err_path: str) -> None:
    """In the forked child: become the run (directory, environment, output files) and exit with pytest's code."""
    code = 70
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, out_path), (2, err_path)):
            target = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.dup2(target, fd)
            os.close(target)
        import signal

        signal.alarm(int(request.get("timeout", 300)))  # the default action ends the process
        code = int(pytest.main(request["argv"]))
    except BaseException:  # a failure of the run itself, reported like Python's own exit on an error
        import traceback

        traceback.print_exc()
        code = 70
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(requests, answers) -> None:
    """Answer each request line with the outcome of one run in a child of this process."""
    for line in requests:
        request = json.loads(line)
        with tempfile.TemporaryDirectory(prefix="forkrun-") as tmp:
            out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
            for path in (out_path, err_path):
                open(path, "wb").close()
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                run_child(request, out_path, err_path)
            _, status = os.waitpid(pid, 0)
            with open(out_path, encoding="utf-8", errors="replace") as f_out, \
                    open(err_path, encoding="utf-8", errors="replace") as f_err:
                answer = {"code": os.waitstatus_to_exitcode(status), "stdout": f_out.read(), "stderr": f_err.read()}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


class ForkRunner:
    """A client of one server process, started at the first run; ``run`` is ``subprocess.run``'s answer."""

    def __init__(self, cwd: str, env: dict[str, str]):
        self._cwd, self._env = cwd, env
        self._server: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def run(self, argv: list[str], env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
        with self._lock:
            if self._server is None or self._server.poll() is not None:
                self._server = subprocess.Popen([sys.executable, "-m", "tests.forkrun"], cwd=self._cwd, env=self._env,
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            server = self._server
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(json.dumps({"argv": argv, "cwd": self._cwd, "env": env, "timeout": timeout}) + "\n")
            server.stdin.flush()
            line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"the pytest fork server ended (exit code {server.wait()}) before answering {argv}")
        answer = json.loads(line)
        return subprocess.CompletedProcess(["pytest", *argv], answer["code"], answer["stdout"], answer["stderr"])

    def close(self) -> None:
        if self._server is not None and self._server.poll() is None:
            assert self._server.stdin is not None
            self._server.stdin.close()
            self._server.wait()


if __name__ == "__main__":
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the children's fd 1 goes to their own files
    serve(sys.stdin, answers)
