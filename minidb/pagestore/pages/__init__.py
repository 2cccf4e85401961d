"""Pages: the page frame, slotted pages with space reservation, record tags.

================  ==============================================================
``page.py``       the page frame: header, slot table, footer (checksum, LSN copy)
``slotted.py``    slotted pages and space reservation
``rectag.py``     record tags, small and large records
``storeprop.py``  store properties (REGULAR, TMP, LOAD, INSERT) and the logging switch's tests
================  ==============================================================
"""
