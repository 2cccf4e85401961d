"""``minidb tour``: the main job. Exercises every part that exists, saying what it does.

Sections, bottom up: the disk layer (a simulated disk that crashes), the
shared log (appends across files, forward and backward scans, group commit
from four threads, on real files), a crash with a torn tail, a crash sweep,
the page store's storage layer (a volume formatted, stores and pages
allocated and freed, the buffer pool forced, a crash sweep of the volume),
the lock manager (a scripted deadlock of three transactions found by
Dreadlocks and resolved), the page store's transactions (records committed,
a rollback with CLRs, a checkpoint, a crash and ARIES restart, a crash
sweep), the log store (a tree in the log, transactions, a checkpoint's ten
steps, recovery, the JE documentation's BEFORE_CKPT_END cases, its crash sweep),
replication (VLSNs, the VLSN index's buckets, lookups and scans, a feeder
woken by a put, the flush at a checkpoint, recovery's merge, the JE documentation's
recovery example, its crash sweep), environments generated for the Spark
pipeline, the Spark analysis over them (what ``minidb spark analyze`` runs,
in local mode, with a progress bar; a short summary of its results), and the
figures.

What it writes stays in WORKDIR for ``minidb printlog`` and ``minidb
verify``: the shared log in ``log/``, the page store's volume and log in
``pagestore/``, the transactions' in ``transactions/``, the log store's
environment in ``logstore/``, the replicated one in ``replication/``,
generated environments in ``envs/``, the Spark analysis's tables and figures
in ``spark/`` (the JVM's messages in ``spark-jvm.log``). WORKDIR and the figures' directory are
claimed as :mod:`minidb.cli.output` describes: a new or empty directory, or
the tour's own earlier output, whose files alone a new tour deletes; anything
else is refused before the tour starts.
"""

from __future__ import annotations

import os
import sys
import threading

from minidb.cli import figures
from minidb.cli.common import add_impl_option, path_arg
from minidb.cli.output import check_output, owned_output
from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.log import TRACE, LogManager, file_name


def register(commands) -> None:
    p = commands.add_parser("tour", help="a tour of minidb: run every part, print what happens")
    p.add_argument("--out", type=path_arg, default="figures", help="where to write figures (default figures)")
    p.add_argument("--workdir", type=path_arg, default=os.path.join("out", "tour"), help="where to keep the tour's files (default out/tour)")
    add_impl_option(p)
    p.set_defaults(run=run)


def section(title: str) -> None:
    print(f"\n== {title} ==")


def print_sweep(title: str, result) -> None:
    print(f"{title}: {result.summary()}")
    for violation in result.violations[:5]:
        print(f"  violation: {violation}")


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
    from minidb.crashtest.log import crash_sweep

    result = crash_sweep(seed=1, ops=60)
    print_sweep("log, seed 1, 60 operations", result)


def tour_pagestore(workdir: str) -> str:
    section("5. The page store: a volume of extents, and the buffer pool")
    from minidb.crashtest.volume import crash_sweep
    from minidb.pagestore import BUFFER_POOL, AllocMode, StoreFlags, Volume

    path = os.path.join(workdir, "pagestore")
    disk = OSDisk(path, create=True)
    log = LogManager(disk)
    bp = BUFFER_POOL.call(8, log=log, trace=True)
    vol = Volume.format(disk, bp, log, num_pages=256, ext_sz=8)
    h = vol.header
    print(f"formatted v(1) in {path}: {h.num_pages} pages of {h.page_size} bytes, {h.num_exts} extents of "
          f"{h.ext_sz}; store 0 (header, extent map, store map) = pages 0-{h.store0_pages - 1}")
    files, index = vol.create_store(), vol.create_store(StoreFlags.REGULAR)
    appended = [vol.alloc_page(files, AllocMode.APPEND) for _ in range(10)]
    print(f"created {files} and {index}; 10 appends to {files}: {appended[0]} .. {appended[-1]} "
          f"(a second extent after page {appended[7].page})")
    vol.alloc_page(index)
    for pid in appended[2:5]:
        vol.free_page(pid)
    last = vol.alloc_page(files, AllocMode.APPEND)
    print(f"freed {', '.join(str(p) for p in appended[2:5])}; append gives {last} (after the last allocated "
          f"page), compact gives {vol.alloc_page(files, AllocMode.COMPACT)} (the lowest reserved page)")
    second = vol.store_extents(files)
    for pid in appended[8:] + [last]:
        vol.free_page(pid)
    print(f"freed {', '.join(str(p) for p in appended[8:] + [last])}, the allocated pages of x(1.{second[-1]}): "
          f"{files} goes from extents {second} to {vol.store_extents(files)}")
    scratch = vol.create_store()
    vol.alloc_page(scratch)
    print(f"created {scratch} and dropped it again: extents {vol.drop_store(scratch)} are free")
    print(vol.dump_extents(only_used=True), end="")
    print(vol.dump_stores(), end="")
    print(f"consistency check: {vol.check() or 'ok'}")
    runs = bp.force_all()
    print(f"force_all: the log synced first, then {', '.join(str(r) for r in runs)}")
    print(f"buffer pool: {bp.stats}")
    print(f"volume: {vol.stats}")
    vol.close()
    log.close()
    print_sweep("crash sweep of the volume (redo after every crash point), seed 1, 40 operations",
                crash_sweep(seed=1, ops=40))
    return path


def tour_locks() -> None:
    section("6. The lock manager: a deadlock found by Dreadlocks, and resolved")
    from minidb.pagestore.lock import LOCK_MANAGER, Interleaving
    from minidb.pagestore.lock.modes import EX, SH
    from minidb.viz.locks_demo import DemoTxn, rec

    lm = LOCK_MANAGER.call(escalation_threshold=None, fingerprint_bits=16, bits_per_fingerprint=2, trace=True)
    t1, t2, t3 = DemoTxn(1), DemoTxn(2), DemoTxn(3)
    print("three transactions, each in its own thread; each updates one record, then reads the next one's:")
    with Interleaving(lm) as script:
        for txn, slot in ((t1, 1), (t2, 2), (t3, 3)):
            script.lock(txn, rec(48, slot), EX)
        script.lock(t1, rec(48, 2), EX)
        script.lock(t2, rec(48, 3), SH)
        print(lm.dump(), end="")
        script.lock(t3, rec(48, 1), SH)
        script.release_all(t3)
        script.release_all(t2)
        for line in script.log:
            print(f"  {line}")
        print("what Dreadlocks did:")
        for line in lm.trace.lines:
            if "digest" in line or "victim" in line or "after waiting" in line:
                print(f"  {line}")
        print(f"in the end T1 holds {', '.join(str(lid) for lid in lm.held(t1))}")
    print(f"lock statistics: {lm.stats}")


def tour_logstore(workdir: str) -> str:
    section("8. The log store: the log is the database")
    from minidb.crashtest.logstore import crash_sweep
    from minidb.logstore import Environment, EnvironmentConfig
    from minidb.logstore.cases import worked_case
    from minidb.viz.logstore_demo import bank_writes, logstore_crash_demo

    path = os.path.join(workdir, "logstore")
    disk = OSDisk(path, create=True)
    # the log cleaner's thread runs, as in a real deployment; small files give it something to clean
    config = EnvironmentConfig(node_max_entries=4, checkpoint_bytes_interval=None, clock=lambda: 1_700_000_000.0,
                               run_cleaner=True, cleaner_bytes_interval=4096, file_max=8192)
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
    tour_cleaner_and_eraser(again)
    again.close()

    last = len(bank_writes())
    demo = logstore_crash_demo(last, "nothing")
    print("\na crash of the bank workload after its last write, keeping nothing unsynced:")
    for name in ("transactions", "redo LNs", "undo losers"):
        phase = next(p for p in demo.phases if p.name == name)
        print(f"  recovery, {name}: {'; '.join(phase.lines)}")
    print("  records: " + ", ".join(f"{k.decode()}={v.decode()}" for k, v in demo.records.items()))

    print("\nthe JE documentation's three BEFORE_CKPT_END cases, in the engine:")
    for number, bug in ((1, False), (2, False), (3, False), (3, True)):
        case = worked_case(number, bug)
        verdict = "correct" if case.correct else "INCORRECT: " + case.problems[0]
        print(f"  case {number}{' with the evictor bug option' if bug else ''}: A logged at 200 with "
              f"{case.a_provisional.name}; the tree uses A at {case.active_a}; {verdict}")
    sweep = crash_sweep(seed=1, ops=12)
    print_sweep("\nlog store crash sweep, seed 1, 12 operations", sweep)
    return path


def tour_cleaner_and_eraser(env) -> None:
    """Steady updates and deletions, then the cleaner and the data eraser (a cycle run now, on a manual clock)."""
    from minidb.logstore.eraser import DataEraser, EraserConfig, ManualClock

    eraser = DataEraser.attach(env, EraserConfig(run_eraser=True, erase_period_ms=3_600_000), ManualClock())
    accounts = env.database("accounts")
    for round_ in range(8):  # accounts 10 to 19 are closed after round 3
        for i in range(20 if round_ < 4 else 10):
            accounts.put(f"acct{i:02d}", f"balance {round_} " * 8)
        if round_ == 3:
            for i in range(10, 20):
                accounts.delete(f"acct{i:02d}")
    env.checkpoint()
    eraser.run_cycle()
    erased = sum(1 for entry in env.log.scan() if entry.header.erased)
    print(f"the data eraser: one cycle, {erased} entries of deleted records overwritten in "
          f"{eraser.stats['eraserFilesErased']} files")
    files = env.log.end_lsn.file - env.log.head + 1
    env.clean_log()
    env.checkpoint()  # step 9 deletes the cleaned files
    stats = env.cleaner.stats
    print(f"the log cleaner: {stats['nCleanerRuns']} of {files} log files cleaned ({stats['nLNsMigrated']} live LNs "
          f"migrated), {stats['nCleanerDeletions']} deleted; the log now starts at {file_name(env.log.head)}")


def tour_replication(workdir: str) -> str:
    section("9. Replication: VLSNs and the VLSN index")
    from minidb.crashtest.replication import crash_sweep
    from minidb.logstore import EnvironmentConfig
    from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
    from minidb.replication.cases import worked_recovery_case

    path = os.path.join(workdir, "replication")
    disk = OSDisk(path, create=True)
    config = EnvironmentConfig(node_max_entries=8, file_max=2048, checkpoint_bytes_interval=None,
                               clock=lambda: 1_700_000_000.0)
    index_config = VLSNIndexConfig(stride=4, max_mappings=8)
    env = ReplicatedEnvironment.open(disk, config, index_config)
    accounts = env.database("accounts")
    for i in range(40):
        accounts.put(f"acct{i:02d}", str(100 + i))
    with env.begin() as txn:
        accounts.put("acct01", "50", txn=txn)
        accounts.put("acct02", "150", txn=txn)
    env.log_matchpoint()
    index = env.vlsn_index
    print(f"the creation of 'accounts', 40 records, a transaction and a Matchpoint in a replicated environment: "
          f"VLSNs {index.range}")
    print(f"{index.tracker.bucket_count} buckets (stride 4, at most 8 offsets each) keep "
          f"{index.mapping_count()} mappings:")
    for bucket in index.tracker.buckets():
        print(f"  {bucket.describe()}")
    forward = index.forward_scanner()
    entry = forward.find(23)
    print(f"VLSN 23: get_lte_lsn {index.get_lte_lsn(23)}, get_gte_lsn {index.get_gte_lsn(23)}; a forward scan "
          f"finds it at {entry.lsn} ({entry.type_name}) after {forward.entries_scanned} entries")
    got = []
    waiting = threading.Thread(target=lambda: got.append(index.wait_for_vlsn(index.range.last + 1, timeout=30)))
    waiting.start()
    index.await_waiter(index.range.last + 1, timeout=30)
    accounts.put("acct99", "1")
    waiting.join()
    print(f"a feeder thread waited for the next VLSN; a put woke it with {got[0]}")
    result = env.checkpoint()
    print(next(line for line in result.trace if line.startswith("step 6")))
    print(index.truncate_head_for_file(1).describe())
    env.close()
    again = ReplicatedEnvironment.open(disk, config, index_config)
    for line in again.vlsn_index.merge_result.lines():
        print(f"reopened: {line}")
    again.close()
    print("\nthe JE documentation's recovery example, crashed and recovered in the engine (real LSNs, the JE documentation's order):")
    for line in worked_recovery_case().lines():
        print(f"  {line}")
    sweep = crash_sweep(seed=0, ops=10)
    print_sweep("\nreplication crash sweep, seed 0, 10 operations", sweep)
    return path


def tour_pipeline(workdir: str) -> str:
    section("10. Environments for the data pipeline")
    from minidb.spark.generate import GenerateRequest, generate

    path = os.path.join(workdir, "envs")
    report = generate("logstore", GenerateRequest(path, envs=4, ops=400, seed=1, group=3))
    print(report.summary())
    return path


def tour_spark(envs: str, workdir: str) -> str:
    section("11. The data pipeline on Spark: every analysis over those environments")
    from pyspark import SparkContext
    from tqdm import tqdm

    from minidb.spark.pipeline import FIGURES, TABLES, analyze
    from minidb.spark.session import spark_session

    out = os.path.join(workdir, "spark")
    print(f"the same job as: minidb spark analyze {envs} --out {out}", flush=True)
    ours = SparkContext._active_spark_context is None  # stop only a Spark this tour started
    jvm_log = os.path.join(workdir, "spark-jvm.log")
    # small tables: 2 shuffle partitions; a tqdm bar, as minidb crashtest shows, instead of Spark's own
    spark = spark_session("local[*]", "minidb tour", shuffle_partitions=2, progress=False, jvm_log=jvm_log)
    print(f"Spark {spark.version} in local mode ({spark.sparkContext.master})"
          + (f"; the JVM's messages go to {jvm_log}" if ours else ""), flush=True)
    try:
        # every step drawn (17 of them), so the bar always shows its last, 17/17, before it is cleared
        with tqdm(total=len(TABLES) + len(FIGURES), desc="spark analyze", unit="step", file=sys.stderr,
                  leave=False, mininterval=0, miniters=1) as bar:
            result = analyze(spark, envs, out, done=lambda name: bar.update())
    finally:
        if ours:
            spark.stop()
    print(result.summary())
    return out


def tour_transactions(workdir: str) -> str:
    section("7. The page store: transactions, files of records, checkpoints, ARIES restart")
    from minidb.crashtest.pagestore import crash_sweep
    from minidb.pagestore import StorageManager, StoreId

    path = os.path.join(workdir, "transactions")
    disk = OSDisk(path, create=True)
    sm = StorageManager.format(disk, num_pages=256, ext_sz=8, page_size=4096, frames=16)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, f"record {i}".encode() * 3) for i in range(3)]
        big = sm.create_rec(t, fid, b"large " * 2000)
    print(f"T{t.txn_id} created file {fid} with records {', '.join(map(str, rids))} and a large record {big} "
          f"(its body on {len(sm.volume.store_pages(StoreId(fid.vol, sm.files.file_info(fid).large)))} pages of the large-record "
          f"store); committed")
    t = sm.begin()
    sm.update_rec(t, rids[0], 0, b"RECORD")
    sm.free_rec(t, rids[1])
    sm.create_rec(t, fid, b"never")
    print(f"T{t.txn_id} updated, freed and created records, then aborted; its rollback:")
    for step in sm.abort(t):
        print(f"  {step}")
    loser = sm.begin()
    sm.update_rec(loser, rids[2], 0, b"LOSER!")
    chkpt = sm.checkpoint()
    print(f"T{loser.txn_id} is in flight; {chkpt.summary()}")
    with sm.transaction() as t:
        sm.append_rec(t, rids[0], b" and more")
        sm.destroy_file(t, sm.create_file(t))
    print(f"T{t.txn_id} appended to {rids[0]}, created and destroyed a file, committed")
    sm.log.sync()
    print("crash: the process dies; the log is durable up to the last commit, most pages never reached the disk")
    sm = StorageManager.open(OSDisk(path), frames=16)
    print(sm.restart_report.summary())
    contents = sm.contents()[fid]
    print(f"after restart: {len(contents)} records in {fid}; {rids[0]} ends with {contents[rids[0]][1][-9:]!r}, "
          f"{rids[2]} starts with {contents[rids[2]][1][:8]!r}; the volume's maps: {sm.check() or 'consistent'}")
    sm.close()
    print_sweep("crash sweep of transactions (crash at every write and fsync, restart, compare with a model), "
                "seed 1, 16 operations", crash_sweep(seed=1, ops=16))
    return path


OWNER = "minidb tour"


def run(args) -> int:
    check_output(args.workdir, OWNER)  # both refused before anything is deleted or written
    check_output(args.out, figures.OWNER, OWNER)  # the figures' directory, shared with minidb figures
    with owned_output(args.workdir, OWNER), owned_output(args.out, figures.OWNER, command=OWNER):
        return tour(args)


def tour(args) -> int:
    print("minidb tour: every part of minidb that exists, bottom up")
    tour_disk()
    path = tour_log(args.workdir)
    tour_crash()
    tour_sweep()
    pagestore = tour_pagestore(args.workdir)
    tour_locks()
    transactions = tour_transactions(args.workdir)
    store = tour_logstore(args.workdir)
    replicated = tour_replication(args.workdir)
    envs = tour_pipeline(args.workdir)
    spark = tour_spark(envs, args.workdir)
    section("12. Figures")
    from minidb.viz.gallery import write_figures

    for written in write_figures(args.out):
        print(f"wrote {written}")
    print(f"\nnext: minidb printlog {path} | head   and   minidb verify {path}")
    print(f"      minidb printlog {pagestore} --type alloc_pages_in_ext | head")
    print(f"      minidb printlog {transactions} --type clr_rec_splice   (compensation entries)")
    print(f"      minidb printlog {store} --type IN   (the log store's log, with provisional flags)")
    print(f"      minidb printlog {replicated} --type Commit   (replicated entries, with their VLSNs)")
    print(f"      ls {spark}   (the analyses' Parquet tables and figures; minidb spark analyze {envs} runs them again)")
    return 0
