r"""Shared fixtures.

Real-data tests are marked ``@pytest.mark.dataset`` and read the benchmark
files through ``FEDGRAPH_DATA`` (default: ``../shared/datasets`` beside the
checkout). Outside CI a missing data root skips them with a reason; with
``CI`` set it fails them, so CI cannot silently test nothing.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "datasets"


def _load_script(relpath: str) -> ModuleType:
    path = REPO / relpath
    if (
        str(path.parent) not in sys.path
    ):  # as `python PATH` would (benchmarks/harness.py)
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_script():
    r"""``load_script("examples/x.py")``: the repository script as a module
    (examples and benchmarks are scripts, not part of the package)."""
    return _load_script


@pytest.fixture(autouse=True)
def _seed_and_threads():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    yield


@pytest.fixture
def one_thread():
    r"""One intra-op thread for the test (tiny tensors: faster, and far faster
    on a busy machine); modules opt in with
    ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def fresh_compile():
    r"""torch.compile's state as in a new process, for tests that compare this
    process's numbers with another process's: earlier tests' graphs count
    towards dynamo's recompile limit, past which the compiled kernels run
    eagerly and round differently (the code itself comes from the disk cache,
    so recompiling costs little)."""
    import torch._dynamo

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # Processed caches of tests never touch the user's cache.
    monkeypatch.setenv("FEDGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    yield


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = Path(os.environ.get("FEDGRAPH_DATA") or DEFAULT_DATA)
    if not root.is_dir():
        msg = (
            f"benchmark data root {root} not found: set FEDGRAPH_DATA to a copy "
            "of shared/datasets"
        )
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    # absolute: a test may change folder (the tutorials run in an empty one)
    return root.resolve()


@pytest.fixture(autouse=True)
def _data_env(request, monkeypatch):
    # Tests marked `dataset` see FEDGRAPH_DATA pointing at the real data root.
    if request.node.get_closest_marker("dataset") is not None:
        root = request.getfixturevalue("data_root")
        monkeypatch.setenv("FEDGRAPH_DATA", str(root))
    yield
