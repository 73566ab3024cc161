r"""Text-based KG completion: FedMKGC's bi-encoder over a Hugging Face
language model (optional extra ``text``: ``pip install "fedgraph-kg[text]"``;
``transformers`` is imported only where a model is loaded)."""

from fedgraph.models.text.bi_encoder import (
    ENCODER,
    BiEncoder,
    add_inverse_triples,
    mean_pool,
)
from fedgraph.models.text.loss import InfoNCELoss, duplicate_target_mask, info_nce_loss
from fedgraph.models.text.tokens import EntityTokens
from fedgraph.models.text.training import train_bi_encoder_epoch

__all__ = [
    "BiEncoder",
    "ENCODER",
    "mean_pool",
    "add_inverse_triples",
    "InfoNCELoss",
    "info_nce_loss",
    "duplicate_target_mask",
    "EntityTokens",
    "train_bi_encoder_epoch",
]
