r"""Old module paths of moved modules, kept importable.

The package was laid out by family (``federated/kge``, ``federated/rgcn``,
``federated/text``, ``federated/unlearning``) and the non-federated pieces
moved down (``training``, ``eval``, ``data``); the Flower codecs moved up to
``runtime.flower``. A finder installed by
``fedgraph/__init__.py`` maps each old path to its module, so
``import fedgraph.federated.kge.setup`` (or pickles naming such a path)
keep working and give the very same module object as the new path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

#: old module path → new module path
MOVED: dict[str, str] = {
    "fedgraph.federated.fede": "fedgraph.federated.kge.fede",
    "fedgraph.federated.fedec": "fedgraph.federated.kge.fedec",
    "fedgraph.federated.fedlu": "fedgraph.federated.kge.fedlu",
    "fedgraph.federated.feds": "fedgraph.federated.kge.feds",
    "fedgraph.federated.feds_client": "fedgraph.federated.kge.feds_client",
    "fedgraph.federated.kge_client": "fedgraph.federated.kge.client",
    "fedgraph.federated.kge_setup": "fedgraph.federated.kge.setup",
    "fedgraph.federated.sparsify": "fedgraph.federated.kge.sparsify",
    "fedgraph.federated.rgcn_client": "fedgraph.federated.rgcn.client",
    "fedgraph.federated.fedalign": "fedgraph.federated.rgcn.fedalign",
    "fedgraph.federated.ot": "fedgraph.federated.rgcn.ot",
    "fedgraph.federated.lipschitz": "fedgraph.federated.rgcn.lipschitz",
    "fedgraph.federated.fedmkgc": "fedgraph.federated.text.fedmkgc",
    "fedgraph.federated.fedmkgc_client": "fedgraph.federated.text.client",
    "fedgraph.federated.unlearn": "fedgraph.federated.unlearning.unlearn",
    "fedgraph.federated.forget": "fedgraph.federated.unlearning.forget",
    "fedgraph.federated.retrain": "fedgraph.federated.unlearning.retrain",
    "fedgraph.federated.mutual": "fedgraph.training.mutual",
    "fedgraph.federated.distill": "fedgraph.training.distill",
    "fedgraph.federated.interference": "fedgraph.training.interference",
    "fedgraph.federated.feds_metrics": "fedgraph.eval.feds_metrics",
    "fedgraph.federated.rgcn_runner": "fedgraph.runtime.rgcn_runner",
    "fedgraph.federated.fedmkgc_runner": "fedgraph.runtime.fedmkgc_runner",
    "fedgraph.partition.shard": "fedgraph.data.shard",
    "fedgraph.federated.fedep": "fedgraph.federated.kge.fedep",
    "fedgraph.federated.records": "fedgraph.runtime.flower.records",
}

#: old module path → the modules it was split into: the old path is a module
#: holding every public name (``__all__``) of those, in that order.
SPLIT: dict[str, tuple[str, ...]] = {
    "fedgraph.federated.kge.fusion": (
        "fedgraph.models.fusion",
        "fedgraph.training.fusion",
        "fedgraph.runtime.flower.fusion",
        "fedgraph.training.fusion_io",
    ),
}
SPLIT["fedgraph.federated.fusion"] = SPLIT["fedgraph.federated.kge.fusion"]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: Any) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        return None


class _SplitLoader(importlib.abc.Loader):
    def __init__(self, targets: tuple[str, ...]) -> None:
        self.targets = targets

    def create_module(self, spec: Any) -> ModuleType:
        return ModuleType(spec.name, f"Moved to {', '.join(self.targets)}.")

    def exec_module(self, module: ModuleType) -> None:
        names: list[str] = []
        for target in self.targets:
            new = importlib.import_module(target)
            for name in new.__all__:
                setattr(module, name, getattr(new, name))
                names.append(name)
        module.__all__ = names  # type: ignore[attr-defined]


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    r"""Finds the old path of a moved module (:data:`MOVED`) or of a split
    one (:data:`SPLIT`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name in SPLIT:
            return importlib.util.spec_from_loader(name, _SplitLoader(SPLIT[name]))
        new = MOVED.get(name)
        if new is None:
            return None
        return importlib.util.spec_from_loader(name, _AliasLoader(new))


def install() -> None:
    r"""Puts the finder first on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
