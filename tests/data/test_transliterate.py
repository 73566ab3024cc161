r"""Romanised entity texts (``--transliterate``, extra ``transliterate``):
Greek and Japanese DBP-5L titles become ASCII, deterministically, and the
option reaches the tokenizer's input."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

from fedgraph.data.entity_text import (
    TRANSLITERATE_HINT,
    require_transliteration,
    transliterate,
    transliterate_texts,
)
from fedgraph.models.text import EntityTokens

needs_extra = pytest.mark.skipif(
    importlib.util.find_spec("anyascii") is None
    or importlib.util.find_spec("cutlet") is None,
    reason="needs the extra transliterate: pip install -e '.[transliterate]'",
)

#: DBP-5L titles (``entity/el.tsv``, ``entity/ja.tsv``) and their romanisation.
ROMANISED = {
    "Αγγλικός εμφύλιος πόλεμος": "Agglikos emfylios polemos",
    "Πολίτης Κέιν": "Politis Kein",
    "ΣΣΦ Γιαν Ρέγκενσμπουργκ": "SSF Gian Regkensmpoyrgk",
    "パリス・ヒルトン": "Paris Hiruton",
    "ロス・ターンブル": "Ross Turnbull",
    "オランダ王国": "Olanda oukoku",
    "デシューツ郡 (オレゴン州)": "Deshuutsu gun (Oregon shuu)",
    "1.FCウニオン・ベルリン": "1.FC union Berlin",
    "Égypte": "Egypte",
    "I SHOT ANDY WARHOL": "I SHOT ANDY WARHOL",
}


class Recording:
    r"""A tokenizer that records the texts it is given (one token per text)."""

    def __init__(self):
        self.seen: list[list[str]] = []

    def __call__(self, texts, max_length, **kw):
        self.seen.append(list(texts))
        n = len(texts)
        return {
            "input_ids": torch.ones(n, max_length, dtype=torch.long),
            "attention_mask": torch.ones(n, max_length, dtype=torch.long),
        }


@needs_extra
def test_greek_and_japanese_titles_become_ascii_and_stay_the_same():
    got = transliterate_texts(list(ROMANISED))
    assert got == list(ROMANISED.values())
    assert all(t.isascii() for t in got)
    assert transliterate_texts(list(ROMANISED)) == got  # deterministic
    assert transliterate("  Καράτσι \n") == "Karatsi"


@needs_extra
def test_the_option_reaches_the_tokenizer_input():
    titles = ["Πολίτης Κέιν", "パリス・ヒルトン", "Berlin"]
    tok = Recording()
    EntityTokens.from_texts(tok, titles, max_length=4)
    EntityTokens.from_texts(tok, titles, max_length=4, transliterate=True)
    assert tok.seen == [titles, ["Politis Kein", "Paris Hiruton", "Berlin"]]


@needs_extra
def test_fedmkgc_clients_tokenise_romanised_titles():
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    from text_toy import tiny_bert, toy_graph

    from fedgraph.federated.text.setup import MKGCSettings, build_fedmkgc_clients

    graph = toy_graph("en")
    texts = [["Πολίτης Κέιν", "パリス・ヒルトン"] * 4]
    tok = Recording()
    settings = MKGCSettings(max_length=4, num_prefix_tokens=1, transliterate=True)
    build_fedmkgc_clients([graph], tiny_bert(), tok, settings, texts=texts)
    assert tok.seen == [["Politis Kein", "Paris Hiruton"] * 4]


def _toy_run(tmp_path):
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    from text_toy import save_tiny_model, write_toy_dbp5l

    data = write_toy_dbp5l(tmp_path / "dbp")
    model = save_tiny_model(tmp_path / "bert")
    out = tmp_path / "run"
    argv = ["train", str(data), "--model", "text", "--algorithm", "fedmkgc",
            "--languages", "en",
            "--encoder", str(model), "--rounds", "1", "--eval-every", "1",
            "--batch-size", "6", "--max-length", "6", "--prefix-tokens", "2",
            "--quiet", "--transliterate", "--out", str(out)]  # fmt: skip
    return argv, out


@needs_extra
def test_the_command_records_the_option(tmp_path, one_thread):
    from fedgraph.cli.main import main

    argv, out = _toy_run(tmp_path)
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["transliterate"] is True


def test_a_missing_extra_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cutlet", None)  # as if not installed
    with pytest.raises(ImportError) as err:
        require_transliteration()
    assert (
        str(err.value)
        == TRANSLITERATE_HINT
        == (
            "transliteration needs anyascii and cutlet (with fugashi and unidic-lite): "
            'pip install "fedgraph-kg[transliterate]"'
        )
    )
    from fedgraph.cli.main import main

    argv, out = _toy_run(tmp_path)
    assert main(argv) == 2
    err_line = capsys.readouterr().err
    assert (
        err_line == f"fedgraph train: error: `--transliterate`: {TRANSLITERATE_HINT}\n"
    )
    assert not out.exists()
