"""The JE documentation's worked examples, run in the engine: the recovery log and the bucket of VLSNs 9..15.

**The recovery example** (JE `VLSNIndex`, "Recovery")::

    LSN
    100  firstActiveLSN
    200  Checkpoint start
    300  VLSN 78
    400  VLSNIndex flushed here
    500  Checkpoint end
    600  VLSN 79

:func:`worked_recovery_case` makes exactly this log in a real replicated
environment: the creation of database "accounts" (its MapLN, VLSN 1) and 75
records (VLSNs 2..76); a transaction writes a record (VLSN 77, its first
LSN is the checkpoint's firstActiveLSN, "100"); a checkpoint starts
(CkptStart, "200") and is stepped: after step 3 a record is written
(VLSN 78, "300"), step 6 flushes the index ("400", range 1..78), CkptEnd
("500"); then the transaction commits (its Commit is VLSN 79, "600",
fsynced), and the power fails. Recovery starts from that CkptEnd: it loads
the index flushed at "400" (1..78, not 79), re-tracks from CkptStart
("200") to the end (VLSNs 78 and 79) and merges: the index maps 1..79 and
the next VLSN is 80. The LSNs are the engine's own, not 100..600; their
order and the outcome are the JE documentation's.

**The bucket example** (JE `VLSNBucket`): :func:`example_bucket_mappings` gives the
JE documentation's mappings VLSN 9..15 over files 10 and 11 (offsets in decimal, as in
the JE documentation), and :func:`example_buckets` puts them into real buckets of stride 4:
``[9..13]`` keeps 9 -> 10/100 and 13 -> 10/140; ``[14..15]`` keeps
14 -> 11/100 and, as its last mapping, 15 -> 11/120.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minidb.io import CrashMode, SimDisk
from minidb.log import LSN
from minidb.logstore import EnvironmentConfig
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.vlsn.bucket import VLSNBucket
from minidb.replication.vlsn.config import VLSNIndexConfig
from minidb.replication.vlsn.index import FlushResult
from minidb.replication.vlsn.range import VLSNRange
from minidb.replication.vlsn.recovery import MergeResult


def fixed_clock() -> float:
    return 1_700_000_000.0


def case_config(**overrides) -> EnvironmentConfig:
    settings = dict(node_max_entries=8, file_max=1 << 16, buffer_size=1 << 12, checkpoint_bytes_interval=None,
                    clock=fixed_clock, trace=False)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


# -- the bucket example ---------------------------------------------------------------------------
def example_bucket_mappings() -> list[tuple[int, LSN]]:
    """The JE documentation's table: VLSN 9..15 -> 10/100 .. 10/140, 11/100, 11/120."""
    return [(9, LSN(10, 100)), (10, LSN(10, 110)), (11, LSN(10, 120)), (12, LSN(10, 130)), (13, LSN(10, 140)),
            (14, LSN(11, 100)), (15, LSN(11, 120))]


def example_buckets(stride: int = 4) -> list[VLSNBucket]:
    """The JE documentation's mappings put in order into buckets of ``stride`` (a new bucket when one refuses)."""
    buckets: list[VLSNBucket] = []
    for vlsn, lsn in example_bucket_mappings():
        if not buckets or not buckets[-1].put(vlsn, lsn):
            if buckets:
                buckets[-1].close()
            buckets.append(VLSNBucket(lsn.file, stride, 1000, 100_000, vlsn))
            buckets[-1].put(vlsn, lsn)
    return buckets


# -- the recovery example ---------------------------------------------------------------------------
@dataclass
class WorkedRecoveryCase:
    """The JE documentation's recovery log as it ran, and what recovery made of it."""

    disk: SimDisk
    marks: dict[str, LSN] = field(default_factory=dict)  # the JE documentation's label -> the engine's LSN
    flush: FlushResult | None = None  # the flush at "400"
    range_before_crash: VLSNRange | None = None
    merge: MergeResult | None = None
    recovered_range: VLSNRange | None = None
    next_vlsn: int = 0
    recovered: ReplicatedEnvironment | None = None

    def in_order(self) -> bool:
        lsns = list(self.marks.values())
        return all(a < b for a, b in zip(lsns, lsns[1:], strict=False))

    def lines(self) -> list[str]:
        out = [f"{label:<28} {lsn}" for label, lsn in self.marks.items()]
        out.append("crash (nothing unsynced survives)")
        assert self.merge is not None
        out += self.merge.lines()
        out.append(f"next VLSN: {self.next_vlsn}")
        return out


def worked_recovery_case(index_config: VLSNIndexConfig | None = None) -> WorkedRecoveryCase:
    """Run the JE documentation's recovery example in a real environment, crash it and recover (see the module doc)."""
    index_config = index_config or VLSNIndexConfig(stride=10)
    disk = SimDisk("seed-recovery")
    env = ReplicatedEnvironment.open(disk, case_config(), index_config)
    accounts = env.database("accounts")  # VLSN 1: its creation travels in the stream
    for i in range(75):
        accounts.put(f"acct{i:03d}", str(100 + i))  # VLSNs 2..76
    case = WorkedRecoveryCase(disk)
    txn = env.begin()
    case.marks["100 firstActiveLSN"] = accounts.put("alice", "70", txn=txn)  # VLSN 77
    run = env.env.checkpointer.start("worked example")
    run.through(3)
    case.marks["200 Checkpoint start"] = run.result.ckpt_start_lsn
    case.marks["300 VLSN 78"] = accounts.put("bob", "80")
    run.through(6)
    case.flush = env.vlsn_index.flushes[-1]
    case.marks["400 VLSNIndex flushed here"] = case.flush.range_lsn
    result = run.finish()
    case.marks["500 Checkpoint end"] = result.ckpt_end_lsn
    case.marks["600 VLSN 79"] = txn.commit()  # fsynced (Durability.SYNC)
    assert result.first_active_lsn == case.marks["100 firstActiveLSN"]
    case.range_before_crash = env.range
    env.crash(CrashMode.nothing())
    again = ReplicatedEnvironment.open(disk, case_config(), index_config)
    case.recovered = again
    case.merge = again.vlsn_index.merge_result
    case.recovered_range = again.range
    case.next_vlsn = again.vlsn_index.allocator.last + 1
    return case


__all__ = ["example_bucket_mappings", "example_buckets", "worked_recovery_case", "WorkedRecoveryCase", "case_config"]
