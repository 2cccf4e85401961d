"""Log space of the page store: log bytes per committed transaction, and restart with and without scavenging.

(a) *log bytes per committed transaction*: transactions of one 100-byte
    record insert each (committed without forcing the log), on an unbounded
    log and on a bounded one (``log_size``, 8 partitions, reservations). The
    log bytes appended per commit, and the log space a transaction holds
    reserved for its rollback just before it commits. Reservation is
    bookkeeping: it logs nothing.
(b) *restart with scavenging against without*: the same workload (updates
    and inserts in transactions of 8, a checkpoint every CHKPT_EVERY
    transactions, 3 transactions in flight at the end, the log synced) run
    once with scavenging and once without; the files are copied as a crash
    leaves them and opened (restart). Both restarts read the log from the
    master checkpoint on; with scavenging, each checkpoint also writes the
    pages that hold older log files, so redo starts later.

Every figure is the median of :data:`REPEATS` runs, interleaved, in fresh files under ``bench/out/``.
The restarts are timed under the main implementation and the reference
(:func:`bench.report.both`); the byte counts of (a) are the same under both.
"""

from __future__ import annotations

import os
import random

from tqdm import tqdm

from bench import report
from minidb.io import OSDisk
from minidb.log import log_file_numbers
from minidb.pagestore import StorageManager

SEED = 1993
PAGE_SIZE = 8192
NUM_PAGES = 4096
FRAMES = 128
RECORD = 100
REPEATS = report.REPEATS
TXNS = 2_000
LOG_SIZE = 16 * 1024 * 1024
PARTITIONS = 8
RESTART_TXNS = 1_500
CHKPT_EVERY = 250
FILE_MAX = 256 * 1024


def new_sm(path: str, **options) -> StorageManager:
    return StorageManager.format(OSDisk(os.path.join(path, "db"), create=True), num_pages=NUM_PAGES, ext_sz=8,
                                 page_size=PAGE_SIZE, frames=FRAMES, restart_trace=False, **options)


def bytes_per_commit(bounded: bool, rng: random.Random) -> dict[str, float]:
    options = {"log_size": LOG_SIZE, "partitions": PARTITIONS} if bounded else {}
    with report.scratch_dir("logspace-commit-") as path:
        sm = new_sm(path, **options)
        with sm.transaction() as t:
            fid = sm.create_file(t)
        before = sm.log.stats["nBytes"]
        held = 0
        for _ in range(TXNS):
            t = sm.begin()
            sm.create_rec(t, fid, bytes(rng.randrange(32, 127) for _ in range(RECORD)))
            if sm.log_space is not None:
                held = sm.log_space.held(t.txn_id)
            sm.commit(t, durable=False)
        logged = (sm.log.stats["nBytes"] - before) / TXNS
        sm.close()
    return {"bytes": logged, "held": held}


def restart(scavenge: bool, rng: random.Random) -> dict[str, float]:
    with report.scratch_dir("logspace-restart-") as path:
        sm = new_sm(path, file_max=FILE_MAX, scavenge=scavenge)
        with sm.transaction() as t:
            fid = sm.create_file(t)
        rids: list = []
        for n in range(RESTART_TXNS):
            t = sm.begin()
            for _ in range(8):
                body = bytes(rng.randrange(32, 127) for _ in range(RECORD))
                if rids and rng.random() < 0.3:
                    sm.update_rec(t, rng.choice(rids), 0, body[:50])
                else:
                    rids.append(sm.create_rec(t, fid, body))
            sm.commit(t, durable=False)
            if n % CHKPT_EVERY == CHKPT_EVERY - 1:
                sm.checkpoint()
        for _ in range(3):
            t = sm.begin()
            sm.create_rec(t, fid, b"in flight" * 10)
        sm.log.sync()
        files = len(log_file_numbers(sm.disk))
        crashed = os.path.join(path, "crashed")
        report.crash_copy(os.path.join(path, "db"), crashed)
        holder: dict[str, StorageManager] = {}
        seconds = report.timed(lambda: holder.setdefault("sm", StorageManager.open(
            OSDisk(crashed), frames=FRAMES, file_max=FILE_MAX, restart_trace=False, scavenge=scavenge)))
        report_ = holder["sm"].restart_report
        holder["sm"].close()
        sm.log.close(sync=False)
    return {"seconds": seconds, "files": files, "read": report_.analysis.entries_read,
            "redo": report_.redo.entries_read}


def run() -> str:
    results: dict[str, list[dict[str, float]]] = {"plain": [], "bounded": [], "kept": [], "scavenged": []}
    pairs: dict[str, list[tuple[dict, dict | None]]] = {"kept": [], "scavenged": []}
    with tqdm(total=4 * REPEATS, desc="bench logspace", unit="run") as progress:
        for repeat in range(REPEATS):
            for key, work in (("plain", lambda rng: bytes_per_commit(False, rng)),
                              ("bounded", lambda rng: bytes_per_commit(True, rng)),
                              ("kept", lambda rng: restart(False, rng)),
                              ("scavenged", lambda rng: restart(True, rng))):
                if key in pairs:
                    pairs[key].append(report.both(lambda work=work, seed=SEED + repeat: work(random.Random(seed))))
                    results[key].append(pairs[key][-1][0])
                else:
                    results[key].append(work(random.Random(SEED + repeat)))
                progress.update()
    speedups = [report.Speedup.of(f"(b) restart {name}", "s", report.pick(pairs[key], "seconds"),
                                  higher_is_faster=False)
                for key, name in (("kept", "without scavenging"), ("scavenged", "with scavenging"))]

    def med(key: str, field: str) -> float:
        return report.median([r[field] for r in results[key]])

    rows = [
        ["(a) unbounded log", f"{med('plain', 'bytes'):,.0f}", "—"],
        [f"(a) bounded log ({LOG_SIZE // report.MB} MB, {PARTITIONS} partitions)", f"{med('bounded', 'bytes'):,.0f}",
         f"{med('bounded', 'held'):,.0f}"],
    ]
    restarts = [
        [f"(b) {name}", f"{med(key, 'files'):g}", f"{med(key, 'read'):,.0f}", f"{med(key, 'redo'):,.0f}",
         f"{med(key, 'seconds'):.3f}"] for key, name in (("kept", "without scavenging"), ("scavenged", "with scavenging"))
    ]
    return "\n".join([
        "## Log space (`bench/logspace_bench.py`)",
        "",
        f"Measured {report.run_date()} on {report.machine_line()}; files on {report.file_system()}.",
        "",
        f"Pages of {PAGE_SIZE} bytes, a buffer pool of {FRAMES} frames; records of {RECORD} bytes; "
        f"median of {REPEATS} runs.",
        "",
        f"- **(a)** {TXNS:,} transactions of one record insert each, committed without forcing the log.",
        f"- **(b)** {RESTART_TXNS:,} transactions of 8 inserts and updates, a checkpoint every {CHKPT_EVERY}, "
        f"log files of {FILE_MAX // 1024} KiB, 3 transactions in flight at the crash.",
        "",
        report.table(["scenario", "log bytes per commit", "bytes reserved before commit"], rows, right=[1, 2]),
        "",
        report.table(["scenario", "log files on disk", "entries analysed", "entries read by redo", "restart s"],
                     restarts, right=[1, 2, 3, 4]),
        "",
        "Reservation logs nothing: a commit costs the same log bytes on either log, while the transaction "
        "holds reserved, until it ends, about one and a half times its entries' size, its end, and one whole "
        f"page image ({PAGE_SIZE:,} bytes) for each page it changes: undoing a change may find the page "
        "clean again, and a clean page's first change logs its image first. The images themselves are logged "
        "only when a page goes from clean to dirty: here once per page, a byte or so per commit. "
        "Analysis reads the log from the master checkpoint either way; the difference is redo's: a "
        "scavenging checkpoint first writes the pages whose recovery LSN lies in an older log file (they "
        "would hold it), so the next restart's redo starts near the checkpoint instead of at the oldest "
        "page dirtied since the pool was last cleaned, and the files before it are gone from the disk.",
        "",
        report.speedup_table(speedups),
    ])
