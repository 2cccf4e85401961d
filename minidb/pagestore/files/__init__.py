"""Files of records: store descriptors, records on slotted pages, free-space search.

=================  ===========================================================
``file.py``        files of records (``recupdate.py``: update, append, truncate)
``lgrec.py``       large records: chunks, index pages, changes of shape
``recpage.py``     page_format, rec_insert/remove/splice and their CLRs
``recops.py``      one slot update by the protocol (fix EX, apply, log)
``histogram.py``   the free-space heap and histogram of a file
``ridcheck.py``    record id verification
``sinfo.py``       store descriptors, what the store directory says of each store
``storeprops.py``  TMP, LOAD and INSERT files; restart's destruction of TMP files
=================  ===========================================================
"""
