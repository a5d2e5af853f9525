"""What every binary RBM estimator shares: the parameters, ``transform``, the
free energy, Gibbs sampling, and ``score`` / ``score_samples`` through the
likelihood module.

A subclass fits ``components_`` (n_components, n_features),
``intercept_visible_`` and ``intercept_hidden_`` (always the plain, uncentred
RBM) and calls :meth:`BaseBinaryRBM._set_fitted_parameters` after each change,
which forgets any cached ``log Z``. Everything else here reads only those
attributes.
"""

import numbers

import numpy as np
from scipy.special import expit
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ._divergence import (
    N_CHECKED_ROWS,
    base_rate_log_likelihood,
    diagnose,
    likelihood_ceiling,
)
from ._kernels.gibbs import gibbs_sample_visible
from ._likelihood_mixin import LikelihoodMixin, check_score_settings
from ._utils import (
    check_memory,
    check_unit_interval,
    hold_out,
    kernel_array,
    kernel_rng,
    validate_held_out,
    warn_if_not_binary,
)
from .likelihood import (
    SCORE_PARAMETER_CONSTRAINTS,
    _free_energy,
    log_likelihood_bounds,
    log_partition_ais,
    log_partition_exact,
)

_FLOAT_DTYPES = (np.float64, np.float32)

# Weight-sized arrays a fit holds at once (weights, velocity, the data-term
# scratch, the epoch's snapshot, early stopping's best state) and row-sized
# work arrays per mini-batch row and unit (chain states, pre-activations,
# samples): the factors of the memory estimate of :func:`check_rbm_memory`.
_WEIGHT_COPIES = 5
_ROW_COPIES = 6


def check_rbm_memory(hidden, features, rows, itemsize):
    """Refuse an RBM whose arrays cannot fit in memory, naming the parameter.

    ``hidden`` and ``rows`` are ``(parameter name, value)`` pairs: the number
    of hidden units and the number of rows worked on at once (a mini-batch,
    chains); ``features`` the number of visible units.
    """
    (hidden_name, n_hidden), (rows_name, n_rows) = hidden, rows
    check_memory(
        _WEIGHT_COPIES * n_hidden * features * itemsize,
        f"{hidden_name}={n_hidden} with {features} features",
        f"Use fewer hidden units ({hidden_name}).",
    )
    check_memory(
        _ROW_COPIES * n_rows * (n_hidden + features) * itemsize,
        f"{rows_name}={n_rows} with {n_hidden} hidden units",
        f"Use a smaller {rows_name}.",
    )


class BaseBinaryRBM(
    LikelihoodMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Base class of binary RBM estimators (not for direct use).

    The likelihood hyperparameters shared by every subclass:

    score_method : {'auto', 'exact', 'ais'}
        How :meth:`score` and :meth:`score_samples` get ``log Z``: ``'exact'``
        enumerates the smaller layer, ``'ais'`` uses annealed importance
        sampling, ``'auto'`` enumerates while the smaller layer has at most
        ``MAX_EXACT_UNITS`` (20) units.
    ais_n_chains : int
        AIS chains (Upadhya & Sastry 2017 and Ping, Liu & Ihler 2016 use 100).
    ais_betas : int, {'linear', 'three-segment'} or array-like
        AIS temperatures: a count of evenly spaced ones, or a published
        schedule by name (``'linear'``: the 10,000 of Upadhya & Sastry 2017;
        ``'three-segment'``: the 14,500 of Salakhutdinov & Murray 2008, used
        by Ping, Liu & Ihler 2016).
    """

    _parameter_constraints: dict = {
        **SCORE_PARAMETER_CONSTRAINTS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------------ state
    def _set_fitted_parameters(self, components, intercept_visible, intercept_hidden):
        """Install new parameters and forget the cached ``log Z`` estimates."""
        self.components_ = components
        self.intercept_visible_ = intercept_visible
        self.intercept_hidden_ = intercept_hidden
        self._forget_log_partition()

    def _held_out(self, X, X_val, rs, default_fraction=None):
        """``(training data, validation data or None)`` for ``fit``.

        ``X_val`` is the caller's own validation data (checked here against
        ``X``: same features, converted to its dtype); without it,
        ``validation_fraction`` of ``X`` (or ``default_fraction``) is held out.
        """
        if X_val is not None:
            X_val = validate_held_out(self, X_val, accept_sparse="csr", dtype=X.dtype)
            X_val = check_unit_interval(X_val, "X_val")
        (X_train,), validation = hold_out(
            (X,),
            rs,
            fraction=self.validation_fraction,
            default_fraction=default_fraction,
            given=None if X_val is None else (X_val,),
        )
        return X_train, None if validation is None else validation[0]

    def _watch_divergence(self, X):
        """Fix the training rows (and their base-rate log-likelihood) on which
        :meth:`_diagnose_divergence` judges the model (``_divergence.py``)."""
        self._checked_rows = X[:N_CHECKED_ROWS]
        self._checked_baseline = base_rate_log_likelihood(
            self._checked_rows, expit(self.base_rate_bias_)
        )

    def _diagnose_divergence(self, *parameters):
        """What went wrong with the fitted parameters, or None."""
        rows = self._checked_rows
        log_p = -_free_energy(
            rows, self.components_, self.intercept_visible_, self.intercept_hidden_
        )
        return diagnose(
            likelihood_ceiling(log_p), self._checked_baseline, rows.shape[1],
            *parameters,
        )  # fmt: skip

    @property
    def _n_features_out(self):
        """Number of transformed output features (for get_feature_names_out)."""
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _validate_training_data(self, X, reset=True):
        """``X`` checked for ``fit``: finite, float, values in [0, 1]; the
        scoring settings checked with it."""
        check_score_settings(self)
        X = validate_data(
            self, X, accept_sparse="csr", dtype=_FLOAT_DTYPES, reset=reset
        )
        return check_unit_interval(X)

    def _validate_query(self, X):
        """Validate ``X`` at transform / score time against the fitted model."""
        check_is_fitted(self, "components_")
        X = validate_data(
            self, X, accept_sparse="csr", dtype=_FLOAT_DTYPES, reset=False
        )
        return check_unit_interval(X)

    # --------------------------------------------------------------- queries
    def transform(self, X):
        """Hidden-unit activation probabilities ``p(h = 1 | v)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible vectors.

        Returns
        -------
        H : ndarray of shape (n_samples, n_components)
            ``sigmoid(X W^T + c)``, in the dtype of ``X``.
        """
        X = self._validate_query(X)
        W = self.components_.astype(X.dtype, copy=False)
        pre = safe_sparse_dot(X, W.T, dense_output=True)
        pre += self.intercept_hidden_.astype(X.dtype, copy=False)
        return expit(pre, out=pre)

    def free_energy(self, X):
        """Free energy ``F(v) = -b^T v - sum_j softplus(W_j v + c_j)`` of each row.

        ``log p(v) = -F(v) - log Z``: free energies compare samples under one
        model without knowing ``log Z``.
        """
        X = self._validate_query(X)
        return _free_energy(
            X, self.components_, self.intercept_visible_, self.intercept_hidden_
        )

    def gibbs(self, v):
        """One block-Gibbs step ``v -> h -> v'`` from each row of ``v``.

        Uses and advances the fitted ``random_state_``, as scikit-learn's
        ``BernoulliRBM.gibbs`` does.

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Binary samples of the visible units after one step.
        """
        V = self._validate_query(v)
        V = V.toarray() if hasattr(V, "toarray") else np.array(V, order="C")
        return self._gibbs(V, 1, kernel_rng(self.random_state_))

    def _gibbs(self, V, n_steps, rng):
        W = kernel_array(self.components_, V.dtype)
        b = kernel_array(self.intercept_visible_, V.dtype)
        c = kernel_array(self.intercept_hidden_, V.dtype)
        return gibbs_sample_visible(V, W, b, c, n_steps, rng)

    def sample(self, n_samples=1, *, n_steps=1000, random_state=None):
        """Draw visible vectors from the model by block-Gibbs sampling.

        Each sample is the end of its own chain: the chain starts from the
        AIS base model (independent pixels with the training data's mean) and
        runs ``n_steps`` Gibbs steps, all of them burn-in. How many steps make
        a chain forget its start depends on the model; 1,000 is plenty for a
        moderately trained RBM, and sharply peaked models need more.

        Parameters
        ----------
        n_samples : int, default=1
            Number of independent samples (chains).
        n_steps : int, default=1000
            Gibbs steps per chain (the burn-in).
        random_state : int, RandomState instance or None, default=None
            Seed of the chains; ``None`` uses the estimator's ``random_state``,
            so an int ``random_state`` gives the same samples on every call.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Binary samples.
        """
        check_is_fitted(self, "components_")
        for name, value in (("n_samples", n_samples), ("n_steps", n_steps)):
            if not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        rs = check_random_state(
            self.random_state if random_state is None else random_state
        )
        dtype = self.components_.dtype
        start_probability = expit(self.base_rate_bias_)
        V = rs.random_sample((n_samples, start_probability.size)) < start_probability
        return self._gibbs(V.astype(dtype), n_steps, kernel_rng(rs))

    # ------------------------------------------------------------ likelihood
    # The hooks of LikelihoodMixin, which provides score, score_samples and
    # log_partition_function.
    def _enumerated_units(self):
        return min(self.components_.shape)

    def _exact_log_partition(self):
        return log_partition_exact(
            self.components_, self.intercept_visible_, self.intercept_hidden_
        )

    def _ais_log_partition(self, n_chains, betas, random_state):
        return log_partition_ais(
            self.components_,
            self.intercept_visible_,
            self.intercept_hidden_,
            base_rate=self.base_rate_bias_,
            n_chains=n_chains,
            betas=betas,
            random_state=random_state,
        )

    def _log_unnormalised(self, X):
        # A likelihood is a probability of binary vectors: grey levels are
        # scored by the same formula, with a warning that it is no likelihood.
        warn_if_not_binary(X)
        return -_free_energy(
            X, self.components_, self.intercept_visible_, self.intercept_hidden_
        )

    def log_likelihood_bounds(self, X):
        """Mean log-likelihood of ``X`` bracketed by reverse and forward AIS.

        ``upper`` is the forward-AIS mean log-likelihood, the value
        :meth:`score` returns with ``score_method='ais'`` (the same run:
        ``ais_n_chains`` chains, ``ais_betas`` and the random stream fixed at
        fit time). ``lower`` is the mean RAISE estimate (Burda, Grosse &
        Salakhutdinov 2015) with the same settings: ``ais_n_chains`` reverse
        chains per row, from the row down to the base-rate model. AIS errs
        high in expectation; RAISE errs low in expectation for data typical
        of the model (on data the model fits poorly it can err high until
        there are enough temperatures). Both converge to the truth as
        temperatures are added, so a bracket that stays narrow when
        ``ais_betas`` grows shows that the temperatures suffice (see
        :func:`~sklearn_rbm.likelihood.log_likelihood_bounds` for the exact
        sense of each bound, and the :ref:`user guide <likelihood_user_guide>`
        for measurements).

        Both ends are annealing estimates whatever ``score_method`` says: the
        bracket measures the annealing itself. When the smaller layer is
        small enough to enumerate, ``score(X)`` with ``score_method='exact'``
        (or ``'auto'``) gives the exact value to compare.

        Each row's reverse chains draw from a stream keyed by a hash of the
        row and the fitted seed, so a row contributes the same estimate (to
        rounding) wherever it stands in ``X`` and whatever rows come with it.
        RAISE anneals ``ais_n_chains`` chains through every temperature for
        every row: it costs about ``n_samples`` times one forward AIS run.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Binary data to score (grey levels are refused: the reverse chains
            start at the rows).

        Returns
        -------
        bounds : LikelihoodBounds
            ``(lower, upper)``, mean log-likelihoods per sample in nats.

        Examples
        --------
        >>> from sklearn_rbm import DCPBernoulliRBM
        >>> from sklearn_rbm.datasets import load_binary_digits
        >>> X, _ = load_binary_digits()
        >>> rbm = DCPBernoulliRBM(n_components=12, solver='csdcp', batch_size=20,
        ...                       learning_rate=0.05, n_iter=50, ais_betas=300,
        ...                       random_state=0)
        >>> rbm = rbm.fit(X[:1500])
        >>> lower, upper = rbm.log_likelihood_bounds(X[1500:1550])
        >>> exact = rbm.score(X[1500:1550])  # enumerated: 12 hidden units
        >>> print(f"{lower:.2f} <= {exact:.2f} <= {upper:.2f}")
        -17.95 <= -17.94 <= -17.89
        """
        X = self._validate_query(X)
        return log_likelihood_bounds(
            X,
            self.components_,
            self.intercept_visible_,
            self.intercept_hidden_,
            base_rate=self.base_rate_bias_,
            n_chains=self.ais_n_chains,
            betas=self.ais_betas,
            random_state=self._ais_seed,
        )
