"""The page store's forward path: record inserts, updates, frees, rollbacks, large records and destroyed
files, logged under WAL, then a crash and the restart after it.

What each twin could get wrong shows up here: ``apply_and_log`` building an
entry's values (the log's bytes), the file manager remembering a file's
descriptor or a page's allocation past a rollback, a freed page or a
destroyed file (an insert lands on another page, or into no file, and the
log and volume differ). The buffer pool has more frames than the volume has
pages, so no page is evicted: the fast file manager fixes the extent-map and
directory pages less often, and with evictions that alone would change
which pages are written when.

A transaction that will be rolled back stops at its first free: on main,
when it then inserted on the same page, the insert could take the freed
record's reserved bytes for a new slot entry, which undoing the insert does
not give back, and the rollback failed to put the freed record back
(``RecordWontFitError``). That is a matter of space reservation, the same
in both implementations, and not what this scenario compares.
"""

from __future__ import annotations

import random
from typing import Any

from minidb.errors import MinidbError
from minidb.io import CrashMode
from minidb.pagestore.ids import PageId
from minidb.pagestore.sm import StorageManager

from tests.agreement.scenarios import disk_state, scenario
from tests.pagestore.sm_helpers import OPTIONS, new_sm

APPLY_AND_LOG = "pagestore.wal.logrec.apply_and_log"
FILE_MANAGER = "pagestore.files.file.FileManager"
NUM_PAGES, FRAMES = 160, 192  # every page fits the pool: nothing is evicted


def body(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.choice([3, 20, 60, 140, 300, 700, 1500])))


def one_step(sm: StorageManager, rng: random.Random, t: Any, files: list, rids: list, answers: list) -> str:
    """One seeded operation of ``t``; its answer (a record id, or the error's class) goes to ``answers``,
    and its kind is returned."""
    roll = rng.random()
    try:
        if roll < 0.45 or not rids:
            rid = sm.create_rec(t, rng.choice(files), body(rng), hdr=b"h" * rng.randrange(3))
            rids.append(rid)
            answers.append(("insert", rid))
        elif roll < 0.6:
            rid = rng.choice(rids)
            sm.update_rec(t, rid, 0, b"u" * rng.randrange(1, 4))
            answers.append(("update", rid))
        elif roll < 0.7:
            point = sm.save_point(t)
            fid = sm.create_file(t) if rng.random() < 0.3 else files[0]
            sm.create_rec(t, fid, b"gone" * rng.randrange(1, 40))
            sm.rollback_to(t, point)
            answers.append(("savepoint", None))
            if fid != files[0]:
                into_gone_files(sm, None, [fid], answers)
        elif roll < 0.85:
            rid = rids.pop(rng.randrange(len(rids)))
            sm.free_rec(t, rid)
            answers.append(("free", rid))
        elif roll < 0.93:
            fid = sm.create_file(t, property=rng.choice(["regular", "regular", "tmp"]))
            files.append(fid)
            answers.append(("create_file", fid))
        elif len(files) > 1:
            gone = files.pop(rng.randrange(1, len(files)))
            sm.destroy_file(t, gone)
            answers.append(("destroy_file", gone))
            into_gone_files(sm, t, [gone], answers)
    except MinidbError as e:  # a record freed earlier, a file destroyed, no room: the same in both runs
        answers.append(("refused", type(e).__name__))
    return answers[-1][0] if answers else ""


def steps(sm: StorageManager, rng: random.Random, t: Any, files: list, rids: list, answers: list, count: int,
          rolled_back: bool) -> None:
    """``count`` steps of ``t``. One that will be rolled back stops at its first free: an insert after it
    may take the freed record's reserved bytes for a new slot entry, and rollback could not put the record
    back (see the module documentation)."""
    for _ in range(count):
        if one_step(sm, rng, t, files, rids, answers) == "free" and rolled_back:
            return


def contents(sm: StorageManager, files: list, seen: list) -> list:
    """Every record of every file still there, and the allocation the file manager answers for every page
    a record was ever put on (freed pages included) in each file."""
    out: list = []
    with sm.transaction() as t:
        for fid in files:
            try:
                records = [(r.rid, r.hdr, r.body) for r in sm.scan(t, fid)]
            except MinidbError as e:
                out.append((fid, type(e).__name__))
                continue
            pages = sorted({rid.page for rid in seen if rid.store == fid.store})
            out.append((fid, records, [sm.files.page_allocation(PageId(fid.vol, fid.store, p)) for p in pages]))
    return out


def inserted(answers: list) -> list:
    """Every record id an insert answered so far."""
    return [answer[1] for answer in answers if answer[0] == "insert"]


def into_gone_files(sm: StorageManager, t: Any, fids: list, answers: list) -> None:
    """An insert by ``t`` (None: a transaction of its own) into each file destroyed or whose creation was
    rolled back: refused, as into no file."""
    for fid in fids:
        try:
            if t is None:
                with sm.transaction() as own:
                    answers.append(("insert into a gone file", sm.create_rec(own, fid, b"nowhere")))
            else:
                answers.append(("insert into a gone file", sm.create_rec(t, fid, b"nowhere")))
        except MinidbError as e:
            answers.append(("insert into a gone file", type(e).__name__))


@scenario(APPLY_AND_LOG, FILE_MANAGER)
def transactions_crash_and_restart(seed: int) -> dict[str, Any]:
    """Seeded transactions (committed, some durably, some aborted), one left active at the crash; the
    restart rolls it back; more inserts after it, then a clean close."""
    rng = random.Random(seed)
    sm = new_sm(f"forward{seed}", num_pages=NUM_PAGES, frames=FRAMES)
    with sm.transaction() as t:
        files = [sm.create_file(t), sm.create_file(t)]
    rids: list = []
    answers: list = []
    for _ in range(40):
        t = sm.begin()
        kept_files, kept_rids = list(files), list(rids)
        aborts = rng.random() < 0.2
        steps(sm, rng, t, files, rids, answers, rng.randrange(1, 5), aborts)
        if aborts:
            sm.abort(t)
            into_gone_files(sm, None, [f for f in files if f not in kept_files], answers)
            files, rids = kept_files, kept_rids
        else:
            sm.commit(t, durable=rng.random() < 0.4)
    answers.append(contents(sm, files, inserted(answers)))
    with sm.transaction() as t:  # the first file emptied: its pages but the first are freed
        for rid in [r for r in rids if r.store == files[0].store]:
            sm.free_rec(t, rid)
    rids = [r for r in rids if r.store != files[0].store]
    answers.append(contents(sm, files, inserted(answers)))
    counters = {"xct": sm.xcts.stats.as_dict(), "file": sm.files.stats.as_dict()}
    loser = sm.begin()
    steps(sm, rng, loser, list(files), list(rids), answers, 4, True)
    if rng.random() < 0.5:
        sm.log.sync()  # the loser's entries durable: restart must undo them
    disk = sm.disk
    disk.crash(CrashMode.nothing())
    sm = StorageManager.open(disk, frames=FRAMES, **OPTIONS)
    files = [fid for fid in files if fid in set(sm.files.files())]
    answers.append(contents(sm, files, inserted(answers)))
    for _ in range(5):
        t = sm.begin()
        steps(sm, rng, t, files, rids, answers, rng.randrange(1, 4), False)
        sm.commit(t)
    answers.append(contents(sm, files, inserted(answers)))
    counters["after restart"] = {"xct": sm.xcts.stats.as_dict(), "file": sm.files.stats.as_dict()}
    sm.close()
    return {"disk": disk_state(disk), "answers": answers, "counters": counters}
