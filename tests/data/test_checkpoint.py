import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from fedgraph.data.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

LEGACY = Path(__file__).resolve().parents[1] / "runtime" / "checkpoint_f091737"


def test_round_trip_with_tensors_plain_data_and_numpy_rng_state(tmp_path):
    obj = {
        "w": torch.arange(3.0),
        "round": 2,
        "names": ["a"],
        "rng": np.random.get_state(),
    }
    save_checkpoint(obj, tmp_path / "sub" / "c.pt")
    back = load_checkpoint(tmp_path / "sub" / "c.pt", keys=("w", "round"))
    assert torch.equal(back["w"], obj["w"]) and back["round"] == 2
    assert np.array_equal(back["rng"][1], obj["rng"][1])
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["c.pt"]  # no temp left


@pytest.mark.parametrize("name", ["last.pt", "best.pt"])
def test_checkpoints_of_earlier_versions_load_with_weights_only(name):
    ckpt = load_checkpoint(LEGACY / name)
    assert "clients" in (ckpt["models"] if name == "last.pt" else ckpt)


class Payload:
    def __reduce__(self):  # what a hostile file would run on unpickling
        return (print, ("pwned",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_damaged_or_hostile_files_raise_one_error_naming_them(tmp_path, capsys):
    path = tmp_path / "c.pt"
    path.write_bytes(b"")
    with pytest.raises(CheckpointError, match=f"checkpoint {path} is empty"):
        load_checkpoint(path)
    save_checkpoint({"w": torch.ones(100)}, path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        load_checkpoint(path, hint="fall back to last.prev.pt")
    path.write_bytes(pickle.dumps({"x": 1}))
    with pytest.raises(CheckpointError, match=str(path)):
        load_checkpoint(path)
    torch.save({"x": Payload()}, path)
    with pytest.raises(CheckpointError, match="Python objects other than tensors"):
        load_checkpoint(path)
    assert "pwned" not in capsys.readouterr().out
    save_checkpoint({"w": torch.ones(1)}, path)
    with pytest.raises(CheckpointError, match=r"lacks \['round'\]"):
        load_checkpoint(path, keys=("w", "round"))
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "none.pt")
