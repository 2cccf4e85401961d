"""How the VLSN index is configured (JE's replication parameters, reduced).

=========================  =============================  =============
setting                    JE parameter                   default
=========================  =============================  =============
``stride``                 je.rep.vlsn.stride             10
``max_mappings``           je.rep.vlsn.maxMap             1000
``max_distance``           je.rep.vlsn.maxDist            100000 bytes
``log_item_cache_size``    je.rep.vlsn.logCacheSize       32
``min_vlsn_index_size``    je.rep.minVLSNIndexSize        1000
``database_name``          (DbType.VLSN_MAP)              ``_vlsn_index``
=========================  =============================  =============

The stride trades space for time: a bucket keeps one mapping every
``stride`` VLSNs, so the index holds about ``n / stride`` mappings for ``n``
VLSNs and a lookup reads up to ``stride - 1`` replicated entries (and the
non-replicated ones between them) past its mapping. ``max_mappings`` and
``max_distance`` bound a bucket, in mappings and in bytes of log between its
last stored offset and its last mapping. ``min_vlsn_index_size`` is the
number of VLSNs that head truncation always leaves (the JE documentation's data eraser:
"we always leave at least 1,000 VLSNs in the VLSNIndex").
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.errors import UserError
from minidb.replication.vlsn.bucket import DEFAULT_MAX_DISTANCE, DEFAULT_MAX_MAPPINGS, DEFAULT_STRIDE
from minidb.replication.vlsn.wait import DEFAULT_LOG_ITEM_CACHE_SIZE

VLSN_INDEX_DB = "_vlsn_index"
DEFAULT_MIN_VLSN_INDEX_SIZE = 1000


@dataclass(frozen=True)
class VLSNIndexConfig:
    stride: int = DEFAULT_STRIDE
    max_mappings: int = DEFAULT_MAX_MAPPINGS
    max_distance: int = DEFAULT_MAX_DISTANCE
    log_item_cache_size: int = DEFAULT_LOG_ITEM_CACHE_SIZE
    min_vlsn_index_size: int = DEFAULT_MIN_VLSN_INDEX_SIZE
    database_name: str = VLSN_INDEX_DB
    trace: bool = True

    def __post_init__(self) -> None:
        for name in ("stride", "max_mappings", "log_item_cache_size"):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in ("max_distance", "min_vlsn_index_size"):
            if getattr(self, name) < 0:
                raise UserError(f"{name} cannot be negative ({getattr(self, name)})")
        if not self.database_name.startswith("_"):
            raise UserError(f"the VLSN index's database is internal: its name must start with '_', "
                            f"not {self.database_name!r}")


__all__ = ["VLSNIndexConfig", "VLSN_INDEX_DB", "DEFAULT_MIN_VLSN_INDEX_SIZE"]
