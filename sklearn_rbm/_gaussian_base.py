"""What a Gaussian-Bernoulli RBM estimator answers once fitted: ``transform``,
the free energy, Gibbs sampling, and ``score`` / ``score_samples`` through the
likelihood functions of the Gaussian case.

A subclass fits ``components_`` (n_components, n_features),
``intercept_visible_``, ``intercept_hidden_`` and ``sigma_`` (the plain,
uncentred RBM), the AIS base model ``base_mean_`` / ``base_sigma_``, and calls
``_forget_log_partition`` after each change. Everything here reads only those
attributes.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ._divergence import N_CHECKED_ROWS, diagnose
from ._kernels.gaussian import gibbs_sample_scaled
from ._likelihood_mixin import LikelihoodMixin
from ._utils import check_memory, kernel_rng
from .likelihood import (
    SCORE_PARAMETER_CONSTRAINTS,
    gaussian_free_energy,
    gaussian_log_likelihood_bounds,
    gaussian_log_partition_ais,
    gaussian_log_partition_exact,
)

FLOAT_DTYPES = (np.float64, np.float32)


def log_density_ceiling(X, W, b, c, sigma, n_probes=100):
    """An upper bound on the mean log-density of the dense rows ``X``
    (float64 parameters), computable without ``log Z``.

    ``Z = prod_i sqrt(2 pi) sigma_i * sum_h exp(q(h))`` with ``q(h) = c^T h +
    sum_i ((b_i + (W^T h)_i)^2 - b_i^2) / (2 sigma_i^2)``, so any hidden
    states bound ``log Z`` from below: here ``h = 0`` and the most probable
    hidden states of the first ``n_probes`` rows. (The binary RBM's ceiling in
    ``_divergence.py`` uses ``Z >= max p~``, which a density does not satisfy.)
    """
    inv_var = 1.0 / sigma**2
    with np.errstate(over="ignore", invalid="ignore"):
        pre = X @ (W * inv_var).T + c
        deviation = X - b
        log_p = np.logaddexp(0.0, pre).sum(axis=1) - 0.5 * np.sum(
            deviation * deviation * inv_var, axis=1
        )
        H = (pre[:n_probes] > 0).astype(np.float64)
        means = b + H @ W
        q = H @ c + 0.5 * ((means**2 - b**2) @ inv_var)
    log_z_lower = np.sum(np.log(np.sqrt(2.0 * np.pi) * sigma)) + max(
        0.0, float(np.max(q))
    )
    return float(np.mean(log_p) - log_z_lower)


class BaseGaussianRBM(
    LikelihoodMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Base class of Gaussian-Bernoulli RBM estimators (not for direct use).

    Holds the likelihood hyperparameters ``score_method``, ``ais_n_chains`` and
    ``ais_betas`` (as :class:`~sklearn_rbm._base.BaseBinaryRBM` does).
    """

    _parameter_constraints: dict = {
        **SCORE_PARAMETER_CONSTRAINTS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    @property
    def _n_features_out(self):
        """Number of transformed output features (for get_feature_names_out)."""
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _validate_query(self, X):
        check_is_fitted(self, "components_")
        return validate_data(
            self, X, accept_sparse="csr", dtype=FLOAT_DTYPES, reset=False
        )

    # ----------------------------------------------------------- divergence
    def _watch_divergence(self, X, start_sigma):
        """Fix the training rows on which :meth:`_diagnose_divergence` judges
        the model, and their exact mean log-density under the model every fit
        starts from: independent Gaussians with the data's means
        (``base_mean_``) and the initial standard deviations ``start_sigma``."""
        rows = X[:N_CHECKED_ROWS]
        rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        self._checked_rows = rows.astype(np.float64)
        start_sigma = np.asarray(start_sigma, np.float64)
        z = (self._checked_rows - self.base_mean_) / start_sigma
        self._checked_baseline = float(
            -np.sum(np.log(np.sqrt(2.0 * np.pi) * start_sigma))
            - 0.5 * np.mean(np.sum(z * z, axis=1))
        )

    def _diagnose_divergence(self, *parameters):
        """What went wrong with the fitted parameters, or None: a ceiling on
        the checked rows' mean log-density (:func:`log_density_ceiling`) far
        below the independent Gaussians' is a model certainly worse than
        where it started (collapsed variances, runaway weights)."""
        model = tuple(np.asarray(p, np.float64) for p in self._parameters())
        if not all(np.all(np.isfinite(p)) for p in model):
            return diagnose(np.nan, self._checked_baseline, 0, *parameters)
        return diagnose(
            log_density_ceiling(self._checked_rows, *model),
            self._checked_baseline, self._checked_rows.shape[1], *parameters,
            reference="the independent Gaussians the fit started from",
        )  # fmt: skip

    def transform(self, X):
        """Hidden-unit activation probabilities ``p(h = 1 | v)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible vectors.

        Returns
        -------
        H : ndarray of shape (n_samples, n_components)
            ``sigmoid((X / sigma^2) W^T + c)``, in the dtype of ``X``.
        """
        X = self._validate_query(X)
        scaled_W = (self.components_ / self.sigma_**2).astype(X.dtype)
        pre = safe_sparse_dot(X, scaled_W.T, dense_output=True)
        pre += self.intercept_hidden_.astype(X.dtype, copy=False)
        return expit(pre, out=pre)

    def free_energy(self, X):
        """Free energy of each row: ``log p(v) = -F(v) - log Z``.

        ``F(v) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_j softplus(c_j +
        W_j (v / sigma^2))``: free energies compare rows under one model
        without ``log Z``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible vectors.

        Returns
        -------
        free_energy : ndarray of shape (n_samples,), float64
        """
        return gaussian_free_energy(self._validate_query(X), *self._parameters())

    def _parameters(self):
        return (
            self.components_,
            self.intercept_visible_,
            self.intercept_hidden_,
            self.sigma_,
        )

    def gibbs(self, v):
        """One block-Gibbs step ``v -> h -> v'`` from each row of ``v``.

        Uses and advances the fitted ``random_state_``.

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Real-valued samples of the visible units after one step.
        """
        V = self._validate_query(v)
        V = V.toarray() if sp.issparse(V) else np.array(V, order="C")
        return self._gibbs(V, 1, kernel_rng(self.random_state_))

    def _gibbs(self, V, n_steps, rng):
        dtype = V.dtype
        W = np.ascontiguousarray(self.components_, dtype=dtype)
        variance = (self.sigma_**2).astype(dtype)
        S = gibbs_sample_scaled(
            V / variance, W, self.intercept_visible_.astype(dtype),
            self.intercept_hidden_.astype(dtype), (1.0 / self.sigma_).astype(dtype),
            n_steps, rng,
        )  # fmt: skip
        return S * variance

    def sample(self, n_samples=1, *, n_steps=1000, random_state=None):
        """Draw visible vectors from the model by block-Gibbs sampling.

        Each sample ends its own chain, started from the independent
        Gaussians of the training data (``base_mean_``, ``base_sigma_``) and
        run for ``n_steps`` Gibbs steps, all of them burn-in.

        Parameters
        ----------
        n_samples : int, default=1
            Number of independent samples (chains).
        n_steps : int, default=1000
            Gibbs steps per chain.
        random_state : int, RandomState instance or None, default=None
            Seed of the chains; ``None`` uses the estimator's
            ``random_state``.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "components_")
        for name, value in (("n_samples", n_samples), ("n_steps", n_steps)):
            if not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        n_hidden, n_features = self.components_.shape
        # The chains' visible and hidden states, their scaled copies and noise.
        check_memory(
            4 * n_samples * (n_hidden + n_features) * self.components_.itemsize,
            f"n_samples={n_samples} with {n_hidden} hidden units and "
            f"{n_features} features",
            "Draw fewer samples per call (n_samples).",
        )
        rs = check_random_state(
            self.random_state if random_state is None else random_state
        )
        noise = rs.standard_normal((n_samples, self.base_mean_.size))
        V = (self.base_mean_ + self.base_sigma_ * noise).astype(self.components_.dtype)
        return self._gibbs(V, n_steps, kernel_rng(rs))

    # ------------------------------------------------------------ likelihood
    # The hooks of LikelihoodMixin, which provides score, score_samples and
    # log_partition_function.
    def _enumerated_units(self):
        return self.components_.shape[0]

    def _exact_log_partition(self):
        return gaussian_log_partition_exact(*self._parameters())

    def _ais_log_partition(self, n_chains, betas, random_state):
        return gaussian_log_partition_ais(
            *self._parameters(),
            base_mean=self.base_mean_,
            base_sigma=self.base_sigma_,
            n_chains=n_chains,
            betas=betas,
            random_state=random_state,
        )

    def _log_unnormalised(self, X):
        return -gaussian_free_energy(X, *self._parameters())

    def log_likelihood_bounds(self, X):
        """Mean log-density of ``X`` bracketed by reverse and forward AIS.

        ``upper`` is the forward-AIS mean log-density, the value :meth:`score`
        returns with ``score_method='ais'`` (the same run: ``ais_n_chains``
        chains, ``ais_betas`` and the random stream fixed at fit time);
        ``lower`` the mean RAISE estimate (Burda, Grosse & Salakhutdinov
        2015) with ``ais_n_chains`` reverse chains per row, from the row down
        to the independent Gaussians of the training data. The bounds hold in
        expectation, in the sense of
        :func:`~sklearn_rbm.likelihood.log_likelihood_bounds`: on real data
        RAISE can err high until there are many temperatures (see the
        :ref:`User Guide <gaussian_user_guide>`). RAISE costs about
        ``n_samples`` forward AIS runs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data to score.

        Returns
        -------
        bounds : LikelihoodBounds
            ``(lower, upper)``, mean log-densities per sample in nats.
        """
        return gaussian_log_likelihood_bounds(
            self._validate_query(X),
            *self._parameters(),
            base_mean=self.base_mean_,
            base_sigma=self.base_sigma_,
            n_chains=self.ais_n_chains,
            betas=self.ais_betas,
            random_state=self._ais_seed,
        )
