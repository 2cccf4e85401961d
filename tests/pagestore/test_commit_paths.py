"""What a record insert and a commit write, and the latch they take first.

The entry's values come in the order page id, transaction, change; a small
record's slot is its packed tag, its user header and its body; the
free-space histogram counts a page once; a free latch is granted at once
and a release wakes a waiter. (The accelerated ``apply_and_log`` and file
manager are held to the reference by ``tests/agreement/scn_forward.py``.)
"""

from __future__ import annotations

import random

from minidb.pagestore.buffer.latch import EX, SH, Latch
from minidb.pagestore.files.histogram import Histoid
from minidb.pagestore.pages import rectag
from minidb.pagestore.pages.rectag import RecFlags, RecTag

from tests.pagestore.helpers import wait_for_latch
from tests.pagestore.sm_helpers import new_sm


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
        tag, got_hdr, got_body = rectag.split_slot(rectag.small_slot(hdr, body))
        assert (tag, got_hdr, got_body) == (RecTag(len(hdr), RecFlags.SMALL, len(body)), hdr, body)


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
