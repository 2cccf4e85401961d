"""Entries as text, in the style of JE's ``DbPrintLog``.

One line per entry::

    <entry lsn="0x1/0x2e" type="Trace" prev="0x0" size="7" cksum="2531396293"><Trace message="hello"/></entry>

Attributes: the entry's LSN, its type name, the ``prev`` offset, the item
size and the stored checksum; ``prov="YES"`` or ``prov="BEFORE_CKPT_END"``
for provisional entries, ``isReplicated="1"`` and ``isInvisible="1"`` when
those flags are set. A replicated entry's body starts with ``<vlsn v="N"/>``;
an erased entry's body says what it was: ``<Erased was="LN_TX"/>``.
The body is the item printed field by field by its entry type (see
:meth:`minidb.log.types.EntryType.format`); ``quiet`` leaves the body out.
"""

from __future__ import annotations

from minidb.log.entry import LogEntry
from minidb.log.header import Provisional


def format_entry(entry: LogEntry, quiet: bool = False) -> str:
    header = entry.header
    attrs = [
        f'lsn="{entry.lsn}"',
        f'type="{entry.type_name}"',
        f'prev="0x{header.prev_offset:x}"',
        f'size="{header.item_size}"',
    ]
    if header.provisional is not Provisional.NO:
        attrs.append(f'prov="{header.provisional.name}"')
    if header.replicated:
        attrs.append('isReplicated="1"')
    if header.invisible:
        attrs.append('isInvisible="1"')
    attrs.append(f'cksum="{header.checksum}"')
    head = "<entry " + " ".join(attrs)
    if quiet:
        return head + "/>"
    body = f'<vlsn v="{header.vlsn}"/>' if header.vlsn is not None else ""
    entry_type = entry.entry_type
    if header.erased:
        body += f'<Erased was="{entry.erased_type_name}"/>'  # the erased form keeps the original type
    elif entry_type is None:
        body += f'<Unknown item="{entry.item[:32].hex()}"/>'
    else:
        body += entry_type.format(entry.values)
    return f"{head}>{body}</entry>"
