import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402
from text_toy import EN, tiny_bert, tiny_tokenizer  # noqa: E402

from fedgraph.models.text import (  # noqa: E402
    ENCODER,
    BiEncoder,
    EntityTokens,
    add_inverse_triples,
    mean_pool,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_mean_pool_ignores_padding():
    hidden = torch.tensor(
        [
            [[1.0, 2.0], [3.0, 4.0], [100.0, -100.0]],
            [[5.0, 6.0], [7.0, 8.0], [9.0, 10.0]],
        ]
    )
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    out = mean_pool(hidden, mask)
    assert torch.allclose(out, torch.tensor([[2.0, 3.0], [7.0, 8.0]]))
    hidden[0, 2] = 1e6  # a padded position changes nothing
    assert torch.allclose(mean_pool(hidden, mask)[0], torch.tensor([2.0, 3.0]))
    with pytest.raises(ValueError, match="attention_mask"):
        mean_pool(hidden, mask[:, :2])


def test_entity_tokens_truncate_pad_and_trim():
    tok = tiny_tokenizer()
    tokens = EntityTokens.from_texts(
        tok, ["paris", "new capital city of the"], max_length=5
    )
    assert tokens.input_ids.shape == (2, 5)
    # [CLS] paris [SEP] [PAD] [PAD]; the second is truncated to 5 incl. specials
    assert tokens.attention_mask.tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    ids, mask = tokens[torch.tensor([0])]
    assert ids.shape == (1, 3) and mask.tolist() == [[1, 1, 1]]
    assert ids[0, 0] == tok.cls_token_id and ids[0, 2] == tok.sep_token_id
    assert repr(tokens) == "EntityTokens(entities=2, max_length=5)"
    with pytest.raises(ValueError, match="max_length"):
        EntityTokens.from_texts(tok, ["paris"], max_length=0)
    with pytest.raises(ValueError, match="has no token"):
        EntityTokens(torch.zeros(1, 2, dtype=torch.long), torch.zeros(1, 2))


def test_entity_embedding_is_the_unit_mean_of_the_language_model():
    tok = tiny_tokenizer()
    bert = tiny_bert()
    model = BiEncoder(bert, num_relations=3).eval()
    tokens = EntityTokens.from_texts(tok, EN, max_length=6)
    ids, mask = tokens[torch.tensor([0, 5])]
    with torch.no_grad():
        e = model.encode_entities(ids, mask)
        h = bert(input_ids=ids, attention_mask=mask).last_hidden_state
    ref = torch.nn.functional.normalize(
        (h * mask[..., None]).sum(1) / mask.sum(1, True), dim=-1
    )
    assert torch.allclose(e, ref, atol=1e-6)
    assert torch.allclose(e.norm(dim=-1), torch.ones(2))
    # padding the batch wider does not change an entity's embedding
    wide = torch.cat([ids, torch.zeros(2, 3, dtype=torch.long)], 1)
    wide_mask = torch.cat([mask, torch.zeros(2, 3, dtype=torch.long)], 1)
    with torch.no_grad():
        assert torch.allclose(model.encode_entities(wide, wide_mask), e, atol=1e-6)


def test_query_is_prefix_then_entity_tokens():
    tok = tiny_tokenizer()
    bert = tiny_bert()
    model = BiEncoder(bert, num_relations=3, num_prefix_tokens=4).eval()
    assert model.relation_prefix.shape == (6, 4, 16)
    tokens = EntityTokens.from_texts(tok, EN, max_length=6)
    ids, mask = tokens[torch.tensor([0, 1])]
    rel = torch.tensor([0, 4])
    with torch.no_grad():
        q = model.encode_queries(rel, ids, mask)
        emb = bert.get_input_embeddings()(ids)
        inputs = torch.cat([model.relation_prefix[rel], emb], 1)
        full = torch.cat([torch.ones(2, 4, dtype=torch.long), mask], 1)
        h = bert(inputs_embeds=inputs, attention_mask=full).last_hidden_state
    ref = (h * full[..., None]).sum(1) / full.sum(1, True)
    assert torch.allclose(q, torch.nn.functional.normalize(ref, dim=-1), atol=1e-6)
    # the relation matters; out-of-range relations are refused
    with torch.no_grad():
        other = model.encode_queries(torch.tensor([1, 4]), ids, mask)
    assert not torch.allclose(other[0], q[0]) and torch.allclose(other[1], q[1])
    with pytest.raises(ValueError, match=r"\[0, 6\)"):
        model.encode_queries(torch.tensor([6, 0]), ids, mask)


def test_prefixes_start_as_word_embedding_rows():
    torch.manual_seed(3)
    model = BiEncoder(tiny_bert(), num_relations=2, num_prefix_tokens=3)
    table = model.encoder.get_input_embeddings().weight
    rows = model.relation_prefix.detach().reshape(-1, 16)
    for row in rows:
        assert bool(((table - row).abs().sum(1) == 0).any())


def test_shared_arrays_are_the_language_model_only():
    model = BiEncoder(tiny_bert(), num_relations=3)
    arrays = model.shared_arrays()
    names = {ENCODER + k for k, _ in model.encoder.named_parameters()}
    assert set(arrays) == names
    assert not any("prefix" in k for k in arrays)
    assert sum(v.numel() for v in arrays.values()) == model.num_shared_parameters()
    # copies, not views
    next(iter(arrays.values())).add_(1.0)
    assert not torch.equal(
        next(iter(arrays.values())), next(model.encoder.parameters())
    )


def test_load_shared_arrays_roundtrip_and_errors():
    a = BiEncoder(tiny_bert(seed=0), num_relations=3)
    b = BiEncoder(tiny_bert(seed=1), num_relations=3)
    prefix = b.relation_prefix.detach().clone()
    b.load_shared_arrays(a.shared_arrays())
    for (_, pa), (_, pb) in zip(
        a.encoder.named_parameters(), b.encoder.named_parameters(), strict=True
    ):
        assert torch.equal(pa, pb)
    assert torch.equal(b.relation_prefix, prefix)  # prefixes untouched
    arrays = a.shared_arrays()
    arrays.pop(next(iter(arrays)))
    with pytest.raises(KeyError, match="missing"):
        b.load_shared_arrays(arrays)
    bad = a.shared_arrays()
    key = next(iter(bad))
    bad[key] = bad[key][:1]
    with pytest.raises(ValueError, match="shape"):
        b.load_shared_arrays(bad)


def test_add_inverse_triples():
    t = torch.tensor([[0, 1, 2], [3, 0, 4]])
    out = add_inverse_triples(t, num_relations=2)
    assert out.tolist() == [[0, 1, 2], [3, 0, 4], [2, 3, 0], [4, 2, 3]]
    with pytest.raises(ValueError, match="num_relations"):
        add_inverse_triples(t, num_relations=1)


def test_from_pretrained_loads_a_local_folder_and_repr(tmp_path, capfd):
    from transformers.utils import logging

    tiny_bert(seed=5).save_pretrained(tmp_path / "bert")
    capfd.readouterr()
    logging.enable_progress_bar()
    model = BiEncoder.from_pretrained(tmp_path / "bert", num_relations=4)
    assert capfd.readouterr().err == ""  # no loading bar
    assert logging.is_progress_bar_enabled()  # the setting is restored
    ref = tiny_bert(seed=5)
    for (_, pa), (_, pb) in zip(
        model.encoder.named_parameters(), ref.named_parameters(), strict=True
    ):
        assert torch.equal(pa, pb)
    assert repr(model) == (
        "BiEncoder(BertModel, num_relations=4, num_prefix_tokens=12, hidden_size=16)"
    )
    with pytest.raises(ValueError, match="num_relations"):
        BiEncoder(ref, num_relations=0)
    with pytest.raises(TypeError, match="get_input_embeddings"):
        BiEncoder(torch.nn.Linear(2, 2), num_relations=1)
