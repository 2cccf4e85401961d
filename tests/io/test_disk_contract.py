"""The disk interface behaves the same on real files and on the simulated disk."""

import os

import pytest

from minidb.errors import DiskError, DiskFullError, UserError
from minidb.io import OSDisk, SimDisk


@pytest.fixture(params=["os", "sim"])
def disk(request, tmp_path):
    if request.param == "os":
        return OSDisk(tmp_path / "d", create=True)
    return SimDisk("contract")


def test_create_write_read_append(disk):
    with disk.open("a", create=True) as f:
        assert f.size() == 0
        assert f.append(b"hello") == 0
        assert f.append(b" world") == 5
        f.write(2, b"LL")
        assert f.read(0, 100) == b"heLLo world"
        assert f.read(6, 3) == b"wor"
        assert f.read(50, 3) == b""
        f.fsync()
    assert disk.size("a") == 11
    assert disk.exists("a") and not disk.exists("b")


def test_write_past_end_fills_with_zeros(disk):
    with disk.open("a", create=True) as f:
        f.write(4, b"xy")
        assert f.read_all() == b"\0\0\0\0xy"


def test_truncate_shrinks_and_grows(disk):
    with disk.open("a", create=True) as f:
        f.append(b"abcdef")
        f.truncate(2)
        assert f.read_all() == b"ab"
        f.truncate(4)
        assert f.read_all() == b"ab\0\0"


def test_list_rename_delete(disk):
    for name in ("b", "a", "c"):
        disk.open(name, create=True).close()
    assert disk.list() == ["a", "b", "c"]
    with disk.open("a") as f:
        f.append(b"data")
    disk.rename("a", "z")
    assert disk.list() == ["b", "c", "z"]
    with disk.open("z") as f:
        assert f.read_all() == b"data"
    disk.delete("b")
    assert disk.list() == ["c", "z"]


@pytest.mark.parametrize("action", [
    lambda d: d.open("missing"),
    lambda d: d.delete("missing"),
    lambda d: d.rename("missing", "x"),
    lambda d: d.size("missing"),
])
def test_missing_file_is_a_clear_error(disk, action):
    with pytest.raises(DiskError, match="missing: no such file"):
        action(disk)


@pytest.mark.parametrize("name", ["", "a/b", "..", "."])
def test_bad_names_are_refused(disk, name):
    with pytest.raises(UserError, match="not a plain file name"):
        disk.open(name, create=True)


def test_closed_handle_refuses_work(disk):
    f = disk.open("a", create=True)
    f.close()
    with pytest.raises(DiskError, match="closed"):
        f.read(0, 1)


def test_osdisk_missing_directory(tmp_path):
    with pytest.raises(UserError, match="no such directory"):
        OSDisk(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        OSDisk(tmp_path / "file")


def test_osdisk_directory_that_cannot_be_created(tmp_path):
    (tmp_path / "afile").write_text("not a directory")
    where = tmp_path / "afile" / "log"
    with pytest.raises(DiskError, match=f"{where}: cannot create the directory"):
        OSDisk(where, create=True)
    assert (tmp_path / "afile").read_text() == "not a directory"


def test_osdisk_readonly_refuses_changes(tmp_path):
    rw = OSDisk(tmp_path, create=True)
    with rw.open("a", create=True) as f:
        f.append(b"keep")
    ro = OSDisk(tmp_path, readonly=True)
    with ro.open("a") as f:
        assert f.read_all() == b"keep"
        with pytest.raises(DiskError, match="read-only"):
            f.write(0, b"x")
        with pytest.raises(DiskError, match="read-only"):
            f.truncate(0)
    for action in (lambda: ro.open("b", create=True), lambda: ro.delete("a"), lambda: ro.rename("a", "b")):
        with pytest.raises(DiskError, match="read-only"):
            action()
    assert (tmp_path / "a").read_bytes() == b"keep"


def test_allocate_grows_with_zeros_and_never_shrinks(disk):
    with disk.open("a", create=True) as f:
        f.append(b"ab")
        f.allocate(6)
        assert f.read_all() == b"ab\0\0\0\0"
        f.allocate(3)
        assert f.size() == 6


def test_free_space_is_a_number_of_bytes_or_none(disk):
    free = disk.free_space()
    assert free is None if isinstance(disk, SimDisk) else free >= 0


def test_free_space_of_a_simulated_disk_is_its_capacity_less_its_files():
    disk = SimDisk("space", capacity=100)
    with disk.open("a", create=True) as f:
        f.allocate(60)
        assert disk.free_space() == 40
        with pytest.raises(DiskFullError):
            f.allocate(101)
        assert f.size() == 60 and disk.free_space() == 40


def test_allocate_takes_the_blocks_of_a_real_file(tmp_path):
    disk = OSDisk(tmp_path / "d", create=True)
    with disk.open("v", create=True) as f:
        f.allocate(1 << 20)
    st = os.stat(disk.where("v"))
    assert st.st_size == 1 << 20 and st.st_blocks * 512 >= 1 << 20  # not sparse, unlike truncate
