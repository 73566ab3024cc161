"""benchmarks/step_parts.py on tiny tables: the parts it times, the parameter
counts of the models it builds, the JSON it writes and its one-line errors."""

import json

import pytest

from fedgraph.models import resolve_model

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = ["--dim", "8", "--batch-size", "16", "--num-negatives", "4", "--threads", "1"]


@pytest.mark.parametrize("model", ["transe", "rotate"])
def test_step_parts_times_each_part_per_table(tmp_path, load_script, model):
    script = load_script("benchmarks/step_parts.py")
    out = tmp_path / "parts.json"
    argv = ["--model", model, "--entities", "50,120", "--relations", "3,5"]
    assert script.main([*argv, *TINY, "--steps", "3", "--warmup", "1",
                        "--json", str(out)]) == 0  # fmt: skip
    doc = json.loads(out.read_text())
    assert doc["model"] == model and list(doc["results"]) == ["50", "120"]
    for (n, r), row in zip(((50, 3), (120, 5)), doc["results"].values(), strict=True):
        assert set(row) == {*script.PARTS, "total", "parameters"}
        assert all(row[p] >= 0 for p in script.PARTS)
        assert row["total"] == pytest.approx(
            sum(row[p] for p in script.PARTS), abs=0.05
        )
        built = resolve_model(model, n, r, 8, gamma=10.0)
        assert row["parameters"] == sum(p.numel() for p in built.parameters())
    assert (
        doc["settings"]["steps"] == 3 and not out.with_name("parts.json.tmp").exists()
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--entities", "10,x"],
            "--entities '10,x': expected comma-separated positive",
        ),
        (["--entities", "10,0", "--relations", "2,2"], "--entities '10,0': expected"),
        (
            ["--entities", "10,20", "--relations", "2"],
            "--relations has 1 counts, --entities 2",
        ),
        (["--steps", "0"], "--steps must be positive and --warmup >= 0 (got 0, 5)"),
    ],
)
def test_step_parts_names_bad_input(load_script, capsys, argv, message):
    script = load_script("benchmarks/step_parts.py")
    with pytest.raises(SystemExit) as exc:
        script.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
