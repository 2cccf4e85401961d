"""The log store as problems: what a checkpoint logs, and what the cleaner keeps of a file.

``je-checkpoint``: a seeded environment with 4-slot nodes takes a run of
puts into ``accounts`` and a checkpoint; then a few more puts dirty some
BINs (and, through splits, their parents). The problem is the tree of
``accounts``, node by node, with each node's level, parent, keys and
whether it is dirty; the answer is the checkpointer's own run
(:mod:`minidb.logstore.checkpoint.checkpointer`): the dirty map by level,
each database's highest flush level, and every node it logs with its
provisional flag (YES at the bottom level, BEFORE_CKPT_END in between, NO at
the max flush level).

``je-cleaner``: a seeded run of puts and deletes of eight keys over small
log files, then a checkpoint. The problem is one file's entries, and every
version anywhere in the log of each record and node that file holds; the
answer is the cleaner's own pass over that file
(:meth:`~minidb.logstore.cleaner.cleaner.Cleaner.clean_file`): which entries
are live (LNs migrated to the end of the log, INs made dirty for the next
checkpoint) and which obsolete.
"""

from __future__ import annotations

from random import Random

from minidb.io import SimDisk
from minidb.log import LSN
from minidb.logstore import Environment, EnvironmentConfig
from minidb.logstore.logdef import IN_TYPES, USER_LN_TYPES
from minidb.logstore.tools.inspect import tree_view
from minidb.quiz import Quiz
from minidb.quiz.text import numbered, table


def _clock() -> float:
    return 1_700_000_000.0


def environment(name: str, **config) -> Environment:
    return Environment.open(SimDisk(name), EnvironmentConfig(node_max_entries=4, checkpoint_bytes_interval=None,
                                                             clock=_clock, trace=False, **config))


def _keys(keys: tuple[bytes, ...]) -> str:
    shown = [k.decode("latin-1") or "(lowest)" for k in keys]
    return " ".join(shown)


def tree_rows(env: Environment, db_name: str) -> list[tuple]:
    view = tree_view(env, db_name)
    parents = {child: node.label for node in view.nodes() for child in node.child_ids}
    return [(n.label + (" (root)" if n is view.root else ""), n.level, parents.get(n.node_id, "-"), _keys(n.keys),
             "dirty" if n.dirty else "clean", f"{n.lsn} {n.provisional}" if not n.lsn.is_null else "never logged")
            for n in view.nodes()]


def checkpoint_scenario(seed: int) -> tuple[Environment, list[int], list[str], bool]:
    """The environment this seed draws, just before the checkpoint of the problem: the keys put first, the keys put
    after the first checkpoint, and whether the problem's checkpoint minimizes recovery time."""
    rng = Random(seed)
    env = environment(f"quiz-ckpt-{seed}")
    db = env.database("accounts")
    keys = rng.sample(range(100), rng.randint(12, 20))
    for k in keys:
        db.put(f"k{k:02d}", "v")
    env.checkpoint()
    changed = []
    for _ in range(rng.randint(1, 4)):
        key = f"k{rng.randrange(100):02d}"
        db.put(key, "w")
        changed.append(key)
    return env, keys, changed, rng.random() < 0.25


def build_je_checkpoint(seed: int) -> Quiz:
    env, keys, changed, minimize = checkpoint_scenario(seed)
    problem = (f"A log-store environment (nodes of at most 4 slots) holds {len(keys)} records in 'accounts'; a "
               f"checkpoint logged the whole tree; then {', '.join(changed)} were put (a new key may split a "
               "BIN, which logs it and dirties its parent). The tree of 'accounts' now (each node's current "
               "version in the log, and whether the cached node is dirty):\n\n"
               + table(("node", "level", "parent", "keys", "cached", "current version"), tree_rows(env, "accounts"))
               + f"\n\nA checkpoint starts{' with minimize_recovery_time (JE: flush every level)' if minimize else ''}."
               " Which nodes of 'accounts' go into its dirty map, at which levels? What is the highest flush level "
               "of 'accounts'? Which nodes does it log, in which order, and with which provisional flag (YES, "
               "BEFORE_CKPT_END, NO)?\n")
    result = env.checkpoint(minimize_recovery_time=minimize)
    lines = [line for line in result.trace if line.startswith(("step 3:", "step 8:")) or "dirty map state" in line
             or ("accounts" in line and line.startswith(("step 4:", "step 5:")))]
    mine = [(l.describe().split(" (")[0], l.level, l.lsn, l.provisional.name) for l in result.logged
            if l.db_name == "accounts"]
    answer = (numbered(lines) + "\n\nThe nodes of 'accounts' logged, in order:\n\n"
              + table(("node", "level", "LSN", "provisional"), mine)
              + "\n\n(The log store's own trees, _utilization and _mapping, are flushed in the same run; their "
                "lines are left out.)\n")
    return Quiz("je-checkpoint", seed, problem, answer)


def _describe(env: Environment, entry) -> tuple[str, str]:
    """What an entry is a version of (a record, a node, or nothing) and a short note."""
    v, name = entry.values, entry.type_name
    if name in USER_LN_TYPES:
        if name.startswith("DEL"):
            return f"record {v['key'].decode('latin-1')}", "deleted"
        size = len(v["data"])
        return f"record {v['key'].decode('latin-1')}", f"{size} byte{'' if size == 1 else 's'}"
    if name in IN_TYPES:
        db = env.db_tree.get_by_id(v["db_id"])
        label = f"{'BIN' if name == 'BIN' else 'IN'} {v['node_id']}"
        return f"node {label}", f"{db.name if db is not None else v['db_id']}, level {v['level']}"
    return "-", ""


CLEANED = 2  # the file the problem cleans (the first with the workload's records only)


def cleaner_scenario(seed: int) -> Environment:
    """The environment this seed draws, just before the cleaner cleans file CLEANED."""
    rng = Random(seed)
    env = environment(f"quiz-clean-{seed}", file_max=1024)
    db = env.database("accounts")
    for _ in range(rng.randint(24, 36)):
        key = f"k{rng.randrange(8)}"
        if rng.random() < 0.15 and db.get(key) is not None:
            db.delete(key)
        else:
            db.put(key, "v" * rng.randrange(1, 20))
    env.checkpoint()
    return env


def build_je_cleaner(seed: int) -> Quiz:
    env, number = cleaner_scenario(seed), CLEANED
    entries = [e for e in env.log.scan(LSN(number, 0), LSN(number + 1, 0)) if e.lsn.file == number]
    rows, wanted = [], {}
    for e in entries:
        what, note = _describe(env, e)
        rows.append((e.lsn, e.type_name, what, note))
        if what != "-":
            wanted[what] = []
    for e in env.log.scan():
        what, note = _describe(env, e)
        if what in wanted:
            wanted[what].append(f"{e.lsn}{' (deleted)' if note == 'deleted' else ''}")
    problem = (f"A log-store environment (log files of 1 KiB, nodes of 4 slots) took a seeded run of puts and "
               f"deletes of eight keys into 'accounts', then a checkpoint. The cleaner cleans file 0x{number:x}:\n\n"
               + table(("LSN", "type", "a version of", "notes"), rows)
               + "\n\nEvery version in the whole log of each record and node this file holds (the log ends at "
               f"{env.log.end_lsn}):\n\n" + table(("of", "versions (LSNs)"), [(w, ", ".join(l)) for w, l in wanted.items()])
               + "\n\nWhich entries of the file are live, and which obsolete? What does the cleaner do with each "
               "live one?\n")
    before = env.log.end_lsn
    with env.latch:
        result = env.cleaner.clean_file(number)
    verdict = {lsn: "live" for lsn in result.live} | {lsn: "obsolete" for lsn in result.obsolete}
    steps = []
    for e in entries:
        what, _ = _describe(env, e)
        line = f"{e.lsn} {e.type_name}{' (' + what + ')' if what != '-' else ''}: {verdict[e.lsn]}"
        if e.lsn in result.migrated:
            line += f", migrated: logged again at {result.migrated[e.lsn]}"
        elif verdict[e.lsn] == "live" and e.type_name in IN_TYPES:
            line += ", made dirty: the next checkpoint logs it elsewhere"
        steps.append(line)
    answer = (numbered(steps) + f"\n\n{len(result.live)} live, {len(result.obsolete)} obsolete; the migrations were "
              f"logged after {before}. The file is deleted after the next checkpoint (its step 9).\n")
    return Quiz("je-cleaner", seed, problem, answer)
