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


# ------------------------------------------------- kinds found by module


def test_a_registry_is_a_sequence_of_the_classes_its_modules_list():
    from fedgraph.models.kge import KGEModel, TransE, models
    from fedgraph.models.kge.base import NormBasedModel
    from fedgraph.models.losses import MarginRankingLoss, NSSALoss, losses

    assert TransE in models and KGEModel not in models  # abstract: left out
    assert NormBasedModel not in models  # abstract too (no `interaction`)
    assert all(issubclass(c, KGEModel) for c in models) and len(models) >= 4
    # one file each, in module order, each where it is defined
    modules = [c.__module__ for c in losses]
    assert modules == sorted(modules)
    assert {"fedgraph.models.losses.nssa", "fedgraph.models.losses.sigmoid_ns"} <= (
        set(modules)
    )
    assert {NSSALoss, MarginRankingLoss} <= set(losses)
    assert {"nssa", "sigmoid-ns", "margin-ranking"} <= set(losses.names())
    assert repr(losses) == f"Registry('loss', {[c.__name__ for c in losses]})"


def test_names_aliases_and_class_names_resolve():
    from fedgraph.partition import (
        RandomRelationPartitioner,
        SpectralRelationPartitioner,
        partitioners,
    )

    for query in ("relation", "random", "Random-Relation", "RandomRelationPartitioner"):
        assert partitioners.resolve_class(query) is RandomRelationPartitioner
    assert partitioners.resolve_class("cluster") is SpectralRelationPartitioner
    part = partitioners.resolve("dirichlet", 4, seed=2, alpha=1.5)
    assert repr(part).startswith("DirichletRelationPartitioner(num_clients=4, seed=2")
    assert partitioners.resolve(part) is part
    with pytest.raises(ValueError) as exc:
        partitioners.resolve_class("louvian")
    # the short names first (what the command line takes), then the classes
    assert str(exc.value).startswith(
        "Could not resolve 'louvian' among choices ['dirichlet', "
    )
    assert "'RandomRelationPartitioner'" in str(exc.value)


def test_check_kwargs_casts_and_names_the_bad_key():
    from fedgraph.models.kge import models
    from fedgraph.partition import partitioners

    assert models.check_kwargs("TransE", {"p_norm": 2}) == {"p_norm": 2.0}
    assert models.hyperparameters("transe") == {"epsilon": 2.0, "p_norm": 1.0}
    cases = [
        (models, "transe", {"p": 2}, "`model_kwargs` key 'p' is not an argument "
         "of TransE (its arguments: epsilon, p_norm)"),
        (models, "transe", {"gamma": 3}, "`model_kwargs` key 'gamma' is set by "
         "the run's `gamma` (--gamma)"),
        (models, "transe", {"p_norm": "two"}, "`model_kwargs` key 'p_norm' must be "
         "a number (got 'two')"),
        (models, "rotate", {"epsilon": float("inf")}, "`model_kwargs` key 'epsilon' "
         "must be a finite number (got inf)"),
        (partitioners, "dirichlet", {"max_tries": 2.5}, "`partition_kwargs` key "
         "'max_tries' must be an integer (got 2.5)"),
        (partitioners, "relation", {"seed": 1}, "`partition_kwargs` key 'seed' is "
         "set by the partition's `seed` (--seed)"),
    ]  # fmt: skip
    for registry, name, kwargs, message in cases:
        with pytest.raises(ValueError) as exc:
            registry.check_kwargs(name, kwargs)
        assert str(exc.value) == message
    # a sequence or None default leaves the value to the constructor
    assert partitioners.check_kwargs("relation", {"ratios": [0.6, 0.2, 0.2]}) == {
        "ratios": [0.6, 0.2, 0.2]
    }


def test_cast_value_follows_the_default():
    from fedgraph.registry import cast_value

    assert cast_value("x", 20.0, 3) == 20 and type(cast_value("x", 20.0, 3)) is int
    assert cast_value("x", 1, 0.5) == 1.0 and type(cast_value("x", 1, 0.5)) is float
    assert cast_value("x", False, True) is False
    assert cast_value("x", [1], None) == [1]
    for value, default, message in [
        (1, True, "x must be true or false (got 1)"),
        (True, 1.0, "x must be a number (got True)"),
        (float("nan"), 1.0, "x must be a finite number (got nan)"),
        (2, "a", "x must be a string (got 2)"),
    ]:
        with pytest.raises(ValueError) as exc:
            cast_value("x", value, default)
        assert str(exc.value) == message


def test_argument_help_reads_google_args():
    from fedgraph.registry import argument_help

    doc = (
        "Title.\n\nArgs:\n    alpha (float, optional): the\n        concentration."
        " (default: :obj:`0.5`)\n    seed (int): random seed.\n\nMore text.\n"
    )
    assert argument_help(doc) == {"alpha": "the concentration.", "seed": "random seed."}
    assert argument_help("No arguments.") == {}


def test_component_name_is_the_own_name_attribute_or_the_class_name():
    from fedgraph.models.losses import SigmoidNSLoss
    from fedgraph.registry import component_name

    class SubLoss(SigmoidNSLoss):  # inherits no name
        pass

    assert component_name(SigmoidNSLoss, "Loss") == "sigmoid-ns"
    assert component_name(SubLoss, "Loss") == "sub"


# ------------------------------------------------- every kind, generically


def test_constructor_parameters_follow_kwargs_into_the_base():
    from fedgraph.registry import Kind, constructor_parameters, hyperparameters

    class Base:
        def __init__(self, *, a: int = 1, b: str = "x", seed: int = 0) -> None:
            pass

    class Child(Base):
        def __init__(self, c: float = 2.0, b: str = "y", **options) -> None:
            super().__init__(b=b, **options)

    class Closed(Base):
        def __init__(self, c: float = 2.0) -> None:
            super().__init__()

    kind = Kind("toy", "toy", "Base", fixed=(("seed", "--seed"),))
    assert [p.name for p in constructor_parameters(Child)] == [
        "c", "b", "options", "a", "b", "seed",
    ]  # fmt: skip
    # the subclass's default wins; `fixed` arguments are the caller's
    assert hyperparameters(Child, kind) == {"c": 2.0, "b": "y", "a": 1}
    assert hyperparameters(Closed, kind) == {"c": 2.0}  # no **kwargs: stops


def test_the_regimes_are_a_kind_read_through_their_base_constructor():
    from fedgraph.registry import KINDS, kind_registry
    from fedgraph.training.regimes import OneVsAll, regimes

    assert kind_registry("regime") is regimes and regimes.kind is KINDS["regime"]
    # OneVsAll sets `loss` and `label_smoothing` and passes the rest on
    assert regimes.hyperparameters("1vsall") == {
        "loss": "ce",
        "label_smoothing": 0.0,
        "reciprocal": False,
        "regularizer": "none",
        "regularizer_weight": 0.0,
        "entity_dropout": 0.0,
        "relation_dropout": 0.0,
    }
    assert regimes.hyperparameters("kvsall")["loss"] == "bce"
    assert "loss" not in regimes.hyperparameters("negative-sampling")
    assert regimes.check_kwargs("ns", {"regularizer_weight": 1}) == {
        "regularizer_weight": 1.0
    }
    with pytest.raises(ValueError) as exc:
        regimes.check_kwargs("1vsall", {"margin": 1.0})
    assert str(exc.value) == (
        "`regime_kwargs` key 'margin' is not an argument of OneVsAll (its "
        "arguments: loss, label_smoothing, reciprocal, regularizer, "
        "regularizer_weight, entity_dropout, relation_dropout)"
    )
    assert repr(OneVsAll(reciprocal=True)).startswith(
        "OneVsAll(loss='ce', label_smoothing=0.0, reciprocal=True"
    )


KIND_NAMES = ["loss", "model", "partitioner", "regime", "regularizer", "sampler"]


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_each_kind_s_source_view_is_its_imported_registry(kind):
    # what `--help` reads from source (no torch) is what the registry
    # imports, abstract intermediate bases (NormBasedModel,
    # RelationPartitioner, AllEntityRegime) left out of both
    from fedgraph.declared import declared_components
    from fedgraph.registry import KINDS, kind_registry

    assert sorted(KINDS) == KIND_NAMES
    registry = kind_registry(kind)
    assert declared_components(kind) == registry.describe()
    assert len(registry) >= (2 if kind in ("sampler", "regularizer") else 3)
    abstract = {"NormBasedModel", "RelationPartitioner", "AllEntityRegime"}
    assert not abstract & {c["class"] for c in declared_components(kind)}


def test_kind_registry_refuses_a_source_without_one():
    from fedgraph.registry import Kind, kind_registry

    with pytest.raises(ValueError) as exc:
        kind_registry(Kind("toy", "fedgraph.validate", "Nothing"))
    assert str(exc.value) == "fedgraph.validate holds no registry of kind 'toy'"
