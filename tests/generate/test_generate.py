"""The workload generator: seeded, real logs, and a report that tells the truth about them."""

import os
from collections import Counter
from pathlib import Path

import pytest

from minidb.cli import main
from minidb.errors import UserError
from minidb.io import OSDisk
from minidb.log import NULL_LSN
from minidb.log.verify import verify_log
from minidb.spark.generate import (
    GENERATORS,
    EnvReport,
    GenerateReport,
    GenerateRequest,
    Generator,
    generate,
    generators,
    register_generator,
)

from tests.cli.test_cli import check_golden
from tests.generate.helpers import entries, file_bytes, request


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return generate("log", request(tmp_path_factory.mktemp("gen")))


def test_the_same_seed_writes_the_same_bytes(tmp_path):
    generate("log", request(tmp_path / "a", ops=120))
    generate("log", request(tmp_path / "b", ops=120))
    generate("log", request(tmp_path / "c", ops=120, seed=4))
    a, b, c = (file_bytes(tmp_path / x) for x in "abc")
    assert a == b and len(a) >= 4
    assert a.keys() == c.keys() and a != c


def test_every_environment_is_a_valid_log_of_several_files(report):
    assert [e.name for e in report.envs] == ["env-00", "env-01", "env-02", "env-03"]
    assert [e.role for e in report.envs] == ["node", "node", "node", "standalone"]
    for env in report.envs:
        verified = verify_log(OSDisk(env.path, readonly=True))
        assert verified.ok and verified.entries == env.entries and verified.files == env.files > 1
        found = entries(env)
        assert Counter(e.type_name for e in found) == env.types
        assert env.bytes == sum(os.path.getsize(p) for p in Path(env.path).glob("*.jdb"))


def test_transactions_in_the_report_are_the_ones_in_the_log(report):
    for env in report.envs:
        last, seen = {}, {}
        for e in entries(env):
            if e.txn_id is None:
                continue
            assert e.txn_prev_lsn == last.get(e.txn_id, NULL_LSN)  # chained by the environment's own LSNs
            last[e.txn_id] = e.lsn
            seen.setdefault(e.txn_id, []).append(e)
        assert set(seen) == set(env.txns)
        for txn_id, logged in seen.items():
            written = env.txns[txn_id]
            assert (written.first_lsn, written.last_lsn, written.entries) == (logged[0].lsn, logged[-1].lsn, len(logged))
            ends = [e.type_name for e in logged if e.type_name in ("GenCommit", "GenAbort")]
            assert ends == ({"commit": ["GenCommit"], "abort": ["GenAbort"], "open": []}[written.outcome])
            assert ends == [] or logged[-1].type_name == ends[0]
        assert {t.outcome for t in env.txns.values()} == {"commit", "abort", "open"}


def test_checkpoints_name_their_start_and_the_first_active_lsn(report):
    for env in report.envs:
        found = entries(env)
        starts = [e for e in found if e.type_name == "GenCkptStart"]
        ends = [e for e in found if e.type_name == "GenCkptEnd"]
        assert [c.start_lsn for c in env.checkpoints] == [e.lsn for e in starts]
        assert [c.end_lsn for c in env.checkpoints if c.end_lsn] == [e.lsn for e in ends]
        assert len(env.checkpoints) >= 3
        for end in ends:
            start = end["ckpt_start_lsn"]
            assert start in [s.lsn for s in starts] and end["first_active_lsn"] <= start
            open_then = [t.first_lsn for t in env.txns.values()
                         if t.first_lsn < start and (t.outcome == "open" or t.last_lsn > start)]
            assert end["first_active_lsn"] == min(open_then, default=start)


def test_the_group_shares_one_vlsn_stream_but_for_the_faults(report):
    group = report.group
    assert group.nodes == ["env-00", "env-01", "env-02"] and group.diverging_node == "env-02"
    by_node = {}
    for name in group.nodes:
        env = report.env(name)
        logged = [e for e in entries(env) if e.vlsn is not None]
        assert [e.vlsn for e in logged] == env.vlsns
        assert all(e.header.replicated and e.txn_id is not None for e in logged)
        by_node[name] = {}
        for e in logged:
            by_node[name].setdefault(e.vlsn, []).append((e.type_name, e.txn_id, e.values.get("key"), e.values.get("data")))
    [gap] = group.gaps["env-01"]
    [dup] = group.duplicates["env-01"]
    assert gap not in by_node["env-01"] and len(by_node["env-01"][dup]) == 2
    everything = range(1, group.last_vlsn + 1)
    assert sorted(by_node["env-00"]) == list(everything) == sorted(by_node["env-02"])
    for vlsn in everything:
        master = by_node["env-00"][vlsn]
        if vlsn != gap:
            assert by_node["env-01"][vlsn][0] == master[0]
        diverged = by_node["env-02"][vlsn]
        if vlsn < group.first_divergence or master[0][0] != "GenUpdate":
            assert diverged == master
        else:
            assert diverged[0][:3] == master[0][:3] and diverged[0][3] != master[0][3]
    assert by_node["env-00"][group.first_divergence][0][0] == "GenUpdate"
    assert "env-02 diverges from VLSN" in report.summary()


def test_bad_requests_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="unknown engine 'pagestore'"):
        generate("pagestore", request(tmp_path))
    with pytest.raises(UserError, match="needs 2 to 4"):
        generate("log", request(tmp_path, group=5))
    with pytest.raises(UserError, match="at least one environment"):
        generate("log", request(tmp_path, envs=0))
    generate("log", request(tmp_path / "twice", ops=40, group=0))
    with pytest.raises(UserError, match="already holds a log"):
        generate("log", request(tmp_path / "twice", ops=40, group=0))


def test_the_registry_takes_new_engines(tmp_path):
    calls = []

    def fake(req):
        calls.append(req)
        return GenerateReport("fake", req, [EnvReport("env-00", str(tmp_path))])

    register_generator(Generator("fake-engine", "a test double", fake))
    try:
        assert generate("fake-engine", request(tmp_path, group=0)).engine == "fake"
        assert len(calls) == 1
        with pytest.raises(UserError, match="cannot generate a replication group yet"):
            generate("fake-engine", request(tmp_path, group=2))
        with pytest.raises(ValueError, match="already registered"):
            register_generator(Generator("fake-engine", "another", fake))
    finally:
        GENERATORS.pop("fake-engine")
    assert set(generators()) == {"log", "logstore"}


def test_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["generate", "--engine", "log", "--envs", "4", "--ops", "80", "--seed", "2", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"generated 4 environments in {out} (engine log, seed 2, 80 operations each)")
    assert "replication group: env-00, env-01, env-02;" in text and "env-03: standalone" in text
    assert main(["generate", "--engine", "log", "--envs", "2", "--ops", "80", str(out)]) == 0  # its own output
    assert sorted(p.name for p in out.iterdir()) == [".minidb-output", "env-00", "env-01"]
    capsys.readouterr()
    assert main(["generate", "--engine", "log", "--envs", "1", "--ops", "10", "--file-max", "100",
                 str(tmp_path / "tiny")]) == 2
    assert "file_max 100 is too small" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["generate", "--engine", "nope", "--envs", "1", "--ops", "1", str(tmp_path / "x")])
    assert stop.value.code == 2


def test_printlog_shows_the_generator_entry_types(tmp_path, capsys):
    out = tmp_path / "gen"
    generate("log", GenerateRequest(str(out), envs=2, ops=24, seed=5, group=2, ckpt_every=8, payload=(2, 6)))
    assert main(["printlog", str(out / "env-01")]) == 0
    text = capsys.readouterr().out
    for name in ("GenUpdate", "GenCommit", "GenCkptStart", "GenCkptEnd", "<vlsn v="):
        assert name in text
    check_golden("printlog_generated.txt", text)
