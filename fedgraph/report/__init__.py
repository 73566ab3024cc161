r"""Tables and plots of results: a user's own runs (:mod:`fedgraph.report.runs`,
``fedgraph report``) and the table of a privacy benchmark's runs
(:mod:`fedgraph.report.privacy`). The reference pages generated from the code
are written by :mod:`fedgraph.cli.reference`; the results pages of the
documentation by ``docs/generate.py`` in the repository."""

from fedgraph.report.runs import (
    RunSummary,
    clients_table,
    load_run,
    runs_table,
    write_report,
)

__all__ = ["RunSummary", "load_run", "runs_table", "clients_table", "write_report"]
