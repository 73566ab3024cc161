r"""Entity texts tokenised once, gathered per batch by entity id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.entity_text import transliterate_texts


class EntityTokens:
    r"""The token ids of every entity's text, padded to one width, so a batch
    of entities is a gather by id (no tokenizer in the training loop).

    Indexing with ``[B]`` entity ids returns ``(input_ids, attention_mask)``,
    both ``[B, L_B]`` with :math:`L_B` the longest text of the batch (columns
    that are padding in every row are dropped).

    Args:
        input_ids (Tensor): ``[N, L]`` token ids of entity ``0 … N - 1``.
        attention_mask (Tensor): ``[N, L]``, ``1`` on tokens, ``0`` on padding
            (padding at the end of each row).

    Raises:
        ValueError: if the shapes differ, are not 2-D, or a row has no token.
    """

    def __init__(self, input_ids: Tensor, attention_mask: Tensor) -> None:
        input_ids = torch.as_tensor(input_ids, dtype=torch.long)
        attention_mask = torch.as_tensor(attention_mask, dtype=torch.long)
        if input_ids.dim() != 2 or input_ids.shape != attention_mask.shape:
            raise ValueError(
                "`input_ids` and `attention_mask` must be [N, L] tensors of the "
                f"same shape (got {tuple(input_ids.shape)} and "
                f"{tuple(attention_mask.shape)})"
            )
        if input_ids.size(0) and bool((attention_mask.sum(1) == 0).any()):
            row = int((attention_mask.sum(1) == 0).nonzero()[0])
            raise ValueError(f"`attention_mask` row {row} has no token")
        self.input_ids = input_ids.contiguous()
        self.attention_mask = attention_mask.contiguous()

    @classmethod
    def from_texts(
        cls,
        tokenizer: Any,
        texts: Sequence[str],
        *,
        max_length: int = 12,
        transliterate: bool = False,
    ) -> EntityTokens:
        r"""Tokenises ``texts`` with a Hugging Face tokenizer, truncated to
        ``max_length`` tokens incl. special tokens (FedMKGC: 12).

        Args:
            tokenizer: a ``transformers`` tokenizer (e.g. ``BertTokenizerFast``).
            texts (Sequence[str]): the text of entity ``0 … N - 1``.
            max_length (int, optional): tokens per text. (default: :obj:`12`)
            transliterate (bool, optional): romanise each text to ASCII
                first (:func:`~fedgraph.data.entity_text.transliterate`;
                extra ``transliterate``). (default: :obj:`False`)

        Raises:
            ImportError: if ``transliterate`` is set and its extra is missing.
        """
        if max_length < 1:
            raise ValueError(f"`max_length` must be positive (got {max_length})")
        if len(texts) == 0:
            raise ValueError("`texts` must hold at least one text (got 0)")
        texts = transliterate_texts(texts) if transliterate else list(texts)
        enc = tokenizer(
            texts,
            max_length=max_length,
            truncation=True,
            padding="max_length",
            return_tensors="pt",
        )
        return cls(enc["input_ids"], enc["attention_mask"])

    def __len__(self) -> int:
        return int(self.input_ids.size(0))

    @property
    def max_length(self) -> int:
        return int(self.input_ids.size(1))

    def __getitem__(self, index: Tensor) -> tuple[Tensor, Tensor]:
        index = torch.as_tensor(index, dtype=torch.long)
        mask = self.attention_mask[index]
        width = max(int(mask.sum(1).max()), 1) if mask.numel() else 1
        return self.input_ids[index, :width], mask[:, :width]

    def __repr__(self) -> str:
        return f"EntityTokens(entities={len(self)}, max_length={self.max_length})"


__all__ = ["EntityTokens"]
