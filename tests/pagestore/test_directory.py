"""The store directory (store 1) and the root index (store 2) as B+trees: transactional, crash-safe, checked."""

import re

import pytest

from minidb.cli import main
from minidb.io import CrashMode, OSDisk
from minidb.pagestore.btree.keyed import KeyedPage
from minidb.pagestore.btree.verify import check_tree
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.directory import check_directory
from minidb.pagestore.directory.rootindex import NAME
from minidb.pagestore.directory.stdir import KEY
from minidb.pagestore.errors import BadRequestError, PageStoreCorruptionError, VolumeError
from minidb.pagestore.files.sinfo import SINFO, LockProtocol, SInfo, StoreKind
from minidb.pagestore.pages.page import PageTag, StoreFlags
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.verify import verify_pagestore
from minidb.pagestore.volume.volfile import volume_file_name

from tests.pagestore.sm_helpers import OPTIONS, new_sm, open_again, reopen


def problems(sm):
    return check_directory(sm.volume, sm.directory, sm.root_index)


def stores_in_use(sm):
    return {s.store for s in sm.volume.stores()}


def test_a_fresh_volume_has_two_empty_btrees_at_the_roots_its_header_records():
    sm = new_sm()
    header = sm.volume.header
    for tree, root in ((sm.directory.tree, header.directory_root), (sm.root_index.tree, header.root_index_root)):
        assert sm.volume.store_pages(tree.root.stid) == [tree.root] and tree.root.page == root
        page = sm.bp.fix(tree.root, SH)
        try:
            assert page.tag == PageTag.BTREE and KeyedPage(page).is_leaf and KeyedPage(page).count == 0
        finally:
            sm.bp.unfix(page)
    assert (header.directory_root, header.root_index_root, header.format_version) == (8, 12, 3)
    assert problems(sm) == [] and sm.files.files() == [] and sm.index_names() == {}


def test_descriptors_are_btree_entries_keyed_by_store_number():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        ix = sm.create_index(t, "u2,str", unique=False)
    found, entries = check_tree(sm.bp, sm.directory.tree.root, True)
    assert found == []
    assert [(KEY.decode(k), SInfo.unpack(KEY.decode(k), el)) for k, el in entries] == [
        (fid.store, SInfo(fid.store, StoreKind.FILE, fid.store + 1, cc=LockProtocol.RECORD)),
        (ix.store, SInfo(ix.store, StoreKind.INDEX, root=sm.indexes.index(ix).root.page, unique=False,
                         kdesc=b"u2,str", cc=LockProtocol.KVL)),
    ]


def test_descriptor_bytes_and_a_bad_version_is_damage():
    info = SInfo(5, StoreKind.INDEX, root=24, unique=True, kdesc=b"i4", cc=LockProtocol.KVL)
    data = info.pack()
    assert data == bytes([1, 3, 2, 1]) + (0).to_bytes(4, "little") + (24).to_bytes(4, "little") + b"\x02\x00i4"
    assert SINFO.size == 14 and SInfo.unpack(5, data) == info
    with pytest.raises(PageStoreCorruptionError, match="descriptor of store 5 .* version 9"):
        SInfo.unpack(5, b"\x09" + data[1:])
    with pytest.raises(PageStoreCorruptionError, match="descriptor of store 5"):
        SInfo.unpack(5, data[:-1])


def test_many_stores_split_the_directory_and_a_rollback_keeps_the_splits_not_the_entries():
    sm = new_sm(num_pages=2048)
    with sm.transaction() as t:
        kept = [sm.create_file(t) for _ in range(40)]
    t = sm.begin()
    gone = [sm.create_file(t) for _ in range(40)]
    assert len(sm.volume.store_pages(sm.directory.stid)) > 1  # it split
    assert sm.files.file_info(gone[-1]).large == gone[-1].store + 1
    sm.abort(t)
    assert sm.files.files() == kept
    assert all(sm.directory.get(f.store) is None for f in gone)
    assert problems(sm) == []


def test_a_create_rolled_back_leaves_no_entry_and_a_destroy_rolled_back_brings_it_back():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
    t = sm.begin()
    sm.destroy_file(t, fid)
    assert sm.directory.get(fid.store) is None
    new = sm.create_file(t)
    sm.abort(t)
    assert sm.files.files() == [fid] and sm.directory.get(new.store) is None
    assert sm.files.file_info(fid).large == fid.store + 1
    assert problems(sm) == []


def test_a_committed_create_survives_a_crash_and_an_uncommitted_one_goes():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        ix = sm.create_index(t, "i4", name="kept")
    t = sm.begin()
    loser = sm.create_file(t)
    sm.create_index(t, "i4", name="lost")
    sm.destroy_index(t, ix)
    sm.bp.force_all()  # the loser's changes on disk: restart must undo them
    sm = reopen(sm, "crash")
    assert sm.files.files() == [fid] and sm.directory.get(loser.store) is None
    assert sm.indexes.indexes() == [ix] and sm.index_names() == {"kept": ix}
    assert stores_in_use(sm) == {1, 2, fid.store, fid.store + 1, ix.store}
    assert problems(sm) == []


def test_named_indexes_are_found_listed_refused_twice_and_dropped_with_their_index():
    sm = new_sm()
    with sm.transaction() as t:
        a = sm.create_index(t, "i4", name="orders")
        b = sm.create_index(t, "str", name="customers")
        sm.create_index(t, "i4")  # unnamed
    assert sm.find_index("orders") == a and sm.find_index("nobody") is None
    assert sm.index_names() == {"customers": b, "orders": a}
    before, end = stores_in_use(sm), sm.log.end_lsn
    with sm.transaction() as t:
        with pytest.raises(BadRequestError, match=r"index name 'orders' is taken by s\(1\.\d+\)"):
            sm.create_index(t, "u4", name="orders")
        with pytest.raises(BadRequestError, match="non-empty string"):
            sm.create_index(t, "u4", name="")
        with pytest.raises(BadRequestError, match="at most"):
            sm.create_index(t, "u4", name="x" * 200)
    assert stores_in_use(sm) == before and sm.log.end_lsn == end  # nothing created, nothing logged
    with sm.transaction() as t:
        sm.destroy_index(t, a)
    assert sm.index_names() == {"customers": b}
    with sm.transaction() as t:
        assert sm.create_index(t, "i8", name="orders") != b  # the name is free again


def test_rolled_back_named_creates_and_destroys():
    sm = new_sm()
    with sm.transaction() as t:
        a = sm.create_index(t, "i4", name="a")
    t = sm.begin()
    sm.destroy_index(t, a)
    sm.create_index(t, "i4", name="b")
    assert set(sm.index_names()) == {"b"}
    sm.abort(t)
    assert sm.index_names() == {"a": a} and problems(sm) == []


def test_a_partial_named_create_rolls_back_to_where_it_began():
    sm = new_sm()
    t = sm.begin()
    fid = sm.create_file(t)
    inserts = []
    real = sm.root_index.tree.insert

    def failing(xct, key, el):
        inserts.append(key)
        raise BadRequestError("refused here")

    sm.root_index.tree.insert = failing
    with pytest.raises(BadRequestError, match="refused here"):
        sm.create_index(t, "i4", name="half")
    sm.root_index.tree.insert = real
    assert inserts and sm.indexes.indexes() == [] and sm.files.files() == [fid]  # the index's store is undone
    sm.commit(t)
    assert problems(sm) == []


def test_verify_checks_the_directory():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        sm.create_index(t, "i4", name="ok")
    sm.close()
    assert verify_pagestore(sm.disk).stores == 5
    damages = {
        "name": lambda s, t: s.root_index.tree.insert(t, NAME.encode("bad"), fid.store.to_bytes(4, "little")),
        "no entry": lambda s, t: s.volume.create_store(StoreFlags.REGULAR, t),
        "decode": lambda s, t: s.directory.tree.insert(t, KEY.encode(60), b"\x07junk"),
        "missing store": lambda s, t: s.directory.add(t, SInfo(61, StoreKind.FILE, 62)),
    }
    expected = {"name": "index name 'bad' points at store 3, which is not an index",
                "no entry": "in use but the store directory has no entry",
                "decode": "descriptor of store 60 .* does not decode",
                "missing store": "entry for store 61 .* names store 61, which is not in use"}
    base = sm.disk
    for what, damage in damages.items():
        sm = open_again(base.crash_image(len(base.events) - 1, CrashMode.nothing()))
        with sm.transaction() as t:
            damage(sm, t)
        assert any(re.search(expected[what], p) for p in problems(sm)), (what, problems(sm))
        sm.close()
        with pytest.raises(PageStoreCorruptionError, match=r"store directory|s\(1\.1\)"):
            verify_pagestore(sm.disk)  # found by the check, or already by restart's reading of the directory


def test_an_old_format_volume_is_refused_in_one_line(tmp_path, capsys):
    disk = OSDisk(tmp_path / "ps", create=True)
    StorageManager.format(disk, num_pages=64, ext_sz=4, page_size=512, **OPTIONS).close()
    with disk.open(volume_file_name(1)) as f:
        f.write(48 + 8, (1).to_bytes(4, "little"))  # the header record's version (slot 0 of page 0)
    with pytest.raises(VolumeError, match="volume format version 1, this minidb reads version 3 only"):
        StorageManager.open(disk, **OPTIONS)
    assert main(["verify", str(tmp_path / "ps")]) == 2
    out, err = capsys.readouterr()
    assert len((out + err).strip().splitlines()) == 1 and "format version 1" in out + err


# -- names are locked (key-value locks on the root index) -------------------------------------------
def named_sm(*names):
    from minidb.pagestore.lock import LockManager
    lm = LockManager(escalation_threshold=None)
    sm = new_sm(locking=lm)
    with sm.transaction() as t:
        for name in names:
            sm.create_index(t, "i4", name=name)
    return sm, lm


@pytest.mark.parametrize("first_ends", ["commit", "abort"])
def test_a_name_being_created_waits_for_its_creator(first_ends):
    """T2 asks for the name T1 is creating: it waits; T1's commit refuses it, T1's abort gives it the name."""
    from minidb.pagestore.lock import Interleaving
    sm, lm = named_sm()
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "create a", lambda: sm.create_index(t1, "i4", name="a"))
        second = script.run(t2, "create a", lambda: sm.create_index(t2, "i4", name="a"))
        assert second.status == "blocked"
        assert "k(1.2.'a')" in sm.lock_table()
        script.run(t1, first_ends, lambda: getattr(sm, first_ends)(t1))
        assert second.status in ("done", "raised")
        if first_ends == "commit":
            assert isinstance(second.error, BadRequestError) and "is taken" in str(second.error)
        else:
            assert second.status == "done" and second.result == sm.find_index("a")
        script.run(t2, "commit", lambda: sm.commit(t2))
    assert list(sm.index_names()) == ["a"] and problems(sm) == []


@pytest.mark.parametrize("first_ends", ["commit", "abort"])
def test_a_name_being_dropped_is_not_given_again_before_the_drop_ends(first_ends):
    """T1 drops index a; T2 creating a waits. Without the lock T2 would get the name at once, and T1's
    abort would then bring back a name that T2 holds."""
    from minidb.pagestore.lock import Interleaving
    sm, lm = named_sm("a", "b")
    old = sm.find_index("a")
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "destroy a", lambda: sm.destroy_index(t1, old))
        second = script.run(t2, "create a", lambda: sm.create_index(t2, "i4", name="a"))
        assert second.status == "blocked"
        script.run(t1, first_ends, lambda: getattr(sm, first_ends)(t1))
        if first_ends == "commit":
            assert second.status == "done" and second.result != old
        else:
            assert isinstance(second.error, BadRequestError) and "is taken" in str(second.error)
        script.run(t2, "commit", lambda: sm.commit(t2))
    assert sorted(sm.index_names()) == ["a", "b"] and problems(sm) == []
    assert (sm.find_index("a") == old) == (first_ends == "abort")


def test_a_name_looked_up_in_a_transaction_cannot_appear_until_it_ends():
    """T1 finds no index c (SH on the next name, or on the end of the index); T2 creating c waits."""
    from minidb.pagestore.lock import Interleaving
    sm, lm = named_sm("a", "d")
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        assert script.run(t1, "find c", lambda: sm.find_index("c", t1)).result is None
        create = script.run(t2, "create c", lambda: sm.create_index(t2, "i4", name="c"))
        assert create.status == "blocked"
        assert script.run(t1, "find c again", lambda: sm.find_index("c", t1)).result is None
        script.run(t1, "commit", lambda: sm.commit(t1))
        assert create.status == "done"
        script.run(t2, "commit", lambda: sm.commit(t2))
    assert sorted(sm.index_names()) == ["a", "c", "d"]
