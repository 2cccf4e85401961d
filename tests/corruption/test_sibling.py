"""A sibling environment's log file, swapped in, is refused by every reader, naming the file.

Each engine's builder also builds a sibling: the same workload with other values of the same
sizes and another environment seed, so its log files have the same numbers and the same
``last_entry_lsn`` chain. Swapping one of them into the environment (a restore from the wrong
backup, two students' directories mixed up) must be refused by opening the engine, by ``minidb
verify``, by ``minidb printlog`` and by the Spark data source's partition of that file: a
:class:`~minidb.errors.ForeignLogFileError` (a corruption error) naming the file and both ids.
"""

import contextlib
import io

import pytest

import minidb.cli
from minidb.errors import ForeignLogFileError

from tests.corruption import BUILDERS
from tests.corruption.state import disk_with

STATES = {}


def state_of(engine):
    if engine not in STATES:
        STATES[engine] = BUILDERS[engine]()
    return STATES[engine]


def swapped(state, which):
    """The state's files with its first, middle or last log file replaced by the sibling's: (files, name)."""
    names = state.log_files
    name = {"first": names[0], "middle": names[len(names) // 2], "last": names[-1]}[which]
    assert state.sibling[name] != state.files[name] and len(names) >= 3
    return {**state.files, name: state.sibling[name]}, name


def cli(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = minidb.cli.main([str(a) for a in argv])
    return code, out.getvalue().strip()


@pytest.mark.parametrize("which", ["first", "middle", "last"])
@pytest.mark.parametrize("engine", ["log", "pagestore", "logstore", "replication"])
def test_a_sibling_log_file_is_refused_by_open_verify_printlog_and_spark(engine, which, tmp_path):
    state = state_of(engine)
    files, name = swapped(state, which)
    with pytest.raises(ForeignLogFileError, match=f"{name} belongs to another environment"):
        state.read(disk_with(files))
    for file, data in files.items():
        (tmp_path / file).write_bytes(data)
    code, said = cli("verify", tmp_path)
    assert code == 1 and f"{name} belongs to another environment" in said.splitlines()[-1]
    code, said = cli("printlog", "-q", tmp_path)
    assert code == 1 and f"{name} belongs to another environment" in said.splitlines()[-1]

    from minidb.spark.source import file_rows, log_file_partitions  # the driver learns the id, each task checks

    problems = {part.path.rsplit("/", 1)[1]: [p for columns in file_rows(part) for p in columns.problem if p]
                for part in log_file_partitions(str(tmp_path))}
    assert [f"{name} belongs to another environment" in p for p in problems.pop(name)] == [True]
    assert not any(problems.values())
