r"""The names the command line offers, without importing torch.

``fedgraph --help`` and every sub-command's parser are built from these
tuples, so that the command line answers before the runtime is imported.
The registries' names are read from their modules' source
(:mod:`fedgraph.declared`); the few fixed tuples are checked against the
module they mirror by ``tests/cli/test_help.py``.
"""

from __future__ import annotations

from fedgraph.declared import component_names, declared

#: the registry's KGE algorithms, sorted (read from the family modules'
#: declarations without importing them: :func:`fedgraph.declared.declared`)
KGE_ALGORITHMS = tuple(a["name"] for a in declared("kge"))
#: the single-KG baselines of ``fedgraph train``
BASELINES = ("independent", "centralized")
#: :data:`fedgraph.models.kge.models`' names, read from source
KGE_MODELS = component_names("model")
#: :data:`fedgraph.models.losses.losses`' names, read from source
KGE_LOSSES = component_names("loss")
#: :data:`fedgraph.training.regimes.regimes`' names, read from source
REGIMES = component_names("regime")
#: :data:`fedgraph.runtime.loop.SELECTIONS`
SELECTIONS = ("weighted", "per-client")
#: :data:`fedgraph.runtime.batched.LOCAL_TRAINING`
LOCAL_TRAINING = ("sequential", "batched")
#: :data:`fedgraph.training.sample_on.SAMPLE_ON` (``fedgraph train --sample-on``)
SAMPLE_ON = ("host", "device")
#: :data:`fedgraph.eval.protocol.protocols`, sorted
EVAL_PROTOCOLS = ("fede", "fedlu")
#: :data:`fedgraph.partition.partitioners`' names, read from source
PARTITIONERS = component_names("partitioner")
#: :data:`fedgraph.privacy.attacks.ATTACKS` (``fedgraph audit --attack``)
ATTACKS = ("triple-inference", "membership")
#: :data:`fedgraph.privacy.record.KEEP` (``fedgraph train --record-uploads``)
RECORD_KEEP = ("last", "all")


def normalized(text: str) -> str:
    r"""``text`` lower-cased without ``-`` and ``_`` (the registries' matching)."""
    return text.lower().replace("-", "").replace("_", "")


__all__ = [
    "KGE_ALGORITHMS",
    "BASELINES",
    "KGE_MODELS",
    "KGE_LOSSES",
    "REGIMES",
    "SELECTIONS",
    "LOCAL_TRAINING",
    "SAMPLE_ON",
    "PARTITIONERS",
    "EVAL_PROTOCOLS",
    "ATTACKS",
    "RECORD_KEEP",
    "normalized",
]
