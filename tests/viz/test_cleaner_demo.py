"""The cleaner and eraser demo of notebook 11: its default script, edited scripts, bad scripts, pictures, the control."""

import ast
import json

import pytest

from minidb.log import LSN
from minidb.log.files import file_name
from minidb.viz.cleaner import draw_cleanings, draw_eraser_cycle, draw_erasure, draw_file_timeline
from minidb.viz.cleaner_demo import (
    CLEANED,
    DB,
    DELETED,
    KEEP_MODES,
    SCRIPT,
    WRITTEN,
    cleaner_step,
    eraser_crash,
    eraser_crash_explorer,
    protocol_events,
    run_script,
    secret_left,
    step_of,
)
from minidb.viz.script import ScriptError

from tests.viz.helpers import ROOT
from tests.viz.test_readability import problems

CLEAN, DELETE_CKPT, ERASE = step_of(SCRIPT, "clean"), step_of(SCRIPT, "checkpoint", 3), step_of(SCRIPT, "erase_cycle")


def states(demo, step: int) -> dict[int, str]:
    return {f.number: f.state for f in demo.snapshots[step - 1].files}


def test_the_notebook_shows_the_default_script():
    cells = json.loads((ROOT / "notebooks" / "11_cleaner_eraser.ipynb").read_text(encoding="utf-8"))["cells"]
    [cell] = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).startswith("script = [")]
    assert ast.literal_eval(ast.parse("".join(cell["source"])).body[0].value) == SCRIPT


# -- the default script: what the notebook shows ------------------------------------------------------------------
def test_the_cleaner_picks_the_emptiest_files_while_the_total_is_under_50_percent():
    demo = run_script()
    assert [(c.step, c.file_number) for c in demo.cleanings] == [(CLEAN, 1), (CLEAN, 3)]
    assert "total utilization 45% < 50%: file 1 has the lowest (7%)" in demo.cleanings[0].reason
    assert "stop: total utilization 56% >= 50% and no file under 5%" in demo.snapshots[CLEAN - 1].said
    assert round(demo.snapshots[CLEAN - 2].total_utilization, 2) == 0.45


def test_the_live_entries_are_migrated_to_the_end_of_the_log():
    demo = run_script(upto=CLEAN)
    one, three = demo.cleanings
    assert [e.type_name for e in one.live] == ["MapLN"] and [e.type_name for e in three.live] == ["LN"]
    [dave] = three.live
    moved = demo.env.log.read(dave.moved_to)
    assert moved.values["key"] == b"dave" and dave.moved_to.file > 4  # after every cleaned file, near the log's end
    assert demo.env.database(DB).get("dave") == b"balance 30"
    obsolete = [e for e in three.entries if not e.live]
    assert len(obsolete) == 10 and all(e.moved_to is None for e in obsolete)


def test_a_cleaned_file_is_deleted_only_after_the_next_ckptend_and_from_the_head_only():
    demo = run_script(upto=DELETE_CKPT)
    after_clean, after_ckpt = states(demo, CLEAN), states(demo, DELETE_CKPT)
    assert after_clean[1] == after_clean[3] == CLEANED
    assert after_ckpt[1] == DELETED and after_ckpt[3] == CLEANED and after_ckpt[2] != CLEANED
    assert not demo.disk.exists(file_name(1)) and demo.disk.exists(file_name(3))
    assert run_script(upto=CLEAN).disk.exists(file_name(1))  # still there right after cleaning


def test_the_eraser_zeroes_the_deleted_records_bytes_and_the_log_recovers():
    demo = run_script()
    erasure = demo.erasures[0]
    assert [n for n, data in erasure.before.items() if b"pin 4711" in data] == [3]
    assert not secret_left(demo.disk, demo.deleted) and demo.deleted == {"secret", "pin 4711 for dave"}
    assert erasure.erased == [LSN(3, 0x242), LSN(4, 0x5F)]
    assert all(demo.env.is_entry_erased(lsn) for lsn in erasure.erased)
    assert sorted(erasure.lengths) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert erasure.plan[-1].end_ms == erasure.end_ms and not any(p.late for p in erasure.plan)
    assert demo.records() == {b"alice": b"balance 90", b"bob": b"balance 250", b"carol": b"balance 75",
                              b"dave": b"balance 30", **{f"f{i:02d}".encode(): b"filler 4" for i in range(4)},
                              b"f04": b"filler 3", b"f05": b"filler 3"}


# -- edited scripts ---------------------------------------------------------------------------------------------
def test_emptying_file_2_lets_the_cleaner_take_it_alone_and_it_waits_for_file_1():
    at = SCRIPT.index(("fill", 6), 6)
    script = SCRIPT[:at] + [("update", "bob", "balance 260"), ("update", "carol", "balance 80")] + SCRIPT[at:]
    demo = run_script(script)
    assert [c.file_number for c in demo.cleanings] == [2]
    after = states(demo, step_of(script, "checkpoint", 3))
    assert after[2] == CLEANED and after[1] == WRITTEN  # file 1 is still in use: file 2 cannot go before it
    assert demo.records()[b"bob"] == b"balance 260"


def test_without_the_delete_the_eraser_has_nothing_to_erase():
    demo = run_script([op for op in SCRIPT if op != ("delete", "secret")])
    assert demo.erasures[0].erased == [] and demo.records()[b"secret"] == b"pin 4711 for dave"
    assert secret_left(demo.disk, {"pin 4711 for dave"})


def test_the_step_function_follows_an_edited_script():
    script = SCRIPT[:3] + [("delete", "bob")]
    step = cleaner_step(4, script, draw=False)
    assert step.said[-1] == "deleted bob: all its versions are obsolete" and step.figure is None
    assert b"bob" not in step.demo.records()


# -- bad scripts ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("script, message", [
    ([("update", "zoe", "x")], "step 1 ('update', 'zoe', 'x'): no record 'zoe' to update"),
    ([("put", "a", "1"), ("delete", "b")], "step 2 ('delete', 'b'): no record 'b' to delete"),
    ([("fill", 0)], "step 1 ('fill', 0): count is a whole number from 1 to 50"),
    ([("recover",)], "step 1 ('recover',): the environment is open"),
    ([("crash",), ("put", "a", "1")], "step 2 ('put', 'a', '1'): the machine has crashed"),
    ([("put", "a", "1"), ("erase",)], "step 2 ('erase',): unknown operation 'erase'"),
    ([("clean", 2)], "step 1 ('clean', 2): clean takes no arguments"),
])
def test_a_bad_script_names_the_step(script, message):
    with pytest.raises(ScriptError) as caught:
        run_script(script)
    assert message in str(caught.value)


# -- crashing inside the eraser's write protocol ------------------------------------------------------------------
def test_the_crash_points_are_the_protocols_writes_and_fsyncs():
    events = protocol_events()
    assert [e.kind for e in events] == ["fsync", "write", "fsync", "write", "write", "fsync"] * 2
    assert [e.name for e in events] == [file_name(3)] * 6 + [file_name(4)] * 6


@pytest.mark.parametrize("keep", list(KEEP_MODES))
def test_a_crash_at_every_point_leaves_a_log_that_verifies_with_every_record(keep):
    results = [eraser_crash(point, keep, draw=False) for point in range(1, len(protocol_events()) + 1)]
    assert all(r.error is None and r.verified and r.records_ok for r in results), [r.summary() for r in results]
    erased = [r.erased for r in results]
    # The intent is recorded before a file's first write, so opening finishes a file once begun.
    assert erased == sorted(erased) and erased[0] == 1 and erased[-1] == 2
    assert results[-1].secret_left is False and results[0].secret_left is True


def test_type_byte_durable_before_the_erased_item_and_opening_finishes_it():
    """Point 4 (the erased item of file 3) lost, point 3 (the fsync of its type byte) kept: the entry is
    half erased, accepted through the recorded intent, and opening finishes its erased form."""
    result = eraser_crash(4, "nothing unsynced", draw=False)
    assert result.verified and result.records_ok
    assert result.erased == 1 and "write of the erased item at 0x250" in result.event and "42 zeros" in result.event


def test_the_explorer_is_the_crash_callback_driven_from_code():
    explorer = eraser_crash_explorer(SCRIPT)
    assert len(explorer.controls["point"].options) == len(protocol_events())
    explorer.controls["point"].value = 2
    explorer.controls["keep"].value = "everything written"
    assert explorer.result == eraser_crash(2, "everything written", draw=False).__class__(
        **{**vars(explorer.result), "figure": explorer.result.figure})
    assert explorer.result.erased == 1 and explorer.result.verified
    assert "type byte at 0x242 in 00000003.jdb" in explorer.result.summary()


def test_the_control_names_each_fsync_point_of_the_write_protocol():
    from minidb.viz.cleaner_demo import FSYNC_ROLES

    labels = [label for label, _ in eraser_crash_explorer(SCRIPT).controls["point"].options]
    fsyncs = [label for label in labels if "fsync" in label]
    assert fsyncs == [f"{n}: fsync file {f}, {role}" for n, f, role in
                      zip((1, 3, 6, 7, 9, 12), (3, 3, 3, 4, 4, 4), FSYNC_ROLES * 2, strict=True)]
    assert labels[1] == "2: file 3: type byte 0xff at 0x242"
    assert eraser_crash(3, draw=False).event == "fsync of 00000003.jdb (the type bytes made durable)"


def test_the_explorer_takes_an_edited_script():
    script = [op for op in SCRIPT if op != ("delete", "secret")]
    with pytest.raises(ValueError, match="crash point 1 is not between 1 and 0"):
        eraser_crash(1, script=script)
    assert protocol_events(script) == []


def test_bad_crash_arguments_are_refused():
    with pytest.raises(ValueError, match="crash point 13 is not between 1 and 12"):
        eraser_crash(13)
    with pytest.raises(ValueError, match="keep 'all'"):
        eraser_crash(1, "all")


# -- the pictures -------------------------------------------------------------------------------------------------
def test_every_picture_reads_at_notebook_size():
    demo = run_script()
    figures = [cleaner_step(CLEAN).figure, draw_cleanings(demo.cleanings), draw_file_timeline(demo.snapshots),
               draw_erasure(demo.erasures[0]), draw_eraser_cycle(demo.erasures[0]), eraser_crash(3).figure]
    assert [problems(fig) for fig in figures] == [[]] * len(figures)


def test_the_hexdump_shows_the_secret_before_and_zeros_after():
    fig = draw_erasure(run_script().erasures[0])
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")) if t.get_text()]
    assert "73" in texts and "file 3 before the cycle" in texts and "file 3 after the cycle" in texts
    assert texts.count("ff") >= 2  # the type byte after erasure (and 0xff bytes the entry held already)


def test_every_migration_has_an_arrow_and_none_crosses_a_file():
    from matplotlib.patches import FancyArrowPatch

    from minidb.viz.cleaner import draw_cleanings

    from tests.viz.helpers import arrows_through_boxes

    demo = cleaner_step(step_of(SCRIPT, "clean"), SCRIPT, draw=False).demo
    fig = draw_cleanings(demo.cleanings)
    migrated = sum(1 for c in demo.cleanings for e in c.entries if e.moved_to is not None)
    assert migrated == 2  # file 1's MapLN and file 3's LN
    assert sum(isinstance(p, FancyArrowPatch) for p in fig.axes[0].patches) == migrated
    assert arrows_through_boxes(fig) == []
