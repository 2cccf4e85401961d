import sys

from minidb.cli import main

sys.exit(main())
