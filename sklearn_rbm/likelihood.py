"""True log-likelihood of RBMs: exact log partition functions by
enumeration, annealed importance sampling (AIS) estimates and reverse
annealing (RAISE) bounds, for binary and Gaussian-Bernoulli RBMs.

The log-likelihood of a visible vector is ``log p(v) = -F(v) - log Z`` with
the free energy ``F`` in closed form; all the difficulty is ``log Z``.

* :func:`log_partition_exact` sums out the larger layer analytically and
  enumerates the ``2 ** k`` states of the smaller one in Gray-code order
  (``k`` up to ``MAX_ENUMERABLE_UNITS``; ``score_method='auto'`` stops at
  ``MAX_EXACT_UNITS``).
* :func:`log_partition_ais` estimates ``log Z`` by AIS from the base-rate model
  (Salakhutdinov & Murray, 2008) and reports a band of plus or minus three
  standard errors of the importance weights.
* :func:`log_likelihood_raise` estimates each example's log-likelihood by
  reverse annealing (RAISE, Burda, Grosse & Salakhutdinov, 2015), which errs
  low where AIS errs high; :func:`log_likelihood_bounds` brackets the mean
  log-likelihood between the two.

* :func:`gaussian_free_energy`, :func:`gaussian_log_partition_exact`,
  :func:`gaussian_log_partition_ais`, :func:`gaussian_log_likelihood_raise`
  and :func:`gaussian_log_likelihood_bounds` are the same for
  Gaussian-Bernoulli RBMs (Cho, Ilin & Raiko 2011), whose log-likelihood is a
  log density.

Parameters use scikit-learn's orientation: ``components`` of shape
``(n_hidden, n_visible)``.

This module is the public face: it re-exports, and nothing in the package
imports it. The code lives by concern in private modules:
``_partition/exact.py`` (the binary free energy, enumeration,
:class:`LogPartition`), ``_partition/annealing.py`` (the schedules and the AIS
kernel over any layers), ``_partition/ais.py`` and ``_partition/gaussian.py``
(the validated AIS and Gaussian functions, over the layers of
``_rbm/layers``), ``_partition/reverse_ais.py`` (RAISE and the bounds, over
any visible layer's annealing path), ``_partition/parameters.py`` (the
parameters these functions share: constraints and descriptions).
"""

from ._partition.ais import base_rate_bias, log_partition_ais
from ._partition.annealing import ais_betas
from ._partition.exact import (
    MAX_ENUMERABLE_UNITS,
    MAX_EXACT_UNITS,
    LogPartition,
    free_energy,
    log_partition_exact,
)
from ._partition.gaussian import (
    gaussian_free_energy,
    gaussian_log_partition_ais,
    gaussian_log_partition_exact,
)
from ._partition.reverse_ais import (
    LikelihoodBounds,
    gaussian_log_likelihood_bounds,
    gaussian_log_likelihood_raise,
    log_likelihood_bounds,
    log_likelihood_raise,
)

__all__ = [
    "MAX_ENUMERABLE_UNITS",
    "MAX_EXACT_UNITS",
    "LogPartition",
    "LikelihoodBounds",
    "free_energy",
    "log_partition_exact",
    "log_partition_ais",
    "log_likelihood_raise",
    "log_likelihood_bounds",
    "ais_betas",
    "base_rate_bias",
    "gaussian_free_energy",
    "gaussian_log_partition_exact",
    "gaussian_log_partition_ais",
    "gaussian_log_likelihood_raise",
    "gaussian_log_likelihood_bounds",
]
