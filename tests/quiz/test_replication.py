"""The replication answers: the bucket's offsets recomputed by the stride rule, and the matchpoint checked
against its definition on the problem's two logs and against a real syncup."""

import re

import pytest

from minidb.errors import MinidbError
from minidb.quiz import quiz
from minidb.quiz.replication import diverged, link, settle
from minidb.replication.stream.network import InMemoryNetwork

from tests.quiz.tables import md_tables

SEEDS = (1, 2, 3, 4, 5, 7, 10, 40)


@pytest.mark.parametrize("seed", SEEDS)
def test_bucket_answer_follows_the_stride_rule(seed):
    q = quiz("vlsn-bucket", seed)
    (mappings,) = md_tables(q.problem)
    lsns = {int(r["VLSN"]): r["LSN"] for r in mappings}
    m = re.search(r"starts at VLSN (\d+), with stride (\d+) and at most (\d+) offsets", q.problem)
    first, stride, most = map(int, m.groups())
    puts = [int(v) for v in re.search(r"put in this order[^:]*: ([\d, ]+)\.", q.problem).group(1).split(", ")]
    stored, accepted = {}, []
    for vlsn in puts:
        index, rest = divmod(vlsn - first, stride)
        if rest == 0 and index >= most:
            assert f"put {vlsn} -> {lsns[vlsn]}: on a stride (index {index}); refused" in q.answer  # the bucket is full
            continue
        accepted.append(vlsn)
        if rest == 0:
            stored[index] = lsns[vlsn].split("/")[1]
    offsets = [stored.get(i, "0x0") for i in range(max(stored) + 1)] if stored else []
    last = max(accepted)
    assert f"Offset array: {offsets}".replace('"', "'") in q.answer.replace('"', "'")
    assert f"last {last} -> {lsns[last]}." in q.answer
    kept = sorted({first + i * stride for i in stored} | {last})
    probe = int(re.search(r"For VLSN (\d+):", q.problem).group(1))
    lte, gte = max((k for k in kept if k <= probe), default=None), min(k for k in kept if k >= probe)
    below = "none" if lte is None else f"VLSN {lte} -> {lsns[lte]}"  # a hole at the start: nothing below
    assert f"at or below, {below}; at or above, VLSN {gte} -> {lsns[gte]}" in q.answer


SYNC_TYPES = {"Commit", "Abort", "Matchpoint", "TermStart"}


@pytest.mark.parametrize("seed", SEEDS)
def test_matchpoint_answer_is_the_newest_common_sync_point_and_the_real_syncup(seed):
    q = quiz("matchpoint", seed)
    replica, master = md_tables(q.problem)
    theirs = {int(r["VLSN"]): r["checksum"] for r in master}
    common = [int(r["VLSN"]) for r in replica if r["type"] in SYNC_TYPES and theirs.get(int(r["VLSN"])) == r["checksum"]]
    expected = max(common)
    assert f"matchpoint VLSN {expected} at" in q.answer
    n1, n2, _ = diverged(seed)
    net = InMemoryNetwork()
    feeder, rejoining = link(net, n2, n1, syncup=True)
    try:
        settle(net, feeder, rejoining)
    except MinidbError as e:
        assert "refused" in q.answer and type(e).__name__ in q.answer
        return
    assert rejoining.syncup.result.matchpoint_vlsn == expected
    rolled = sorted(v for v, _, _ in (rejoining.syncup.rollback.rolled_back if rejoining.syncup.rollback else ()))
    assert rolled == [int(r["VLSN"]) for r in replica if int(r["VLSN"]) > expected]
    assert rolled == sorted(int(v) for v in re.findall(r"VLSN (\d+) \S+ at \S+: rolled back", q.answer))
    assert f"the stream resumes at VLSN {expected + 1}" in q.answer
