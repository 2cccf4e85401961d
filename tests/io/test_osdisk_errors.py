"""Item 4: real files report OS failures as the simulated disk does.

A full disk is a DiskFullError, an I/O error a DiskError naming the file; after a failed
fsync the log claims nothing durable until it is reopened (after a failed fsync the kernel
may have dropped the dirty pages, so a later fsync that succeeds proves nothing).
"""

import errno
import os

import pytest

from minidb.errors import DiskError, DiskFullError, LogError
from minidb.io import OSDisk
from minidb.log import TRACE
from minidb.logstore import Durability, Environment

from tests.log.helpers import messages, new_log, write_messages
from tests.logstore.helpers import small_config


class Failing:
    """Replaces an ``os`` function: raises ``OSError(code)`` while armed."""

    def __init__(self, real, code):
        self.real, self.code, self.armed, self.calls = real, code, False, 0

    def __call__(self, *args):
        if self.armed:
            self.calls += 1
            raise OSError(self.code, os.strerror(self.code))
        return self.real(*args)


@pytest.fixture
def failing_fsync(monkeypatch):
    fake = Failing(os.fsync, errno.EIO)
    monkeypatch.setattr(os, "fsync", fake)
    return fake


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_item4_a_full_disk_is_a_disk_full_error_naming_the_file(tmp_path, monkeypatch, code):
    disk = OSDisk(tmp_path / "d", create=True)
    fake = Failing(os.pwrite, code)
    monkeypatch.setattr(os, "pwrite", fake)
    with disk.open("data", create=True) as f:
        fake.armed = True
        with pytest.raises(DiskFullError) as raised:
            f.append(b"x" * 100)
    assert "data" in str(raised.value) and fake.calls == 1


@pytest.mark.parametrize("op", ["fsync", "ftruncate", "pread"])
def test_item4_an_io_error_is_a_disk_error_not_an_os_error(tmp_path, monkeypatch, op):
    disk = OSDisk(tmp_path / "d", create=True)
    with disk.open("data", create=True) as f:
        f.append(b"abc")
        fake = Failing(getattr(os, op), errno.EIO)
        monkeypatch.setattr(os, op, fake)
        fake.armed = True
        call = {"fsync": f.fsync, "ftruncate": lambda: f.truncate(1), "pread": lambda: f.read(0, 3)}[op]
        with pytest.raises(DiskError) as raised:
            call()
        assert not isinstance(raised.value, DiskFullError)
        assert "data" in str(raised.value) and "Input/output error" in str(raised.value)


def test_item4_after_a_failed_fsync_the_log_refuses_until_reopened(tmp_path, failing_fsync):
    disk = OSDisk(tmp_path / "log", create=True)
    log = new_log(disk)
    write_messages(log, ["durable"])
    log.append(TRACE, {"message": "maybe lost"})
    failing_fsync.armed = True
    with pytest.raises(LogError, match="fsync of 00000001.jdb failed"):
        log.sync()
    failing_fsync.armed = False  # the device "recovers": a second fsync would succeed
    with pytest.raises(LogError, match="must be reopened"):
        log.sync()
    with pytest.raises(LogError, match="must be reopened"):
        log.append(TRACE, {"message": "more"})
    log.close()
    assert messages(new_log(disk))[0] == "durable"


def test_item4_a_log_store_commit_after_a_failed_fsync_never_reports_success(tmp_path, failing_fsync):
    path = tmp_path / "env"
    env = Environment.open(path, small_config())
    db = env.database("accounts")
    txn = env.begin(Durability.SYNC)
    db.put("a", "1", txn)
    txn.commit()
    txn = env.begin(Durability.SYNC)
    db.put("b", "2", txn)
    failing_fsync.armed = True
    with pytest.raises(LogError):
        txn.commit()
    failing_fsync.armed = False
    other = env.begin(Durability.SYNC)
    with pytest.raises(LogError, match="must be reopened"):
        db.put("c", "3", other)  # logging refuses at once ...
        other.commit()  # ... and a commit could never report success
