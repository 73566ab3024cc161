r"""The algorithm registry: one normaliser, typed settings, and everything
derived from it (``--set`` help and checks, the Flower keys, the docs)."""

from dataclasses import asdict

import pytest

from fedgraph.cli.main import main
from fedgraph.federated import algorithms as registry
from fedgraph.federated.kge.setup import KGESettings


def test_names_are_normalised_in_one_place():
    assert registry.get("Fed-Prox", "kge").name == "fedprox"
    assert registry.get("FED_LU").name == "fedlu"
    assert registry.get("FedAlign-L").family == "rgcn"
    with pytest.raises(ValueError, match=r"Could not resolve 'fedxx' among .*'fede'"):
        registry.get("fedxx")
    # FedProx exists for KGE and for R-GCN: the family decides
    assert registry.get("fedprox", "rgcn").family == "rgcn"
    with pytest.raises(ValueError, match="several families"):
        registry.get("fedprox")


def test_every_algorithm_declares_typed_settings_with_help():
    algs = registry.algorithms()
    assert {"kge/fede", "kge/fedlu", "kge/feds", "rgcn/fedalignl"} <= set(algs)
    for alg in algs.values():
        assert alg.family in registry.FAMILIES and alg.summary
        for f in alg.fields():
            assert f.metadata["help"], (alg.name, f.name)
            assert type(f.default) in (bool, int, float, str), (alg.name, f.name)
            # the default passes its own check
            assert registry.check_value(alg.name, f, f.default) == f.default
        assert asdict(alg.parse({})) == alg.defaults()


@pytest.mark.parametrize(
    "algorithm,values,message",
    [
        ("feds", {"p": 1.5}, r"^feds setting 'p' must be a number in \[0, 1\] \(got 1.5\)$"),
        ("feds", {"sync_interval": -1}, "'sync_interval' must be an integer >= 0"),
        ("fedec", {"temperature": 0}, "'temperature' must be a number > 0"),
        ("fedlu", {"distill_schedule": "never"}, "must be always | gated"),
        ("fedprox", {"proximal_reduction": "mean"}, "must be sum | entity-mean"),
        ("fede", {"p": 0.4}, r"fede has no setting 'p' \(a setting of feds\)"),
        ("fedalign-l", {"clip": -1}, "fedalignl setting 'clip' must be a number >= 0"),
    ],
)  # fmt: skip
def test_bad_settings_are_one_line_errors_naming_key_algorithm_and_values(
    algorithm, values, message
):
    with pytest.raises(ValueError, match=message) as err:
        registry.get(algorithm, "rgcn" if "align" in algorithm else "kge").parse(values)
    assert "\n" not in str(err.value)


def test_legacy_fields_are_read_then_overridden():
    alg = registry.get("fedprox", "kge")
    assert alg.parse({}, legacy=KGESettings(proximal_mu=0.5)).proximal_mu == 0.5
    x = alg.parse({"proximal_mu": 0.2}, legacy=KGESettings(proximal_mu=0.5))
    assert x.proximal_mu == 0.2


def test_docs_table_and_help_list_every_setting(capsys):
    table = registry.docs_table()
    rows = table.splitlines()[2:]
    expected = sum(max(1, len(a.fields())) for a in registry.algorithms().values())
    assert len(rows) == expected
    for alg in registry.algorithms().values():
        for f in alg.fields():
            assert f"| {alg.name} | {alg.family} | `{f.name}` |" in table
            assert f"{f.name} (" in registry.settings_help()
    assert main(["algorithms"]) == 0
    assert capsys.readouterr().out.strip() == table
    assert main(["algorithms", "--json"]) == 0
    assert '"name": "feds"' in capsys.readouterr().out


def test_parse_assignments_reads_json_values():
    assert registry.parse_assignments(["a=1", "b=x", "c=0.5", "d=true"]) == {
        "a": 1,
        "b": "x",
        "c": 0.5,
        "d": True,
    }
    with pytest.raises(ValueError, match="`--set` expects KEY=VALUE"):
        registry.parse_assignments(["a"])


def test_the_torch_free_declarations_are_the_registry():
    # `fedgraph train --help` reads the family modules' source instead of
    # importing them: both views must be the same
    from fedgraph import declared

    for family in registry.FAMILIES:
        reg = {
            n: (
                a.summary,
                [(f.name, f.default, f.metadata["help"]) for f in a.fields()],
            )
            for n, a in registry.algorithms(family).items()
        }
        dec = {
            e["name"]: (e["summary"], [(f["name"], f["default"], f["help"]) for f in e["settings"]])
            for e in declared.declared(family)
        }  # fmt: skip
        assert dec == reg, family
    assert declared.settings_help() == registry.settings_help()
