r"""The KGE trainer moved to :mod:`fedgraph.training.kge_trainer`; its names
stay importable from here, and ``python -m fedgraph.runtime.kge_trainer``
runs the baselines' CLI (:func:`fedgraph.runtime.baselines.main`), the
command earlier runs were recorded with."""

import sys

from fedgraph.training.kge_trainer import *  # noqa: F403
from fedgraph.training.kge_trainer import __all__  # noqa: F401

if __name__ == "__main__":  # pragma: no cover
    from fedgraph.runtime.baselines import main

    sys.exit(main())
