import string

from hypothesis import given, settings
from hypothesis import strategies as st

from fedgraph.data import read_triple_files

names = st.text(
    alphabet=string.ascii_letters + string.digits + "/_.:é", min_size=1, max_size=8
)
triple = st.tuples(names, names, names)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["train", "valid", "test"]),
        st.lists(triple, min_size=1, max_size=20),
        min_size=1,
    ),
    st.booleans(),
)
def test_round_trip_names(tmp_path_factory, splits, crlf):
    d = tmp_path_factory.mktemp("rt")
    eol = "\r\n" if crlf else "\n"
    files = {}
    for split, rows in splits.items():
        files[split] = d / f"{split}.txt"
        files[split].write_bytes(
            eol.join("\t".join(r) for r in rows).encode() + eol.encode()
        )
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random rows may repeat
        kg = read_triple_files(files)
    for split, rows in splits.items():
        back = [
            (kg.entity_names[h], kg.relation_names[r], kg.entity_names[t])
            for h, r, t in kg.triples(split).tolist()
        ]
        assert back == rows
    # First-seen order: ids are increasing by first appearance.
    order = [s for s in ("train", "valid", "test") if s in splits]
    stream = [n for s in order for h, _, t in splits[s] for n in (h, t)]
    assert kg.entity_names == list(dict.fromkeys(stream))
