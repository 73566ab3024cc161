import sys

from fedgraph.cli.main import main

sys.exit(main())
