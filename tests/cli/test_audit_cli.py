r"""``fedgraph train`` privacy options and ``fedgraph audit`` end to end."""

import json
import random

import pytest

from fedgraph.cli.main import main


def _write_federation(root, n_clients=3, seed=0):
    rng = random.Random(seed)
    for c in range(n_clients):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


def _train(tmp_path, name, *extra):
    data = tmp_path / "fed"
    if not data.exists():
        _write_federation(data)
    out = tmp_path / name
    argv = [
        "train",
        str(data),
        "--algorithm",
        "fede",
        "--out",
        str(out),
        "--rounds",
        "2",
        "--local-epochs",
        "1",
        "--dim",
        "8",
        "--batch-size",
        "32",
        "--num-negatives",
        "4",
        "--eval-every",
        "1",
        "--lr",
        "0.01",
        "--quiet",
        *extra,
    ]
    return main(argv), out


def test_dp_run_reports_epsilon_and_audits(tmp_path, capsys):
    rc, out = _train(tmp_path, "dp", "--record-uploads", "last", "--dp-epsilon", "4")
    assert rc == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["privacy"]["dp_epsilon"] == 4.0
    for c in ("0", "1", "2"):
        assert doc["privacy"]["dp"][c]["epsilon"] == pytest.approx(4.0, rel=1e-6)
        assert doc["privacy"]["dp"][c]["delta"] == 1e-5
    assert sorted(p.name for p in (out / "uploads").iterdir()) == [
        "registration.pt",
        "round-0002.pt",
    ]
    for attack in ("triple-inference", "membership"):
        assert main(["audit", str(out), "--attack", attack]) == 0
        rep = json.loads((out / f"audit-{attack}.json").read_text())
        assert set(rep["clients"]) == {"0", "1", "2"} and rep["round"] == 2
        assert rep["baseline"]["auc"] == 0.5
    # the ids travel in the clear under DP: membership is read off the uploads
    assert rep["mean"]["precision"] == 1.0 and rep["mean"]["recall"] == 1.0


def test_private_alignment_hides_membership(tmp_path):
    rc, out = _train(tmp_path, "al", "--record-uploads", "all", "--private-alignment")
    assert rc == 0 and (out / "alignment-secret.key").is_file()
    assert main(["audit", str(out), "--attack", "membership", "--round", "1"]) == 0
    rep = json.loads((out / "audit-membership.json").read_text())
    assert all("note" in r for r in rep["clients"].values())
    assert rep["mean"]["auc"] == 0.5


def test_user_errors_exit_2(tmp_path, capsys):
    rc, plain = _train(tmp_path, "plain")
    assert rc == 0
    assert main(["audit", str(plain), "--attack", "membership"]) == 2
    assert "--record-uploads" in capsys.readouterr().err
    assert (
        main(["audit", str(plain), "--attack", "membership", "--known-fraction", "1.5"])
        == 2
    )
    assert main(["audit", str(tmp_path / "nope"), "--attack", "membership"]) == 2
    rc, out = _train(tmp_path, "both", "--secagg", "--private-alignment")
    assert rc == 2 and not out.exists()
    assert "either" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--dp-clip", "2"], "`--dp-clip` without `--dp-epsilon`"),
        (["--dp-delta", "1e-6"], "`--dp-delta` without `--dp-epsilon`"),
        (["--secagg-neighbours", "2"], "`--secagg-neighbours` without `--secagg`"),
    ],
)
def test_an_option_that_would_go_unused_exits_2(tmp_path, capsys, extra, named):
    rc, out = _train(tmp_path, "unused", *extra)
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert (
        named in err and "has no effect" in err and len(err.strip().splitlines()) == 1
    )


def test_dp_run_resumes_with_its_privacy_spent(tmp_path):
    rc, out = _train(
        tmp_path,
        "dpr",
        "--record-uploads",
        "last",
        "--dp-epsilon",
        "2",
        "--stop-after",
        "1",
    )
    assert rc == 0 and not (out / "results.json").exists()
    rc, _ = _train(
        tmp_path, "dpr", "--record-uploads", "last", "--dp-epsilon", "2", "--resume"
    )
    assert rc == 0
    doc = json.loads((out / "results.json").read_text())
    for c in ("0", "1", "2"):  # 2 uploads over the two calls: the budget, spent
        assert doc["privacy"]["dp"][c]["uploads"] == 2
        assert doc["privacy"]["dp"][c]["epsilon"] == pytest.approx(2.0, rel=1e-6)
    assert (out / "uploads" / "round-0002.pt").is_file()


def test_a_private_run_resumes_only_as_the_same_private_run(tmp_path, capsys):
    rc, out = _train(tmp_path, "dpx", "--dp-epsilon", "2", "--stop-after", "1")
    assert rc == 0
    rc, _ = _train(tmp_path, "dpx", "--resume")  # DP flags dropped
    assert rc == 2 and "privacy" in capsys.readouterr().err
    assert not (out / "results.json").exists()


def test_cli_choices_mirror_the_privacy_registries():
    from fedgraph.cli import choices
    from fedgraph.privacy.attacks import ATTACKS
    from fedgraph.privacy.record import KEEP

    assert choices.ATTACKS == ATTACKS
    assert choices.RECORD_KEEP == KEEP


def test_fedr_membership_audit_covers_the_relations_it_uploads(tmp_path):
    # FedR sends no entity row, but its relation ids leave every client: in
    # the clear they give away exactly which relations each client holds
    fedr = ("--algorithm", "fedr", "--rounds", "1", "--record-uploads", "last")
    rc, out = _train(tmp_path, "fedr", *fedr)
    assert rc == 0
    assert main(["audit", str(out), "--attack", "membership"]) == 0
    rep = json.loads((out / "audit-membership.json").read_text())
    assert rep["mean"]["auc"] == 0.5  # no entity information
    relations = rep["relations"]
    assert set(relations["clients"]) == {"0", "1", "2"}
    for c, r in relations["clients"].items():  # client c holds r{c}_0..r{c}_2
        assert (r["relations"], r["vocabulary"]) == (3, 9), c
        assert (r["precision"], r["recall"], r["auc"]) == (1.0, 1.0, 1.0)
    assert relations["baseline"]["f1"] == pytest.approx(1 / 3)
    # under private alignment the server holds tokens: nothing about relations
    rc, out = _train(tmp_path, "fedr-al", *fedr, "--private-alignment")
    assert rc == 0
    assert main(["audit", str(out), "--attack", "membership"]) == 0
    rep = json.loads((out / "audit-membership.json").read_text())
    notes = {r["note"] for r in rep["relations"]["clients"].values()}
    assert notes == {"the server cannot map what it holds to relations"}
    assert rep["relations"]["mean"]["auc"] == 0.5
