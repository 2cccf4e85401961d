"""Notebook 13's demo: the group's stream after a script, commits waiting for acks, the explorer."""

import pytest

from minidb.viz.replication_demo import SCRIPT, commit_rounds, group_step, network_restore
from minidb.viz.replication_widgets import group_explorer
from minidb.viz.script import ScriptError


def rows(result):
    return {r.name: (r.last, r.acked) for r in result.picture.rows}


def test_the_default_script_shows_what_the_notebook_says():
    cut = group_step(6)  # carol committed with ALL while n3 is cut off
    assert cut.picture.types[:3] == ("MapLN", "LN_TX", "Commit")  # alice's write created "accounts": VLSN 1
    assert rows(cut) == {"n1": (7, 0), "n2": (7, 7), "n3": (3, 3)}
    assert cut.lines[-1].startswith("commit carol (ALL): committed on n1, InsufficientAcksError: 2 acks needed, "
                                    "acked by n2, after 1000 ms")
    assert cut.lines[-2] == "commit bob (SIMPLE_MAJORITY): acked by n2"
    healed = group_step(len(SCRIPT))
    assert rows(healed) == {"n1": (7, 0), "n2": (7, 7), "n3": (7, 7)}  # n3 caught up after the heal
    assert healed.figure is not None


def test_an_edited_script_changes_the_outcome():
    edited = [op for op in SCRIPT if op[0] != "partition"]  # nobody is cut off: ALL succeeds
    result = group_step(len(edited), edited)
    assert "commit carol (ALL): acked by n2, n3" in result.lines
    late = [("join", "n2"), ("commit", "a", "ALL"), ("commit", "b", "NONE"), ("join", "n3"), ("settle",)]
    result = group_step(len(late), late)
    assert result.lines[1] == "commit a (ALL): InsufficientReplicasError: 1 replica(s) connected (n2); nothing " \
                              "logged, the transaction aborted"  # ALL needs n3, which has not joined
    # a's write created "accounts" (VLSN 1), which a's abort (VLSN 3) leaves: n3 joined late, caught up through
    # the VLSN index from VLSN 1
    assert result.picture.types == ("MapLN", "LN_TX", "Abort", "LN_TX", "Commit") and rows(result)["n3"] == (5, 5)
    assert "join: n3 asks for VLSN 1" in result.lines[3]


@pytest.mark.parametrize("script, message", [
    ([("commit", "k", "MOST")], "step 1 .*policy, one of ALL, SIMPLE_MAJORITY, NONE"),
    ([("join", "n2"), ("join", "n2")], "step 2 .*n2 has joined already"),
    ([("partition", "n9")], "step 1 .*the replicas are n2, n3"),
    ([("slow", "n2", 0)], "step 1 .*rounds must be"),
    ([("settle", 1)], "step 1 .*settle takes no arguments"),
])
def test_a_bad_script_names_its_step(script, message):
    with pytest.raises(ScriptError, match=message):
        group_step(0, script)


def test_the_troubles_of_n3():
    assert rows(group_step(3, trouble="cut off n3"))["n3"] == (0, 0)
    slow = group_step(3, trouble="slow n3")
    assert slow.lines[-1] == "commit alice (SIMPLE_MAJORITY): acked by n2"  # n2 answered first
    with pytest.raises(ValueError, match="trouble is one of"):
        group_step(0, trouble="fire")


def test_a_commit_waits_round_by_round():
    lines = commit_rounds("SIMPLE_MAJORITY", "slow n3")
    assert lines[0].endswith("needs 1 ack(s); waiting for n2, n3")
    assert lines[-2].startswith("round 3: delivered") and lines[-2].endswith("acked by n2; waiting for nobody")
    assert lines[-1] == "the commit returns"
    assert commit_rounds("ALL", "cut off n3")[-1].startswith("no ack yet")


def test_the_explorer_driven_from_code():
    explorer = group_explorer([("join", "n2"), ("join", "n3"), ("commit", "k", "ALL")])
    assert rows(explorer.result)["n3"] == (3, 3)  # the creation of "accounts", k's record and its Commit
    explorer.controls["trouble"].value = "cut off n3"
    assert explorer.result.lines[-1].startswith("commit k (ALL): committed on n1, InsufficientAcksError")
    explorer.controls["step"].value = 0
    assert rows(explorer.result) == {"n1": (0, 0)}  # nobody has joined yet
    with pytest.raises(ScriptError):
        group_explorer([("heal", 1)])


def test_the_title_says_who_is_cut_off_whether_the_script_or_the_control_did_it():
    from minidb.viz.replication_demo import group_step

    assert group_step(6).title == "step 6: commit carol ALL (n3 cut off)"  # the script's partition of step 4
    assert group_step(3).title == "step 3: commit alice SIMPLE_MAJORITY (no replica cut off)"
    assert group_step(3, trouble="cut off n3").title.endswith("(n3 cut off; control: cut off n3)")


def test_network_restore_shows_the_files_sent_their_checksums_verified_and_a_retry():
    show = network_restore()
    assert show.records_equal and len(show.files) >= 2 and all(f[4] for f in show.files)
    assert show.bytes == sum(f[1] for f in show.files)
    assert show.lines[0] == "n3 -> n1: FileListRequest (an empty directory)"
    assert "network restore to n3 (files 1..2)" in show.lines[1]
    assert show.lines[-2].endswith("n1's files protected now: 0")
    assert show.table().splitlines()[1].startswith("00000001.jdb")
    dropped = network_restore(drop_after_chunks=3)
    assert [line for line in dropped.lines if "dropped" in line][0].endswith("protected now: 0")
    assert "staging area discarded: restore.00000001.jdb" in dropped.lines[4]
    assert dropped.files == show.files and dropped.records_equal
    with pytest.raises(ValueError, match="chunk_size"):
        network_restore(chunk_size=1)
