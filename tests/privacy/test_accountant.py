r"""The Gaussian-mechanism accountant against hand values and Opacus."""

import math

import pytest
from scipy.stats import norm

from fedgraph.privacy.accountant import (
    calibrate_noise,
    gaussian_delta,
    gaussian_epsilon,
    rdp_epsilon,
)


def test_delta_matches_the_gdp_formula_by_hand():
    # mu = 1, eps = 1: Phi(-1/2) - e * Phi(-3/2)
    want = norm.cdf(-0.5) - math.e * norm.cdf(-1.5)
    assert gaussian_delta(1.0, 1.0) == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(0.12693674, abs=1e-8)


def test_analytic_gaussian_sigma_for_eps_1_delta_1e5():
    # Balle & Wang (ICML 2018): the analytic Gaussian mechanism needs
    # sigma ~ 3.73 at (1, 1e-5), below the classical sqrt(2 ln(1.25/delta)) = 4.84
    sigma = calibrate_noise(1.0, 1e-5, 1)
    assert sigma == pytest.approx(3.7306, abs=1e-3)
    assert sigma < math.sqrt(2 * math.log(1.25 / 1e-5))


@pytest.mark.parametrize("eps", [1.0, 4.0, 16.0])
@pytest.mark.parametrize("steps", [1, 20, 200])
def test_calibration_round_trips_and_composes(eps, steps):
    sigma = calibrate_noise(eps, 1e-5, steps)
    assert gaussian_epsilon(sigma, steps, 1e-5) == pytest.approx(eps, rel=1e-6)
    # k releases at sigma*sqrt(k) are one release at sigma (mu-GDP composition)
    assert sigma == pytest.approx(
        calibrate_noise(eps, 1e-5, 1) * math.sqrt(steps), rel=1e-6
    )
    # fewer uploads, less privacy spent
    assert gaussian_epsilon(sigma, max(steps // 2, 1), 1e-5) <= eps + 1e-9


def test_rdp_bound_is_never_tighter_than_the_exact_profile():
    for sigma, steps in [(1.0, 1), (2.0, 10), (5.0, 100)]:
        exact = gaussian_epsilon(sigma, steps, 1e-5)
        rdp = rdp_epsilon(sigma, steps, 1e-5)
        assert rdp is not None and rdp >= exact
        assert rdp < 1.3 * exact  # and close to it


def test_bad_arguments():
    with pytest.raises(ValueError, match="delta"):
        gaussian_epsilon(1.0, 1, 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        calibrate_noise(0.0, 1e-5, 1)
    assert gaussian_epsilon(1.0, 0, 1e-5) == 0.0
