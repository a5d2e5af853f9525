"""GaussianBernoulliRBM: real-valued visible units, binary hidden units, the
DCP family of solvers and the true log-likelihood (a density).

A thin class over the RBM trainer (``_rbm/trainer.py``) with Gaussian
visible units (``_rbm/layers/gaussian.py``): the solvers, ``partial_fit``,
warm starts, sampling (Gibbs or parallel tempering) and scoring are the
trainer's, as for :class:`~sklearn_rbm.DCPBernoulliRBM`. This module holds
the public surface, its parameters and their documentation.
"""

import numbers

from .._core.sklearn_compat import Interval, StrOptions
from .base import BaseGaussianRBM
from .trainer import RBMTrainer

__all__ = ["GaussianBernoulliRBM"]


class GaussianBernoulliRBM(RBMTrainer, BaseGaussianRBM):
    """Gaussian-Bernoulli RBM: real-valued data, binary hidden features.

    The energy of Cho, Ilin & Raiko (2011) with a standard deviation
    ``sigma_i`` per feature,
    ``E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_ij W_ji h_j v_i /
    sigma_i^2 - c^T h``, so that ``p(h_j = 1 | v) = sigmoid(c_j + sum_i W_ji
    v_i / sigma_i^2)`` and ``p(v_i | h) = N(b_i + (W^T h)_i, sigma_i^2)``.
    The solvers are those of :class:`DCPBernoulliRBM` (CD-K, PCD, the
    centred gradient, S-DCP and centred S-DCP of Upadhya & Sastry 2017, and
    parallel tempering), with the same hyperparameters. ``sigma`` is learned
    (as ``log sigma^2``, at its own learning rate) or fixed.

    Standardise the data first (``Pipeline([StandardScaler(),
    GaussianBernoulliRBM()])``): the initial weights, the learning rates and
    the floor ``min_sigma`` assume features of unit scale. ``score`` is the
    log *density* in nats, which can be positive.

    The defaults (128 hidden units, the centred gradient with CD-10,
    batches of 50 at ``learning_rate=0.02`` with momentum 0.5, 400 epochs)
    were chosen by held-out log-density on dequantised, standardised 8x8
    digits, where they beat one full-covariance Gaussian
    (``GaussianMixture(n_components=1)``) by 4.9-7.1 nats in three splits,
    in 12-13 s of CPU. Its visible units are independent given the hidden
    ones, so linear correlations cost it hidden units: on standardised wine
    it is level with one full Gaussian (0.2-0.4 nats ahead), on breast
    cancer, whose near-collinear features the Gaussian takes in its
    covariance, 14-18 nats behind. The User Guide has the tables and how
    each default was chosen.

    Read more in the :ref:`User Guide <gaussian_user_guide>`.

    Parameters
    ----------
    n_components : int, default=128
        Number of hidden units ``n``. On digits 64 units stopped about 2
        nats lower and 256 fluctuated more from epoch to epoch for the same
        mean (User Guide).
    solver : {'cd', 'pcd', 'cg', 'sdcp', 'csdcp', 'pt', 'cpt'}, default='cg'
        Training algorithm, as in :class:`DCPBernoulliRBM`. The default, the
        centred gradient (CD-K with centring), kept improving the held-out
        density on digits over hundreds of epochs where centred S-DCP and PCD
        with one Gibbs step peaked early and fell below their start (the
        persistent chains lag a model that fits more and more modes); the tempered
        replicas of 'pt' and 'cpt' anneal towards independent Gaussians with
        the data's means and standard deviations, as AIS does. Prefer the
        centred ones ('cg', 'csdcp', 'cpt'): with many hidden units the others
        drift along the direction where all the weights of a feature grow
        together while its bias compensates, and diverge unless ``learning_rate *
        n_components`` stays below about 1.
    sigma : 'learn', float or array-like of shape (n_features,), default='learn'
        Standard deviations of the visible units: ``'learn'`` starts them at
        the training data's and learns them (the better density model); a
        positive value (or one per feature) fixes them. On standardised data
        ``sigma=1.0`` gave the better features for a classifier (see the
        User Guide).
    learning_rate : float, default=0.02
        Step size of ``W``, ``b`` and ``c``.
    sigma_learning_rate_factor : float, default=0.1
        Step size of ``log sigma^2`` relative to ``learning_rate`` (Cho et
        al. learn the variances more slowly than the weights). Used with
        ``sigma='learn'``.
    min_sigma : float, default=0.01
        Floor of the learned ``sigma``, in the units of ``X``. Constant
        features (whose ``sigma`` would be 0) and features whose variance
        collapses stay at the floor; fit warns when any does.
    batch_size : int, default=50
        Mini-batch size. An epoch's cost is in its ``rows * n_gibbs_steps``
        Gibbs sweeps, hardly in the number of batches.
    n_iter : int, default=400
        Number of epochs: the gain on digits was still growing at 300 and
        levelled off by 400-500; small data sets (wine, 133 rows) need the
        updates.
    n_gibbs_steps : int, default=10
        Gibbs steps per gradient estimate: ``K`` for 'cd', 'pcd' and 'cg'
        (CD-1 peaks several nats lower on digits; CD-25 is better still but
        2.5 times the time);
        ``K'`` (per inner step) for 'sdcp' and 'csdcp'; sweeps of every
        replica between swap rounds for 'pt' and 'cpt'.
    n_inner_steps : int or None, default=None
        Inner steps ``d`` of 'sdcp' and 'csdcp'; ``None`` means 3.
    centering_rate_visible : float or None, default=None
        Sliding factor of the visible offsets (of ``v / sigma^2``) for 'cg',
        'csdcp' and 'cpt'; ``None`` means 0.01.
    centering_rate_hidden : float or None, default=None
        Sliding factor of the hidden offsets; ``None`` means 0.01.
    n_temperatures : int or None, default=None
        Number of tempered replicas (at least 2) for 'pt' and 'cpt', as in
        :class:`DCPBernoulliRBM`; ``None`` means 4.
    min_beta : float or None, default=None
        Smallest inverse temperature, in (0, 1); ``None`` means 0.5.
    beta_ladder : {'linear', 'geometric'}, array-like or None, default=None
        Spacing of the inverse temperatures, or the temperatures themselves,
        as in :class:`DCPBernoulliRBM`.
    momentum : float, default=0.5
        Momentum of every parameter update. With 0.5 the held-out density
        fluctuated less from epoch to epoch and reached the same level in
        fewer epochs than without.
    weight_decay : float, default=0.0
        L2 penalty on the weights.
    init : fitted GaussianBernoulliRBM or None, default=None
        ``None`` starts from weights ``N(0, 0.01^2)``, hidden biases 0 and
        the independent Gaussians of the training data. A fitted RBM
        estimator starts from its parameters instead (and, with
        ``sigma='learn'``, from its ``sigma_``); it must have
        ``n_components`` hidden units and the data's number of features.
    validation_fraction : float or None, default=None
        Fraction of the training data held out for the verbose output and
        early stopping; ``None`` holds out 0.1 with ``early_stopping=True``,
        else nothing. Ignored when ``fit`` is given ``X_val``.
    early_stopping : bool, default=False
        Stop when the held-out log-likelihood has not improved by ``tol`` for
        ``n_iter_no_change`` epochs, and keep the best parameters seen.
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs.
    tol : float, default=1e-4
        Minimum improvement of the held-out mean log-likelihood.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: enumeration of the hidden layer (the
        visible integral is Gaussian), AIS, or exact while the hidden layer
        has at most 20 units.
    ais_n_chains : int, default=100
        AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures, as in :class:`DCPBernoulliRBM`.
    verbose : int, default=0
        Print one line per epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial weights, the shuffling, the Gibbs chains and the
        AIS chains. The same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix ``W``.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible biases ``b`` (the mean of ``p(v | h = 0)``).
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases ``c``.
    sigma_ : ndarray of shape (n_features,)
        Standard deviations of the visible units.
    offset_visible_ : ndarray of shape (n_features,)
        Centring offsets of ``v / sigma^2`` (zeros for uncentred solvers).
    offset_hidden_ : ndarray of shape (n_components,)
        Centring offsets of ``h`` (zeros for uncentred solvers).
    base_mean_ : ndarray of shape (n_features,)
        Training-data mean: the AIS base model's mean and the start of
        :meth:`sample`.
    base_sigma_ : ndarray of shape (n_features,)
        Training-data standard deviation, floored at ``min_sigma``.
    betas_ : ndarray of shape (n_temperatures,)
        Inverse temperatures of the replicas, ``betas_[0] = 1`` ('pt' and
        'cpt' only; ``sample(method='pt')`` uses them).
    n_iter_ : int
        Epochs run.
    history_ : dict of ndarray
        Per-epoch figures recorded by the training engine; 'pt' and 'cpt'
        add ``'swap_acceptance_t'``, the fraction of accepted swaps between
        ``betas_[t]`` and ``betas_[t + 1]`` in the epoch.
    best_validation_score_ : float or None
        Best held-out mean log-likelihood, when one was computed.
    log_partition_ : LogPartition
        The last ``log Z`` computed, with its band.
    random_state_ : RandomState
        Stream used by :meth:`gibbs`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    DCPBernoulliRBM : The same solvers for binary data.
    sklearn.mixture.GaussianMixture : Another density model of real data.

    References
    ----------
    K. Cho, A. Ilin and T. Raiko. Improved learning of Gaussian-Bernoulli
    restricted Boltzmann machines. ICANN 2011.

    V. Upadhya and P. S. Sastry. Learning RBM with a DC programming approach.
    ACML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_rbm import GaussianBernoulliRBM
    >>> X, _ = load_iris(return_X_y=True)
    >>> model = make_pipeline(
    ...     StandardScaler(),
    ...     GaussianBernoulliRBM(n_components=4, n_iter=50, batch_size=10,
    ...                          random_state=0)).fit(X)
    >>> model.transform(X).shape
    (150, 4)
    >>> bool(model.score(X) > -4 * 0.5 * np.log(2 * np.pi * np.e))
    True
    """

    _parameter_constraints: dict = {
        **RBMTrainer._parameter_constraints,
        "sigma": [
            StrOptions({"learn"}),
            Interval(numbers.Real, 0, None, closed="neither"),
            "array-like",
        ],
        "sigma_learning_rate_factor": [Interval(numbers.Real, 0, None, closed="left")],
        "min_sigma": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        n_components=128,
        *,
        solver="cg",
        sigma="learn",
        learning_rate=0.02,
        sigma_learning_rate_factor=0.1,
        min_sigma=0.01,
        batch_size=50,
        n_iter=400,
        n_gibbs_steps=10,
        n_inner_steps=None,
        centering_rate_visible=None,
        centering_rate_hidden=None,
        n_temperatures=None,
        min_beta=None,
        beta_ladder=None,
        momentum=0.5,
        weight_decay=0.0,
        init=None,
        validation_fraction=None,
        early_stopping=False,
        n_iter_no_change=5,
        tol=1e-4,
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.solver = solver
        self.sigma = sigma
        self.learning_rate = learning_rate
        self.sigma_learning_rate_factor = sigma_learning_rate_factor
        self.min_sigma = min_sigma
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.n_gibbs_steps = n_gibbs_steps
        self.n_inner_steps = n_inner_steps
        self.centering_rate_visible = centering_rate_visible
        self.centering_rate_hidden = centering_rate_hidden
        self.n_temperatures = n_temperatures
        self.min_beta = min_beta
        self.beta_ladder = beta_ladder
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.init = init
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.verbose = verbose
        self.random_state = random_state
