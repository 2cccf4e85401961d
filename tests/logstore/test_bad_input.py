"""Bad input to the log store: a MinidbError naming what and where; nothing changed; the next call works."""

import pytest

from minidb.errors import UserError
from minidb.io import OSDisk, SimDisk
from minidb.log import NULL_LSN, TRACE, LogManager
from minidb.logstore import Durability, Environment
from minidb.pagestore.sm import StorageManager

from tests.logstore.helpers import entries, fixed_clock, new_env, small_config


def dir_bytes(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_a_page_store_directory_is_not_an_environment(tmp_path):
    path = tmp_path / "volume"
    sm = StorageManager.format(OSDisk(path, create=True), num_pages=64, ext_sz=4, page_size=512, clock=fixed_clock)
    with sm.transaction() as t:
        sm.create_rec(t, sm.create_file(t), b"hello")
    sm.close()
    before = dir_bytes(path)
    with pytest.raises(UserError) as caught:
        Environment.open(path, small_config())
    assert str(caught.value).startswith(f"{path} is not a log store environment: its log holds a pagestore entry "
                                        "(chkpt_begin at 0x1/0x2e)")
    assert dir_bytes(path) == before  # no log store entry was appended to the page store's log
    StorageManager.open(OSDisk(path), clock=fixed_clock).close()  # the page store still opens


def test_a_generated_log_is_not_an_environment():
    from minidb.spark.logdef import GEN_UPDATE  # the generator's entry types (codes 0x08-0x0f)

    disk = SimDisk("generated")
    log = LogManager(disk, clock=fixed_clock)
    log.append(TRACE, {"message": "a plain Trace is fine"})
    lsn = log.append(GEN_UPDATE, {"txn_id": 1, "txn_prev_lsn": NULL_LSN, "key": 7, "data": b"x"})
    log.close()
    before = disk.durable_bytes("00000001.jdb")
    with pytest.raises(UserError, match=rf"sim:generated is not a log store environment: .*generator entry "
                                        rf"\(GenUpdate at {lsn}\)"):
        Environment.open(disk, small_config())
    assert disk.durable_bytes("00000001.jdb") == before


@pytest.mark.parametrize("durability", ["fast", "sync", 1])
def test_an_unknown_durability_is_refused(durability):
    _, env = new_env("durability")
    db = env.database("a")
    with pytest.raises(UserError) as caught:
        env.begin(durability)
    assert f"durability {durability!r} is not one of Durability.SYNC" in str(caught.value)
    assert "sim:durability" in str(caught.value)
    assert env.txn_manager.active == {}
    with env.begin(Durability.WRITE_NO_SYNC) as txn:  # a real one still works
        db.put("k", "v", txn=txn)
    assert db.get("k") == b"v"
    env.close()


@pytest.mark.parametrize("txn", ["t1", 1, object()])
def test_something_that_is_not_a_transaction_is_refused(txn):
    _, env = new_env("txn")
    db = env.database("a")
    logged = len(entries(env))
    for call in (lambda: db.put("k", "v", txn=txn), lambda: db.get("k", txn=txn), lambda: db.delete("k", txn=txn)):
        with pytest.raises(UserError, match=r"txn must be a Transaction of sim:txn \(env.begin\(\)\), not"):
            call()
    assert len(entries(env)) == logged
    db.put("k", "v")
    assert db.get("k") == b"v"
    env.close()


@pytest.mark.parametrize("where", [None, 5])
def test_open_on_something_that_is_not_a_place(where):
    with pytest.raises(UserError, match="an environment is opened on a directory or a Disk, not"):
        Environment.open(where)


LONE = "bad\ud800key"  # a lone surrogate: a str with no UTF-8 form


@pytest.mark.parametrize("argument, call", [
    ("key", lambda env, db: db.put(LONE, "v")),
    ("data", lambda env, db: db.put("k", LONE)),
    ("key", lambda env, db: db.get(LONE)),
    ("key", lambda env, db: db.delete(LONE)),
    ("key", lambda env, db: db.cursor().seek(LONE)),
    ("key", lambda env, db: list(db.items(start=LONE))),
    ("stop", lambda env, db: list(db.items(stop=LONE))),
    ("database name", lambda env, db: env.database(LONE)),
    ("database name", lambda env, db: env.internal_database(LONE.replace("bad", "_ad"))),
])
def test_item9_lone_surrogates_are_a_user_error_naming_the_argument(argument, call):
    disk, env = new_env("surrogate")
    db = env.database("a")
    db.put("k", "v")
    env.sync()
    logged = len(entries(env))
    with pytest.raises(UserError) as caught:
        call(env, db)
    assert f"{argument} '" in str(caught.value)
    assert "ad\\ud800key' is not valid Unicode: surrogates not allowed at index 3" in str(caught.value)
    assert len(entries(env)) == logged  # nothing written
    assert env.database_names() == ["a"]
    assert dict(db.items()) == {b"k": b"v"}  # and the environment still works
    env.close()


def test_item9_a_directory_name_with_a_lone_surrogate_is_a_user_error(tmp_path):
    where = f"{tmp_path}/bad\ud800dir"
    with pytest.raises(UserError, match=r"directory '.*bad\\ud800dir' is not a file name: surrogates not allowed"):
        Environment.open(where)
    assert list(tmp_path.iterdir()) == []  # nothing made
