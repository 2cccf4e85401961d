"""Small builders shared by the log tests."""

from minidb.io import SimDisk
from minidb.log import TRACE, LogManager, file_name


def fixed_clock() -> float:
    return 1_700_000_000.0


def new_log(disk=None, **options):
    options.setdefault("clock", fixed_clock)
    return LogManager(disk if disk is not None else SimDisk("t"), **options)


def write_messages(log, messages, sync=True):
    lsns = [log.append(TRACE, {"message": m}) for m in messages]
    if sync:
        log.sync()
    return lsns


def messages(log):
    return [e.values["message"] for e in log.scan() if e.entry_type is TRACE]


def file_bytes(disk, number=1):
    with disk.open(file_name(number)) as f:
        return f.read_all()


def put_file_bytes(disk, data, number=1):
    with disk.open(file_name(number)) as f:
        f.truncate(0)
        f.write(0, data)
        f.fsync()


def synced_log(messages, **options):
    """A log on a new simulated disk holding ``messages``, synced and closed; (disk, their LSNs)."""
    disk = SimDisk()
    log = new_log(disk, **options)
    lsns = write_messages(log, messages)
    log.close()
    return disk, lsns
