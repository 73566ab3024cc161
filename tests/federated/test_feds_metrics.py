import pytest

from fedgraph.eval.feds_metrics import cumulative_params, feds_metrics


def _run(curve, per_round, best, test_mrr):
    return {
        "history": [{"round": r, "valid": {"mrr": m}} for r, m in curve],
        "comm_per_round": {
            str(r): {"params_up": p, "params_down": p} for r, p in per_round.items()
        },
        "best_round": best,
        "weighted": {"mrr": test_mrr},
    }


def test_cumulative_params():
    assert cumulative_params(
        {
            "0": {"params_up": 0},
            "1": {"params_up": 3, "params_down": 2},
            "2": {"params_up": 1},
        }
    ) == {0: 0, 1: 5, 2: 6}


def test_feds_metrics_hand_case():
    # FedEP: 10 params/round each way; best valid 0.50 at round 4
    base = _run(
        [(2, 0.40), (4, 0.50), (6, 0.49)], {r: 10 for r in range(1, 7)}, 4, 0.48
    )
    # FedS: 4 params/round each way; reaches 0.495 (99%) at round 6, 0.49 (98%) at round 4
    feds = _run(
        [(2, 0.30), (4, 0.491), (6, 0.497), (8, 0.49)],
        {r: 4 for r in range(1, 9)},
        6,
        0.486,
    )
    m = feds_metrics(feds, base)
    assert m["p@cg"] == pytest.approx((6 * 8) / (4 * 20))
    assert m["p@99"] == pytest.approx((6 * 8) / (4 * 20))  # both at their round 6 / 4
    assert m["p@98"] == pytest.approx((4 * 8) / (4 * 20))
    assert m["p@99_rounds"] == {"method": 6, "baseline": 4}
    assert m["mrr@cg_vs_baseline"] == pytest.approx(0.486 / 0.48)
    slow = _run([(2, 0.1)], {1: 1, 2: 1}, 2, 0.1)
    assert feds_metrics(slow, base)["p@99"] is None
