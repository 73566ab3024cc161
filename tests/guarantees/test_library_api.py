r"""The library API validates like the CLI: one test per library finding,
and property tests feeding bad arguments.

Public constructors and functions check types, shapes, dtypes and id ranges
(:mod:`fedgraph.validate`) and raise a one-line :class:`TypeError` (wrong
kind: a float where an integer or an id is expected) or :class:`ValueError`
(out of range, wrong shape) naming the argument in backticks and echoing
the value: never a silently truncated number, never an error from inside
torch or pathlib.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedgraph.data import load_dataset
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.models.kge import ComplEx, DistMult, RotatE, TransE, models
from fedgraph.partition import partitioners

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = settings(max_examples=50, deadline=None, derandomize=True)

TRIPLES = torch.tensor([[0, 0, 1], [1, 1, 2], [2, 0, 3], [3, 1, 0]])


def one_line_error(kinds, call, *args, **kwargs) -> str:
    r"""The message of the error ``call`` raises: one line, of ``kinds``."""
    with pytest.raises(kinds) as exc:
        call(*args, **kwargs)
    message = str(exc.value)
    assert "\n" not in message, message
    return message


def toy_graph() -> KnowledgeGraph:
    return KnowledgeGraph({"train": TRIPLES, "test": TRIPLES[:2]}, 4, 2)


# ------------------------------------------------------ the findings


def test_transe_with_10_7_entities_is_refused_not_truncated():
    message = one_line_error(TypeError, TransE, 10.7, 2, 8)
    assert message == "`num_entities` must be a positive integer (got 10.7)"


def test_rank_triples_refuses_float_ids_instead_of_truncating():
    model = TransE(4, 2, 8)
    message = one_line_error(TypeError, rank_triples, model, TRIPLES.float() + 0.7)
    assert message.startswith("`triples` must hold integer ids, not torch.float32")


def test_knowledge_graph_refuses_float_ids_instead_of_truncating():
    message = one_line_error(
        TypeError, KnowledgeGraph, {"train": TRIPLES.double() + 0.5}, 4, 2
    )
    assert message.startswith("`triples['train']` must hold integer ids, not ")


def test_rank_triples_refuses_out_of_range_ids():
    model = TransE(4, 2, 8)
    bad = TRIPLES.clone()
    bad[2, 2] = 4
    message = one_line_error(ValueError, rank_triples, model, bad)
    assert message == "`triples` holds an entity id outside [0, 4) (got 4 at row 2)"
    bad = TRIPLES.clone()
    bad[1, 1] = -1
    message = one_line_error(ValueError, rank_triples, model, bad)
    assert message == "`triples` holds a relation id outside [0, 2) (got -1 at row 1)"
    message = one_line_error(
        ValueError, rank_triples, model, TRIPLES, candidates=torch.tensor([0, 9])
    )
    assert (
        message == "`candidates` holds an entity id outside [0, 4) (got 9 at index 1)"
    )


def test_rank_triples_with_n_by_2_triples_names_triples():
    message = one_line_error(ValueError, rank_triples, TransE(4, 2, 8), TRIPLES[:, :2])
    assert message == (
        "`triples` must be an [n, 3] tensor of (head, relation, tail) ids "
        "(got shape (4, 2))"
    )


def test_knowledge_graph_with_n_by_2_triples_names_the_split():
    message = one_line_error(
        ValueError, KnowledgeGraph, {"valid": TRIPLES[:, :2]}, 4, 2
    )
    assert message.startswith("`triples['valid']` must be an [n, 3] tensor")


def _train_epochs_with(batch_size):
    from fedgraph.models.losses import resolve_loss
    from fedgraph.models.samplers import UniformNegativeSampler
    from fedgraph.training.kge_trainer import train_epochs

    model = TransE(4, 2, 8)
    return train_epochs(
        model,
        TRIPLES,
        batch_size=batch_size,
        loss=resolve_loss("sigmoid-ns"),
        optimizer=torch.optim.Adam(model.parameters()),
        sampler=UniformNegativeSampler(4, 2),
        generator=torch.Generator().manual_seed(0),
    )


def _trainer_with(batch_size):
    from fedgraph.training.kge_trainer import KGETrainer

    return KGETrainer(TransE(4, 2, 8), toy_graph(), batch_size=batch_size)


@pytest.mark.parametrize(
    "call",
    [
        lambda b: rank_triples(TransE(4, 2, 8), TRIPLES, batch_size=b),
        _train_epochs_with,
        _trainer_with,
    ],
    ids=["rank_triples", "train_epochs", "KGETrainer"],
)
def test_batch_size_0_is_refused_naming_batch_size(call):
    message = one_line_error(ValueError, call, 0)
    assert message == "`batch_size` must be a positive integer (got 0)"
    message = one_line_error(TypeError, call, 2.5)
    assert message == "`batch_size` must be a positive integer (got 2.5)"


def test_load_dataset_none_names_the_argument():
    message = one_line_error(TypeError, load_dataset, None)
    assert message == "`name` must be of type str or PathLike (got NoneType)"


@pytest.mark.parametrize("cls", partitioners, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "graph", [None, "nations", TRIPLES], ids=["None", "str", "tensor"]
)
def test_partitioner_called_with_a_non_graph_names_graph(cls, graph):
    message = one_line_error(TypeError, cls(3), graph)
    want = "RDFGraph" if cls.__name__ == "RDFTypePartitioner" else "KnowledgeGraph"
    assert message == f"`graph` must be of type {want} (got {type(graph).__name__})"


def test_partitioner_still_partitions_a_graph():
    from fedgraph.partition import RandomRelationPartitioner

    kg = KnowledgeGraph(
        {"train": TRIPLES, "valid": TRIPLES[:1], "test": TRIPLES[1:2]}, 4, 2
    )
    fed = RandomRelationPartitioner(2)(kg)
    assert fed.num_clients == 2


@pytest.fixture
def one_gb(monkeypatch):
    r"""A machine with 1 GB of memory left (whatever this one has)."""
    monkeypatch.setattr(
        "fedgraph.models.memory.available_memory", lambda device="cpu": 10**9
    )


def test_kge_model_larger_than_memory_is_refused_before_allocating(one_gb):
    message = one_line_error(ValueError, ComplEx, 10**6, 10, 10**4)
    assert message == (
        "1 KGE model with `hidden_channels` 10000 needs at least 80.0 GB, more "
        "than the 1.0 GB of memory available on cpu: lower `hidden_channels`"
    )
    assert TransE(10**3, 10, 64).num_entities == 1000  # 0.3 MB: fits


def test_trainer_with_negatives_larger_than_memory_is_refused(one_gb):
    from fedgraph.training.kge_trainer import KGETrainer

    message = one_line_error(
        ValueError, KGETrainer, TransE(4, 2, 8), toy_graph(), num_negatives=10**9
    )
    assert message == (
        "1 KGE model with `hidden_channels` 8 needs at least 8264.0 GB (tables 0.0 "
        "GB, a training step's negatives 8264.0 GB), more than the 1.0 GB of memory "
        "available on cpu: lower `num_negatives` or `batch_size`"
    )


# ------------------------------------------------------ valid input


def test_integer_like_sizes_are_accepted():
    model = DistMult(np.int64(4), torch.tensor(2), 8)
    assert (model.num_entities, model.num_relations) == (4, 2)
    assert isinstance(model.num_entities, int)
    kg = KnowledgeGraph({"train": TRIPLES.int(), "valid": torch.zeros(0, 3)}, 4, 2)
    assert kg.triples("train").dtype == torch.long
    state = rank_triples(DistMult(4, 2, 8), TRIPLES.numpy())
    assert state.num_queries == 8  # 4 triples, head and tail


# ------------------------------------------------------ property tests

# floats of moderate size: a library that truncated them would build (not
# crash on) the model, so the test fails rather than exhausting memory
BAD_SIZES = st.one_of(
    st.floats(-1e5, 1e5).filter(lambda x: not x.is_integer()),
    st.sampled_from([math.nan, math.inf, -math.inf, 3.0]),
    st.integers(max_value=0),
    st.none(),
    st.text(max_size=3),
    st.booleans(),
)


@FAST
@given(
    cls=st.sampled_from(models),
    arg=st.sampled_from(["num_entities", "num_relations", "hidden_channels"]),
    value=BAD_SIZES,
)
def test_kge_models_refuse_bad_sizes_naming_them(cls, arg, value):
    sizes = {"num_entities": 4, "num_relations": 2, "hidden_channels": 4, arg: value}
    message = one_line_error((TypeError, ValueError), cls, **sizes)
    assert message.startswith(f"`{arg}` must be a positive integer (got ")


@FAST
@given(
    cls=st.sampled_from([TransE, DistMult, ComplEx, RotatE]),
    arg=st.sampled_from(["gamma", "epsilon"]),
    value=st.one_of(
        st.floats(max_value=-1e-9), st.just(math.nan), st.just(math.inf), st.none()
    ),
)
def test_kge_models_refuse_bad_margins_naming_them(cls, arg, value):
    message = one_line_error((TypeError, ValueError), cls, 4, 2, 4, **{arg: value})
    assert message.startswith(f"`{arg}` must be a finite number >= 0 (got ")


def _bad_triples():
    r"""``(tensor, error, message start)``: float ids, out-of-range ids and
    wrong shapes for a graph of 4 entities and 2 relations."""
    floats = st.lists(
        st.floats(0, 3).filter(lambda x: not x.is_integer()), min_size=3, max_size=3
    ).map(lambda row: (torch.tensor([row]), TypeError, "must hold integer ids"))
    out_of_range = st.tuples(
        st.integers(0, 3), st.sampled_from([-5, -1, 4, 9, 2**40])
    ).map(_out_of_range)
    shapes = st.sampled_from([(4, 2), (4, 4), (3,), (2, 3, 1), (12,)]).map(
        lambda shape: (
            torch.zeros(shape, dtype=torch.long),
            ValueError,
            "must be an [n, 3] tensor",
        )
    )
    return st.one_of(floats, out_of_range, shapes)


def _out_of_range(draw):
    row, value = draw
    triples = TRIPLES.clone()
    column = 1 if value in (-5, 9) else 2
    triples[row, column] = value
    what = "a relation" if column == 1 else "an entity"
    return triples, ValueError, f"holds {what} id outside"


@FAST
@given(bad=_bad_triples())
def test_rank_triples_refuses_bad_triples_naming_them(bad):
    triples, kind, start = bad
    message = one_line_error(kind, rank_triples, TransE(4, 2, 4), triples)
    assert message.startswith("`triples` ") and start in message


@FAST
@given(bad=_bad_triples())
def test_knowledge_graph_refuses_bad_triples_naming_them(bad):
    triples, kind, start = bad
    message = one_line_error(kind, KnowledgeGraph, {"test": triples}, 4, 2)
    assert message.startswith("`triples['test']` ") and start in message


@FAST
@given(bad=_bad_triples())
def test_triple_filter_refuses_bad_triples_naming_them(bad):
    triples, kind, start = bad
    message = one_line_error(kind, TripleFilter, triples, 4, 2)
    assert message.startswith("`triples` ") and start in message


@FAST
@given(value=BAD_SIZES)
def test_rank_triples_refuses_bad_batch_sizes(value):
    message = one_line_error(
        (TypeError, ValueError),
        rank_triples,
        TransE(4, 2, 4),
        TRIPLES,
        batch_size=value,
    )
    assert message.startswith("`batch_size` must be a positive integer (got ")


@FAST
@given(value=st.one_of(st.none(), st.integers(), st.floats(), st.lists(st.integers())))
def test_load_dataset_refuses_non_names(value):
    message = one_line_error(TypeError, load_dataset, value)
    assert message.startswith("`name` must be of type str or PathLike (got ")


@FAST
@given(num_clients=BAD_SIZES, cls=st.sampled_from(partitioners))
def test_partitioners_refuse_bad_client_counts(num_clients, cls):
    message = one_line_error((TypeError, ValueError), cls, num_clients)
    assert message.startswith("`num_clients` must be a positive integer (got ")
