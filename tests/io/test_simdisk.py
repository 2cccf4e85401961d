"""The simulated disk: what survives each kind of crash, the write record, faults."""

import pytest

from minidb.errors import DiskError, DiskFullError, SimulatedCrash
from minidb.io import CrashMode, SimDisk, crash_points


def ledger():
    """A file with 'AAAA' fsynced, then three unsynced writes."""
    disk = SimDisk("t")
    f = disk.open("f", create=True)
    f.append(b"AAAA")
    f.fsync()
    f.append(b"BBBB")
    f.append(b"CCCC")
    f.write(0, b"xx")
    return disk, f


def content(disk, name="f"):
    with disk.open(name) as f:
        return f.read_all()


@pytest.mark.parametrize("mode, expected", [
    (CrashMode.nothing(), b"AAAA"),
    (CrashMode.everything(), b"xxAABBBBCCCC"),
    (CrashMode.prefix(1), b"AAAABBBB"),
    (CrashMode.prefix(2), b"AAAABBBBCCCC"),
    (CrashMode.prefix(1, torn=2), b"AAAABBBBCC"),
    (CrashMode.torn(1), b"xAAABBBBCCCC"),
])
def test_crash_modes(mode, expected):
    disk, _ = ledger()
    disk.crash(mode)
    assert content(disk) == expected


def test_random_crash_is_seeded_and_a_subset():
    outcomes = set()
    for seed in range(40):
        disk, _ = ledger()
        disk.crash(CrashMode.random(seed))
        again, _ = ledger()
        again.crash(CrashMode.random(seed))
        assert content(disk) == content(again)
        outcomes.add(content(disk))
    # every subset of the three writes shows up; a lost middle write leaves zeros
    assert b"AAAA\0\0\0\0CCCC" in outcomes
    assert b"AAAA" in outcomes and b"xxAABBBBCCCC" in outcomes
    assert len(outcomes) == 8


def test_fsync_makes_writes_durable_per_file():
    disk = SimDisk()
    f, g = disk.open("f", create=True), disk.open("g", create=True)
    f.append(b"f1")
    g.append(b"g1")
    f.fsync()
    assert disk.pending_ops() == 1
    assert disk.durable_bytes("f") == b"f1" and disk.durable_bytes("g") == b""
    disk.crash()
    assert content(disk, "f") == b"f1" and content(disk, "g") == b""


def test_handles_die_in_a_crash():
    disk, f = ledger()
    disk.crash()
    with pytest.raises(DiskError, match="lost in a crash"):
        f.append(b"z")
    with disk.open("f") as f2:
        f2.append(b"ok")
    assert content(disk) == b"AAAAok"


def test_metadata_is_durable_at_once_and_rename_keeps_pending_writes():
    disk = SimDisk()
    with disk.open("a", create=True) as f:
        f.append(b"data")
    disk.rename("a", "b")
    disk.crash(CrashMode.everything())
    assert disk.list() == ["b"] and content(disk, "b") == b"data"
    disk.open("c", create=True)
    disk.delete("b")
    disk.crash()
    assert disk.list() == ["c"]


def test_write_record_and_counters():
    disk, _ = ledger()
    kinds = [e.kind for e in disk.events]
    assert kinds == ["create", "write", "fsync", "write", "write", "write"]
    assert str(disk.events[3]) == "#3 write f @4 +4"
    assert disk.stats["writes"] == 4 and disk.stats["bytesWritten"] == 14 and disk.stats["fsyncs"] == 1


def test_crash_image_replays_history_to_any_point():
    disk, _ = ledger()
    assert content(disk.crash_image(1, CrashMode.nothing())) == b""
    assert content(disk.crash_image(1, CrashMode.everything())) == b"AAAA"
    assert content(disk.crash_image(4, CrashMode.everything())) == b"AAAABBBBCCCC"
    assert content(disk) == b"xxAABBBBCCCC"  # the original is untouched


def test_crash_points_cover_every_write_and_fsync():
    disk, _ = ledger()
    points = list(crash_points(disk, torn_variants=1, random_variants=1))
    events = {p.event.index for p in points}
    assert events == {1, 2, 3, 4, 5}
    for point in points:
        expected = disk.crash_image(point.event.index, point.mode)
        assert content(point.disk) == content(expected), str(point)


def test_scheduled_crash_fires_during_the_operation():
    disk, f = ledger()
    disk.schedule_crash(after_ops=2, mode=CrashMode.everything())
    f.append(b"D")
    with pytest.raises(SimulatedCrash, match="after event #7 fsync f"):
        f.fsync()
    assert content(disk) == b"xxAABBBBCCCCD"


def test_a_history_recorded_on_a_copy_crashes_the_same_when_replayed():
    """crash_image_after(events) of a history run on a copy (creates, renames, deletes, writes, truncates,
    fsyncs) leaves what a crash scheduled during that history leaves, and changes neither disk."""
    def history(disk):
        g = disk.open("g", create=True)
        g.append(b"GGGG")
        g.fsync()
        disk.rename("g", "h")
        with disk.open("f") as f:
            f.truncate(6)
            f.fsync()
            f.append(b"EE")
        disk.delete("h")
        with disk.open("k", create=True) as k:
            k.append(b"KK")
            k.fsync()

    disk, _ = ledger()
    run = disk.clone()
    before = len(run.events)
    history(run)
    recorded = run.events[before:]
    ops = [i for i, e in enumerate(recorded) if e.kind in ("write", "truncate", "fsync")]
    assert len(ops) == 7
    for at, last in enumerate(ops, start=1):
        for mode in (CrashMode.nothing(), CrashMode.everything()):
            scheduled = disk.clone()
            scheduled.schedule_crash(after_ops=at, mode=mode)
            with pytest.raises(SimulatedCrash):
                history(scheduled)
            replayed = disk.crash_image_after(recorded[:last + 1], mode)
            assert replayed.content_digest() == scheduled.content_digest(), (at, mode)
            assert {n: content(replayed, n) for n in replayed.list()} == \
                   {n: content(scheduled, n) for n in scheduled.list()}
    assert content(disk) == b"xxAABBBBCCCC" and disk.list() == ["f"]  # the original is untouched


def test_failing_fsync_makes_nothing_durable():
    disk, f = ledger()
    disk.fail_fsyncs(1)
    with pytest.raises(DiskError, match="fsync failed"):
        f.fsync()
    assert disk.pending_ops() == 3
    f.fsync()
    assert disk.pending_ops() == 0


def test_full_disk_refuses_and_changes_nothing():
    disk = SimDisk(capacity=10)
    f = disk.open("f", create=True)
    f.append(b"12345678")
    events = len(disk.events)
    with pytest.raises(DiskFullError, match="disk full"):
        f.append(b"abc")
    assert content(disk) == b"12345678" and len(disk.events) == events
    f.write(0, b"ab")  # overwriting needs no new space
    assert content(disk) == b"ab345678"


def long_history(files: int) -> SimDisk:
    """``files`` log-like files of 1,000 bytes, each written and fsynced, then an unsynced write to the last."""
    disk = SimDisk("h")
    for n in range(files):
        f = disk.open(f"{n:08x}.log", create=True)
        for _ in range(4):
            f.append(b"e" * 250)
            f.fsync()
    f.append(b"tail" * 25)
    return disk


def test_item10_crash_image_cost_does_not_grow_with_the_history():
    """A crash image copies the files its crash changes, not the whole disk: the same for 5 or 200 files.

    Each durable version of a file is copied once, when the first image after it is built; over a
    whole sweep the bytes copied grow with the bytes written, not with points x disk size.
    """
    def costs(files: int, start: int) -> list[int]:
        return [p.copied for p in crash_points(long_history(files), start=start, torn_variants=1, random_variants=1)]
    short, long = costs(5, 5 * 9 - 8), costs(200, 200 * 9 - 8)  # the last file's writes and fsyncs, and the tail
    assert short[1:] == long[1:] and len(short) > 10
    assert max(long[1:]) <= 3 * 1100  # the last file (1,000 bytes + 100 pending), not the disk (200,100 bytes)
    # Over the whole sweep: 40 times the files, at most 40 times the bytes copied (77 kB, 2.8 MB);
    # copying the whole disk at each point would copy 0.3 MB and 481 MB (4,804 points).
    assert sum(costs(200, 0)) <= 40 * sum(costs(5, 0))


def test_item10_crash_images_match_a_replay_and_keep_their_own_copies():
    disk = long_history(6)
    points = list(crash_points(disk, torn_variants=2, random_variants=2, seed=3))
    for point in points:
        replayed = disk.crash_image(point.event.index, point.mode)
        assert point.disk.content_digest() == replayed.content_digest(), str(point)
        assert {n: content(point.disk, n) for n in point.disk.list()} == \
               {n: content(replayed, n) for n in replayed.list()}
    # writing to one image (recovery does) changes neither the others nor the original
    first, last = points[0].disk, points[-1].disk
    before = last.content_digest()
    with first.open(first.list()[0]) as f:
        f.write(0, b"XXXX")
        f.fsync()
    assert last.content_digest() == before and content(disk, disk.list()[0])[:4] == b"eeee"
    clone = disk.clone()
    with clone.open(clone.list()[0]) as f:
        f.write(0, b"YYYY")
    assert content(disk, disk.list()[0])[:4] == b"eeee" and clone.content_digest() != disk.content_digest()


def test_item10_content_digest_names_the_files_and_their_bytes():
    a, b = SimDisk("a"), SimDisk("b")
    for disk in (a, b):
        with disk.open("f", create=True) as f:
            f.append(b"same")
    assert a.content_digest() == b.content_digest()
    with b.open("f") as f:
        f.write(0, b"S")
    assert a.content_digest() != b.content_digest()
    b.rename("f", "g")
    with b.open("g") as f:
        f.write(0, b"s")
    assert a.content_digest() != b.content_digest()  # same bytes, another name
