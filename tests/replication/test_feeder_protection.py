"""A feeder protects the log files it still has to send from the cleaner; the protection moves forward as it
sends and is released when the feeder stops."""

import pytest

from minidb.io import SimDisk
from minidb.log.files import file_name
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig, wire
from minidb.replication.errors import FeederError
from minidb.replication.group.driver import InMemoryGroup
from minidb.replication.group.membership import RepGroup, RepNode

from tests.replication.helpers import churn, small_config

GROUP = RepGroup("bank", [RepNode("n1", "n1"), RepNode("n2", "n2")])


def open_node(name):
    return ReplicatedEnvironment.open(SimDisk(name), small_config(file_max=4096),
                                      VLSNIndexConfig(stride=4, max_mappings=1000, min_vlsn_index_size=10),
                                      group=GROUP, node_name=name)


def test_a_lagging_replicas_files_stay_until_it_catches_up():
    group = InMemoryGroup({"n1": open_node("n1"), "n2": open_node("n2")}, "n1")
    master, feeder = group.master, group.feeders["n2"]
    protector = master.env.cleaner.protector
    assert [str(s) for s in protector.sets] == ["feeder to n2 (files 1..)"]
    churn(master)  # n2 lags: its feeder has sent nothing yet
    assert master.log.end_lsn.file > 2
    master.env.clean_log()
    master.checkpoint()
    assert file_name(1) in master.disk.list() and master.log.head == 1  # kept for the feeder
    assert protector.protected_by(1) == ["feeder to n2 (files 1..)"]
    group.settle()  # n2 catches up: the protection moves to the file of the last entry sent
    assert group.envs["n2"].range.last == master.range.last
    assert feeder.protected.first_file == master.vlsn_index.get_lte_lsn(master.range.last).file > 1
    assert [s.name for s in protector.sets] == ["feeder to n2"]  # moved, not added
    master.env.clean_log()
    master.checkpoint()
    assert file_name(1) not in master.disk.list()
    group.leave("n2")
    assert protector.sets == []  # released when the feeder stops


def test_a_feeder_refusing_a_stream_releases_its_files():
    group = InMemoryGroup({"n1": open_node("n1"), "n2": open_node("n2")}, "n1")
    protector = group.master.env.cleaner.protector
    assert len(protector.sets) == 1
    group.replicas["n2"].channel.send(wire.encode("bank", "StartStream", start_vlsn=100))
    group.net.deliver()
    with pytest.raises(FeederError, match="asks for VLSN 100"):
        group.feeders["n2"].pump()
    assert protector.sets == [] and group.master.feeder_txns.active_replicas() == []
