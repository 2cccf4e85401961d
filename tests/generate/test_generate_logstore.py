"""The log store's generator: environments the engine wrote, a truthful report, a group that agrees
until the node that diverges, and logs that recover to exactly the committed state."""

import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from minidb.cli import main
from minidb.io import OSDisk
from minidb.log.verify import verify_log
from minidb.logstore import Environment
from minidb.spark.gen_logstore import DATABASE, workload
from minidb.spark.generate import generate
from minidb.spark.source import item_checksum

from tests.generate.helpers import entries, file_bytes, request


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return generate("logstore", request(tmp_path_factory.mktemp("gen")))


def test_the_same_seed_writes_the_same_bytes(tmp_path):
    def files(name, **changes):
        generate("logstore", request(tmp_path / name, ops=120, **changes))
        return file_bytes(tmp_path / name)

    a, b, c = files("a"), files("b"), files("c", seed=4)
    assert a == b and len(a) >= 4
    assert a != c


def test_every_environment_is_a_valid_log_the_report_describes(report):
    assert [e.role for e in report.envs] == ["node", "node", "node", "standalone"]
    for env in report.envs:
        verified = verify_log(OSDisk(env.path, readonly=True))
        assert verified.ok and verified.entries == env.entries and verified.files == env.files > 1
        found = entries(env)
        assert Counter(e.type_name for e in found) == env.types
        assert env.bytes == sum(p.stat().st_size for p in Path(env.path).glob("*.jdb"))
        # the engine's own entries, not a generator's: records, nodes, checkpoints, utilization
        assert {"LN", "LN_TX", "DEL_LN_TX", "BIN", "IN", "Commit", "Abort", "CkptStart", "CkptEnd",
                "MapLN", "FileSummaryLN"} <= set(env.types)
        assert any(e.type_name == "BIN" and e.provisional.name != "NO" for e in found)


def test_transactions_and_checkpoints_in_the_report_are_the_ones_in_the_log(report):
    for env in report.envs:
        found = entries(env)
        seen = {}
        for e in found:
            if e.txn_id is not None:
                seen.setdefault(e.txn_id, []).append(e)
        assert set(seen) == set(env.txns)
        for txn_id, logged in seen.items():
            written = env.txns[txn_id]
            assert (written.first_lsn, written.last_lsn, written.entries) == (logged[0].lsn, logged[-1].lsn, len(logged))
            ends = [e.type_name for e in logged if e.type_name in ("Commit", "Abort")]
            assert ends == {"commit": ["Commit"], "abort": ["Abort"], "open": []}[written.outcome]
        assert {t.outcome for t in env.txns.values()} >= {"commit", "abort"}
        assert [c.start_lsn for c in env.checkpoints] == [e.lsn for e in found if e.type_name == "CkptStart"]
        assert [c.end_lsn for c in env.checkpoints] == [e.lsn for e in found if e.type_name == "CkptEnd"]
        assert len(env.checkpoints) >= 3
    assert any(t.outcome == "open" for env in report.envs for t in env.txns.values())


def test_the_group_shares_one_stream_at_other_lsns_until_the_diverging_node(report):
    group = report.group
    assert group.nodes == ["env-00", "env-01", "env-02"] and group.diverging_node == "env-02"
    assert group.gaps == {} and group.duplicates == {}
    streams = {}
    for name in group.nodes:
        logged = [e for e in entries(report.env(name)) if e.vlsn is not None]
        assert [e.vlsn for e in logged] == list(range(1, group.last_vlsn + 1)) == report.env(name).vlsns
        streams[name] = logged
    assert streams["env-00"][-1].type_name == "Matchpoint"
    # each node evicts on its own, so the same VLSN lies at different LSNs
    assert len({tuple(e.lsn for e in stream) for stream in streams.values()}) == 3
    first = group.first_divergence
    assert group.last_vlsn // 3 < first < group.last_vlsn
    for i in range(group.last_vlsn):
        versions = {name: stream[i] for name, stream in streams.items()}
        contents = {(e.type_name, e.txn_id, e.values.get("key"), e.values.get("data")) for e in versions.values()}
        checksums = {item_checksum(e.item, e.header.type_code) for e in versions.values()}
        if i + 1 < first:
            assert len(contents) == 1 and len(checksums) == 1, i + 1
        elif i + 1 == first:
            master, diverged = versions["env-00"], versions["env-02"]
            assert master.values["data"] != diverged.values["data"] and len(checksums) == 2
    assert "env-02 diverges from VLSN" in report.summary()


def committed_state(req, index):
    """What the standalone environment ``index`` committed, from its workload alone."""
    ops = workload(random.Random(f"{req.seed}/logstore/env/{index}"), req, checkpoints=True)
    state, pending, outcome = {}, {}, {}
    for op in ops:
        if op.kind in ("put", "delete"):
            change = (op.key, op.data if op.kind == "put" else None)
            if op.txn:
                pending.setdefault(op.txn, []).append(change)
            else:
                state[op.key] = op.data
        elif op.kind in ("commit", "abort"):
            outcome[op.txn] = op.kind
            if op.kind == "commit":
                for key, data in pending.pop(op.txn, []):
                    if data is None:
                        state.pop(key, None)
                    else:
                        state[key] = data
            else:
                pending.pop(op.txn, None)
    return state, set(pending)  # pending: transactions still open when the workload stopped


def test_a_generated_environment_recovers_to_its_committed_state(report, tmp_path):
    req = report.request
    env_report = report.envs[-1]
    expected, still_open = committed_state(req, len(report.envs) - 1)
    assert still_open  # recovery has transactions to roll back
    copy = tmp_path / "copy"
    shutil.copytree(env_report.path, copy)
    env = Environment.open(OSDisk(copy))
    try:
        recovered = {key.decode(): data for key, data in env.database(DATABASE, create=False).items()}
    finally:
        env.close()
    assert recovered == expected


def test_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["generate", "--engine", "logstore", "--envs", "4", "--ops", "80", "--seed", "2", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"generated 4 environments in {out} (engine logstore, seed 2, 80 operations each)")
    assert "replication group: env-00, env-01, env-02;" in text and "env-03: standalone" in text
    assert main(["generate", "--engine", "logstore", "--envs", "1", "--ops", "80", str(out)]) == 0  # its own output
    assert sorted(p.name for p in out.iterdir()) == [".minidb-output", "env-00"]
