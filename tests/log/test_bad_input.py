"""Bad input to the log: a clear MinidbError naming what and where; nothing changed; the log still works."""

import pytest

from minidb.errors import LogCorruptionError, LogError, UserError
from minidb.io import OSDisk, SimDisk
from minidb.log import LSN, NULL_LSN, TRACE, LogManager, file_name
from minidb.log.fields import ItemFormatError
from minidb.log.verify import verify_log

from tests.log.helpers import fixed_clock, messages, new_log, write_messages


def dir_bytes(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


@pytest.fixture
def three_files(tmp_path):
    """A log of three files on real files."""
    path = tmp_path / "log"
    log = LogManager(OSDisk(path, create=True), file_max=330, buffer_size=70, clock=fixed_clock)
    write_messages(log, [f"m{i}" for i in range(40)])
    log.close()
    assert len(list(path.glob("*.jdb"))) == 3
    return path


@pytest.mark.parametrize("text", [None, 5, b"0x1/0x26"])
def test_lsn_parse_of_a_non_string_is_a_user_error(text):
    with pytest.raises(UserError, match=r"bad LSN .*expected a string like 0x1/0x26"):
        LSN.parse(text)


@pytest.mark.parametrize("value", [-1, 1 << 64, "7"])
def test_lsn_unpack_out_of_range_is_a_user_error(value):
    with pytest.raises(UserError, match="packed LSN out of range"):
        LSN.unpack(value)


@pytest.mark.parametrize("call, where", [
    (lambda log: log.read("0x1/0x26"), "LSN must be an LSN, not str '0x1/0x26' (LSN.parse('0x1/0x26') makes one)"),
    (lambda log: log.read(None), "LSN must be an LSN, not NoneType"),
    (lambda log: log.read((1, 0x26)), "LSN must be an LSN, not tuple"),
    (lambda log: log.read(LSN(1, -1)), "LSN (1, -1) is out of range"),
    (lambda log: list(log.scan("0x1/0x26")), "scan start must be an LSN"),
    (lambda log: list(log.scan(None, 7)), "scan stop must be an LSN"),
    (lambda log: list(log.scan_backward("x")), "scan start must be an LSN"),
    (lambda log: log.sync("x"), "LSN must be an LSN"),
    (lambda log: log.is_durable(None), "LSN must be an LSN"),
    (lambda log: log.sync(LSN(9, 0)), "cannot sync 0x9/0x0 in sim:t: no entry is there yet"),
    (lambda log: log.append(None, {"message": "x"}), "cannot log None: not an entry type"),
    (lambda log: log.append("Trace", {"message": "x"}), "cannot log 'Trace': not an entry type"),
    (lambda log: log.append(TRACE, {"message": "x"}, provisional=7), "provisional must be a Provisional, not 7"),
    (lambda log: log.append(TRACE, {"message": "x"}, vlsn=-1), "VLSN -1 is not a positive 64-bit number"),
    (lambda log: log.append(TRACE, {"message": "x"}, vlsn="a"), "VLSN 'a' is not a positive 64-bit number"),
    (lambda log: log.append(TRACE, ["x"]), "values must be a dict of its fields"),
])
def test_bad_arguments_are_user_errors_and_change_nothing(call, where):
    log = new_log(file_max=330)
    write_messages(log, ["a", "b"])
    end = log.end_lsn
    with pytest.raises(UserError) as caught:
        call(log)
    assert where in str(caught.value)
    assert log.end_lsn == end
    write_messages(log, ["c"])  # the log still works
    assert messages(log) == ["a", "b", "c"]


@pytest.mark.parametrize("values, where", [
    ({"message": 5}, "Trace.message: STR cannot hold 5"),
    ({}, "Trace: missing fields ['message']"),
    ({"message": "x" * 70_000}, "Trace.message: STR too long"),
])
def test_values_that_do_not_fit_the_entry_type_are_minidb_errors(values, where):
    log = new_log()
    write_messages(log, ["a"])
    end = log.end_lsn
    with pytest.raises(ItemFormatError) as caught:
        log.append(TRACE, values)
    assert isinstance(caught.value, LogError) and isinstance(caught.value, ValueError)
    assert where in str(caught.value)
    assert log.end_lsn == end
    write_messages(log, ["b"])
    assert messages(log) == ["a", "b"]


@pytest.mark.parametrize("options, where", [
    ({"file_max": 1 << 40}, "file_max 1099511627776 must be a number of bytes from 256 to 4294967295"),
    ({"file_max": "big"}, "file_max 'big' must be a number of bytes"),
    ({"file_max": 10}, "file_max 10 is too small (at least 256 bytes)"),
    ({"buffer_size": None}, "buffer_size None must be a positive number of bytes"),
])
def test_impossible_sizes_are_refused_before_anything_is_written(options, where):
    disk = SimDisk("sizes")
    with pytest.raises(UserError) as caught:
        LogManager(disk, **options)
    assert where in str(caught.value)
    assert disk.list() == []


def test_a_missing_middle_file_is_corruption_when_opening(three_files):
    (three_files / file_name(2)).unlink()
    before = dir_bytes(three_files)
    for readonly in (False, True):
        with pytest.raises(LogCorruptionError) as caught:
            LogManager(OSDisk(three_files, readonly=readonly), readonly=readonly)
        assert caught.value.file_name == "00000002.jdb"
        assert "log file is missing: the log jumps from 00000001.jdb to 00000003.jdb" in str(caught.value)
    assert dir_bytes(three_files) == before


def test_verify_reports_a_missing_middle_file(three_files):
    (three_files / file_name(2)).unlink()
    (three_files / file_name(9)).write_bytes(b"")  # a far file, as if created by a crashed writer
    report = verify_log(OSDisk(three_files, readonly=True))
    assert str(report.problem) == ("00000002.jdb at offset 0x0: log file is missing: "
                                   "the log jumps from 00000001.jdb to 00000003.jdb")


def test_verify_reports_a_far_file_after_a_gap(three_files):
    (three_files / file_name(9)).write_bytes(b"")
    report = verify_log(OSDisk(three_files, readonly=True))
    assert str(report.problem) == ("00000004.jdb at offset 0x0: log file is missing: "
                                   "the log jumps from 00000003.jdb to 00000009.jdb")
    with pytest.raises(LogCorruptionError, match="00000004.jdb"):
        LogManager(OSDisk(three_files))


def test_verify_notes_unwritten_space_with_the_right_article(tmp_path):
    path = tmp_path / "zeros"
    path.mkdir()
    (path / file_name(1)).write_bytes(bytes(100))
    report = verify_log(OSDisk(path, readonly=True))
    assert report.ok
    assert "are an unwritten tail" in report.notes[0]


def test_null_lsn_is_still_accepted_where_it_means_no_entry():
    log = new_log()
    write_messages(log, ["a"])
    log.sync(NULL_LSN)  # nothing to wait for: no error
    assert list(log.scan_backward(NULL_LSN)) == []
