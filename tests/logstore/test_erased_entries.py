"""Erased entries in a log store: checked by their own checksum, and accepted only where the eraser erases.

A forged type byte 0xff once made recovery skip the entry: an erased ``Commit`` dropped a committed
transaction, an erased ``LN_TX`` made its key return the value before it, and ``minidb verify`` passed.
Now a forged 0xff fails the entry's checksum; and even an entry in its well-formed erased form is
corruption where the eraser never erases (the recovery interval, the last file, a type it does not erase).
A file the eraser did erase verifies and opens.
"""

import pytest

from minidb.cli import main
from minidb.errors import CorruptionError
from minidb.io import OSDisk
from minidb.log import LogManager
from minidb.log.header import ERASED_TYPE
from minidb.log.verify import verify_log
from minidb.logstore import Environment
from minidb.logstore.eraser import ERASER_STATS, DataEraser, EraserConfig, ManualClock, erase_file, locate
from minidb.logstore.tools.verify import erased_entry_rule, records
from minidb.stats import Stats

from tests.logstore.helpers import small_config


def committed_update(path):
    """k = "old", checkpointed; then a transaction sets k = "new", commits (durably) and the process stops."""
    env = Environment.open(path, small_config())
    db = env.database("a")
    db.put("k", "old")
    env.checkpoint()
    with env.begin() as txn:
        db.put("k", "new", txn=txn)
    env.log.sync()
    return env  # left open: what a crash after the commit leaves on disk


def last_lsn(path, type_name):
    log = LogManager(OSDisk(path), readonly=True)
    try:
        return [e for e in log.scan() if e.type_name == type_name][-1].lsn
    finally:
        log.close()


def forge(path, lsn):
    """One byte: the type byte of the entry at ``lsn`` set to 0xff."""
    file = path / f"{lsn.file:08x}.jdb"
    data = bytearray(file.read_bytes())
    data[lsn.offset + 4] = ERASED_TYPE
    file.write_bytes(bytes(data))


def erase_properly(path, lsn):
    """The entry at ``lsn`` in its well-formed erased form, through the eraser's own protocol."""
    disk = OSDisk(path)
    with disk.open(f"{lsn.file:08x}.jdb") as f:
        buf = f.read_all()
    erase_file(disk, lsn.file, locate(buf, [lsn.offset]), Stats("Eraser", ERASER_STATS))


@pytest.mark.parametrize("what", ["Commit", "LN_TX"])
@pytest.mark.parametrize("how", [forge, erase_properly], ids=["forged", "well-formed"])
def test_an_erased_commit_or_ln_tx_is_corruption_at_recovery_and_in_verify(what, how, tmp_path, capsys):
    committed_update(tmp_path)
    lsn = last_lsn(tmp_path, what)
    how(tmp_path, lsn)
    where = f"{lsn.file:08x}.jdb at offset 0x{lsn.offset:x}"
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(CorruptionError, match=where):
        Environment.open(tmp_path, small_config())
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # changes nothing
    assert main(["verify", str(tmp_path)]) == 1
    assert where in capsys.readouterr().out


def erased_commit_outside_the_recovery_interval(path):
    """The committed update, checkpointed until the Commit's file leaves the recovery interval, then the
    Commit in its well-formed erased form (which the eraser never makes); its LSN."""
    env = committed_update(path)
    commit = last_lsn(path, "Commit")
    for _ in range(3):
        env.checkpoint()
        env.log.force_flip()
    env.close()
    erase_properly(path, commit)
    return commit


def test_a_well_formed_erasure_of_a_type_the_eraser_never_erases_is_reported_by_verify(tmp_path, capsys):
    commit = erased_commit_outside_the_recovery_interval(tmp_path)
    problem = erased_entry_rule(OSDisk(tmp_path))(commit, 0x50, False)
    assert problem is not None and "was a Commit entry" in problem
    assert main(["verify", str(tmp_path)]) == 1
    assert f"offset 0x{commit.offset:x}: erased entry at {commit} was a Commit entry" in capsys.readouterr().out


def test_a_file_the_eraser_erased_verifies_and_opens(tmp_path, capsys):
    env = Environment.open(tmp_path, small_config())
    db = env.database("a")
    db.put("secret", "data")
    db.delete("secret")
    for i in range(30):
        db.put(f"k{i:02d}", "x" * 20)
    for _ in range(2):
        env.checkpoint()
        env.log.force_flip()
    want = records(env)
    eraser = DataEraser(env, EraserConfig(run_eraser=True, erase_period_ms=1000), ManualClock())
    eraser.run_cycle()
    assert eraser.stats["eraserFilesErased"] >= 1
    env.close()
    assert b"secret" not in b"".join(p.read_bytes() for p in tmp_path.glob("*.jdb"))
    assert verify_log(OSDisk(tmp_path)).ok
    assert main(["verify", str(tmp_path)]) == 0, capsys.readouterr().out
    env = Environment.open(tmp_path, small_config())
    assert records(env) == want
    env.close()


def test_the_cleaner_refuses_an_erased_entry_the_eraser_never_makes_and_deletes_nothing(tmp_path):
    """An erased Commit outside the recovery interval: recovery never reads it, so the environment opens; the
    cleaner, which would count it obsolete and delete its file, reports it instead and cleans nothing."""
    commit = erased_commit_outside_the_recovery_interval(tmp_path)
    env = Environment.open(tmp_path, small_config())
    try:
        where = f"{commit.file:08x}.jdb at offset 0x{commit.offset:x}"
        with pytest.raises(CorruptionError, match=f"{where}.*was a Commit entry"):
            env.cleaner.clean_file(commit.file)
        assert commit.file not in env.cleaner.cleaned
        env.checkpoint()  # step 9 deletes the cleaned files: not this one
        assert (tmp_path / f"{commit.file:08x}.jdb").exists()
    finally:
        env.close()
