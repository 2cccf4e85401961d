"""``minidb tour``: the main job. Exercises every part that exists, saying what it does.

Sections, bottom up: the disk layer (a simulated disk that crashes), the
shared log (appends across files, forward and backward scans, group commit
from four threads, on real files), a crash with a torn tail, a crash sweep,
the log store (a tree in the log, transactions, a checkpoint's ten steps,
recovery, the seed's BEFORE_CKPT_END cases, its crash sweep), and the
figures. The logs it writes stay in ``WORKDIR/log`` and
``WORKDIR/logstore`` for ``minidb printlog`` and ``minidb verify``.
"""

from __future__ import annotations

import os
import threading

from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.log import TRACE, LogManager, file_number


def register(commands) -> None:
    p = commands.add_parser("tour", help="a tour of minidb: run every part, print what happens")
    p.add_argument("--out", default="figures", help="where to write figures (default figures)")
    p.add_argument("--workdir", default=os.path.join("out", "tour"), help="where to keep the tour's files (default out/tour)")
    p.set_defaults(run=run)


def section(title: str) -> None:
    print(f"\n== {title} ==")


def tour_disk() -> None:
    section("1. The disk layer: a simulated disk that can crash")
    disk = SimDisk("tour")
    with disk.open("ledger", create=True) as f:
        f.append(b"alice=100;")
        f.fsync()
        f.append(b"bob=50;")
    print(f"wrote 'alice=100;' (fsynced) and 'bob=50;' (not fsynced); {disk.pending_ops()} write pending")
    for mode in (CrashMode.nothing(), CrashMode.everything(), CrashMode.torn(4)):
        image = disk.crash_image(len(disk.events) - 1, mode)
        with image.open("ledger") as f:
            print(f"  crash keeping {str(mode):<12} -> the file reads {f.read_all()!r}")
    print(f"disk statistics: {disk.stats}")


def tour_log(workdir: str) -> str:
    section("2. The shared log on real files")
    path = os.path.join(workdir, "log")
    disk = OSDisk(path, create=True)
    for name in disk.list():
        if file_number(name) is not None:
            disk.delete(name)
    log = LogManager(disk, file_max=2048)
    first = log.append(TRACE, {"message": "the tour begins"})
    for i in range(60):
        log.append(TRACE, {"message": f"entry {i}: " + "minidb " * (i % 7)})
    log.sync()
    print(f"appended 61 Trace entries to {path}: first at {first}, last at {log.last_lsn}")
    print(f"log files: {', '.join(disk.list())} (a new file starts when the next entry would pass 2048 bytes)")
    print("the first three entries, scanning forward:")
    for entry in list(log.scan())[:3]:
        print(f"  {entry.lsn}  {entry.type_name:<10} {entry.values}")
    back = [str(e.lsn) for e in log.scan_backward()][:5]
    print(f"the last five, scanning backward along the prev offsets: {', '.join(back)}")

    before = log.stats.as_dict()

    def worker(n: int) -> None:
        for i in range(25):
            log.sync(log.append(TRACE, {"message": f"thread {n} commit {i}"}))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = log.stats.as_dict()
    requests = after["nSyncRequests"] - before["nSyncRequests"]
    fsyncs = after["nFsyncs"] - before["nFsyncs"]
    print(f"group commit: 4 threads made {requests} durable commits with {fsyncs} fsyncs")
    log.append(TRACE, {"message": "the tour ends"})
    log.close()
    print(f"log statistics: {log.stats}")
    return path


def tour_crash() -> None:
    section("3. A crash with a torn tail")
    from minidb.viz.log_demo import log_crash_demo

    for keep in ("nothing", "torn", "everything"):
        print(log_crash_demo(after_write=5, keep=keep).summary())
        print()


def tour_sweep() -> None:
    section("4. A crash sweep: every write and fsync of a random workload")
    from minidb.log.crashtest import crash_sweep

    result = crash_sweep(seed=1, ops=60)
    print(f"log, seed 1, 60 operations: {result.summary()}")
    for violation in result.violations[:5]:
        print(f"  violation: {violation}")


def tour_logstore(workdir: str) -> str:
    section("5. The log store: the log is the database")
    from minidb.logstore import Environment, EnvironmentConfig
    from minidb.logstore.cases import seed_case
    from minidb.logstore.crashtest import crash_sweep
    from minidb.viz.logstore_demo import bank_writes, logstore_crash_demo

    path = os.path.join(workdir, "logstore")
    disk = OSDisk(path, create=True)
    for name in disk.list():
        if file_number(name) is not None:
            disk.delete(name)
    config = EnvironmentConfig(node_max_entries=4, checkpoint_bytes_interval=None, clock=lambda: 1_700_000_000.0)
    env = Environment.open(disk, config)
    accounts = env.database("accounts")
    for i in range(20):
        accounts.put(f"acct{i:02d}", str(100 + i))
    print(f"20 records in 4-slot nodes: a tree of height {env.db_tree.get('accounts').root.level}, "
          f"{env.stats['nSplits']} splits; every version of every node is an entry at the end of the log")
    with env.begin() as txn:
        accounts.put("acct01", "50", txn=txn)
        accounts.put("acct02", "150", txn=txn)
    txn = env.begin()
    accounts.delete("acct03", txn=txn)
    txn.abort()
    print(f"txn {txn.id - 1} committed (fsynced); txn {txn.id} deleted acct03 and aborted: "
          f"acct03 = {accounts.get('acct03').decode()}")
    result = env.checkpoint(minimize_recovery_time=True)
    print("a checkpoint, its ten steps:")
    for line in result.trace:
        if not line.startswith("step 5: ") or "root" in line or "flushed" in line:
            print(f"  {line}")
    flags = {}
    for logged in result.logged:
        flags[logged.provisional.name] = flags.get(logged.provisional.name, 0) + 1
    print(f"  step 5 logged {len(result.logged)} INs: " + ", ".join(f"{n} {k}" for k, n in sorted(flags.items())))
    env.close()
    again = Environment.open(disk, config)
    print(again.recovery_info.summary())
    print(f"reopened: {len(again.database('accounts').keys())} records")
    again.close()

    last = len(bank_writes())
    demo = logstore_crash_demo(last, "nothing")
    print(f"\na crash of the bank workload after its last write, keeping nothing unsynced:")
    for name in ("transactions", "redo LNs", "undo losers"):
        phase = next(p for p in demo.phases if p.name == name)
        print(f"  recovery, {name}: {'; '.join(phase.lines)}")
    print("  records: " + ", ".join(f"{k.decode()}={v.decode()}" for k, v in demo.records.items()))

    print("\nthe seed's three BEFORE_CKPT_END cases, in the engine:")
    for number, bug in ((1, False), (2, False), (3, False), (3, True)):
        case = seed_case(number, bug)
        verdict = "correct" if case.correct else "INCORRECT: " + case.problems[0]
        print(f"  case {number}{' with the evictor bug option' if bug else ''}: A logged at 200 with "
              f"{case.a_provisional.name}; the tree uses A at {case.active_a}; {verdict}")
    sweep = crash_sweep(seed=1, ops=12)
    print(f"\nlog store crash sweep, seed 1, 12 operations: {sweep.summary()}")
    for violation in sweep.violations[:5]:
        print(f"  violation: {violation}")
    return path


def run(args) -> int:
    print("minidb tour: every part of minidb that exists, bottom up")
    tour_disk()
    path = tour_log(args.workdir)
    tour_crash()
    tour_sweep()
    store = tour_logstore(args.workdir)
    section("6. Figures")
    from minidb.viz.gallery import write_figures

    for written in write_figures(args.out):
        print(f"wrote {written}")
    print(f"\nnext: minidb printlog {path} | head   and   minidb verify {path}")
    print(f"      minidb printlog {store} --type IN   (the log store's log, with provisional flags)")
    return 0
