r"""The algorithm settings of ``KGESettings.extra``: defaults, casting, and
errors that name the key (a mistyped key must not be silently ignored)."""

import pytest
from fedlu_toy import toy_federation

from fedgraph.federated.kge.setup import (
    KGESettings,
    algorithm_settings,
    build_kge_federation,
    check_extra,
    extra_settings,
    kge_algorithms,
    known_extra_settings,
)


def test_every_algorithm_declares_its_settings():
    # the views of the registry (a new algorithm adds its own settings)
    settings = extra_settings()
    assert set(settings) == set(kge_algorithms())
    assert settings["feds"] == {"p": 0.4, "sync_interval": 4}
    assert settings["fedlu"]["mu_distill"] == 2.0
    assert settings["fedprox"] == {
        "proximal_mu": 0.1,
        "proximal_reduction": "sum",
    }
    assert settings["fede"] == {}
    assert known_extra_settings() == sorted(
        {k for keys in settings.values() for k in keys}
    )


def test_algorithm_settings_fill_defaults_cast_and_ignore_other_algorithms():
    x = algorithm_settings("feds", {"sync_interval": 2.0, "mu_distill": 1.0})
    assert x == {"p": 0.4, "sync_interval": 2}
    assert type(x["sync_interval"]) is int
    x = algorithm_settings("fedlu", {"distill_wait": 5, "mu_distill": 1})
    assert x["mu_distill"] == 1.0 and type(x["mu_distill"]) is float
    assert x["distill_wait"] == 5 and x["distill_schedule"] == "always"
    with pytest.raises(ValueError, match="'distill_wait' must be an integer"):
        algorithm_settings("fedlu", {"distill_wait": 2.5})
    with pytest.raises(ValueError, match="'p' must be a number.*'high'"):
        algorithm_settings("feds", {"p": "high"})


def test_unknown_keys_name_the_key_and_the_known_ones():
    with pytest.raises(
        ValueError, match=r"'mu_distil' \(known: \[.*'distill_schedule'"
    ):
        check_extra({"mu_distil": 1.0})
    with pytest.raises(ValueError, match="'mu_distil'; fedlu's settings: distill"):
        check_extra({"mu_distil": 1.0}, "fedlu")
    # strict check for one algorithm: another algorithm's key is named as such
    with pytest.raises(
        ValueError, match=r"fede has no setting 'p' \(a setting of feds\)"
    ):
        check_extra({"p": 0.4}, "fede")
    check_extra({"p": 0.4})  # known to some algorithm: accepted
    check_extra({"p": 0.4, "sync_interval": 1}, "feds")


def test_builders_use_the_settings_and_reject_unknown_ones():
    fed = toy_federation()
    strategy, _ = build_kge_federation(
        "feds", fed, KGESettings(dim=4, extra={"p": 0.25, "sync_interval": 1})
    )
    assert strategy.p == 0.25 and strategy.sync_interval == 1
    strategy, clients = build_kge_federation(
        "fedlu", fed, KGESettings(dim=4, extra={"distill_schedule": "gated"})
    )
    assert strategy.distill_schedule == "gated" and strategy.mu_distill == 2.0
    with pytest.raises(ValueError, match="'sync_intervall'"):
        build_kge_federation(
            "feds", fed, KGESettings(dim=4, extra={"sync_intervall": 1})
        )
