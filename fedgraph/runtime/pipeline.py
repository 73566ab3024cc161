r"""One call from a dataset to a trained, evaluated federation:
:func:`pipeline` (PyKEEN's ``pipeline``, federated).

.. code-block:: python

    import fedgraph

    result = fedgraph.pipeline(dataset="nations", loop={"num_rounds": 5})
    result.metrics["mrr"]
    result.predict(head="usa", relation="economicaid", client=0, k=3)
    result.save("runs/nations-fede")

Every part is named, as in PyKEEN, by an ``X`` plus ``X_kwargs`` pair: the
dataset (a registered name, a folder or a loaded object), its partition (a
saved partition, a partitioner's name with its arguments, or one), the model
with its own hyperparameters, the algorithm with its own settings. The
settings objects are the library's own:
:class:`~fedgraph.federated.kge.setup.KGESettings`,
:class:`~fedgraph.federated.rgcn.setup.RGCNSettings`,
:class:`~fedgraph.federated.text.setup.MKGCSettings` (``training``) and
:class:`~fedgraph.runtime.LoopSettings` (``loop``); their defaults, and
every step, are those of ``fedgraph train``, so the same settings give the
same numbers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedgraph.runtime.loop import LoopSettings
from fedgraph.runtime.pipeline_result import PipelineResult
from fedgraph.runtime.pipeline_run import RunFolder
from fedgraph.runtime.pipeline_settings import loop_settings, model_family, run_seed


def pipeline(
    dataset: Any = None,
    *,
    model: str = "transe",
    model_kwargs: Mapping[str, Any] | None = None,
    partition: Any = None,
    partition_kwargs: Mapping[str, Any] | None = None,
    algorithm: str = "fede",
    algorithm_kwargs: Mapping[str, Any] | None = None,
    training: Any = None,
    loop: LoopSettings | Mapping[str, Any] | None = None,
    evaluation: str = "fedlu",
    corrupt: str = "both",
    subsampling: bool = True,
    local_training: str = "sequential",
    seed: int | None = None,
    root: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
) -> PipelineResult:
    r"""Trains and tests ``algorithm`` on ``dataset`` in-process.

    Args:
        dataset (str, Path or object): a registered dataset name (e.g.
            ``"nations"``, ``"fedlu-r3"``, ``"aifb"``, ``"dbp-5l"``), a folder,
            or a loaded :class:`~fedgraph.data.KnowledgeGraph`,
            :class:`~fedgraph.data.shard.FederatedKG`,
            :class:`~fedgraph.data.rdf_graph.RDFGraph` or mapping language →
            KG. May be left out when ``partition`` is a saved partition.
        model (str): a KGE model name (``"transe"``, ``"rotate"``, …),
            ``"rgcn"`` (node classification on an RDF graph) or ``"text"``
            (FedMKGC's language model). (default: ``"transe"``)
        model_kwargs (Mapping, optional): the model's own hyperparameters
            (TransE: ``p_norm``); text: ``encoder``, a Hugging Face folder or
            name.
        partition (optional): a saved partition (folder or object), a
            partitioner's name (``"relation"``, ``"dirichlet"``, ``"rdf-type"``,
            …) or a partitioner. (default: a dataset that is already
            federated as it is; a single KG: ``"relation"`` with 3 clients;
            an RDF graph: ``"rdf-type"`` with 10 clients of 6 node types).
            Text: one client per language, ``partition_kwargs["languages"]``.
        partition_kwargs (Mapping, optional): the partitioner's arguments
            (``seed`` defaults to ``seed``).
        algorithm (str): a registered algorithm of the model's family, or
            for KGE ``"independent"`` / ``"centralized"``. (default: ``"fede"``)
        algorithm_kwargs (Mapping, optional): the algorithm's own settings
            (``fedgraph algorithms`` lists them).
        training (optional): the family's settings object or a mapping of its
            fields: :class:`~fedgraph.federated.kge.setup.KGESettings`,
            :class:`~fedgraph.federated.rgcn.setup.RGCNSettings`,
            :class:`~fedgraph.federated.text.setup.MKGCSettings`.
        loop (LoopSettings or Mapping, optional): rounds, evaluation cadence,
            early stopping (:class:`~fedgraph.runtime.LoopSettings`; R-GCN
            reads ``num_rounds`` only: FedAlign's protocol tests every round).
        evaluation (str): the KGE evaluation protocol
            (:mod:`fedgraph.eval.protocol`). (default: ``"fedlu"``)
        corrupt (str): KGE training negatives' side, ``"both"`` or
            ``"tail"``. (default: ``"both"``)
        subsampling (bool): KGE frequency weights on the loss. (default: True)
        local_training (str): how a round's KGE clients train:
            ``"sequential"`` or ``"batched"`` (one vectorised computation;
            :func:`~fedgraph.runtime.run_simulation`). (default:
            ``"sequential"``)
        seed (int, optional): the one seed of the run: the models, the
            samples, the partition, the clients of each round (the loop's
            seed follows it). (default: the ``training`` settings' seed, 0)
        root (str or Path, optional): the data root of a dataset name
            (default: ``FEDGRAPH_DATA``).
        out (str or Path, optional): a folder for the run, as ``fedgraph
            train --out`` writes it: a checkpoint after every round and
            ``progress.json`` (federated algorithms; ``result.save(out)``
            adds the results and models). (default: none, in memory)
        resume (bool): continue the run in ``out`` (refused unless it was
            run with the same settings); with ``loop={"stop_after": k}`` a
            run can stop after ``k`` rounds and be resumed with the same
            numbers as a run without a stop. (default: False)

    Returns:
        PipelineResult: metrics, curves, communication, the trained models.
    """
    family = model_family(model)
    seed = run_seed(seed, training)
    from fedgraph.runtime.pipeline_families import run_rgcn, run_text
    from fedgraph.runtime.pipeline_kge import run_kge

    if resume and out is None:
        raise ValueError("`resume=True` needs the run's folder `out`")
    folder = None if out is None else RunFolder(Path(out), resume, option="out")
    runner = {"kge": run_kge, "rgcn": run_rgcn, "text": run_text}[family]
    return runner(
        dataset=dataset,
        model=model,
        model_kwargs=dict(model_kwargs or {}),
        partition=partition,
        partition_kwargs=dict(partition_kwargs or {}),
        algorithm=algorithm,
        algorithm_kwargs=dict(algorithm_kwargs or {}),
        training=training,
        loop=loop_settings(loop, family, seed),
        options={
            "evaluation": evaluation,
            "corrupt": corrupt,
            "subsampling": subsampling,
            "local_training": local_training,
            "folder": folder,
        },
        seed=seed,
        root=root,
    )


__all__ = ["pipeline", "PipelineResult"]
