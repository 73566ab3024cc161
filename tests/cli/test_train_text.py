r"""``fedgraph train --model text``: FedMKGC through the command, with a tiny
BERT saved as a model folder and two toy language KGs in the DBP-5L layout
(nothing is downloaded)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from fedgraph.cli.main import main  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from text_toy import save_tiny_model, write_toy_dbp5l  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = ["--rounds", "2", "--eval-every", "1", "--lr", "1e-3", "--batch-size", "6",
        "--max-length", "6", "--prefix-tokens", "2", "--quiet"]  # fmt: skip


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("text-cli")
    return write_toy_dbp5l(root / "dbp"), save_tiny_model(root / "bert")


def _argv(toy, out, algorithm="fedmkgc", *extra):
    data, model = toy
    return ["train", str(data), "--model", "text", "--encoder", str(model),
            "--algorithm", algorithm, "--out", str(out), *extra]  # fmt: skip


def test_text_run_records_the_family_defaults_and_its_languages(toy, tmp_path, capsys):
    out = tmp_path / "run"
    argv = _argv(toy, out, "fedmkgcparallel", *FAST, "--languages", "it", "en")
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    s = doc["settings"]
    # FedMKGC's own defaults, not the KGE ones (margin 9, τ 0.2, 200 rounds)
    assert (s["margin"], s["temperature"], s["local_epochs"]) == (0.02, 0.05, 1)
    assert (s["rerank_alpha"], s["rerank_hops"], s["eval_batch_size"]) == (0.01, 5, 256)
    assert s["family"] == "text" and s["encoder"] == str(toy[1])
    assert s["client_languages"] == ["it", "en"] and s["languages"] == ["it", "en"]
    assert s["strategy_params"]["schedule"] == "parallel"
    assert [c["client"] for c in doc["clients"]] == [0, 1]
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("fedmkgcparallel on ")
    assert f"test mrr {doc['weighted']['mrr']:.4f}" in printed[-1]

    # a finished run resumed: reported, left as written
    before = (out / "results.json").read_bytes()
    assert main(argv + ["--resume"]) == 0
    assert "already finished" in capsys.readouterr().out
    assert (out / "results.json").read_bytes() == before
    # resumed with other languages or another margin: refused
    for change in (["--languages", "en", "it"], ["--gamma", "0.1"]):
        assert main(argv + change + ["--resume"]) == 2
        assert "trained with other settings" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--algorithm", "fede"], "Could not resolve 'fede' among choices "
         "['fedmkgc', 'fedmkgcparallel', 'independent']"),
        (["--languages", "en", "xx"], "`--languages` must name distinct languages"),
        (["--languages", "en", "en"], "`--languages` must name distinct languages"),
        (["--fraction", "0.5"], "`--fraction 0.5`: fedmkgc trains one client"),
        (["--selection", "per-client"], "`--selection per-client` applies to the KGE"),
        (["--set", "mu=1"], "`--set`: Unknown algorithm setting 'mu'"),
        (["--dp-epsilon", "1"], "privacy options apply to the federated KGE"),
        (["--secagg"], "`--secagg`: the privacy options apply to the federated KGE "
         "algorithms; --model text does not read them"),
        (["--dim", "8"], "`--dim 8` applies to the KGE models and --model rgcn "
         "only; --model text does not read it (leave it out)"),
        (["--num-negatives", "4"], "`--num-negatives 4` applies to the KGE models "
         "only"),
        (["--loss", "nssa"], "`--loss nssa` applies to the KGE models only"),
        (["--sample-on", "device"], "`--sample-on device` applies to the KGE "
         "models only"),
        (["--num-bases", "4"], "`--num-bases 4` applies to --model rgcn only"),
        (["--encoder", "/no/such/model"], "`--encoder` '/no/such/model' is not a "
         "language model folder"),
    ],
)  # fmt: skip
def test_text_bad_input_is_one_line_and_writes_nothing(
    toy, tmp_path, capsys, extra, message
):
    out = tmp_path / "o"
    assert main(_argv(toy, out, "fedmkgc", *FAST, *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_capped_evaluation_ranks_a_sample_and_records_it(toy, tmp_path):
    out = tmp_path / "capped"
    argv = _argv(toy, out, "independent", *FAST, "--test-max-triples", "1",
                 "--valid-max-triples", "2")  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    s = doc["settings"]
    assert (s["valid_max_triples"], s["test_max_triples"]) == (2, 1)
    # each toy language has 2 test triples: 1 ranked, head and tail
    for c in doc["clients"]:
        assert (c["n_test"], c["n_split_triples"], c["count"]) == (1, 2, 2)


def test_text_data_must_be_a_multilingual_kg(toy, tmp_path, capsys):
    out = tmp_path / "o"
    argv = _argv(toy, out, "fedmkgc", *FAST)
    argv[1] = str(tmp_path)  # a folder, not in the DBP-5L layout
    assert main(argv) == 2
    assert "DATASET folder" in capsys.readouterr().err and not out.exists()


def test_train_help_names_the_text_family(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "text (--model text): one of fedmkgc, fedmkgcparallel, independent" in text
    for option in ("--encoder", "--languages", "--max-length", "--prefix-tokens",
                   "--rerank-alpha", "--rerank-hops", "--eval-batch-size",
                   "--max-steps", "--valid-max-triples", "--test-max-triples"):  # fmt: skip
        assert option in text


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


@pytest.mark.parametrize(
    "first, then",
    [([], ["--languages", "en", "it"]), (["--languages", "en", "it"], [])],
)
def test_text_resume_takes_the_languages_written_out_as_the_default(
    toy, tmp_path, capsys, first, then
):
    # the toy DATASET's languages are en, it (in its order): the default and
    # `--languages en it` are one setting; another order or subset is not
    out = tmp_path / "run"
    argv = _argv(toy, out, "fedmkgcparallel", *FAST)
    assert main(argv + first + ["--stop-after", "1"]) == 0
    before = _snapshot(out)
    for other in (["--languages", "it", "en"], ["--languages", "en"]):
        assert main(argv + other + ["--resume"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert "trained with other settings (languages " in err
        assert f"-> {other[1:]!r}" in err
        assert _snapshot(out) == before
    assert main(argv + then + ["--resume"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert [h["round"] for h in doc["history"]] == [1, 2]
    assert doc["settings"]["client_languages"] == ["en", "it"]
