r"""FB15k-237 (Toutanova & Chen, 2015)."""

from __future__ import annotations

from fedgraph.data.triple_dataset import TripleFolderDataset, remote_files

_FILES = ("train.txt", "valid.txt", "test.txt")


class FB15k_237(TripleFolderDataset):  # noqa: N801 - PyG's class name
    r"""The FB15k-237 dataset from the `"Observed versus latent features for
    knowledge base and text inference"
    <https://aclanthology.org/W15-4007/>`_ paper: FB15k without the inverse
    relations that leak test triples. Freebase mids, CRLF line ends.

    Ids are assigned over all splits in first-seen order (as PyG's
    ``FB15k_237``), hence 14,541 entities (PyKEEN, counting training
    entities only, reports 14,505).

    **STATS:**

    .. list-table::
        :header-rows: 1

        * - #entities
          - #relations
          - #train
          - #valid
          - #test
        * - 14,541
          - 237
          - 272,115
          - 17,535
          - 20,466
    """

    name = "fb15k-237"
    aliases = ("fb15k237", "FB15k_237")
    folder = "fb15k-237"
    remote_files = remote_files(
        "fb15k-237",
        "https://raw.githubusercontent.com/villmow/datasets_knowledge_embedding/"
        "master/FB15k-237",
        _FILES,
    )


__all__ = ["FB15k_237"]
