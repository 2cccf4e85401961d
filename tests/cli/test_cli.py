"""The command line: printlog (golden text), verify, crashtest, and one-line errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from minidb.cli import main
from minidb.io import OSDisk
from minidb.log import TRACE, LogManager, Provisional, file_name
from minidb.viz.log_demo import DEMO_MESSAGES

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def fixed_clock():
    return 1_700_000_000.0


@pytest.fixture
def demo_dir(tmp_path):
    """The demo messages, plus a provisional and two replicated entries, on real files."""
    path = tmp_path / "log"
    log = LogManager(OSDisk(path, create=True), file_max=330, buffer_size=70, clock=fixed_clock)
    for message in DEMO_MESSAGES:
        log.append(TRACE, {"message": message})
    log.append(TRACE, {"message": "logged provisionally"}, provisional=Provisional.YES)
    log.append(TRACE, {"message": "replicated <one>"}, vlsn=41)
    log.append(TRACE, {"message": "replicated & two"}, vlsn=42, provisional=Provisional.BEFORE_CKPT_END)
    log.close()
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def check_golden(name, text):
    path = GOLDEN / name
    if os.environ.get("MINIDB_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"output differs from {path}; rerun with MINIDB_UPDATE_GOLDEN=1 if intended"


def test_printlog_golden(capsys, demo_dir):
    code, out, err = run(capsys, "printlog", demo_dir)
    assert code == 0 and err == ""
    check_golden("printlog_demo.txt", out)


def test_printlog_codec_prints_the_generated_source(capsys):
    assert main(["printlog", "--codec", "Commit"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# generated from the field table of Commit: txn_id:I64, txn_prev_lsn:LSN")
    assert "def encode_Commit(values):" in out and "def decode_Commit(buf):" in out


def test_printlog_quiet_range_and_type(capsys, demo_dir):
    code, out, _ = run(capsys, "printlog", demo_dir, "-q", "-s", "0x1/0x2e", "-e", "0x1/0x70")
    assert code == 0
    assert out.splitlines() == [
        '<entry lsn="0x1/0x2e" type="Trace" prev="0x0" size="20" cksum="4103114586"/>',
        '<entry lsn="0x1/0x50" type="Trace" prev="0x2e" size="18" cksum="2004559821"/>',
        '<entry lsn="0x1/0x70" type="Trace" prev="0x50" size="19" cksum="3757857910"/>',
    ]
    code, out, _ = run(capsys, "printlog", demo_dir, "--type", "FileHeader", "-q")
    assert code == 0 and len(out.splitlines()) == len(list(demo_dir.glob("*.jdb")))


def test_verify_ok_and_problem(capsys, demo_dir):
    code, out, _ = run(capsys, "verify", demo_dir)
    assert code == 0 and out.startswith("ok: ") and "entries" in out
    second = demo_dir / file_name(1)
    data = bytearray(second.read_bytes())
    data[0x38] ^= 1
    second.write_bytes(bytes(data))
    code, out, _ = run(capsys, "verify", demo_dir)
    assert code == 1
    assert out.strip() == "problem: 00000001.jdb at offset 0x2e: checksum mismatch (stored 0xf4908f5a, computed 0x1916e9eb)"


def test_verify_notes_a_torn_tail(capsys, demo_dir):
    last = sorted(demo_dir.glob("*.jdb"))[-1]
    with open(last, "ab") as f:
        f.write(b"\x12\x34\x56")
    code, out, _ = run(capsys, "verify", demo_dir)
    assert code == 0 and "note:" in out and "torn tail" in out


@pytest.mark.parametrize("argv, message", [
    (["printlog", "{missing}"], "no such directory"),
    (["printlog", "{empty}"], "not a minidb log (no log files named like 00000001.jdb)"),
    (["verify", "{missing}"], "no such directory"),
    (["printlog", "{log}", "-s", "1/26"], "bad LSN '1/26'"),
    (["printlog", "{log}", "-s", "0x1/0x27"], "no log entry starts at 0x1/0x27"),
    (["printlog", "{log}", "--type", "Nope"], "unknown entry type 'Nope'"),
    (["printlog", "--codec", "Nope"], "unknown entry type 'Nope'"),
    (["printlog"], "printlog needs the log's directory (or --codec TYPE)"),
    (["printlog", "{foreign}"], "not a minidb log file"),
    (["crashtest", "log", "--ops", "0"], "must be at least 1"),
    (["crashtest", "nosuchengine"], "invalid choice"),
    (["crashtest", "log", "--show", "-3"], "argument --show: must be at least 0: -3"),
    (["crashtest", "log", "--volumes", "2"], "--volumes is for pagestore: the log crash test runs on one volume"),
    (["crashtest", "pagestore", "--volumes", "9"], "argument --volumes: must be at most 4"),
    (["frobnicate"], "invalid choice"),
    (["tour", "--workdir", "{afile}/work"], "{afile}/work: not a directory ({afile} is a file)"),
    (["tour", "--workdir", ""], "argument --workdir: an empty path"),
    (["figures", "--out", " "], "argument --out: an empty path"),
    (["generate", "--engine", "log", "--envs", "1", "--ops", "1", ""], "argument OUT: an empty path"),
    (["crashtest", "log", "--ops", "99999999999999999999999"], "must be at most 10,000"),
    (["tour", "--out", "{afile}/figures", "--workdir", "{missing}/work"], "{afile}/figures: not a directory"),
])
def test_user_errors_are_one_line_and_exit_2(tmp_path, demo_dir, argv, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / file_name(1)).write_bytes(b"GIF89a not a log at all")
    (tmp_path / "afile").write_text("a file, not a directory")
    places = {"missing": tmp_path / "missing", "empty": tmp_path / "empty", "log": demo_dir,
              "foreign": tmp_path / "foreign", "afile": tmp_path / "afile"}
    argv = [a.format(**places) for a in argv]
    message = message.format(**places)
    done = subprocess.run([sys.executable, "-m", "minidb", *argv], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr


def test_corruption_found_by_printlog_exits_1(capsys, demo_dir):
    first = demo_dir / file_name(1)
    data = bytearray(first.read_bytes())
    data[0x38] ^= 1
    first.write_bytes(bytes(data))
    code, _, err = run(capsys, "printlog", demo_dir)
    assert code == 1 and "corrupt: 00000001.jdb at offset 0x2e" in err


def test_a_missing_middle_file_is_corruption_for_printlog_and_verify(capsys, demo_dir):
    second = demo_dir / file_name(2)
    second.rename(demo_dir / file_name(3))  # as if file 2 were lost and file 3 followed
    before = {p.name: p.read_bytes() for p in demo_dir.iterdir()}
    code, out, err = run(capsys, "printlog", demo_dir)
    assert code == 1 and out == ""
    assert err.strip().startswith("minidb printlog: corrupt: 00000002.jdb at offset 0x0: log file is missing: "
                                  "the log jumps from 00000001.jdb to 00000003.jdb")
    code, out, _ = run(capsys, "verify", demo_dir)
    assert code == 1
    assert out.strip() == ("problem: 00000002.jdb at offset 0x0: log file is missing: "
                           "the log jumps from 00000001.jdb to 00000003.jdb")
    assert {p.name: p.read_bytes() for p in demo_dir.iterdir()} == before


def test_crashtest_log(capsys):
    code, out, _ = run(capsys, "crashtest", "log", "--seed", "7", "--ops", "30")
    assert code == 0
    points = int(out.split("crash points: ")[1].split(",")[0])
    assert points > 50 and out.strip().endswith("violations: 0")


def shorten(path, number, keep_entries):
    """Cut log file ``number`` after its first ``keep_entries`` entries (0: make it empty)."""
    log = LogManager(OSDisk(path, readonly=True), readonly=True)
    offsets = [e.lsn.offset for e in log.scan() if e.lsn.file == number]
    log.close()
    with open(path / file_name(number), "r+b") as f:
        f.truncate(offsets[keep_entries] if keep_entries else 0)


@pytest.mark.parametrize("keep_entries, what", [
    (0, "00000001.jdb at offset 0x0: log file is empty but is not the last file"),
    (2, "00000001.jdb at offset 0x50: the file's last entry is 0x1/0x2e, but 00000002.jdb's FileHeader says it is "
        "0x1/0x{last:x} (the file was cut short)"),
])
def test_item7_printlog_reports_a_shortened_non_last_file_as_verify_does(capsys, demo_dir, keep_entries, what):
    assert len(list(demo_dir.glob("*.jdb"))) == 2
    code, whole, _ = run(capsys, "printlog", demo_dir, "-q")
    last = [line for line in whole.splitlines() if 'lsn="0x1/' in line][-1].split('lsn="0x1/0x')[1].split('"')[0]
    what = what.format(last=int(last, 16))
    shorten(demo_dir, 1, keep_entries)
    before = {p.name: p.read_bytes() for p in demo_dir.iterdir()}
    code, out, err = run(capsys, "printlog", demo_dir, "-q")
    assert code == 1
    printed = out.splitlines()
    assert printed == whole.splitlines()[:keep_entries]  # what it can: the entries before the damage

    assert err.strip() == f"minidb printlog: corrupt: {what}"
    code, out, _ = run(capsys, "verify", demo_dir)
    assert code == 1 and out.strip() == f"problem: {what}"
    assert {p.name: p.read_bytes() for p in demo_dir.iterdir()} == before


def minidb(*argv):
    """``python -m minidb ARGV``: (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "minidb", *map(str, argv)], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def tree(path):
    return {str(p.relative_to(path)): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}


def assert_refused(err, message):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err


@pytest.mark.parametrize("user_file", ["envs/env-00/notes.txt", "transactions/keep.txt", "log/00000001.jdb",
                                       "pagestore/v1.vol", "replication/00000002.jdb", "thesis.tex"])
def test_item5_tour_refuses_a_workdir_it_did_not_write_and_changes_nothing(tmp_path, user_file):
    workdir = tmp_path / "work"
    (workdir / user_file).parent.mkdir(parents=True)
    (workdir / user_file).write_bytes(b"the user's own data")
    before = tree(tmp_path)
    code, out, err = minidb("tour", "--workdir", workdir, "--out", tmp_path / "figures")
    assert code == 2 and out == ""
    assert_refused(err, f"{workdir}: not empty, and not written by minidb tour (no .minidb-output in it)")
    assert tree(tmp_path) == before


def test_item5_a_marked_directory_with_a_path_it_does_not_list_is_refused(tmp_path):
    out = tmp_path / "gen"
    assert minidb("generate", "--engine", "log", "--envs", "2", "--ops", "20", out)[0] == 0
    assert (out / ".minidb-output").read_text().splitlines()[:3] == [
        "minidb output of: minidb generate", "env-00/", "env-00/00000001.jdb"]
    (out / "env-01" / "mine.txt").write_text("not the generator's")
    before = tree(tmp_path)
    code, _, err = minidb("generate", "--engine", "log", "--envs", "2", "--ops", "20", out)
    assert code == 2
    assert_refused(err, f"{out / 'env-01/mine.txt'}: not written by minidb generate")
    assert tree(tmp_path) == before
    (out / "env-01" / "mine.txt").unlink()
    again = tree(out)
    assert minidb("generate", "--engine", "log", "--envs", "2", "--ops", "20", out)[0] == 0  # its own output
    assert tree(out) == again  # the same seed, the same bytes, the same list
    code, _, err = minidb("figures", "--out", out)  # another command's output
    assert code == 2 and tree(out) == again
    assert_refused(err, f"{out}: holds the output of minidb generate, not of minidb figures")


@pytest.mark.parametrize("marker", ["minidb output of: minidb generate\n../outside.txt\n",
                                    "minidb output of: minidb generate\n/etc/passwd\n",
                                    "not a marker\n"])
def test_item5_a_marker_naming_paths_outside_is_refused(tmp_path, marker):
    out = tmp_path / "gen"
    out.mkdir()
    (out / ".minidb-output").write_text(marker)
    (tmp_path / "outside.txt").write_text("keep me")
    before = tree(tmp_path)
    code, _, err = minidb("generate", "--engine", "log", "--envs", "1", "--ops", "5", out)
    assert code == 2 and tree(tmp_path) == before
    assert_refused(err, ".minidb-output")


def test_item5_figures_refuse_a_directory_with_pictures_of_the_users(tmp_path):
    out = tmp_path / "pictures"
    out.mkdir()
    (out / "log_files.png").write_bytes(b"a picture the user drew")
    code, _, err = minidb("figures", "--out", out)
    assert code == 2 and (out / "log_files.png").read_bytes() == b"a picture the user drew"
    assert_refused(err, f"{out}: not empty, and not written by minidb figures")


@pytest.mark.parametrize("argv, message", [
    (["--envs", "99999999999", "--ops", "1"], "argument --envs: must be at most 1,000: 99999999999"),
    (["--envs", "1", "--ops", "99999999999"], "argument --ops: must be at most 1,000,000: 99999999999"),
    (["--envs", "1000", "--ops", "1000000"], "at most 1,000 environments, 1,000,000 operations each and "
                                             "2,000,000 in all (got --envs 1,000 --ops 1,000,000)"),
])
def test_item9_generate_bounds_envs_and_ops(tmp_path, argv, message):
    code, out, err = minidb("generate", "--engine", "logstore", *argv, tmp_path / "gen")
    assert code == 2 and out == ""
    assert_refused(err, message)
    assert not (tmp_path / "gen").exists()  # refused before anything was written


@pytest.mark.parametrize("argv, message", [
    (["crashtest", "log", "--seed", str(2**70)],
     f"argument --seed: must be at most 9,223,372,036,854,775,807 (a seed is below 2**63): {2**70}"),
    (["crashtest", "log", "--seed", "-1"], "argument --seed: must be at least 0: -1"),
    (["crashtest", "log", "--seeds", "0"], "argument --seeds: must be at least 1: 0"),
    (["crashtest", "log", "--seeds", "1000000000"], "argument --seeds: must be at most 100,000"),
    (["crashtest", "log", "--seed", str(2**63 - 1), "--seeds", "2"],
     f"the last seed, {2**63}, is not below 2**63"),
    (["generate", "--engine", "log", "--envs", "1", "--ops", "1", "--seed", "-7", "{missing}"],
     "argument --seed: must be at least 0: -7"),
    (["generate", "--engine", "log", "--envs", "1", "--ops", "1", "--seed", str(2**64), "{missing}"],
     "argument --seed: must be at most"),
    (["grade", "04a", "--seed", "-1"], "argument --seed: must be at least 0: -1"),
])
def test_every_seed_is_non_negative_and_below_2_63(tmp_path, argv, message):
    argv = [a.format(missing=tmp_path / "missing") for a in argv]
    code, out, err = minidb(*argv)
    assert code == 2 and out == ""
    assert_refused(err, message)
    assert not (tmp_path / "missing").exists()
