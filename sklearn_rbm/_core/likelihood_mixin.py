"""How every density estimator of the package scores data by its true
log-likelihood: the ``score_method`` rule, the cached ``log Z`` with its band,
``score_samples`` and ``score``.

``log p(x) = log p~(x) - log Z``: the unnormalised log-probability ``log p~``
is closed-form for every model here (minus the free energy of an RBM, the
quadratic energy of an FVBM), so all the work is ``log Z``. It is computed once
per fitted state and setting and cached, so a row's score never depends on the
other rows it is scored with, and the last estimate is exposed as
``log_partition_`` with its uncertainty band.

The enumeration limits are the constants of :mod:`sklearn_rbm.likelihood`
(defined in ``_partition/exact.py``):
``'auto'`` enumerates while the enumerated layer has at most
``MAX_EXACT_UNITS`` units; ``'exact'`` is refused beyond
``MAX_ENUMERABLE_UNITS``.
"""

import hashlib
import numbers
from abc import ABC, abstractmethod

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._partition.annealing import SCHEDULE_CONSTRAINT, ais_betas
from .._partition.exact import (
    MAX_ENUMERABLE_UNITS,
    MAX_EXACT_UNITS,
    LogPartition,
    check_enumerable,
)
from .sklearn_compat import Interval, StrOptions
from .utils import check_chains_memory

#: Constraints of the likelihood hyperparameters every estimator shares
#: (``score_method``, ``ais_n_chains``, ``ais_betas``), for
#: ``_parameter_constraints``.
SCORE_PARAMETER_CONSTRAINTS = {
    "score_method": [StrOptions({"auto", "exact", "ais"})],
    "ais_n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
    "ais_betas": SCHEDULE_CONSTRAINT,
}


def resolve_score_method(requested, n_units, *, approximate="ais", limit=None):
    """The method ``score`` uses: ``'exact'`` or the ``approximate`` one.

    ``'auto'`` enumerates while ``n_units <= MAX_EXACT_UNITS``; an explicit
    ``'exact'`` is checked against ``limit`` (default
    ``MAX_ENUMERABLE_UNITS``; per-row enumerations pass ``MAX_EXACT_UNITS``).
    """
    if requested == "auto":
        return "exact" if n_units <= MAX_EXACT_UNITS else approximate
    if requested == "exact":
        check_enumerable(
            n_units,
            "score_method='exact'",
            limit=MAX_ENUMERABLE_UNITS if limit is None else limit,
            instead=f"score_method='{approximate}' (or 'auto')",
        )
    return requested


def check_score_settings(estimator):
    """Check ``ais_betas`` at fit time, not only when ``score`` first needs it
    (the parameter constraints accept any array; :func:`ais_betas` knows the
    rules)."""
    try:
        ais_betas(estimator.ais_betas)
    except (MemoryError, ValueError) as error:
        raise type(error)(f"ais_betas: {error}") from error


def _cache_key(method, n_chains, betas):
    """The key of a ``log Z`` estimate in the cache: a string, so that the
    cache (a plain dict of the fitted estimator) persists through
    ``skops.io``, whose format allows only string keys. A schedule given as an
    array enters as a hash of its float64 values."""
    if method == "exact":
        return "exact"
    if not isinstance(betas, (str, numbers.Integral)):
        values = np.ascontiguousarray(np.ravel(betas), dtype=np.float64)
        betas = hashlib.sha256(values.tobytes()).hexdigest()
    return f"{method}:n_chains={int(n_chains)}:betas={betas}"


class LikelihoodMixin(ABC):
    """``score_samples``, ``score`` and ``log_partition_function`` from ``log Z``.

    A subclass has the hyperparameters ``score_method``, ``ais_n_chains`` and
    ``ais_betas``, sets ``_ais_seed`` (an int drawn from ``random_state``) when
    it fits, calls :meth:`_forget_log_partition` whenever its parameters
    change, and supplies:

    * ``_validate_query(X)``: ``X`` checked against the fitted model;
    * ``_log_unnormalised(X)``: ``log p~(x)`` of each validated row, float64;
    * ``_enumerated_units()``: ``k`` such that exact ``log Z`` enumerates
      ``2 ** k`` states;
    * ``_exact_log_partition()``: exact ``log Z``, a float;
    * ``_ais_log_partition(n_chains, betas, random_state)``: a
      :class:`~sklearn_rbm.likelihood.LogPartition` estimated by AIS.
    """

    @abstractmethod
    def _validate_query(self, X):
        """``X`` checked against the fitted model."""

    @abstractmethod
    def _log_unnormalised(self, X):
        """``log p~(x)`` of each validated row, float64."""

    @abstractmethod
    def _enumerated_units(self):
        """``k`` such that exact ``log Z`` enumerates ``2 ** k`` states."""

    @abstractmethod
    def _exact_log_partition(self):
        """Exact ``log Z``, a float."""

    @abstractmethod
    def _ais_log_partition(self, n_chains, betas, random_state):
        """``log Z`` estimated by AIS, a ``LogPartition``."""

    def _forget_log_partition(self):
        """Drop the cached ``log Z`` estimates (the parameters changed)."""
        self._log_partition_cache = {}
        if hasattr(self, "log_partition_"):
            del self.log_partition_

    def _n_units(self):
        """Visible plus hidden units (the size of one AIS chain's state)."""
        hidden = getattr(self, "components_", None)
        return self.n_features_in_ + (0 if hidden is None else hidden.shape[0])

    def _resolve_score_method(self):
        return resolve_score_method(self.score_method, self._enumerated_units())

    def log_partition_function(self):
        """``log Z`` of the fitted model with its uncertainty band.

        Exact by enumeration or estimated by annealed importance sampling
        according to ``score_method`` (``'auto'``: exact while the enumerated
        layer has at most ``likelihood.MAX_EXACT_UNITS`` units). Computed once
        per fitted state and setting, then cached, so that
        :meth:`score_samples` does not depend on which other rows it is given;
        AIS uses ``ais_n_chains`` chains, the ``ais_betas`` schedule and a
        random stream fixed at fit time. The result is also stored as
        ``log_partition_``.

        Returns
        -------
        log_partition : LogPartition
            ``(log_z, lower, upper, method)``. For AIS the band is plus or
            minus three standard errors of the mean importance weight (AIS
            underestimates ``log Z`` on average, so the log-likelihood it gives
            errs high); for the exact method the band is the value itself.
        """
        check_is_fitted(self)
        method = self._resolve_score_method()
        key = _cache_key(method, self.ais_n_chains, self.ais_betas)
        cache = self._log_partition_cache
        if key not in cache:
            if method == "exact":
                log_z = float(self._exact_log_partition())
                cache[key] = LogPartition(log_z, log_z, log_z, "exact")
            else:
                check_score_settings(self)
                check_chains_memory(self.ais_n_chains, self._n_units(), "ais_n_chains")
                cache[key] = self._ais_log_partition(
                    self.ais_n_chains, self.ais_betas, self._ais_seed
                )
        self.log_partition_ = cache[key]
        return cache[key]

    def score_samples(self, X):
        """Log-likelihood ``log p(x)`` of each row under the model, in nats.

        ``log p~(x) - log Z`` with ``log Z`` from
        :meth:`log_partition_function` (exact or AIS, see ``score_method``):
        the true log-likelihood, not a pseudo-likelihood.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Data to score.

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            Log-likelihood of each row of ``X``, in nats.
        """
        X = self._validate_query(X)
        log_z = self.log_partition_function().log_z
        return self._log_unnormalised(X) - log_z

    def score(self, X, y=None):
        """Mean log-likelihood per sample, ``mean(score_samples(X))``, in nats.

        With AIS, ``log_partition_`` holds the estimate of ``log Z`` used and
        its band: the mean log-likelihood lies in ``score(X) + log_z -
        upper`` to ``score(X) + log_z - lower``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Data to score.
        y : None
            Ignored; present for ``Pipeline`` and ``GridSearchCV``.

        Returns
        -------
        log_likelihood : float
            Mean log-likelihood of the rows of ``X``, in nats.
        """
        return float(np.mean(self.score_samples(X)))
