"""``python -m minidb``: the same command line as ``minidb`` (see :mod:`minidb.cli`).

``python -m minidb verify out/tour/log`` is ``minidb verify out/tour/log``; the
exit code is the command's (0 success, 1 a check failed, 2 a user error).
"""

import sys

from minidb.cli import main

sys.exit(main())
