"""The short paths of a record insert and a commit agree with the careful ones they stand for.

A transaction of one insert runs through several short paths: an entry's
values built in one dict display (:func:`apply_and_log` against the three merged dicts it was built from), a
small slot's tag packed from the lengths (:func:`small_slot` against
``RecTag.pack``), the histogram left alone when nothing moved, and counters
counted in place under latches already held. The seeded workload below runs
once as it is and once with the careful versions put back: the log and the
volume must come out byte for byte the same, and so must the counters.
"""

from __future__ import annotations

import random

import pytest

from minidb.errors import MinidbError
from minidb.pagestore.buffer.latch import EX, SH, Latch
from minidb.pagestore.files import file as file_module
from minidb.pagestore.files import recops, recpage
from minidb.pagestore.files.histogram import Histoid
from minidb.pagestore.pages import rectag
from minidb.pagestore.pages.rectag import RecFlags, RecTag
from minidb.pagestore.wal import logrec
from minidb.pagestore.wal.logrec import apply_and_log_careful

from tests.pagestore.helpers import wait_for_latch
from tests.pagestore.sm_helpers import new_sm

SEEDS = range(6)


# -- the careful versions -------------------------------------------------------------------
def careful_small_slot(hdr: bytes, body: bytes) -> bytes:
    return RecTag(len(hdr), RecFlags.SMALL, len(body)).pack() + bytes(hdr) + bytes(body)


def careful_insert(volume, xct, page, slot, data, user, placement=None):
    with recpage.acting_for(user, placement):
        return apply_and_log_careful(volume.log, page, logrec.PAGESTORE_TYPES["rec_insert"],
                                     {"slot": slot, "data": bytes(data)}, xct)


def put_back_careful(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logrec, "apply_and_log", apply_and_log_careful)  # (the image of a page made regular)
    for module in (recops, recpage, __import__("minidb.pagestore.volume.volume", fromlist=["x"]),
                   __import__("minidb.pagestore.btree.btree", fromlist=["x"]),
                   __import__("minidb.pagestore.btree.keyed", fromlist=["x"])):
        monkeypatch.setattr(module, "apply_and_log", apply_and_log_careful)
    monkeypatch.setattr(recops, "insert", careful_insert)
    monkeypatch.setattr(file_module, "small_slot", careful_small_slot)
    monkeypatch.setattr(rectag, "small_slot", careful_small_slot)


# -- the workload ------------------------------------------------------------------------------------
def workload(seed: int) -> tuple[dict[str, bytes], dict[str, dict[str, int]]]:
    """Seeded transactions of inserts (small and large), updates, frees, savepoints and aborts; the disk's
    files after a clean close, and the counters of the parts an insert and a commit count in."""
    rng = random.Random(seed)
    sm = new_sm(f"paths{seed}", num_pages=256, frames=24)
    with sm.transaction() as t:
        fids = [sm.create_file(t), sm.create_file(t, property="tmp")]
    rids: list = []
    for _ in range(60):
        t = sm.begin()
        for _ in range(rng.randrange(1, 4)):
            roll = rng.random()
            try:
                if roll < 0.55 or not rids:
                    size = rng.choice([3, 20, 60, 140, 700])
                    rids.append(sm.create_rec(t, rng.choice(fids), bytes(rng.randrange(256) for _ in range(size)),
                                              hdr=b"h" * rng.randrange(3)))
                elif roll < 0.75:
                    sm.update_rec(t, rng.choice(rids), 0, b"u" * rng.randrange(1, 4))
                elif roll < 0.85:
                    point = sm.save_point(t)
                    sm.create_rec(t, fids[0], b"gone" * rng.randrange(1, 10))
                    sm.rollback_to(t, point)
                else:
                    sm.free_rec(t, rids.pop(rng.randrange(len(rids))))
            except MinidbError:
                pass  # a record freed earlier in this run, or that does not fit: the same in both runs
        if rng.random() < 0.2:
            sm.abort(t)
        else:
            sm.commit(t, durable=rng.random() < 0.3)
    counters = {"xct": sm.xcts.stats.as_dict(), "file": sm.files.stats.as_dict(), "bp": sm.bp.stats.as_dict()}
    sm.close()
    return {name: sm.disk.open(name).read_all() for name in sorted(sm.disk.list())}, counters


@pytest.mark.parametrize("seed", SEEDS)
def test_an_insert_and_a_commit_write_what_the_careful_paths_write(seed: int, monkeypatch: pytest.MonkeyPatch):
    files, counters = workload(seed)
    with monkeypatch.context() as careful:
        put_back_careful(careful)
        careful_files, careful_counters = workload(seed)
    assert counters == careful_counters
    assert files.keys() == careful_files.keys()
    for name in files:
        assert files[name] == careful_files[name], f"{name} differs"


def test_an_entrys_values_keep_the_order_of_page_transaction_then_change():
    sm = new_sm("order")
    seen = []
    append = sm.log.append
    sm.log.append = lambda entry_type, values=None, **kw: seen.append(list(values)) or append(entry_type, values, **kw)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"hello")
    assert ["vol", "store", "page", "txn_id", "txn_prev_lsn", "slot", "data"] in seen


def test_small_slot_is_the_packed_tag_then_header_and_body():
    rng = random.Random(7)
    for _ in range(50):
        hdr, body = bytes(rng.randrange(256) for _ in range(rng.randrange(5))), bytes(rng.randrange(1, 300))
        assert rectag.small_slot(hdr, body) == careful_small_slot(hdr, body)


def test_histogram_update_counts_a_page_once_whatever_the_repeats():
    rng = random.Random(3)
    hist = Histoid(512)
    model: dict[int, int] = {}
    for _ in range(400):
        page, free = rng.randrange(8), rng.choice([0, 40, 40, 100, 300, 452])
        assert hist.update(page, free) == min(15, free // 32)
        model[page] = free
        assert hist.heap() == sorted(((p, f) for p, f in model.items()), key=lambda pf: (pf[1], pf[0]))
        assert sum(hist.counts) == len(model)


# -- latches --------------------------------------------------------------------------------------
def test_a_release_wakes_a_request_waiting_for_the_latch():
    latch = Latch()
    _, got = wait_for_latch(latch, EX, SH)
    assert got == [True] and latch.mode == SH and latch.waiting == 0
