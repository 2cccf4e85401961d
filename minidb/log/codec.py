"""An entry type's codec: the bytes of an item from its values, and the values back.

The field table of an entry type (:mod:`minidb.log.types`) lists its fields
in order, each with a kind (:mod:`minidb.log.fields`) that knows how to write
one value as bytes and read it back. The codec walks that table one field at
a time: to encode, each field's kind appends the field's value to the item;
to decode, each kind reads its value where the previous one ended, and the
item must end exactly where the last field does. So the item of Trace
``{"message": "hello"}`` is ``05 00 68 65 6c 6c 6f``: STR writes a 2-byte
length, then the UTF-8 bytes.

Nothing is trusted: a missing or unknown field, a value its kind cannot
hold, a length that runs past the item, bytes left over after the last field
are each an :class:`~minidb.log.fields.ItemFormatError` naming the type, the
field and, when decoding, the item offset. Wrong data is never returned.

:func:`codec_of` is a hot spot: its twin in ``minidb/fast/log/codec.py``
gives each type a codec compiled from its table, which writes and reads the
same bytes with fewer Python steps.
"""

from __future__ import annotations

from typing import Any

from minidb import impl
from minidb.log.fields import ItemFormatError, Kind, decode_fields, encode_fields


class Codec:
    """The codec of one field table: ``encode(values)`` gives the item, ``decode(item)`` the values."""

    def __init__(self, name: str, fields: tuple[tuple[str, Kind], ...]):
        self.name = name
        self.fields = fields

    def encode(self, values: dict[str, Any]) -> bytes:
        """The item of ``values``: each field's bytes, in the table's order."""
        out = bytearray()
        encode_fields(self.fields, values, out, self.name)
        return bytes(out)

    def decode(self, item: bytes | memoryview) -> dict[str, Any]:
        """The values of ``item``: each field read where the previous one ended, to the item's last byte."""
        values, end = decode_fields(self.fields, item, 0)
        if end != len(item):
            raise ItemFormatError(f"{self.name}: {len(item) - end} bytes left over after the last field")
        return values


def codec_of(entry_type: Any) -> Codec:
    """The codec of an entry type's item (its fields, the transaction's first: ``all_fields``)."""
    return Codec(entry_type.name, entry_type.all_fields)


CODEC_OF = impl.hot_spot(codec_of)
