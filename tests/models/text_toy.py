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


def tiny_tokenizer():
    r"""A WordPiece ``BertTokenizerFast`` over :data:`VOCAB` (built from a
    ``tokenizers`` object: ``transformers`` 5 ignores ``vocab_file``)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast

    tok = Tokenizer(
        models.WordPiece({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]")
    )
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = VOCAB.index("[CLS]"), VOCAB.index("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
        cls_token="[CLS]", mask_token="[MASK]",
    )  # fmt: skip


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


def write_toy_dbp5l(folder: Path, languages: tuple[str, ...] = ("en", "it")) -> Path:
    r"""The toy KGs of :func:`toy_graph` in the DBP-5L layout under
    ``folder`` (``relations.txt``, ``entity/LANG.tsv``,
    ``kg/LANG-{train,val,test}.tsv``)."""
    (folder / "entity").mkdir(parents=True, exist_ok=True)
    (folder / "kg").mkdir(exist_ok=True)
    first = toy_graph(languages[0])
    (folder / "relations.txt").write_text("\n".join(first.relation_names) + "\n")
    for lang in languages:
        graph = toy_graph(lang)
        (folder / "entity" / f"{lang}.tsv").write_text(
            "\n".join(graph.entity_names) + "\n"
        )
        for split, tag in (("train", "train"), ("valid", "val"), ("test", "test")):
            rows = graph.triples(split).tolist()
            (folder / "kg" / f"{lang}-{tag}.tsv").write_text(
                "".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows)
            )
    return folder


def save_tiny_model(folder: Path, seed: int = 7, dropout: float = 0.1) -> Path:
    r""":func:`tiny_bert` and :func:`tiny_tokenizer` saved as a Hugging Face
    model folder (what ``--encoder`` and the run-config key ``encoder`` name)."""
    from fedgraph.models.text.backend import no_progress_bars

    folder.mkdir(parents=True, exist_ok=True)
    with no_progress_bars():  # transformers 5 draws one on stderr
        tiny_bert(seed=seed, dropout=dropout).save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return folder
