r"""Entity texts for text-based KG models: titles from DBpedia URIs.

DBP-5L's ``entity/LANG.tsv`` gives every entity as a DBpedia resource URI
(``http://el.dbpedia.org/resource/1._ΦΚ_Μαγδεβούργο``); its title is the part
after ``/resource/``, percent-decoded, with underscores read as spaces
(``1. ΦΚ Μαγδεβούργο``). Titles keep any ``/`` (``AC/DC``) and DBpedia's
disambiguation in parentheses (``50/50 (2011 film)``).
"""

from __future__ import annotations

from urllib.parse import unquote

from fedgraph.data.knowledge_graph import KnowledgeGraph

RESOURCE = "/resource/"


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


__all__ = ["dbpedia_title", "entity_titles"]
