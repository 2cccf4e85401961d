"""Agreement scenarios of the shared log: appending (``LogManager``) and checking entries (``check_entry``).

``appends_crash_reopen`` drives the log manager the way the engines do:
seeded appends of ordinary, provisional and replicated entries (VLSNs given
or allocated), entries bigger than a file, group-commit syncs, flushes,
forced file switches, an entry made invisible, fetches by LSN; then a crash
that keeps a random part of what was not synced, and the reopening (the end
found, a torn tail cut), the last file as opening checked it, scans forward,
backward and printlog-style, a last entry and a reopening read-only. The
twin of ``LogManager`` must write the same bytes with the same writes and
fsyncs; the twin of ``check_entry`` must find the same entries.

``damaged_files`` builds one log file of every kind of entry (erased and
invisible ones too), damages copies of it (flipped bits, a cut tail, zeros)
and asks both ``check_entry`` (at every entry, with a right, a missing and a
wrong expected ``prev``) and the tolerant scan for their answers, word for
word.
"""

from __future__ import annotations

import random
from typing import Any

from minidb.errors import LogVersionError
from minidb.io import CrashMode, SimDisk
from minidb.log import FILE_HEADER, TRACE, LogManager, Provisional, format_entry
from minidb.log.header import CHECK_ENTRY, ERASED_TYPE, INVISIBLE, REPLICATED, VLSN_PRESENT, erased_item, pack_entry
from minidb.log.logdef import LOG_VERSION
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.scan import FILE_SCANNER, scan_tolerant
from minidb.logstore.logdef import LOGSTORE_TYPES

from tests.agreement.scenarios import disk_state, scenario

LN, COMMIT = LOGSTORE_TYPES.LN, LOGSTORE_TYPES.Commit


def _clock() -> float:
    return 1_700_000_000.0


def _open(disk: SimDisk, file_max: int, buffer_size: int, **options: Any) -> LogManager:
    return LogManager(disk, file_max=file_max, buffer_size=buffer_size, clock=_clock, commit_delay=0, **options)


def _entries(entries: Any) -> list[tuple]:
    return [(tuple(e.lsn), tuple(e.header), e.item, format_entry(e)) for e in entries]


def _workload(log: LogManager, rng: random.Random, ops: int) -> list[Any]:
    """Seeded appends, syncs, flushes and file switches; what each step answered."""
    answers: list[Any] = []
    heard: list[tuple] = []
    log.add_listener(lambda lsn, entry_type, vlsn: heard.append((tuple(lsn), entry_type.name, vlsn)))
    heard_as_logged: list[tuple] = []  # an entry listener hears every entry, plain ones too, as logged
    log.add_entry_listener(lambda entry: heard_as_logged.extend(_entries([entry])))
    vlsns = iter(range(100, 10_000))
    log.vlsn_allocator = lambda: next(vlsns)
    replicated = []
    for i in range(ops):
        roll = rng.random()
        if roll < 0.35:
            size = rng.choice([0, 3, 40, 120]) if rng.random() < 0.93 else log.file_max + 30
            lsn = log.append(TRACE, {"message": f"{i}:" + "m" * size})
        elif roll < 0.55:
            provisional = rng.choice(list(Provisional))
            values = {"db_id": rng.randrange(5), "key": rng.randbytes(rng.randrange(12)),
                      "data": rng.randbytes(rng.randrange(60)), "prev_lsn": NULL_LSN}
            lsn = log.append(LN, values, provisional=provisional)
        elif roll < 0.7:
            given = 50_000 + i if rng.random() < 0.3 else None
            lsn = log.append(TRACE, {"message": f"replicated {i}"}, replicated=True, vlsn=given)
            replicated.append(lsn)
        elif roll < 0.82:
            lsn = log.append(COMMIT, {"txn_id": i, "txn_prev_lsn": NULL_LSN, "time_ms": i})
            log.sync(lsn)
        elif roll < 0.9:
            log.flush()
            lsn = None
        elif roll < 0.95:
            lsn = log.force_flip()
        else:
            lsn = log.set_invisible(replicated[-1:])
        answers.append(lsn if lsn is None or isinstance(lsn, int) else tuple(lsn))
        if lsn is not None and not isinstance(lsn, int) and rng.random() < 0.2:
            answers.append(format_entry(log.read(lsn)))
    answers += [heard, heard_as_logged]
    return answers


@scenario("log.manager.LogManager", "log.header.check_entry", "log.reader.LogReader")
def appends_crash_reopen(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    file_max, buffer_size = rng.choice([400, 700, 1500]), rng.choice([1, 64, 300, 4096])
    disk = SimDisk(f"scn-log-{seed}")
    log = _open(disk, file_max, buffer_size)
    before = _workload(log, rng, 90)
    log.sync()
    before += _workload(log, rng, 25)  # not synced: a crash may keep some of it, or tear it
    result: dict[str, Any] = {"before": before, "stats": log.stats.as_dict(), "end": repr(log.end())}
    disk.crash(CrashMode.random(seed) if seed % 2 else CrashMode.torn(seed=seed))

    log = _open(disk, file_max, buffer_size, keep_opening_scan=True)
    end = log.end()
    checked = log.take_opening_scan()
    result["reopened"] = (str(log.tail_cut), repr(end), None if checked is None else checked.entries)
    result["forward"] = _entries(log.scan(checked=checked))
    if checked is not None and checked.entries:  # as recovery reads: from an entry of the checked file on
        middle = LSN(checked.number, checked.entries[len(checked.entries) // 2][0])
        result["forward_from_the_middle"] = _entries(log.scan(middle, checked=checked))
    result["backward"] = _entries(log.scan_backward())
    result["last_commit"] = _entries(e for e in [log.reader.last_of_type(COMMIT.code)] if e is not None)
    result["after"] = _workload(log, rng, 10)
    log.close()
    readonly = _open(disk, file_max, buffer_size, readonly=True)
    result["readonly"] = _entries(readonly.scan())
    readonly.close()
    result["disk"] = disk_state(disk)
    return result


def _sample_file(rng: random.Random) -> bytes:
    """One log file of entries of every kind a check must tell apart, back to back."""
    header = FILE_HEADER.encode({"file_number": 1, "created_ms": 0, "last_entry_lsn": NULL_LSN,
                                 "log_version": LOG_VERSION, "env_id": 7})
    out = [pack_entry(FILE_HEADER.code, 0, 0, header)]
    prev, pos = 0, len(out[0])
    kinds = [(TRACE.code, 0, None), (TRACE.code, Provisional.YES.value, None),
             (LN.code, Provisional.BEFORE_CKPT_END.value, None), (0x41, REPLICATED | VLSN_PRESENT, 1234),
             (0x41, REPLICATED | VLSN_PRESENT | INVISIBLE, 99), (ERASED_TYPE, 0, None)]
    for i in range(40):
        code, flags, vlsn = kinds[i % len(kinds)]
        item = rng.randbytes(rng.randrange(0, 40))
        if code == ERASED_TYPE:
            item = erased_item(0x41, len(item) + 1)
        entry = pack_entry(code, flags, prev, item, vlsn)
        out.append(entry)
        prev, pos = pos, pos + len(entry)
    return b"".join(out)


@scenario("log.header.check_entry")
def damaged_files(seed: int) -> list[Any]:
    rng = random.Random(seed)
    clean = _sample_file(rng)
    offsets, pos, prev = [], 0, 0
    while pos < len(clean):
        header, problem = CHECK_ENTRY.call(clean, pos, prev)
        assert problem is None, problem
        offsets.append((pos, prev))
        prev, pos = pos, pos + header.entry_size
    answers: list[Any] = []
    for _trial in range(60):
        buf = bytearray(clean)
        for _ in range(rng.randrange(0, 3)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        if rng.random() < 0.2:  # a run of zeros
            start, length = rng.randrange(len(buf)), rng.randrange(40)
            buf[start : start + length] = bytes(len(buf[start : start + length]))
        data = bytes(buf[: rng.choice([len(buf), rng.randrange(len(buf))])])
        for pos, prev in offsets:
            for expected in (prev, None, prev + 1):
                answers.append(CHECK_ENTRY.call(data, pos, expected, rng.random() < 0.9))
        answers.append([(s.offset, s.header, s.problem, s.verdict) for s in scan_tolerant(data, 1)])
    return answers


@scenario("log.scan.FileScanner")
def damaged_scans(seed: int) -> list[Any]:
    """Whole-file scans (from the start and from an entry inside) of damaged and intact files: what each
    finds and where and why it stops."""
    rng = random.Random(seed)
    clean = _sample_file(rng)
    offsets = [pos for pos, _ in FILE_SCANNER.call(clean, 1)]
    answers: list[Any] = []
    for trial in range(60):
        buf = bytearray(clean)
        for _ in range(rng.randrange(0, 3) if trial else 0):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        if trial and rng.random() < 0.2:  # a run of zeros
            start, length = rng.randrange(len(buf)), rng.randrange(40)
            buf[start : start + length] = bytes(len(buf[start : start + length]))
        data = bytes(buf[: rng.choice([len(buf), rng.randrange(len(buf))])])
        start = rng.choice(offsets)
        for scanner in (FILE_SCANNER.call(data, 1), FILE_SCANNER.call(data, 1, start=start),
                        FILE_SCANNER.call(data, 1, start=start, prev=rng.choice([None, start - 1])),
                        FILE_SCANNER.call(data, 1, verify=False)):
            try:
                found = list(scanner.run_keeping().entries or [])
            except LogVersionError as e:
                found = [str(e)]
            answers.append((found, scanner.end, scanner.last_offset, scanner.problem, scanner.bad_offset,
                            scanner.bad_header, scanner.count, scanner.file_header))
    return answers
