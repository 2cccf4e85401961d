"""``make fuzz`` (scripts/fuzz.py): the harness's table, also written into RELIABILITY.md between its markers."""

import importlib.util
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load_fuzz_script():
    sys.path.insert(0, str(SCRIPTS))  # fuzz.py takes write_table from sweep.py beside it, as when run as a script
    try:
        spec = importlib.util.spec_from_file_location("minidb_fuzz_script", SCRIPTS / "fuzz.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def test_fuzz_writes_its_table_between_its_markers_and_keeps_the_sweep_table(tmp_path, capsys):
    fuzz = load_fuzz_script()
    sweep_table = "<!-- sweep table: x -->\n| engine | seeds |\n<!-- end of sweep table -->"
    out = tmp_path / "RELIABILITY.md"
    out.write_text(f"# Reliability\n\n{sweep_table}\n\n{fuzz.BEGIN}\nold table\n{fuzz.END}\n\nAfter.\n")
    assert fuzz.main(["--engine", "log", "--per-group", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert sweep_table in text and text.endswith("\n\nAfter.\n") and "old table" not in text
    table = text.split(fuzz.BEGIN)[1].split(fuzz.END)[0]
    rows = [line for line in table.splitlines() if line.startswith("| log | ")]
    kinds = {row.split(" | ")[1] for row in rows}
    assert {"erase-type", "erase-type-zero-item", "sibling-file", "older-copy"} <= kinds
    assert "| total | " in table and "0 WRONG, LOST or CRASH" in table
    assert "no bad case in" in capsys.readouterr().out
