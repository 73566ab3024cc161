r"""FedMKGC's runnable settings in the algorithm registry (family ``text``):
the paper's sequential FedMKGC, the parallel equal-weight average
(FedMKGC\ :sub:`WA`) and the independent single-KG baseline. Their shared
settings are :class:`~fedgraph.federated.text.setup.MKGCSettings`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fedgraph.federated.algorithms import Algorithm, NoSettings
from fedgraph.federated.text.setup import build_fedmkgc

REFERENCE = (
    '"FedMKGC: Privacy-Preserving Federated Multilingual Knowledge Graph '
    'Completion" (Tang et al.)'
)


def _build(name: str) -> Callable[..., Any]:
    # build(graphs, encoder, tokenizer, settings, own_settings, texts=None)
    def build(
        graphs: Any, encoder: Any, tokenizer: Any, settings: Any, x: Any, **kw: Any
    ) -> Any:
        return build_fedmkgc(name, graphs, encoder, tokenizer, settings, **kw)

    return build


ALGORITHMS = [
    Algorithm("fedmkgc", "text", "one client per round in an agreed order, the shared encoder passed on",
              _build("fedmkgc"), NoSettings, reference=REFERENCE),
    Algorithm("fedmkgcparallel", "text", "all clients every round, equal-weight average of the encoder",
              _build("fedmkgc-parallel"), NoSettings, reference=REFERENCE),
    Algorithm("independent", "text", "each language KG alone, nothing shared",
              _build("independent"), NoSettings, reference=REFERENCE),
]  # fmt: skip
