import json

import pytest
import torch

from fedgraph.data.io import atomic_torch_save, atomic_write_json


def test_atomic_write_json_replaces_whole_or_not_at_all(tmp_path):
    path = tmp_path / "sub" / "doc.json"
    atomic_write_json(path, {"a": 1})  # parents are created
    assert path.read_text() == '{\n "a": 1\n}\n'
    with pytest.raises(TypeError):
        atomic_write_json(path, {"a": object()})  # not JSON: nothing written
    assert json.loads(path.read_text()) == {"a": 1}
    atomic_write_json(path, {"x": torch.tensor(0.5).item()}, indent=2)
    assert path.read_text() == '{\n  "x": 0.5\n}\n'
    atomic_write_json(path, {"b": 1, "a": 2}, indent=None, sort_keys=True)
    assert path.read_text() == '{"a": 2, "b": 1}\n'
    atomic_write_json(path, {"y": 2.0}, default=float)
    assert sorted(p.name for p in path.parent.iterdir()) == ["doc.json"]


def test_atomic_torch_save_leaves_no_temporary_file_on_failure(tmp_path):
    path = tmp_path / "state.pt"
    atomic_torch_save({"w": torch.ones(2)}, path)

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        atomic_torch_save({"w": Unpicklable()}, path)
    assert torch.equal(torch.load(path)["w"], torch.ones(2))
    assert [p.name for p in tmp_path.iterdir()] == ["state.pt"]
