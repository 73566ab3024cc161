r"""The KGE optimisers by name (:mod:`fedgraph.training.optimizers`): one
step of each against the update rule by hand, the name checks, and a
federated run and a baseline trained, recorded and resumed with Adagrad."""

import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import write_toy_folders  # noqa: E402

from fedgraph.cli.main import main  # noqa: E402
from fedgraph.data.checkpoint import load_checkpoint  # noqa: E402
from fedgraph.federated.kge.setup import KGESettings  # noqa: E402
from fedgraph.training.optimizers import (  # noqa: E402
    OPTIMIZERS,
    build_optimizer,
    check_optimizer,
)

W0 = [1.0, -2.0, 0.5]
GRADS = [[0.5, -1.0, 0.0], [0.3, 0.4, -2.0]]


def _two_steps(name, lr):
    w = torch.nn.Parameter(torch.tensor(W0))
    opt = build_optimizer(name, [w], lr)
    for g in GRADS:
        w.grad = torch.tensor(g)
        opt.step()
    return w.detach()


def test_adagrad_divides_by_the_root_of_the_summed_squares():
    lr, eps = 0.1, 1e-10
    w, acc = torch.tensor(W0), torch.zeros(3)
    for g in map(torch.tensor, GRADS):
        acc = acc + g * g
        w = w - lr * g / (acc.sqrt() + eps)
    assert torch.allclose(_two_steps("adagrad", lr), w, atol=1e-7)


def test_sgd_and_adam_by_hand():
    lr = 0.1
    w = torch.tensor(W0) - lr * sum(map(torch.tensor, GRADS))
    assert torch.allclose(_two_steps("sgd", lr), w, atol=1e-7)
    # Adam's first step moves each coordinate with a gradient by lr
    p = torch.nn.Parameter(torch.tensor(W0))
    opt = build_optimizer("Adam", [p], lr)
    assert isinstance(opt, torch.optim.Adam) and opt.defaults["fused"]
    p.grad = torch.tensor(GRADS[0])
    opt.step()
    step = torch.tensor(W0) - p.detach()
    assert torch.allclose(step, lr * torch.sign(torch.tensor(GRADS[0])), atol=1e-6)


@pytest.mark.parametrize(
    ("name", "lr", "message"),
    [("rmsprop", 0.1, "`optimizer` must be one of adam, adagrad, sgd"),
     ("adagrad", -0.1, "`lr` must be non-negative")],
)  # fmt: skip
def test_a_bad_optimizer_or_rate_is_refused(name, lr, message):
    with pytest.raises(ValueError, match=message):
        build_optimizer(name, [torch.nn.Parameter(torch.zeros(1))], lr)


def test_settings_check_the_name():
    assert OPTIMIZERS[0] == "adam" == KGESettings().optimizer
    assert KGESettings(optimizer="AdaGrad").optimizer == "adagrad"
    with pytest.raises(ValueError, match="`optimizer` must be one of"):
        KGESettings(optimizer="lbfgs")
    assert check_optimizer("SGD") == "sgd"


def _train(data, out, algorithm, *extra):
    return main([
        "train", str(data), "--algorithm", algorithm, "--dim", "4", "--rounds", "2",
        "--eval-every", "1", "--lr", "0.05", "--out", str(out), "--quiet", *extra,
    ])  # fmt: skip


@pytest.mark.parametrize("algorithm", ["fede", "independent"])
def test_a_run_trains_records_and_resumes_with_adagrad(
    algorithm, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    data = tmp_path / "data"
    write_toy_folders(data)
    out = tmp_path / "out"
    assert _train(data, out, algorithm, "--optimizer", "adagrad") == 0
    res = json.loads((out / "results.json").read_text())
    assert res["settings"]["optimizer"] == "adagrad"
    # the checkpoints hold Adagrad's accumulators, not Adam's moments
    ckpts = sorted(out.rglob("*.pt"))
    assert ckpts
    text = repr(load_checkpoint(ckpts[0]))
    assert "'sum'" in text and "'exp_avg'" not in text
    capsys.readouterr()
    # resumed with another optimiser: refused, one line naming it
    assert _train(data, out, algorithm, "--resume", "--rounds", "3") == 2
    err = capsys.readouterr().err.strip()
    assert "optimizer 'adagrad' -> 'adam'" in err and len(err.splitlines()) == 1


def test_batched_local_training_needs_adam(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    write_toy_folders(tmp_path / "data")
    out = tmp_path / "out"
    code = _train(tmp_path / "data", out, "fede", "--optimizer", "sgd",
                  "--local-training", "batched")  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "torch.optim.Adam; client 0 trains with sgd" in err
    assert len(err.splitlines()) == 1
    assert not out.exists()
