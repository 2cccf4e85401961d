"""The page store's restart, accelerated: the twin of :class:`~minidb.pagestore.restart.restart.Restart`
(``restart.py``), which reads the log since the checkpoint once, with the fast analysis (``analysis.py``) and
redo (``redo.py``) it runs, and the quick check of the volume and the log (``master.py``)."""
