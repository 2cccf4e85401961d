"""A simulated disk that records every write and fsync and can crash.

The simulated disk keeps, for each file, two images:

- the *volatile* image: what reads see, every write applied (the page cache);
- the *durable* image: what survives any crash, as of the file's last fsync.

Between the two lies the list of *pending* operations (writes and truncates
not yet covered by an fsync), in the order they were issued. ``crash(mode)``
throws the volatile images away and rebuilds every file from its durable
image plus the pending operations that the crash mode keeps:

==============================  ================================================
``CrashMode.nothing()``          no pending operation survives
``CrashMode.everything()``       all of them survive (the page cache was written)
``CrashMode.prefix(n)``          the first ``n`` survive, in issue order
``CrashMode.prefix(n, torn=k)``  ... and the first ``k`` bytes of operation ``n``
``CrashMode.torn(k)``            all but the last, and ``k`` bytes of the last
                                 write (seeded when ``k`` is None)
``CrashMode.random(seed)``       a seeded random subset, each kept with p = 1/2
==============================  ================================================

A dropped write that lies before a kept one leaves zeros (or older durable
bytes) behind: exactly the holes a real disk can leave in unsynced data.

Every operation is recorded as an :class:`Event` in ``disk.events`` (the
*write record*); tests use it to check ordering rules such as write-ahead
logging. ``crash_image(i, mode)`` builds a new disk as if the crash had
happened right after event ``i``, so a crash sweep runs a workload once and
then examines every crash point; :func:`crash_points` enumerates them.
``crash_image_after(events, mode)`` does the same for a history recorded on
another disk that began from this one's state (a recovery run on a copy).
Crash images share (copy on write) every file their crash left alone, so an
image costs the size of the files it changes, not of the disk; equal images
have equal :meth:`SimDisk.content_digest`, so a sweep recovers each once.

Creating, deleting and renaming files are durable at once (the contract of
:mod:`minidb.io.base`); files are inodes, so a rename keeps pending writes.

Threads: every operation holds the disk's lock, so the record is the order
in which the operations happened, and a crash falls between two of them.
``on_crash(callback)`` registers what to tell of a crash (called after the
lock is let go, in the thread that crashed the disk); a thread that called
``bind_thread()`` is refused every operation after a crash
(:class:`~minidb.errors.DiskError`: "this thread worked for the disk before
its crash"), so an engine's background thread stopped by the crash writes
nothing into what the crash left, nor into the next life of the disk.

Faults: ``schedule_crash(after_ops=n)`` crashes during the n-th next write,
truncate or fsync (after performing it) and raises
:class:`~minidb.errors.SimulatedCrash`; ``fail_fsyncs(n)`` makes the next
``n`` fsyncs fail without making anything durable; ``capacity`` makes a write
that would grow the disk past it fail with
:class:`~minidb.errors.DiskFullError`, writing nothing; ``free_space()`` is
the capacity less the files' present sizes (None without a capacity).
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from minidb.errors import DiskError, DiskFullError, SimulatedCrash
from minidb.io.base import Disk, File
from minidb.stats import Stats

DATA_OPS = ("write", "truncate")
CRASH_POINT_KINDS = ("write", "truncate", "fsync")


@dataclass(frozen=True, repr=False)
class Event:
    """One recorded operation of the simulated disk."""

    index: int
    kind: str  # create, write, truncate, fsync, delete, rename, crash
    name: str
    offset: int = 0
    data: bytes = b""
    size: int = 0  # the new size, for truncate
    new_name: str = ""  # for rename
    mode: "CrashMode | None" = None  # for crash

    def __repr__(self) -> str:
        return f"Event({self})"

    def __str__(self) -> str:
        if self.kind == "write":
            return f"#{self.index} write {self.name} @{self.offset} +{len(self.data)}"
        if self.kind == "truncate":
            return f"#{self.index} truncate {self.name} to {self.size}"
        if self.kind == "rename":
            return f"#{self.index} rename {self.name} -> {self.new_name}"
        if self.kind == "crash":
            return f"#{self.index} crash keeping {self.mode}"
        return f"#{self.index} {self.kind} {self.name}"


@dataclass(frozen=True)
class CrashMode:
    """Which unsynced operations a crash keeps (see the module table)."""

    keep: str  # nothing | everything | prefix | torn | random
    count: int = 0
    torn_bytes: int | None = None
    seed: int = 0

    @classmethod
    def nothing(cls) -> "CrashMode":
        return cls("nothing")

    @classmethod
    def everything(cls) -> "CrashMode":
        return cls("everything")

    @classmethod
    def prefix(cls, count: int, torn: int | None = None) -> "CrashMode":
        return cls("prefix", count=count, torn_bytes=torn)

    @classmethod
    def torn(cls, torn_bytes: int | None = None, seed: int = 0) -> "CrashMode":
        return cls("torn", torn_bytes=torn_bytes, seed=seed)

    @classmethod
    def random(cls, seed: int) -> "CrashMode":
        return cls("random", seed=seed)

    def __str__(self) -> str:
        if self.keep == "prefix":
            torn = f", torn={self.torn_bytes}" if self.torn_bytes is not None else ""
            return f"prefix({self.count}{torn})"
        if self.keep == "torn":
            return f"torn({self.torn_bytes if self.torn_bytes is not None else f'seed={self.seed}'})"
        if self.keep == "random":
            return f"random(seed={self.seed})"
        return self.keep


KEEP_NOTHING = CrashMode.nothing()  # the default crash; a CrashMode is frozen, so one value serves every call


@dataclass
class _Op:
    """A pending (unsynced) write or truncate of one inode."""

    ino: int
    kind: str
    offset: int = 0
    data: bytes = b""
    size: int = 0

    def apply(self, image: bytearray, torn_bytes: int | None = None) -> None:
        if self.kind == "truncate":
            _truncate(image, self.size)
            return
        data = self.data if torn_bytes is None else self.data[:torn_bytes]
        end = self.offset + len(data)
        if end > len(image):
            image.extend(bytes(end - len(image)))
        image[self.offset:end] = data


def _truncate(image: bytearray, size: int) -> None:
    if size < len(image):
        del image[size:]
    else:
        image.extend(bytes(size - len(image)))


class _Snapshot:
    """Immutable bytes of one file, shared by every disk that holds them unchanged, with their digest."""

    __slots__ = ("data", "_digest")

    def __init__(self, data: bytes):
        self.data = data
        self._digest: bytes | None = None

    def digest(self) -> bytes:
        if self._digest is None:
            self._digest = hashlib.sha256(self.data).digest()
        return self._digest


class _Inode:
    """One file: ``data`` is what reads see, ``durable`` what survives a crash.

    Either may be immutable ``bytes`` shared with other disks (the crash images
    of one history share every file the crash left alone); it is copied into a
    private ``bytearray`` at its first change (copy on write). ``snapshot`` is
    set while ``data`` is exactly a shared snapshot's bytes, so its digest is
    computed once for all the images that share it.
    """

    __slots__ = ("ino", "data", "durable", "snapshot", "_frozen")

    def __init__(self, ino: int, snapshot: _Snapshot | None = None):
        self.ino = ino
        self.data: bytes | bytearray = snapshot.data if snapshot else bytearray()
        self.durable: bytes | bytearray = snapshot.data if snapshot else bytearray()
        self.snapshot = snapshot
        self._frozen = snapshot  # the durable bytes as a snapshot, made at most once per change

    def mutable_data(self) -> bytearray:
        if not isinstance(self.data, bytearray):
            self.data = bytearray(self.data)
        self.snapshot = None
        return self.data

    def mutable_durable(self) -> bytearray:
        if not isinstance(self.durable, bytearray):
            self.durable = bytearray(self.durable)
        self._frozen = None
        return self.durable

    def frozen_durable(self) -> tuple[_Snapshot, int]:
        """The durable bytes as a shared snapshot, and how many bytes making it copied."""
        if self._frozen is not None:
            return self._frozen, 0
        copied = len(self.durable) if isinstance(self.durable, bytearray) else 0
        self._frozen = _Snapshot(bytes(self.durable))
        return self._frozen, copied

    def share(self) -> "_Inode":
        """A twin holding the same bytes; each copies them at its own first change."""
        self.data, self.durable = bytes(self.data), bytes(self.durable)
        twin = _Inode(self.ino)
        twin.data, twin.durable, twin.snapshot, twin._frozen = self.data, self.durable, self.snapshot, self._frozen
        return twin

    def digest(self) -> bytes:
        return self.snapshot.digest() if self.snapshot is not None else hashlib.sha256(self.data).digest()


class _State:
    """Files, their two images and the pending operations: what a crash acts on."""

    def __init__(self) -> None:
        self.names: dict[str, _Inode] = {}
        self.inodes: dict[int, _Inode] = {}  # the live files by inode number
        self.pending: list[_Op] = []
        self.next_ino = 1

    def _add(self, name: str, inode: _Inode) -> _Inode:
        self.names[name] = inode
        self.inodes[inode.ino] = inode
        return inode

    def create(self, name: str) -> _Inode:
        inode = self._add(name, _Inode(self.next_ino))
        self.next_ino += 1
        return inode

    def do(self, op: _Op) -> None:
        inode = self.inodes.get(op.ino)
        if inode is not None:  # a deleted file's operations no longer matter
            op.apply(inode.mutable_data())
        self.pending.append(op)

    def fsync(self, ino: int) -> None:
        mine = [op for op in self.pending if op.ino == ino]
        if not mine:
            return
        inode = self.inodes.get(ino)
        if inode is not None:
            durable = inode.mutable_durable()
            for op in mine:
                op.apply(durable)
        self.pending = [op for op in self.pending if op.ino != ino]

    def delete(self, name: str) -> None:
        ino = self.names.pop(name).ino
        del self.inodes[ino]
        self.pending = [op for op in self.pending if op.ino != ino]

    def rename(self, old: str, new: str) -> None:
        self.names[new] = self.names.pop(old)
        self.inodes = {inode.ino: inode for inode in self.names.values()}

    def crashed(self, mode: CrashMode) -> tuple["_State", int]:
        """A new state: this one after a crash in ``mode``, and how many bytes building it copied.

        This state is left as it is. Files the crash keeps no pending operation
        of are shared, not copied; so the cost of a crash image is the size of
        the files with kept operations, whatever the length of the history.
        """
        touched: dict[int, list[tuple[_Op, int | None]]] = {}
        for op, torn in _choose(self.pending, mode):
            if op.ino in self.inodes:
                touched.setdefault(op.ino, []).append((op, torn))
        twin = _State()
        twin.next_ino = self.next_ino
        copied = 0
        for name, inode in self.names.items():
            snapshot, frozen_copy = inode.frozen_durable()
            copied += frozen_copy
            ops = touched.get(inode.ino)
            if ops:
                image = bytearray(snapshot.data)
                for op, torn in ops:
                    op.apply(image, torn)
                snapshot = _Snapshot(bytes(image))
                copied += 2 * len(image)
            twin._add(name, _Inode(inode.ino, snapshot))
        return twin, copied

    def crash(self, mode: CrashMode) -> None:
        twin, _ = self.crashed(mode)
        self.names, self.inodes, self.pending = twin.names, twin.inodes, []

    def copy(self) -> "_State":
        twin = _State()
        twin.next_ino = self.next_ino
        for name, inode in self.names.items():
            twin._add(name, inode.share())
        twin.pending = list(self.pending)
        return twin

    def total_size(self) -> int:
        return sum(len(i.data) for i in self.names.values())


def _choose(pending: list[_Op], mode: CrashMode) -> list[tuple[_Op, int | None]]:
    """The pending operations a crash keeps, each with its torn length (None = whole)."""
    if mode.keep == "nothing" or not pending:
        return []
    if mode.keep == "everything":
        return [(op, None) for op in pending]
    if mode.keep == "random":
        rng = random.Random(mode.seed)
        return [(op, None) for op in pending if rng.random() < 0.5]
    if mode.keep == "torn":
        count, torn = len(pending) - 1, mode.torn_bytes
        last = pending[-1]
        if torn is None and last.kind == "write" and len(last.data) > 1:
            torn = random.Random(mode.seed).randrange(1, len(last.data))
    elif mode.keep == "prefix":
        count, torn = min(mode.count, len(pending)), mode.torn_bytes
    else:
        raise ValueError(f"unknown crash mode {mode.keep!r}")
    kept: list[tuple[_Op, int | None]] = [(op, None) for op in pending[:count]]
    if torn is not None and count < len(pending) and pending[count].kind == "write":
        kept.append((pending[count], torn))
    return kept


class SimFile(File):
    def __init__(self, disk: "SimDisk", name: str, inode: _Inode):
        self.disk = disk
        self.name = name
        self._inode = inode
        self._generation = disk.generation
        self._closed = False

    def _live(self) -> _Inode:
        if self._closed:
            raise DiskError(f"{self.disk.where(self.name)}: file is closed")
        if self._generation != self.disk.generation:
            raise DiskError(f"{self.disk.where(self.name)}: handle was lost in a crash; reopen the file")
        return self._inode

    def read(self, offset: int, size: int) -> bytes:
        with self.disk.lock:
            self.disk.check_thread(self.name)
            data = self._live().data
            chunk = bytes(data[offset:offset + size])
        self.disk.stats.add("reads")
        self.disk.stats.add("bytesRead", len(chunk))
        return chunk

    def write(self, offset: int, data: bytes) -> None:
        self._write(lambda inode: offset, data)

    def append(self, data: bytes) -> int:
        return self._write(lambda inode: len(inode.data), data)

    def _write(self, at: Callable[[_Inode], int], data: bytes) -> int:
        """Write ``data`` at the offset ``at`` finds, in one operation under the disk's lock."""
        with self.disk.lock:
            self.disk.check_thread(self.name)
            inode = self._live()
            offset = at(inode)
            self.disk.check_space(len(inode.data), offset + len(data))
            crash = self.disk.perform(self.name, _Op(inode.ino, "write", offset=offset, data=bytes(data)))
        self.disk.crashed_by(crash)
        return offset

    def fsync(self) -> None:
        with self.disk.lock:
            self.disk.check_thread(self.name)
            crash = self.disk.fsync(self.name, self._live())
        self.disk.crashed_by(crash)

    def truncate(self, size: int) -> None:
        with self.disk.lock:
            self.disk.check_thread(self.name)
            inode = self._live()
            self.disk.check_space(len(inode.data), size)
            crash = self.disk.perform(self.name, _Op(inode.ino, "truncate", size=size))
        self.disk.crashed_by(crash)

    def allocate(self, size: int) -> None:
        if size > len(self._live().data):
            self.truncate(size)  # the simulated disk counts a file's bytes, zeros too

    def size(self) -> int:
        with self.disk.lock:
            return len(self._live().data)

    def close(self) -> None:
        self._closed = True


class SimDisk(Disk):
    """An in-memory disk that can crash; see the module documentation."""

    def __init__(self, name: str = "sim", capacity: int | None = None):
        self.name = name
        self.capacity = capacity
        self.events: list[Event] = []
        self.generation = 0
        self.stats = Stats("disk", ["writes", "bytesWritten", "fsyncs", "truncates", "reads", "bytesRead", "crashes"])
        self._state = _State()
        self._crash_countdown: int | None = None
        self._scheduled_mode = CrashMode.nothing()
        self._failing_fsyncs = 0
        self._replayed: tuple[int, _State] | None = None  # crash_image's history replayed up to an event
        self.lock = threading.RLock()  # every operation holds it (see the module documentation)
        self._crash_listeners: list[Callable[[], None]] = []
        self._bound = threading.local()  # .generation: the life a bound thread works for

    # -- the Disk interface ------------------------------------------------
    def where(self, name: str = "") -> str:
        return f"sim:{self.name}/{name}" if name else f"sim:{self.name}"

    def open(self, name: str, create: bool = False) -> File:
        self.check_name(name)
        with self.lock:
            self.check_thread(name)
            inode = self._state.names.get(name)
            if inode is None:
                if not create:
                    raise DiskError(f"{self.where(name)}: no such file")
                inode = self._state.create(name)
                self._record("create", name)
            return SimFile(self, name, inode)

    def exists(self, name: str) -> bool:
        return name in self._state.names

    def list(self) -> list[str]:
        return sorted(self._state.names)

    def delete(self, name: str) -> None:
        with self.lock:
            self.check_thread(name)
            if name not in self._state.names:
                raise DiskError(f"{self.where(name)}: no such file")
            self._state.delete(name)
            self._record("delete", name)

    def rename(self, old: str, new: str) -> None:
        self.check_name(new)
        with self.lock:
            self.check_thread(old)
            if old not in self._state.names:
                raise DiskError(f"{self.where(old)}: no such file")
            self._state.rename(old, new)
            self._record("rename", old, new_name=new)

    def free_space(self) -> int | None:
        return None if self.capacity is None else max(0, self.capacity - self._state.total_size())

    def size(self, name: str) -> int:
        if name not in self._state.names:
            raise DiskError(f"{self.where(name)}: no such file")
        return len(self._state.names[name].data)

    # -- threads ----------------------------------------------------------
    def on_crash(self, callback: Callable[[], None]) -> None:
        with self.lock:
            self._crash_listeners.append(callback)

    def bind_thread(self) -> None:
        self._bound.generation = self.generation

    def check_thread(self, name: str) -> None:
        """Refuse a thread bound to an earlier life of the disk (caller holds the lock)."""
        bound = getattr(self._bound, "generation", None)
        if bound is not None and bound != self.generation:
            raise DiskError(f"{self.where(name)}: this thread worked for the disk before its crash; "
                            "it may touch nothing now")

    def crashed_by(self, message: str | None) -> None:
        """After an operation, with the lock let go: if it crashed the disk, tell the listeners and raise."""
        if message is not None:
            self._tell_crash()
            raise SimulatedCrash(message)

    def _tell_crash(self) -> None:
        with self.lock:
            listeners = list(self._crash_listeners)
        for callback in listeners:
            callback()

    # -- recording and faults ---------------------------------------------
    def _record(self, kind: str, name: str, **kw: object) -> Event:
        event = Event(len(self.events), kind, name, **kw)  # type: ignore[arg-type]
        self.events.append(event)
        return event

    def check_space(self, current: int, new_size: int) -> None:
        if self.capacity is None or new_size <= current:
            return
        if self._state.total_size() + (new_size - current) > self.capacity:
            raise DiskFullError(f"{self.where()}: disk full (capacity {self.capacity} bytes)")

    def perform(self, name: str, op: _Op) -> str | None:
        """Do a write or truncate (caller holds the lock); a crash's message if it crashed the disk."""
        self._state.do(op)
        if op.kind == "write":
            self.stats.add("writes")
            self.stats.add("bytesWritten", len(op.data))
            self._record("write", name, offset=op.offset, data=op.data)
        else:
            self.stats.add("truncates")
            self._record("truncate", name, size=op.size)
        return self._count_down()

    def fsync(self, name: str, inode: _Inode) -> str | None:
        if self._failing_fsyncs:
            self._failing_fsyncs -= 1
            raise DiskError(f"{self.where(name)}: fsync failed (injected fault)")
        self._state.fsync(inode.ino)
        self.stats.add("fsyncs")
        self._record("fsync", name)
        return self._count_down()

    def _count_down(self) -> str | None:
        if self._crash_countdown is None:
            return None
        self._crash_countdown -= 1
        if self._crash_countdown == 0:
            last = self.events[-1]
            self._crash_countdown = None
            self._crash(self._scheduled_mode)
            return f"{self.where()}: simulated crash after event {last}"
        return None

    def schedule_crash(self, after_ops: int, mode: CrashMode = KEEP_NOTHING) -> None:
        """Crash right after the ``after_ops``-th next write, truncate or fsync."""
        if after_ops < 1:
            raise ValueError("after_ops must be at least 1")
        self._crash_countdown = after_ops
        self._scheduled_mode = mode

    def cancel_crash(self) -> None:
        """Forget a crash scheduled by :meth:`schedule_crash` that has not happened yet."""
        self._crash_countdown = None

    def fail_fsyncs(self, count: int = 1) -> None:
        """Make the next ``count`` fsyncs fail (nothing becomes durable)."""
        self._failing_fsyncs = count

    # -- crashing -----------------------------------------------------------
    def crash(self, mode: CrashMode = KEEP_NOTHING) -> None:
        """Lose the volatile state as ``mode`` says; open handles become invalid; the listeners are told."""
        self._crash(mode)
        self._tell_crash()

    def _crash(self, mode: CrashMode) -> None:
        with self.lock:
            self._state.crash(mode)
            self.generation += 1
            self.stats.add("crashes")
            self._record("crash", "", mode=mode)

    def pending_ops(self) -> int:
        """How many writes and truncates are not yet durable."""
        return len(self._state.pending)

    def durable_bytes(self, name: str) -> bytes:
        """What of ``name`` would survive a crash right now (for teaching)."""
        return bytes(self._state.names[name].durable)

    def clone(self, name: str | None = None) -> "SimDisk":
        """An independent copy of the current state, pending operations included."""
        twin = SimDisk(name or self.name, self.capacity)
        twin._state = self._state.copy()
        return twin

    def crash_image(self, after_event: int, mode: CrashMode = KEEP_NOTHING) -> "SimDisk":
        """A new disk: this disk's history replayed up to event ``after_event``, then crashed.

        The replayed history is kept, so images asked for in ascending order
        replay each event once (the record only grows).
        """
        if self._replayed is None or self._replayed[0] > after_event:
            self._replayed = (-1, _State())
        done, state = self._replayed
        for event in self.events[done + 1: after_event + 1]:
            _replay_one(state, event)
        self._replayed = (max(done, min(after_event, len(self.events) - 1)), state)
        return self._image(state.crashed(mode)[0])

    def crash_image_after(self, events: Sequence[Event], mode: CrashMode = KEEP_NOTHING) -> "SimDisk":
        """A new disk: this disk's present state, then ``events`` (a history recorded on a copy of it, a
        recovery run there, say) replayed without running it again, then crashed; this disk stays as it is."""
        state = self._state.copy()
        for event in events:
            _replay_one(state, event)
        return self._image(state.crashed(mode)[0])

    def _image(self, state: _State) -> "SimDisk":
        twin = SimDisk(self.name, self.capacity)
        twin._state = state
        return twin

    def content_digest(self) -> str:
        """A digest of every file's name and bytes: disks with equal digests hold the same files.

        Crash images share the digests of the files they share, so this costs
        the size of the files that differ, not of the whole disk.
        """
        digest = hashlib.sha256()
        for name in sorted(self._state.names):
            inode = self._state.names[name]
            digest.update(name.encode() + b"\0" + len(inode.data).to_bytes(8, "little") + inode.digest())
        return digest.hexdigest()

    def __repr__(self) -> str:
        return f"SimDisk({self.name!r}, files={len(self._state.names)}, events={len(self.events)})"


def _replay_one(state: _State, event: Event) -> None:
    kind = event.kind
    if kind == "create":
        state.create(event.name)
    elif kind in DATA_OPS:
        ino = state.names[event.name].ino
        state.do(_Op(ino, kind, offset=event.offset, data=event.data, size=event.size))
    elif kind == "fsync":
        state.fsync(state.names[event.name].ino)
    elif kind == "delete":
        state.delete(event.name)
    elif kind == "rename":
        state.rename(event.name, event.new_name)
    elif kind == "crash":
        state.crash(event.mode or CrashMode.nothing())


@dataclass(frozen=True)
class CrashPoint:
    """A crashed copy of a disk: after which event, with which mode, and the bytes building it copied."""

    event: Event
    mode: CrashMode
    disk: SimDisk
    copied: int = 0

    def __str__(self) -> str:
        return f"crash after {self.event} keeping {self.mode}"


def crash_points(
    disk: SimDisk,
    start: int = 0,
    torn_variants: int = 2,
    random_variants: int = 0,
    seed: int = 0,
) -> Iterator[CrashPoint]:
    """Every crash point of ``disk``'s history from event ``start`` on.

    After each write, truncate and fsync event, yields the crash that keeps
    nothing unsynced and the one that keeps everything; after each write, also
    ``torn_variants`` torn versions of that write (seeded lengths) and
    ``random_variants`` random subsets of the unsynced operations.

    The history is replayed once, event by event, and each image is built
    from that running state: it shares every file its crash left alone and
    copies only the files that keep pending operations (``CrashPoint.copied``).
    """
    state = _State()
    rng = random.Random(seed)
    for event in disk.events:
        _replay_one(state, event)
        if event.index < start or event.kind not in CRASH_POINT_KINDS:
            continue
        modes = [CrashMode.nothing(), CrashMode.everything()]
        if event.kind == "write" and len(event.data) > 1:
            modes += [CrashMode.torn(seed=rng.randrange(1 << 30)) for _ in range(torn_variants)]
        if event.kind == "write":
            modes += [CrashMode.random(rng.randrange(1 << 30)) for _ in range(random_variants)]
        for mode in modes:
            crashed, copied = state.crashed(mode)
            yield CrashPoint(event, mode, disk._image(crashed), copied)
