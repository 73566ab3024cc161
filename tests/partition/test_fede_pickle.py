import os
import pickle

import numpy as np
import pytest
import torch

from fedgraph.cli.fede_pickle import main
from fedgraph.data.io import DataFormatError
from fedgraph.partition import load_partition
from fedgraph.partition.fede_pickle import load_fede_pickle


def _client(triples):
    r"""FedE's per-client dict from global (h, r, t) triples per split; its
    local ids number entities by first appearance, as FedE's notebook."""
    seen: dict[int, int] = {}
    out = {}
    for split, rows in triples.items():
        a = np.array(rows, dtype=np.int64).reshape(-1, 3)
        for h, _, t in a:
            seen.setdefault(int(h), len(seen))
            seen.setdefault(int(t), len(seen))
        local = np.array([[seen[int(h)], seen[int(t)]] for h, _, t in a]).reshape(-1, 2)
        out[split] = {
            "edge_index": local.T,
            "edge_type": a[:, 1],
            "edge_index_ori": a[:, [0, 2]].T,
            "edge_type_ori": a[:, 1],
        }
    return out


CLIENTS = [
    {
        "train": [[5, 0, 2], [2, 0, 7], [7, 1, 5]],
        "valid": [[5, 1, 7]],
        "test": [[2, 0, 5]],
    },
    {"train": [[2, 3, 9], [9, 2, 1]], "valid": [[1, 3, 2]], "test": [[9, 3, 2]]},
]


def test_reads_fedes_format_in_global_ids(tmp_path):
    path = tmp_path / "Toy-Fed2.pkl"
    path.write_bytes(pickle.dumps([_client(c) for c in CLIENTS]))
    fed = load_fede_pickle(path)
    assert (fed.num_clients, fed.num_entities, fed.num_relations) == (2, 10, 4)
    for shard, splits in zip(fed.shards, CLIENTS, strict=True):
        assert torch.equal(shard.entity_ids, torch.sort(shard.entity_ids).values)
        for split, rows in splits.items():
            t = shard.graph.triples(split)
            glob = torch.stack(
                [shard.entity_ids[t[:, 0]], shard.relation_ids[t[:, 1]],
                 shard.entity_ids[t[:, 2]]], 1,
            )  # fmt: skip
            assert glob.tolist() == rows
    assert fed.shards[1].entity_ids.tolist() == [1, 2, 9]
    # converted to a partition folder that `fedgraph train DIR` reads
    out = tmp_path / "part"
    assert main([str(path), "--out", str(out), "--num-entities", "12"]) == 0
    again = load_partition(out)
    assert again.num_entities == 12
    assert torch.equal(
        again.shards[0].graph.triples("test"), fed.shards[0].graph.triples("test")
    )


class _Evil:
    def __reduce__(self):
        return (os.getcwd, ())


def test_refuses_code_and_names_the_bad_file(tmp_path, capsys):
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(pickle.dumps([_Evil()]))
    with pytest.raises(
        DataFormatError,
        match=r"evil\.pkl: not a FedE partition file \(refusing to load (posix|os)\.getcwd",
    ):
        load_fede_pickle(evil)
    broken = tmp_path / "broken.pkl"
    broken.write_bytes(pickle.dumps([{"train": {"edge_index_ori": np.zeros((3, 2))}}]))
    with pytest.raises(DataFormatError, match="broken.pkl: client 0 has no 'train'"):
        load_fede_pickle(broken)
    assert main([str(broken), "--out", str(tmp_path / "o")]) == 2
    assert "broken.pkl" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
