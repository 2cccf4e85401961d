"""Replication as problems: a VLSN bucket's puts, and the matchpoint of a syncup.

``vlsn-bucket``: a replicated environment (small log files) takes a seeded
run of puts; the problem takes the real VLSN -> LSN mappings of one of its
log files and registers them in a fresh bucket of a small stride and size,
in a seeded order (mappings arrive out of order: they are registered after
the log write latch is released, :mod:`minidb.replication.vlsn.bucket`), some
never arriving. The answer is the bucket's own ``put`` for each (accepted,
or refused with its reason), the offset array with its holes, the mappings
kept, and the bucket's own lookups at or below and at or above one VLSN.

``matchpoint``: two nodes of a group, n1 the master, log a Matchpoint and a
few writes that reach n2; then n1 logs writes n2 never receives (sometimes
followed by a checkpoint, which the rollback then crosses: it finishes by
hard recovery), n2 becomes master and logs its own. The problem prints both replicated logs
(VLSN, type, LSN-neutral checksum, LSN); the answer is syncup's own search
(:func:`~minidb.replication.syncup.syncup.search_matchpoint`, each question to
the feeder), then the real syncup over an in-memory network: the rollback it
did (by hard recovery if it crossed the checkpoint), or why it was refused.
"""

from __future__ import annotations

from random import Random

from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LSN
from minidb.log.types import type_by_code
from minidb.logstore import EnvironmentConfig
from minidb.quiz import Quiz
from minidb.quiz.text import numbered, table
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.group.driver import handshake
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import InMemoryNetwork
from minidb.replication.stream.replica import Replica
from minidb.replication.syncup.syncup import (
    FeederEntry,
    entry_checksum,
    feeder_answer,
    replica_candidates,
    search_matchpoint,
)
from minidb.replication.vlsn.bucket import VLSNBucket


def _clock() -> float:
    return 1_700_000_000.0


def bucket_run(seed: int) -> tuple[dict[int, LSN], int, list[int]]:
    """A seeded replicated run: every VLSN's LSN, and the file and VLSNs the problem takes (one file's)."""
    rng = Random(seed)
    config = EnvironmentConfig(node_max_entries=8, file_max=700 + 50 * rng.randrange(6),
                               checkpoint_bytes_interval=None, clock=_clock, trace=False)
    env = ReplicatedEnvironment.open(SimDisk(f"quiz-bucket-{seed}"), config, VLSNIndexConfig(trace=False))
    db = env.database("t")
    for _ in range(rng.randint(14, 22)):
        db.put(f"k{rng.randrange(100):02d}", "v" * rng.randrange(1, 12))
    truth = {e.vlsn: e.lsn for e in env.log.scan() if e.vlsn is not None}
    env.close()
    by_file: dict[int, list[int]] = {}
    for vlsn, lsn in sorted(truth.items()):
        by_file.setdefault(lsn.file, []).append(vlsn)
    files = [f for f, vlsns in sorted(by_file.items()) if len(vlsns) >= 6] or [max(by_file, key=lambda f: len(by_file[f]))]
    file = rng.choice(files)
    return truth, file, by_file[file][:10]


def build_vlsn_bucket(seed: int) -> Quiz:
    rng = Random(seed ^ 0x5EED)
    truth, file, vlsns = bucket_run(seed)
    stride, max_mappings = rng.choice((2, 3, 4)), rng.choice((2, 3, 4))
    order = list(vlsns)
    for i in range(len(order) - 1):  # late registrations: neighbours swap places
        if rng.random() < 0.35:
            order[i], order[i + 1] = order[i + 1], order[i]
    lost = set(rng.sample(order[1:-1], k=rng.randint(0, 2)))  # never registered before the question
    puts = [v for v in order if v not in lost]
    first = vlsns[0]
    probe = rng.choice(vlsns[1:-1])
    problem = (f"A replicated environment logged these replicated entries in file 0x{file:x} "
               f"(VLSN -> LSN):\n\n" + table(("VLSN", "LSN"), [(v, truth[v]) for v in vlsns])
               + f"\n\nA new VLSN bucket for file 0x{file:x} starts at VLSN {first}, with stride {stride} and "
               f"at most {max_mappings} offsets. The mappings are put in this order"
               + (f" (VLSN{'s' if len(lost) > 1 else ''} {', '.join(map(str, sorted(lost)))} never "
                  f"arrive{'s' if len(lost) == 1 else ''})" if lost else "")
               + f": {', '.join(map(str, puts))}.\n\nWhich puts does the bucket refuse? What are its offset array "
               f"(0 for a hole), its last mapping, and the mappings it keeps? For VLSN {probe}: which kept mapping "
               f"is at or below it, and which at or above it?\n")
    bucket = VLSNBucket(file, stride=stride, max_mappings=max_mappings, first_vlsn=first)
    steps = []
    for vlsn in puts:
        why = bucket.refusal(vlsn, truth[vlsn])
        accepted = bucket.put(vlsn, truth[vlsn])
        assert accepted == (why is None)
        index, rest = divmod(vlsn - first, stride)
        where = f"on a stride (index {index})" if rest == 0 else "not on a stride"
        steps.append(f"put {vlsn} -> {truth[vlsn]}: {where}; " + (f"refused: {why}" if why else
                     f"offsets {[hex(o) for o in bucket.file_offsets]}, last {bucket.last} -> {bucket.last_lsn}"))
    kept = ", ".join(f"{v} -> {lsn}" for v, lsn in bucket.mappings())
    lte, gte = bucket.get_lte_mapping(probe), bucket.get_gte_mapping(probe)
    answer = (numbered(steps) + f"\n\nOffset array: {[hex(o) for o in bucket.file_offsets]}"
              + (f" (holes at VLSNs {', '.join(map(str, bucket.holes()))})" if bucket.holes() else "")
              + f"; last {bucket.last} -> {bucket.last_lsn}.\n\nMappings kept: {kept}.\n\n"
              f"VLSN {probe}: at or below, {_mapping(lte)}; at or above, {_mapping(gte)} (a reader scans the log "
              f"forward or backward from there).\n")
    return Quiz("vlsn-bucket", seed, problem, answer)


def _mapping(found: tuple[int, LSN] | None) -> str:
    return "none" if found is None else f"VLSN {found[0]} -> {found[1]}"


# -- the matchpoint ---------------------------------------------------------------------------------------
GROUP = RepGroup("quiz", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3")])


def node(name: str, seed: int, clock) -> ReplicatedEnvironment:
    config = EnvironmentConfig(node_max_entries=4, checkpoint_bytes_interval=None, clock=clock, file_max=4096,
                               trace=False)
    return ReplicatedEnvironment.open(SimDisk(f"quiz-{name}-{seed}"), config, VLSNIndexConfig(stride=3, trace=False),
                                      group=GROUP, node_name=name)


def link(net: InMemoryNetwork, master: ReplicatedEnvironment, env: ReplicatedEnvironment,
         syncup: bool) -> tuple[Feeder, Replica]:
    """A handshaken connection from ``env`` to ``master``: the master's feeder and ``env``'s replica."""
    feeder_channel, replica_channel = handshake(net, net.listen(master.node_name), master, env)
    return Feeder(master, feeder_channel, env.node_name), Replica(env, replica_channel, master.node_name,
                                                                  syncup=syncup)


def settle(net: InMemoryNetwork, feeder: Feeder, replica: Replica) -> None:
    while net.deliver() + feeder.pump() + replica.pump() or net.in_flight:
        pass


def _writes(env: ReplicatedEnvironment, rng: Random, count: int, tag: str, in_txn: float = 0.4) -> list[str]:
    done = []
    db = env.database("accounts")
    for _ in range(count):
        key, value = f"k{rng.randrange(10)}", f"{tag}{rng.randrange(100)}"
        if rng.random() < in_txn:
            with env.begin() as txn:
                db.put(key, value, txn=txn)
                db.put(f"k{rng.randrange(10)}", value, txn=txn)
            done.append(f"{env.node_name} puts {key}={value} and one more key in one transaction")
        else:
            db.put(key, value)
            done.append(f"{env.node_name} puts {key}={value}")
    return done


def diverged(seed: int) -> tuple[ReplicatedEnvironment, ReplicatedEnvironment, list[str]]:
    """n1 and n2 after the run this seed draws (see the module documentation): n1 rejoins, n2 is the master."""
    rng = Random(seed)
    n1, n2 = node("n1", seed, _clock), node("n2", seed, lambda: 1_800_000_000.0)
    n1.become_master(term=1)
    n1.log_matchpoint()
    steps = ["n1 is elected master for term 1 (it logs a TermStart) and logs a Matchpoint"]
    steps += _writes(n1, rng, rng.randint(1, 3), "a")
    net = InMemoryNetwork()
    settle(net, *link(net, n1, n2, syncup=False))
    steps.append("n2 receives everything so far")
    steps += _writes(n1, rng, rng.randint(1, 3), "b", in_txn=0.7)
    if rng.random() < 0.3:
        n1.checkpoint()
        steps.append("n1 takes a checkpoint")
    n1.become_unknown()
    n2.become_master(term=2)
    steps.append("n1 is cut off; n2 is elected master for term 2 (it logs a TermStart)")
    steps += _writes(n2, rng, rng.randint(1, 2), "c")
    steps.append("n1 rejoins with n2 as its master: syncup")
    return n1, n2, steps


def replicated_rows(env: ReplicatedEnvironment) -> list[tuple]:
    return [(e.vlsn, e.type_name, f"{entry_checksum(e):#010x}", e.lsn) for e in env.log.scan() if e.vlsn is not None]


def build_matchpoint(seed: int) -> Quiz:
    n1, n2, steps = diverged(seed)
    header = ("VLSN", "type", "checksum", "LSN")
    problem = (numbered(steps) + "\n\nn1's replicated entries (the rejoining node):\n\n" + table(header, replicated_rows(n1))
               + "\n\nn2's replicated entries (the master):\n\n" + table(header, replicated_rows(n2))
               + "\n\nThe checksum is LSN-neutral: equal at one VLSN means the same replicated entry. Where is the "
               "matchpoint, which sync points does n1 ask the feeder about, what does n1 roll back (and does the "
               "rollback cross n1's last checkpoint, so that it ends with hard recovery), and where does the stream "
               "resume?\n")
    asked: list[tuple[int, FeederEntry | None]] = []

    def feeder_entry(vlsn: int) -> FeederEntry | None:
        kind, values = feeder_answer(n2, vlsn)
        theirs = None if kind == "EntryNotFound" else FeederEntry(
            type_by_code(values["type_code"]).name, values["checksum"], LSN.unpack(values["lsn"]))
        asked.append((vlsn, theirs))
        return theirs

    candidates = list(replica_candidates(n1))
    mine = {c.vlsn: c for c in candidates}
    search = search_matchpoint(candidates, feeder_entry)
    lines = [f"n1's sync point VLSN {vlsn} is {mine[vlsn].type_name} {mine[vlsn].checksum:#010x}; the feeder has "
             + ("nothing there" if theirs is None else f"{theirs.type_name} {theirs.checksum:#010x}")
             + (": the same entry" if theirs is not None and theirs.checksum == mine[vlsn].checksum else ": no match")
             for vlsn, theirs in asked]
    lines.append(f"search: {search.describe()}")
    net = InMemoryNetwork()
    feeder, replica = link(net, n2, n1, syncup=True)
    try:
        settle(net, feeder, replica)
    except MinidbError as e:
        lines.append(f"syncup refused: {type(e).__name__}: {e}")
    else:
        rollback = replica.syncup.rollback
        if rollback is None:
            lines.append("nothing after the matchpoint: nothing to roll back")
        else:
            lines += [f"VLSN {v} {t} at {lsn}: rolled back (made INVISIBLE)" for v, lsn, t in reversed(rollback.rolled_back)]
            lines.append(rollback.describe())
        lines.append(f"the stream resumes at VLSN {replica.syncup.start_vlsn}")
    answer = numbered(lines) + "\n"
    return Quiz("matchpoint", seed, problem, answer)
