"""The instance registry: one small, quick instance of every public estimator
for every solver (and both branches where a setting switches code paths), the
tiny data each one fits, and the fingerprint of a fit.

``tests/test_common.py`` runs scikit-learn's estimator checks and the generic
properties (bit-identity across processes, sparse = dense, float32 against
float64, read-only memmaps, persistence, clone) over :data:`INSTANCES`;
``tests/test_contract.py`` runs the bad-input battery over them. Both assert
that every solver an estimator accepts has an instance here, so a new solver
is covered the day it is added.

Run as a script (``python tests/instances.py``), it prints the fingerprint of
every instance's fit as JSON: the cross-process bit-identity test runs it once
in a subprocess with one thread.
"""

import hashlib
import json
import sys
from inspect import signature

import numpy as np
from sklearn.base import clone

from sklearn_rbm import (
    CategoricalRBM,
    ConditionalRBMRegressor,
    DCPBernoulliRBM,
    FrankWolfeRBM,
    FVBMPseudoLikelihood,
    GaussianBernoulliRBM,
    PottsBoltzmannMachine,
    PottsPseudoLikelihood,
)
from sklearn_rbm._rbm.layers.site_states import encode_one_hot
from sklearn_rbm.datasets import make_fvbm

RBM_SOLVERS = ("cd", "pcd", "cg", "sdcp", "csdcp", "pt", "cpt")
GAUSSIAN_STEPS = dict(learning_rate=0.01, momentum=0.0, n_gibbs_steps=1)

INSTANCES = [
    *(
        DCPBernoulliRBM(
            n_components=8, solver=solver, n_iter=3, batch_size=10, random_state=0
        )
        for solver in RBM_SOLVERS
    ),
    # Both ways of inserting a unit: the line search and the literal alpha_t = t.
    *(
        FrankWolfeRBM(
            max_components=3,
            unit_scale=unit_scale,
            n_samples_per_step=20,
            n_gibbs_steps=2,
            n_bias_steps=2,
            random_state=0,
        )  # fmt: skip
        for unit_scale in ("line-search", "one")
    ),
    *(
        ConditionalRBMRegressor(
            n_components=3, solver=solver, n_iter=2, n_gibbs_steps=2, random_state=0
        )
        for solver in ("cd", "cd-percloss", "mf", "bp", "mssvm", "lssvm")
    ),
    *(
        FVBMPseudoLikelihood(solver=solver, random_state=0)
        for solver in ("newton", "nodewise", "bslm", "ga", "mm", "lbfgs")
    ),
    FVBMPseudoLikelihood(penalty="l1", alpha=0.01, random_state=0),
    # sigma learned with every solver, and fixed (the kernel's other branch);
    # the steps of the defaults before issue 36 (the checks' data are not
    # standardised, and the uncentred solvers need the smaller step there).
    *(
        GaussianBernoulliRBM(
            n_components=4,
            solver=solver,
            n_iter=3,
            batch_size=10,
            random_state=0,
            **GAUSSIAN_STEPS,
        )
        for solver in RBM_SOLVERS
    ),
    GaussianBernoulliRBM(
        n_components=4,
        solver="cd",
        sigma=1.0,
        n_iter=3,
        batch_size=10,
        random_state=0,
        **GAUSSIAN_STEPS,
    ),
    *(
        PottsPseudoLikelihood(lambda_e=1.0, solver=solver, random_state=0)
        for solver in ("lbfgs", "newton", "nodewise")
    ),
    PottsPseudoLikelihood(lambda_e=1.0, alpha=1.0, solver="proximal", random_state=0),
    # Maximum likelihood on persistent chains; the L1 penalty's proximal step.
    PottsBoltzmannMachine(n_chains=200, max_iter=20, random_state=0),
    PottsBoltzmannMachine(n_chains=200, max_iter=20, l1=0.01, l2=0.01, random_state=0),
    # Tempered persistent chains.
    PottsBoltzmannMachine(n_chains=100, max_iter=20, n_temperatures=2, random_state=0),
    # Sparse couplings, grown and pruned.
    *(
        PottsBoltzmannMachine(
            n_chains=200, max_iter=20, couplings=couplings, random_state=0
        )
        for couplings in ("activation", "decimation")
    ),
    *(
        CategoricalRBM(
            n_components=4, solver=solver, n_iter=3, batch_size=10, random_state=0
        )
        for solver in RBM_SOLVERS
    ),
    # The continuous hidden layers.
    *(
        CategoricalRBM(
            n_components=4,
            solver=solver,
            hidden_unit=hidden_unit,
            n_iter=3,
            batch_size=10,
            learning_rate=0.01,
            random_state=0,
        )  # fmt: skip
        for solver, hidden_unit in (
            ("pcd", "relu"),
            ("cpt", "gaussian"),
            ("csdcp", "drelu"),
            ("cpt", "drelu"),
        )
    ),
    # One-hot input (dense or sparse), one number of states for every column.
    CategoricalRBM(4, n_states=3, one_hot=True, solver="pcd", n_iter=3, random_state=0),
    # The penalties (the visible step's other branch).
    CategoricalRBM(
        n_components=4,
        solver="pcd",
        n_iter=3,
        batch_size=10,
        l1b=0.1,
        l2_fields=0.1,
        random_state=0,
    ),
]


#: Instances for the bad-input contract only: their number of states per
#: column fixes the width of X, which scikit-learn's checks vary.
CONTRACT_ONLY_INSTANCES = [
    CategoricalRBM(4, n_states=[3, 3, 3, 3, 4], n_iter=3, random_state=0, **setting)
    for setting in (
        {"hidden_unit": "drelu", "solver": "pcd"},
        {"one_hot": True, "solver": "csdcp"},
    )
]


def instance_id(estimator):
    """A short test id: the class and the setting that tells instances apart."""
    setting = getattr(estimator, "solver", getattr(estimator, "unit_scale", ""))
    if getattr(estimator, "penalty", None) == "l1":
        setting += "-l1"
    if getattr(estimator, "l1b", 0.0):
        setting += "-penalties"
    if getattr(estimator, "l1", 0.0):
        setting += "-l1"
    if getattr(estimator, "hidden_unit", "bernoulli") != "bernoulli":
        setting += f"-{estimator.hidden_unit}"
    if getattr(estimator, "sigma", "learn") != "learn":
        setting += "-fixed-sigma"
    if np.ndim(getattr(estimator, "n_states", None)):
        setting += "-per-column"
    if getattr(estimator, "one_hot", False):
        setting += "-one-hot"
    if getattr(estimator, "couplings", "dense") != "dense":
        setting += f"-{estimator.couplings}"
    if (getattr(estimator, "n_temperatures", None) or 1) > 1:
        setting += "-tempered"
    return f"{type(estimator).__name__}-{setting}"


def solvers_of(Estimator):
    """The solvers an estimator's parameter constraints accept (empty when it
    has no ``solver``)."""
    constraints = Estimator._parameter_constraints.get("solver", [])
    return {option for c in constraints for option in getattr(c, "options", ())}


# ------------------------------------------------------------ tiny data
def _binary(n_samples, n_features, seed):
    """Binary rows with no constant column (every column flips at least once)."""
    rng = np.random.RandomState(seed)
    X = (rng.random_sample((n_samples, n_features)) < 0.4).astype(np.float64)
    X[0], X[1] = 0.0, 1.0
    return X


def _codes(n_samples, n_features, n_states, seed):
    """Integer codes with every state present in every column, as floats."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, n_states, size=(n_samples, n_features)).astype(np.float64)
    X[:n_states] = np.arange(n_states)[:, None]
    return X


def _real(n_samples, n_features, seed):
    """Standardised real rows, exactly representable in float16 (so that a
    float16 copy is the same data)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n_samples, n_features)).astype(np.float16)
    return X.astype(np.float64)


def _codes(n_samples, n_features, n_states, seed):
    """Integer state codes (float64, as the checks' data arrive) with every
    state present in every column and one coupled pair of columns."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, n_states, size=(n_samples, n_features))
    X[:n_states] = np.arange(n_states)[:, None]
    X[n_states:, 1] = np.where(rng.random_sample(n_samples - n_states) < 0.7,
                               X[n_states:, 0], X[n_states:, 1])  # fmt: skip
    return X.astype(np.float64)


def training_data(estimator):
    """The arguments of ``fit`` for the tiny problem each estimator gets."""
    if isinstance(estimator, PottsPseudoLikelihood):
        return (_codes(60, 5, 3, 7),)
    if isinstance(estimator, PottsBoltzmannMachine):
        return (_codes(60, 5, 3, 7),)
    if isinstance(estimator, FVBMPseudoLikelihood):
        X, _, _ = make_fvbm(120, 5, coupling_variance=0.2, random_state=0)
        return (X,)
    if isinstance(estimator, ConditionalRBMRegressor):
        X = _real(40, 5, 1)
        Y = (X[:, :3] + 0.5 * _real(40, 3, 2) > 0).astype(np.float64)
        return X, Y
    if isinstance(estimator, GaussianBernoulliRBM):
        return (_real(40, 6, 3),)
    if isinstance(estimator, CategoricalRBM):
        codes = _codes(40, 5, 3, 7)
        if estimator.one_hot:  # the width of n_states' columns
            states = np.broadcast_to(estimator.n_states, (5,))
            return (encode_one_hot(codes, states),)
        return (codes,)
    return (_binary(40, 6, 4),)


# ----------------------------------------------------------- fingerprints
def fitted_arrays(estimator):
    """The fitted array attributes (``name_``) of an estimator, by name."""
    return {
        name: value
        for name, value in sorted(vars(estimator).items())
        if name.endswith("_")
        and not name.startswith("_")
        and isinstance(value, np.ndarray)
    }


def _digest(arrays):
    digest = hashlib.sha256()
    for name, value in arrays.items():
        value = np.asarray(value)
        if value.dtype.kind in "fiub":
            digest.update(name.encode() + np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()


def _random_outputs(fitted):
    """What a fitted estimator draws at random or estimates: its samples and,
    with AIS, its scores."""
    X = training_data(fitted)[0]
    outputs = {}
    if hasattr(fitted, "sample"):
        outputs["sample"] = fitted.sample(3)
    if hasattr(fitted, "betas_") and "method" in signature(fitted.sample).parameters:
        outputs["sample_pt"] = fitted.sample(3, n_steps=20, method="pt")
    if hasattr(fitted, "score_samples"):
        fitted.set_params(score_method="ais", ais_n_chains=5, ais_betas=30)
        outputs["score_samples_ais"] = fitted.score_samples(X)
    return outputs


def fingerprint(estimator):
    """SHA-256 of every fitted array of ``estimator`` fitted on its tiny data,
    of its samples and of its AIS scores."""
    fitted = clone(estimator).fit(*training_data(estimator))
    return _digest({**fitted_arrays(fitted), **_random_outputs(fitted)})


def _random_functions():
    """The public functions that draw random numbers, on tiny problems."""
    from sklearn_rbm import datasets, likelihood

    rng = np.random.RandomState(0)
    W, b, c = 0.5 * rng.randn(3, 6), rng.randn(6), rng.randn(3)
    V = _binary(5, 6, 5)
    R = _real(5, 6, 6)
    settings = dict(n_chains=4, betas=20, random_state=3)
    return {
        "log_partition_ais": lambda: (
            likelihood.log_partition_ais(W, b, c, **settings).log_z
        ),
        "log_likelihood_raise": lambda: likelihood.log_likelihood_raise(
            V, W, b, c, **settings
        ),
        "gaussian_log_partition_ais": lambda: (
            likelihood.gaussian_log_partition_ais(W, b, c, 1.0, **settings).log_z
        ),
        "gaussian_log_likelihood_raise": lambda: (
            likelihood.gaussian_log_likelihood_raise(R, W, b, c, 1.0, **settings)
        ),
        "log_likelihood_bounds": lambda: np.array(
            likelihood.log_likelihood_bounds(V, W, b, c, **settings)
        ),
        "gaussian_log_likelihood_bounds": lambda: np.array(
            likelihood.gaussian_log_likelihood_bounds(R, W, b, c, 1.0, **settings)
        ),
        "make_bars_and_stripes": lambda: datasets.make_bars_and_stripes(
            7, random_state=3
        ),
        "flip_pixels": lambda: datasets.flip_pixels(V, 0.3, random_state=3),
        "make_fvbm": lambda: datasets.make_fvbm(7, 4, random_state=3)[0],
        "sample_fvbm": lambda: datasets.sample_fvbm(
            np.zeros((25, 25)), np.zeros(25), 7, burn_in=5, random_state=3
        ),
    }


def fingerprints():
    """:func:`fingerprint` of every instance (by :func:`instance_id`) and the
    digest of every random public function's output (by name)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        digests = {instance_id(e): fingerprint(e) for e in INSTANCES}
        for name, draw in _random_functions().items():
            digests[name] = _digest({name: draw()})
    return digests


if __name__ == "__main__":
    json.dump(fingerprints(), sys.stdout)
