r"""Malformed data files: a correct parse or a one-line error naming the file
and line, never a wrong number of entities or triples.

Each example writes a small valid file, applies one mutation (a byte-order
mark, whitespace around a field, a tab turned into a space, a column added
or dropped, an empty field, a byte that is not UTF-8, a NUL, a blank line, a
non-integer or repeated id, a repeated name) and checks the outcome the
reading rules of ``fedgraph/data/io.py`` promise for it.
"""

from __future__ import annotations

import string
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedgraph.data import read_triple_files
from fedgraph.data.io import DataFormatError, DataFormatWarning
from fedgraph.data.openke import read_openke_ids
from fedgraph.partition import PartitionFormatError
from fedgraph.partition.io import read_int_table

FAST = settings(max_examples=50, deadline=None, derandomize=True)
names = st.text(
    alphabet=string.ascii_letters + string.digits + "/_.:é", min_size=1, max_size=6
)
#: whitespace that ``str.strip`` removes and a tab-separated field may carry
PADS = st.sampled_from([" ", "  ", "\xa0", "\u3000", "\x0b", "\x0c"])
#: mutations that must parse to the clean result (a repair, warned or not)
REPAIRS = ("none", "crlf", "bom", "pad")
#: mutations that must fail on the mutated line
BREAKS = ("tab_to_space", "extra_column", "missing_column", "empty_field",
          "blank_field", "bad_byte", "nul", "blank_line")  # fmt: skip
#: an OpenKE dictionary's mutations: the repairs, and breaks naming a line
ID_MAP_MUTATIONS = REPAIRS + ("bad_id", "float_id", "empty_field", "repeat_id",
                              "repeat_name", "bad_byte", "count")  # fmt: skip
#: a partition file's (``h r t`` integers, whitespace-separated) mutations
TABLE_MUTATIONS = ("none", "bom", "bad_id", "extra_column", "bad_byte",
                   "blank_line", "nul")  # fmt: skip


def read(fn, *args):
    r"""``fn(*args)`` with the warnings it gave: ``(result, [warnings])``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        return fn(*args), caught


def assert_one_line_error(exc, path, line):
    message = str(exc)
    assert "\n" not in message
    assert message.startswith(f"{path}, line {line}:"), message


def mutate(lines: list[str], how: str, k: int, data) -> tuple[bytes, int]:
    r"""The file's bytes after mutation ``how`` at 0-based line ``k``, and the
    1-based line an error must name."""
    lines = list(lines)
    cols = lines[k].split("\t")
    c = data.draw(st.integers(0, len(cols) - 1), label="column")
    if how == "pad":
        pad = data.draw(PADS, label="pad")
        cols[c] = data.draw(st.sampled_from([pad + cols[c], cols[c] + pad]))
    elif how == "tab_to_space" and len(cols) > 1:
        cols = [" ".join(cols[:2]), *cols[2:]]
    elif how == "extra_column":
        cols.append("x")
    elif how == "missing_column":
        del cols[c]
    elif how in ("empty_field", "blank_field"):
        cols[c] = "" if how == "empty_field" else data.draw(PADS)
    elif how == "nul":
        cols[c] += "\x00"
    lines[k] = "\t".join(cols)
    if how == "blank_line":
        lines.insert(k, "")
    eol = "\r\n" if how == "crlf" else "\n"
    raw = "".join(line + eol for line in lines).encode()
    if how == "bom":
        raw = b"\xef\xbb\xbf" + raw
    if how == "bad_byte":
        at = len("".join(line + eol for line in lines[:k]).encode())
        raw = raw[:at] + b"\xff" + raw[at:]
    return raw, k + 1


@FAST
@given(
    rows=st.lists(st.tuples(names, names, names), min_size=1, max_size=12),
    how=st.sampled_from(REPAIRS + BREAKS),
    data=st.data(),
)
def test_triple_file_parses_right_or_fails_on_its_line(
    tmp_path_factory, rows, how, data
):
    k = data.draw(st.integers(0, len(rows) - 1), label="line")
    raw, line = mutate(["\t".join(r) for r in rows], how, k, data)
    path = tmp_path_factory.mktemp("tri") / "train.txt"
    path.write_bytes(raw)
    if how in BREAKS:
        with pytest.raises(DataFormatError) as exc:
            read(read_triple_files, {"train": path})
        assert_one_line_error(exc.value, path, line)
        return
    kg, caught = read(read_triple_files, {"train": path})
    entities = list(dict.fromkeys(n for h, _, t in rows for n in (h, t)))
    relations = list(dict.fromkeys(r for _, r, _ in rows))
    assert kg.entity_names == entities and kg.num_entities == len(entities)
    assert kg.relation_names == relations
    e = {n: i for i, n in enumerate(entities)}
    r = {n: i for i, n in enumerate(relations)}
    assert kg.triples("train").tolist() == [[e[h], r[p], e[t]] for h, p, t in rows]
    repaired = [w for w in caught if issubclass(w.category, DataFormatWarning)]
    assert len(repaired) == (how in ("bom", "pad"))
    assert all(str(path) in str(w.message) for w in repaired)


@FAST
@given(
    entries=st.lists(names, min_size=2, max_size=10, unique=True).flatmap(
        lambda ns: st.tuples(st.just(ns), st.permutations(range(len(ns))))
    ),
    how=st.sampled_from(ID_MAP_MUTATIONS),
    data=st.data(),
)
def test_id_map_parses_right_or_fails_on_its_line(tmp_path_factory, entries, how, data):
    ns, ids = entries
    k = data.draw(st.integers(0, len(ns) - 1), label="line")
    j = data.draw(st.integers(0, len(ns) - 1).filter(lambda v: v != k), label="other")
    body = [f"{n}\t{i}" for n, i in zip(ns, ids, strict=True)]
    if how in ("bad_id", "float_id"):
        body[k] = f"{ns[k]}\t{'x' if how == 'bad_id' else ids[k] + 0.5}"
    elif how == "repeat_id":
        body[k] = f"{ns[k]}\t{ids[j]}"
    elif how == "repeat_name":
        body[k] = f"{ns[j]}\t{ids[k]}"
    mutation = how if how in REPAIRS + BREAKS else "none"
    count = len(ns) + (how == "count")
    raw, _ = mutate([str(count), *body], mutation, k + 1, data)
    path = tmp_path_factory.mktemp("ids") / "entity2id.txt"
    path.write_bytes(raw)
    later = max(j, k) + 2  # a repeat is reported on its second line
    expected_line = {"count": 1, "repeat_id": later, "repeat_name": later}
    if how in REPAIRS:
        got, _ = read(read_openke_ids, path)
        assert got == [ns[ids.index(i)] for i in range(len(ns))]
        return
    with pytest.raises(DataFormatError) as exc:
        read(read_openke_ids, path)
    assert_one_line_error(exc.value, path, expected_line.get(how, k + 2))
    if how in ("repeat_id", "repeat_name"):  # both lines are named
        assert f"also on line {min(j, k) + 2}" in str(exc.value)


@FAST
@given(
    table=st.lists(
        st.lists(st.integers(0, 10**6), min_size=3, max_size=3), min_size=1, max_size=10
    ),
    how=st.sampled_from(TABLE_MUTATIONS),
    data=st.data(),
)
def test_partition_table_parses_right_or_fails_on_its_line(
    tmp_path_factory, table, how, data
):
    k = data.draw(st.integers(0, len(table) - 1), label="line")
    lines = ["\t".join(map(str, row)) for row in table]
    if how == "bad_id":
        lines[k] = lines[k].replace(str(table[k][0]), "1e3x", 1)
    raw, line = mutate(lines, "none" if how == "bad_id" else how, k, data)
    path = tmp_path_factory.mktemp("part") / "train.txt"
    path.write_bytes(raw)
    if how in ("none", "bom"):
        got, _ = read(read_int_table, path, 3)
        assert got.tolist() == table
        return
    with pytest.raises(PartitionFormatError) as exc:
        read(read_int_table, path, 3)
    assert_one_line_error(exc.value, path, line)
