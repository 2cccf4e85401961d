"""Every test file has a name no other test file has: pytest imports test files without packages by their
base name, so two of the same name in different directories break the full suite's collection."""

from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name():
    names = Counter(p.name for top in ("tests", "exercises") for p in (ROOT / top).rglob("test_*.py")
                    if not (p.parent / "__init__.py").exists())
    assert [name for name, count in names.items() if count > 1] == []
