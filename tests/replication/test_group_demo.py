"""``minidb group demo``: a group of real node processes over TCP fails over, rejoins its old master, and agrees.

The demo runs as a subprocess (real processes, TCP on 127.0.0.1); the node's
control lines and the demo's clean-up on errors and Ctrl-C are tested in this
process, with one real node process where it matters.
"""

import os
import re
import socket
import subprocess
import sys
import threading

import pytest

from minidb.cli import group as group_cli, main
from minidb.errors import MinidbError
from minidb.io import OSDisk, created
from minidb.log import LogManager
from minidb.replication.errors import GroupConfigError, NetworkRestoreRequiredError
from minidb.replication.group.node import GroupNode, parse_event, parse_members

TIMEOUT_S = 240  # generous: two cores shared with other work


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def demo(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "minidb", "group", "demo", *map(str, argv)], capture_output=True,
                          text=True, timeout=TIMEOUT_S, cwd=cwd)


def test_a_tcp_group_of_three_processes_ends_with_equal_state_on_every_node(tmp_path):
    out = tmp_path / "group"
    done = demo("--nodes", 3, "--records", 3, "--dir", out)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("[demo] ") for line in lines) and done.stderr == ""
    digests = dict(re.findall(r"^\[demo\] (n\d): (.*)$", done.stdout, re.M))
    assert sorted(digests) == ["n1", "n2", "n3"] and len(set(digests.values())) == 1
    assert lines[-1] == f"[demo] all 3 nodes agree: {digests['n1']}"
    assert digests["n1"].startswith("6 records, ")  # 3 by each master; the tail of 2 is gone everywhere
    # the first master logged a tail nobody acknowledged, died, and rolled that tail back when it rejoined
    old = re.search(r"^\[demo\] (n\d) is master \(term \d+\)", done.stdout, re.M).group(1)  # the first
    assert f"[demo] killed master {old} (SIGKILL)" in lines
    rejoined = re.search(rf"^\[demo\] {old} rejoined as a replica of (n\d): matchpoint VLSN (\d+), "
                         r"rolled back (\d+) entries", done.stdout, re.M)
    new, matchpoint, rolled_back = rejoined.group(1), int(rejoined.group(2)), int(rejoined.group(3))
    assert new != old and rolled_back >= 1
    # a new node with an empty directory took a replica's place, brought up by a network restore over TCP
    restored = re.search(r"^\[demo\] (n\d) joined with an empty directory: network restore over TCP from (n\d), "
                         r"files \d+\.\.\d+, (\d+) bytes, checksums verified$", done.stdout, re.M)
    assert restored and restored.group(2) == new and restored.group(1) not in (old, new)
    assert int(restored.group(3)) > 0
    assert not [n for n in os.listdir(out / restored.group(1)) if n.startswith("restore.")]  # installed
    # no node process is left running
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", done.stdout)]
    assert len(pids) == 3 and not any(alive(pid) for pid in pids)
    # the old master's log shows the rollback: RollbackStart/End, its tail INVISIBLE after the matchpoint
    log = LogManager(OSDisk(out / old, readonly=True), readonly=True)
    entries = list(log.scan())
    starts = [e for e in entries if e.type_name == "RollbackStart"]
    assert len(starts) == 1 and starts[0].values["matchpoint_vlsn"] == matchpoint
    assert any(e.type_name == "RollbackEnd" for e in entries)
    invisible = [e.vlsn for e in entries if e.vlsn is not None and e.header.invisible]
    assert len(invisible) == rolled_back and min(invisible) == matchpoint + 1


def usage_error(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        main(["group", "demo", *map(str, argv)])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_bad_arguments_exit_2_with_one_line_and_start_nothing(capsys, tmp_path):
    for argv, message in ((["--nodes", 2], "--nodes: must be at least 3"),
                          (["--records", "x"], "--records: not a number"),
                          (["--nodes", 10], "--nodes: must be at most 9")):
        code, out, err = usage_error(capsys, *argv)
        assert code == 2 and out == "", argv
        assert len(err.splitlines()) == 1 and message in err, err
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["group", "demo", "--dir", str(foreign)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "not empty, and not written by minidb group demo" in err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"] and (foreign / "notes.txt").read_text() == "keep me"


# -- clean-up on every exit path (in this process, one real node) ------------------------------------------------
def start_one_then(error):
    """A demo run that starts n1 for real, then fails with ``error``; remembers the process and directory."""
    seen = {}

    def run(self):
        seen["directory"] = self.directory
        created.makedirs(os.path.join(self.directory, "n1", "old"))  # stands for the output of an earlier step
        self.start("n1")
        seen["proc"] = self.procs["n1"].proc
        raise error

    return run, seen


@pytest.mark.parametrize("error, code", [(group_cli.DemoFailed("n1: a step failed"), 1), (KeyboardInterrupt(), 130)])
def test_a_failed_step_or_ctrl_c_stops_the_nodes_and_deletes_the_temporary_directory(monkeypatch, capsys, error,
                                                                                      code):
    run, seen = start_one_then(error)
    monkeypatch.setattr(group_cli.GroupDemo, "run", run)
    assert main(["group", "demo", "--timeout", "120"]) == code
    out, err = capsys.readouterr()
    assert err.splitlines() == ["minidb group demo: failed: n1: a step failed" if code == 1
                                else "minidb group: interrupted"]
    assert seen["proc"].poll() is not None and not alive(seen["proc"].pid)
    assert not os.path.exists(seen["directory"])


def test_with_dir_the_environments_stay_and_a_second_run_replaces_only_its_own_output(monkeypatch, capsys, tmp_path):
    run, seen = start_one_then(group_cli.DemoFailed("n1: a step failed"))
    monkeypatch.setattr(group_cli.GroupDemo, "run", run)
    for _ in range(2):  # the second run deletes the first one's output (else makedirs would fail), and only that
        assert main(["group", "demo", "--dir", str(tmp_path / "out"), "--timeout", "120"]) == 1
        assert seen["directory"] == str(tmp_path / "out") and (tmp_path / "out" / "n1" / "old").is_dir()
        marker = (tmp_path / "out" / ".minidb-output").read_text()
        assert marker == "minidb output of: minidb group demo\nn1/\nn1/old/\n"
        assert capsys.readouterr().err == "minidb group demo: failed: n1: a step failed\n"
    (tmp_path / "out" / "n1" / "stranger").write_text("x")
    assert main(["group", "demo", "--dir", str(tmp_path / "out")]) == 2
    assert "n1/stranger: not written by minidb group demo" in capsys.readouterr().err


# -- one node's control lines --------------------------------------------------------------------------------------
@pytest.fixture
def node(tmp_path):
    lines = []
    node = GroupNode(str(tmp_path / "n1"), "g", "n1", emit=lines.append, wait_s=5)
    yield node, lines
    node.close()


def test_a_node_reports_its_ports_then_answers_each_command_with_one_line(node):
    node, lines = node
    node.listening()
    kind, name, _, named = parse_event(lines[0])
    assert (kind, name) == ("listening", "n1") and named["pid"] == str(os.getpid())
    assert named["election"].startswith("127.0.0.1:") and named["election"] != named["stream"]
    for command, error in (("write 0 3", "has no group yet"), ("dance", "not a command: 'dance'"),
                           ("digest x", "not a command"), ("group n1=nowhere", "NAME=HOST:PORT/HOST:PORT"),
                           ("group n2=127.0.0.1:1/127.0.0.1:2", "but the group names it not at all")):
        del lines[:]
        assert node.command(command) is True
        assert len(lines) == 1 and lines[0].startswith("error n1 ") and error in lines[0], (command, lines)
    assert node.env is None and not os.path.exists(node.directory)  # nothing was opened or written
    assert node.command("quit") is False


def test_a_lone_node_elects_itself_writes_and_reports_its_digest(node):
    node, lines = node
    node.listening()
    named = parse_event(lines[0])[3]
    node.command(f"group n1={named['election']}/{named['stream']}")
    node.wait_until(lambda: node.env.state.value == "MASTER", "an election")
    node.command("write 0 2")
    # VLSN 1 is n1's TermStart; the write logs the creation of 'demo' (2), then two commits (3..6)
    node.command("digest 6")
    events = {parse_event(line)[0]: parse_event(line)[3] for line in lines}
    assert events["opened"] == {"vlsns": "-", "last_txn_end": "0"}
    assert events["wrote"] == {"records": "2", "vlsns": "2..6", "acks": "SIMPLE_MAJORITY"}
    assert events["digest"]["records"] == "2" and events["digest"]["vlsns"] == "1..6"
    assert events["state"] == {"term": "1", "master": "n1"}
    node.command("tail 2 1")  # logged and fsynced, never committed
    assert parse_event(lines[-1])[:2] == ("tail", "n1") and parse_event(lines[-1])[3] == {"records": "1",
                                                                                          "vlsns": "7..7"}
    assert node.env.range.last == 7 and node.env.range.last_txn_end == 6 and not node.feeding


def test_members_are_named_with_both_addresses():
    assert parse_members(["n1=127.0.0.1:5/127.0.0.1:6"]) == {"n1": ("127.0.0.1:5", "127.0.0.1:6")}
    for words, error in ((["n1=127.0.0.1:5"], "election/stream"), (["n1=a/b"], "host:port"),
                         (["n1=h:1/h:2", "n1=h:3/h:4"], "named twice")):
        with pytest.raises(GroupConfigError, match=error):
            parse_members(words)


def test_the_node_process_stops_when_its_input_ends(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "minidb.cli.group", "node", "--dir", str(tmp_path / "n1"),
                             "--group", "g", "--name", "n1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().startswith("listening n1 election=127.0.0.1:")
    proc.stdin.close()  # the parent is gone
    assert proc.wait(TIMEOUT_S) == 0 and proc.stdout.read() == "bye n1\n"


def test_a_node_that_cannot_listen_or_whose_loop_fails_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    argv = ["node", "--dir", str(tmp_path / "n1"), "--group", "g", "--name", "n1"]
    try:
        assert group_cli.node_main([*argv, "--port", str(port)]) == 1
    finally:
        taken.close()
    assert capsys.readouterr().out == f"error n1 node n1: cannot listen for election traffic on 127.0.0.1:{port}: " \
                                      "Address already in use\n"

    def fail(self, control):
        raise NetworkRestoreRequiredError("n1 and master n2 share no sync point")

    monkeypatch.setattr(GroupNode, "serve", fail)
    read_end, write_end = os.pipe()
    os.close(write_end)
    monkeypatch.setattr(sys, "stdin", os.fdopen(read_end))
    assert group_cli.node_main(argv) == 1
    assert capsys.readouterr().out.splitlines() == ["error n1 n1 and master n2 share no sync point", "bye n1"]


def test_a_node_that_shares_no_sync_point_with_the_master_is_restored_over_tcp_and_rejoins(tmp_path):
    """Two node objects in this process, over TCP: n2's log shares no sync point with master n1's, so its syncup
    asks for a network restore; n2 gets n1's files from n1's stream address, opens on them and streams."""
    from minidb.replication import ReplicatedEnvironment
    from minidb.replication.group.membership import RepGroup, RepNode

    nodes, lines = {}, []
    for name in ("n1", "n2"):
        nodes[name] = GroupNode(str(tmp_path / name), "g", name, emit=lines.append, wait_s=60)
    members = {name: (node.election_listener.address, node.stream_listener.address) for name, node in nodes.items()}
    group = RepGroup("g", [RepNode(n, e) for n, (e, _) in members.items()])
    for name, term, records in (("n1", 5, 4), ("n2", 1, 1)):  # n1's log is newer: it is elected
        env = ReplicatedEnvironment.open(str(tmp_path / name), group=group, node_name=name)
        env.become_master(term)
        for i in range(records):
            env.database("demo").put(f"{name}-{i}", "x")
        env.close()
    stop = threading.Event()
    serving = threading.Thread(target=lambda: [nodes["n1"].step(0.02) for _ in iter(stop.is_set, True)])
    try:
        for node in nodes.values():
            node.configure(members)

        def event(kind, name):
            return next((parse_event(line)[3] for line in list(lines) if parse_event(line)[:2] == (kind, name)), None)

        serving.start()  # n1 serves in its own thread, as in its own process; n2's loop runs here
        try:
            last = int(event("opened", "n1")["vlsns"].split("..")[1])  # n1 writes nothing more
            nodes["n2"].wait_until(lambda: event("joined", "n2") is not None and nodes["n2"].env.range.last == last,
                                   "n2 rejoining and catching up")
        except MinidbError as e:
            raise AssertionError("\n".join(lines)) from e
        restored = event("restored", "n2")
        assert restored["master"] == "n1" and restored["checksums"] == "verified" and int(restored["bytes"]) > 0
        assert any("share no sync point" in line for line in lines if line.startswith("note n2 network restore"))
        assert dict(nodes["n2"].env.database("demo", create=False).items()) == \
            {f"n1-{i}".encode(): b"x" for i in range(4)}
        assert not [n for n in os.listdir(tmp_path / "n2") if n.startswith("restore.")]
    finally:
        stop.set()
        if serving.is_alive():
            serving.join()
        for node in nodes.values():
            node.close()
