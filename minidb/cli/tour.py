"""``minidb tour``: the main job. Exercises every part that exists, saying what it does.

Sections, bottom up: the disk layer (a simulated disk that crashes), the
shared log (appends across files, forward and backward scans, group commit
from four threads, on real files), a crash with a torn tail, a crash sweep,
the figures, and generated environments for the Spark pipeline. The log it writes stays in ``WORKDIR/log`` for
``minidb printlog`` and ``minidb verify``.
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


def tour_pipeline(workdir: str) -> str:
    section("6. Environments for the data pipeline")
    import shutil

    from minidb.spark.generate import GenerateRequest, generate

    path = os.path.join(workdir, "envs")
    shutil.rmtree(path, ignore_errors=True)  # the tour's own output of a previous run
    report = generate("log", GenerateRequest(path, envs=4, ops=400, seed=1, group=3))
    print(report.summary())
    print(f"Spark reads them all at once (slow to start, so not part of the tour): "
          f"minidb spark analyze {path} --out {os.path.join(workdir, 'spark')}")
    return path


def run(args) -> int:
    print("minidb tour: every part of minidb that exists, bottom up")
    tour_disk()
    path = tour_log(args.workdir)
    tour_crash()
    tour_sweep()
    section("5. Figures")
    from minidb.viz.gallery import write_figures

    for written in write_figures(args.out):
        print(f"wrote {written}")
    tour_pipeline(args.workdir)
    print(f"\nnext: minidb printlog {path} | head   and   minidb verify {path}")
    return 0
