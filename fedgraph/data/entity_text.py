r"""Entity texts for text-based KG models: titles from DBpedia URIs.

DBP-5L's ``entity/LANG.tsv`` gives every entity as a DBpedia resource URI
(``http://el.dbpedia.org/resource/1._ΦΚ_Μαγδεβούργο``); its title is the part
after ``/resource/``, percent-decoded, with underscores read as spaces
(``1. ΦΚ Μαγδεβούργο``). Titles keep any ``/`` (``AC/DC``) and DBpedia's
disambiguation in parentheses (``50/50 (2011 film)``).

:func:`transliterate` romanises a text to ASCII (optional extra
``transliterate``), so an English encoder reads Greek or Japanese titles as
Latin words: Japanese with ``cutlet`` (MeCab readings, Hepburn, English
spelling of loanwords: ``パリス・ヒルトン`` → ``Paris Hiruton``), every
other script with ``anyascii`` (``Αγγλικός εμφύλιος πόλεμος`` →
``Agglikos emfylios polemos``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote

from fedgraph.data.knowledge_graph import KnowledgeGraph

RESOURCE = "/resource/"

#: What to install for :func:`transliterate`.
TRANSLITERATE_HINT = (
    "transliteration needs anyascii and cutlet (with fugashi and unidic-lite): "
    'pip install "fedgraph-kg[transliterate]"'
)

#: Hiragana, katakana (full and half width) and CJK ideographs: a text
#: holding one is romanised as Japanese.
JAPANESE = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff65-\uff9f]"
)
#: Katakana middle dots (between the words of a foreign name) → space.
NAME_DOT = re.compile("[\u30fb\uff65]")


def dbpedia_title(uri: str) -> str:
    r"""The title of a DBpedia resource URI.

    Everything up to the first ``/resource/`` is the namespace (so a ``/``
    inside the title survives); a string without ``/resource/`` loses
    everything up to its last ``/`` or ``#`` (a bare title is kept as is).
    The rest is percent-decoded (UTF-8) and ``_`` becomes a space.

    Args:
        uri (str): e.g. ``"http://dbpedia.org/resource/Who's_Afraid_of_Virginia_Woolf%3F_(film)"``.

    Returns:
        str: e.g. ``"Who's Afraid of Virginia Woolf? (film)"``.
    """
    uri = uri.strip()
    if RESOURCE in uri:
        local = uri.split(RESOURCE, 1)[1]
    else:
        cut = max(uri.rfind("/"), uri.rfind("#"))
        local = uri[cut + 1 :]
    return unquote(local, encoding="utf-8", errors="replace").replace("_", " ").strip()


def entity_titles(graph: KnowledgeGraph) -> list[str]:
    r"""The title of each entity of ``graph`` (:func:`dbpedia_title` of its
    name), in id order.

    Args:
        graph (KnowledgeGraph): a graph with :attr:`entity_names` (e.g. one
            language of :class:`~fedgraph.data.DBP5L`).

    Raises:
        ValueError: if ``graph`` has no entity names.
    """
    if graph.entity_names is None:
        raise ValueError(
            f"`graph` must have `entity_names` to derive entity texts (got {graph!r})"
        )
    return [dbpedia_title(n) for n in graph.entity_names]


def require_transliteration() -> tuple[Callable[[str], str], Any]:
    r"""``(anyascii, cutlet)``: what :func:`transliterate` runs on.

    Raises:
        ImportError: naming the extra to install, if ``anyascii`` or
            ``cutlet`` is missing.
    """
    try:
        import cutlet
        from anyascii import anyascii
    except ImportError as err:
        raise ImportError(TRANSLITERATE_HINT) from err
    return anyascii, cutlet


@functools.lru_cache(maxsize=1)
def _romanizers() -> tuple[Callable[[str], str], Callable[[str], str]]:
    to_ascii, cutlet = require_transliteration()
    try:
        japanese = cutlet.Cutlet()  # Hepburn, loanwords in their own spelling
    except RuntimeError as err:  # fugashi without a MeCab dictionary
        raise ImportError(f"{TRANSLITERATE_HINT} ({err})") from err
    return to_ascii, japanese.romaji


def transliterate(text: str) -> str:
    r"""``text`` romanised to ASCII, whitespace collapsed.

    A text holding kana or kanji is read as Japanese by ``cutlet`` (MeCab
    with the UniDic-lite dictionary; Hepburn; katakana loanwords in their
    source spelling where the dictionary has it; the middle dot ``・``
    between the parts of a name becomes a space), then what remains
    non-ASCII goes through ``anyascii``; any other text goes through
    ``anyascii`` alone (Greek: ``Πολίτης Κέιν`` → ``Politis Kein``;
    accents dropped: ``Égypte`` → ``Egypte``). Deterministic.

    Raises:
        ImportError: if the extra ``transliterate`` is not installed.
    """
    to_ascii, japanese = _romanizers()
    if JAPANESE.search(text):
        text = japanese(NAME_DOT.sub(" ", text))
    return " ".join(to_ascii(text).split())


def transliterate_texts(texts: Sequence[str]) -> list[str]:
    r""":func:`transliterate` of each text, in order."""
    return [transliterate(t) for t in texts]


__all__ = [
    "dbpedia_title",
    "entity_titles",
    "transliterate",
    "transliterate_texts",
    "require_transliteration",
    "TRANSLITERATE_HINT",
]
