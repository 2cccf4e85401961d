"""A scripted workload spanning two checkpoints, crashed at every write and fsync of its history.

Every crash point keeps nothing, everything, two torn versions of the last write, or two random
subsets of the unsynced writes; recovery must then give exactly the committed state of the log that
survived: the writes without a transaction before its end and those of transactions whose Commit lies
before it, and every fsync that returned before the crash must have left its entries.
"""

from minidb.crashtest.logstore import Recorder, Workload, check_point
from minidb.io import SimDisk, crash_points
from minidb.logstore import Durability, Environment, EnvironmentConfig

from tests.logstore.helpers import fixed_clock


def scripted_workload() -> Workload:
    config = EnvironmentConfig(node_max_entries=4, node_budget=6, file_max=2500, buffer_size=500,
                               checkpoint_bytes_interval=None, durability=Durability.SYNC, clock=fixed_clock,
                               trace=False)
    disk = SimDisk("two-checkpoints")
    workload = Workload(0, disk, config)
    env = Environment.open(disk, config)
    record = Recorder(workload, env)
    env.database("a"), env.database("b")
    for i in range(14):
        record.write("a", f"k{i:02d}".encode(), f"first {i}".encode())
    long_txn = env.begin()  # stays open across the first checkpoint: firstActiveLSN < CkptStart
    record.write("b", b"k01", b"long 1", long_txn)
    record.write("b", b"k02", b"long 2", long_txn)

    steps = iter(range(100))

    def between(pause):
        n = next(steps)
        if n % 3 == 0:
            record.write("a", f"k{n % 14:02d}".encode(), f"during checkpoint {n}".encode())
        if n % 7 == 0:
            record.write("a", f"k{(n + 5) % 14:02d}".encode(), None)

    record.stepped_checkpoint(between)  # the first checkpoint, operations between its steps
    txn = env.begin()
    record.write("a", b"k03", b"txn 2", txn)
    record.write("b", b"k09", b"txn 2", txn)
    record.commit(txn)
    for i in range(0, 14, 4):
        record.write("a", f"k{i:02d}".encode(), None)
    record.write("b", b"k03", b"long 3", long_txn)
    record.write("b", b"k01", None, long_txn)
    record.checkpoint()  # the second checkpoint
    record.commit(long_txn)
    loser = env.begin()
    record.write("a", b"k05", b"loser", loser)
    record.write("b", b"k02", None, loser)
    aborted = env.begin()
    record.write("a", b"k06", b"aborted", aborted)
    aborted.abort()
    record.sync()
    for i in range(20, 26):
        record.write("b", f"k{i:02d}".encode(), b"not synced")
    env.log.flush()
    return workload


def test_recovery_after_a_crash_at_every_write_gives_exactly_the_committed_state():
    workload = scripted_workload()
    ckpt_ends = [e for e in Environment.open(workload.disk.clone(), workload.config).log.scan()
                 if e.type_name == "CkptEnd" and e["invoker"] in ("stepped", "api")]
    assert len(ckpt_ends) >= 2
    points = 0
    violations = []
    cache = {}
    for point in crash_points(workload.disk, torn_variants=2, random_variants=2, seed=11):
        points += 1
        problem = check_point(workload, point.disk, point.event.index, cache=cache)
        if problem is not None:
            violations.append(f"{point}: {problem}")
    assert violations == []
    assert points > 200
    assert len(cache) > 100  # many different crash images, each recovered and checked
