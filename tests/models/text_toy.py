r"""A tiny randomly initialised BERT, its tokenizer and a toy two-language KG
for the FedMKGC tests (needs ``transformers``; test modules importorskip it
before importing this helper)."""

from __future__ import annotations

from pathlib import Path

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Entity titles of the toy KGs ("en" and an Italian-flavoured "it").
EN = ["paris", "france", "berlin", "germany", "rome", "italy", "madrid", "spain"]
IT = ["parigi", "francia", "berlino", "germania", "roma", "italia", "madrid", "spagna"]
WORDS = sorted(set(EN + IT + ["city", "of", "the", "capital", "new"]))
VOCAB = SPECIAL + WORDS
VOCAB_SIZE = 100

# (head, relation, tail) over the entity order above: 0 capital-of, 1 borders,
# 2 larger-than.
TRAIN = [
    (0, 0, 1),
    (2, 0, 3),
    (4, 0, 5),
    (6, 0, 7),
    (1, 1, 3),
    (1, 1, 7),
    (1, 1, 5),
    (0, 2, 4),
    (2, 2, 6),
]
VALID = [(3, 1, 1), (2, 2, 4)]
TEST = [(7, 1, 1), (0, 2, 6)]


def tiny_tokenizer(tmp_path: Path):
    from transformers import BertTokenizerFast

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    return BertTokenizerFast(vocab_file=str(vocab))


def tiny_bert(seed: int = 0, dropout: float = 0.0):
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    torch.manual_seed(seed)
    return BertModel(config).eval()


def toy_graph(lang: str = "en") -> KnowledgeGraph:
    names = EN if lang == "en" else IT
    host = "dbpedia.org" if lang == "en" else f"{lang}.dbpedia.org"
    uris = [f"http://{host}/resource/{n.capitalize()}" for n in names]
    return KnowledgeGraph(
        {
            "train": torch.tensor(TRAIN),
            "valid": torch.tensor(VALID),
            "test": torch.tensor(TEST),
        },
        num_entities=len(names),
        num_relations=3,
        entity_names=uris,
        relation_names=["capitalOf", "borders", "largerThan"],
        name=f"toy/{lang}",
    )
