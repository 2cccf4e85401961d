"""The ARIES answers, checked against a whole restart of the same crashed disk (StorageManager.open, which
runs every pass itself), and against the textbook's rules read from the problem's own tables."""

import re

import pytest

from minidb.pagestore.sm import StorageManager
from minidb.quiz import quiz
from minidb.quiz.aries import FRAMES, LOG_BUFFER, _clock, crash

from tests.quiz.tables import md_tables, steps

SEEDS = (1, 2, 5, 8, 13)


def restarted(seed: int) -> StorageManager:
    """The crashed disk this seed draws, opened the ordinary way: analysis, redo, undo, finish, all at once."""
    return StorageManager.open(crash(seed).disk.clone(), frames=FRAMES, clock=_clock, buffer_size=LOG_BUFFER)


@pytest.mark.parametrize("seed", SEEDS)
def test_analysis_answer_is_what_restart_rebuilds(seed):
    q = quiz("aries-analysis", seed)
    log, xcts, dirty = md_tables(q.text(answers=True))
    analysis = restarted(seed).restart_report.analysis
    assert [(r["txn"], r["state"], r["last LSN"], r["undo-next"]) for r in xcts] == \
        [(f"T{x.tid}", x.state.name, str(x.last_lsn), str(x.undo_nxt)) for _, x in sorted(analysis.xct_table.items())]
    assert [(r["page"], r["rec LSN"]) for r in dirty] == \
        [(str(d.pid), str(d.rec_lsn)) for _, d in sorted(analysis.dirty_pages.items())]
    assert f"Redo LSN: {analysis.redo_lsn}" in q.answer
    # every transaction that logged after the checkpoint and did not end is in the table, with its last entry
    last = {}
    for row in log:
        if row["txn"] != "-":
            last[row["txn"]] = row["LSN"] if row["type"] != "xct_end" else None
    assert {t: l for t, l in last.items() if l} == {t: r["last LSN"] for t, r in ((r["txn"], r) for r in xcts)
                                                    if t in last}


@pytest.mark.parametrize("seed", SEEDS)
def test_redo_answer_is_what_restart_decides(seed):
    q = quiz("aries-redo", seed)
    pages, log = md_tables(q.problem)
    said = {}
    for line in steps(q.answer):
        m = re.match(r"redo: (0x\S+) \S+ (p\(\S+\)): .*: (redone|skipped)$", line)
        if m:
            said[m.group(1)] = (m.group(2), m.group(3), line)
    report = restarted(seed).restart_report.redo
    assert {lsn: what for lsn, (_, what, _) in said.items()} == {str(lsn): what for lsn, what in report.decisions}
    on_disk = {r["page"]: r for r in pages}
    for lsn, (page, what, line) in said.items():  # ARIES' test, from the problem's tables alone
        row = on_disk.get(page)
        if row is None:
            assert what == "skipped" and "not in the dirty page table" in line
        elif _packed(lsn) < _packed(row["rec LSN"]):
            assert what == "skipped" and "older than rec_lsn" in line
        else:
            assert what == ("redone" if _packed(row["page LSN on disk"]) < _packed(lsn) else "skipped"), line


def _packed(text: str) -> tuple[int, int]:
    if text == "NULL":
        return (0, 0)
    file, offset = text.split("/")
    return int(file, 16), int(offset, 16)


@pytest.mark.parametrize("seed", SEEDS)
def test_undo_answer_is_what_restart_does(seed):
    q = quiz("aries-undo", seed)
    _, log = md_tables(q.problem)
    prev = {r["LSN"]: r["prev LSN"] for r in log}
    sm = restarted(seed)
    undo = sm.restart_report.undo
    said = [re.match(r"T(\d+): (0x\S+) (\S+): (\w+)(?:; logs (\S+) at (0x\S+) \(undo_nxt=(\S+)\))?", line)
            for line in steps(q.answer) if re.match(r"T\d+: 0x", line)]
    assert [(int(m.group(1)), m.group(2)) for m in said] == [(tid, str(step.lsn)) for tid, step in undo.steps]
    for m, (_, step) in zip(said, undo.steps, strict=True):
        assert m.group(4) == step.action
        if m.group(5):  # the CLR is in the restarted log, and it goes on where the undone entry's chain went
            clr = sm.log.read(step.logged[0])
            assert (str(clr.lsn), str(clr.values["undo_nxt"])) == (m.group(6), m.group(7))
            assert m.group(7) == prev[m.group(2)]
    # the largest undo-next first, across all losers
    lsns = [_packed(m.group(2)) for m in said]
    assert lsns == sorted(lsns, reverse=True)
