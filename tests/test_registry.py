import pytest

from fedgraph.registry import normalize_name, resolve, resolve_class


class TransE:
    def __init__(self, dim=1):
        self.dim = dim


class RotatE:
    pass


class RandomRelationPartitioner:
    pass


def test_normalize_ignores_case_dashes_and_suffix():
    assert normalize_name("Trans-E") == "transe"
    assert (
        normalize_name("random_RelationPartitioner", "RelationPartitioner") == "random"
    )
    # The suffix alone is not stripped to nothing.
    assert normalize_name("RelationPartitioner", "RelationPartitioner") == (
        "relationpartitioner"
    )


def test_resolve_builds_instances_and_passes_kwargs():
    obj = resolve("trans_e", [TransE, RotatE], dim=7)
    assert isinstance(obj, TransE) and obj.dim == 7
    assert resolve_class("ROTATE", [TransE, RotatE]) is RotatE
    assert (
        resolve_class(
            "random", [RandomRelationPartitioner], suffix="RelationPartitioner"
        )
        is RandomRelationPartitioner
    )


def test_resolve_returns_instances_and_aliases():
    inst = TransE(3)
    assert resolve(inst, [TransE]) is inst
    assert resolve_class("te", [TransE], aliases={"te": TransE}) is TransE


def test_unknown_name_lists_choices():
    with pytest.raises(
        ValueError,
        match=r"Could not resolve 'foo' among choices \['TransE', 'RotatE'\]",
    ):
        resolve("foo", [TransE, RotatE])


def test_unknown_name_lists_the_aliases_first():
    with pytest.raises(ValueError, match=r"among choices \['te', 'TransE', 'RotatE'\]"):
        resolve_class("foo", [TransE, RotatE], aliases={"te": TransE})
