"""Every training command speaks with one voice: the same line per round (a
baseline: per validated epoch), the same closing line, ``--quiet`` meaning
the same for all, no JSON on the console; ``train --help`` grouped by concern
and closed by examples."""

import contextlib
import io
import re

import pytest

from fedgraph.cli.main import build_parser, main

#: a round's (a baseline's validation's) line, whatever the algorithm
STEP = re.compile(
    r"(client \d+ )?(round|epoch) \d+/2: loss \d+\.\d{4}, "
    r"valid mrr [01]\.\d{4} hits@10 [01]\.\d{4}; \d+\.\ds train, \d+\.\ds eval"
)
#: the closing line
CLOSING = re.compile(
    r"(fede|independent) on \S+: test mrr [01]\.\d{4} hits@1 [01]\.\d{4} "
    r"hits@3 [01]\.\d{4} hits@10 [01]\.\d{4} \(best (round|epoch) "
    r"\d/\d(, \d/\d)*\); results in \S+results\.json"
)


def _federation(root):
    # two clients of 12 entities (4 shared), 3 relations each, no duplicates
    for c in range(2):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        rows = sorted(
            {f"e{c * 4 + i % 12}\tr{c}_{i // 12 % 3}\te{c * 4 + (5 * i + i // 12 + 1) % 12}"
             for i in range(52)}
        )  # fmt: skip
        rows = rows[::2] + rows[1::2]  # valid, test: from every relation
        for split, part in (("train", rows[:40]), ("valid", rows[40:46]),
                            ("test", rows[46:])):  # fmt: skip
            (d / f"{split}.txt").write_text("\n".join(part) + "\n")
    return root


def _train(root, algorithm, quiet):
    out = root / f"{algorithm}{'-quiet' if quiet else ''}"
    argv = ["train", str(root / "data"),
            "--algorithm", algorithm, "--out", str(out), "--rounds", "2",
            "--local-epochs", "1", "--eval-every", "1", "--dim", "8",
            "--batch-size", "32", "--num-negatives", "4", "--lr", "0.01",
            "--threads", "1"]  # fmt: skip
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        assert main(argv + (["--quiet"] if quiet else [])) == 0
    return stdout.getvalue().splitlines(), stderr.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    r"""(algorithm, quiet) -> (stdout lines, stderr) of four tiny runs."""
    root = tmp_path_factory.mktemp("voice")
    _federation(root / "data")
    return {
        (a, q): _train(root, a, q)
        for a in ("fede", "independent")
        for q in (False, True)
    }


@pytest.mark.parametrize("algorithm", ["fede", "independent"])
@pytest.mark.parametrize("quiet", [False, True])
def test_every_run_prints_one_line_per_step_and_a_closing_line(runs, algorithm, quiet):
    lines, err = runs[algorithm, quiet]
    steps = 2 if algorithm == "fede" else 4  # independent: 2 clients x 2 epochs
    assert len(lines) == steps + 1, lines
    for line in lines[:-1]:
        assert STEP.fullmatch(line), line
    assert CLOSING.fullmatch(lines[-1]), lines[-1]
    assert not any(line.lstrip().startswith("{") for line in lines)
    heads = [line.split(":")[0] for line in lines[:-1]]
    if algorithm == "fede":
        assert heads == ["round 1/2", "round 2/2"]
    else:
        assert heads == [f"client {c} epoch {e}/2" for c in (0, 1) for e in (1, 2)]
    # --quiet: no bar at all; else the bars (standard error only) count batches
    assert ("batch" in err) is not quiet, err


@pytest.mark.parametrize("algorithm", ["fede", "independent"])
def test_quiet_takes_the_bars_away_not_the_lines(runs, algorithm):
    def same(lines):
        return [re.sub(r"\d+\.\ds|results in \S+", "", x) for x in lines]

    assert same(runs[algorithm, False][0]) == same(runs[algorithm, True][0])


def test_train_help_groups_options_by_concern_and_ends_with_examples(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--help"])
    out = capsys.readouterr().out
    titles = ["common:", "data:", "KGE model:", "training:", "federated algorithm:",
              "R-GCN (--model rgcn):", "text (--model text):",
              "privacy (see docs/privacy.md):", "output and resume:", "examples:"]  # fmt: skip
    heads = [line for line in out.splitlines() if line in titles]
    assert heads == titles
    examples = out.split("\nexamples:\n")[1]
    commands = [
        x.strip() for x in examples.splitlines() if x.strip().startswith("fedgraph")
    ]
    assert commands == [
        "fedgraph train fedlu-r3 --algorithm fede --model transe --out runs/r3-fede",
        "fedgraph train fedlu-r3 --algorithm independent --model transe --out "
        "runs/r3-ind",
        "fedgraph train aifb --model rgcn --algorithm fedalign --out "
        "runs/aifb-fedalign",
    ]
    for command in commands:  # each example parses as written
        args = build_parser().parse_args(command.split()[1:])
        assert args.out.name == command.split("/")[-1]
    sections = out.split("\n\n")
    common = next(s for s in sections if s.startswith("common:"))
    assert all(o in common for o in ("--algorithm", "--model", "--seed", "--device"))
    output = next(s for s in sections if s.startswith("output and resume:"))
    assert all(o in output for o in ("--out", "--resume", "--stop-after", "--quiet"))


def test_a_round_without_validation_and_an_r_gcn_round_say_the_same_way():
    from fedgraph.progress import step_line

    plain = {"round": 1, "train_seconds": 1.23, "train": {"count": 3.0}}
    assert step_line(plain, step="round", of=200) == "round 1/200: 1.2s train"
    rgcn = {"round": 3, "train_seconds": 1.23, "train": {"loss": 0.5},
            "test": {"accuracy": 0.8}, "eval_seconds": 0.25}  # fmt: skip
    assert step_line(rgcn, step="round", of=20, who="client 2") == (
        "client 2 round 3/20: loss 0.5000, test accuracy 0.8000; 1.2s train, 0.2s eval"
    )
