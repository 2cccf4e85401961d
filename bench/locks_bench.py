"""The lock manager: lock and unlock rates, uncontended and with conversions.

What it measures, each next to baselines measured in the same run, with the
same sequence of lock ids:

(a) *lock + unlock*: one transaction takes a short SH lock on each of 1,000
    records of one page (whose parents it already holds, so each call takes
    one lock) and unlocks it. Baselines: a ``threading.Lock`` acquire and
    release (the cheapest lock Python has: no names, no modes, no queue), and
    a *dict lock table*: a dict from lock id to ``{owner: mode}`` checked
    against the same compatibility table, with no hierarchy, queue, waiting,
    durations or statistics.
(b) *conversions*: SH on a record, then EX on it (a conversion by the
    supremum table), then unlock. Baseline: the dict table doing the same
    (the supremum stored in place).
(c) *transactions*: a transaction EX-locks 20 records spread over 4 pages
    (the implicit IX locks on the volume, the store and each page come with
    them) and releases everything at once, as at commit. Baseline: the dict
    table locking the 20 records (no parents) and dropping them.

Every figure is the median of :data:`REPEATS` repetitions, the scenarios interleaved; escalation is off (no
threshold), the trace is off. Each repetition is made under the main
implementation and the reference (:func:`bench.report.both`; the lock manager
is the one :func:`bench.report.chosen` finds), whose minidb rate gives the
fast ÷ reference table.
"""

from __future__ import annotations

import os
import threading

from tqdm import tqdm

from bench import report
from minidb.pagestore import RecordId
from minidb.pagestore.lock import LOCK_MANAGER, Duration, LockId
from minidb.pagestore.lock.modes import EX, NL, SH, LockMode, compatible, supremum

REPEATS = report.REPEATS
RECORDS = 1_000
ROUNDS = 20
TXNS = 2_000
TXN_RECORDS, TXN_PAGES = 20, 4

MINIDB, DICT, PLAIN = "minidb", "dict lock table", "threading.Lock"


class Owner:
    def __init__(self, txn_id: int):
        self.txn_id = txn_id


class DictLockTable:
    """The baseline: lock id -> {owner: mode}, checked with the same compatibility table."""

    def __init__(self) -> None:
        self.table: dict[LockId, dict[int, LockMode]] = {}

    def lock(self, owner: int, lock_id: LockId, mode: LockMode) -> None:
        holders = self.table.setdefault(lock_id, {})
        for other, held in holders.items():
            if other != owner and not compatible(mode, held):
                raise RuntimeError(f"{lock_id} is busy")
        holders[owner] = supremum(holders.get(owner, NL), mode)

    def unlock(self, owner: int, lock_id: LockId) -> None:
        holders = self.table[lock_id]
        del holders[owner]
        if not holders:
            del self.table[lock_id]


def records(page: int = 48, count: int = RECORDS) -> list[LockId]:
    return [LockId.record(RecordId(1, 3, page, slot)) for slot in range(count)]


def measure_lock_unlock() -> dict[str, float]:
    ids = records()
    lm = LOCK_MANAGER.call(escalation_threshold=None)
    owner = Owner(1)
    lm.lock(owner, ids[0].parent(), LockMode.IS)  # the parents, once

    def minidb() -> None:
        for _ in range(ROUNDS):
            for lid in ids:
                lm.lock(owner, lid, SH, Duration.SHORT)
                lm.unlock(owner, lid)

    table = DictLockTable()

    def dict_table() -> None:
        for _ in range(ROUNDS):
            for lid in ids:
                table.lock(1, lid, SH)
                table.unlock(1, lid)

    plain = threading.Lock()

    def plain_lock() -> None:
        for _ in range(ROUNDS):
            for _lid in ids:
                plain.acquire()
                plain.release()

    n = ROUNDS * len(ids)
    return {MINIDB: n / report.timed(minidb), DICT: n / report.timed(dict_table),
            PLAIN: n / report.timed(plain_lock)}


def measure_conversions() -> dict[str, float]:
    ids = records()
    lm = LOCK_MANAGER.call(escalation_threshold=None)
    owner = Owner(1)
    lm.lock(owner, ids[0].parent(), LockMode.IX)

    def minidb() -> None:
        for _ in range(ROUNDS):
            for lid in ids:
                lm.lock(owner, lid, SH, Duration.SHORT)
                lm.lock(owner, lid, EX, Duration.SHORT)
                lm.unlock(owner, lid)

    table = DictLockTable()

    def dict_table() -> None:
        for _ in range(ROUNDS):
            for lid in ids:
                table.lock(1, lid, SH)
                table.lock(1, lid, EX)
                table.unlock(1, lid)

    n = ROUNDS * len(ids)
    conversions = lm.stats["nConversions"]
    result = {MINIDB: n / report.timed(minidb), DICT: n / report.timed(dict_table)}
    result["conversions"] = lm.stats["nConversions"] - conversions
    return result


def measure_transactions() -> dict[str, float]:
    pages = [records(page, TXN_RECORDS // TXN_PAGES) for page in range(48, 48 + TXN_PAGES)]
    ids = [lid for slots in pages for lid in slots]
    lm = LOCK_MANAGER.call(escalation_threshold=None)

    def minidb() -> None:
        for txn_id in range(1, TXNS + 1):
            owner = Owner(txn_id)
            for lid in ids:
                lm.lock(owner, lid, EX)
            lm.release_all(owner)

    table = DictLockTable()

    def dict_table() -> None:
        for txn_id in range(1, TXNS + 1):
            for lid in ids:
                table.lock(txn_id, lid, EX)
            for lid in ids:
                table.unlock(txn_id, lid)

    n = TXNS * len(ids)
    granted = lm.stats["nGranted"]
    result = {MINIDB: n / report.timed(minidb), DICT: n / report.timed(dict_table)}
    result["locks_per_txn"] = (lm.stats["nGranted"] - granted) / TXNS
    return result


SCENARIOS = [
    ("a", "(a) lock + unlock, uncontended", "pairs/s", [DICT, PLAIN], measure_lock_unlock),
    ("b", "(b) lock SH, convert to EX, unlock", "records/s", [DICT], measure_conversions),
    ("c", "(c) transactions of 20 EX record locks", "record locks/s", [DICT], measure_transactions),
]


def run() -> str:
    load = os.getloadavg()[0]
    pairs: dict[str, list[tuple[dict[str, float], dict[str, float] | None]]] = {key: [] for key, *_ in SCENARIOS}
    with tqdm(total=len(SCENARIOS) * REPEATS, desc="bench locks", unit="run") as progress:
        for _ in range(REPEATS):
            for key, title, _unit, _baselines, measure in SCENARIOS:
                progress.set_postfix_str(title)
                pairs[key].append(report.both(measure))
                progress.update()
    results = {key: [main for main, _ in runs] for key, runs in pairs.items()}
    speedups = [report.Speedup.of(title, unit, report.pick(pairs[key], MINIDB)) for key, title, unit, *_ in SCENARIOS]
    rows, ratios = [], []
    ratio: dict[tuple[str, str], float] = {}
    rates: dict[str, float] = {}
    for key, title, unit, baselines, _ in SCENARIOS:
        mine = rates[key] = report.median([r[MINIDB] for r in results[key]])
        rows.append([title, "minidb", f"{report.fmt_rate(mine)} {unit}"])
        for baseline in baselines:
            theirs = report.median([r[baseline] for r in results[key]])
            ratio[key, baseline] = mine / theirs
            rows.append(["", baseline, f"{report.fmt_rate(theirs)} {unit}"])
            ratios.append([title, baseline, fmt_ratio(mine / theirs)])
    conversions = report.median([r["conversions"] for r in results["b"]])
    per_txn = report.median([r["locks_per_txn"] for r in results["c"]])
    return "\n".join([
        "## Lock manager (`bench/locks_bench.py`)",
        "",
        f"Measured {report.run_date()} on {report.machine_line()}; load average {load:.1f} when the run "
        f"began, {os.getloadavg()[0]:.1f} when it ended.",
        "",
        "One thread, no contention: what a lock request costs in itself. The *dict lock table* is a dict "
        "from lock id to `{owner: mode}` checked against the same compatibility table, with no hierarchy, "
        "queue, waiting, durations or statistics; `threading.Lock` is one unnamed mutex. Median of "
        f"{REPEATS} runs; escalation and the trace are off.",
        "",
        f"- **(a)** {ROUNDS} rounds over {RECORDS:,} records of one page: a short SH lock and its unlock "
        "(the page's parents held, so each call takes one lock).",
        f"- **(b)** The same records: SH, then EX (a conversion by the supremum table; {conversions:,.0f} "
        "conversions per run), then unlock.",
        f"- **(c)** {TXNS:,} transactions, each EX-locking {TXN_RECORDS} records on {TXN_PAGES} pages and "
        f"releasing all at once ({per_txn:g} locks granted per transaction with the implicit IX locks on "
        "the volume, the store and the pages).",
        "",
        report.table(["scenario", "system", "rate"], rows, right=[2]),
        "",
        report.table(["scenario", "baseline", "minidb ÷ baseline"], ratios, right=[2]),
        "",
        report.table(["figure", "measured", "target"],
                     [["(a) lock + unlock ÷ dict lock table", report.fmt_ratio(ratio["a", DICT], 3), "≥ 0.12×"]], right=[1, 2]),
        "",
        closing(ratio, rates, per_txn),
        "",
        report.speedup_table(speedups),
    ])


def fmt_ratio(value: float) -> str:
    """Like report.fmt_ratio, with a third decimal for the small ratios against bare mutexes."""
    return f"{value:.2f}×" if value >= 0.1 else f"{value:.3f}×"


def closing(ratio: dict[tuple[str, str], float], rates: dict[str, float], per_txn: float) -> str:
    pair_us = 1e6 / rates["a"]
    conversion_us = 1e6 / rates["b"] - pair_us
    return (
        f"A lock and its unlock take {pair_us:.0f} µs, {fmt_ratio(ratio['a', DICT])} the rate of the dict lock "
        f"table and {fmt_ratio(ratio['a', PLAIN])} that of a bare `threading.Lock`: each request validates "
        "its owner and lock id, looks for an ancestor that covers it, takes the manager's mutex, keeps a "
        "queue per lock, the owner's lock list, child counts for escalation and statistics; the unlock "
        f"checks the duration and the locks below. A conversion adds {conversion_us:.0f} µs "
        f"({fmt_ratio(ratio['b', DICT])} of the dict table for the three calls). A transaction's record "
        f"locks run at {fmt_ratio(ratio['c', DICT])} of the dict table's rate, although minidb grants "
        f"{per_txn:g} locks where the dict table takes {TXN_RECORDS}: after each page's first record the "
        "parents are found already held. The usual request (an owner with an int id, a lock id, a mode "
        "and a duration, no timeout) is checked by its types inline, and the ancestors' modes are looked "
        "up in tables indexed by the mode rather than by hashing Enum members; a granted request keeps "
        "the owner's request one level up and the count of its locks directly below it, so neither the "
        "grant nor the unlock looks a lock id up for these books (a lock id is a tuple, which Python "
        "hashes anew at each look-up); the request looks up its parent's request alone and checks the "
        "ancestors above it along these links. A lock nobody else holds is granted and unlocked with the "
        "owner's bookkeeping inline (no call per step), and its unlock leaves the head and the request "
        "for the next such grant to reuse; the mutex is taken by its bound acquire and release (a with "
        "statement on an RLock costs twice as much). What is left is the request itself in Python: the "
        "owner and type checks, the mutex, the thread's fingerprint, eight hashes of lock ids per pair "
        "(the ancestors' cache, the parent, the lock table twice and the owner's locks for the lock; the "
        "owner's locks twice and the lock table for the unlock) and a queue per lock. A timed run on a "
        "machine shared with other work moves these ratios by a few hundredths."
    )
