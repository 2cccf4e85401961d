"""The data eraser: configuration, write protocol under crashes, selection, cycles, throttle, stats."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest

from minidb.errors import UserError
from minidb.io import CrashMode, SimDisk, crash_points
from minidb.log.files import file_name, log_file_numbers
from minidb.log.header import ERASED_TYPE, check_entry, erased_type, read_header, verify_checksum
from minidb.log.verify import verify_log
from minidb.logstore import Environment, EnvironmentConfig
from minidb.logstore.eraser import (
    ERASER_STATS,
    MAYBE_EXTINCT,
    NOT_EXTINCT,
    STATE_FILE,
    CycleState,
    DataEraser,
    EraserConfig,
    ManualClock,
    SystemClock,
    WorkThrottle,
    erase_file,
    erasing_of,
    locate,
    read_state,
)
from minidb.logstore.eraser.state import ERASED, SKIPPED, TO_DO, write_state
from minidb.logstore.tools.verify import records
from minidb.stats import Stats

DAY = 86_400_000
SECRET_KEY, SECRET_DATA = b"secretkey", b"secretdata"


def config() -> EnvironmentConfig:
    return EnvironmentConfig(file_max=1000, node_max_entries=128, checkpoint_bytes_interval=None,
                             clock=lambda: 1_700_000_000.0, trace=False)


def workload(disk: SimDisk | None = None, **overrides: Any) -> tuple[SimDisk, Environment]:
    """A record written then deleted early; enough later writes and checkpoints to push it out of the tail."""
    disk = disk or SimDisk("eraser")
    env = Environment.open(disk, replace(config(), **overrides))
    db = env.database("a")
    db.put(SECRET_KEY, SECRET_DATA)
    for i in range(20):
        db.put(f"k{i:02d}", "x" * 30)
    db.put(SECRET_KEY, SECRET_DATA + b"2")
    db.delete(SECRET_KEY)
    env.checkpoint()
    for i in range(40):
        db.put(f"k{i % 20:02d}", "y" * 30)
    env.checkpoint()
    env.checkpoint()
    return disk, env


def with_secret(name: str, overwrites: int) -> tuple[SimDisk, Environment, Any]:
    """A fresh environment whose database "a" holds the secret record, then ``overwrites`` puts of 20 other keys."""
    disk = SimDisk(name)
    env = Environment.open(disk, config())
    db = env.database("a")
    db.put(SECRET_KEY, SECRET_DATA)
    for i in range(overwrites):
        db.put(f"k{i % 20:02d}", "y" * 30)
    return disk, env, db


def eraser(env, clock=None, **options) -> DataEraser:
    return DataEraser(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), clock or ManualClock(), **options)


def files_holding(disk, needle: bytes) -> list[int]:
    return [n for n in log_file_numbers(disk) if needle in disk.open(file_name(n)).read_all()]


# -- configuration ------------------------------------------------------------------------------
def test_config_defaults_are_off_and_bad_values_are_refused():
    assert not EraserConfig().active
    assert EraserConfig(run_eraser=True, erase_period_ms=5).active
    with pytest.raises(UserError, match="erase_period_ms"):
        EraserConfig(erase_period_ms=-1)
    _, env = workload()
    e = eraser(env)
    with pytest.raises(UserError, match="unknown eraser setting"):
        e.config_update(erase_periode=3)
    assert e.config.erase_period_ms == DAY


def test_config_change_observed_at_run_time_aborts_the_cycle():
    _, env = workload()
    e = eraser(env)
    e.start_cycle()
    e.config_update(erase_period_ms=2 * DAY)
    assert e.cycle is None and "configuration changed" in e.messages[-1]
    e.config_update(run_eraser=False)
    assert e.run_cycle() is None
    e.config_update(run_eraser=True)
    cycle = e.run_cycle()
    assert cycle.end_ms - cycle.start_ms == 2 * DAY


class PausingDisk:
    """``disk``, except that the cycle state's replacement (written whole, then renamed into place), once
    armed, waits for ``go`` (after setting ``inside``)."""

    def __init__(self, disk):
        self.disk, self.armed = disk, False
        self.inside, self.go = threading.Event(), threading.Event()

    def replace(self, name, data):
        if self.armed and name == STATE_FILE:
            self.armed = False
            self.inside.set()
            self.go.wait()
        return self.disk.replace(name, data)

    def __getattr__(self, name):
        return getattr(self.disk, name)


def test_a_config_change_while_a_file_is_processed_never_writes_the_dropped_cycle_back():
    disk, env = workload()
    e = eraser(env)
    e.disk = pausing = PausingDisk(disk)
    e.start_cycle()
    pausing.armed = True
    worker = threading.Thread(target=e.step)
    worker.start()
    assert pausing.inside.wait(60)  # the thread has processed a file and is writing the cycle's state (a bound:
    # a thread that never gets there is a failure, not a hang)
    e.config_update(erase_period_ms=2 * DAY)
    pausing.go.set()
    worker.join()
    assert e.cycle is None and not disk.exists(STATE_FILE)
    e.close()
    reopened = eraser(env)
    reopened.open()
    assert reopened.cycle is None  # nothing to resume: the aborted cycle is gone


# -- which entries, and no byte left ---------------------------------------------------------------
def test_after_erasure_no_byte_of_a_deleted_record_is_left_in_any_file():
    disk, env = workload()
    assert files_holding(disk, SECRET_KEY) and files_holding(disk, SECRET_DATA)
    e = eraser(env)
    e.run_cycle()
    assert files_holding(disk, SECRET_KEY) == [] and files_holding(disk, SECRET_DATA) == []
    assert e.stats["eraserFilesErased"] >= 1
    live = records(env)["a"]
    assert len(live) == 20 and SECRET_KEY not in live
    env.close()
    assert verify_log(disk).ok
    assert records(Environment.open(disk, config()))["a"] == live


def test_live_records_and_their_old_versions_are_kept():
    disk, env = workload()
    eraser(env).run_cycle()
    assert files_holding(disk, b"x" * 30)  # old versions of live records are not the eraser's business
    assert not files_holding(disk, SECRET_DATA)


def test_extinct_records_are_erased_and_maybe_extinct_aborts_the_file():
    disk, env = workload()
    e = DataEraser(env, EraserConfig(True, DAY, erase_deleted=False), ManualClock(),
                   extinction_filter=lambda db, key: "EXTINCT" if key == b"k03" else NOT_EXTINCT)
    e.run_cycle()
    assert files_holding(disk, SECRET_DATA)  # deleted records are not erased when erase_deleted is off
    old_k03 = [entry for entry in env.log.scan() if entry.lsn.file in e.cycle.files
               and env.utilization.is_obsolete(entry.lsn) and entry.header.type_code in (0x40, 0xff)]
    assert old_k03 and all(entry.header.erased for entry in old_k03 if entry.values.get("key") == b"k03")
    erased = [entry for entry in old_k03 if entry.header.erased]
    assert erased and all(e.is_entry_erased(entry.lsn) for entry in erased)
    assert not any(b"k03" in disk.open(file_name(n)).read_all()[entry.lsn.offset: entry.lsn.offset + entry.size]
                   for n in e.cycle.files for entry in erased if entry.lsn.file == n)
    disk2, env2 = workload()
    m = DataEraser(env2, EraserConfig(True, DAY), ManualClock(), extinction_filter=lambda db, key: MAYBE_EXTINCT)
    m.start_cycle()
    first = m.cycle.remaining[0]
    assert m.step()
    assert "MAYBE_EXTINCT" in m.messages[-1] and first in m.cycle.remaining
    assert m.cycle.remaining[-1] == first or sorted(m._aborted) == [first]  # retried after the others
    m.run_cycle()  # retried until the cycle runs out of time: aborted, nothing erased
    assert "not finished by its end time" in m.messages[-1] and files_holding(disk2, SECRET_DATA)


# -- the write protocol under crashes ----------------------------------------------------------------
def chosen(env, e):
    picks = {}
    for number in e.eligible_files()[0]:
        buf = env.disk.open(file_name(number)).read_all()
        offsets = e.entries_to_erase(number, buf)
        if offsets:
            picks[number] = (buf, offsets)
    return picks


def test_a_crash_at_every_write_and_fsync_of_the_protocol_leaves_a_log_that_opens_verifies_and_finishes():
    """Every crash point of the protocol (the intent's state file, the touch, the type bytes, the erased forms,
    the fsyncs, the file marked erased), torn writes and subsets of unsynced writes included: the log verifies
    with the recorded intent, opening finishes the erasure, and then it verifies alone, every entry erased."""
    disk, env = workload()
    e = eraser(env)
    picks = chosen(env, e)
    assert picks
    env.log.sync()
    want = records(env)
    start = len(disk.events)
    stats = Stats("Eraser", ERASER_STATS)
    for number, (buf, offsets) in picks.items():
        erase_file(disk, number, locate(buf, offsets), stats)
    assert stats["eraserFSyncs"] == 3 * len(picks)
    points = half_erased = 0
    for point in crash_points(disk, start=start, torn_variants=2, random_variants=3, seed=7):
        points += 1
        image = point.disk
        intent = erasing_of(image)
        assert verify_log(image, intent).ok, point
        if intent and not verify_log(image).ok:
            half_erased += 1
        for number, (buf, offsets) in picks.items():
            data = image.open(file_name(number)).read_all()
            for offset in offsets:
                header, problem = read_header(data, offset)
                assert problem is None
                item = data[offset + header.size: offset + header.entry_size]
                if header.type_code != ERASED_TYPE:  # not erased yet: untouched, checksum intact
                    assert item == buf[offset + header.size: offset + header.entry_size]
                    assert verify_checksum(data, offset, header) is None
                elif offset not in intent.get(number, {}):  # done: the erased form, which verifies alone
                    assert verify_checksum(data, offset, header) is None, point
        reopened = Environment.open(image, config())
        assert records(reopened) == want, point
        reopened.close()
        assert erasing_of(image) == {} and verify_log(image).ok, point
        for number, (buf, offsets) in picks.items():
            data = image.open(file_name(number)).read_all()
            if any(data[offset + 4] == ERASED_TYPE for offset in offsets):  # begun, so finished at open
                for offset in offsets:
                    header, problem = check_entry(data, offset, None)
                    assert problem is None and header.erased and erased_type(data, offset, header) == buf[offset + 4]
    assert points > 10 and half_erased > 0


def test_an_erased_entry_with_its_old_item_verifies_only_with_the_intent():
    """Between step 4 and step 5 the item is intact but the type byte changed: the checksum no longer matches,
    so the entry is accepted only where the intent names it (and a forged 0xff nowhere)."""
    disk, env = workload()
    number, (buf, offsets) = next(iter(chosen(env, eraser(env)).items()))
    env.log.sync()
    with disk.open(file_name(number)) as handle:
        handle.write(offsets[0] + 4, bytes([ERASED_TYPE]))
    data = disk.open(file_name(number)).read_all()
    header, _ = read_header(data, offsets[0])
    assert header.erased and verify_checksum(data, offsets[0], header) is not None
    assert not verify_log(disk).ok
    assert verify_checksum(data, offsets[0], header, erasing=buf[offsets[0] + 4]) is None
    assert verify_log(disk, {number: {offsets[0]: buf[offsets[0] + 4]}}).ok


# -- exclusions ---------------------------------------------------------------------------------------
def test_the_file_being_written_and_the_recovery_interval_are_excluded():
    _, env = workload()
    e = eraser(env)
    files, tail = e.eligible_files()
    assert env.log.end_lsn.file in tail
    start = e.recovery_start()
    assert all(n < start.file for n in files) and all(n >= start.file for n in tail)
    e.start_cycle()
    assert any("tail end of the log is not erased" in line for line in e.messages)


def test_an_early_active_transaction_moves_the_recovery_interval_back():
    disk = SimDisk("txn")
    env = Environment.open(disk, config())
    db = env.database("a")
    txn = env.begin()
    db.put("t", "1", txn=txn)
    first = txn.first_lsn
    for i in range(60):
        db.put(f"k{i % 20:02d}", "y" * 30)
    env.checkpoint()
    e = eraser(env)
    assert e.recovery_start() <= first
    assert all(n < first.file for n in e.eligible_files()[0])
    txn.abort()


def test_protected_files_are_skipped_and_reserved_files_deleted():
    disk, env = workload()
    deleted = []
    protected = {1}
    e = eraser(env, protected_files=lambda: protected, reserved_files=lambda: {2, 3},
               delete_reserved=lambda n: deleted.append(n))
    cycle = e.start_cycle()
    assert 1 not in cycle.files
    with disk.open(file_name(3)):
        pass
    disk.delete(file_name(3))  # the cleaner deleted it meanwhile
    e.run_cycle()
    assert deleted == [2]
    assert e.stats["eraserFilesDeleted"] == 1 and e.stats["eraserFilesAlreadyDeleted"] == 1


def cleaned_and_kept(env: Environment, files: list[int]):
    """Clean ``files`` while a backup protects the first; the checkpoint's step 9 keeps them all (reserved)."""
    backup = env.cleaner.protector.protect("backup", files[0], files[0])
    for number in files:
        assert env.cleaner.clean_file(number).cleaned
    env.checkpoint()
    assert env.log.head == files[0] and env.cleaner.reserved == set(files)
    return backup


def test_an_attached_eraser_neither_deletes_nor_erases_a_protected_file():
    disk, env = workload(cleaner_delete_middle_files=False)  # the head-only rule (a replicated environment's)
    assert 1 in files_holding(disk, SECRET_DATA)
    cleaned_and_kept(env, [1, 2])
    e = DataEraser.attach(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), ManualClock())
    assert e.reserved_files() == set()  # file 2 waits for file 1: deletion is from the log's low end
    cycle = e.run_cycle()
    assert 1 not in cycle.files and disk.exists(file_name(1)) and 1 in files_holding(disk, SECRET_DATA)
    assert e.stats["eraserFilesDeleted"] == 0 and env.log.head == 1


def test_an_attached_eraser_deletes_reserved_files_through_the_cleaner():
    disk, env = workload()
    listened = []
    env.cleaner.protector.add_deletion_listener(listened.append)  # as the VLSN index's listener is called
    env.cleaner.protector.release(cleaned_and_kept(env, [1, 2]))
    e = DataEraser.attach(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), ManualClock())
    assert e.reserved_files() == {1, 2}
    e.run_cycle()
    assert not disk.exists(file_name(1)) and not disk.exists(file_name(2)) and env.log.head == 3
    assert e.stats["eraserFilesDeleted"] == 2 and listened == [1, 2]
    assert env.cleaner.reserved == set() and env.cleaner.cleaned == set()
    assert not files_holding(disk, SECRET_DATA) and records(env)["a"]


def test_a_reserved_file_that_cannot_be_deleted_now_is_erased():
    disk, env = workload()
    e = eraser(env, reserved_files=lambda: {1}, delete_reserved=lambda n: False)
    e.run_cycle()
    assert disk.exists(file_name(1)) and 1 not in files_holding(disk, SECRET_DATA)
    assert e.stats["eraserFilesDeleted"] == 0 and any("could not be deleted now" in m for m in e.messages)


def test_a_file_the_vlsn_index_cannot_release_is_left_alone():
    disk, env = workload()
    asked = []
    e = eraser(env, truncate_vlsn_index=lambda n: asked.append(n) or False)
    e.run_cycle()
    assert asked and files_holding(disk, SECRET_DATA)
    assert any("VLSN index cannot be truncated" in line for line in e.messages)


def test_a_file_the_vlsn_index_cannot_release_is_recorded_skipped_not_erased():
    disk, env = workload()
    e = eraser(env, truncate_vlsn_index=lambda n: False)
    e.run_cycle()
    saved, _ = read_state(disk)
    assert saved is not None and saved.files and set(saved.files.values()) == {SKIPPED}
    assert e.stats["eraserFilesErased"] == 0 and not saved.remaining


def test_before_file_erased_listeners_hear_each_file_before_it_changes():
    disk, env = workload()
    heard = []
    env.hooks.before_file_erased.append(lambda n: heard.append((n, SECRET_DATA in disk.open(file_name(n)).read_all())))
    e = eraser(env)
    e.start_cycle()
    targets = chosen(env, e)
    e.run_cycle()
    assert [n for n, _ in heard] == sorted(targets) and all(held for _, held in heard)
    assert not files_holding(disk, SECRET_DATA)


def test_a_file_that_becomes_protected_is_aborted_and_stays_to_do():
    disk, env = workload()
    protected: set[int] = set()
    e = eraser(env, protected_files=lambda: protected)
    e.start_cycle()
    target = next(iter(chosen(env, e)))
    original = e._work

    def work(units):
        original(units)
        if e.current_file == target:
            protected.add(target)
            e.abort_erase(target)
    e._work = work
    e.run_cycle()
    assert any(f"erasure of file 0x{target:x} aborted" in line for line in e.messages)
    assert target in e.cycle.remaining and files_holding(disk, SECRET_DATA)


# -- cycles: persisted, suspended, resumed, late -------------------------------------------------------
def test_cycle_state_format_round_trips_and_refuses_damage():
    state = CycleState(1, 2, {1: ERASED, 5: TO_DO})
    data = state.pack()
    assert len(data) == 26 + 5 * 2 + 8 + 4
    assert CycleState.unpack(data) == state
    state.erasing = (5, {0x1a0: 0x41, 0x2c4: 0x49})  # the intent: an LN_TX and a BIN of file 5
    data = state.pack()
    assert len(data) == 26 + 5 * 2 + 8 + 5 * 2 + 4 and data[36:54] == bytes.fromhex("05000000 02000000 a0010000 41 c4020000 49")
    assert CycleState.unpack(data) == state and state.erasing_map() == {5: {0x1a0: 0x41, 0x2c4: 0x49}}
    for bad in (data[:-1], b"XXXX" + data[4:], data[:-4] + b"\0\0\0\0"):
        with pytest.raises(ValueError):
            CycleState.unpack(bad)


def test_a_cycle_is_suspended_at_close_and_resumed_at_open():
    disk, env = workload()
    clock = ManualClock()
    e = eraser(env, clock)
    e.start_cycle()
    assert e.step()
    total = len(e.cycle.files)
    e.close()
    assert "suspended" in e.messages[-1]
    env.close()
    env = Environment.open(disk, config())
    again = eraser(env, clock)
    again.open()
    assert "resumed" in again.messages[-1]
    assert len(again.cycle.processed) == 1 and len(again.cycle.files) == total
    again.run_cycle()
    assert not again.cycle.remaining and not files_holding(disk, SECRET_DATA)


def test_an_attached_eraser_follows_the_environment_close_and_open():
    disk, env = workload()
    clock = ManualClock()
    e = DataEraser.attach(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), clock)
    e.start_cycle()
    e.step()
    env.close()
    assert "suspended" in e.messages[-1]
    env = Environment.open(disk, config())
    again = DataEraser.attach(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), clock)
    assert "resumed" in again.messages[-1] and len(again.cycle.processed) == 1


def test_a_cycle_past_its_end_is_not_resumed_and_a_late_cycle_is_aborted():
    disk, env = workload()
    clock = ManualClock()
    e = eraser(env, clock)
    e.start_cycle()
    e.step()
    clock.advance(2 * DAY)
    e2 = eraser(env, clock)
    e2.open()
    assert "cannot be resumed" in e2.messages[-1] and e2.cycle is None and not disk.exists(STATE_FILE)
    e3 = eraser(env, clock)
    e3.start_cycle()
    e3.step()
    clock.advance(DAY)
    assert not e3.step()
    assert "not finished by its end time" in e3.messages[-1] and e3.cycle is None


def test_an_unreadable_state_file_starts_a_fresh_cycle():
    disk, env = workload()
    write_state(disk, CycleState(1, 2, {1: TO_DO}))
    with disk.open(STATE_FILE) as handle:
        handle.write(0, b"JUNK")
    e = eraser(env)
    e.open()
    assert "unreadable" in e.messages[-1] and read_state(disk)[1] is not None


# -- throttling ------------------------------------------------------------------------------------------
def test_throttle_worked_example():
    clock = ManualClock(0)
    throttle = WorkThrottle(clock, 3 * (1000 + 2000), 0, DAY)
    assert throttle.ms_per_unit == 9600
    throttle.work(1000)
    assert clock.now == 9_600_000
    for units in (1000, 180, 160, 500):
        throttle.work(units)
    assert clock.now == 27_264_000
    throttle.work(160)
    for units in (2000, 2000, 360, 320, 1000, 320):
        throttle.work(units)
    assert clock.now == DAY


def test_throttle_never_catches_up():
    clock = ManualClock(0)
    throttle = WorkThrottle(clock, 100, 0, 1000)  # 10 ms a unit
    throttle.work(10)
    assert clock.now == 100
    clock.advance(500)  # the node was down
    throttle.work(10)
    assert clock.now == 600  # late: no wait ...
    throttle.work(10)
    assert clock.now == 700  # ... and the next piece still takes its 100 ms, no burst


def test_a_cycle_spreads_three_times_the_file_lengths_over_its_period():
    disk, env = workload()
    clock = ManualClock(0)
    e = eraser(env, clock)
    cycle = e.start_cycle()
    lengths = [disk.size(file_name(n)) for n in cycle.files]
    assert e.throttle.total_work == 3 * sum(lengths)
    first = lengths[0]
    e.step()
    per_unit = DAY / (3 * sum(lengths))
    assert clock.waits[0] == int(first * per_unit)  # component 1 of the first file
    e.run_cycle()
    assert abs(clock.now - DAY) <= len(clock.waits)  # the work ends at the end of the cycle (ms rounding)


def test_data_obsolete_at_t_is_erased_before_t_plus_two_periods():
    disk, env, db = with_secret("two-periods", 40)
    env.checkpoint()
    clock = ManualClock(0)
    e = eraser(env, clock)
    e.start_cycle()
    e.step()  # the first cycle is under way ...
    deleted_at = clock.now
    assert 0 < deleted_at < DAY
    db.delete(SECRET_KEY)  # ... when the record is deleted
    for i in range(40):
        db.put(f"k{i % 20:02d}", "z" * 30)
    env.checkpoint()
    env.checkpoint()
    e.run_cycle()  # the rest of the first cycle
    assert abs(clock.now - DAY) < 100 and "cycle complete" in e.messages[-1]
    e.run_cycle()  # the next cycle starts where the first ended
    assert e.cycle.start_ms == DAY and not e.cycle.remaining
    assert not files_holding(disk, SECRET_DATA) and clock.now <= deleted_at + 2 * DAY
    e.cycle = CycleState(clock.now, clock.now + DAY, {})  # a cycle that finished early ...
    e.run_cycle()
    assert e.cycle.start_ms == e.cycle.end_ms - DAY == 3 * DAY  # ... is followed by the next at its end


# -- the eraser's thread ------------------------------------------------------------------------------------
def test_the_thread_runs_cycles_until_shutdown():
    disk, env = workload()
    e = eraser(env)
    complete = threading.Event()
    e.trace.listen(lambda line: complete.set() if "cycle complete" in line else None)
    e.start_thread()
    assert complete.wait(60)
    e.shutdown()
    assert e._thread is None and not files_holding(disk, SECRET_DATA) and e.saved_shutdown_exception is None


def test_the_thread_keeps_the_error_that_stopped_it():
    _, env = workload()
    e = eraser(env, protected_files=lambda: 1 / 0)
    e.start_thread()
    e._thread.join(60)
    assert isinstance(e.saved_shutdown_exception, ZeroDivisionError) and "thread stopped" in e.messages[-1]
    e.shutdown()


def test_shutdown_cuts_a_real_wait_short():
    disk, env = workload()
    e = DataEraser.attach(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), SystemClock())
    started = threading.Event()
    e.trace.listen(lambda line: started.set() if "cycle started" in line else None)
    e.start_thread()
    assert started.wait(60)
    env.close()  # stops the thread (its throttle waits hours of real time), suspends the cycle
    assert e._thread is None and "suspended" in e.messages[-1]
    assert read_state(disk)[0].remaining


# -- statistics -------------------------------------------------------------------------------------------
def test_the_eleven_statistics():
    disk, env = workload()
    clock = ManualClock(5_000)
    e = eraser(env, clock)
    e.run_cycle()
    stats = e.load_stats()
    assert list(stats) == ERASER_STATS and len(ERASER_STATS) == 11
    assert (stats["eraserCycleStart"], stats["eraserCycleEnd"]) == (5_000, 5_000 + DAY)
    assert stats["eraserFilesRemaining"] == 0
    assert stats["eraserReads"] == len(e.cycle.files)
    assert stats["eraserReadBytes"] == sum(disk.size(file_name(n)) for n in e.cycle.files)
    assert stats["eraserFSyncs"] == 3 * stats["eraserFilesErased"]
    assert stats["eraserWrites"] > 0 and stats["eraserWriteBytes"] > stats["eraserWrites"]


def test_what_made_the_data_obsolete_is_durable_before_the_data_goes():
    disk, env, db = with_secret("late-delete", 60)
    env.checkpoint()
    env.checkpoint()
    db.delete(SECRET_KEY)  # not synced by itself: no transaction
    eraser(env).run_cycle()
    assert not files_holding(disk, SECRET_DATA)
    env.crash()  # drops whatever was not fsynced
    reopened = Environment.open(disk, config())
    live = records(reopened)["a"]
    assert SECRET_KEY not in live and len(live) == 20


def test_a_read_only_open_accepts_a_recorded_erasure_as_it_is_and_writes_nothing():
    """A crash between the type bytes and the erased forms, opened read only: the intent lets the half-erased
    entries pass, nothing is finished (nothing is written); a writable open then finishes them."""
    disk, env = workload()
    e = eraser(env)
    number, (buf, offsets) = next(iter(chosen(env, e).items()))
    env.log.sync()
    want = records(env)
    start = len(disk.events)
    erase_file(disk, number, locate(buf, offsets), Stats("Eraser", ERASER_STATS))
    fsyncs = [ev.index for ev in disk.events[start:] if ev.kind == "fsync" and ev.name == file_name(number)]
    image = disk.crash_image(fsyncs[1], CrashMode.nothing())  # the type bytes durable, the erased forms not
    assert erasing_of(image) and not verify_log(image).ok
    before = {name: image.open(name).read_all() for name in image.list()}
    reader = Environment.open(image, replace(config(), read_only=True))
    assert records(reader) == want
    reader.close()
    assert {name: image.open(name).read_all() for name in image.list()} == before
    Environment.open(image, config()).close()
    assert erasing_of(image) == {} and verify_log(image).ok
