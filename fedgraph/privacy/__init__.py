r"""What federation leaks, and defences against it.

* :mod:`~fedgraph.privacy.attacks`: triple inference and entity membership
  by the server, scored against the clients' true data
  (``fedgraph audit``);
* :mod:`~fedgraph.privacy.record`: the opt-in recording of what the server
  receives;
* :mod:`~fedgraph.privacy.dp` and :mod:`~fedgraph.privacy.accountant`:
  client-level DP on uploads and its :math:`(\varepsilon, \delta)`;
* :mod:`~fedgraph.privacy.alignment`: keyed-hash private entity alignment;
* :mod:`~fedgraph.privacy.secagg`: secure aggregation of entity sums and
  counts; :mod:`~fedgraph.privacy.secagg_plus`: its dropout recovery;
  :mod:`~fedgraph.privacy.secagg_masks`: the masks and key codecs they share;
* :mod:`~fedgraph.privacy.flower`: the defences in a Flower deployment
  (run-config keys ``privacy.*``);
* :mod:`~fedgraph.privacy.setup`: the settings that switch them on.

See ``docs/privacy.md``.
"""

from fedgraph.privacy.accountant import calibrate_noise, gaussian_epsilon
from fedgraph.privacy.attacks import membership_inference, triple_inference
from fedgraph.privacy.audit import run_audit
from fedgraph.privacy.setup import PrivacySettings, apply_privacy

__all__ = [
    "PrivacySettings",
    "apply_privacy",
    "run_audit",
    "triple_inference",
    "membership_inference",
    "calibrate_noise",
    "gaussian_epsilon",
]
