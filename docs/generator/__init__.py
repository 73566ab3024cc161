r"""The generator of the documentation's results pages (``docs/papers/``).

Run from a clone of fedgraph::

    python docs/generate.py            # rewrite the generated blocks and figures
    python docs/generate.py --check    # exit 1 when a page or figure is stale

Each page under ``docs/papers/`` is hand-written prose with generated blocks
between ``<!-- generated: NAME -->`` and ``<!-- end generated -->``. One module
per page (:mod:`generator.fedlu`, :mod:`generator.fede_claims`, ...) holds its
blocks, figures and verdict rows; the numbers the papers publish are read from
``docs/papers/published/*.json`` (each file cites its source) and every other
number from the results files, ``docs/results/*.json``.
"""
