r"""``fedgraph train DATASET --algorithm NAME --model NAME --out DIR``.

Federated algorithms run on :func:`fedgraph.runtime.run_simulation` with a
checkpoint in ``DIR/checkpoints`` after every round (``--resume`` continues a
killed run with identical numbers); ``DIR/progress.json`` holds the learning
curve so far and ``DIR/results.json`` the final results
(:func:`fedgraph.eval.write_results` format).
"""

from __future__ import annotations

import argparse
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedgraph import guard
from fedgraph.cli.choices import (
    BASELINES,
    EVAL_PROTOCOLS,
    KGE_LOSSES,
    KGE_MODELS,
    LOCAL_TRAINING,
    MODELS_SCORED,
    OPTIMIZERS,
    SAMPLE_ON,
    SAMPLERS,
    SELECTIONS,
    normalized,
)
from fedgraph.cli.options import fraction, non_negative, positive, real, seed, threads
from fedgraph.cli.privacy_options import privacy_settings
from fedgraph.cli.train_common import (
    format_test_metrics,
    loop_settings,
    report_finished,
    write_and_report,
)
from fedgraph.declared import kwargs_help

#: ``--corrupt`` choice -> corruption modes of training
CORRUPTIONS = {"both": ("head-batch", "tail-batch"), "tail": ("tail-batch",)}

#: Defaults that differ by family: KGE (FedLU's settings), R-GCN (FedAlign's),
#: text (FedMKGC's).
FAMILY_DEFAULTS = {
    "kge": {
        "rounds": 200, "local_epochs": 3, "dim": 256, "lr": 1e-4,
        "batch_size": 1024, "gamma": 9.0, "temperature": 0.2,
    },
    "rgcn": {"rounds": 20, "local_epochs": 5, "dim": 16, "lr": 0.1},
    "text": {
        "rounds": 50, "local_epochs": 1, "lr": 5e-5, "batch_size": 384,
        "gamma": 0.02, "temperature": 0.05,
    },
}  # fmt: skip


#: ``train --help``'s option groups before the text, privacy and output ones
GROUPS = {
    "common": "common",
    "data": "data",
    "model": "KGE model",
    "training": "training",
    "federated": "federated algorithm",
    "rgcn": "R-GCN (--model rgcn)",
}

#: ``train --help``'s closing examples
EXAMPLES = """examples:
  # FedE with TransE on FedLU's FB15k-237 R3 (checkpoint every round)
  fedgraph train fedlu-r3 --algorithm fede --model transe --out runs/r3-fede

  # the Independent baseline: each client alone, the same results format
  fedgraph train fedlu-r3 --algorithm independent --model transe --out runs/r3-ind

  # FedAlign's R-GCN on AIFB, 10 clients of 6 node types each
  fedgraph train aifb --model rgcn --algorithm fedalign --out runs/aifb-fedalign
"""


def _algorithms(family: str = "kge") -> list[str]:
    r"""The algorithms of ``family`` in the registry (read without importing
    them, so without torch: :func:`fedgraph.declared.declared`), plus the
    KGE baselines."""
    from fedgraph.declared import declared

    names = [a["name"] for a in declared(family)]
    return names + (list(BASELINES) if family == "kge" else [])


def _family(args: argparse.Namespace) -> str:
    r"""``rgcn`` for ``--model rgcn`` (node classification on an RDF graph),
    ``text`` for ``--model text`` (FedMKGC's language model), else ``kge``."""
    model = str(args.model).lower()
    return model if model in ("rgcn", "text") else "kge"


def register(sub: argparse._SubParsersAction) -> None:
    from fedgraph.declared import settings_help

    p = sub.add_parser(
        "train",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLES,
        help="train a federated (or baseline) KGE, R-GCN or FedMKGC model",
        description=textwrap.fill(  # raw: the epilog's examples keep their lines
            "Trains ALGORITHM on a federated KG (a registered dataset name such as "
            "fedlu-r3, or a folder of client0/ client1/ … triple folders) and "
            "writes results.json under --out. Defaults are FedLU's settings. "
            "--model rgcn trains an R-GCN family method on an RDF graph "
            "(FedAlign's defaults); --model text a FedMKGC setting on a "
            "multilingual KG, one client per language (FedMKGC's defaults).",
            79,
        ),
    )
    g = {key: p.add_argument_group(title) for key, title in GROUPS.items()}
    g["common"].add_argument(
        "--algorithm",
        required=True,
        help=f"KGE: one of {', '.join(_algorithms())}; R-GCN (--model rgcn): "
        f"one of {', '.join(_algorithms('rgcn'))}; text (--model text): one of "
        f"{', '.join(_algorithms('text'))}",
    )
    g["common"].add_argument(
        "--model",
        type=normalized,
        choices=(*KGE_MODELS, "rgcn", "text"),
        default="transe",
        help="KGE model; rgcn: node classification on an RDF graph (DATASET "
        "aifb|mutag|bgs|am, or a saved RDF partition) partitioned by node-type "
        "sampling; text: FedMKGC's language model (--encoder) on a multilingual "
        "KG (DATASET dbp-5l or a folder in its layout), one client per language "
        "(default: transe)",
    )
    _add_data(g)
    _add_training(g)
    _add_rgcn(g)
    _add_model_kwargs(g)
    _add_sampler(g)
    _add_loop(g)
    _add_method(g, settings_help())
    _add_run(g)
    from fedgraph.cli.train_text import add_text_arguments

    add_text_arguments(p)  # its group: --encoder, --languages, … (--model text)
    from fedgraph.cli.privacy_options import add_privacy_arguments

    add_privacy_arguments(p)  # --record-uploads, --dp-*, --secagg, --private-alignment
    from fedgraph.cli.regime_options import add_regime_arguments, recipe_defaults

    add_regime_arguments(p)  # --regime, --reciprocal, --regularizer, --recipe, …
    _add_output(p.add_argument_group("output and resume"))  # the last group
    from fedgraph.cli.family_options import option_defaults

    # what ``run`` compares with: an option another family reads is refused
    p.set_defaults(func=run, family_option_defaults=option_defaults(p))
    p.set_defaults(recipe_option_defaults=recipe_defaults(p))


def _add_data(g: dict[str, Any]) -> None:
    r"""The dataset and its data root."""
    g["data"].add_argument(
        "dataset",
        nargs="?",
        metavar="DATASET",
        help="federated dataset: a registered name (e.g. fedlu-r3) or a folder "
        "of client0/ client1/ … (`fedgraph partition` writes one); --model "
        "rgcn: an RDF graph or partition; --model text: dbp-5l or a folder in "
        "its layout",
    )
    g["data"].add_argument(
        "--root",
        type=Path,
        default=None,
        help="raw data root (default: $FEDGRAPH_DATA)",
    )


def _add_training(g: dict[str, Any]) -> None:
    r"""Local training and model size."""
    g["training"].add_argument(
        "--rounds",
        type=positive,
        default=None,
        help="max rounds (baselines: max epochs) (default: 200; R-GCN: 20; text: 50)",
    )
    g["training"].add_argument(
        "--local-epochs",
        type=positive,
        default=None,
        help="epochs each client trains per round (default: 3; R-GCN: 5; text: 1)",
    )
    g["training"].add_argument(
        "--batch-size",
        type=positive,
        default=None,
        help="triples per batch (default: 1024; text: 384 examples, the "
        "in-batch negatives)",
    )
    g["model"].add_argument(
        "--num-negatives",
        type=positive,
        default=256,
        help="negatives per positive (default: 256)",
    )
    g["model"].add_argument(
        "--dim",
        type=positive,
        default=None,
        help="embedding dimension (default: 256; R-GCN: hidden width 16)",
    )
    g["training"].add_argument(
        "--lr",
        type=real(0.0),
        default=None,
        help="learning rate (default: 1e-4, KGE with --optimizer; R-GCN: SGD 0.1; "
        "text: Adam 5e-5)",
    )
    g["model"].add_argument(
        "--optimizer",
        choices=OPTIMIZERS,
        default=OPTIMIZERS[0],
        help=f"KGE: the optimiser of every model (default: {OPTIMIZERS[0]})",
    )
    g["model"].add_argument(
        "--gamma",
        type=real(0.0, strict=False),
        default=None,
        help="score margin γ (default: 9.0; text: InfoNCE's additive margin 0.02)",
    )


def _add_rgcn(g: dict[str, Any]) -> None:
    r"""The R-GCN model and the partition of a named RDF graph."""
    g["rgcn"].add_argument(
        "--num-bases", type=positive, default=100, help="R-GCN bases (default: 100)"
    )
    g["rgcn"].add_argument(
        "--clients",
        type=positive,
        default=10,
        help="R-GCN on a named RDF graph: number of clients (default: 10)",
    )
    g["rgcn"].add_argument(
        "--num-types",
        type=positive,
        default=6,
        help="R-GCN on a named RDF graph: node types per client (rdf-type's "
        "num_types) (default: 6)",
    )
    g["rgcn"].add_argument(
        "--strategy",
        default="rdf-type",
        help="R-GCN on a named RDF graph: the partitioner, a name of `fedgraph "
        "partition --strategy` whose partitioner splits RDF graphs (default: "
        "rdf-type)",
    )
    g["rgcn"].add_argument(
        "--partition-kwargs",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="R-GCN on a named RDF graph: an argument of the partitioner's own "
        "(repeatable; as `fedgraph partition --partition-kwargs`)",
    )


def _add_model_kwargs(g: dict[str, Any]) -> None:
    r"""The KGE model's own hyperparameters, read from the models' source."""
    g["model"].add_argument(
        "--model-kwargs",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a hyperparameter of the KGE model's own (repeatable; e.g. "
        "--model-kwargs p_norm=2 for transe); each model's and its default: "
        + kwargs_help("model"),
    )


def _add_sampler(g: dict[str, Any]) -> None:
    r"""The negative sampler and its own arguments, read from the samplers'
    source."""
    g["model"].add_argument(
        "--sampler",
        type=normalized,
        choices=SAMPLERS,
        default="uniform",
        help="negative sampler, built on each client's training triples (the "
        "samplers of docs/reference/registries.md) (default: uniform)",
    )
    g["model"].add_argument(
        "--sampler-kwargs",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an argument of the sampler's own (repeatable; e.g. "
        "--sampler-kwargs filtered=true with --per-positive-negatives); each "
        "sampler's and its default: " + kwargs_help("sampler"),
    )


def _add_loop(g: dict[str, Any]) -> None:
    r"""The round loop: participation, evaluation, early stopping, seed."""
    g["federated"].add_argument(
        "--fraction",
        type=fraction,
        default=1.0,
        help="client fraction F sampled per round, in (0, 1] (default: 1.0)",
    )
    g["training"].add_argument(
        "--eval-every",
        type=positive,
        default=5,
        help="validate every k rounds (baselines: epochs) (default: 5)",
    )
    g["training"].add_argument(
        "--patience",
        type=non_negative,
        default=3,
        help="validations without improvement before stopping; 0: never stop "
        "early (default: 3)",
    )
    g["federated"].add_argument(
        "--selection",
        choices=SELECTIONS,
        default="weighted",
        help="test every client at the best weighted validation round, or each "
        "at its own best one among the improving rounds (FedLU's code)",
    )
    g["federated"].add_argument(
        "--local-training",
        choices=LOCAL_TRAINING,
        default="sequential",
        help="how the round's clients train: one after another, or batched into "
        "one vectorised computation (KGE clients without loss terms: FedE and "
        "its aggregation variants; the same steps, equal up to float rounding; "
        "fastest with many clients on a GPU) (default: sequential)",
    )
    g["common"].add_argument(
        "--seed", type=seed, default=0, help="random seed (default: 0)"
    )


def _add_method(g: dict[str, Any], algorithm_settings: str) -> None:
    r"""The algorithms' own settings and the evaluation protocol."""
    g["federated"].add_argument(
        "--proximal-mu",
        type=real(0.0, strict=False),
        default=0.1,
        help="FedProx μ (default: 0.1)",
    )
    g["federated"].add_argument(
        "--contrastive-mu",
        type=real(0.0, strict=False),
        default=0.3,
        help="FedEC μ_con (default: 0.3)",
    )
    g["federated"].add_argument(
        "--temperature",
        type=real(0.0),
        default=None,
        help="FedEC τ (default: 0.2; text: InfoNCE's τ 0.05)",
    )
    _add_protocol(g)
    g["model"].add_argument(
        "--loss",
        choices=KGE_LOSSES,
        default="sigmoid-ns",
        help="KGE loss (default: sigmoid-ns)",
    )
    g["federated"].add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an algorithm's own setting (repeatable; default; allowed values; "
        "`fedgraph algorithms` explains each): " + algorithm_settings,
    )
    g["model"].add_argument(
        "--per-positive-negatives",
        action="store_true",
        help="draw --num-negatives negatives for every positive, as FedLU's and "
        "FedS's code (default: one set shared by the batch, much faster on a CPU)",
    )
    g["data"].add_argument(
        "--unseen",
        choices=("keep", "drop"),
        default="keep",
        help="evaluation triples whose entity or relation is absent from the "
        "client's training triples: keep them (scored with an untrained "
        "embedding; a warning gives their count) or drop them (default: keep)",
    )


def _add_protocol(g: dict[str, Any]) -> None:
    r"""The evaluation protocol and the training corruption."""
    g["model"].add_argument(
        "--evaluate-with",
        choices=MODELS_SCORED,
        default=None,
        help="score clients' own tables (FedLU) or the global rows (FedE) "
        "(default: the --protocol's choice)",
    )
    g["model"].add_argument(
        "--protocol",
        default="fedlu",
        help="evaluation protocol, one of "
        f"{list(EVAL_PROTOCOLS)} (fedgraph.eval.protocol): fedlu = head and tail "
        "among the client's entities, each client's own table; fede = tails among "
        "the client's training entities, the server's rows (default: fedlu)",
    )
    g["model"].add_argument(
        "--corrupt",
        choices=CORRUPTIONS,
        default="both",
        help="corrupted side of training negatives: both (one step per side and "
        "batch) or tail (FedE's code) (default: both)",
    )
    g["model"].add_argument(
        "--no-subsampling",
        action="store_true",
        help="no RotatE frequency weights on the loss (FedE's code has none)",
    )


def _add_run(g: dict[str, Any]) -> None:
    r"""Where and how long the run goes."""
    g["common"].add_argument(
        "--device",
        default="cpu",
        help="where clients train and rank, e.g. cuda (default: cpu); the samples "
        "are drawn on the CPU unless --sample-on device, so a run may resume on "
        "another device (--model rgcn, --model text: cpu only)",
    )
    g["model"].add_argument(
        "--sample-on",
        choices=SAMPLE_ON,
        default="host",
        help="where batches and negatives are drawn: host (the CPU; the same "
        "samples on every device) or device (on --device from a generator seeded "
        "from --seed, no host sync per training step; another stream per device "
        "type, so a run resumes on the same one; not with --local-training "
        "batched) (default: host)",
    )
    g["common"].add_argument(
        "--threads",
        type=threads,
        default=0,
        help="torch threads, at most the machine's CPUs (more is refused) "
        "(0: torch's default)",
    )


def _add_output(o: Any) -> None:
    r"""Where the run is written, how it continues, what it prints."""
    o.add_argument("--out", required=True, type=Path, help="output folder")
    o.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out with the same command (refused, one line: "
        "a setting that changes the result or the data's content differs from "
        "what progress.json and every checkpoint record, a checkpoint records no "
        "settings or is from another run, or trained rounds are recorded but "
        "checkpoints/last.pt is gone). --rounds may grow while the run has not "
        "finished; on a finished run it must be the round it finished at (or, "
        "after early stopping, at least that round): a finished run is reported, "
        "never trained further",
    )
    o.add_argument(
        "--stop-after",
        type=positive,
        default=None,
        help="return after this many rounds of this call (resume later)",
    )
    o.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bars; every algorithm and baseline still prints one "
        "line per round (baselines: per validation) and the closing line "
        "(progress.json and results.json hold the numbers as JSON)",
    )


def dataset_argument(args: argparse.Namespace) -> str:
    r"""The dataset of ``fedgraph train``: ``DATASET``."""
    if not args.dataset:
        raise ValueError("give the dataset: `fedgraph train DATASET --algorithm …`")
    return str(args.dataset)


def _parse_set(items: list[str]) -> dict[str, Any]:
    from fedgraph.federated.algorithms import parse_assignments

    return parse_assignments(items, "`--set`")


def _load_federation(data: str, root: Path | None = None, one_kg: bool = False) -> Any:
    r"""The federation to train; with ``one_kg`` (the baselines) one KG with
    its own splits is accepted too, as a federation of one client."""
    from fedgraph.runtime.trained import load_kge_federation

    if one_kg:
        from fedgraph.data import load_dataset
        from fedgraph.data.knowledge_graph import KnowledgeGraph
        from fedgraph.runtime.baselines import one_client_federation

        loaded = load_dataset(
            Path(data) if Path(data).is_dir() else str(data), root=root
        )
        if isinstance(loaded, KnowledgeGraph):
            return one_client_federation(loaded)
    return load_kge_federation(data, root)


def _is_run(out: Path) -> bool:
    r"""Whether ``out`` holds what ``fedgraph train`` writes."""
    return (
        (out / "progress.json").is_file()
        or (out / "checkpoints").is_dir()
        or any(out.glob("trainer*.pt"))
    )


@guard.releases_locks  # the lock on --out (fedgraph.guard) ends with the command
def run(args: argparse.Namespace) -> int:
    r"""``fedgraph train``: checks everything, then trains (a baseline or a
    federated algorithm) and writes the run's folder."""
    from fedgraph.cli.family_options import check_family_options

    args.data = dataset_argument(args)
    from fedgraph.cli.regime_options import apply_recipe

    apply_recipe(args, getattr(args, "recipe_option_defaults", {}))
    family = _family(args)
    check_family_options(args, family, getattr(args, "family_option_defaults", {}))
    for key, value in FAMILY_DEFAULTS[family].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    checked = _check_args(args, family)
    algorithm = checked.algorithm
    _check_loop_options(args, family, algorithm)
    guard.check(args.out)  # a folder fedgraph did not write is never trained into
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    if family == "rgcn":
        from fedgraph.cli.train_rgcn import run_rgcn

        return run_rgcn(args, algorithm)
    if family == "text":
        from fedgraph.cli.train_text import train_text

        return train_text(args, algorithm)
    given = _resume_record(args, checked)
    if args.resume:
        from fedgraph.runtime.run_record import check_resume

        check_resume(args.out, given, rounds=args.rounds)
    if args.resume and report_finished(args, algorithm):
        return 0
    from fedgraph.eval.unseen import check_unseen

    t0 = time.perf_counter()
    fed = check_unseen(
        _load_federation(args.data, args.root, one_kg=algorithm in BASELINES),
        drop=args.unseen == "drop",
    )
    given["num_clients"] = fed.num_clients
    from fedgraph.runtime.run_record import check_resume, run_identity

    given.update(run_identity(args.out, args.data, args.root))  # data fingerprint
    if args.resume:  # the same folder may hold another federation now
        check_resume(args.out, given)
    _check_memory(args, algorithm, fed)  # before any table is allocated
    if algorithm in BASELINES:
        return _run_baseline(args, checked, fed, given)
    return _run_federated(args, checked, fed, t0, given)


def _check_memory(args: argparse.Namespace, algorithm: str, fed: Any) -> None:
    r"""Refuses tables and negatives larger than the memory left, naming the
    options to lower (:func:`~fedgraph.models.memory.check_kge_memory`):
    every client's model, or Centralized's one model over all entities."""
    from fedgraph.federated.kge.setup import SETTING_NAMES
    from fedgraph.models.kge import models
    from fedgraph.models.memory import check_kge_memory
    from fedgraph.registry import resolve_class

    tables = [(s.num_entities, s.num_relations) for s in fed.shards]
    if algorithm == "centralized":
        tables = [(fed.num_entities, fed.num_relations)]
    check_kge_memory(
        tables,
        args.dim,
        model=resolve_class(args.model, models),
        batch_size=args.batch_size,
        num_negatives=args.num_negatives,
        shared_negatives=not args.per_positive_negatives,
        device=args.device,
        names=SETTING_NAMES,
    )


def _check_loop_options(args: argparse.Namespace, family: str, algorithm: str) -> None:
    r"""Refuses loop options that ``algorithm`` does not read, and the pair
    that cannot be combined."""
    if args.local_training != "sequential" and (
        family != "kge" or algorithm in BASELINES
    ):
        raise ValueError(
            f"`--local-training {args.local_training}` applies to federated KGE "
            f"algorithms (got {algorithm})"
        )
    if args.stop_after is not None and family == "kge" and algorithm in BASELINES:
        raise ValueError(
            f"`--stop-after {args.stop_after}` applies to federated algorithms "
            f"(got {algorithm}: it trains each model to its end, checkpointing every "
            "validation; `--rounds` caps its epochs)"
        )
    if args.local_training == "batched" and args.sample_on == "device":
        raise ValueError(
            "`--sample-on device` cannot be combined with `--local-training "
            "batched` (batched training draws every client's samples on the host)"
        )


def _resume_record(args: argparse.Namespace, checked: Checked) -> dict[str, Any]:
    r"""What changes the result: a resumed run must have been trained with it
    (the privacy settings included)."""
    privacy = checked.privacy
    return {
        "algorithm": checked.algorithm,
        "data": str(args.data),
        **kge_settings(args, checked.evaluate_with).to_dict(),
        "unseen": args.unseen,
        "fraction": args.fraction,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "selection": args.selection,
        # the evaluation protocol and the training corruption change the result
        "eval_protocol": normalized(checked.protocol),
        "corrupt": args.corrupt,
        "subsampling": not args.no_subsampling,
        # a private run resumes only as the same private run
        "privacy": privacy.to_dict() if privacy.active else None,
    }


@dataclass(frozen=True)
class Checked:
    r"""What :func:`_check_args` derives from the command line.

    Args:
        algorithm (str): the normalised algorithm name.
        privacy (PrivacySettings): the privacy settings
            (:func:`~fedgraph.cli.privacy_options.privacy_settings`).
        protocol (str): the evaluation protocol's name (``--protocol``).
        evaluate_with (str): the tables evaluated, ``"local"`` or
            ``"global"`` (``--evaluate-with``, else the protocol's).
    """

    algorithm: str
    privacy: Any
    protocol: str
    evaluate_with: str


def _check_args(args: argparse.Namespace, family: str = "kge") -> Checked:
    r"""The algorithm, privacy settings and evaluation of the command line
    (:class:`Checked`), after every check that needs no data (nothing is
    written before they pass); ``args`` is left as parsed."""
    from fedgraph.federated import algorithms as registry
    from fedgraph.registry import resolve_device

    algorithm = normalized(args.algorithm)
    if algorithm not in _algorithms(family):
        raise ValueError(
            f"Could not resolve '{args.algorithm}' among choices "
            f"{_algorithms(family)}"
            + (
                " (R-GCN: --model rgcn; FedMKGC: --model text)"
                if family == "kge"
                else ""
            )
        )
    resolve_device(args.device, "`--device`")
    from fedgraph.eval.protocol import resolve_protocol

    try:
        protocol = resolve_protocol(args.protocol)
    except ValueError as exc:
        raise ValueError(f"`--protocol`: {exc}") from None
    evaluate_with = args.evaluate_with or protocol.model_scored
    if args.selection != "weighted" and algorithm in BASELINES:
        raise ValueError(
            f"`--selection {args.selection}` applies to federated algorithms; "
            f"{algorithm} trains each model with its own early stopping"
        )
    if args.selection != "weighted" and evaluate_with != "local":
        raise ValueError(
            f"`--selection {args.selection}` needs `--evaluate-with local` (each "
            "client tested on its own tables of its own best round)"
        )
    extra = _parse_set(args.set)
    try:  # a mistyped key or a wrong value is never silently ignored
        if algorithm in BASELINES:
            for key in extra:
                raise ValueError(f"{algorithm} has no setting {key!r}")
        else:
            registry.get(algorithm, family).parse(extra)
    except ValueError as exc:
        raise ValueError(f"`--set`: {exc}") from None
    privacy = privacy_settings(args)  # parsed once, here
    if privacy.active and algorithm in BASELINES:
        raise ValueError(
            f"the privacy options apply to the federated KGE algorithms, not "
            f"{algorithm}"
        )
    _check_out(args.out, args.resume)
    return Checked(algorithm, privacy, protocol.name, evaluate_with)


def _check_out(out: Path, resume: bool) -> None:
    r"""Refuses an ``--out`` that is a file, a non-empty folder without
    ``--resume``, or (with it) a folder ``fedgraph train`` did not write."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"`--out` {out} is a file, not a folder")
    if out.exists() and guard.contents(out) and not resume:  # lock files aside
        raise ValueError(f"`--out` {out} is not empty: pass --resume to continue it")
    if resume and out.exists() and guard.contents(out) and not _is_run(out):
        raise ValueError(
            f"`--out` {out} is not a `fedgraph train` run (no progress.json, "
            "checkpoints/ or trainer*.pt): nothing to resume; pick another `--out`"
        )


def kge_settings(args: argparse.Namespace, evaluate_with: str) -> Any:
    r"""The :class:`~fedgraph.federated.kge.setup.KGESettings` of the
    command line, evaluating the ``evaluate_with`` tables."""
    from fedgraph.federated.algorithms import parse_assignments
    from fedgraph.federated.kge.setup import KGESettings

    return KGESettings(
        model=args.model,
        model_kwargs=parse_assignments(args.model_kwargs, "`--model-kwargs`"),
        dim=args.dim,
        gamma=args.gamma,
        lr=args.lr,
        optimizer=args.optimizer,
        batch_size=args.batch_size,
        num_negatives=args.num_negatives,
        local_epochs=args.local_epochs,
        seed=args.seed,
        proximal_mu=args.proximal_mu,
        contrastive_mu=args.contrastive_mu,
        temperature=args.temperature,
        evaluate_with=evaluate_with,
        loss=args.loss,
        shared_negatives=not args.per_positive_negatives,
        extra=_parse_set(args.set),
        device=args.device,
        sample_on=args.sample_on,
        **_regime(args),
        **_sampler(args),
    )


def _sampler(args: argparse.Namespace) -> dict[str, Any]:
    r"""``{"sampler", "sampler_kwargs"}`` of the command line."""
    from fedgraph.federated.algorithms import parse_assignments

    kwargs = parse_assignments(args.sampler_kwargs, "`--sampler-kwargs`")
    return {"sampler": args.sampler, "sampler_kwargs": kwargs}


def _regime(args: argparse.Namespace) -> dict[str, Any]:
    r"""``{"regime", "regime_kwargs"}`` of the command line."""
    from fedgraph.cli.regime_options import regime_settings

    regime, kwargs = regime_settings(args)
    return {"regime": regime, "regime_kwargs": kwargs}


def _run_baseline(
    args: argparse.Namespace, checked: Checked, fed: Any, given: dict[str, Any]
) -> int:
    r"""Independent / centralized: the KGE core's trainer, same results format
    (:func:`~fedgraph.runtime.pipeline_kge.run_kge_baseline`, as
    :func:`fedgraph.pipeline`)."""
    from fedgraph.data.io import atomic_write_json
    from fedgraph.runtime.pipeline_kge import run_kge_baseline

    guard.claim(args.out, fresh=not args.resume)  # locked until the command ends
    progress_path = args.out / "progress.json"
    # the record ``--resume`` compares with, also in every trainer*.pt
    record = {**given, "command": args.command_line, "rounds_max": args.rounds}
    if not progress_path.exists():
        atomic_write_json(progress_path, {"settings": record, "history": []})
    algorithm = checked.algorithm
    res = run_kge_baseline(
        fed,
        algorithm,
        kge_settings(args, checked.evaluate_with),
        loop_settings(args),
        protocol=checked.protocol,
        out=args.out,
        data_name=str(args.data),
        corrupt=args.corrupt,
        subsampling=not args.no_subsampling,
        record=record,
        command=args.command_line,
        log=True,  # one line per validation, as the federated rounds
        progress_file=progress_path,
    )
    best = ", ".join(f"{c['best_epoch']}/{c['epochs']}" for c in res["clients"])
    print(
        f"{algorithm} on {args.data}: {format_test_metrics(res['weighted'])} (best epoch "
        f"{best}); results in {res['path']}"
    )
    return 0


def _run_meta(
    args: argparse.Namespace,
    checked: Checked,
    settings: Any,
    strategy: Any,
    given: dict[str, Any],
) -> dict[str, Any]:
    r"""The run's recorded settings (``progress.json``, ``results.json``,
    every checkpoint), with its identity from ``given``
    (:func:`~fedgraph.runtime.run_record.run_identity`)."""
    import torch

    from fedgraph.eval.protocol import resolve_protocol

    return {
        "algorithm": checked.algorithm,
        "data": str(args.data),
        "data_sha256": given["data_sha256"],
        "run_id": given["run_id"],
        "num_clients": given["num_clients"],
        "command": args.command_line,
        "strategy": repr(strategy),
        # the same, structured (what the strategy was built with)
        "strategy_params": strategy.get_params(),
        **settings.to_dict(),
        "unseen": args.unseen,
        "rounds_max": args.rounds,
        "fraction": args.fraction,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "selection": args.selection,
        "protocol": {
            **resolve_protocol(checked.protocol).to_dict(),
            "model_scored": checked.evaluate_with,
        },
        "eval_protocol": checked.protocol,
        "corrupt": args.corrupt,
        "subsampling": not args.no_subsampling,
        "threads": torch.get_num_threads(),
    }


def _run_federated(
    args: argparse.Namespace,
    checked: Checked,
    fed: Any,
    t0: float,
    given: dict[str, Any],
) -> int:
    r"""Builds the federation, runs it with a checkpoint every round (each
    recording the run's settings and identity, from ``given``) and writes
    ``results.json`` when it ends."""
    from fedgraph.runtime.pipeline_kge import build_kge_run
    from fedgraph.runtime.pipeline_run import RunFolder, run_loop

    algorithm, privacy = checked.algorithm, checked.privacy
    settings = kge_settings(args, checked.evaluate_with)
    from fedgraph.privacy import setup as privacy_setup

    strategy, clients = build_kge_run(  # the federation of `fedgraph.pipeline`
        algorithm,
        fed,
        settings,
        protocol=checked.protocol,
        corrupt=args.corrupt,
        subsampling=not args.no_subsampling,
    )
    _check_local_training(args, strategy, clients)  # before anything is written
    guard.claim(args.out, fresh=not args.resume)  # locked; the secret is written next
    setup_seconds = time.perf_counter() - t0
    strategy, clients = privacy_setup.apply_privacy(  # privacy wrappers (if any)
        strategy,
        clients,
        privacy,
        rounds=args.rounds,
        run_dir=args.out,
        entity_names=fed.entity_names,
        seed=args.seed,
    )
    meta = _run_meta(args, checked, settings, strategy, given)
    if privacy.active:
        meta["privacy"] = privacy.to_dict()
    meta["setup_seconds"] = setup_seconds
    t1 = time.perf_counter()
    res = run_loop(
        strategy,
        clients,
        loop_settings(args),
        RunFolder(args.out, args.resume),
        meta,
        local_training=args.local_training,
    )
    meta["wall_seconds_this_call"] = time.perf_counter() - t1
    if not res.test:
        print(f"stopped after round {res.rounds}; continue with --resume", flush=True)
        return 0
    write_and_report(args, algorithm, res, meta, clients, privacy)
    return 0


def _check_local_training(
    args: argparse.Namespace, strategy: Any, clients: Any
) -> None:
    r"""Refuses ``--local-training batched`` for clients or loss terms it
    cannot batch (:func:`~fedgraph.runtime.batched.check_batched_run`)."""
    if args.local_training == "batched":
        from fedgraph.runtime.batched import check_batched_run

        check_batched_run(strategy, clients)
