r"""Where fedgraph looks for raw data and keeps processed caches.

* Raw data root: the ``root`` argument, else the ``FEDGRAPH_DATA`` environment
  variable, else ``$XDG_CACHE_HOME/fedgraph/data`` (``~/.cache/fedgraph/data``).
  The raw root may be read-only (e.g. a shared copy of the benchmark data).
* Processed cache: the ``FEDGRAPH_CACHE`` environment variable, else
  ``$XDG_CACHE_HOME/fedgraph/processed``. Never written inside the raw root.
"""

from __future__ import annotations

import os
from pathlib import Path


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return Path(base) / "fedgraph"


def get_data_root(root: str | os.PathLike[str] | None = None) -> Path:
    r"""Returns the raw data root (see the module docstring for the order)."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get("FEDGRAPH_DATA")
    if env:
        return Path(env).expanduser()
    return _user_cache() / "data"


def get_cache_dir() -> Path:
    r"""Returns the folder for processed caches (created on demand by writers)."""
    env = os.environ.get("FEDGRAPH_CACHE")
    if env:
        return Path(env).expanduser()
    return _user_cache() / "processed"


__all__ = ["get_data_root", "get_cache_dir"]
