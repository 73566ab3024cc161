r"""The package version (also ``fedgraph.__version__``), in a module of its
own so that the modules that record it import no more than this."""

__version__ = "0.1.0"

__all__ = ["__version__"]
