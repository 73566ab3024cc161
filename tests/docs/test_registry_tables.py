r"""The registry tables of the hand-written pages are generated from the
registries at every documentation build (:func:`write_generated_pages`):
the pages include them and hold no copy of their own."""

from __future__ import annotations

import re
from pathlib import Path

from fedgraph.cli.reference import TABLES, write_generated_pages

DOCS = Path(__file__).resolve().parents[2] / "docs"
INCLUDE = re.compile(r"```\{include\} reference/tables/([\w-]+)\.inc\n```")


def _included() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for page in sorted(DOCS.rglob("*.md")):
        for name in INCLUDE.findall(page.read_text()):
            found.setdefault(name, []).append(page.name)
    return found


def test_every_registry_table_is_included_by_a_page():
    assert _included() == {
        "kge-models": ["federated.md"],
        "losses": ["federated.md"],
        "partitioners": ["partition.md"],
        "samplers": ["federated.md"],
        "regimes": ["federated.md"],
        "rgcn-algorithms": ["rdf.md"],
    }
    assert set(_included()) == set(TABLES)


def test_no_page_keeps_its_own_copy_of_a_registry_table():
    # the class column of a generated row, e.g. "| `relation` (`random`) |
    # `RandomRelationPartitioner` |", is nowhere in the hand-written pages
    from fedgraph.models.kge import models
    from fedgraph.partition import partitioners

    rows = re.compile(r"^\|[^\n]*\| `(\w+)` \|", re.M)
    classes = {c.__name__ for c in (*models, *partitioners)}
    for page in [DOCS / "partition.md", DOCS / "federated.md", DOCS / "rdf.md"]:
        assert not classes & set(rows.findall(page.read_text())), page.name


def test_the_build_writes_each_table_from_its_registry(tmp_path):
    from fedgraph.federated.algorithms import algorithms
    from fedgraph.models.kge import models
    from fedgraph.models.losses import losses
    from fedgraph.models.samplers import samplers
    from fedgraph.partition import partitioners
    from fedgraph.training.regimes import regimes

    written = write_generated_pages(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        "cli.md",
        "registries.md",
        "tables/partitioners.inc",
        "tables/kge-models.inc",
        "tables/rgcn-algorithms.inc",
        "tables/losses.inc",
        "tables/samplers.inc",
        "tables/regimes.inc",
    ]
    tables = {
        name: (tmp_path / "tables" / f"{name}.inc").read_text() for name in TABLES
    }
    names = {
        "partitioners": partitioners.names(),
        "kge-models": models.names(),
        "rgcn-algorithms": list(algorithms("rgcn")),
        "losses": losses.names(),
        "samplers": samplers.names(),
        "regimes": regimes.names(),
    }
    for name, text in tables.items():
        rows = [line for line in text.splitlines() if line.startswith("| `")]
        assert [r.split("`")[1] for r in rows] == names[name], name
    assert (
        "| `transe` | `TransE` | `epsilon=2.0`, `p_norm=1.0` |" in tables["kge-models"]
    )
    assert (
        "| `dirichlet` | `DirichletRelationPartitioner` | `alpha=0.5`, "
        "`min_triples=10`, `max_tries=10`, `ratios=(0.8, 0.1, 0.1)`, `splits=None` |"
    ) in tables["partitioners"]
    assert (
        "| `fedalignl` | `mu=10.0`, `lam=10.0`, `one_sided=False`, `clip=1.0` |"
        in (tables["rgcn-algorithms"])
    )
    # the reference page's tables are the same
    registries = (tmp_path / "registries.md").read_text()
    assert tables["kge-models"].strip() in registries
    assert tables["partitioners"].strip() in registries
    assert tables["losses"].strip() in registries
    assert tables["regimes"].strip() in registries
    assert tables["samplers"].strip() in registries
    assert (
        "| `bernoulli` | `BernoulliNegativeSampler` | `filtered=False`, "
        "`max_redraws=10` |" in tables["samplers"]
    )
