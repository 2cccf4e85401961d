"""The entry table, printlog of the log store's entries (golden text), the crashtest command."""

import os
from pathlib import Path

import pytest

from minidb.cli import main
from minidb.log import LSN, NULL_LSN, known_types
from minidb.logstore import LOGSTORE_TYPES, REPLICABLE_TYPES, Environment
from minidb.logstore.logdef import is_replicable

from tests.logstore.helpers import small_config

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def test_codes_are_in_the_log_store_range_and_registered():
    for entry_type in LOGSTORE_TYPES:
        assert 0x40 <= entry_type.code <= 0x6F
        assert entry_type in known_types()
    assert {t.name for t in LOGSTORE_TYPES} >= {"IN", "BIN", "LN", "LN_TX", "DEL_LN", "DEL_LN_TX", "MapLN",
                                                 "FileSummaryLN", "Commit", "Abort", "CkptStart", "CkptEnd"}
    assert LOGSTORE_TYPES.LN_TX.transactional and LOGSTORE_TYPES.LN_TX.undoable
    assert not LOGSTORE_TYPES.IN.transactional and LOGSTORE_TYPES.IN.redoable


def test_every_type_round_trips_through_its_fields():
    samples = {
        "BYTES": b"\x00key\xff", "STR": "accounts", "LSN": LSN(3, 0x1A0), "BOOL": True, "U16": 3, "U32": 7,
        "U64": 2**40, "I64": -7,  # a transaction id: negative for internal transactions
    }
    for entry_type in LOGSTORE_TYPES:
        values = {}
        for name, kind in entry_type.all_fields:
            if kind.name.startswith("ListOf"):
                values[name] = [{n: samples.get(k.name, NULL_LSN) for n, k in kind.fields}] * 2
            else:
                values[name] = samples[kind.name]
        assert entry_type.decode(entry_type.encode(values)) == values, entry_type.name


def test_replicable_types():
    assert REPLICABLE_TYPES == {"LN", "LN_TX", "DEL_LN", "DEL_LN_TX", "Commit", "Abort", "MapLN"}
    assert is_replicable(LOGSTORE_TYPES.Commit) and not is_replicable(LOGSTORE_TYPES.IN)
    # a MapLN may: the one that creates a replicated database (the root's later ones are local)
    assert is_replicable(LOGSTORE_TYPES.MapLN) and not is_replicable(LOGSTORE_TYPES.CkptEnd)


@pytest.fixture
def env_dir(tmp_path):
    path = tmp_path / "env"
    env = Environment.open(path, small_config(file_max=1 << 20))
    db = env.database("accounts")
    for name, amount in [("alice", "100"), ("bob", "50"), ("carol", "75"), ("dave", "20"), ("erin", "5")]:
        db.put(name, amount)
    for i in range(10):  # enough for a 3-level tree, so the checkpoint uses all three flags
        db.put(f"acct{i:02d}", str(i))
    with env.begin() as txn:
        db.put("alice", "70", txn=txn)
        db.put("bob", "80", txn=txn)
    txn = env.begin()
    db.delete("carol", txn=txn)
    txn.abort()
    db.delete("dave")
    env.checkpoint(minimize_recovery_time=True)
    env.close()
    return path


def check_golden(name, text):
    path = GOLDEN / name
    if os.environ.get("MINIDB_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"output differs from {path}; rerun with MINIDB_UPDATE_GOLDEN=1 if intended"


def test_printlog_shows_the_log_store_entries_with_provisional_flags(capsys, env_dir):
    assert main(["printlog", str(env_dir)]) == 0
    out = capsys.readouterr().out
    check_golden("printlog_logstore.txt", out)
    for type_name in ("IN", "BIN", "LN", "LN_TX", "DEL_LN", "DEL_LN_TX", "MapLN", "FileSummaryLN", "Commit",
                      "Abort", "CkptStart", "CkptEnd"):
        assert f'type="{type_name}"' in out, type_name
    assert 'type="BIN" ' in out and 'prov="YES"' in out
    assert any('type="IN"' in line and 'prov="BEFORE_CKPT_END"' in line for line in out.splitlines())
    assert any('type="IN"' in line and "prov=" not in line and 'is_root="true"' in line for line in out.splitlines())
    assert main(["verify", str(env_dir)]) == 0


def test_printlog_filters_by_type(capsys, env_dir):
    assert main(["printlog", str(env_dir), "--type", "Commit", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and 'type="Commit"' in lines[0]


def test_crashtest_logstore_command(capsys):
    assert main(["crashtest", "logstore", "--seed", "3", "--ops", "8"]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("violations: 0") and "crash points: " in out
