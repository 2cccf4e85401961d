"""The log store's answers, checked against the log the checkpoint wrote and against the tree the cleaner
asks."""

import re

import pytest

from minidb.log import LSN
from minidb.logstore.tools.inspect import tree_view
from minidb.logstore.logdef import IN_TYPES, USER_LN_TYPES
from minidb.quiz import quiz
from minidb.quiz.logstore import CLEANED, checkpoint_scenario, cleaner_scenario

from tests.quiz.tables import md_tables, steps

SEEDS = (1, 2, 3, 5, 8)


def lsn(text: str) -> LSN:
    return LSN.parse(text)


@pytest.mark.parametrize("seed", SEEDS)
def test_checkpoint_answer_is_in_the_log_the_checkpoint_writes(seed):
    q = quiz("je-checkpoint", seed)
    tree, logged = md_tables(q.text(answers=True))
    env, _, _, minimize = checkpoint_scenario(seed)
    env.checkpoint(minimize_recovery_time=minimize)
    for row in logged:  # each node the answer names is at its LSN, with its provisional flag
        entry = env.log.read(lsn(row["LSN"]))
        assert entry.type_name in IN_TYPES
        assert f"{entry.type_name} {entry.values['node_id']}" == row["node"].split(" root")[0]
        assert entry.provisional.name == row["provisional"]
    names = [row["node"].split(" root")[0] for row in logged]
    for row in tree:  # the checkpoint logs every dirty node
        if row["cached"] == "dirty":
            assert row["node"].split(" (root)")[0] in names
    levels = [int(row["level"]) for row in logged]
    top = max(levels)
    for row in logged:  # YES at the bottom, NO at the max flush level, BEFORE_CKPT_END between
        level = int(row["level"])
        expected = "NO" if level == top else "YES" if level == 1 else "BEFORE_CKPT_END"
        assert row["provisional"] == expected, row


@pytest.mark.parametrize("seed", SEEDS)
def test_cleaner_answer_agrees_with_the_tree(seed):
    q = quiz("je-cleaner", seed)
    env = cleaner_scenario(seed)
    view = tree_view(env, "accounts")
    slots = {key: (slot, deleted) for node in view.nodes() if node.is_bin
             for key, slot, deleted in zip(node.keys, node.slot_lsns, node.known_deleted, strict=True)}
    current = {node.node_id: node.lsn for node in view.nodes()}
    said = {}
    for line in steps(q.answer):
        m = re.match(r"(0x\S+) (\S+).*: (live|obsolete)", line)
        said[m.group(1)] = m.group(3)
    judged = 0
    for entry in env.log.scan(LSN(CLEANED, 0), LSN(CLEANED + 1, 0)):
        if entry.lsn.file != CLEANED:
            break
        if entry.type_name in USER_LN_TYPES:
            slot, deleted = slots.get(entry.values["key"], (None, False))
            expected = "live" if slot == entry.lsn and not deleted else "obsolete"
        elif entry.type_name in IN_TYPES and entry.values["db_id"] == view.db_id:
            expected = "live" if current.get(entry.values["node_id"]) == entry.lsn else "obsolete"
        elif entry.type_name in ("FileHeader", "Commit", "Abort", "CkptStart", "CkptEnd"):
            expected = "obsolete"
        else:
            continue  # an internal database's entry: the tree test above does not reach it
        assert said[str(entry.lsn)] == expected, (entry.lsn, entry.type_name)
        judged += 1
    assert judged >= 10
    with env.latch:  # and the cleaner, run here, migrates what the answer says it migrates
        result = env.cleaner.clean_file(CLEANED)
    assert {str(lsn) for lsn in result.live} == {l for l, v in said.items() if v == "live"}
