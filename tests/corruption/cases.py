"""The case list: every way the harness damages a state, as data.

A :class:`Case` names the engine, the file, the byte offset and the kind of
damage; applying it to a state's files gives the damaged image. The kinds:

=======================  ==========================================================
``bitflip-header``       one bit of an entry header, a page header or footer, a
                         master slot (every bit of every header: ``bit`` says which)
``bitflip-item``         one bit of a log entry's item (a seeded sample per entry)
``bitflip-page``         one bit of a page's body (a seeded sample per page)
``zero-header``          an entry header or a master slot set to zeros (``length``)
``zero-page``            a whole page set to zeros
``erase-type``           a log entry's type byte set to 0xff (the erased type),
                         nothing else changed: a forged erasure
``erase-type-zero-item`` a log entry's type byte set to 0xff and its item zeroed
                         (``length``): what an erasure without a checksum left
``truncate-at-boundary`` the file cut at an entry, page or slot boundary
``delete-file``          the file removed
``sibling-file``         a log file replaced by the same-numbered file of a sibling
                         environment (same builder, other values of the same sizes)
``older-copy``           a file replaced by an older copy of itself (a snapshot
                         taken partway through the build)
=======================  ==========================================================

:func:`all_cases` is the full list (``make fuzz``); :func:`sample` takes a
seeded handful of each (engine, kind, file) for ``make test``. Cases that would
change nothing (zeroing a page that is all zeros, cutting a file at its end)
are not listed, nor are cuts of a volume that remove only pages never written
(zeros: a page past the end of the file reads as zeros).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

from tests.corruption.state import Layout, State

KINDS = ("bitflip-header", "bitflip-item", "bitflip-page", "zero-header", "zero-page", "erase-type",
         "erase-type-zero-item", "truncate-at-boundary", "delete-file")
REPLACING = ("sibling-file", "older-copy")  # the file's bytes replaced by other whole-file bytes
KINDS += REPLACING
ERASED_TYPE = 0xFF  # the type byte of an erased entry (minidb.log.header.ERASED_TYPE), at offset 4 of the header
ITEM_BITS_PER_ENTRY = 4
BODY_BITS_PER_PAGE = 16
SEED = 2026


@dataclass(frozen=True)
class Case:
    engine: str
    file: str
    offset: int
    kind: str
    bit: int = 0  # bitflip-*: which bit of the byte at offset
    length: int = 0  # zero-*: how many bytes from offset; erase-type-zero-item: the item's size
    item_at: int = 0  # erase-type-zero-item: where the item starts, from offset (the header's size)
    replacement: bytes = field(default=b"", repr=False)  # sibling-file, older-copy: the file's new bytes

    def apply(self, files: dict[str, bytes]) -> dict[str, bytes]:
        """A damaged copy of ``files``."""
        damaged = dict(files)
        if self.kind in REPLACING:
            damaged[self.file] = self.replacement
            return damaged
        data = bytearray(files[self.file])
        if self.kind.startswith("bitflip"):
            data[self.offset] ^= 1 << self.bit
        elif self.kind.startswith("zero"):
            data[self.offset:self.offset + self.length] = bytes(self.length)
        elif self.kind.startswith("erase-type"):
            data[self.offset + 4] = ERASED_TYPE
            start = self.offset + self.item_at
            data[start:start + self.length] = bytes(self.length)  # the item (none for erase-type)
        elif self.kind == "truncate-at-boundary":
            del data[self.offset:]
        elif self.kind == "delete-file":
            del damaged[self.file]
            return damaged
        else:
            raise ValueError(f"unknown kind of damage {self.kind!r}")
        damaged[self.file] = bytes(data)
        return damaged

    def __str__(self) -> str:
        what = {"bitflip": f" bit {self.bit}", "zero": f" +{self.length}"}.get(self.kind.split("-")[0], "")
        if self.kind == "erase-type-zero-item":
            what = f" item +{self.length}"
        if self.kind in REPLACING:
            what = f" ({len(self.replacement)} of {self.offset} bytes)"
        return f"{self.engine} {self.kind} {self.file} @0x{self.offset:x}{what}"


def all_cases(state: State, seed: int = SEED) -> list[Case]:
    rng = random.Random(f"{seed}/{state.engine}")
    cases: list[Case] = []
    for name in state.log_files:
        cases += _log_file_cases(state, name, rng)
    for name, layout in sorted(state.layouts.items()):
        if name in state.files:
            cases += _unit_file_cases(state, name, layout, rng)
    cases += [Case(state.engine, name, 0, "delete-file") for name in sorted(state.files)]
    cases += _replacing_cases(state)
    return cases


def _replacing_cases(state: State) -> list[Case]:
    """Each log file swapped for its sibling's, each file for each of its older copies (``offset``: the
    size of the file replaced)."""
    cases = [Case(state.engine, name, len(state.files[name]), "sibling-file", replacement=state.sibling[name])
             for name in state.log_files if state.sibling.get(name, state.files[name]) != state.files[name]]
    cases += [Case(state.engine, name, len(state.files[name]), "older-copy", replacement=old)
              for name, copies in sorted(state.older.items()) if name in state.files for old in copies]
    return cases


def _flips(engine: str, name: str, kind: str, offsets) -> list[Case]:
    return [Case(engine, name, offset, kind, bit=bit) for offset in offsets for bit in range(8)]


def _log_file_cases(state: State, name: str, rng: random.Random) -> list[Case]:
    engine, cases = state.engine, []
    for offset, header, size in state.entries(name):
        cases += _flips(engine, name, "bitflip-header", range(offset, offset + header))
        item = range(offset + header, offset + size)
        cases += [Case(engine, name, at, "bitflip-item", bit=rng.randrange(8))
                  for at in sorted(rng.sample(item, min(ITEM_BITS_PER_ENTRY, len(item))))]
        cases.append(Case(engine, name, offset, "zero-header", length=header))
        if state.files[name][offset + 4] != ERASED_TYPE:
            cases.append(Case(engine, name, offset, "erase-type"))
            cases.append(Case(engine, name, offset, "erase-type-zero-item", length=size - header, item_at=header))
        cases.append(Case(engine, name, offset, "truncate-at-boundary"))
    return cases


def _unit_file_cases(state: State, name: str, layout: Layout, rng: random.Random) -> list[Case]:
    engine, data, cases = state.engine, state.files[name], []
    paged = layout.header < layout.unit
    for start in range(0, len(data), layout.unit):
        unit = data[start:start + layout.unit]
        if any(data[start:]):  # cutting off pages never written changes nothing: they read as zeros
            cases.append(Case(engine, name, start, "truncate-at-boundary"))
        if not any(unit):
            continue  # a page never written: no header of the engine's to damage, and zeroing it changes nothing
        end = start + len(unit)
        header = [*range(start, start + layout.header), *range(end - layout.footer, end)]
        cases += _flips(engine, name, "bitflip-header", header)
        if paged:
            body = range(start + layout.header, end - layout.footer)
            cases += [Case(engine, name, at, "bitflip-page", bit=rng.randrange(8))
                      for at in sorted(rng.sample(body, min(BODY_BITS_PER_PAGE, len(body))))]
        cases.append(Case(engine, name, start, "zero-page" if paged else "zero-header", length=len(unit)))
    return cases


def sample(cases: list[Case], per_group: int, seed: int = SEED) -> list[Case]:
    """A seeded sample of at most ``per_group`` cases of each (engine, kind, file), in list order."""
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for index, case in enumerate(cases):
        groups[case.engine, case.kind, case.file].append(index)
    rng = random.Random(seed)
    chosen = sorted(i for key in sorted(groups) for i in rng.sample(groups[key], min(per_group, len(groups[key]))))
    return [cases[i] for i in chosen]
