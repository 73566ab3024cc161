r"""``python -m fedgraph``: the ``fedgraph`` command line."""

import sys

from fedgraph.cli.main import main

sys.exit(main())
