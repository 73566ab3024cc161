r"""The process-lived ``ClientApp`` of every shipped Flower App resolves to
the fedgraph app it forwards to, in the worker and in the executor alike."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import tomllib

pytest.importorskip("flwr")

from fedgraph.runtime.flower.node import (  # noqa: E402
    WorkerClientApp,
    app_reference,
    load_target,
)

ROOT = Path(__file__).resolve().parents[2]
APPS = sorted(ROOT.glob("examples/*/pyproject.toml"))


def _component(pyproject: Path) -> object:
    ref = tomllib.loads(pyproject.read_text())["tool"]["flwr"]["app"]["components"]
    module, _, attr = ref["clientapp"].partition(":")
    return getattr(importlib.import_module(module), attr)


def test_every_example_app_is_found():
    assert {p.parent.name for p in APPS} >= {
        "flower_app", "flower_private_app", "flower_rgcn_app", "flower_text_app",
    }  # fmt: skip


@pytest.mark.parametrize("pyproject", APPS, ids=lambda p: p.parent.name)
def test_each_example_apps_worker_target_loads_its_fedgraph_app(pyproject):
    app = _component(pyproject)
    assert isinstance(app, WorkerClientApp)
    target = load_target(app.target)
    assert not isinstance(target, WorkerClientApp)
    module, _, attr = app_reference(app.target).partition(":")
    assert target is getattr(sys.modules[module], attr)


def test_a_module_reference_is_its_own_target():
    from fedgraph.privacy.flower import client_app

    assert app_reference("fedgraph.privacy.flower:client_app") == (
        "fedgraph.privacy.flower:client_app"
    )
    assert load_target("fedgraph.privacy.flower:client_app") is client_app


def test_the_executor_runs_the_private_apps_fedgraph_app(monkeypatch):
    # the private example's ClientApp names its app by module reference, not
    # by a name of TARGETS; the executor ran every such node into a KeyError
    import flwr.cli.install
    import flwr.clientapp.utils

    from fedgraph.privacy.flower import client_app, node_app
    from fedgraph.runtime.flower.executor import Executor

    monkeypatch.setattr(flwr.cli.install, "install_from_fab", lambda *a, **k: None)
    monkeypatch.setattr(
        flwr.clientapp.utils,
        "get_load_client_app_fn",
        lambda **kwargs: lambda *args: node_app,
    )
    executor = Executor("127.0.0.1:1", insecure=True, pull_backoff=None)
    run = SimpleNamespace(fab_id="fedgraph/private", fab_version="1.0.0")
    fab = SimpleNamespace(hash_str="abc", content=b"")
    assert executor._app(run, fab) is client_app
