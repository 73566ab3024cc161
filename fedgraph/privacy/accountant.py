r"""Privacy accounting of the Gaussian mechanism on client uploads.

Each round a client's upload is released through a Gaussian mechanism with
L2 sensitivity :math:`C` (its clipped update) and noise
:math:`\mathcal{N}(0, \sigma^2 C^2)` per coordinate. Against the server, who
chooses the participants, there is no amplification by subsampling: a
client that uploaded in :math:`k` rounds is :math:`\mu`-GDP with
:math:`\mu = \sqrt{k} / \sigma` (Dong, Roth and Su, "Gaussian Differential
Privacy", JRSS-B 2022, Cor. 3.3), which is *exactly* the composition's
privacy profile:

.. math::
    \delta(\varepsilon) = \Phi\left(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\right)
    - e^{\varepsilon}\, \Phi\left(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\right)

(their Cor. 2.13; for :math:`k = 1` the analytic Gaussian mechanism of
Balle and Wang, ICML 2018). :func:`gaussian_epsilon` inverts it;
:func:`rdp_epsilon` gives Opacus' RDP bound for the same mechanism (never
smaller), when Opacus is installed.
"""

from __future__ import annotations

import math

from scipy.special import log_ndtr


def gaussian_delta(epsilon: float, mu: float) -> float:
    r""":math:`\delta(\varepsilon)` of a :math:`\mu`-GDP mechanism."""
    if mu <= 0:
        return 0.0
    a = float(log_ndtr(-epsilon / mu + mu / 2))
    b = float(epsilon + log_ndtr(-epsilon / mu - mu / 2))
    return max(0.0, math.exp(a) - math.exp(b))


def _mu(noise_multiplier: float, steps: int) -> float:
    if noise_multiplier <= 0:
        raise ValueError(
            f"`noise_multiplier` must be positive (got {noise_multiplier})"
        )
    if steps < 0:
        raise ValueError(f"`steps` must be non-negative (got {steps})")
    return math.sqrt(steps) / noise_multiplier


def gaussian_epsilon(noise_multiplier: float, steps: int, delta: float) -> float:
    r"""The smallest :math:`\varepsilon` with :math:`\delta(\varepsilon) \le
    \delta` after ``steps`` Gaussian releases of noise multiplier
    :math:`\sigma` (bisection to 1e-9 relative)."""
    if not 0 < delta < 1:
        raise ValueError(f"`delta` must lie in (0, 1) (got {delta})")
    mu = _mu(noise_multiplier, steps)
    if steps == 0 or gaussian_delta(0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(hi, mu) > delta:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if gaussian_delta(mid, mu) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * max(hi, 1e-12):
            break
    return hi


def calibrate_noise(epsilon: float, delta: float, steps: int) -> float:
    r"""The noise multiplier :math:`\sigma` for which ``steps`` releases are
    exactly :math:`(\varepsilon, \delta)`-DP (:func:`gaussian_epsilon`)."""
    if epsilon <= 0:
        raise ValueError(f"`epsilon` must be positive (got {epsilon})")
    if not 0 < delta < 1:
        raise ValueError(f"`delta` must lie in (0, 1) (got {delta})")
    if steps < 1:
        raise ValueError(f"`steps` must be positive (got {steps})")
    lo, hi = 1e-6, 1.0  # mu: delta(eps; mu) increases with mu
    while gaussian_delta(epsilon, hi) < delta:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if gaussian_delta(epsilon, mid) < delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return math.sqrt(steps) / lo


#: the RDP orders searched: Opacus' defaults (1.1 … 63) widened at both ends,
#: so a large :math:`\varepsilon` (optimal order near 1) or a small one (a
#: high order) is not capped by the grid.
RDP_ORDERS = (
    [1 + x / 100 for x in range(1, 10)]
    + [1 + x / 10 for x in range(1, 100)]
    + list(range(12, 64))
    + [2**k for k in range(6, 13)]
)


def rdp_epsilon(noise_multiplier: float, steps: int, delta: float) -> float | None:
    r"""Opacus' RDP accountant's :math:`\varepsilon` for the same releases
    (sample rate 1), or :obj:`None` when Opacus is not installed."""
    try:
        from opacus.accountants import RDPAccountant
    except ImportError:  # pragma: no cover - optional dependency
        return None
    if steps == 0:
        return 0.0
    acc = RDPAccountant()
    acc.history = [(float(noise_multiplier), 1.0, int(steps))]
    return float(acc.get_epsilon(delta=delta, alphas=RDP_ORDERS))


__all__ = ["gaussian_delta", "gaussian_epsilon", "calibrate_noise", "rdp_epsilon"]
