"""What every fitted RBM answers, whatever its unit types: ``transform``, the
free energy, Gibbs and tempered sampling, and ``score`` / ``score_samples``
through the likelihood mixin; the two families of fitted RBMs by their
visible layer, :class:`BaseBinaryRBM` and :class:`BaseGaussianRBM`.

A subclass names its visible layer (:meth:`FittedRBM._visible_layer`, a
:class:`~sklearn_rbm._rbm.layers.base.Layer`), fits ``components_``
(n_components, n_features), ``intercept_visible_`` and ``intercept_hidden_``
(always the plain, uncentred RBM) with the layer's own fitted attributes, and
calls :meth:`FittedRBM._forget_log_partition` after each change. Everything
else here reads only those attributes, through the layer.
"""

import numbers
from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.divergence import N_CHECKED_ROWS
from .._core.docstrings import sample_docstring
from .._core.likelihood_mixin import (
    SCORE_PARAMETER_CONSTRAINTS,
    LikelihoodMixin,
    check_score_settings,
)
from .._core.utils import (
    FLOAT_DTYPES,
    check_memory,
    check_sampling_work,
    hold_out,
    kernel_array,
    kernel_rng,
    validate_held_out,
)
from .._partition.annealing import ais_betas, run_ais
from .._partition.reverse_ais import (
    gaussian_log_likelihood_bounds,
    log_likelihood_bounds,
)
from .kernels import gibbs_sample, pt_sample
from .layers.bernoulli import BernoulliLayer
from .layers.gaussian import GaussianLayer
from .layers.relu import BernoulliHidden
from .tempering import SwapMonitor, fitted_ladder

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


def parameters_of(
    estimator, n_features, dtype, n_components=None, purpose="a warm start"
):
    """Copies of a fitted RBM estimator's ``(W, b, c)`` in ``dtype``, for
    ``purpose`` ("a warm start", "growing an RBM"), checked against the
    ``n_features`` of the data and, when given, ``n_components``."""
    check_is_fitted(estimator, "components_")
    W = np.array(estimator.components_, dtype=dtype)
    if W.ndim != 2 or W.shape[1] != n_features:
        raise ValueError(
            f"init was fitted on {W.shape[-1]} features but X has {n_features}; "
            f"{purpose} needs the same visible units."
        )
    if n_components is not None and W.shape[0] != n_components:
        raise ValueError(
            f"init has {W.shape[0]} hidden units but n_components={n_components}; "
            f"pass n_components={W.shape[0]}."
        )
    b = np.array(estimator.intercept_visible_, dtype=dtype)
    c = np.array(estimator.intercept_hidden_, dtype=dtype)
    return W, b, c


#: The fixed cost of one Gibbs step of one chain (its loop and draws), in
#: the elementary operations of the sampling work limit.
_STEP_OVERHEAD = 100


class FittedRBM(
    LikelihoodMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
    """Base class of RBM estimators (not for direct use): the queries of a
    fitted RBM, over its visible layer.

    The likelihood hyperparameters shared by every subclass:

    score_method : {'auto', 'exact', 'ais'}
        How :meth:`score` and :meth:`score_samples` get ``log Z``: ``'exact'``
        enumerates (the smaller layer of a binary RBM, the hidden layer of a
        Gaussian one), ``'ais'`` uses annealed importance sampling, ``'auto'``
        enumerates while the enumerated layer has at most ``MAX_EXACT_UNITS``
        (20) units.
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

    def _hidden_layer(self):
        """The hidden layer's estimator side (``layers/relu.py``): binary
        units unless the estimator chooses others."""
        return BernoulliHidden()

    @abstractmethod
    def _visible_layer(self):
        """The visible layer (a :class:`~sklearn_rbm._rbm.layers.base.Layer`)
        made from the hyperparameters."""

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
        ``X``: same features, converted to its dtype, values the units take);
        without it, ``validation_fraction`` of ``X`` (or ``default_fraction``)
        is held out.
        """
        if X_val is not None:
            X_val = validate_held_out(self, X_val, accept_sparse="csr", dtype=X.dtype)
            X_val = self._visible_layer().check_values(X_val, "X_val")
        (X_train,), validation = hold_out(
            (X,),
            rs,
            fraction=self.validation_fraction,
            default_fraction=default_fraction,
            given=None if X_val is None else (X_val,),
        )
        return X_train, None if validation is None else validation[0]

    def _watch_divergence(self, X):
        """Fix the training rows (and the mean log-likelihood of the model
        every fit starts from on them) on which :meth:`_diagnose_divergence`
        judges the model (``_core/divergence.py``)."""
        layer = self._visible_layer()
        self._checked_rows = layer.checked_rows(X[:N_CHECKED_ROWS])
        self._checked_baseline = layer.divergence_baseline(self, self._checked_rows)

    def _diagnose_divergence(self, *parameters):
        """What went wrong with the fitted parameters, or None."""
        return self._visible_layer().diagnose(
            self, self._checked_rows, self._checked_baseline, parameters
        )

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
        """``X`` checked for ``fit``: finite, float, values the visible units
        take; the scoring settings checked with it."""
        check_score_settings(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=FLOAT_DTYPES, reset=reset)
        return self._visible_layer().check_values(X)

    def _validate_query(self, X, name="X"):
        """Validate ``X`` (the argument ``name``) at transform / score time
        against the fitted model."""
        check_is_fitted(self, "components_")
        X = validate_data(self, X, accept_sparse="csr", dtype=FLOAT_DTYPES, reset=False)
        return self._visible_layer().check_values(X, name)

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
            ``sigmoid(s W^T + c)`` with ``s`` the visible statistics (``X``
            itself for binary units, ``X / sigma^2`` for Gaussian ones), in
            the dtype of ``X``.
        """
        X = self._validate_query(X)
        pre = self._visible_layer().hidden_input(self, X)
        pre += self.intercept_hidden_.astype(X.dtype, copy=False)
        return self._hidden_layer().mean(pre)

    def free_energy(self, X):
        """Free energy ``F(v)`` of each row: ``log p(v) = -F(v) - log Z``.

        For binary visible units ``F(v) = -b^T v - sum_j softplus(W_j v +
        c_j)``; for Gaussian ones ``F(v) = sum_i (v_i - b_i)^2 / (2
        sigma_i^2) - sum_j softplus(c_j + W_j (v / sigma^2))``. Free energies
        compare rows under one model without knowing ``log Z``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible vectors.

        Returns
        -------
        free_energy : ndarray of shape (n_samples,), float64
            Free energy of each row of ``X``.
        """
        X = self._validate_query(X)
        return self._visible_layer().free_energy(self, X)

    def gibbs(self, v):
        """One block-Gibbs step ``v -> h -> v'`` from each row of ``v``.

        Uses and advances the fitted ``random_state_``, as scikit-learn's
        ``BernoulliRBM.gibbs`` does.

        Parameters
        ----------
        v : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible vectors to start from.

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Samples of the visible units after one step.
        """
        V = self._validate_query(v, name="v")
        V = V.toarray() if hasattr(V, "toarray") else np.array(V, order="C")
        return self._gibbs(V, 1, kernel_rng(self.random_state_))

    def _sampling_kernel_arguments(self, dtype):
        layer = self._visible_layer()
        units, ctx, to_statistics, from_statistics = layer.sampling_units(self, dtype)
        W = kernel_array(self.components_, dtype)
        c = kernel_array(self.intercept_hidden_, dtype)
        hidden = self._hidden_layer().units_of(c)
        return layer, units, ctx, hidden, W, to_statistics, from_statistics

    def _gibbs(self, V, n_steps, rng):
        _, units, ctx, hidden, W, to_statistics, from_statistics = (
            self._sampling_kernel_arguments(V.dtype)
        )
        S = gibbs_sample(units, ctx, hidden, to_statistics(V), W, hidden.bias,
                         n_steps, rng)  # fmt: skip
        return from_statistics(S)

    def _sample_tempered(self, V, betas, n_steps, rng):
        """The ``beta = 1`` states after ``n_steps`` rounds of parallel
        tempering from the stacked starts ``V`` (replica ``t`` in rows ``t *
        n`` to ``(t + 1) * n``) on the ladder ``betas``."""
        dtype = self.components_.dtype
        layer, units, ctx, hidden, W, to_statistics, from_statistics = (
            self._sampling_kernel_arguments(dtype)
        )
        n_samples = V.shape[0] // betas.size
        monitor = SwapMonitor(betas, n_samples)
        S = pt_sample(
            units, ctx, hidden, layer.tempering_base(self, dtype),
            to_statistics(V.astype(dtype)), W, hidden.bias, betas, n_steps, rng,
            monitor.accepted,
        )  # fmt: skip
        monitor.rounds = n_steps
        monitor.warn_about_gaps("while sampling")
        return from_statistics(S[:n_samples]).copy()

    @sample_docstring
    def sample(self, n_samples=1, *, n_steps=1000, method="gibbs", random_state=None):
        """Draw visible vectors by block-Gibbs sampling or parallel tempering.

        Each sample is the end of its own chain: the chain starts from the
        AIS base model (independent units with the training data's means;
        for Gaussian units also its standard deviations) and runs ``n_steps``
        steps, all of them burn-in. How many steps make a
        chain forget its start depends on the model; 1,000 Gibbs steps are
        plenty for a moderately trained RBM. Sharply peaked models, whose
        Gibbs chains stay in one mode, mix better with ``method='pt'``.

        Parameters
        ----------
        n_samples : int, default=1
            Number of independent samples (chains).
        n_steps : int, default=1000
            Steps per chain (the burn-in): Gibbs steps, or for ``'pt'`` rounds
            of one Gibbs step of every replica followed by one round of
            neighbour swaps (a round costs ``n_temperatures`` Gibbs steps).
        method : {'gibbs', 'pt'}, default='gibbs'
            ``'gibbs'``: one block-Gibbs chain per sample. ``'pt'``: parallel
            tempering (Desjardins et al. 2010), one tempering system per
            sample on the fitted ladder ``betas_`` of a model trained with
            ``solver='pt'`` or ``'cpt'``, otherwise on 4 inverse temperatures
            evenly spaced from 1 to 0.5; the samples are the
            ``beta = 1`` replicas. Warns when swaps across a pair of
            temperatures were almost never accepted.
        %(sample_random_state)s

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Samples of the visible units (binary for binary units).
        """
        check_is_fitted(self, "components_")
        for name, value in (("n_samples", n_samples), ("n_steps", n_steps)):
            if not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if method not in ("gibbs", "pt"):
            raise ValueError(
                f"method must be 'gibbs' (block-Gibbs chains) or 'pt' (parallel "
                f"tempering), got {method!r}."
            )
        rs = check_random_state(
            self.random_state if random_state is None else random_state
        )
        betas = fitted_ladder(self) if method == "pt" else np.ones(1)
        n_hidden, n_features = self.components_.shape
        n_rows = betas.size * n_samples
        # The chains' visible and hidden states, their scaled copies and noise.
        check_memory(
            4 * n_rows * (n_hidden + n_features) * self.components_.itemsize,
            f"n_samples={n_samples} with {n_hidden} hidden units and "
            f"{n_features} features",
            "Draw fewer samples per call (n_samples).",
        )
        # A Gibbs step of a chain multiplies by the weights twice, draws every
        # unit, and has a fixed cost that dominates tiny models.
        step = 2 * n_hidden * n_features + n_hidden + n_features + _STEP_OVERHEAD
        check_sampling_work(
            float(n_rows) * n_steps * step,
            f"sample(n_samples={n_samples}, n_steps={n_steps}, method={method!r}) "
            f"with {n_hidden} hidden units and {n_features} features "
            "(chains x steps x (2 weights + units + 100))",
            "Use fewer steps (n_steps) or samples, in several calls if needed.",
        )
        V = self._visible_layer().sample_start(self, rs, n_rows)
        if method == "pt":
            return self._sample_tempered(V, betas, n_steps, kernel_rng(rs))
        return self._gibbs(V, n_steps, kernel_rng(rs))

    # ------------------------------------------------------------ likelihood
    # The hooks of LikelihoodMixin, which provides score, score_samples and
    # log_partition_function.
    def _enumerated_units(self):
        return self._visible_layer().enumerated_units(self)

    def _exact_log_partition(self):
        return self._visible_layer().exact_log_partition(self)

    def _ais_log_partition(self, n_chains, betas, random_state):
        path = self._visible_layer().annealing_path(self)
        return run_ais(path, ais_betas(betas), n_chains, random_state)

    def _log_unnormalised(self, X):
        return self._visible_layer().log_unnormalised(self, X)


class BaseBinaryRBM(FittedRBM):
    """Base class of RBMs with binary visible units (not for direct use)."""

    def _visible_layer(self):
        return BernoulliLayer()

    def log_likelihood_bounds(self, X):
        """Mean log-likelihood of ``X`` bracketed by reverse and forward AIS.

        ``upper`` comes from forward AIS (Salakhutdinov & Murray 2008) with
        ``ais_n_chains`` chains, ``ais_betas`` and the random stream fixed at
        fit time (the run :meth:`score` uses with ``score_method='ais'``),
        taking the lower end of its ``log Z`` band rather than its estimate
        (the upper end is not that score); ``lower`` is the mean RAISE
        estimate (Burda, Grosse & Salakhutdinov 2015), 10 reverse
        chains per row from a base model fitted to the RBM's own samples,
        less three Monte Carlo standard errors. Each end is a bound with high
        probability; when ``ais_betas`` is a count it is doubled while the
        ends cross, and ``lower <= upper`` always (see
        :func:`~sklearn_rbm.likelihood.log_likelihood_bounds` for the
        mathematics, and the :ref:`user guide <likelihood_user_guide>` for
        measurements).

        Both ends are annealing estimates whatever ``score_method`` says: the
        bracket measures the annealing itself. When the smaller layer is
        small enough to enumerate, ``score(X)`` with ``score_method='exact'``
        (or ``'auto'``) gives the exact value to compare.

        Each row's reverse chains draw from a stream keyed by a hash of the
        row and the fitted seed, so a row's estimate does not depend on where
        it stands in ``X`` or on the rows that come with it. RAISE anneals
        10 chains through every temperature for every row.

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
        >>> bool(lower <= exact <= upper)
        True
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


class BaseGaussianRBM(FittedRBM):
    """Base class of RBMs with Gaussian visible units (not for direct use);
    the subclass has the hyperparameters ``sigma`` and ``min_sigma``."""

    def _visible_layer(self):
        return GaussianLayer(self.sigma, self.min_sigma)

    def log_likelihood_bounds(self, X):
        """Mean log-density of ``X`` bracketed by reverse and forward AIS.

        ``upper`` comes from forward AIS with ``ais_n_chains`` chains,
        ``ais_betas`` and the random stream fixed at fit time (the run
        :meth:`score` uses with ``score_method='ais'``), taking the lower end
        of its ``log Z`` band rather than its estimate (the upper end is not
        that score); ``lower`` is the mean RAISE estimate (Burda,
        Grosse & Salakhutdinov 2015), 10 reverse chains per row from
        independent Gaussians fitted to the RBM's own samples, less three
        Monte Carlo standard errors. Each end is a bound with high
        probability, in the sense of
        :func:`~sklearn_rbm.likelihood.gaussian_log_likelihood_bounds`; a
        count ``ais_betas`` is doubled while the ends cross, and ``lower <=
        upper`` always.

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
            self.components_,
            self.intercept_visible_,
            self.intercept_hidden_,
            self.sigma_,
            base_mean=self.base_mean_,
            base_sigma=self.base_sigma_,
            n_chains=self.ais_n_chains,
            betas=self.ais_betas,
            random_state=self._ais_seed,
        )
