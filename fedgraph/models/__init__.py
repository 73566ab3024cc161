r"""Models: knowledge-graph embeddings (:mod:`fedgraph.models.kge`), their
losses (:mod:`fedgraph.models.losses`) and negative samplers
(:mod:`fedgraph.models.samplers`)."""

from fedgraph.models.kge import (
    ComplEx,
    DistMult,
    KGEModel,
    RotatE,
    TransE,
    models,
    resolve_model,
)
from fedgraph.models.losses import (
    KGELoss,
    MarginRankingLoss,
    NSSALoss,
    SigmoidNSLoss,
    losses,
    resolve_loss,
)
from fedgraph.models.samplers import (
    BernoulliNegativeSampler,
    NegativeSampler,
    UniformNegativeSampler,
    resolve_sampler,
    samplers,
    subsampling_weights,
)

__all__ = [
    "KGEModel",
    "TransE",
    "DistMult",
    "ComplEx",
    "RotatE",
    "models",
    "resolve_model",
    "KGELoss",
    "NSSALoss",
    "SigmoidNSLoss",
    "MarginRankingLoss",
    "losses",
    "resolve_loss",
    "NegativeSampler",
    "UniformNegativeSampler",
    "BernoulliNegativeSampler",
    "samplers",
    "resolve_sampler",
    "subsampling_weights",
]
