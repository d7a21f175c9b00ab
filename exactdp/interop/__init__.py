"""exactdp where its users already are: the idioms of other privacy libraries.

* :mod:`exactdp.interop.dp_accounting` — :class:`~exactdp.interop.dp_accounting.ExactDiscreteGaussianDpEvent`
  and :class:`~exactdp.interop.dp_accounting.ExactDiscreteGaussianAccountant`, a
  ``dp_accounting.PrivacyAccountant`` whose ``get_epsilon`` / ``get_delta`` are exactdp's
  certified values (``pip install 'exactdp[dp-accounting]'``);
* :mod:`exactdp.interop.opendp` — :func:`~exactdp.interop.opendp.make_exact_measurement`,
  an OpenDP measurement whose privacy map is exactdp's certified privacy profile
  (``pip install 'exactdp[opendp]'``);
* :mod:`exactdp.interop.opendp_measurements` — OpenDP's own discrete Laplace / discrete Gaussian
  measurements read back exactly (:func:`~exactdp.interop.opendp_measurements.design_of`) and composed
  exactly (:func:`~exactdp.interop.opendp_measurements.make_exact_composition`);
* :mod:`exactdp.interop.profile` — the shared core: a certified privacy profile as
  Python floats rounded outward (what both libraries exchange).

Nothing here is imported by ``import exactdp``; each module imports its library only
when it is itself imported.
"""

from __future__ import annotations

__all__: list[str] = []
