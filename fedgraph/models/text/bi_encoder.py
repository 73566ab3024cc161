r"""The SimKGC-style bi-encoder of FedMKGC: one language model, relation prefixes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fedgraph.models.text.backend import no_progress_bars, require_transformers

#: Prefix of the shared (language-model) parameter names in :meth:`BiEncoder.shared_arrays`.
ENCODER = "encoder."


def mean_pool(hidden: Tensor, attention_mask: Tensor) -> Tensor:
    r"""Mean of the token states over the attention mask.

    .. math::
        \mathbf{e} = \frac{\sum_i m_i \mathbf{h}_i}{\max(1, \sum_i m_i)}

    Args:
        hidden (Tensor): ``[B, L, H]`` token states.
        attention_mask (Tensor): ``[B, L]``, ``1`` on tokens, ``0`` on padding.

    Returns:
        Tensor: ``[B, H]``.
    """
    if hidden.dim() != 3 or attention_mask.shape != hidden.shape[:2]:
        raise ValueError(
            "Expected `hidden` [B, L, H] and `attention_mask` [B, L] "
            f"(got {tuple(hidden.shape)} and {tuple(attention_mask.shape)})"
        )
    m = attention_mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1.0)


def add_inverse_triples(triples: Tensor, num_relations: int) -> Tensor:
    r"""``[2n, 3]``: the ``[n, 3]`` triples ``(h, r, t)`` followed by their
    inverses ``(t, r + R, h)`` (:math:`r^{-1}` has id :math:`r + R`, so a
    head query :math:`(?, r, t)` is the tail query :math:`(t, r^{-1}, ?)`).

    Args:
        triples (Tensor): ``[n, 3]`` ``(h, r, t)``, relation ids ``< num_relations``.
        num_relations (int): :math:`R`.
    """
    triples = torch.as_tensor(triples, dtype=torch.long)
    if triples.dim() != 2 or triples.size(1) != 3:
        raise ValueError(f"`triples` must be [n, 3] (got {tuple(triples.shape)})")
    if triples.numel() and int(triples[:, 1].max()) >= num_relations:
        raise ValueError(
            f"`triples` holds relation id {int(triples[:, 1].max())} but "
            f"`num_relations` is {num_relations}"
        )
    h, r, t = triples.unbind(1)
    return torch.cat([triples, torch.stack([t, r + num_relations, h], 1)], 0)


class BiEncoder(nn.Module):
    r"""The text KGC model of FedMKGC ("FedMKGC: Privacy-Preserving Federated
    Multilingual Knowledge Graph Completion", Tang et al.): a SimKGC
    bi-encoder (Wang et al., ACL 2022) with trainable relation prefixes.

    One language model :math:`LM` (any Hugging Face ``AutoModel``: BERT,
    mBERT, MiniLM, XLM-R, …) encodes both sides. The query side of
    :math:`(h, r, ?)` is the relation's :math:`P` trainable prefix vectors
    :math:`\mathbf{p}_r \in \mathbb{R}^{P \times H}` followed by the token
    embeddings of :math:`h`'s text; the target side is an entity's text.
    Both are mean-pooled over the attention mask and L2-normalised; the
    score is their cosine:

    .. math::
        \mathbf{e}_{hr} = \frac{\mathrm{pool}(LM([\mathbf{p}_r; \mathrm{emb}(x_h)]))}
        {\lVert \cdot \rVert_2}, \qquad
        \mathbf{e}_t = \frac{\mathrm{pool}(LM(\mathrm{emb}(x_t)))}{\lVert \cdot
        \rVert_2}, \qquad
        f(h, r, t) = \mathbf{e}_{hr}^\top \mathbf{e}_t

    Relations ``0 … R - 1`` are the KG's; ``R … 2R - 1`` their inverses
    (:func:`add_inverse_triples`), so :math:`(?, r, t)` is encoded as
    :math:`(t, r^{-1}, ?)`. The prefixes are the model's only
    relation-specific parameters; :meth:`shared_arrays` returns the language
    model alone (what a FedMKGC client uploads), never the prefixes.

    The prefix vectors are initialised as copies of random rows of the
    language model's word-embedding table (so they start at the scale of
    real token embeddings), drawn from the global torch RNG.

    Args:
        encoder (nn.Module): a ``transformers`` ``PreTrainedModel`` that
            accepts ``inputs_embeds`` and returns ``last_hidden_state``.
        num_relations (int): :math:`R`, the KG's relations (the model holds
            :math:`2R` prefixes).
        num_prefix_tokens (int, optional): :math:`P`. (default: :obj:`12`)
    """

    def __init__(
        self, encoder: nn.Module, num_relations: int, *, num_prefix_tokens: int = 12
    ) -> None:
        super().__init__()
        if num_relations < 1:
            raise ValueError(f"`num_relations` must be positive (got {num_relations})")
        if num_prefix_tokens < 1:
            raise ValueError(
                f"`num_prefix_tokens` must be positive (got {num_prefix_tokens})"
            )
        if not hasattr(encoder, "get_input_embeddings"):
            raise TypeError(
                "`encoder` must be a transformers model with `get_input_embeddings` "
                f"(got {type(encoder).__name__})"
            )
        self.encoder = encoder
        self.num_relations = int(num_relations)
        self.num_prefix_tokens = int(num_prefix_tokens)
        self.hidden_size = int(encoder.get_input_embeddings().weight.size(1))
        self.relation_prefix = nn.Parameter(
            torch.empty(
                2 * self.num_relations, self.num_prefix_tokens, self.hidden_size
            )
        )
        self.reset_parameters()

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | os.PathLike[str],
        num_relations: int,
        *,
        num_prefix_tokens: int = 12,
        **kwargs: Any,
    ) -> BiEncoder:
        r"""A bi-encoder around ``transformers.AutoModel.from_pretrained``
        (``kwargs`` go there; a local folder loads offline).

        Args:
            name_or_path (str or path): a model folder (``config.json`` +
                weights) or a Hub name.
            num_relations (int): :math:`R`.
            num_prefix_tokens (int, optional): :math:`P`. (default: :obj:`12`)
        """
        transformers = require_transformers()
        with no_progress_bars():
            encoder = transformers.AutoModel.from_pretrained(
                str(name_or_path), **kwargs
            )
        return cls(encoder, num_relations, num_prefix_tokens=num_prefix_tokens)

    @torch.no_grad()
    def reset_parameters(self) -> None:
        r"""Re-draws the relation prefixes (the language model is untouched)."""
        table = self.encoder.get_input_embeddings().weight
        rows = torch.randint(0, table.size(0), (self.relation_prefix[..., 0].numel(),))
        self.relation_prefix.copy_(table[rows].view_as(self.relation_prefix))

    # ------------------------------------------------------------- encoding
    def _encode(self, inputs_embeds: Tensor, attention_mask: Tensor) -> Tensor:
        out = self.encoder(inputs_embeds=inputs_embeds, attention_mask=attention_mask)
        pooled = mean_pool(out.last_hidden_state, attention_mask)
        return F.normalize(pooled, p=2, dim=-1)

    def encode_entities(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        r"""``[B, H]`` unit embeddings :math:`\mathbf{e}_t` of entity texts.

        Args:
            input_ids (Tensor): ``[B, L]`` token ids.
            attention_mask (Tensor): ``[B, L]``.
        """
        emb = self.encoder.get_input_embeddings()(input_ids)
        return self._encode(emb, attention_mask)

    def encode_queries(
        self, relation: Tensor, input_ids: Tensor, attention_mask: Tensor
    ) -> Tensor:
        r"""``[B, H]`` unit embeddings :math:`\mathbf{e}_{hr}` of queries
        :math:`(h, r, ?)`: prefix :math:`\mathbf{p}_r` then :math:`h`'s tokens.

        Args:
            relation (Tensor): ``[B]`` relation ids in ``[0, 2R)``.
            input_ids (Tensor): ``[B, L]`` token ids of the given entity.
            attention_mask (Tensor): ``[B, L]``.
        """
        relation = torch.as_tensor(relation, dtype=torch.long)
        if relation.numel() and (
            int(relation.min()) < 0 or int(relation.max()) >= 2 * self.num_relations
        ):
            raise ValueError(
                f"`relation` ids must lie in [0, {2 * self.num_relations}) (got "
                f"range [{int(relation.min())}, {int(relation.max())}])"
            )
        emb = self.encoder.get_input_embeddings()(input_ids)
        prefix = self.relation_prefix[relation].to(emb.dtype)
        inputs = torch.cat([prefix, emb], dim=1)
        ones = attention_mask.new_ones(attention_mask.size(0), self.num_prefix_tokens)
        return self._encode(inputs, torch.cat([ones, attention_mask], dim=1))

    def forward(
        self,
        relation: Tensor,
        query_ids: Tensor,
        query_mask: Tensor,
        target_ids: Tensor,
        target_mask: Tensor,
    ) -> tuple[Tensor, Tensor]:
        r"""``(e_hr, e_t)``: the ``[B, H]`` query and target embeddings."""
        return (
            self.encode_queries(relation, query_ids, query_mask),
            self.encode_entities(target_ids, target_mask),
        )

    @staticmethod
    def score(queries: Tensor, entities: Tensor) -> Tensor:
        r"""``[B, N]`` cosine scores of ``[B, H]`` queries against ``[N, H]``
        entities (both unit vectors)."""
        return queries @ entities.t()

    # --------------------------------------------------------- federation
    def shared_arrays(self) -> dict[str, Tensor]:
        r"""The language model's parameters, detached copies keyed
        ``"encoder.<name>"`` (the relation prefixes are not included)."""
        return {
            ENCODER + k: p.detach().clone() for k, p in self.encoder.named_parameters()
        }

    @torch.no_grad()
    def load_shared_arrays(self, arrays: Mapping[str, Tensor]) -> None:
        r"""Copies :meth:`shared_arrays`-style tensors into the language model.

        Raises:
            KeyError: if ``arrays`` misses a language-model parameter or holds
                a key that is not one.
            ValueError: if a tensor's shape differs from the parameter's.
        """
        params = dict(self.encoder.named_parameters())
        keys = {ENCODER + k for k in params}
        missing, unknown = sorted(keys - set(arrays)), sorted(set(arrays) - keys)
        if missing or unknown:
            raise KeyError(
                f"`arrays` must hold exactly the language-model parameters "
                f"(missing {missing[:3]}{'…' if len(missing) > 3 else ''}, "
                f"unknown {unknown[:3]}{'…' if len(unknown) > 3 else ''})"
            )
        for k, p in params.items():
            v = arrays[ENCODER + k]
            if v.shape != p.shape:
                raise ValueError(
                    f"`arrays['{ENCODER + k}']` has shape {tuple(v.shape)} but the "
                    f"parameter has {tuple(p.shape)}"
                )
            p.copy_(v.to(p.dtype))

    def num_shared_parameters(self) -> int:
        r"""Elements of :meth:`shared_arrays` (one upload or download)."""
        return sum(p.numel() for p in self.encoder.parameters())

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({type(self.encoder).__name__}, "
            f"num_relations={self.num_relations}, "
            f"num_prefix_tokens={self.num_prefix_tokens}, hidden_size={self.hidden_size})"
        )


__all__ = ["BiEncoder", "mean_pool", "add_inverse_triples", "ENCODER"]
