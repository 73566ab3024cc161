r"""Lazy access to the optional ``transformers`` dependency (extra ``text``),
shared by the text models and the federated text setup."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

INSTALL_HINT = (
    "fedgraph's text models need Hugging Face `transformers`: "
    'pip install "fedgraph-kg[text]"'
)


def require_transformers() -> ModuleType:
    r"""Imports and returns ``transformers``.

    Raises:
        ImportError: with the install command, if it is not installed.
    """
    try:
        import transformers
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError(INSTALL_HINT) from err
    return transformers


@contextmanager
def no_progress_bars() -> Iterator[None]:
    r"""Hides ``transformers``' progress bars for the block (version 5 draws
    one on every ``from_pretrained``), then restores the setting."""
    logging = require_transformers().utils.logging
    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            logging.enable_progress_bar()


__all__ = ["require_transformers", "no_progress_bars", "INSTALL_HINT"]
