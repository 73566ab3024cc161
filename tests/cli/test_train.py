import json

import pytest
import torch

from fedgraph.cli.main import main


def _write_federation(root, n_clients=2, seed=0):
    import random

    rng = random.Random(seed)
    for c in range(n_clients):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]  # overlapping
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


@pytest.mark.parametrize("algorithm", ["fede", "fedprox", "fedec"])
def test_train_cli_writes_results_and_resumes(tmp_path, algorithm):
    data = tmp_path / "fed"
    _write_federation(data)
    out = tmp_path / "run"
    argv = [
        "train",
        str(data),
        "--algorithm",
        algorithm,
        "--model",
        "transe",
        "--out",
        str(out),
        "--rounds",
        "4",
        "--local-epochs",
        "1",
        "--dim",
        "8",
        "--batch-size",
        "32",
        "--num-negatives",
        "4",
        "--eval-every",
        "2",
        "--lr",
        "0.01",
        "--quiet",
    ]
    assert main(argv + ["--stop-after", "1"]) == 0
    assert not (out / "results.json").exists()
    assert main(argv) == 2  # refuses a non-empty --out without --resume
    assert main(argv + ["--resume"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert set(doc["weighted"]) >= {"mrr", "hits@1", "hits@3", "hits@10"}
    assert [c["client"] for c in doc["clients"]] == [0, 1]
    assert all(c["n_test"] > 0 for c in doc["clients"])
    assert doc["rounds"] == 4 and doc["seconds_per_round"] > 0
    assert set(doc["comm"]) >= {"params_up", "params_down", "bytes_up", "bytes_down"}
    assert doc["comm"]["params_up"] > 0
    assert doc["settings"]["algorithm"] == algorithm
    # the strategy's parameters, structured, and its repr agree
    params = doc["settings"]["strategy_params"]
    assert params["entity_dim"] == 8 and params["num_entities"] == 16
    name = doc["settings"]["strategy"].split("(")[0]
    assert doc["settings"]["strategy"] == (
        f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"
    )
    # the command recorded is the one given to main(), not pytest's argv
    assert doc["settings"]["command"] == "fedgraph " + " ".join(argv + ["--resume"])
    # resuming a finished run leaves its results as written (no second test)
    written = (out / "results.json").read_bytes()
    assert main(argv + ["--resume"]) == 0
    assert (out / "results.json").read_bytes() == written
    other = "fede" if algorithm != "fede" else "fedprox"
    swapped = [other if a == algorithm else a for a in argv]
    assert main(swapped + ["--resume"]) == 2  # another algorithm's finished run
    # resumed run == uninterrupted run
    out2 = tmp_path / "run2"
    argv2 = [a if a != str(out) else str(out2) for a in argv]
    assert main(argv2) == 0
    doc2 = json.loads((out2 / "results.json").read_text())
    assert doc2["weighted"] == doc["weighted"] and doc2["clients"] == doc["clients"]


def test_train_cli_rejects_unknown_algorithm(tmp_path, capsys):
    assert (
        main(
            [
                "train",
                str(tmp_path),
                "--algorithm",
                "fedx",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "Could not resolve 'fedx'" in capsys.readouterr().err


def test_train_cli_runs_the_independent_baseline(tmp_path, capsys):
    data = tmp_path / "fed"
    _write_federation(data)
    out = tmp_path / "ind"
    assert (
        main(
            [
                "train",
                str(data),
                "--algorithm",
                "independent",
                "--out",
                str(out),
                "--rounds",
                "2",
                "--dim",
                "8",
                "--batch-size",
                "32",
                "--num-negatives",
                "4",
                "--eval-every",
                "1",
                "--lr",
                "0.01",
                "--quiet",
            ]
        )
        == 0
    )
    doc = json.loads((out / "results.json").read_text())
    assert doc["comm"]["params_up"] == 0 and len(doc["clients"]) == 2
    assert doc["settings"]["data"] == str(data)  # the folder, not a repr
    # --quiet: one line per client and validation, then the closing line
    printed = capsys.readouterr().out.strip().splitlines()
    assert [p.split(":")[0] for p in printed[:4]] == [
        "client 0 epoch 1/2", "client 0 epoch 2/2",
        "client 1 epoch 1/2", "client 1 epoch 2/2",
    ]  # fmt: skip
    assert len(printed) == 5 and printed[4].startswith("independent on ")


@pytest.mark.parametrize(
    "algorithm,item,message",
    [
        ("fedlu", "mu_distil=1", "'mu_distil'; fedlu's settings: distill_schedule"),
        ("fede", "p=0.4", "fede has no setting 'p' (a setting of feds)"),
        ("feds", "sync_interval=1.5", "'sync_interval' must be an integer"),
        ("feds", "p=2", "feds setting 'p' must be a number in [0, 1] (got 2.0)"),
    ],
)
def test_train_cli_rejects_a_wrong_set_before_writing(
    tmp_path, capsys, algorithm, item, message
):
    _write_federation(tmp_path / "data")
    out = tmp_path / "o"
    argv = ["train", str(tmp_path / "data"), "--algorithm", algorithm]
    assert main(argv + ["--set", item, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "`--set`" in err and message in err
    assert not out.exists()


def test_train_cli_bad_data_names_it_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "o"
    missing = tmp_path / "no-such-folder"
    assert main(["train", str(missing), "--algorithm", "fede",
                 "--out", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert f"Dataset folder '{missing}' does not exist" in err
    assert "fedlu-fb15k-237-r3" in err  # the registered names, for a typo
    assert not out.exists()


def test_train_help_lists_every_algorithm_setting(capsys):
    from fedgraph.federated.kge.setup import extra_settings

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for algorithm, settings in extra_settings().items():
        for key, default in settings.items():
            assert f"{key} ({default}" in text, (algorithm, key)


@pytest.mark.parametrize(
    "device, message",
    [
        ("gpu", "`--device`: Expected one of cpu"),
        pytest.param(
            "cuda",
            "`--device` is 'cuda' but this machine has no CUDA device",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="has CUDA"),
        ),
    ],
)
def test_train_cli_checks_the_device_before_writing(tmp_path, capsys, device, message):
    _write_federation(tmp_path / "data")
    out = tmp_path / "o"
    argv = ["train", str(tmp_path / "data"), "--algorithm", "fede"]
    assert main(argv + ["--device", device, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_train_cli_per_client_selection_records_each_clients_round(tmp_path):
    _write_federation(tmp_path / "data")
    out = tmp_path / "run"
    argv = ["train", str(tmp_path / "data"), "--algorithm", "fedlu",
            "--model", "transe", "--rounds", "4", "--local-epochs", "1", "--dim", "8",
            "--batch-size", "32", "--num-negatives", "4", "--eval-every", "1",
            "--lr", "0.01", "--quiet", "--selection", "per-client",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["selection"] == "per-client"
    rounds = [c["best_round"] for c in doc["clients"]]
    assert len(rounds) == 2 and all(1 <= r <= 4 for r in rounds)
    # each client's test used the state of a round it was validated at
    for row in doc["clients"]:
        entry = doc["history"][row["best_round"] - 1]
        assert str(row["client"]) in {str(c) for c in entry["valid_clients"]}


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--algorithm", "independent"], "`--selection per-client` applies to federated"),
        (["--algorithm", "fede", "--evaluate-with", "global"], "needs `--evaluate-with local`"),
    ],
)  # fmt: skip
def test_train_cli_selection_errors_before_writing(tmp_path, capsys, extra, message):
    _write_federation(tmp_path / "data")
    out = tmp_path / "o"
    argv = ["train", str(tmp_path / "data"), "--selection", "per-client"]
    assert main(argv + extra + ["--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("algorithm", ["fede", "independent", "centralized"])
def test_train_cli_fede_protocol_is_applied_and_recorded(tmp_path, algorithm):
    data = tmp_path / "fed"
    _write_federation(data)
    out = tmp_path / "run"
    argv = ["train", str(data), "--algorithm", algorithm]
    argv += ["--out", str(out), "--rounds", "2", "--local-epochs", "1"]
    argv += ["--dim", "8", "--batch-size", "32", "--num-negatives", "4"]
    argv += ["--eval-every", "1", "--lr", "0.01", "--loss", "nssa", "--quiet"]
    argv += ["--protocol", "fede", "--corrupt", "tail", "--no-subsampling"]
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    protocol = doc["settings"]["protocol"]
    assert protocol["name"] == "fede" and protocol["directions"] == ["tail"]
    assert protocol["candidates"] == "train-entities"
    # tails only: one query per test triple, none of them a head query
    n_test = sum(c["n_test"] for c in doc["clients"])
    assert doc["weighted"]["n_queries"] == n_test
    assert "head_mrr" not in doc["weighted"]
    assert all(c["n_queries"] == c["n_test"] for c in doc["clients"])
    if algorithm == "fede":
        assert protocol["model_scored"] == "global"
        assert doc["settings"]["evaluate_with"] == "global"
        assert doc["settings"]["corrupt"] == "tail"
        assert doc["settings"]["subsampling"] is False
    else:
        assert doc["settings"]["modes"] == ["tail-batch"]
        assert doc["settings"]["loss"].startswith("NSSALoss")
        assert doc["settings"]["subsampling"] is False


def test_train_cli_rejects_an_unknown_protocol_before_writing(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["train", str(tmp_path), "--algorithm", "fede"]
    assert main(argv + ["--out", str(out), "--protocol", "fedx"]) == 2
    assert "`--protocol`: Could not resolve 'fedx'" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("algorithm", ["fede", "independent"])
def test_resume_refuses_another_protocol_or_corruption(tmp_path, capsys, algorithm):
    data = tmp_path / "fed"
    _write_federation(data)
    out = tmp_path / "run"
    argv = ["train", str(data), "--algorithm", algorithm, "--out", str(out)]
    argv += ["--rounds", "4", "--local-epochs", "1", "--dim", "8", "--eval-every", "2"]
    argv += ["--batch-size", "32", "--num-negatives", "4", "--quiet"]
    fede = ["--protocol", "fede", "--corrupt", "tail"]
    # a baseline has no rounds to stop after: its run ends, and is resumed the same
    stop = ["--stop-after", "1"] if algorithm == "fede" else []
    assert main(argv + fede + stop) == 0
    capsys.readouterr()
    assert main(argv + ["--protocol", "fedlu", "--corrupt", "tail", "--resume"]) == 2
    assert "eval_protocol" in capsys.readouterr().err
    assert main(argv + ["--protocol", "fede", "--resume"]) == 2
    assert "corrupt" in capsys.readouterr().err


def _small_run(data, out, algorithm, *extra):
    return [
        "train", str(data), "--algorithm", algorithm, "--out", str(out),
        "--rounds", "2", "--local-epochs", "1", "--dim", "8", "--batch-size", "32",
        "--num-negatives", "4", "--eval-every", "1", "--lr", "0.01", "--quiet",
        *extra,
    ]  # fmt: skip


def test_train_cli_batched_local_training_matches_sequential(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    _write_federation(tmp_path / "fed")
    docs = {}
    for mode in ("sequential", "batched"):
        out = tmp_path / mode
        argv = _small_run(tmp_path / "fed", out, "fede", "--local-training", mode)
        assert main(argv) == 0
        docs[mode] = json.loads((out / "results.json").read_text())
    a, b = docs["sequential"], docs["batched"]
    for x, y in zip(a["history"], b["history"], strict=True):
        assert x["train"]["loss"] == pytest.approx(y["train"]["loss"], rel=1e-5)
    assert a["weighted"]["mrr"] == pytest.approx(b["weighted"]["mrr"], abs=1e-5)


@pytest.mark.parametrize(
    "algorithm, message",
    [
        ("fedprox", "does not support loss terms (ProximalTerm"),
        ("independent", "applies to federated KGE algorithms (got independent)"),
    ],
)
def test_train_cli_batched_errors_before_writing(tmp_path, capsys, algorithm, message):
    _write_federation(tmp_path / "fed")
    out = tmp_path / "o"
    argv = _small_run(tmp_path / "fed", out, algorithm, "--local-training", "batched")
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("algorithm", ["independent", "centralized"])
def test_train_cli_baseline_refuses_stop_after(tmp_path, capsys, algorithm):
    # a baseline has no rounds to stop after: the flag was once ignored and
    # the run trained to its end
    _write_federation(tmp_path / "fed")
    out = tmp_path / "o"
    argv = _small_run(tmp_path / "fed", out, algorithm, "--stop-after", "2")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"`--stop-after 2` applies to federated algorithms (got {algorithm}" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--encoder", "bert"], "`--encoder bert` applies to --model text only; "
         "the KGE models do not read it"),
        (["--languages", "en"], "`--languages en` applies to --model text only"),
        (["--max-steps", "3"], "`--max-steps 3` applies to --model text only"),
        (["--num-bases", "4"], "`--num-bases 4` applies to --model rgcn only"),
        (["--clients", "3"], "`--clients 3` applies to --model rgcn only"),
    ],
)  # fmt: skip
def test_train_cli_refuses_the_other_families_options(tmp_path, capsys, extra, message):
    _write_federation(tmp_path / "data")
    out = tmp_path / "o"
    argv = ["train", str(tmp_path / "data"), "--algorithm", "fede"]
    assert main(argv + extra + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_train_cli_sample_on_device_is_recorded_and_resumes(tmp_path, capsys):
    _write_federation(tmp_path / "fed")
    out = tmp_path / "dev"
    argv = _small_run(tmp_path / "fed", out, "fede", "--sample-on", "device")
    argv[argv.index("--rounds") + 1] = "3"
    assert main(argv + ["--stop-after", "1"]) == 0
    # the samples were drawn from the device generator: resuming with the
    # host's is refused, before anything is written
    before = (out / "progress.json").read_bytes()
    host = [a if a != "device" else "host" for a in argv]
    assert main(host + ["--resume"]) == 2
    assert "sample_on 'device' -> 'host'" in capsys.readouterr().err
    assert (out / "progress.json").read_bytes() == before
    assert main(argv + ["--resume"]) == 0
    resumed = json.loads((out / "results.json").read_text())
    assert resumed["settings"]["sample_on"] == "device"
    whole = tmp_path / "whole"
    assert main(_small_run(tmp_path / "fed", whole, "fede", "--sample-on", "device",
                           "--rounds", "3")) == 0  # fmt: skip
    doc = json.loads((whole / "results.json").read_text())
    assert [h["train"]["loss"] for h in doc["history"]] == [
        h["train"]["loss"] for h in resumed["history"]
    ]
    assert doc["weighted"] == resumed["weighted"]
    # rebuilt for fusion or unlearning, whose draws are on the host
    from fedgraph.runtime.trained import load_trained_run

    run = load_trained_run(whole, "last")
    assert run.settings.sample_on == "host"
    assert all(cl.sample_on == "host" for cl in run.clients.values())


def test_train_cli_records_host_sampling_by_default(tmp_path):
    _write_federation(tmp_path / "fed")
    out = tmp_path / "o"
    assert main(_small_run(tmp_path / "fed", out, "independent")) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["sample_on"] == "host"


def test_train_cli_sample_on_errors_before_writing(tmp_path, capsys):
    _write_federation(tmp_path / "fed")
    out = tmp_path / "o"
    with pytest.raises(SystemExit) as exit_:
        main(_small_run(tmp_path / "fed", out, "fede", "--sample-on", "gpu"))
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "argument --sample-on: invalid choice: 'gpu'" in err.splitlines()[-1]
    extra = ["--sample-on", "device", "--local-training", "batched"]
    assert main(_small_run(tmp_path / "fed", out, "fede", *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and (
        "`--sample-on device` cannot be combined with `--local-training batched`" in err
    )
    assert not out.exists()


@pytest.mark.parametrize("algorithm", ["independent", "centralized"])
def test_baseline_progress_records_each_validation_and_resumes(
    tmp_path, capsys, monkeypatch, algorithm
):
    import fedgraph.training.kge_trainer as kge_trainer

    _write_federation(tmp_path / "fed")
    out = tmp_path / "o"
    argv = _small_run(tmp_path / "fed", out, algorithm)
    save, saved = kge_trainer.atomic_torch_save, []

    def killed_at_the_second_checkpoint(state, path):
        if saved:
            raise KeyboardInterrupt
        saved.append(path)
        save(state, path)

    monkeypatch.setattr(
        kge_trainer, "atomic_torch_save", killed_at_the_second_checkpoint
    )
    assert main(argv) == 130  # interrupted
    progress = json.loads((out / "progress.json").read_text())
    # the first validation (graph 0, epoch 1) is recorded, as results.json's history
    assert [[e["epoch"] for e in h] for h in progress["history"]] == [[1]]
    assert progress["settings"]["command"].startswith(f"fedgraph train {tmp_path}")
    monkeypatch.setattr(kge_trainer, "atomic_torch_save", save)
    assert main(argv + ["--resume"]) == 0
    progress = json.loads((out / "progress.json").read_text())
    results = json.loads((out / "results.json").read_text())
    graphs = 2 if algorithm == "independent" else 1
    assert [[e["epoch"] for e in h] for h in progress["history"]] == [[1, 2]] * graphs
    assert progress["history"] == results["history"]
    # a lost trainer checkpoint would train its graph again from epoch 1: refused
    (out / f"trainer{graphs - 1}.pt").unlink()
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"records 2 validations of graph {graphs - 1} but {out}/trainer" in err
