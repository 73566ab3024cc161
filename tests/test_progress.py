import logging

import torch

from fedgraph.progress import advance, progress_bar


def test_advance_moves_only_an_open_bar():
    advance(5)  # no bar: nothing happens
    with progress_bar("work", unit="batch") as bar:
        advance()
        advance(3)
        assert bar.n == 4
        with progress_bar("inner") as inner:  # the outer bar keeps moving
            assert inner is bar
            advance(2)
        assert bar.n == 6
    advance(1)
    with progress_bar("off", enabled=False) as bar:
        assert bar is None
        advance(1)


def test_training_batches_and_ranked_queries_move_the_bar(monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")  # eager kernels: no compile wait
    from fedgraph.eval import rank_triples
    from fedgraph.models.kge import TransE
    from fedgraph.models.losses import resolve_loss
    from fedgraph.models.samplers import UniformNegativeSampler
    from fedgraph.training.kge_trainer import train_epochs

    torch.manual_seed(0)
    model = TransE(6, 2, 4)
    triples = torch.tensor([[0, 0, 1], [1, 1, 2], [2, 0, 3], [3, 1, 4], [4, 0, 5]])
    with progress_bar("train") as bar:
        train_epochs(
            model,
            triples,
            epochs=2,
            batch_size=2,
            loss=resolve_loss("sigmoid-ns"),
            optimizer=torch.optim.Adam(model.parameters()),
            sampler=UniformNegativeSampler(6, 2),
            generator=torch.Generator().manual_seed(0),
        )
        assert bar.n == 6  # 3 batches per epoch
    with progress_bar("rank") as bar:
        rank_triples(model, triples, batch_size=2)
        assert bar.n == 10  # 5 head and 5 tail queries


def test_compiling_kernels_is_announced_once(monkeypatch, caplog):
    from fedgraph.models.kge._compiled import KERNEL_NAMES, KernelSet

    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)
    monkeypatch.setenv("FEDGRAPH_COMPILE", "1")
    table = {name: (lambda x: x + 1) for name in KERNEL_NAMES}
    kernels = KernelSet({}, "toy", "eager", table, dict(table))
    with caplog.at_level(logging.INFO, logger="fedgraph"):
        for name in KERNEL_NAMES:
            assert kernels(name, torch.zeros(1)).item() == 1
    notes = [r.getMessage() for r in caplog.records]
    assert len(notes) == 1 and notes[0].startswith("compiling the toy kernels")


def test_cli_prints_the_note_unless_quiet(monkeypatch, capsys, tmp_path):
    from fedgraph.cli.main import main

    def noisy(args):
        logging.getLogger("fedgraph").info("compiling the L1 kernels")
        return 0

    monkeypatch.setattr("fedgraph.cli.stats.run", noisy)
    for quiet, shown in (([], True), (["--quiet"], False)):
        assert main(["stats", str(tmp_path), *quiet]) == 0
        err = capsys.readouterr().err
        assert ("fedgraph: compiling the L1 kernels" in err) is shown


def test_partition_statistics_move_the_bar_per_client():
    from fedgraph.data.knowledge_graph import KnowledgeGraph
    from fedgraph.partition import RandomRelationPartitioner, describe

    g = torch.Generator().manual_seed(0)
    t = torch.stack(
        [torch.randint(0, 20, (90,), generator=g), torch.arange(90) % 3,
         torch.randint(0, 20, (90,), generator=g)], 1
    )  # fmt: skip
    kg = KnowledgeGraph({"train": t[:70], "valid": t[70:80], "test": t[80:]}, 20, 3)
    fed = RandomRelationPartitioner(3, seed=0)(kg)
    with progress_bar("stats") as bar:
        describe(fed, clustering=False)
        assert bar.n == 3
