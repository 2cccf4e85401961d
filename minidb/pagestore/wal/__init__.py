"""Write-ahead logging of the page store: its log entry types and the logging protocol.

===============  =============================================================================
``clr.py``       what rollback logs for an undone entry (a CLR twin or ``compensate``; its undo_nxt)
``logdef.py``    the page store's log entry types (Shore's logdef.dat)
``logrec.py``    fix EX / apply / log / set page LSN; redo and undo dispatch by name
``pageimage.py`` full page images: logged when a clean page becomes dirty, for torn pages
===============  =============================================================================
"""
