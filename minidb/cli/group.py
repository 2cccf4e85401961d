"""``minidb group``: a replication group of real processes over TCP on 127.0.0.1.

``minidb group demo [--nodes 3] [--records 5] [--dir D]`` starts one process
per node (``minidb group node``, :class:`~minidb.replication.group.node.GroupNode`),
and plays a failover, printing each step as one line::

    [demo] n1 is master (term 1); n2, n3 are its replicas
    [demo] n1 wrote 5 records with SIMPLE_MAJORITY acks (VLSNs 1..10)
    [demo] n1 logged 2 records it never sent or committed (VLSNs 11..12): its unacknowledged tail
    [demo] killed master n1 (SIGKILL)
    [demo] n2 is master (term 3); n3 is its replica
    [demo] n2 wrote 5 records with SIMPLE_MAJORITY acks (VLSNs 11..20)
    [demo] restarted n1: recovery found VLSNs 1..12, last_txn_end 10
    [demo] n1 rejoined as a replica of n2: matchpoint VLSN 10, rolled back 2 entries (VLSNs 11..12)
    [demo] stopped n3 and emptied its directory: a new node takes its place
    [demo] n3 joined with an empty directory: network restore over TCP from n2, files 1..1, 3695 bytes, checksums verified
    [demo] n3 is a replica of n2 (restored VLSNs 1..20, matchpoint VLSN 20)
    [demo] n1: 10 records, crc 0xfd31cbd6, VLSNs 1..20, last_txn_end 20
    ...
    [demo] all 3 nodes agree: 10 records, crc 0xfd31cbd6, VLSNs 1..20, last_txn_end 20

The terms depend on how the survivors' rounds meet (term 2 or later). The
last step replaces a replica that is neither master by a new node of the same
name and addresses with an empty directory (the demo deletes that node's
environment, which it made): the node joins by a network restore
(:mod:`minidb.replication.restore`) from the master over TCP, then streams.
(The replicas of the first election join empty too, and are restored from
the first master's short log; the demo does not print that.)

The parent talks to each node over its standard input and output (the
control lines of :mod:`minidb.replication.group.node`) and waits for *events*
(a line saying the master was elected, a write acknowledged, a syncup done),
each with a deadline (``--timeout``) whose error names the node: no sleeps.
Invariants: every node process is stopped on every exit path (the end, a
failed step, Ctrl-C or SIGTERM; and a node whose parent vanished sees the
end of its input and stops); only what the demo created is deleted (each node reports every path it creates on a
``created`` line, which the demo reports again, :mod:`minidb.io.created`): without ``--dir``
a temporary directory, removed at the end; with ``--dir`` the directory is
claimed like every command's output (:mod:`minidb.cli.output`: new, empty,
or the previous output of ``minidb group demo``; anything else is refused,
exit code 2) and the nodes' environments are kept there (``minidb printlog
D/n1`` shows the RollbackStart/End and the INVISIBLE entries).

Exit code 0 when every node ends with the same digest (records, their
checksum, VLSN range, last_txn_end); 1 when they differ or a step fails
(a node died, a deadline passed); 2 for a bad argument.

``minidb group node --dir D --group NAME --name N [--port P] [--stream-port P]``
runs one node by hand: it prints its ports, then reads control lines.
The demo starts nodes as ``python -m minidb.cli.group node ...``, the same
command without loading the other subcommands (which import plotting).
"""

from __future__ import annotations

import collections
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import minidb
from minidb.cli.common import int_at_least, path_arg, positive_int
from minidb.cli.output import owned_output
from minidb.errors import MinidbError, UserError
from minidb.io import created

GROUP_NAME = "demo"
TAIL_RECORDS = 2
OWNER = "minidb group demo"
CREATED = "created"  # a node's line "created n1 /abs/path": what it made, for the demo's output marker
QUIT_GRACE_S = 10  # a node told to quit that has not after this long (a command still waiting) is killed


class DemoFailed(MinidbError):
    """A step of the demo did not happen (a node died, reported an error, or a deadline passed)."""


# -- one node process ----------------------------------------------------------------------------------------
class NodeProcess:
    """A ``minidb group node`` child process, its output read by a thread into the demo's event queue."""

    def __init__(self, name: str, directory: str, events: queue.Queue, timeout: float, ports: tuple[int, int],
                 trace: bool = False):
        self.name, self.events = name, events
        self.stderr: collections.deque[str] = collections.deque(maxlen=5)
        self.killed = False
        root = os.path.dirname(os.path.dirname(os.path.abspath(minidb.__file__)))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        command = [sys.executable, "-m", "minidb.cli.group", "node", "--dir", directory, "--group", GROUP_NAME,
                   "--name", name, "--port", str(ports[0]), "--stream-port", str(ports[1]),
                   "--timeout", f"{timeout:g}"] + ["--trace"] * trace
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, encoding="utf-8", env=env)
        self.readers = [threading.Thread(target=self._read, args=(stream, sink), daemon=True)
                        for stream, sink in ((self.proc.stdout, self._event), (self.proc.stderr, self.stderr.append))]
        for reader in self.readers:
            reader.start()

    def _read(self, stream, sink) -> None:
        for line in stream:
            sink(line.rstrip("\n"))
        if sink == self._event:
            self.events.put((self, None))  # end of output: the process ended

    def _event(self, line: str) -> None:
        if line.startswith(CREATED + " "):
            created.created(line.split(" ", 2)[2])  # what the node made is the demo's output
            return
        self.events.put((self, line))  # the process, not its name: a restarted node is another process

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise DemoFailed(f"{self.name}: cannot send {line.split()[0]!r}: {self.ended()}") from None

    def ended(self) -> str:
        code = self.proc.poll()
        last = f" ({self.stderr[-1]})" if self.stderr else ""
        return f"the process ended with exit code {code}{last}" if code is not None else "the process is running"

    def kill(self) -> None:
        self.killed = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        for reader in self.readers:  # the process is gone: its pipes end, and every line it wrote is read
            reader.join()

    def stop(self, timeout: float) -> None:
        """Ask the node to quit; kill it if it has not after ``timeout`` seconds."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()


# -- the demo ----------------------------------------------------------------------------------------------
class GroupDemo:
    """Starts the nodes, plays the failover, compares the digests (see the module documentation)."""

    def __init__(self, directory: str, nodes: int, records: int, timeout: float, say=print, verbose: bool = False):
        from minidb.replication.group.node import parse_event

        self.parse_event = parse_event
        self.directory, self.records, self.timeout, self.say = directory, records, timeout, say
        self.verbose = verbose  # print every line the nodes write, and their elections' trace
        self.names = [f"n{i}" for i in range(1, nodes + 1)]
        self.events: queue.Queue = queue.Queue()
        self.procs: dict[str, NodeProcess] = {}
        self.addresses: dict[str, tuple[str, str]] = {}  # node -> (election, stream)
        self.states: dict[str, tuple[str, int, str]] = {}  # node -> (state, term, master), as last reported
        self.log: list[tuple[str, str, dict[str, str]]] = []  # every event read: (node, kind, named values)

    def live(self) -> list[str]:
        return [n for n in self.names if n in self.procs and not self.procs[n].killed]

    def _next_event(self, deadline: float, waiting_for: str) -> None:
        """Read one event (up to ``deadline``) into :attr:`log`; a DemoFailed names ``waiting_for`` if none comes."""
        left = deadline - time.monotonic()
        try:
            proc, line = self.events.get(timeout=left) if left > 0 else (None, None)
        except queue.Empty:
            proc, line = None, None
        if proc is None:
            raise DemoFailed(f"{waiting_for} did not happen within {self.timeout:g} s")
        name = proc.name
        if self.procs.get(name) is not proc:
            return  # the last words of a node process killed before this one started
        if line is None:
            if not proc.killed:
                proc.proc.wait()
                raise DemoFailed(f"{name}: {proc.ended()}, while waiting for {waiting_for}")
            return
        if self.verbose:
            self.say(f"  {name}| {line}")
        event, _, plain, named = self.parse_event(line)
        if event == "error":
            raise DemoFailed(f"{name}: {line.split(' ', 2)[2]}")
        if event == "state":
            self.states[name] = (plain[0], int(named["term"]), named["master"])
        self.log.append((name, event, named))

    def wait_until(self, ready, waiting_for: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not ready():
            self._next_event(deadline, waiting_for)

    def expect(self, node: str, kind: str, what: str, since: int) -> dict[str, str]:
        """The named values of the first ``kind`` event of ``node`` after ``log[since]``, waiting for it."""
        def found() -> dict[str, str] | None:
            return next((named for name, event, named in self.log[since:] if name == node and event == kind), None)

        self.wait_until(lambda: found() is not None, f"{node}: {what}")
        return found()  # type: ignore[return-value]

    def start(self, name: str, ports: tuple[int, int] = (0, 0)) -> None:
        self.states.pop(name, None)
        since = len(self.log)
        self.procs[name] = NodeProcess(name, os.path.join(self.directory, name), self.events, self.timeout, ports,
                                       self.verbose)
        found = self.expect(name, "listening", "listening", since)
        self.addresses[name] = (found["election"], found["stream"])

    def join(self, names: list[str], restarted: bool = True) -> None:
        members = " ".join(f"{n}={e}/{s}" for n, (e, s) in self.addresses.items())
        since = len(self.log)
        for name in names:
            self.procs[name].send(f"group {members}")
        for name in names:
            opened = self.expect(name, "opened", "opening its environment", since)
            if len(names) == 1 and restarted:
                self.say(f"[demo] restarted {name}: recovery found VLSNs {opened['vlsns']}, "
                         f"last_txn_end {opened['last_txn_end']}")

    def elected(self, after_term: int) -> tuple[str, int]:
        """Wait until every live node names the same master for one term after ``after_term``."""
        def agreed() -> bool:
            seen = {self.states.get(n, ("", 0, "-"))[1:] for n in self.live()}
            if len(seen) != 1:
                return False
            term, master = next(iter(seen))
            return term > after_term and master in self.live() and self.states[master][0] == "MASTER"

        self.wait_until(agreed, "electing a master")
        term, master = self.states[self.live()[0]][1:]
        replicas = [n for n in self.live() if n != master]
        self.say(f"[demo] {master} is master (term {term}); {', '.join(replicas)} "
                 f"{'is its replica' if len(replicas) == 1 else 'are its replicas'}")
        return master, term

    def write(self, master: str, start: int) -> int:
        since = len(self.log)
        self.procs[master].send(f"write {start} {self.records}")
        wrote = self.expect(master, "wrote", f"writing {self.records} records", since)
        self.say(f"[demo] {master} wrote {wrote['records']} records with {wrote['acks']} acks (VLSNs {wrote['vlsns']})")
        return int(wrote["vlsns"].split("..")[1])

    def run(self) -> bool:
        self.say(f"[demo] a group of {len(self.names)} nodes on 127.0.0.1, in {self.directory}")
        for name in self.names:
            self.start(name)
            election, stream = self.addresses[name]
            self.say(f"[demo] started {name} (pid {self.procs[name].proc.pid}): elections on {election}, "
                     f"stream on {stream}")
        self.join(self.names)
        old, term = self.elected(0)
        self.write(old, 0)
        since = len(self.log)
        self.procs[old].send(f"tail {self.records} {TAIL_RECORDS}")
        tail = self.expect(old, "tail", "logging its tail", since)
        self.say(f"[demo] {old} logged {tail['records']} records it never sent or committed "
                 f"(VLSNs {tail['vlsns']}): its unacknowledged tail")
        self.procs[old].kill()
        self.say(f"[demo] killed master {old} (SIGKILL)")
        new, _ = self.elected(term)
        last = self.write(new, self.records)
        ports = tuple(int(address.rsplit(":", 1)[1]) for address in self.addresses[old])
        since = len(self.log)
        self.start(old, ports)  # a member keeps its addresses
        self.join([old])
        joined = self.expect(old, "joined", f"rejoining master {new}", since)
        rolled = f" (VLSNs {joined['vlsns']})" if "vlsns" in joined else ""
        self.say(f"[demo] {old} rejoined as a replica of {joined['master']}: matchpoint VLSN {joined['matchpoint']}, "
                 f"rolled back {joined['rolled_back']} entries{rolled}")
        self.fresh_node(next(n for n in reversed(self.names) if n not in (old, new)), new)
        return self.compare(last)

    def fresh_node(self, name: str, master: str) -> None:
        """Replica ``name`` stops and a new node with an empty directory takes its place (its name and
        addresses): it joins by a network restore from the master over TCP, then streams."""
        self.procs[name].stop(timeout=QUIT_GRACE_S)
        shutil.rmtree(os.path.join(self.directory, name))  # the node's environment, which the demo made
        self.say(f"[demo] stopped {name} and emptied its directory: a new node takes its place")
        ports = tuple(int(address.rsplit(":", 1)[1]) for address in self.addresses[name])
        since = len(self.log)
        self.start(name, ports)
        self.join([name], restarted=False)
        restored = self.expect(name, "restored", f"a network restore from {master}", since)
        self.say(f"[demo] {name} joined with an empty directory: network restore over TCP from "
                 f"{restored['master']}, files {restored['files']}, {restored['bytes']} bytes, "
                 f"checksums {restored['checksums']}")
        joined = self.expect(name, "joined", f"{name} streaming from master {master}", since)
        self.say(f"[demo] {name} is a replica of {joined['master']} (restored VLSNs {restored['vlsns']}, "
                 f"matchpoint VLSN {joined['matchpoint']})")

    def compare(self, vlsn: int) -> bool:
        digests, since = {}, len(self.log)
        for name in self.names:
            self.procs[name].send(f"digest {vlsn}")
        for name in self.names:
            found = self.expect(name, "digest", f"reaching VLSN {vlsn}", since)
            digests[name] = (f"{found['records']} records, crc {found['crc']}, VLSNs {found['vlsns']}, "
                             f"last_txn_end {found['last_txn_end']}")
            self.say(f"[demo] {name}: {digests[name]}")
        if len(set(digests.values())) == 1:
            self.say(f"[demo] all {len(self.names)} nodes agree: {digests[self.names[0]]}")
            return True
        self.say(f"[demo] the nodes differ: {len(set(digests.values()))} different states")
        return False

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.stop(timeout=QUIT_GRACE_S)


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM: stop the nodes like Ctrl-C does


def run_demo(args) -> int:
    previous = signal.signal(signal.SIGTERM, _terminated)
    created = None
    try:
        if args.dir is None:
            created = tempfile.mkdtemp(prefix="minidb-group-")
            return _play(created, args)
        with owned_output(args.dir, OWNER) as directory:
            return _play(directory, args)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)


def _play(directory: str, args) -> int:
    demo = GroupDemo(directory, args.nodes, args.records, args.timeout, say=lambda line: print(line, flush=True),
                     verbose=args.verbose)
    try:
        agreed = demo.run()
    except DemoFailed as e:
        print(f"minidb group demo: failed: {e}", file=sys.stderr)
        return 1
    finally:
        demo.stop()
    return 0 if agreed else 1


# -- one node ------------------------------------------------------------------------------------------------
def add_node_arguments(p) -> None:
    p.add_argument("--dir", type=path_arg, required=True, help="the node's environment directory")
    p.add_argument("--group", required=True, help="the group's name")
    p.add_argument("--name", required=True, help="this node's name")
    p.add_argument("--port", type=int_at_least(0, 65535), default=0, help="election port (default 0: any free one)")
    p.add_argument("--stream-port", type=int_at_least(0, 65535), default=0,
                   help="stream port, where replicas connect (default 0: any free one)")
    p.add_argument("--timeout", type=positive_int, default=60, help="seconds a command may wait (default 60)")
    p.add_argument("--trace", action="store_true", help="also print the elections' trace (trace lines)")


def run_node(args) -> int:
    def emit(line: str) -> None:
        print(line, flush=True)

    # every directory and file the node creates, as a line the demo reports again (its output's marker lists it)
    with created.watching(lambda path: emit(f"{CREATED} {args.name} {path}")):
        return _serve_node(args, emit)


def _serve_node(args, emit) -> int:
    from minidb.replication.group.node import GroupNode

    try:
        node = GroupNode(args.dir, args.group, args.name, args.port, args.stream_port, wait_s=args.timeout, emit=emit,
                         trace=args.trace)
    except MinidbError as e:
        emit(f"error {args.name} {e}")
        return 2 if isinstance(e, UserError) else 1
    try:
        node.serve(sys.stdin.fileno())
    except KeyboardInterrupt:
        return 130
    except MinidbError as e:
        emit(f"error {args.name} {e}")
        return 1
    finally:
        node.close()
    return 0


def register(commands) -> None:
    p = commands.add_parser("group", help="a replication group of processes over TCP: minidb group demo")
    kinds = p.add_subparsers(dest="group_command", metavar="KIND", parser_class=type(p))
    kinds.required = True
    demo = kinds.add_parser("demo", help="start a group, kill its master, rejoin it, compare every node's state")
    demo.add_argument("--nodes", type=int_at_least(3, 9, " (processes on one machine)"), default=3,
                      help="how many nodes (3 to 9, default 3: a majority survives the master's death)")
    demo.add_argument("--records", type=int_at_least(1, 1000), default=5,
                      help="records each master writes (default 5)")
    demo.add_argument("--dir", type=path_arg, default=None,
                      help="keep the nodes' environments here (default: a temporary directory, deleted)")
    demo.add_argument("--timeout", type=positive_int, default=60, help="seconds each step may take (default 60)")
    demo.add_argument("--verbose", action="store_true", help="also print every line the nodes write")
    demo.set_defaults(run=run_demo)
    node = kinds.add_parser("node", help="one node: prints its ports, then reads control lines on stdin")
    add_node_arguments(node)
    node.set_defaults(run=run_node)


def node_main(argv: list[str] | None = None) -> int:
    """``python -m minidb.cli.group node ...``: the node alone, without the other subcommands."""
    from minidb.cli import Parser

    parser = Parser(prog="minidb group")
    kinds = parser.add_subparsers(dest="group_command", metavar="KIND", parser_class=Parser)
    kinds.required = True
    add_node_arguments(kinds.add_parser("node"))
    return run_node(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(node_main())
