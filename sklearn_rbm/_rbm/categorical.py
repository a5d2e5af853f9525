"""CategoricalRBM: categorical (Potts) visible units, binary, Gaussian, ReLU or
dReLU hidden units, the DCP family of solvers, sequence weights and the true
log-likelihood.

A thin class over the RBM trainer (``_rbm/trainer.py``) with categorical
visible units (``_rbm/layers/categorical.py``): the solvers,
``partial_fit``, warm starts, sampling and scoring are the trainer's, as for
:class:`~sklearn_rbm.DCPBernoulliRBM`. This module holds the public surface,
its parameters and their documentation.
"""

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.fit_context import fit_context
from .._core.likelihood_mixin import check_score_settings
from .._core.sklearn_compat import Interval, StrOptions
from .._core.utils import FLOAT_DTYPES, check_array_memory, check_memory
from .._partition.reverse_ais import likelihood_bounds
from .._potts.contacts import coupling_scores
from .._potts.mutations import check_wild_type, single_mutants
from .base import FittedRBM
from .layers.categorical import CategoricalLayer, check_codes
from .layers.drelu import HIDDEN_UNITS
from .layers.site_states import encode_one_hot
from .trainer import RBMTrainer

__all__ = ["CategoricalRBM"]

#: The rule behind ``n_components='auto'`` and ``n_iter='auto'`` (issue 36;
#: the measurements in the User Guide, *Wider families*, printed by
#: ``benchmarks/bench_defaults.py``): PF00014's tuned 100 units and 20
#: epochs (53 columns) as floors; on wider families one hidden unit per
#: column and one epoch per three columns. The best number of epochs on
#: PF13354 (202 columns) was 40-60 on 2,000 and on 6,000 rows alike (more
#: rows did not need fewer epochs, fewer rows overfit with more), so the
#: number of updates grows with the rows through the epochs' length.
_MIN_HIDDEN_UNITS = 100
_MIN_EPOCHS = 20
_COLUMNS_PER_EPOCH = 3


def default_hidden_units(n_sites):
    """``n_components='auto'``: one hidden unit per column, at least 100."""
    return max(_MIN_HIDDEN_UNITS, n_sites)


def default_epochs(n_sites):
    """``n_iter='auto'``: one epoch per three columns, at least 20."""
    return max(_MIN_EPOCHS, -(-n_sites // _COLUMNS_PER_EPOCH))


#: Bytes per value of the input's validation: its float64 copy (8) and the
#: code checks' masks and rounding (14), checked before the copy is made.
_BYTES_PER_VALUE = 22


class CategoricalRBM(RBMTrainer, FittedRBM):
    """RBM with categorical (Potts) visible units and a choice of hidden units.

    Each of the ``L`` columns of the data is a categorical variable with
    ``q`` states, given as integer codes ``0 .. q - 1`` (aligned protein
    sequences with ``q = 21``, ratings, encoded tabular features). The energy
    is ``E(v, h) = -sum_i b_{i v_i} - sum_j h_j (c_j + sum_i W_{j i v_i})``
    (Salakhutdinov, Mnih & Hinton 2007; Tubiana, Cocco & Monasson 2019), so
    that ``p(h_j = 1 | v) = sigmoid(c_j + sum_i W_{j i v_i})`` and each site
    is a softmax given ``h``. ``components_`` has shape ``(n_components, L *
    q)``: ``components_.reshape(n_components, L, q)[j, i, a]`` is the weight
    between hidden unit ``j`` and state ``a`` of site ``i``, and the fields
    ``intercept_visible_`` (``L * q``) are indexed alike. The weights are
    kept in the zero-sum gauge (``sum_a W_{j i a} = 0``), fixed after every
    epoch without changing the model.

    The solvers are those of :class:`DCPBernoulliRBM` (CD-K, PCD, the
    centred gradient, S-DCP and centred S-DCP of Upadhya & Sastry 2017, and
    parallel tempering), with the same hyperparameters; the centring offset
    of a site is its mean one-hot code (the state frequencies). Rows may be
    weighted (``sample_weight``, the sequence weights of protein families).
    ``score`` is the true log-likelihood: exact by enumerating the hidden
    units when there are at most 20, otherwise by annealed importance
    sampling from the independent-site model.

    Read more in the :ref:`User Guide <categorical_user_guide>`.

    Parameters
    ----------
    n_components : int or 'auto', default='auto'
        Number of hidden units. ``'auto'`` takes one per column of the
        training data and at least 100 (100 for 53 columns, 202 for 202);
        with ``init``, the warm start's own number. How this rule and
        ``n_iter``'s were chosen: User Guide, *Wider families*.
    n_states : int, array-like of int or None, default=None
        Number of states ``q`` of every column, or one per column (columns
        with fewer states than the largest are padded to it: the padded
        states have weight 0 and probability 0); ``None`` infers one ``q``
        from the training data as its largest code plus one (integer codes
        only).
    one_hot : bool, default=False
        Whether ``X`` is one-hot (dense or sparse): ``sum(n_states)``
        columns, the ``n_states[i]`` indicator columns of column ``i`` side
        by side (the layout of :class:`~sklearn.preprocessing.OneHotEncoder`),
        each block holding exactly one 1. ``n_states`` must then be given.
        The fit is the fit on the integer codes; ``transform``, ``score``
        and the other queries take one-hot rows too, and ``sample`` returns
        them.
    hidden_unit : {'bernoulli', 'gaussian', 'relu', 'drelu'}, \
            default='bernoulli'
        Type of the hidden units: binary; Gaussian of unit precision
        (potential ``h^2 / 2``); ReLU of unit curvature (``h^2 / 2`` on
        ``h >= 0``); or the double ReLU of Tubiana, Cocco & Monasson (2019),
        ``U(h) = gamma_+ h_+^2 / 2 + theta_+ h_+ + gamma_- h_-^2 / 2 +
        theta_- h_-``, whose four parameters per unit are trained with the
        weights by every solver (fitted as ``gamma_plus_`` ...). The hidden
        bias ``c`` is the linear term of each (``-theta``). With continuous
        hidden units the exact ``log Z`` enumerates the ``n_states **
        n_features`` visible states (``'auto'`` while that is at most
        ``2^20``).
    solver : {'cd', 'pcd', 'cg', 'sdcp', 'csdcp', 'pt', 'cpt'}, default='csdcp'
        Training algorithm, as for :class:`DCPBernoulliRBM`. The default,
        centred S-DCP at ``learning_rate=0.05``, had the best held-out
        log-likelihood per sequence of four candidates on PF00014 (80/20
        split, reweighted: -83.62 against -88.40 for PCD at 0.01, -84.06 for
        PCD at 0.05, -85.33 for centred S-DCP at 0.01; independent sites
        -89.34) and on two generated Potts families (30 x 4: -34.01 against
        -35.70 for PCD at 0.01, independent -35.69; 40 x 6: -67.82 against
        -68.15, independent -68.13), at 2.5 times PCD's time.
    learning_rate : float, default=0.05
        Step size of every (inner) gradient step.
    batch_size : int, default=100
        Mini-batch size (and number of persistent chains).
    n_iter : int or 'auto', default='auto'
        Number of epochs of ``fit``. ``'auto'`` runs one epoch per three
        columns of the training data and at least 20 (20 epochs for 53
        columns, 68 for 202): wider families need more updates, and an
        epoch over more rows makes more of them. With ``early_stopping``
        it is the most that are run.
    n_gibbs_steps : int, default=1
        Gibbs steps per gradient estimate (see :class:`DCPBernoulliRBM`).
    n_inner_steps : int or None, default=None
        Inner steps of 'sdcp' and 'csdcp' (``None``: 3).
    centering_rate_visible, centering_rate_hidden : float or None, default=None
        Sliding factors of the centring offsets ('cg', 'csdcp', 'cpt');
        ``None`` means 0.01.
    n_temperatures, min_beta, beta_ladder : default=None
        The tempering ladder of 'pt' and 'cpt' (see :class:`DCPBernoulliRBM`);
        the tempered distributions interpolate towards the independent-site
        model.
    momentum : float, default=0.0
        Momentum of the parameter updates.
    weight_decay : float, default=0.0
        L2 penalty on the weights (``weight_decay / 2 * ||W||^2``).
    l2_fields : float, default=0.0
        L2 penalty on the fields, ``l2_fields / 2 * ||b||^2``.
    l1b : float, default=0.0
        The ``L1^2`` penalty of Tubiana, Cocco & Monasson (2019) on the
        weights, ``l1b / (2 L q) * sum_j (sum_{i a} |W_{j i a}|)^2``, which
        makes the hidden units' weights sparse (they use 0.25 on protein
        families).
    init : fitted CategoricalRBM or None, default=None
        Warm start from a fitted RBM with ``n_components`` hidden units and
        the same ``L * q`` columns.
    validation_fraction : float or None, default=None
        Fraction of the training data held out for monitoring and early
        stopping (``None``: nothing, or 0.1 with ``early_stopping``).
    early_stopping : bool, default=False
        Stop when the held-out log-likelihood stops improving.
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs.
    tol : float, default=1e-4
        Minimum improvement of the held-out mean log-likelihood.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: enumeration of the hidden units,
        AIS, or exact while there are at most 20 hidden units.
    ais_n_chains : int, default=100
        AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures.
    verbose : int, default=0
        Print one line per epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial weights, the shuffling, the chains and AIS; the
        same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_sites * n_states)
        Weights ``W`` in the zero-sum gauge.
    intercept_visible_ : ndarray of shape (n_sites * n_states,)
        Fields ``b`` of the equivalent uncentred RBM.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases ``c``.
    gamma_plus_, gamma_minus_ : ndarray of shape (n_components,)
        Curvatures of the dReLU potentials on each side of 0 (only with
        ``hidden_unit='drelu'``).
    theta_plus_, theta_minus_ : ndarray of shape (n_components,)
        Thresholds of the dReLU potentials on each side (only with
        ``hidden_unit='drelu'``; the unit's input includes
        ``intercept_hidden_``).
    offset_visible_, offset_hidden_ : ndarray
        Centring offsets (zeros for uncentred solvers).
    site_fields_ : ndarray of shape (n_sites, n_states)
        Log-probabilities of the independent-site model fitted to the
        (weighted) training data: the initial fields and the AIS base model.
    n_states_ : int or ndarray of shape (n_sites,)
        Number of states per column, or of each column when they differ
        (``n_states`` in the shapes above is then the largest).
    betas_ : ndarray
        Inverse temperatures of the replicas ('pt' and 'cpt').
    n_iter_ : int
        Epochs run.
    history_ : dict of ndarray
        One entry per epoch, as for :class:`DCPBernoulliRBM`.
    best_validation_score_ : float or None
        Best held-out mean log-likelihood.
    random_state_ : RandomState
        Stream used by :meth:`gibbs`.
    n_features_in_ : int
        Number of columns seen during fit: ``L`` (``n_sites`` in the shapes
        above), or ``sum(n_states)`` with ``one_hot``.

    References
    ----------
    J. Tubiana, S. Cocco and R. Monasson. Learning protein constitutive motifs
    from sequence data. eLife 8:e39397, 2019.

    R. Salakhutdinov, A. Mnih and G. Hinton. Restricted Boltzmann machines for
    collaborative filtering. ICML 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm import CategoricalRBM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(200, 4))
    >>> rbm = CategoricalRBM(n_components=3, n_iter=5, random_state=0).fit(X)
    >>> rbm.components_.shape
    (3, 12)
    >>> rbm.sample(2, n_steps=10, random_state=0).shape
    (2, 4)
    """

    _parameter_constraints: dict = {
        **RBMTrainer._parameter_constraints,
        "n_components": [
            Interval(numbers.Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "n_iter": [
            Interval(numbers.Integral, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "n_states": [
            Interval(numbers.Integral, 2, None, closed="left"),
            "array-like",
            None,
        ],
        "one_hot": ["boolean"],
        "hidden_unit": [StrOptions(set(HIDDEN_UNITS))],
        "l2_fields": [Interval(numbers.Real, 0, None, closed="left")],
        "l1b": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components="auto",
        *,
        n_states=None,
        one_hot=False,
        hidden_unit="bernoulli",
        solver="csdcp",
        learning_rate=0.05,
        batch_size=100,
        n_iter="auto",
        n_gibbs_steps=1,
        n_inner_steps=None,
        centering_rate_visible=None,
        centering_rate_hidden=None,
        n_temperatures=None,
        min_beta=None,
        beta_ladder=None,
        momentum=0.0,
        weight_decay=0.0,
        l2_fields=0.0,
        l1b=0.0,
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
        self.n_states = n_states
        self.one_hot = one_hot
        self.hidden_unit = hidden_unit
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
        self.l2_fields = l2_fields
        self.l1b = l1b
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

    def _visible_layer(self):
        return CategoricalLayer(self.n_states_, self._hidden_layer(), self.one_hot)

    def _hidden_layer(self):
        return HIDDEN_UNITS[self.hidden_unit].bind(self)

    def _hidden_units(self, X):
        if self.n_components != "auto":
            return self.n_components
        if hasattr(self.init, "components_"):  # a warm start keeps its units
            return np.shape(self.init.components_)[0]
        return default_hidden_units(X.shape[1])

    def _epochs_of_fit(self, n_rows):
        if self.n_iter != "auto":
            return self.n_iter
        return default_epochs(self.site_fields_.shape[0])

    def _initialise(self, X, rs):
        if self.init is not None and not isinstance(self.init, CategoricalRBM):
            # Another RBM's weights of the same width are not categorical
            # weights: its visible units mean something else.
            raise TypeError(
                f"init must be a fitted CategoricalRBM (or None), got a "
                f"{type(self.init).__name__}: pass a CategoricalRBM fitted on "
                "the same columns."
            )
        # A refit with another hidden unit type drops what the previous type
        # fitted: its layer's bind() would otherwise read stale parameters.
        for layer in HIDDEN_UNITS.values():
            if layer.name != self.hidden_unit:
                for name in layer.fitted_attributes:
                    self.__dict__.pop(name, None)
        return super()._initialise(X, rs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.one_hot  # one-hot rows may be sparse
        return tags

    # ------------------------------------------------------------ validation
    def _validate_training_data(self, X, reset=True):
        """Integer codes (decoded from one-hot rows with ``one_hot``) checked
        for ``fit``; the first fit (``reset``) fixes ``n_states_``."""
        check_score_settings(self)
        check_array_memory(X, "X", _BYTES_PER_VALUE)
        X = validate_data(self, X, accept_sparse="csr" if self.one_hot else False,
                          dtype=FLOAT_DTYPES, reset=reset)  # fmt: skip
        if reset:
            self.n_states_ = self._states_of_columns(X)
        return self._visible_layer().check_values(X)

    def _states_of_columns(self, X):
        """``n_states_`` for the training data ``X`` (validated, not decoded):
        one ``q`` (given, or the largest code plus one) or one per column;
        the memory of the ``L * q``-wide arrays checked."""
        q = self.n_states
        if q is not None and np.ndim(q):
            q = _check_states_per_column(q, X.shape[1], self.one_hot)
        elif self.one_hot:
            if q is None or X.shape[1] % q:
                raise ValueError(
                    f"one_hot=True needs n_states (one number, or one per column) "
                    f"whose sum is the width of X, {X.shape[1]}; got n_states={q!r}."
                )
        if q is None:
            check_codes(X, None)
            largest = X.max() if X.size else 1.0
            q = max(int(largest) + 1, 2)
            what = (
                f"X's largest code {largest:g} (n_states=None takes it plus "
                f"one: {q} states) with {X.shape[1]} columns"
            )
            fix = "Encode X as codes 0 .. q - 1 with a small q."
        else:
            what = f"n_states={self.n_states} with {X.shape[1]} columns"
            fix = "Use fewer states (n_states): codes must lie below it."
        n_sites = np.size(q) if np.ndim(q) else X.shape[1] // (q if self.one_hot else 1)
        # The fields, the frequencies and the one-hot rows are L * q wide.
        check_memory(8 * max(X.shape[0], 1) * n_sites * int(np.max(q)), what, fix)
        return q if np.ndim(q) else int(q)

    def _score_fit_rows(self, rows):
        # The fit holds integer codes; score takes what fit took.
        if self.one_hot:
            layer = self._visible_layer()
            rows = encode_one_hot(
                rows, layer.states_of_sites(rows.shape[1]), rows.dtype
            )
        return self.score(rows)

    def _validate_query(self, X, name="X"):
        check_is_fitted(self, "components_")
        check_array_memory(X, name, _BYTES_PER_VALUE)
        X = validate_data(self, X, accept_sparse="csr" if self.one_hot else False,
                          dtype=FLOAT_DTYPES, reset=False)  # fmt: skip
        return self._visible_layer().check_values(X, name)

    # ------------------------------------------------------------------ fit
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None, *, X_val=None):
        """Fit the RBM to the integer codes ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Integer codes ``0 .. n_states - 1``, one column per site; with
            ``one_hot``, their one-hot rows (dense or sparse).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows (sequence weights). The data
            term of the gradient, the independent-site model and the
            centring offsets are weighted means over the rows.
        X_val : {array-like, sparse matrix} of shape (n_val, n_features), \
                default=None
            Held-out rows (as ``X``) for early stopping and the verbose output, used
            instead of holding out ``validation_fraction`` of ``X``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, X_val, sample_weight)

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """One epoch over ``X`` in mini-batches, continuing chains and offsets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Integer codes, or one-hot rows with ``one_hot``.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows, scaled to mean 1 within the call.

        Returns
        -------
        self : object
            The estimator, one epoch further.
        """
        return self._partial_fit(X, sample_weight)

    # --------------------------------------------------------------- queries
    def transform(self, X):
        """Hidden-unit conditional means ``E[h | v]``.

        ``p(h = 1 | v)`` for binary units.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Integer codes, or one-hot rows with ``one_hot``.

        Returns
        -------
        H : ndarray of shape (n_samples, n_components)
            The hidden units' conditional means at their inputs ``c_j +
            sum_i W_{j i v_i}`` (``sigmoid`` of them for binary units).
        """
        return super().transform(X)

    def log_likelihood_bounds(self, X):
        """Mean log-likelihood of ``X`` bracketed by reverse and forward AIS.

        As :meth:`DCPBernoulliRBM.log_likelihood_bounds`: ``upper`` comes
        from forward AIS (Salakhutdinov & Murray 2008) from the
        independent-site model, with ``ais_n_chains`` chains, ``ais_betas``
        and the random stream fixed at fit time (the run :meth:`score` uses
        with ``score_method='ais'``), taking the lower end of its ``log Z``
        band; ``lower`` is the mean RAISE estimate (Burda, Grosse &
        Salakhutdinov 2015), 10 reverse chains per row from an
        independent-site model fitted to the RBM's own samples (the forward
        chains' weighted state frequencies), less three Monte Carlo standard
        errors. Each end is a bound with high probability; when
        ``ais_betas`` is a count it is doubled while the ends cross, and
        ``lower <= upper`` always (see
        :func:`~sklearn_rbm.likelihood.log_likelihood_bounds`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Integer codes to score.

        Returns
        -------
        bounds : LikelihoodBounds
            ``(lower, upper)``, mean log-likelihoods per sequence in nats.
        """
        X = self._validate_query(X)
        path = self._visible_layer().annealing_path(self)
        return likelihood_bounds(
            X, path, n_chains=self.ais_n_chains, n_reverse_chains=10,
            betas=self.ais_betas, random_state=self._ais_seed,
        )  # fmt: skip

    def effective_couplings(self):
        """Effective pairwise couplings of the fitted RBM's marginal over ``v``.

        Tubiana, Cocco & Monasson's second-order expansion of the hidden
        units' cumulants around the mean input: ``J_{ij}(a, b) = sum_mu
        Gamma''_mu(I_mu) W_{mu i a} W_{mu j b}`` for ``i != j``, with
        ``Gamma''`` the conditional variance of hidden unit ``mu`` (``s (1 -
        s)`` for a Bernoulli unit of mean ``s``) at its mean input over the model's
        independent-site approximation ``I_mu = c_mu + sum_{i a} f_{i a}
        W_{mu i a}`` (``f`` the site frequencies ``site_fields_``), in the
        zero-sum gauge.

        Returns
        -------
        J : ndarray of shape (n_sites, n_sites, n_states, n_states)
            ``J[i, j, a, b]``; ``J[i, i] = 0``.
        """
        check_is_fitted(self, "components_")
        layer = self._visible_layer()
        W = np.asarray(self.components_, np.float64)
        n_hidden = W.shape[0]
        W3 = layer.zero_sum(W.reshape(n_hidden, -1, layer.n_states))
        frequencies = np.exp(self.site_fields_)
        inputs = self.intercept_hidden_ + W.reshape(n_hidden, -1) @ frequencies.ravel()
        variance = self._hidden_layer().variance(inputs)
        J = np.einsum("m,mia,mjb->ijab", variance, W3, W3)
        n_sites = J.shape[0]
        J[np.arange(n_sites), np.arange(n_sites)] = 0.0
        return J

    def contact_scores(self, apc=True):
        """Contact scores of pairs of sites from the effective couplings.

        The Frobenius norm of each block of :meth:`effective_couplings` (in
        the zero-sum gauge), with the average product correction of Dunn,
        Wahl & Gloor (2008) when ``apc``: the scores of
        :meth:`sklearn_rbm.PottsPseudoLikelihood.contact_scores`, so that an
        RBM and a Potts model compare on contact prediction (rank them with
        :func:`sklearn_rbm.sequences.top_contacts`).

        Parameters
        ----------
        apc : bool, default=True
            Subtract ``F_i F_j / F`` (row, column and overall means of the
            off-diagonal norms).

        Returns
        -------
        scores : ndarray of shape (n_sites, n_sites)
            Symmetric, zero on the diagonal.
        """
        if not isinstance(apc, (bool, np.bool_)):
            raise ValueError(f"apc must be True or False, got {apc!r}.")
        return coupling_scores(self.effective_couplings(), apc)

    def mutation_effects(self, wild_type):
        """Log-probability change of every single mutant of ``wild_type``.

        ``effects[i, a] = log P(mutant) - log P(wild type) = F(wild type) -
        F(mutant)`` for the mutant with site ``i`` in state ``a`` (``F`` the
        free energy, :meth:`free_energy`): positive when the mutant is more
        probable, zero at the wild type's own states, as
        :meth:`sklearn_rbm.PottsBoltzmannMachine.mutation_effects`. States
        beyond a site's ``n_states`` get ``-inf``.

        Parameters
        ----------
        wild_type : array-like of shape (n_sites,)
            State codes of the reference sequence (codes also with
            ``one_hot``).

        Returns
        -------
        effects : ndarray of shape (n_sites, max(n_states))
            The change of log-probability of each single mutant.
        """
        check_is_fitted(self, "components_")
        layer = self._visible_layer()
        if np.ndim(self.n_states_):
            n_sites = np.size(self.n_states_)
        elif self.one_hot:
            n_sites = self.n_features_in_ // self.n_states_
        else:
            n_sites = self.n_features_in_
        states = layer.states_of_sites(n_sites)
        s = check_wild_type(wild_type, n_sites, states)
        rows, valid = single_mutants(s, states)
        rows = np.vstack([s[None, :], rows]).astype(np.float64)
        if self.one_hot:
            rows = encode_one_hot(rows, states, np.float64)
        F = self.free_energy(rows)
        effects = (F[0] - F[1:]).reshape(valid.shape)
        effects[~valid] = -np.inf
        return effects


def _check_states_per_column(n_states, n_columns, one_hot):
    """``n_states`` given per column as an int64 array (or one int when they
    are all equal), checked against the ``n_columns`` of ``X``."""
    states = np.asarray(n_states)
    if (
        states.ndim != 1
        or states.dtype.kind not in "iuf"
        or np.any(states != np.round(states))
        or np.any(states < 2)
    ):
        raise ValueError(
            "n_states must be an int >= 2 or a 1-D array of ints >= 2 (one per "
            f"column); got {n_states!r}."
        )
    states = states.astype(np.int64)
    width = int(states.sum()) if one_hot else states.size
    if width != n_columns:
        layout = "sum(n_states) one-hot columns" if one_hot else "one column per site"
        raise ValueError(
            f"n_states has {states.size} entries (summing to {states.sum()}) but "
            f"X has {n_columns} columns; with one_hot={one_hot} X needs {layout}."
        )
    return int(states[0]) if np.all(states == states[0]) else states
