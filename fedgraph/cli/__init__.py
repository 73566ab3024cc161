r"""Command-line interface (see :mod:`fedgraph.cli.main`)."""
