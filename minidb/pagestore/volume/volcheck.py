"""Consistency checks and text dumps of a volume's maps (a part of :class:`~minidb.pagestore.volume.volume.Volume`).

``check()`` lists every inconsistency between the extent map and the store
map (empty when all is well): store 0's extents owned by a store, a free
extent with pages or links, a store whose list does not match the extents
it owns (an orphan, a foreign extent in its list, a wrong ``prev`` link), a
store in use with no extent. Tests and crash sweeps call it after restart.

``dump_extents()`` and ``dump_stores()`` print the maps one line per extent
or store: the golden-text format of the tests and the notebooks.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.pages.page import StoreFlags


class VolumeChecks:
    vid: int
    header: Any
    _mutex: Any

    # -- consistency ----------------------------------------------------------------------------------
    def check(self) -> list[str]:
        """Problems with the extent and store maps (empty when consistent)."""
        with self._mutex:
            problems = []
            links = self.extlinks()
            for ext in range(self.header.store0_exts):
                if links[ext].owner != 0:
                    problems.append(f"x({self.vid}.{ext}) holds store 0 but is owned by store {links[ext].owner}")
            owned: dict[int, set[int]] = {}
            for ext in range(self.header.first_data_ext, self.header.num_exts):
                link = links[ext]
                if link.owner == 0 and (link.pmap or link.next or link.prev):
                    problems.append(f"x({self.vid}.{ext}) is free but has pages or links")
                elif link.owner:
                    owned.setdefault(link.owner, set()).add(ext)
            in_use = {stid.store: node for stid, node in self.store_nodes().items()}
            for snum in sorted(set(in_use) | set(owned)):
                node = in_use[snum] if snum in in_use else self.store_node(snum)
                if not node.in_use:
                    problems.append(f"s({self.vid}.{snum}) is unused but owns extents {sorted(owned[snum])}")
                    continue
                chain, ext, prev = [], node.first_ext, 0
                while ext and len(chain) <= self.header.num_exts:
                    link = links[ext]
                    if link.owner != snum:
                        problems.append(f"s({self.vid}.{snum}): x({self.vid}.{ext}) in its list is owned by {link.owner}")
                        break
                    if link.prev != prev:
                        problems.append(f"s({self.vid}.{snum}): x({self.vid}.{ext}).prev is {link.prev}, not {prev}")
                    chain.append(ext)
                    prev, ext = ext, link.next
                if not chain:
                    problems.append(f"s({self.vid}.{snum}) has no extent")
                if set(chain) != owned.get(snum, set()):
                    problems.append(f"s({self.vid}.{snum}): list {chain} but owns {sorted(owned.get(snum, set()))}")
            return problems

    # -- dumps ------------------------------------------------------------------------------------------
    def dump_extents(self, only_used: bool = False) -> str:
        """The extent map as text: one line per extent (the golden-text format)."""
        h = self.header
        lines = [
            f"volume v({self.vid}): {h.num_pages} pages of {h.page_size} bytes, {h.num_exts} extents of "
            f"{h.ext_sz} pages; store 0: pages 0-{h.store0_pages - 1} in {h.store0_exts} extent(s)",
            f"{'extent':<9}{'owner':<9}{'prev':<9}{'next':<9}{'pages':<{max(6, h.ext_sz + 1)}}buckets",
        ]
        for ext, link in enumerate(self.extlinks()):
            free = link.owner == 0 and ext >= h.first_data_ext
            if only_used and free:
                continue
            owner = "free" if free else f"s({self.vid}.{link.owner})"
            prev = f"x({self.vid}.{link.prev})" if link.prev else "-"
            nxt = f"x({self.vid}.{link.next})" if link.next else "-"
            buckets = "".join(f"{link.bucket(i):x}" for i in range(h.ext_sz))
            lines.append(f"{'x(%d.%d)' % (self.vid, ext):<9}{owner:<9}{prev:<9}{nxt:<9}"
                         f"{link.pmap_text(h.ext_sz):<{max(6, h.ext_sz + 1)}}{buckets}")
        return "\n".join(lines) + "\n"

    def dump_stores(self) -> str:
        """The stores in use as text: node fields, extent list, allocated pages."""
        lines = [f"{'store':<9}{'flags':<9}{'deleting':<14}{'first':<9}extents -> allocated pages"]
        for stid, node in self.store_nodes().items():
            exts = self._walk(stid.store, node.first_ext)
            pages = [p.page for p in self.store_pages(stid)]
            flags = "|".join(f.name.lower() for f in StoreFlags if f & node.flags) or "-"
            first = f"x({self.vid}.{node.first_ext})" if node.first_ext else "-"
            lines.append(f"{str(stid):<9}{flags:<9}{node.deleting_state.name.lower():<14}{first:<9}"
                         f"{' '.join(str(e) for e in exts)} -> {_ranges(pages) or 'none'}")
        return "\n".join(lines) + "\n"


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5 9``."""
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return " ".join(parts)

