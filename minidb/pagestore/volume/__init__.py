"""The volume: its header, the extent map, the store map, allocation and its caches.

==================  ==========================================================
``volheader.py``    the volume header (page 0) and the layout it implies
``volfile.py``      a volume's file: pages by number, runs in one write
``format.py``       formatting a volume
``extmap.py``       extlink entries on extent-map pages (and their redo)
``stores.py``       store nodes on store-map pages (and their redo)
``volume.py``       the volume manager, a module per concept: ``volmaps``,
                    ``volstores``, ``volextents``, ``volpages``,
                    ``volcaches``, ``volcheck``, ``volundo``
==================  ==========================================================
"""
