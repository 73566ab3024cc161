r"""Lazy access to the optional ``transformers`` dependency (extra ``text``)."""

from __future__ import annotations

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


__all__ = ["require_transformers", "INSTALL_HINT"]
