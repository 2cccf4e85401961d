"""Agreement scenarios of entry-type codecs (``codec_of``): an item's bytes and its values back.

``every_type_encoded_and_decoded`` gives seeded values to every registered
entry type (every engine's and replication's, lists and LSNs included) and
asks each type to encode them and decode the item again; it also asks for
what must be refused alike: a field dropped, a field added, a value of the
wrong kind, an item cut, lengthened or with a byte overwritten. Every answer
is compared, the bytes and values, or the error's words.

``logged_and_read_back`` appends entries of every type to a log on a
simulated disk (so the codec encodes through the log manager's append),
crashes it, reopens it and decodes every entry it reads back (``LogEntry``:
its transaction, its values, and that it equals the entry read again by its
LSN), then reads at the log's end, past it, inside the last entry and at the
NULL LSN: the files' bytes, each entry's answers and each error's words
must be the reference's.
"""

from __future__ import annotations

import random
from typing import Any

import minidb.cli.engines  # noqa: F401  (registers every engine's entry types, replication's too)
from minidb.errors import MinidbError
from minidb.io import CrashMode, SimDisk
from minidb.log import FILE_HEADER, LSN, NULL_LSN, LogManager, fields, known_types
from minidb.log.fields import ItemFormatError, ListOf

from tests.agreement.scenarios import disk_state, scenario

_TEXT = "aé€😀 \x00z"
_WRONG = [None, -1, 2**64, "x", b"x", 1.5, [1], {"a": 1}]


def _value(kind: Any, rng: random.Random) -> Any:
    if isinstance(kind, ListOf):
        return [{name: _value(k, rng) for name, k in kind.fields} for _ in range(rng.randrange(4))]
    base = fields.LSN_FIELD if kind.name == "LSN" else getattr(fields, kind.name)  # an engine's variant: its base
    if base is fields.BOOL:
        return rng.random() < 0.5
    if base is fields.LSN_FIELD:
        return NULL_LSN if rng.random() < 0.3 else LSN(rng.randrange(1, 9), rng.randrange(2**32))
    if base is fields.BYTES:
        return rng.randbytes(rng.choice([0, 1, 7, 60]))
    if base is fields.STR:
        return "".join(rng.choice(_TEXT) for _ in range(rng.randrange(12)))
    if base is fields.I64:
        return rng.randrange(-(2**63), 2**63)
    bits = {fields.U8: 8, fields.U16: 16, fields.U32: 32, fields.U64: 64}[base]
    return rng.choice([0, 1, 2**bits - 1, rng.randrange(2**bits)])


def _values(entry_type: Any, rng: random.Random) -> dict[str, Any]:
    return {name: _value(kind, rng) for name, kind in entry_type.all_fields}


def _outcome(function: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", function(*args)
    except ItemFormatError as e:
        return "error", str(e)


def _damaged(item: bytes, rng: random.Random) -> bytes:
    how = rng.choice(["cut", "extend", "overwrite"])
    if how == "extend" or not item:
        return item + rng.randbytes(rng.randrange(1, 4))
    at = rng.randrange(len(item))
    return item[:at] if how == "cut" else item[:at] + bytes([rng.randrange(256)]) + item[at + 1 :]


@scenario("log.codec.codec_of")
def every_type_encoded_and_decoded(seed: int) -> list[Any]:
    rng = random.Random(seed)
    answers: list[Any] = []
    for entry_type in known_types():
        for _ in range(6):
            values = _values(entry_type, rng)
            item = entry_type.encode(values)
            decoded = entry_type.decode(item)
            answers.append((entry_type.name, item, decoded, [type(decoded[n]).__name__ for n in decoded]))
            answers.append(_outcome(entry_type.decode, memoryview(item)))
            answers.append(_outcome(entry_type.decode, _damaged(item, rng)))
            bad = dict(values)
            names = list(bad)
            how = rng.choice(["drop", "add", "replace"] if names else ["add"])
            if how == "drop":
                del bad[rng.choice(names)]
            elif how == "add":
                bad["no_such_field"] = 1
            else:
                bad[rng.choice(names)] = rng.choice(_WRONG)
            answers.append(_outcome(entry_type.encode, bad))
    return answers


@scenario("log.codec.codec_of", "log.entry.LogEntry", "log.reader.LogReader", "log.manager.LogManager")
def logged_and_read_back(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    disk = SimDisk(f"scn-codec-{seed}")
    types = [t for t in known_types() if t is not FILE_HEADER]

    def open_log() -> LogManager:
        return LogManager(disk, file_max=2048, buffer_size=300, clock=lambda: 1_700_000_000.0, commit_delay=0)

    log = open_log()
    for i in range(120):
        entry_type = types[i % len(types)] if i < len(types) else rng.choice(types)
        log.append(entry_type, _values(entry_type, rng))
        if rng.random() < 0.1:
            log.sync()
    disk.crash(CrashMode.random(seed))
    log = open_log()
    read = []
    for e in log.scan():  # the transaction first, then the values: the twin reads the txn id alone
        read.append((tuple(e.lsn), e.type_name, e.txn_id, e.values, e.txn_prev_lsn, e == log.read(e.lsn)))
    end = log.end().end_lsn
    for lsn in (end, LSN(end.file, end.offset + 1), LSN(end.file + 1, 0), LSN(end.file, end.offset - 1), NULL_LSN):
        try:  # at the end, past it, nowhere, inside the last entry
            read.append(("read", str(lsn), log.read(lsn).type_name))
        except MinidbError as e:
            read.append(("read", str(lsn), type(e).__name__, str(e)))
    log.close()
    return {"read": read, "disk": disk_state(disk)}
