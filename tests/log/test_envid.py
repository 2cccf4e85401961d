"""Every log file proves it belongs to its environment: the environment id in its FileHeader.

Two logs written alike with values of the same sizes have files whose numbers and
``last_entry_lsn`` chains match exactly; only the environment id tells a sibling's file from
the log's own. Opening, every reader, ``verify_log``, ``minidb verify``/``printlog`` and the
Spark data source refuse such a file, naming it.
"""

import struct
import time

import pytest

from minidb.cli import main
from minidb.errors import ForeignLogFileError, LogVersionError
from minidb.io import OSDisk, SimDisk
from minidb.log import LSN, NULL_LSN, TRACE, LogManager, file_name
from minidb.log.envid import new_env_id
from minidb.log.header import pack_entry
from minidb.log.logdef import FILE_HEADER, LOG_VERSION
from minidb.log.verify import verify_log

from tests.log.helpers import file_bytes, fixed_clock, put_file_bytes

FILE_MAX = 300


def sibling_logs(make_disk, files=3):
    """Two logs of the same messages, ``x`` in one and ``y`` in the other, different seeds: (disks, LSNs)."""
    disks, lsns = [], None
    for seed, letter in ((0, "x"), (1, "y")):
        disk = make_disk(seed)
        log = LogManager(disk, file_max=FILE_MAX, clock=fixed_clock, env_seed=seed)
        written = []
        while log.end_lsn.file < files or len(written) < 3:
            written.append(log.append(TRACE, {"message": f"message {len(written)} " + letter * 30}))
        log.close()
        assert lsns is None or written == lsns  # the same LSNs: only the id tells the files apart
        disks.append(disk)
        lsns = written
    return disks, lsns


def swap_in(disks, number):
    """File ``number`` of the first log replaced by the sibling's."""
    put_file_bytes(disks[0], file_bytes(disks[1], number), number)


def file_header_values(disk, number):
    log = LogManager(disk, readonly=True)
    return log.read(LSN(number, 0)).values


@pytest.mark.parametrize("number", [1, 2, 3])
def test_a_sibling_file_is_refused_by_opening_and_verify_naming_it(number):
    disks, _ = sibling_logs(lambda seed: SimDisk(f"env{seed}"))
    ours = file_header_values(disks[0], 1)["env_id"]
    theirs = file_header_values(disks[1], 1)["env_id"]
    assert ours != theirs
    swap_in(disks, number)
    name = file_name(number)
    # Opening reads the first and last files; when they disagree, the id most files carry is the log's,
    # so the file swapped in is the one named, at either end. Verify reads every file and names it too,
    # whether or not it is told the id.
    if number != 2:
        with pytest.raises(ForeignLogFileError, match=f"{name} belongs to another environment "
                                                      f"\\(env id 0x{theirs:016x}, this log's is 0x{ours:016x}\\)"):
            LogManager(disks[0])
    for known in (ours, None):
        report = verify_log(disks[0], env_id=known)
        assert report.problem is not None and report.problem.foreign and report.problem.file_name == name
        assert f"{name} belongs to another environment" in report.problem.what


def test_a_first_and_last_file_of_two_environments_and_nothing_to_tell_which_is_ours_names_both():
    disks, _ = sibling_logs(lambda seed: SimDisk(f"env{seed}"), files=2)
    swap_in(disks, 1)
    both = "00000001.jdb and 00000002.jdb belong to different environments"
    with pytest.raises(ForeignLogFileError, match=both):
        LogManager(disks[0])
    report = verify_log(disks[0])
    assert report.problem is not None and report.problem.foreign and both in report.problem.what


def test_a_sibling_middle_file_is_refused_when_a_single_entry_is_read_from_it():
    disks, lsns = sibling_logs(lambda seed: SimDisk(f"env{seed}"))
    swap_in(disks, 2)
    log = LogManager(disks[0])  # the first and last files are its own
    inside = next(lsn for lsn in lsns if lsn.file == 2)
    with pytest.raises(ForeignLogFileError, match="00000002.jdb belongs to another environment"):
        log.read(inside)  # an LN fetched by its LSN would return the sibling's value
    with pytest.raises(ForeignLogFileError, match="00000002.jdb belongs to another environment"):
        list(log.scan())
    with pytest.raises(ForeignLogFileError, match="00000002.jdb belongs to another environment"):
        list(log.scan_backward())


def test_a_sibling_file_is_refused_by_the_cli_printlog_and_verify(tmp_path, capsys):
    disks, _ = sibling_logs(lambda seed: OSDisk(tmp_path / f"env{seed}", create=True))
    swap_in(disks, 2)
    before = {p.name: p.read_bytes() for p in (tmp_path / "env0").iterdir()}
    assert main(["printlog", str(tmp_path / "env0")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "00000002.jdb belongs to another environment" in err
    assert main(["verify", str(tmp_path / "env0")]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("problem: 00000002.jdb at offset 0x0: 00000002.jdb belongs to another environment")
    assert {p.name: p.read_bytes() for p in (tmp_path / "env0").iterdir()} == before


def version_1_file(number=1):
    """A log file as version 1 wrote it: a 24-byte FileHeader item, no environment id, then a Trace."""
    item = struct.pack("<IQQI", number, 0, NULL_LSN.packed, 1)
    data = pack_entry(FILE_HEADER.code, 0, 0, item)
    return data + pack_entry(TRACE.code, 0, 0, TRACE.encode({"message": "old"}))


def test_a_version_1_file_is_refused_by_name(tmp_path, capsys):
    disk = SimDisk("old")
    disk.open(file_name(1), create=True).close()
    put_file_bytes(disk, version_1_file())
    with pytest.raises(LogVersionError, match="00000001.jdb: log format version 1; this minidb reads version 2 only"):
        LogManager(disk)
    path = tmp_path / "old"
    path.mkdir()
    (path / file_name(1)).write_bytes(version_1_file())
    for command in ("printlog", "verify"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "log format version 1" in err and "Traceback" not in err
    assert LOG_VERSION == 2


def test_the_id_is_in_every_file_and_survives_file_switches_and_the_head_moving():
    disk = SimDisk("t")
    log = LogManager(disk, file_max=FILE_MAX, clock=fixed_clock)
    env_id = log.env_id
    for i in range(40):
        log.append(TRACE, {"message": f"message {i} " + "x" * 30})
    log.sync()
    assert log.end_lsn.file >= 5
    log.remove_head_files(3)
    log.close()
    log = LogManager(disk, file_max=FILE_MAX, clock=fixed_clock, env_seed=99)  # a seed only makes new logs
    assert log.env_id == env_id
    log.append(TRACE, {"message": "after reopening"})
    log.force_flip()
    headers = [e.values for e in log.scan() if e.entry_type is FILE_HEADER]
    assert [h["file_number"] for h in headers] == list(range(3, log.end_lsn.file + 1))
    assert {h["env_id"] for h in headers} == {env_id}
    assert verify_log(disk).ok


def test_two_environments_made_alike_with_different_seeds_get_different_ids():
    ids = [LogManager(SimDisk("t"), clock=fixed_clock, env_seed=seed).env_id for seed in (0, 1, "a", "b")]
    assert len(set(ids)) == 4 and 0 not in ids
    again = [LogManager(SimDisk("t"), clock=fixed_clock, env_seed=seed).env_id for seed in (0, 1, "a", "b")]
    assert again == ids  # deterministic: a simulated disk or a fixed clock prints the same on every run
    assert LogManager(SimDisk("t")).env_id == ids[0]  # a simulated disk without a seed: seed 0


def test_a_real_environment_draws_a_random_id(tmp_path):
    first = new_env_id(OSDisk(tmp_path / "a", create=True), time.time)
    second = new_env_id(OSDisk(tmp_path / "b", create=True), time.time)
    assert first != second and 0 not in (first, second)
    assert new_env_id(OSDisk(tmp_path / "a"), fixed_clock) == new_env_id(SimDisk(), time.time)
