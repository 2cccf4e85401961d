"""The helper that ends the Spark cluster's processes, checked with ``sleep`` stand-ins (no Spark): each
group it started is gone after the fixture's finalizer, after Ctrl-C (atexit) and after SIGTERM."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process_groups import ProcessGroups, group_members

ROOT = Path(__file__).resolve().parent.parent
# a group leader and two children of its own in the group: what a launcher script and its JVM look like
STAND_IN = ["sh", "-c", "sleep 1000 & sleep 1000 & wait"]


def group_alive(pgid: int) -> bool:
    """Is any process of group ``pgid`` still running (a zombie waiting to be reaped does not count)?"""
    return bool(group_members(pgid))


def end_if_alive(pgids):
    """What a failed check left running, ended by group id (the test started these groups)."""
    for pgid in pgids:
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)


def test_stop_all_ends_every_group_and_its_children():
    groups = ProcessGroups()
    started = [groups.start(STAND_IN) for _ in range(2)]
    pgids = list(groups.groups)
    try:
        assert all(group_alive(pgid) for pgid in pgids)
        assert signal.getsignal(signal.SIGTERM) == groups._terminated
        groups.stop_all()
        assert not any(group_alive(pgid) for pgid in pgids)
        assert all(process.returncode is not None for process in started)
        assert signal.getsignal(signal.SIGTERM) != groups._terminated and groups.started == []
    finally:
        end_if_alive(pgids)


CHILD = """
import os, signal, sys
from tests.process_groups import ProcessGroups, group_members
# Ctrl-C raises KeyboardInterrupt, as in a terminal's Python, even if this one was started with SIGINT ignored
# (a background job of a shell without job control ignores it, and so would every Python it starts)
signal.signal(signal.SIGINT, signal.default_int_handler)
groups = ProcessGroups()
groups.start({stand_in!r})
print(groups.groups[0], flush=True)
sys.stdin.readline()  # the parent has seen the group alive
os.kill(os.getpid(), signal.{signal})  # os.kill acts on a signal to its own process before it returns
"""


@pytest.mark.parametrize("sig, returncode", [("SIGTERM", -signal.SIGTERM), ("SIGINT", -signal.SIGINT)])
def test_a_python_stopped_by_sigterm_or_ctrl_c_ends_its_groups_on_the_way_out(sig, returncode):
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(stand_in=STAND_IN, signal=sig)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pgid = int(child.stdout.readline())
    try:
        assert group_alive(pgid)
        child.stdin.write("go\n")
        child.stdin.flush()
        child.wait(timeout=120)
        assert child.returncode == returncode, child.stderr.read()
        assert not group_alive(pgid)
    finally:
        if child.poll() is None:
            child.kill()
        end_if_alive([pgid])


# a leader that exits at once on SIGTERM, and a member of its group that takes a while to shut down cleanly
# (as a JVM does) and says so in a file: the slow shutdown stands in for a real one, nothing waits on it
SLOW_MEMBER = """
import signal, sys, time
def shut_down(signum, frame):
    time.sleep(0.5)
    open(sys.argv[1], "w").write("shut down cleanly")
    sys.exit(0)
signal.signal(signal.SIGTERM, shut_down)
print("ready", flush=True)
signal.pause()
"""


def test_stop_all_gives_every_member_of_a_group_its_grace_period_not_only_the_leader(tmp_path):
    marker = tmp_path / "member"
    groups = ProcessGroups()
    leader = groups.start(["sh", "-c", f'{sys.executable} -c "$0" {marker} & wait', SLOW_MEMBER],
                          stdout=subprocess.PIPE, text=True)
    pgids = list(groups.groups)
    try:
        assert leader.stdout.readline() == "ready\n"  # the member's handler is in place
        groups.stop_all()
        assert not group_alive(pgids[0])
        assert marker.read_text() == "shut down cleanly"  # not killed once the leader had gone
    finally:
        end_if_alive(pgids)
