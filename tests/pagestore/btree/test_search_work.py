"""How much an index operation reads: one directory search per index until the directory changes or a
rollback ends, and a page search that decodes only the entries it probes, the page's headers read once."""

import math

import pytest

from minidb.pagestore import BadRequestError
from minidb.pagestore.btree.keydesc import KeyDescriptor
from minidb.pagestore.btree.keyed import KeyedPage
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.pages.slotted import SlottedPage

from tests.pagestore.sm_helpers import new_sm


def count_directory_searches(sm):
    """Wrap the store directory's ``get`` (a search of store 1's B+tree): the list of stores searched."""
    searched = []
    get = sm.directory.get

    def counting(snum):
        searched.append(snum)
        return get(snum)

    sm.directory.get = counting
    return searched


def test_transactions_search_the_directory_once_per_index_until_it_changes():
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4")
    searched = count_directory_searches(sm)
    with sm.transaction() as t:
        sm.index_insert(t, ix, 1, b"one")
        assert searched == [ix.store]
        sm.index_insert(t, ix, 2, b"two")
        assert sm.index_lookup(t, ix, 1) == [b"one"]
        assert list(sm.index_scan(t, ix)) == [(1, b"one"), (2, b"two")]
        assert searched == [ix.store]  # the next operations search the index's tree alone
    with sm.transaction() as t:  # another transaction: the directory has not changed, nothing to read again
        assert sm.index_lookup(t, ix, 2) == [b"two"]
    assert searched == [ix.store]
    with sm.transaction() as t:  # a new index changes the directory: the next operation reads it again
        other = sm.create_index(t, "i4")
        assert sm.index_lookup(t, ix, 2) == [b"two"]
    assert searched == [ix.store, ix.store]
    with sm.transaction() as t:
        sm.destroy_index(t, other)
    with sm.transaction() as t:  # and so does a destroyed one, committed
        assert sm.index_lookup(t, ix, 1) == [b"one"]
        with pytest.raises(BadRequestError, match="not an index"):
            sm.index_lookup(t, other, 1)
    assert searched[2:] == [other.store, ix.store, other.store]


def test_after_a_rollback_the_descriptor_is_read_again():
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4")
        sm.index_insert(t, ix, 1, b"one")
    searched = count_directory_searches(sm)
    t = sm.begin()
    point = sm.save_point(t)
    sm.destroy_index(t, ix)  # removes the entry: a descriptor read before is not trusted
    with pytest.raises(BadRequestError, match="not an index"):
        sm.index_lookup(t, ix, 1)
    sm.rollback_to(t, point)  # the destroy undone: the index is back, read again
    assert sm.index_lookup(t, ix, 1) == [b"one"]
    before = len(searched)
    other = sm.create_index(t, "i4")
    sm.index_insert(t, other, 5, b"five")
    point = sm.save_point(t)
    sm.index_insert(t, other, 6, b"six")
    sm.rollback_to(t, point)
    assert sm.index_lookup(t, other, 5) == [b"five"]
    assert searched[before:].count(other.store) >= 2  # once before the rollback, again after it
    sm.abort(t)
    with sm.transaction() as t2:
        assert sm.index_lookup(t2, ix, 1) == [b"one"]
        with pytest.raises(BadRequestError, match="not an index"):  # its creation was aborted
            sm.index_lookup(t2, other, 5)


class CountingPage(SlottedPage):
    """A slotted page that counts the slot-table entries read and the page header's ``nslots`` read."""

    __slots__ = ()
    slot_reads = 0
    header_reads = 0

    def _slot_pos(self, slot):
        CountingPage.slot_reads += 1
        return super()._slot_pos(slot)

    @property
    def nslots(self):
        CountingPage.header_reads += 1
        return SlottedPage.nslots.fget(self)

    @nslots.setter
    def nslots(self, value):
        SlottedPage.nslots.fset(self, value)


def test_a_page_search_decodes_only_the_entries_it_probes():
    sm = new_sm(page_size=8192, num_pages=64, frames=16)
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4")
        for k in range(300):
            sm.index_insert(t, ix, k, b"")
    page = sm.bp.fix(sm.indexes.index(ix).root, SH)
    try:
        kp = KeyedPage(page)
        n = kp.count
        assert kp.is_leaf and n == 300
        page.__class__ = CountingPage
        try:
            for k in (0, 150, 299, 1000):
                key = KeyDescriptor("i4").encode(k)
                CountingPage.slot_reads = CountingPage.header_reads = 0
                found = kp.position(key, True)
                assert found == min(k, n)
                # one probe per halving, plus slot 0 (the keyed header) read once; nslots read once
                assert CountingPage.slot_reads <= math.ceil(math.log2(n + 1)) + 1
                assert CountingPage.header_reads <= 1
        finally:
            page.__class__ = SlottedPage
    finally:
        sm.bp.unfix(page)

