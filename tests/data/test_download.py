import functools
import hashlib
import http.server
import io
import tarfile
import threading

import pytest

from fedgraph.data import DatasetNotFoundError, RemoteFile, load_dataset
from fedgraph.data.download import ChecksumError, download_url, extract_archive
from fedgraph.data.io import DataFormatError
from fedgraph.data.triple_dataset import TripleFolderDataset

FILES = {
    "train.txt": "a\tr\tb\nb\tr\tc\n",
    "valid.txt": "c\tr\ta\n",
    "test.txt": "a\tr\tc\n",
}


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def source(tmp_path):
    src = tmp_path / "published"
    src.mkdir()
    for name, text in FILES.items():
        (src / name).write_text(text)
    return src


def make_dataset(base_url, checksums=None):
    checksums = checksums or {n: sha(t) for n, t in FILES.items()}

    class Tiny(TripleFolderDataset):
        name = "tiny"
        folder = "tiny"
        remote_files = tuple(
            RemoteFile(n, f"{base_url}/{n}", checksums[n]) for n in FILES
        )

    return Tiny


def test_download_from_file_url(source, tmp_path):
    Tiny = make_dataset(source.as_uri())
    kg = Tiny(root=tmp_path / "root").get()
    assert kg.stats()["triples"] == {"train": 2, "valid": 1, "test": 1}
    assert sorted(p.name for p in (tmp_path / "root" / "tiny").iterdir()) == sorted(
        FILES
    )


@pytest.fixture
def http_base(source):
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(source)
    )
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_from_local_http_server(http_base, tmp_path):
    Tiny = make_dataset(http_base)
    kg = Tiny(root=tmp_path / "root").get()
    assert kg.num_entities == 3


def test_present_files_skip_download(source, tmp_path):
    root = tmp_path / "root"
    (root / "tiny").mkdir(parents=True)
    for name, text in FILES.items():
        (root / "tiny" / name).write_text(text)
    Tiny = make_dataset("http://127.0.0.1:1/nowhere")  # would fail if used
    assert Tiny(root=root).get().num_entities == 3


def test_checksum_mismatch_leaves_no_file(source, tmp_path):
    bad = {n: sha(t) for n, t in FILES.items()} | {"valid.txt": "0" * 64}
    Tiny = make_dataset(source.as_uri(), bad)
    with pytest.raises(DatasetNotFoundError, match="Checksum mismatch"):
        Tiny(root=tmp_path / "root")
    left = {p.name for p in (tmp_path / "root" / "tiny").iterdir()}
    assert "valid.txt" not in left and not any(n.startswith(".") for n in left)


def test_offline_error_says_where_and_how(tmp_path):
    Tiny = make_dataset("http://127.0.0.1:1/offline")  # connection refused
    with pytest.raises(DatasetNotFoundError) as err:
        Tiny(root=tmp_path / "root")
    msg = str(err.value)
    assert str(tmp_path / "root" / "tiny") in msg
    assert "FEDGRAPH_DATA" in msg and "failed (" in msg


def test_registered_dataset_without_download(tmp_path):
    with pytest.raises(
        DatasetNotFoundError,
        match=r"Dataset 'nations' not found: looked in .*nations.*downloads are disabled.*FEDGRAPH_DATA",
    ):
        load_dataset("nations", root=tmp_path, download=False)


def test_download_url_checksum_error(source, tmp_path):
    with pytest.raises(ChecksumError):
        download_url(
            (source / "train.txt").as_uri(), tmp_path / "x.txt", sha256="ab" * 32
        )
    assert list(tmp_path.glob("*x.txt*")) == []
    out = download_url(
        (source / "train.txt").as_uri(),
        tmp_path / "x.txt",
        sha256=sha(FILES["train.txt"]),
    )
    assert out.read_text() == FILES["train.txt"]


def test_download_without_pinned_checksum_warns(source, tmp_path):
    digest = sha(FILES["train.txt"])
    with pytest.warns(UserWarning, match=rf"\(sha256 {digest}\) is not verified"):
        out = download_url((source / "train.txt").as_uri(), tmp_path / "y.txt")
    assert out.read_text() == FILES["train.txt"]


def _tgz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_extract_archive_and_truncated_archive(tmp_path):
    data = _tgz({"d/train.txt": "a\tr\tb\n" * 2000})
    good = tmp_path / "good.tgz"
    good.write_bytes(data)
    extract_archive(good, tmp_path / "out")
    assert (tmp_path / "out" / "d" / "train.txt").read_text().count("\n") == 2000
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        DataFormatError, match=r"bad\.tgz: truncated or corrupt archive"
    ):
        extract_archive(bad, tmp_path / "out2")
    assert list((tmp_path / "out2").iterdir()) == []  # nothing half-extracted
