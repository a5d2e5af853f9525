"""What a type of unit supplies to the RBM trainer: the layer interface.

An RBM is two layers of units coupled by a weight matrix ``W`` of shape
``(n_hidden, n_columns)``. Everything that depends on the *type* of a unit
(Bernoulli, Gaussian, categorical, ReLU, ...) lives in that type's layer
module; the trainer (``_rbm/trainer.py`` and its kernels ``_rbm/kernels.py``)
and the likelihood code never ask which type they hold, as in
RestrictedBoltzmannMachines.jl's ``src/layers`` and jertubiana/PGM's
``layer.py``. A layer has two faces:

**The estimator side**, :class:`Layer`: a small strategy object made from the
estimator's hyperparameters. Its abstract methods are what a new unit type
must supply: the values its units take (:meth:`Layer.check_values`), the
base model of annealed importance sampling fitted to the training data with
the initial bias and the centring offset (:meth:`Layer.fit_base`,
:meth:`Layer.initial_bias`, :meth:`Layer.initial_offset`), its kernel state
(:meth:`Layer.units`), its free-energy term and its input to the other layer
(:meth:`Layer.free_energy`, :meth:`Layer.hidden_input`), where chains start
(:meth:`Layer.sample_start`) and ``log Z`` of an RBM with this visible layer
(:meth:`Layer.exact_log_partition`, and :meth:`Layer.annealing_path`, over
which AIS, reverse annealing and their bracket run).

**The kernel side**: the layer's numba *units*, a ``NamedTuple`` of its
arrays (the bias and any parameters of its own; the trainer adds their
velocities), and its implementations of the hooks below, registered for
that ``NamedTuple`` class with :func:`implements`. The trainer's compiled
kernels call the hooks; numba picks the implementation from the class of the
units at compile time, so a hook costs no call and no branch, and a kernel
compiles once per pair of unit types. Every hook takes the units first and
the *context* second: what the hooks of one call share, made by
:func:`context` (the Gaussian layer's variances; ``None`` for Bernoulli
units). ``inputs`` are a layer's pre-activations from the other layer,
``(n_rows, n_units)``, without the layer's own bias (``field``); statistics
are what the layer's units contribute to the energy's coupling term (the
states of Bernoulli units, ``v / sigma^2`` for Gaussian ones, one-hot codes
for categorical ones).

Hooks of every layer (visible or hidden), ``u`` its units, ``x`` the context:

================================  =============================================
``context(u, W)``                 shared per-call constants (``W``: the dtype)
``mean_(u, x, inputs, field)``    in place: inputs -> conditional means of the
                                  statistics (the gradient's Rao-Blackwellised
                                  statistics)
``sample_(u, x, inputs, field,    in place: inputs -> a draw of the statistics
rng)``
``tempered_sample_``,             the two above at the inverse temperature of
``tempered_mean_``                each row's replica (parallel tempering)
``cumulant_gap(u, j, a, beta,     ``Gamma_j(beta a) - Gamma_j(beta_next a)`` of
beta_next)``                      unit ``j``, ``Gamma_j`` its cumulant
                                  (free-energy term), without cancellation
                                  (swap ratios)
``anneal_``                       one temperature of AIS for the hidden layer:
                                  the chains' weight increments fused with the
                                  draws
``potential_statistics(u, v, x,   hidden layer: the (weighted) row sums of the
S, W, field, weights)``           conditional means of its potential's
                                  sufficient statistics (none, shape ``(0,
                                  n_hidden)``, unless the units train their
                                  potential: dReLU)
``potential_step_``               hidden layer: the step of its potential's
                                  parameters (nothing unless it trains them)
================================  =============================================

Hooks of the visible layer (whose units index the columns of ``W``):

================================  =============================================
``statistics(u, x, V)``           sufficient statistics of data rows (chains
                                  keep their visible state in statistics)
``input_to_hidden(u, x, S, W)``   ``S W^T`` (a gather for categorical units)
``input_from_hidden(u, H, W)``    ``H W``
``column_sums(u, S)``             float64 column sums of statistics
``data_outer_``, ``chain_outer_`` ``out = beta out + alpha H^T (S - mu)``, the
                                  weight gradient's products (a scatter-add
                                  for categorical units)
``step_metric(u, x, g)``          the bias step's per-column preconditioner
``visible_step_``                 the step of ``W`` and the layer's
                                  parameters (:func:`linear_step_` unless the
                                  layer's parameters enter the coupling)
``tempered_context``,             the tempered visible conditional and the
``swap_terms``                    visible part of a swap's Metropolis ratio
``path_context``, ``path_start``, the annealing path from the layer's base
``path_statistics``,              model (AIS): its start, the visible part of
``path_sample``                   a weight increment, the visible draw
``path_sample_keyed_``            in place, the visible draw of reverse
                                  annealing (RAISE), keyed per data row
``sample_keyed_(u, x, ...)``      :func:`sample_` from a given stream (only
                                  the layers that register the linear path
                                  of :func:`bernoulli.implements_linear_path`)
================================  =============================================

The stubs below document each hook's contract; :func:`linear_step_` is the
weight-and-bias step every layer with a linear coupling uses as it is.
"""

import functools
from abc import ABC, abstractmethod

import numpy as np
from numba import types

from ..._core.divergence import blamed_settings
from ..._core.numba_compat import inline_overload
from ..._numerics.blas import gemm_
from ..._numerics.jit import jit
from ..._numerics.steps import bias_step_, column_sum, scale_add_


def is_units(numba_type, classes):
    """Whether ``numba_type`` is the numba type of units of ``classes``."""
    if not isinstance(classes, tuple):
        classes = (classes,)
    return (
        isinstance(numba_type, types.BaseNamedTuple)
        and numba_type.instance_class in classes
    )


def implements(hook, units):
    """Register the decorated function as ``hook`` for the units ``units``
    (a ``NamedTuple`` class or a tuple of them).

    The function takes the hook's arguments (units first) and is compiled
    into its callers (numba ``overload`` with ``inline='always'``); it may
    call any compiled kernel.
    """

    def register(kernel):
        @functools.wraps(kernel)  # numba compares the typer's signature
        def typer(*args):
            if is_units(args[0], units):
                return kernel

        inline_overload(hook)(typer)
        return kernel

    return register


def _hook(*args):
    raise NotImplementedError("a layer hook runs only inside numba kernels")


# ------------------------------------------------------------ every layer
def context(units, W):
    """Constants the hooks of one kernel call share (Gaussian units: their
    variances in ``W``'s dtype), or ``None``."""
    return _hook(units, W)


def mean_(units, ctx, inputs, field):
    """In place: ``inputs[r, j]`` becomes the mean of unit ``j``'s statistic
    given its input ``inputs[r, j] + field_j`` (the Rao-Blackwellised
    statistics of the gradient); returns ``inputs``."""
    return _hook(units, ctx, inputs, field)


def sample_(units, ctx, inputs, field, rng):
    """In place: ``inputs[r, j]`` becomes a draw of the statistic of unit
    ``j`` given its input ``inputs[r, j] + field_j``; returns ``inputs``.
    Draws come from ``rng`` through the counter-based streams of
    ``_numerics/random.py``."""
    return _hook(units, ctx, inputs, field, rng)


def sample_keyed_(units, ctx, inputs, field, key):
    """:func:`sample_` drawing from the counter-based stream ``key``, the
    uniform of entry ``(r, ...)`` at a position fixed by ``r`` (reverse
    annealing keys each data row's chains)."""
    return _hook(units, ctx, inputs, field, key)


def tempered_sample_(units, ctx, tempered, inputs, field, betas, n_chains, rng):
    """:func:`sample_` where row ``r`` belongs to replica ``r // n_chains`` at
    inverse temperature ``betas[r // n_chains]`` (in ``inputs``'s dtype);
    ``tempered`` is :func:`tempered_context`'s value (the hidden layer gets
    ``None``)."""
    return _hook(units, ctx, tempered, inputs, field, betas, n_chains, rng)


def tempered_mean_(units, ctx, inputs, field, betas, n_chains):
    """:func:`mean_` at the inverse temperature of each row's replica."""
    return _hook(units, ctx, inputs, field, betas, n_chains)


def cumulant_gap(units, j, a, beta, beta_next):
    """``Gamma_j(beta a) - Gamma_j(beta_next a)`` of unit ``j`` with total
    input ``a`` (float64), ``Gamma_j`` its cumulant (``softplus`` for a
    Bernoulli unit), computed without cancellation."""
    return _hook(units, j, a, beta, beta_next)


def anneal_(units, log_w, inputs, visible_terms, field, beta, beta_prev, key, sample,
            first_row):  # fmt: skip
    """One temperature of annealing, for the hidden layer: add to each
    chain's ``log_w`` the increment ``(beta - beta_prev) visible_terms[r] +
    sum_j cumulant_gap(inputs[r, j] + field_j, beta, beta_prev)`` and, with
    ``sample``, replace ``inputs`` by draws at ``beta`` from the counter-based
    stream ``key``, row ``r`` drawing what row ``first_row + r`` of a call
    on every chain would (a block of chains, ``_partition/annealing.py``)."""
    return _hook(
        units, log_w, inputs, visible_terms, field, beta, beta_prev, key, sample,
        first_row,
    )  # fmt: skip


def potential_statistics(units, visible, ctx, S, W, field, weights):
    """float64 ``(k, n_hidden)``: for each of the ``k`` sufficient statistics
    ``T(h)`` of the hidden potential, ``sum_r weights[r] E[T(h_j) | v_r]``
    over the rows of the visible statistics ``S`` (``visible``, ``ctx``: the
    visible layer's units and context; ``field`` the hidden bias; ``weights``
    empty for unit weights). ``k = 0`` (nothing computed) for units whose
    potential is fixed."""
    return _hook(units, visible, ctx, S, W, field, weights)


def potential_step_(units, data, chain, scale_data, scale_chain, rate, momentum):
    """In place: one gradient step of the hidden potential's parameters from
    the sums :func:`potential_statistics` of the data (times ``scale_data``)
    and of the chains (times ``scale_chain``); nothing for units whose
    potential is fixed."""
    return _hook(units, data, chain, scale_data, scale_chain, rate, momentum)


def _fixed_potential(numba_type):
    """Whether ``numba_type`` is units without a trained potential (no
    ``potential`` field): the hidden layers other than dReLU."""
    return isinstance(numba_type, types.BaseNamedTuple) and (
        "potential" not in numba_type.instance_class._fields
    )


@inline_overload(potential_statistics)
def _no_potential_statistics(units, visible, ctx, S, W, field, weights):
    if _fixed_potential(units):
        return lambda units, visible, ctx, S, W, field, weights: np.zeros(
            (0, W.shape[0])
        )


@inline_overload(potential_step_)
def _no_potential_step(units, data, chain, scale_data, scale_chain, rate, momentum):
    if _fixed_potential(units):
        return lambda units, data, chain, scale_data, scale_chain, rate, momentum: None


# ------------------------------------------------------- the visible layer
def statistics(units, ctx, V):
    """The sufficient statistics of the data rows ``V`` (``V`` itself for
    Bernoulli units; no copy is made when none is needed)."""
    return _hook(units, ctx, V)


def input_to_hidden(units, ctx, S, W):
    """``S W^T``, the hidden layer's input from the statistics ``S``."""
    return _hook(units, ctx, S, W)


def input_from_hidden(units, H, W):
    """``H W``, the visible layer's input from the hidden statistics ``H``."""
    return _hook(units, H, W)


def column_sums(units, S):
    """Column sums of the statistics ``S``, float64."""
    return _hook(units, S)


def data_outer_(units, ctx, alpha, H, V, S, mu, centred, beta, out):
    """In place: ``out = beta out + alpha H^T D`` with ``D`` the data rows'
    step operand: ``metric * (S - mu)`` (``mu`` only when ``centred``), from
    the rows ``V`` or their statistics ``S``, whichever the layer computes
    from without loss."""
    return _hook(units, ctx, alpha, H, V, S, mu, centred, beta, out)


def chain_outer_(units, ctx, alpha, H, S, mu, centred, beta, out):
    """In place: ``out = beta out + alpha H^T (metric * (S - mu))`` for the
    chains' statistics ``S``."""
    return _hook(units, ctx, alpha, H, S, mu, centred, beta, out)


def step_metric(units, ctx, gradient):
    """The gradient of the visible bias scaled by the layer's preconditioner
    (``sigma^2`` for Gaussian units: their natural gradient); ``gradient``
    itself when there is none."""
    return _hook(units, ctx, gradient)


def euclidean_metric(units, ctx, gradient):
    """:func:`step_metric` of a layer without a preconditioner (register it
    with :func:`implements`)."""
    return gradient


def visible_step_(units, ctx, W, velocity, field, terms, data, chain, centring,
                  rates):  # fmt: skip
    """One gradient step of ``W`` and the visible layer's parameters, in
    place; returns ``(ctx, S_chain)``, renewed when the step changed what
    they depend on. Arguments as for :func:`linear_step_`."""
    return _hook(units, ctx, W, velocity, field, terms, data, chain, centring, rates)


def tempered_context(units, ctx, base, betas, W):
    """What the tempered visible conditionals of every replica share:
    ``base`` is the layer's tempering base model (:meth:`Layer.tempering_base`),
    ``betas`` the ladder (float64)."""
    return _hook(units, ctx, base, betas, W)


def swap_terms(units, ctx, tempered, S, field):
    """``(Q, shift, own_rows)``: the visible part of the log tempered marginal
    is ``beta * shift . Q[r] + (terms of the base model alone)``; ``own_rows``
    says that ``Q`` is an array of its own whose rows must move with the
    states (it is ``S`` itself otherwise)."""
    return _hook(units, ctx, tempered, S, field)


def path_context(units, base, W):
    """What the annealing path's hooks share (the base model, in kernel form)."""
    return _hook(units, base, W)


def path_start(units, path, n_chains, W, rng):
    """``n_chains`` exact draws of the visible rows from the base model."""
    return _hook(units, path, n_chains, W, rng)


def path_statistics(units, path, V):
    """``(S, terms)``: the statistics of the rows ``V`` and, per row, the
    visible part of ``d log p*_beta(v) / d beta`` (float64)."""
    return _hook(units, path, V)


def path_sample(units, path, A, W, beta, rng, first_row):
    """Draws of the visible rows from ``p_beta(v | h)`` for the hidden states
    ``A`` on the annealing path ``base^(1 - beta) exp(-beta E)``, the units'
    bias being the model's; row ``r`` draws what row ``first_row + r`` of a
    call on every chain would, from the keys ``rng`` gives (the number of
    keys a call takes from ``rng`` must not depend on the rows)."""
    return _hook(units, path, A, W, beta, rng, first_row)


def path_sample_keyed_(units, path, A, W, beta, V, keys, step, n_chains):
    """In place: ``V`` (the chains' visible rows, ``W``'s dtype) becomes a draw
    from ``p_beta(v | h)`` for the hidden states ``A``, as
    :func:`path_sample`, with the chains of data row ``e`` (rows ``e *
    n_chains`` to ``(e + 1) * n_chains``) drawing from the streams
    ``step_key(keys[e], step + i)`` (``i < 2``: at most two keys a draw), so
    that a row's chains draw the same numbers whatever rows share the call
    (reverse annealing, ``_partition/kernels.py``). The product ``A W`` goes
    into ``V`` without allocating."""
    return _hook(units, path, A, W, beta, V, keys, step, n_chains)


# ----------------------------------------------------------- the step
@jit
def centred(X, offset, is_centred):
    """``X - offset`` (a new array) when centred, else ``X`` itself."""
    return X - offset if is_centred else X


@jit(inline="always")
def weight_step_(units, ctx, W, velocity, terms, data, chain, centring, rates):
    """In place, the weight step ``W += velocity`` with ``velocity = momentum
    * velocity + rate * (<H^T D>_data - <H^T D>_chains - decay * W)``.

    Without momentum the step goes straight into ``W`` by two accumulating
    products (``gemm``'s ``beta`` carries the decay), so it costs no pass over
    the weights of its own; with momentum it goes into ``velocity``, then
    ``W``. With ``keep`` the data product is computed once per mini-batch,
    in the first inner iteration, into the scratch ``data_term``, and reused
    (the inner iterations of S-DCP); CD and PCD never touch it.
    """
    data_term, keep, first = terms
    V, S, H_pos = data[0], data[1], data[2]
    S_chain, H_neg, n_chains = chain[0], chain[1], chain[4]
    mu, _, is_centred = centring
    rate, momentum, decay = rates
    n_data = V.shape[0]
    if first and keep:
        data_outer_(units, ctx, 1.0, H_pos, V, S, mu, is_centred, 0.0, data_term)
    if momentum > 0.0:
        scale_add_(-rate * decay, W, momentum, velocity)
        target, beta = velocity, 1.0
    else:
        target, beta = W, 1.0 - rate * decay
    if keep:
        scale_add_(rate / n_data, data_term, beta, target)
    else:
        data_outer_(units, ctx, rate / n_data, H_pos, V, S, mu, is_centred, beta,
                    target)  # fmt: skip
    chain_outer_(units, ctx, -rate / n_chains, H_neg, S_chain, mu, is_centred, 1.0,
                 target)  # fmt: skip
    if momentum > 0.0:
        W += velocity


@jit(inline="always")
def linear_step_(units, ctx, W, velocity, field, terms, data, chain, centring,
                 rates):  # fmt: skip
    """The step of ``W`` and the visible bias for a layer whose parameters
    enter the energy only through its bias (Bernoulli, categorical, Gaussian
    with fixed variances): :func:`weight_step_`, then the bias along
    ``step_metric(<S>_data - <S>_chains)``.

    ``field`` is the visible layer's effective (uncentred) bias;
    ``terms`` is ``(data_term, keep, first)``: the weight-sized scratch of the
    data product, whether it is kept across inner iterations, whether this is
    the mini-batch's first; ``data`` is ``(V, S, H_pos, sum_S, sum_H)`` for
    the mini-batch (``H_pos`` its centred hidden means, the sums float64
    column sums of ``S`` and of the uncentred means); ``chain`` is ``(S, H_neg,
    sum_S, sum_H, n_chains)`` for the chains; ``centring`` is ``(mu, lam,
    centred)``; ``rates`` is ``(learning_rate, momentum, weight_decay)``. The
    velocity of the bias is ``units.velocity``. Returns ``(ctx, S_chain)``
    unchanged.
    """
    weight_step_(units, ctx, W, velocity, terms, data, chain, centring, rates)
    n_data, n_chains = data[0].shape[0], chain[4]
    rate, momentum = rates[0], rates[1]
    bias_step_(
        units.bias, step_metric(units, ctx, data[3]),
        step_metric(units, ctx, chain[2]), 1.0 / n_data, 1.0 / n_chains, rate,
        momentum, units.velocity,
    )  # fmt: skip
    return ctx, chain[0]


@jit
def gemm_outer_(alpha, H, D, beta, out):
    """``out = beta out + alpha H^T D`` by one ``gemm``: the outer products
    of layers whose statistics are dense rows."""
    gemm_(alpha, H.T, D, beta, out)


def implements_dense_rows(units):
    """Register for the visible units ``units`` (a ``NamedTuple`` class or a
    tuple of them) the hooks of a layer whose statistics are dense rows, one
    column per column of ``W`` (Bernoulli, Gaussian): ``input_to_hidden`` and
    ``input_from_hidden`` as matrix products, ``column_sums`` as sums."""
    implements(input_to_hidden, units)(_dense_input_to_hidden)
    implements(input_from_hidden, units)(_dense_input_from_hidden)
    implements(column_sums, units)(_dense_column_sums)


def _dense_input_to_hidden(units, ctx, S, W):
    return np.dot(S, W.T)


def _dense_input_from_hidden(units, H, W):
    return np.dot(H, W)


def _dense_column_sums(units, S):
    return column_sum(S)


# ------------------------------------------------------ the estimator side
class Layer(ABC):
    """A type of unit, as the estimators see it (see the module docstring).

    A layer is made from the estimator's hyperparameters and holds no fitted
    arrays: it reads and writes the estimator's (``model``'s) attributes,
    which stay plain arrays for pickling. The abstract methods are what a new
    type of visible unit must supply; the others have defaults that suit
    units whose parameters are their biases alone.

    Attributes
    ----------
    base_attributes : tuple of str
        The estimator attributes holding the base model (set by
        :meth:`fit_base`).
    state_attributes : tuple of str
        The trained arrays of the layer besides its bias (saved with the
        training state, restored after divergence or by early stopping).
    """

    base_attributes = ()
    state_attributes = ()

    # ------------------------------------------------------------- data
    @abstractmethod
    def check_values(self, X, what="X"):
        """``X`` if its values are states of these units, else a ValueError
        naming ``what`` and the fix."""

    # ------------------------------------------------------- the fit's start
    @abstractmethod
    def fit_base(self, model, X):
        """Fit the base model (independent units matching the training data
        ``X``) and set it on ``model`` under :attr:`base_attributes`."""

    @abstractmethod
    def initial_bias(self, model, X, dtype):
        """The visible bias of a fresh fit, in ``dtype``."""

    @abstractmethod
    def initial_offset(self, model, X, dtype):
        """The centring offset of the visible statistics: their mean over the
        training data ``X`` (Melchior, Fischer & Wiskott 2016)."""

    def n_columns(self, model, n_features):
        """The number of columns of ``W`` for data of ``n_features`` columns
        (one per feature, unless a feature has several statistics)."""
        return n_features

    def end_epoch(self, model):
        """Called at the end of every training epoch, before the fitted
        parameters are published (a gauge to fix, for instance)."""
        return None

    def start_training(self, model, X, dtype, init):
        """Set the layer's trained arrays besides its bias (named in
        :attr:`state_attributes`), fresh or copied from the fitted ``init``."""
        return None

    def publish(self, model):
        """Set the fitted attributes derived from the layer's trained arrays."""
        return None

    @abstractmethod
    def units(self, model, bias, velocities):
        """The kernel units of a fit: ``bias`` (the centred visible bias, the
        array the fit trains), the ``velocities`` of :meth:`velocities`, and
        the layer's own trained arrays and step settings from ``model``."""

    def velocities(self, model, bias):
        """Zero velocities of the bias and of the layer's own parameters."""
        return (np.zeros_like(bias),)

    # ---------------------------------------------------------- queries
    @abstractmethod
    def hidden_input(self, model, X):
        """``X``'s input to the hidden units, without their bias (dense,
        in the dtype of ``X``)."""

    @abstractmethod
    def free_energy(self, model, X):
        """``F(v)`` of each row (float64): ``log p(v) = -F(v) - log Z``."""

    @abstractmethod
    def sample_start(self, model, rs, n_rows):
        """``n_rows`` rows drawn from the base model, in the model's dtype:
        where sampling chains start."""

    @abstractmethod
    def sampling_units(self, model, dtype):
        """``(units, ctx, to_statistics, from_statistics)`` for the sampling
        kernels: the fitted layer's kernel units, their context, and the maps
        between rows and their statistics."""

    @abstractmethod
    def tempering_base(self, model, dtype):
        """The kernel form of the model at ``beta = 0`` of parallel tempering
        (the AIS base model)."""

    # ------------------------------------------------------- likelihood
    @abstractmethod
    def enumerated_units(self, model):
        """How many units exact ``log Z`` enumerates (``2 ** k`` states)."""

    @abstractmethod
    def exact_log_partition(self, model):
        """Exact ``log Z`` of the fitted RBM."""

    @abstractmethod
    def annealing_path(self, model):
        """The fitted RBM and its base model as AIS and RAISE take them (an
        :class:`~sklearn_rbm._partition.annealing.AnnealingPath`)."""

    def log_unnormalised(self, model, X):
        """``log p~(v) = -F(v)`` of each validated row."""
        return -self.free_energy(model, X)

    # ------------------------------------------------------- divergence
    def check_new_rows(self, model, X):
        """Warn about rows ``partial_fit`` brings to the fitted ``model`` that
        it cannot be meant to learn (by default: nothing to check)."""
        return None

    def checked_rows(self, rows):
        """The training rows the divergence check watches, as it reads them."""
        return rows

    @abstractmethod
    def divergence_baseline(self, model, rows):
        """The exact mean log-likelihood of ``rows`` under the model every
        fit starts from (independent units: the base model, with the layer's
        starting parameters)."""

    @abstractmethod
    def diagnose(self, model, rows, baseline, parameters):
        """What went wrong with the fitted ``model``, or None: its mean
        log-likelihood of ``rows`` bounded from above without ``log Z``
        against the ``baseline`` (``_core/divergence.diagnose``; the
        trained ``parameters`` are checked for non-finite values)."""

    def divergence(self, model):
        """A sentence on what diverged in the layer's own parameters, or None."""
        return None

    def divergence_advice(self, model):
        """What to change when the fit diverged (a weight decay the user set
        is as much to blame as the learning rate)."""
        names, settings = blamed_settings(
            model, ("learning_rate", "momentum"), if_changed=("weight_decay",)
        )
        smaller = " or ".join(name for name in names if name != "momentum")
        advice = " and less momentum" if model.momentum > 0 else ""
        return f"with {settings}. Use a smaller {smaller}{advice}."

    def after_fit(self, model):
        """Warn about the fitted layer (called at the end of ``fit``)."""
        return None
