"""DCPBernoulliRBM: a binary RBM trained by CD-K, PCD, the centred gradient,
S-DCP or centred S-DCP (Upadhya & Sastry, ACML 2017), or PCD with a
parallel-tempering negative phase.

A thin class over the RBM trainer (``_rbm/trainer.py``) with Bernoulli
visible units (``_rbm/layers/bernoulli.py``): this module holds the
public surface, its parameters and their documentation. The solver table
(``_rbm/solvers.py``) says what each solver is: a few flags on one compiled
mini-batch update.
"""

from .base import BaseBinaryRBM
from .trainer import RBMTrainer

__all__ = ["DCPBernoulliRBM"]


class DCPBernoulliRBM(RBMTrainer, BaseBinaryRBM):
    """Bernoulli RBM trained by (centred) stochastic DC programming or CD.

    The RBM log-likelihood is a difference of two convex functions,
    ``g(theta) - f(theta)`` with ``f = log Z``. S-DCP (Upadhya & Sastry 2017,
    Algorithms 2-3) takes each mini-batch's data term ``grad g`` once and then
    makes ``n_inner_steps`` (their ``d``) stochastic gradient steps on the
    convex surrogate ``f(theta) - theta^T grad g(theta_t)``, each with
    ``n_gibbs_steps`` (their ``K'``) Gibbs steps of one chain kept across the
    inner steps. With ``d = 1`` it is CD-K. CS-DCP (Algorithm 4) does the same
    with the centred gradient of Melchior, Fischer & Wiskott (2016). The cost
    per mini-batch equals CD-K's when ``d * K' = K``: they compare CD-12
    with (d=3, K'=4) and CD-24 with (d=6, K'=4). Parallel tempering ('pt',
    Desjardins et al. 2010) draws the negative statistics of PCD from the
    ``beta = 1`` replicas of chains run at ``n_temperatures`` inverse
    temperatures that swap states; ``'cpt'`` adds the centring offsets.

    Read more in the :ref:`User Guide <dcp_user_guide>`.

    Parameters
    ----------
    n_components : int, default=256
        Number of hidden units ``n``.
    solver : {'cd', 'pcd', 'cg', 'sdcp', 'csdcp', 'pt', 'cpt'}, default='sdcp'
        Training algorithm: contrastive divergence (chains start at the data),
        persistent CD (chains persist across mini-batches), centred gradient
        (CD with centring offsets), S-DCP, centred S-DCP, parallel tempering
        and centred parallel tempering.
    learning_rate : float, default=0.1
        Step size ``eta`` of every (inner) gradient step. The default makes
        the RBM a drop-in feature extractor: on the MNIST subset (500 units,
        20 epochs) its features give logistic regression 0.941 against 0.937
        for scikit-learn's ``BernoulliRBM`` defaults, at a test log-likelihood
        of -110 nats (``BernoulliRBM``: -171); the user guide has the table.
    batch_size : int, default=100
        Mini-batch size ``N_B``; Upadhya & Sastry use the full data set for their small
        problems and 200 for MNIST.
    n_iter : int, default=20
        Number of epochs (passes over the training data).
    n_gibbs_steps : int, default=1
        Gibbs steps per gradient estimate: ``K`` for 'cd', 'pcd' and 'cg';
        ``K'`` (per inner step) for 'sdcp' and 'csdcp'; the sweeps of every
        replica between swap rounds for 'pt' and 'cpt' (an update then costs
        ``n_temperatures * n_gibbs_steps`` Gibbs steps).
    n_inner_steps : int or None, default=None
        Inner gradient steps ``d`` per mini-batch for 'sdcp' and 'csdcp';
        ``None`` means 3. Setting it for another solver warns (it has no
        effect there).
    centering_rate_visible : float or None, default=None
        Sliding factor ``nu_mu`` of the visible offsets ``mu`` (exponential
        moving average of the data mean) for 'cg', 'csdcp' and 'cpt'; ``None``
        means Upadhya & Sastry's 0.01.
    centering_rate_hidden : float or None, default=None
        Sliding factor ``nu_lambda`` of the hidden offsets ``lambda``;
        ``None`` means 0.01.
    n_temperatures : int or None, default=None
        Number of tempered replicas ``T`` (at least 2) for 'pt' and 'cpt',
        each with ``batch_size`` chains; ``None`` means 4.
    min_beta : float or None, default=None
        Smallest inverse temperature ``beta_{T-1}``, in (0, 1), for 'pt' and
        'cpt'; ``None`` means 0.5.
    beta_ladder : {'linear', 'geometric'}, array-like or None, default=None
        Spacing of the inverse temperatures from 1 down to ``min_beta``:
        linear (``None``; equal steps) or geometric (equal ratios); or the
        inverse temperatures themselves, decreasing strictly from 1 and in
        (0, 1] (then leave ``n_temperatures`` and ``min_beta`` at None). The
        tempered distributions interpolate from the model (``beta = 1``)
        towards the base-rate model (``beta = 0``), as AIS does.
    momentum : float, default=0.0
        Momentum of the parameter updates (off in Upadhya & Sastry's protocol).
    weight_decay : float, default=0.0
        L2 penalty on the weights, added to the weight gradient as
        ``-weight_decay * W`` (off in Upadhya & Sastry's protocol).
    init : fitted RBM estimator or None, default=None
        ``None`` uses Upadhya & Sastry's initialisation: weights ``N(0, 0.01^2)``,
        hidden biases 0, visible biases ``logit`` of the training-data mean
        (the base rate). A fitted RBM-family estimator (for instance a
        :class:`FrankWolfeRBM`) starts from its parameters instead; it must
        have ``n_components`` hidden units and the data's number of features.
    validation_fraction : float or None, default=None
        Fraction of the training data held out to monitor the fit (verbose
        output) and for early stopping. ``None`` holds nothing out unless
        ``early_stopping=True``, which then uses 0.1. Ignored when ``fit`` is
        given held-out data of your own (``X_val``).
    early_stopping : bool, default=False
        Stop when the held-out log-likelihood (computed as ``score`` computes
        it: exact or AIS) has not improved by ``tol`` for ``n_iter_no_change``
        epochs, and keep the best parameters seen. With AIS this costs one
        AIS run per epoch.
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs.
    tol : float, default=1e-4
        Minimum improvement of the held-out mean log-likelihood.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: exact enumeration of the smaller
        layer, AIS, or exact while the smaller layer has at most 20 units.
    ais_n_chains : int, default=100
        AIS chains (Upadhya & Sastry use 100).
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures. The default keeps ``score`` to seconds on
        MNIST-sized models; ``'linear'`` is Upadhya & Sastry's 10,000 and
        ``'three-segment'`` Salakhutdinov & Murray's 14,500.
    verbose : int, default=0
        Print one line per epoch: its time (scoring included), the held-out
        log-likelihood when there are held-out data, the training
        log-likelihood when ``log Z`` is exact (``verbose=2``: also by AIS,
        one AIS run per epoch), and for AIS the width of the band of the
        ``log Z`` estimate, in nats.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial weights, the shuffling, the Gibbs chains and the
        AIS chains. The same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix ``W``.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases ``c`` of the equivalent uncentred RBM.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible biases ``b`` of the equivalent uncentred RBM.
    offset_visible_ : ndarray of shape (n_features,)
        Centring offsets ``mu`` (zeros for uncentred solvers).
    offset_hidden_ : ndarray of shape (n_components,)
        Centring offsets ``lambda`` (zeros for uncentred solvers).
    base_rate_bias_ : ndarray of shape (n_features,)
        ``logit`` of the clipped training-data mean: the AIS base model.
    betas_ : ndarray of shape (n_temperatures,)
        Inverse temperatures of the replicas, ``betas_[0] = 1`` ('pt' and
        'cpt' only; ``sample(method='pt')`` uses them).
    n_iter_ : int
        Epochs run.
    history_ : dict of ndarray
        One entry per epoch (``partial_fit`` adds one per call): ``'epoch'``,
        ``'seconds'`` and, with held-out data, ``'validation_log_likelihood'``
        (the mean held-out log-likelihood, computed as ``score`` computes it);
        ``verbose`` adds the training log-likelihood. 'pt' and 'cpt' add
        ``'swap_acceptance_t'``, the fraction of accepted swaps between
        ``betas_[t]`` and ``betas_[t + 1]`` in the epoch.
    best_validation_score_ : float or None
        Best held-out mean log-likelihood, when there are held-out data.
    random_state_ : RandomState
        Stream used by :meth:`gibbs`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn.neural_network.BernoulliRBM : PCD-1 RBM scored by pseudo-likelihood.

    References
    ----------
    V. Upadhya and P. S. Sastry. Learning RBM with a DC programming approach.
    ACML 2017.

    J. Melchior, A. Fischer and L. Wiskott. How to center deep Boltzmann
    machines. JMLR 17(99), 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm import DCPBernoulliRBM
    >>> from sklearn_rbm.datasets import make_bars_and_stripes
    >>> X = make_bars_and_stripes()
    >>> rbm = DCPBernoulliRBM(n_components=4, solver='csdcp', n_gibbs_steps=4,
    ...                       learning_rate=0.3, batch_size=14, n_iter=200,
    ...                       random_state=0).fit(X)
    >>> rbm.transform(X).shape
    (14, 4)
    >>> bool(rbm.score(X) > -9 * np.log(2))  # better than the uniform model
    True
    """

    def __init__(
        self,
        n_components=256,
        *,
        solver="sdcp",
        learning_rate=0.1,
        batch_size=100,
        n_iter=20,
        n_gibbs_steps=1,
        n_inner_steps=None,
        centering_rate_visible=None,
        centering_rate_hidden=None,
        n_temperatures=None,
        min_beta=None,
        beta_ladder=None,
        momentum=0.0,
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
        self.learning_rate = learning_rate
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
