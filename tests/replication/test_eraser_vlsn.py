"""The data eraser in a replicated environment: the VLSN index is truncated before a file is erased."""

from __future__ import annotations

import zlib

from minidb.io import SimDisk
from minidb.log.files import file_name, log_file_numbers
from minidb.logstore import EnvironmentConfig
from minidb.logstore.eraser import EraserConfig, ManualClock
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.vlsn.config import VLSNIndexConfig

SECRET = b"secretvalue"


def replicated(minimum: int):
    disk = SimDisk("rep-eraser")
    config = EnvironmentConfig(file_max=1000, node_max_entries=128, checkpoint_bytes_interval=None,
                               clock=lambda: 1_700_000_000.0, trace=False)
    renv = ReplicatedEnvironment.open(disk, config, VLSNIndexConfig(min_vlsn_index_size=minimum))
    db = renv.database("a")
    db.put(b"gone", SECRET)
    db.delete(b"gone")
    for i in range(80):
        db.put(f"k{i % 20:02d}", "y" * 30)
    renv.checkpoint()
    renv.checkpoint()
    return disk, renv


def holding(disk) -> list[int]:
    return [n for n in log_file_numbers(disk) if SECRET in disk.open(file_name(n)).read_all()]


def test_the_index_head_is_truncated_before_erasure():
    disk, renv = replicated(minimum=10)
    first = renv.range.first
    eraser = renv.data_eraser(EraserConfig(run_eraser=True, erase_period_ms=1000), ManualClock())
    eraser.run_cycle()
    assert renv.range.first > first
    assert not holding(disk)
    assert renv.vlsn_index.stats["nHeadTruncations"] >= 1


def test_the_index_keeps_its_minimum_and_the_file_is_left_alone():
    disk, renv = replicated(minimum=1000)
    first = renv.range.first
    eraser = renv.data_eraser(EraserConfig(run_eraser=True, erase_period_ms=1000), ManualClock())
    eraser.run_cycle()
    assert renv.range.first == first
    assert holding(disk)
    assert any("VLSN index cannot be truncated" in line for line in eraser.messages)


def test_the_eraser_drops_a_file_s_cached_restore_checksum_before_it_erases_the_file():
    """A network restore's server caches each file's CRC-32; erasure keeps a file's length, so a stale cached
    checksum would be sent for changed bytes: the eraser drops it first."""
    disk, renv = replicated(minimum=10)
    secret_files = holding(disk)
    for n in log_file_numbers(disk):
        renv.file_checksums.checksum(n, disk.size(file_name(n)))
    eraser = renv.data_eraser(EraserConfig(run_eraser=True, erase_period_ms=1000), ManualClock())
    eraser.run_cycle()
    assert secret_files and not holding(disk)
    assert not set(secret_files) & set(renv.file_checksums.cached())
    for n in log_file_numbers(disk):  # what is cached (or summed again) is the file as it is now
        data = disk.open(file_name(n)).read_all()
        assert renv.file_checksums.checksum(n, len(data)) == zlib.crc32(data)
