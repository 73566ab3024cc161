"""benchmarks/device_speed.py on a tiny federation: the JSON it writes (seconds
per round and per validation pass, the sampling, the load average) and its
one-line errors."""

import json
import random

import pytest

pytestmark = pytest.mark.usefixtures("one_thread")


def _write_federation(root, n_clients=2, seed=0):
    rng = random.Random(seed)
    for c in range(n_clients):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


def _argv(data, out, *extra):
    return [
        "--data", str(data), "--rounds", "2", "--dim", "8", "--batch-size", "16",
        "--num-negatives", "4", "--local-epochs", "1", "--threads", "1",
        "--out", str(out), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("sample_on", ["host", "device"])
def test_device_speed_writes_its_report(tmp_path, load_script, sample_on):
    script = load_script("benchmarks/device_speed.py")
    _write_federation(tmp_path / "fed")
    out = tmp_path / "speed.json"
    assert script.main(_argv(tmp_path / "fed", out, "--sample-on", sample_on)) == 0
    doc = json.loads(out.read_text())
    assert doc["sample_on"] == doc["settings"]["sample_on"] == sample_on
    assert doc["device"] == "cpu" and doc["threads"] == 1 and doc["num_clients"] == 2
    assert [r["round"] for r in doc["rounds"]] == [1, 2]
    assert all(r["train_seconds"] > 0 and r["validation_seconds"] > 0
               for r in doc["rounds"])  # fmt: skip
    # the first (warm-up) round is left out of the means
    assert doc["seconds_per_round"] == doc["rounds"][1]["train_seconds"]
    assert doc["seconds_per_validation"] == doc["rounds"][1]["validation_seconds"]
    assert doc["rounds_in_means"] == 1 and doc["peak_device_memory_bytes"] is None
    assert len(doc["load_average_start"]) == len(doc["load_average_end"]) == 3
    assert doc["command"].endswith(f"--sample-on {sample_on}")


def test_device_speed_errors_are_one_line(tmp_path, load_script, capsys):
    script = load_script("benchmarks/device_speed.py")
    _write_federation(tmp_path / "fed")
    out = tmp_path / "speed.json"
    extra = ["--sample-on", "device", "--local-training", "batched"]
    assert script.main(_argv(tmp_path / "fed", out, *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "draws on the device" in err
    with pytest.raises(SystemExit):
        script.main(_argv(tmp_path / "fed", out, "--sample-on", "gpu"))
    assert not out.exists()
