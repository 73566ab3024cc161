r"""The names the command line offers, without importing torch.

``fedgraph --help`` and every sub-command's parser are built from these
tuples, so that the command line answers before the runtime is imported.
Each is read from the source of the module that defines it: the registries'
classes through :mod:`fedgraph.declared`, the fixed tuples through
:func:`fedgraph.declared.source_constant`; ``tests/cli/test_help.py``
checks each against the imported module.
"""

from __future__ import annotations

from fedgraph.declared import component_names, declared, source_constant

#: the registry's KGE algorithms, sorted (read from the family modules'
#: declarations without importing them: :func:`fedgraph.declared.declared`)
KGE_ALGORITHMS = tuple(a["name"] for a in declared("kge"))
#: :data:`fedgraph.runtime.pipeline_kge.KGE_BASELINES`, the single-KG
#: baselines of ``fedgraph train``
BASELINES = source_constant("fedgraph.runtime.pipeline_kge", "KGE_BASELINES")
#: :data:`fedgraph.models.kge.models`' names, read from source
KGE_MODELS = component_names("model")
#: :data:`fedgraph.models.losses.losses`' names, read from source
KGE_LOSSES = component_names("loss")
#: :data:`fedgraph.models.samplers.samplers`' names, read from source
SAMPLERS = component_names("sampler")
#: :data:`fedgraph.training.regimes.regimes`' names, read from source
REGIMES = component_names("regime")
#: :data:`fedgraph.training.regimes.ALL_ENTITY_LOSSES` (``--regime-loss``)
REGIME_LOSSES = source_constant("fedgraph.training.regimes.base", "ALL_ENTITY_LOSSES")
#: ``"none"`` and the names of
#: :data:`fedgraph.training.regimes.regularizers.regularizers`
#: (``--regularizer``), read from source
REGULARIZERS = ("none", *component_names("regularizer"))
#: :data:`fedgraph.training.optimizers.OPTIMIZERS` (``--optimizer``; the
#: first is the default)
OPTIMIZERS = source_constant("fedgraph.training.optimizers", "OPTIMIZERS")
#: :data:`fedgraph.runtime.loop.SELECTIONS`
SELECTIONS = source_constant("fedgraph.runtime.loop", "SELECTIONS")
#: :data:`fedgraph.runtime.batched.LOCAL_TRAINING`
LOCAL_TRAINING = source_constant("fedgraph.runtime.batched", "LOCAL_TRAINING")
#: :data:`fedgraph.training.sample_on.SAMPLE_ON` (``fedgraph train --sample-on``)
SAMPLE_ON = source_constant("fedgraph.training.sample_on", "SAMPLE_ON")
#: :data:`fedgraph.eval.protocol.protocols`, sorted
EVAL_PROTOCOLS = tuple(sorted(source_constant("fedgraph.eval.protocol", "protocols")))
#: :data:`fedgraph.eval.protocol.MODELS_SCORED` (``--evaluate-with``)
MODELS_SCORED = source_constant("fedgraph.eval.protocol", "MODELS_SCORED")
#: :data:`fedgraph.runtime.trained.CHECKPOINTS` (``--checkpoint`` of fuse
#: and unlearn)
CHECKPOINTS = source_constant("fedgraph.runtime.trained", "CHECKPOINTS")
#: :data:`fedgraph.partition.partitioners`' names, read from source
PARTITIONERS = component_names("partitioner")
#: :data:`fedgraph.privacy.attacks.ATTACKS` (``fedgraph audit --attack``)
ATTACKS = source_constant("fedgraph.privacy.attacks", "ATTACKS")
#: :data:`fedgraph.privacy.record.KEEP` (``fedgraph train --record-uploads``)
RECORD_KEEP = source_constant("fedgraph.privacy.record", "KEEP")


def normalized(text: str) -> str:
    r"""``text`` lower-cased without ``-`` and ``_`` (the registries' matching)."""
    return text.lower().replace("-", "").replace("_", "")


__all__ = [
    "KGE_ALGORITHMS",
    "BASELINES",
    "KGE_MODELS",
    "KGE_LOSSES",
    "SAMPLERS",
    "REGIMES",
    "REGIME_LOSSES",
    "REGULARIZERS",
    "OPTIMIZERS",
    "SELECTIONS",
    "LOCAL_TRAINING",
    "SAMPLE_ON",
    "PARTITIONERS",
    "EVAL_PROTOCOLS",
    "ATTACKS",
    "RECORD_KEEP",
    "MODELS_SCORED",
    "CHECKPOINTS",
    "normalized",
]
