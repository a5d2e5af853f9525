"""The bad-input contract (issue 23), applied by construction.

A registry enumerates every public callable of the package from its
``__all__`` lists (``sklearn_rbm``, ``likelihood``, ``inference``,
``datasets``, and ``sequences`` once it exists): every estimator's
hyperparameters and public methods, for every solver, and every public
function. Each entry is one or more *surfaces* (tests/contract.py: a valid
call and the roles of its arguments), and every surface runs one battery of
bad inputs: NaN and infinities, huge finite values, wrong shapes and widths,
empty and one-row data, wrong dtypes, sparse, read-only and non-contiguous
arrays, sizes of 10**9, absurd rates, zero, negative and NaN parameters.
Each case must end in a clear error naming the argument, a warning, or a
finite correct result (tests/contract.py says exactly what is judged).

A public callable without an entry fails
:func:`test_every_public_callable_is_in_the_registry`: the next surface is
covered the day it is added.

Run as a script, ``python tests/test_contract.py`` prints the battery's size
and its outcome counts per callable.
"""

import atexit
import functools
import gzip
import inspect
import numbers
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict

import numpy as np
import pytest
import scipy.sparse as sp
from contract import Case, Surface, baseline_of, cases_of, judge
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import Interval

import sklearn_rbm
from sklearn_rbm import (
    CategoricalRBM,
    ConditionalRBMRegressor,
    DCPBernoulliRBM,
    FrankWolfeRBM,
    FVBMPseudoLikelihood,
    GaussianBernoulliRBM,
    PottsBoltzmannMachine,
    PottsPseudoLikelihood,
    datasets,
    inference,
    likelihood,
)

from instances import CONTRACT_ONLY_INSTANCES, INSTANCES, instance_id, training_data

# ------------------------------------------------------- public callables
PUBLIC_MODULES = {
    "sklearn_rbm": sklearn_rbm,
    "likelihood": likelihood,
    "inference": inference,
    "datasets": datasets,
}
try:  # the sequences module of the categorical issues, once it lands
    from sklearn_rbm import sequences

    PUBLIC_MODULES["sequences"] = sequences
except ImportError:  # pragma: no cover - depends on the branch
    pass

#: Public names that take no input worth a battery: result containers and
#: warning classes (constructed by the package, read by the user).
NOT_INPUT_SURFACES = {
    "sklearn_rbm.MPLEDoesNotExistWarning": "a warning class",
    "likelihood.LogPartition": "a result container (named tuple)",
    "likelihood.LikelihoodBounds": "a result container (named tuple)",
    "inference.InferenceResult": "a result container (frozen dataclass)",
    "inference.ExactMarginals": "a result container (named tuple)",
    "sequences.CorrelationComparison": "a result container (named tuple)",
}


def _defined_here(cls, name):
    """Whether ``cls.name`` is defined by this package (not inherited from
    scikit-learn's mixins: get_params, fit_transform, set_output, ...)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            # set_fit_request & co. are scikit-learn's metadata-routing
            # descriptors, attached to each class by scikit-learn itself.
            generated = type(vars(klass)[name]).__module__.startswith("sklearn.")
            return klass.__module__.startswith("sklearn_rbm") and not generated
    return False


def public_callables():
    """Every public callable: ``module.function``, ``Estimator.__init__``
    (the hyperparameters) and ``Estimator.method``."""
    names = set()
    for short, module in PUBLIC_MODULES.items():
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, BaseEstimator):
                names.add(f"{name}.__init__")
                names.update(
                    f"{name}.{method}"
                    for method in dir(obj)
                    if not method.startswith("_")
                    and callable(getattr(obj, method))
                    and _defined_here(obj, method)
                )
            elif callable(obj):
                names.add(f"{short}.{name}")
    return names


# ------------------------------------------- the estimators' hyperparameters
#: Integer hyperparameters that size arrays: 10**9 must be refused before
#: anything is allocated, with the parameter named.
SIZE_PARAMETERS = {
    "n_states",
    "ais_betas",
    "n_components",
    "batch_size",
    "n_temperatures",
    "ais_n_chains",
    "max_components",
    "n_samples_per_step",
    "history",
    "n_chains",
    "n_sweeps",
}
#: Integer hyperparameters that count work (epochs, iterations, steps): 10**9
#: is the user's time budget, not an allocation; out-of-range values are errors.
COUNT_PARAMETERS = {
    "n_iter",
    "max_iter",
    "n_gibbs_steps",
    "n_inner_steps",
    "n_bias_steps",
    "n_restarts",
    "lbfgs_max_iter",
    "inference_max_iter",
    "n_iter_no_change",
    "score_every",
    "n_jobs",
}


def _numeric_parameters(Estimator):
    """``(integer parameters, real parameters)`` from the constraints."""
    integers, reals = [], []
    for name, constraints in Estimator._parameter_constraints.items():
        for constraint in constraints:
            kind = constraint.type if isinstance(constraint, Interval) else constraint
            if kind is numbers.Integral:
                integers.append(name)
                break
            if kind is numbers.Real:
                reals.append(name)
                break
    return integers, reals


# ------------------------------------------------------------ tiny inputs
# Parameters exactly representable in float16, so that a float16 copy is
# the same model.
_rng = np.random.RandomState(0)
W = (0.5 * _rng.randn(3, 6)).astype(np.float16).astype(np.float64)
B = _rng.randn(6).astype(np.float16).astype(np.float64)
C = _rng.randn(3).astype(np.float16).astype(np.float64)
V = training_data(DCPBernoulliRBM())[0][:8]
R = training_data(GaussianBernoulliRBM())[0][:8]
AIS = dict(n_chains=4, betas=20, random_state=0)
#: Sample weights exactly representable in float16.
_WEIGHTS = np.linspace(0.5, 1.5, 64).astype(np.float16).astype(np.float64)


def _schedule_cases(name, with_counts=True):
    names = (name, "AIS", "temperatures")
    counts = (
        Case(f"{name}: 10**9", {name: 10**9}, names),
        Case(f"{name}: 1", {name: 1}, names),
    )
    return counts * with_counts + (
        Case(f"{name}: [0, NaN, 1]", {name: [0.0, np.nan, 1.0]}, names),
        Case(f"{name}: not increasing", {name: [0.0, 0.6, 0.5, 1.0]}, names),
        Case(f"{name}: decreasing", {name: [1.0, 0.5, 0.0]}, names),
        Case(f"{name}: 2-D", {name: [[0.0, 1.0]]}, names),
        Case(f"{name}: unknown name", {name: "cubic"}, names),
    )


def _ladder_cases():
    names = ("beta_ladder",)
    return (
        Case("beta_ladder: [1, NaN]", {"beta_ladder": [1.0, np.nan]}, names),
        Case("beta_ladder: [1, 0.5, 0.5]", {"beta_ladder": [1.0, 0.5, 0.5]}, names),
        Case("beta_ladder: [1, 2]", {"beta_ladder": [1.0, 2.0]}, names),
        Case("beta_ladder: [1, 0]", {"beta_ladder": [1.0, 0.0]}, names),
        Case("beta_ladder: 10**9 values", {"beta_ladder": 10**9}, names),
    )


def _sigma_cases(estimator, X):
    """sigma arrays, and a constant column: with a learned sigma, fit warns
    that the column's sigma sits at min_sigma (as the docstring promises);
    with a tiny sigma or floor, the error names it (it blamed the learning
    rate and left NaN in the model)."""
    names = ("sigma", "min_sigma")
    constant = X.copy()
    constant[:, 2] = 0.5
    learned = estimator.sigma == "learn"
    return (
        Case("sigma: 2 values", {"sigma": [1.0, 2.0]}, names),
        Case("sigma: one NaN", {"sigma": np.r_[np.ones(5), np.nan]}, names),
        Case(
            "X: a constant column", {"X": constant}, names,
            expect=frozenset({"warning"} if learned else {"finite", "warning"}),
        ),
        Case(
            "X: a constant column, min_sigma=1e-300",
            {"X": constant, "min_sigma": 1e-300}, ("min_sigma",),
        ),
        Case(
            "X: a constant column, sigma=1e-300",
            {"X": constant, "sigma": 1e-300}, ("sigma",),
        ),
    )  # fmt: skip


def _extra_hyperparameter_cases(estimator, data):
    cases = list(_schedule_cases("ais_betas", with_counts=False))
    cases += [
        Case(
            "ais_n_chains: 10**9 with AIS",
            {"score_method": "ais", "ais_n_chains": 10**9},
            ("ais_n_chains",),
        ),
        Case(
            "ais_betas: 10**9 with AIS",
            {"score_method": "ais", "ais_betas": 10**9},
            ("ais_betas",),
        ),
    ]
    if "beta_ladder" in estimator.get_params():
        cases += _ladder_cases()
    if isinstance(estimator, GaussianBernoulliRBM):
        cases += _sigma_cases(estimator, data[0])
    if "init" in estimator.get_params():
        cases.append(
            Case("init: unfitted", {"init": clone(estimator)}, ("init", "fit"))
        )
    cases += _trusted_hyperparameter_cases(estimator, data)
    return tuple(cases)


def _fit_and_score(target, **arguments):
    """The hyperparameter surface: set, fit on the tiny data, score."""
    X, Y = arguments.pop("X"), arguments.pop("Y", None)
    estimator = arguments.pop("estimator")
    estimator = clone(estimator).set_params(**arguments)
    data = (X,) if Y is None else (X, Y)
    estimator.fit(*data)
    return estimator, estimator.score(*data)


def hyperparameter_surface(estimator):
    data = training_data(estimator)
    integers, reals = _numeric_parameters(type(estimator))
    arguments = {"estimator": estimator, "X": data[0]}
    if len(data) > 1:
        arguments["Y"] = data[1]
    return Surface(
        f"{type(estimator).__name__}.__init__",
        instance_id(estimator),
        _fit_and_score,
        arguments,
        sizes=tuple(p for p in integers if p in SIZE_PARAMETERS),
        counts=tuple(p for p in integers if p in COUNT_PARAMETERS),
        reals=tuple(reals),
        extra=_extra_hyperparameter_cases(estimator, data),
    )


# ------------------------------------------------- the estimators' methods
def _data_role(estimator):
    if isinstance(estimator, (DCPBernoulliRBM, FrankWolfeRBM, FVBMPseudoLikelihood)):
        return "binary"
    if isinstance(estimator, CategoricalRBM):
        return "one-hot" if estimator.one_hot else "codes"
    return "data"


def _method(name):
    def run(target, **arguments):
        return getattr(target, name)(**arguments)

    run.__name__ = name
    return run


def _fit_returning_self(target, **arguments):
    return target.fit(**arguments)


def _fitted_once(estimator):
    """A callable giving ``estimator`` fitted on its tiny data, fitted on
    first use (not while the tests are collected)."""

    @functools.cache
    def fitted():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = clone(estimator).fit(*training_data(estimator))
        if "ais_n_chains" in model.get_params():  # log_likelihood_bounds: RAISE
            model.set_params(ais_n_chains=4, ais_betas=20)
        return model

    return fitted


#: A mismatch of the training and the held-out arrays may be reported on
#: either; ``y`` of ``score`` is the ``Y`` of ``fit``.
_METHOD_ALIASES = {
    "X": ("X_val",), "X_val": ("X",), "Y": ("Y_val",), "Y_val": ("Y",), "y": ("Y",),
}  # fmt: skip


def _sample_surface(estimator, surface):
    if not hasattr(estimator, "sample"):
        return []
    parameters = inspect.signature(estimator.sample).parameters
    arguments = {"n_samples": 3, "random_state": 0}
    counts = ("n_steps",) if "n_steps" in parameters else ("burn_in", "thinning")
    arguments.update({count: 5 for count in counts})
    extra = ()
    if "method" in parameters:
        tempered = getattr(estimator, "solver", "") in ("pt", "cpt")
        arguments["method"] = "pt" if tempered else "gibbs"
        extra = (Case("method: 'magic'", {"method": "magic"}, ("method",)),)
    extra += _work_cases(estimator, counts)
    return [
        surface(
            "sample", arguments, {}, sizes=("n_samples",), counts=counts, extra=extra
        )  # fmt: skip
    ]


def method_surfaces(estimator, queries=True):
    """The surfaces of every public method of a fitted ``estimator``: its
    training methods, and with ``queries`` the methods that read the fitted
    model (the same code whatever the solver: they run for one instance of
    each estimator, and ``sample`` for each tempered solver too)."""
    name, setting = type(estimator).__name__, instance_id(estimator)
    data = training_data(estimator)
    X = data[0]
    fitted = _fitted_once(estimator)
    role = _data_role(estimator)
    query = {"X": role}

    def surface(method, arguments, arrays=query, **more):
        return Surface(
            f"{name}.{method}", setting, _method(method), arguments, arrays,
            fitted=fitted, sklearn_messages=True, aliases=_METHOD_ALIASES, **more,
        )  # fmt: skip

    surfaces = []
    fit_arguments = {"X": X}
    fit_arrays = dict(query)
    if isinstance(estimator, ConditionalRBMRegressor):
        fit_arguments.update(Y=data[1], X_val=X[:10], Y_val=data[1][:10])
        fit_arrays.update(Y="targets", X_val="data", Y_val="targets")
    elif "X_val" in inspect.signature(estimator.fit).parameters:
        fit_arguments["X_val"] = X[:10]
        fit_arrays["X_val"] = role
    if "sample_weight" in inspect.signature(estimator.fit).parameters:
        fit_arguments["sample_weight"] = _WEIGHTS[: X.shape[0]]
        fit_arrays["sample_weight"] = "weights"
    surfaces.append(
        surface(
            "fit", fit_arguments, fit_arrays, extra=_caller_data_cases(estimator, X)
        )
    )
    if hasattr(estimator, "partial_fit"):
        partial = {"X": X}
        if "sample_weight" in inspect.signature(estimator.partial_fit).parameters:
            partial["sample_weight"] = _WEIGHTS[: X.shape[0]]
        surfaces.append(
            surface(
                "partial_fit",
                partial,
                {
                    **query,
                    **{name: "weights" for name in partial if name == "sample_weight"},
                },
            )
        )
    tempered = getattr(estimator, "solver", "") in ("pt", "cpt")
    if not queries:
        return surfaces + [s for s in _sample_surface(estimator, surface) if tempered]
    for method in ("transform", "score_samples", "free_energy", "predict",
                   "predict_proba", "pseudo_log_likelihood",
                   "log_likelihood_bounds"):  # fmt: skip
        if hasattr(estimator, method):
            surfaces.append(surface(method, {"X": X[:6]}))
    if hasattr(estimator, "gibbs"):
        surfaces.append(surface("gibbs", {"v": X[:6]}, {"v": role}))
    if isinstance(estimator, ConditionalRBMRegressor):
        targets = {"X": "data", "Y": "targets"}
        surfaces += [
            surface("score", {"X": X, "y": data[1]}, {"X": "data", "y": "targets"}),
            surface("conditional_log_likelihood", {"X": X, "Y": data[1]}, targets),
            surface(
                "infer",
                {"X": X, "inference": "bp"},
                extra=(
                    Case("inference: 'magic'", {"inference": "magic"}, ("inference",)),
                ),
            ),
        ]
    else:
        surfaces.append(surface("score", {"X": X[:6]}))
    if hasattr(estimator, "log_partition_function"):
        surfaces.append(surface("log_partition_function", {}, {}))
    surfaces += _sample_surface(estimator, surface)
    if isinstance(estimator, FrankWolfeRBM):
        surfaces += [
            surface("submodel", {"n_components": 2}, {}, sizes=("n_components",)),
            surface(
                "fine_tune",
                {"X": X, "n_iter": 1, "random_state": 0},
                extra=(
                    Case("n_components given", {"n_components": 2}, ("n_components",)),
                ),
            ),
        ]
    if isinstance(estimator, CategoricalRBM):
        surfaces += [
            surface("effective_couplings", {}, {}),
            surface(
                "contact_scores",
                {"apc": True},
                {},
                extra=(Case("apc: 'yes'", {"apc": "yes"}, ("apc",)),),
            ),  # fmt: skip
        ]
    if isinstance(estimator, FVBMPseudoLikelihood):
        surfaces.append(
            surface("confidence_intervals", {"alpha": 0.05}, {}, reals=("alpha",))
        )
    if isinstance(estimator, (PottsPseudoLikelihood, PottsBoltzmannMachine)):
        surfaces += [
            surface("energy", {"X": X[:6]}),
            surface(
                "contact_scores", {"apc": True, "include_gap": True}, {},
                extra=(Case("apc: 'yes'", {"apc": "yes"}, ("apc",)),
                       Case("include_gap: None", {"include_gap": None},
                            ("include_gap",))),
            ),
        ]  # fmt: skip
    if hasattr(estimator, "mutation_effects"):
        wild_type = np.asarray(X[0], dtype=np.int64)
        surfaces.append(
            surface(
                "mutation_effects", {"wild_type": wild_type}, {},
                extra=(
                    Case("wild_type: too short", {"wild_type": wild_type[:-1]},
                         ("wild_type",)),
                    Case("wild_type: code 99", {"wild_type": np.r_[wild_type[:-1], 99]},
                         ("wild_type",)),
                    Case("wild_type: NaN", {"wild_type": np.r_[wild_type[:-1], np.nan]},
                         ("wild_type",)),
                ),
            )
        )  # fmt: skip
    return surfaces


# ------------------------------------------------------- public functions
def _function(f):
    def run(target, **arguments):
        return f(**arguments)

    run.__name__ = f.__name__
    return run


_RBM = {"components": "matrix", "intercept_visible": "vector",
        "intercept_hidden": "vector"}  # fmt: skip
_MODEL = {"components": W, "intercept_visible": B, "intercept_hidden": C}
_INFERENCE_MODEL = {"components": W, "visible_bias": B, "hidden_bias": C}
_INFERENCE = {"components": "matrix", "visible_bias": "vector",
              "hidden_bias": "vector"}  # fmt: skip
_GAUSSIAN_BASE = {"base_mean": np.zeros(6), "base_sigma": np.full(6, 1.25)}


def _sigma_scalar_cases(name="sigma"):
    return tuple(
        Case(f"{name}: {value!r}", {name: value}, (name,))
        for value in (0.0, -1.0, np.nan, np.inf, 1e-200, 1e-300, 1e200, "one")
    )


def _fashion_mnist_folder():
    """A folder with four tiny Fashion-MNIST files (two images each),
    removed when the tests end."""
    folder = tempfile.mkdtemp(prefix="sklearn-rbm-fashion-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for names in datasets._FASHION_MNIST_FILES.values():
        for name, shape in zip(names, ((2, 28, 28), (2,)), strict=True):
            header = bytes([0, 0, 8, len(shape)]) + b"".join(
                n.to_bytes(4, "big") for n in shape
            )
            payload = np.arange(int(np.prod(shape)), dtype=np.uint8) % 10
            with gzip.open(os.path.join(folder, name), "wb") as stream:
                stream.write(header + payload.tobytes())
    return folder


def function_surfaces():
    """The surfaces of every public function."""
    f = _function
    L, I, D = likelihood, inference, datasets  # noqa: E741
    raise_arguments = {"X": V, **_MODEL, "base_rate": np.zeros(6), **AIS}
    gaussian = {**_MODEL, "sigma": np.full(6, 0.75)}
    gaussian_ais = {**gaussian, **_GAUSSIAN_BASE, **AIS}
    gaussian_arrays = {**_RBM, "sigma": "vector"}
    base_arrays = {"base_mean": "vector", "base_sigma": "vector"}
    bp_cases = (Case("product: 'magic'", {"product": "magic"}, ("product",)),)
    return [
        Surface("likelihood.free_energy", "", f(L.free_energy), {"X": V, **_MODEL},
                {"X": "binary", **_RBM}),
        Surface("likelihood.log_partition_exact", "", f(L.log_partition_exact),
                dict(_MODEL), dict(_RBM)),
        Surface("likelihood.log_partition_ais", "", f(L.log_partition_ais),
                {**_MODEL, "base_rate": np.zeros(6), **AIS},
                {**_RBM, "base_rate": "vector"}, sizes=("n_chains",),
                extra=_schedule_cases("betas")),
        Surface("likelihood.log_likelihood_raise", "", f(L.log_likelihood_raise),
                raise_arguments, {"X": "binary", **_RBM, "base_rate": "vector"},
                sizes=("n_chains",), extra=_schedule_cases("betas")),
        Surface("likelihood.log_likelihood_bounds", "", f(L.log_likelihood_bounds),
                raise_arguments, {"X": "binary", **_RBM},
                sizes=("n_chains", "n_reverse_chains"),
                extra=_schedule_cases("betas")),
        Surface("likelihood.ais_betas", "", f(L.ais_betas),
                {"schedule": np.linspace(0.0, 1.0, 5)}, {"schedule": "vector"},
                extra=_schedule_cases("schedule"),
                aliases={"schedule": ("AIS schedule",)}),
        Surface("likelihood.base_rate_bias", "", f(L.base_rate_bias),
                {"X": V, "clip": 1e-3}, {"X": "binary"}, reals=("clip",)),
        Surface("likelihood.gaussian_free_energy", "", f(L.gaussian_free_energy),
                {"X": R, **gaussian}, {"X": "data", **gaussian_arrays},
                extra=_sigma_scalar_cases()),
        Surface("likelihood.gaussian_log_partition_exact", "",
                f(L.gaussian_log_partition_exact), dict(gaussian),
                dict(gaussian_arrays), extra=_sigma_scalar_cases()),
        Surface("likelihood.gaussian_log_partition_ais", "",
                f(L.gaussian_log_partition_ais), dict(gaussian_ais),
                {**gaussian_arrays, **base_arrays}, sizes=("n_chains",),
                extra=_schedule_cases("betas") + _sigma_scalar_cases()),
        Surface("likelihood.gaussian_log_likelihood_raise", "",
                f(L.gaussian_log_likelihood_raise), {"X": R, **gaussian_ais},
                {"X": "data", **gaussian_arrays, **base_arrays}, sizes=("n_chains",),
                extra=_schedule_cases("betas") + _sigma_scalar_cases()),
        Surface("likelihood.gaussian_log_likelihood_bounds", "",
                f(L.gaussian_log_likelihood_bounds), {"X": R, **gaussian_ais},
                {"X": "data", **gaussian_arrays},
                sizes=("n_chains", "n_reverse_chains"),
                extra=_schedule_cases("betas") + _sigma_scalar_cases()),
        Surface("inference.belief_propagation", "", f(I.belief_propagation),
                {**_INFERENCE_MODEL, "max_iter": 20, "pairwise": True},
                dict(_INFERENCE), counts=("max_iter",), reals=("tol", "damping"),
                extra=bp_cases),
        Surface("inference.mean_field", "", f(I.mean_field),
                {**_INFERENCE_MODEL, "max_iter": 20, "pairwise": True},
                dict(_INFERENCE), counts=("max_iter",), reals=("tol", "damping")),
        Surface("inference.exact_marginals", "", f(I.exact_marginals),
                dict(_INFERENCE_MODEL), dict(_INFERENCE)),
        Surface("inference.exact_log_partition", "", f(I.exact_log_partition),
                dict(_INFERENCE_MODEL), dict(_INFERENCE)),
        Surface("inference.bethe_log_partition", "", f(I.bethe_log_partition),
                {**_INFERENCE_MODEL, "max_iter": 20}, dict(_INFERENCE),
                counts=("max_iter",), reals=("tol", "damping")),
        Surface("datasets.make_bars_and_stripes", "", f(D.make_bars_and_stripes),
                {"n_samples": 5, "size": 3, "random_state": 0},
                sizes=("n_samples", "size")),
        Surface("datasets.make_shifting_bar", "", f(D.make_shifting_bar),
                {"n_features": 9, "bar_length": 2},
                sizes=("n_features", "bar_length")),
        Surface("datasets.load_binary_digits", "", f(D.load_binary_digits),
                {"return_X_y": True},
                extra=(Case("return_X_y: 'yes'", {"return_X_y": "yes"},
                            ("return_X_y",)),
                       Case("return_X_y: False", {"return_X_y": False},
                            ("return_X_y",)))),
        Surface("datasets.load_mnist_subset", "", f(D.load_mnist_subset),
                {"return_X_y": True},
                extra=(Case("return_X_y: 'yes'", {"return_X_y": "yes"},
                            ("return_X_y",)),)),
        Surface("datasets.load_fashion_mnist", "", f(D.load_fashion_mnist),
                {"subset": "test", "data_home": _fashion_mnist_folder(),
                 "dtype": np.float32},
                extra=(Case("subset: 'magic'", {"subset": "magic"}, ("subset",)),
                       Case("dtype: complex", {"dtype": np.complex128}, ("dtype",)),
                       Case("dtype: int", {"dtype": np.int64}, ("dtype",)),
                       Case("dtype: 'x'", {"dtype": "x"}, ("dtype",)),
                       Case("data_home: missing", {"data_home": "/nonexistent"},
                            ("data_home",)),
                       Case("data_home: 3", {"data_home": 3}, ("data_home",)))),
        Surface("datasets.flip_pixels", "", f(D.flip_pixels),
                {"images": V, "fraction": 0.2, "n_draws": 2, "random_state": 0},
                {"images": "binary"}, sizes=("n_draws",), reals=("fraction",)),
        Surface("datasets.occlude_patches", "", f(D.occlude_patches),
                {"images": np.ones((3, 16)), "patch_size": 2, "n_draws": 2,
                 "random_state": 0},
                {"images": "binary"}, sizes=("patch_size", "n_draws"),
                extra=(Case("image_shape: (3, 5)", {"image_shape": (3, 5)},
                            ("image_shape",)),
                       Case("image_shape: (4, -4)", {"image_shape": (4, -4)},
                            ("image_shape",)),
                       Case("fill_value: 2", {"fill_value": 2}, ("fill_value",)))),
        Surface("datasets.make_fvbm", "", f(D.make_fvbm),
                {"n_samples": 5, "n_features": 4, "random_state": 0},
                sizes=("n_samples", "n_features"),
                reals=("coupling_variance", "intercept_variance")),
        Surface("datasets.sample_fvbm", "", f(D.sample_fvbm),
                {"coupling": np.zeros((4, 4)), "intercept": np.zeros(4),
                 "n_samples": 5, "burn_in": 5, "random_state": 0},
                {"coupling": "matrix", "intercept": "vector"},
                sizes=("n_samples",), counts=("burn_in", "thinning"),
                extra=(Case("method: 'magic'", {"method": "magic"}, ("method",)),
                       _GIBBS_WORK_CASE)),
        Surface("datasets.make_potts", "", f(D.make_potts),
                {"n_samples": 5, "n_sites": 4, "random_state": 0},
                sizes=("n_samples", "n_sites", "n_states"),
                counts=("burn_in", "thinning"), reals=("coupling_scale",)),
    ] + _sequence_surfaces()  # fmt: skip


def _alignment_file():
    """A tiny FASTA file, removed when the tests end."""
    folder = tempfile.mkdtemp(prefix="sklearn-rbm-alignment-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = os.path.join(folder, "tiny.fasta")
    with open(path, "w") as stream:
        stream.write(">a\nAC-DE\n>b\nACFDE\n>c\nKLMNP\n")
    return path


def _sequence_surfaces():
    if "sequences" not in PUBLIC_MODULES:  # pragma: no cover - other branches
        return []
    f = _function
    S = PUBLIC_MODULES["sequences"]
    codes = training_data(PottsPseudoLikelihood())[0][:8]
    rng = np.random.RandomState(1)
    scores = rng.random_sample((8, 8))
    scores = (scores + scores.T).astype(np.float16).astype(np.float64)
    contacts = (scores > 1.0).astype(np.float64)
    return [
        Surface("sequences.read_alignment", "", f(S.read_alignment),
                {"path_or_file": _alignment_file()},
                extra=(Case("path_or_file: missing", {"path_or_file": "/nonexistent"},
                            ("path_or_file",), expect=frozenset({"error"})),
                       Case("path_or_file: 3", {"path_or_file": 3}, ("path_or_file",)),
                       Case("alphabet: 'A'", {"alphabet": "A"}, ("alphabet",)),
                       Case("alphabet: 3", {"alphabet": 3}, ("alphabet",)))
                      + _alignment_file_cases()),
        Surface("sequences.sequence_weights", "", f(S.sequence_weights),
                {"X": codes, "identity": 0.8}, {"X": "data"}, reals=("identity",),
                extra=(_zero_stride_case(codes),)),
        Surface("sequences.gap_filter", "", f(S.gap_filter),
                {"X": codes, "max_gap_run": 2, "max_gap_fraction": 0.5},
                {"X": "data"}, counts=("max_gap_run",), reals=("max_gap_fraction",),
                extra=(_zero_stride_case(codes),
                       Case("no criterion",
                            {"max_gap_run": None, "max_gap_fraction": None},
                            ("max_gap_run", "max_gap_fraction"),
                            expect=frozenset({"error"})))),
        Surface("sequences.apc", "", f(S.apc), {"scores": scores},
                {"scores": "matrix"}, extra=_huge_score_cases(scores)),
        Surface("sequences.top_contacts", "", f(S.top_contacts),
                {"scores": scores, "min_separation": 2, "n_top": 3},
                {"scores": "matrix"}, sizes=("n_top",), counts=("min_separation",)),
        Surface("sequences.frequencies", "", f(S.frequencies),
                {"X": codes, "sample_weight": _WEIGHTS[:8], "n_states": 3,
                 "pseudocount": 0.1},
                {"X": "data", "sample_weight": "weights"}, sizes=("n_states",),
                reals=("pseudocount",)),
        Surface("sequences.connected_correlations", "", f(S.connected_correlations),
                {"X": codes, "sample_weight": _WEIGHTS[:8], "n_states": 3},
                {"X": "data", "sample_weight": "weights"}, sizes=("n_states",),
                reals=("pseudocount",)),
        Surface("sequences.compare_correlations", "", f(S.compare_correlations),
                {"X": codes, "samples": codes[::-1].copy(), "n_states": 3,
                 "n_triplets": 20, "random_state": 0},
                {"X": "data", "samples": "data"}, sizes=("n_states", "n_triplets"),
                reals=("pseudocount",)),
        Surface("sequences.parse_mutations", "", f(S.parse_mutations),
                {"mutations": ["K1A", "K1R:C3W"], "wild_type": "KLC", "offset": 1},
                extra=(Case("mutations: 'Z1A'", {"mutations": "Z1A"}, ("mutations",)),
                       Case("mutations: 'K9A'", {"mutations": "K9A"}, ("mutations",)),
                       Case("mutations: 'L1A'", {"mutations": "L1A"}, ("mutations",)),
                       Case("mutations: [3]", {"mutations": [3]}, ("mutations",)),
                       Case("wild_type: 'K?C'", {"wild_type": "K?C"}, ("wild_type",)),
                       Case("offset: 1.5", {"offset": 1.5}, ("offset",)),
                       Case("alphabet: 3", {"alphabet": 3}, ("alphabet",)))),
        Surface("sequences.contact_precision", "", f(S.contact_precision),
                {"scores": scores, "contacts": contacts, "n_top": 3,
                 "min_separation": 2},
                {"scores": "matrix", "contacts": "matrix"}, sizes=("n_top",),
                counts=("min_separation",), extra=_no_pair_cases(scores)),
    ]  # fmt: skip


# ------------------------- the files and numbers users really have (issue 35)
def _zero_stride_case(X, name="X"):
    """10**9 rows that cost nothing until copied: refused on their shape."""
    huge = np.broadcast_to(np.asarray(X)[:1], (10**9, np.shape(X)[1]))
    return Case(
        f"{name}: 10**9 zero-stride rows",
        {name: huge},
        (name,),
        expect=frozenset({"error"}),
    )


def _stored_zeros(X):
    """One-hot rows as a read-only CSR matrix with a stored zero in each of
    its first three rows: the same rows, whose arrays nothing may rewrite."""
    dense = np.asarray(X, dtype=np.float64)
    rows, columns = np.nonzero(dense)
    extra = [(r, int(np.flatnonzero(dense[r] == 0)[0])) for r in range(3)]
    matrix = sp.csr_matrix(
        (
            np.r_[dense[rows, columns], np.zeros(3)],
            (np.r_[rows, [r for r, _ in extra]], np.r_[columns, [c for _, c in extra]]),
        ),
        shape=dense.shape,
    )
    for array in (matrix.data, matrix.indices, matrix.indptr):
        array.setflags(write=False)
    return matrix


def _caller_data_cases(estimator, X):
    """Cases of ``fit`` on the caller's own arrays: stored zeros in one-hot
    CSR rows (read-only: eliminating them in place failed or rewrote the
    caller's matrix), and codes of 10**9 rows as a zero-stride view."""
    if isinstance(estimator, CategoricalRBM) and estimator.one_hot:
        return (
            Case(
                "X: read-only CSR with stored zeros",
                {"X": _stored_zeros(X)},
                ("X",),
                equivalent=True,
                expect=frozenset({"finite"}),
            ),
        )
    if isinstance(estimator, (CategoricalRBM, PottsPseudoLikelihood)):
        return (_zero_stride_case(X),)
    return ()


def _work_cases(estimator, counts):
    """A sampler asked for 10**9 steps (sweeps) refuses the work (one limit
    for every sampler) instead of running for days; FVBM's exact sampler
    (d <= 20) makes no sweeps and answers at once."""
    exact = isinstance(estimator, FVBMPseudoLikelihood)
    name = counts[0]
    return (
        Case(
            f"{name}: 10**9",
            {name: 10**9},
            (name,),
            expect=frozenset({"finite" if exact else "error"}),
        ),
    )


#: sample_fvbm's Gibbs chains asked for 10**10 sweeps (10**9 sweeps of its
#: 4 units are 8e10 operations, within the limit: minutes).
_GIBBS_WORK_CASE = Case(
    "burn_in: 10**10 with Gibbs",
    {"burn_in": 10**10, "method": "gibbs"},
    ("burn_in",),
    expect=frozenset({"error"}),
)


class _FittedBernoulliRBM(DCPBernoulliRBM):
    """A DCPBernoulliRBM whose fitted parameters are set, not trained."""

    def __init__(self, n_components=4, n_features=6):
        super().__init__(n_components=n_components)
        self.components_ = np.zeros((n_components, n_features))
        self.intercept_visible_ = np.zeros(n_features)
        self.intercept_hidden_ = np.zeros(n_components)


def _trusted_hyperparameter_cases(estimator, data):
    """init of another class of the same width; penalties so large that a
    line search fails at the start (convergence must not be claimed there;
    Newton's and the proximal steps do reach the minimum); early stopping
    on two rows."""
    cases = []
    X = data[0]
    if isinstance(estimator, CategoricalRBM) and not estimator.one_hot:
        states = estimator.n_states
        if states is None or not np.ndim(states):
            q = int(X.max()) + 1 if states is None else states
            foreign = _FittedBernoulliRBM(estimator.n_components, X.shape[1] * q)
            cases.append(
                Case(
                    "init: a fitted DCPBernoulliRBM",
                    {"init": foreign},
                    ("init",),
                    expect=frozenset({"error"}),
                )
            )
    if isinstance(estimator, PottsPseudoLikelihood):
        # Newton's and the proximal steps reach h = J = 0; L-BFGS's scaled
        # line search fails at the start, which must warn.
        reach = estimator.solver in ("newton", "proximal")
        honest = "finite" if reach else "warning"
        cases.append(
            Case(
                "lambda_h, lambda_e: 1e300",
                {"lambda_h": 1e300, "lambda_e": 1e300},
                ("lambda_h", "lambda_e"),
                expect=frozenset({honest}),
            )
        )
    if isinstance(estimator, ConditionalRBMRegressor) and estimator.early_stopping:
        cases.append(
            Case(
                "two rows with early stopping",
                {"X": X[:2], "Y": data[1][:2]},
                ("early_stopping",),
                expect=frozenset({"warning", "error"}),
            )
        )
    return cases


def _huge_score_cases(scores):
    return (
        Case(
            "scores: all 1e300",
            {"scores": np.full(scores.shape, 1e300)},
            ("scores",),
            expect=frozenset({"finite"}),
        ),
        Case(
            "scores: times 1e290",
            {"scores": scores * 1e290},
            ("scores",),
            expect=frozenset({"finite"}),
        ),
    )


def _no_pair_cases(scores):
    L = scores.shape[0]
    return (
        Case(
            f"min_separation: {L}",
            {"min_separation": L},
            ("min_separation",),
            expect=frozenset({"error"}),
        ),
    )


_ALIGNMENT = ">a\nAC-DE\n>b\nACFDE\n>c\nKLMNP\n"
#: The alignment of ``_alignment_file`` in the other formats (equivalent),
#: and files no reader can take (each one clear error).
_SAME_ALIGNMENT = {
    "stockholm.sto": b"# STOCKHOLM 1.0\n#=GF ID tiny\na AC..-DE\nb ACg.FDE\n"
    b"#=GC RF xx..xxx\n\nc KL..MNP\n//\n",
    "family.a3m": b"#5 3\n>a\nAC-DE\n>b\nACFDkkE\n>c\nKLMNP\n",
    "bom.fasta": b"\xef\xbb\xbf" + _ALIGNMENT.encode(),
    "crlf.fasta": _ALIGNMENT.replace("\n", "\r\n").encode(),
}
_BAD_ALIGNMENTS = {
    "headers.fasta": b">a\n>b\n>c\n",
    "truncated.fasta.gz": gzip.compress(_ALIGNMENT.encode() * 40)[:30],
    "binary.fasta": b"\x00\x01\x02\x03",
    "cut.sto": b"# STOCKHOLM 1.0\na ACDE\nb ACDE\n",
    "two.sto": b"# STOCKHOLM 1.0\na ACDE\n//\n# STOCKHOLM 1.0\na ACDE\n//\n",
}


def _corrupt_gzip():
    data = bytearray(gzip.compress(_ALIGNMENT.encode() * 40))
    data[20:30] = b"\xff" * 10
    return bytes(data)


def _alignment_file_cases():
    """read_alignment on the files sequence users have: the tiny alignment
    in every format and compression (the same codes and ids), and broken
    files, a folder, the text itself given as a path."""
    import bz2
    import io
    import lzma

    folder = tempfile.mkdtemp(prefix="sklearn-rbm-formats-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    files = {
        **_SAME_ALIGNMENT,
        "tiny.fasta.xz": lzma.compress(_ALIGNMENT.encode()),
        "tiny.fasta": bz2.compress(_ALIGNMENT.encode()),  # bz2 whatever the name
        "tiny.txt": gzip.compress(_ALIGNMENT.encode()),
        **_BAD_ALIGNMENTS,
        "corrupt.fasta.gz": _corrupt_gzip(),
    }
    for name, content in files.items():
        with open(os.path.join(folder, name), "wb") as stream:
            stream.write(content)
    names = ("path_or_file",)
    same = frozenset({"finite"})

    def path_case(name, **outcome):
        return Case(
            f"path_or_file: {name}",
            {"path_or_file": os.path.join(folder, name)},
            names,
            **outcome,
        )

    readable = [*_SAME_ALIGNMENT, "tiny.fasta.xz", "tiny.fasta", "tiny.txt"]
    cases = [path_case(name, equivalent=True, expect=same) for name in readable]
    cases += [
        path_case(name, expect=frozenset({"error"}))
        for name in [*_BAD_ALIGNMENTS, "corrupt.fasta.gz"]
    ]
    return tuple(cases) + (
        Case(
            "path_or_file: a text stream",
            {"path_or_file": io.StringIO(_ALIGNMENT)},
            names,
            equivalent=True,
            expect=same,
        ),
        Case(
            "path_or_file: a Greek id",
            {"path_or_file": io.StringIO(">α\nACDE\n")},
            names,
            expect=same,
        ),
        Case(
            "path_or_file: a folder",
            {"path_or_file": folder},
            names,
            expect=frozenset({"error"}),
        ),
        Case(
            "path_or_file: the text itself",
            {"path_or_file": _ALIGNMENT},
            names,
            expect=frozenset({"error"}),
        ),
        Case(
            "path_or_file: 5000 letters",
            {"path_or_file": "A" * 5000},
            names,
            expect=frozenset({"error"}),
        ),
        Case(
            "alphabet: a non-ASCII symbol",
            {"alphabet": "-ACDΩ"},
            ("alphabet",),
            expect=frozenset({"error"}),
        ),
    )


# ------------------------------------------------------------ the registry
#: Every instance the battery runs: the registry's and those whose data
#: scikit-learn's checks cannot make (tests/instances.py).
ALL_INSTANCES = INSTANCES + CONTRACT_ONLY_INSTANCES


def _build_registry():
    registry = defaultdict(list)
    for surface in function_surfaces():
        registry[surface.callable_name].append(surface)
    queried = set()
    for estimator in ALL_INSTANCES:
        registry[f"{type(estimator).__name__}.__init__"].append(
            hyperparameter_surface(estimator)
        )
        first = type(estimator) not in queried
        queried.add(type(estimator))
        for surface in method_surfaces(estimator, queries=first):
            registry[surface.callable_name].append(surface)
    return dict(registry)


REGISTRY = _build_registry()
SURFACES = [surface for surfaces in REGISTRY.values() for surface in surfaces]


def test_every_public_callable_is_in_the_registry():
    """100% of the public callables: a new one fails here until it has an
    entry (a surface with its battery, or a reason it takes no input)."""
    missing = public_callables() - set(REGISTRY) - set(NOT_INPUT_SURFACES)
    assert not missing, f"public callables without a contract entry: {sorted(missing)}"
    stale = (set(REGISTRY) | set(NOT_INPUT_SURFACES)) - public_callables()
    assert not stale, f"entries for callables that are not public: {sorted(stale)}"


def test_every_integer_hyperparameter_is_a_size_or_a_count():
    """A new integer hyperparameter must say whether 10**9 of it is memory
    (refused) or work (the user's budget)."""
    for Estimator in {type(e) for e in INSTANCES}:
        integers, _ = _numeric_parameters(Estimator)
        unclassified = set(integers) - SIZE_PARAMETERS - COUNT_PARAMETERS
        assert not unclassified, (Estimator.__name__, unclassified)


def test_every_solver_runs_the_battery():
    for Estimator in {type(e) for e in INSTANCES}:
        fits = [s for s in REGISTRY[f"{Estimator.__name__}.fit"]]
        assert len(fits) == sum(type(e) is Estimator for e in ALL_INSTANCES)


# -------------------------------------------------------------- the battery
#: Cases that fail today for a reason another branch is fixing, by surface
#: (callable[setting]) and case, with the reason. They run in
#: test_known_contract_problems, expected to fail, except those that hang.
#: Defects the battery finds and the package has yet to fix, with the reason
#: (each an xfail until it is fixed; then the entry must go).
KNOWN_PROBLEMS = {}
#: Known problems not run: they hang, or take tens of seconds.
NOT_RUN = set()
_BASELINES = {}
_OUTCOMES = {}


def _validated_alike(surface):
    """Cases refused by validation for the first setting of the same callable
    (the first solver): a ValueError or TypeError, raised before any solver
    runs, as the input checks are the same for every solver. The other
    settings skip them and run the cases that reach training (finite results,
    warnings, divergence, memory checks sized by the solver)."""
    first = REGISTRY[surface.callable_name][0]
    if first is surface:
        return set()
    if first.id not in _OUTCOMES:
        _OUTCOMES[first.id] = run_battery(first)
    return {
        o.case
        for o in _OUTCOMES[first.id]
        if o.kind == "error"
        and issubclass(o.error, (ValueError, TypeError))
        and not o.problems
    }


def run_battery(surface, only=None):
    """The cases of ``surface`` (all but the known problems and those the
    first setting's validation refused, or ``only`` those named), each
    judged: a list of outcomes."""
    if surface.id not in _BASELINES:
        _BASELINES[surface.id] = baseline_of(surface)
    baseline = _BASELINES[surface.id]
    skipped = set() if only is not None else _validated_alike(surface)
    outcomes = []
    for case in cases_of(surface):
        if only is not None:
            if case.name in only:
                outcomes.append(judge(surface, case, baseline))
            continue
        if (surface.id, case.name) in KNOWN_PROBLEMS or case.name in skipped:
            continue
        outcomes.append(judge(surface, case, baseline))
    _OUTCOMES[surface.id] = outcomes
    return outcomes


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.id)
def test_bad_input_contract(surface):
    failures = [
        f"{o.case}: {'; '.join(o.problems)} [{o.kind}: {o.message[:300]}]"
        for o in run_battery(surface)
        if o.problems
    ]
    assert not failures, "\n".join(failures)


_SURFACES_BY_ID = {surface.id: surface for surface in SURFACES}


@pytest.mark.parametrize(
    "surface_id, case", sorted(KNOWN_PROBLEMS), ids=lambda x: str(x)
)
def test_known_contract_problems(surface_id, case):
    reason = KNOWN_PROBLEMS[surface_id, case]
    if (surface_id, case) in NOT_RUN:
        pytest.xfail(f"not run: {reason}")
    (outcome,) = run_battery(_SURFACES_BY_ID[surface_id], only={case})
    if outcome.problems:
        pytest.xfail(f"{reason}: {'; '.join(outcome.problems)}")


# -------------------------------------------- hangs (FVBM, issue 23)
_FVBM_HANGS = """
import numpy as np
from sklearn_rbm import FVBMPseudoLikelihood
rng = np.random.RandomState(0)
X = (rng.random_sample((400, {d})) < 0.5).astype(float)
{prepare}
FVBMPseudoLikelihood(solver="{solver}", max_iter={max_iter}).fit(X)
"""


_HANG_CASES = {
    "mm, d=110, a constant column": ("mm", 110, 1000, "X[:, 0] = 1.0"),
    "newton, d=100, max_iter=1": ("newton", 100, 1, ""),
    "mm, d=100, max_iter=1": ("mm", 100, 1, ""),
}
#: CPU seconds each fit's process may use (importing the package, perhaps
#: compiling a solver's kernels, and fitting take a few where it does not
#: hang). A limit on CPU rather than wall time: on a machine loaded by the
#: suite's other workers, three processes starting at once can wait longer
#: for a core than they compute (a 20-second wall limit failed that way).
_HANG_CPU_LIMIT = 60
#: Wall seconds for all three: the backstop for a hang that does not spin.
_HANG_WALL_LIMIT = 600


def _limit_cpu():
    import resource

    # Past the soft limit the process gets SIGXCPU, past the hard one SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (_HANG_CPU_LIMIT, _HANG_CPU_LIMIT + 10))


def test_fvbm_fits_do_not_hang():
    """Issue 23's FVBM hangs, each in a process of its own, all three at once,
    each under a CPU time limit (the existence screen runs before any
    iteration, and an unconverged fit skips the standard errors)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    processes = {
        name: subprocess.Popen(
            [
                sys.executable,
                "-W",
                "ignore",
                "-c",
                _FVBM_HANGS.format(
                    d=d, solver=solver, max_iter=max_iter, prepare=prepare
                ),
            ],
            env={**os.environ, "PYTHONPATH": root},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_limit_cpu if os.name == "posix" else None,
        )  # fmt: skip
        for name, (solver, d, max_iter, prepare) in _HANG_CASES.items()
    }
    deadline = time.monotonic() + _HANG_WALL_LIMIT
    hung = []
    for name, process in processes.items():
        try:
            _, stderr = process.communicate(
                timeout=max(0.1, deadline - time.monotonic())
            )
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            hung.append(name)
            continue
        if process.returncode in (-getattr(signal, "SIGXCPU", 0), -signal.SIGKILL):
            hung.append(name)
            continue
        assert process.returncode == 0, (name, stderr.decode()[-2000:])
    assert not hung, (
        f"no answer within {_HANG_CPU_LIMIT} CPU seconds "
        f"({_HANG_WALL_LIMIT} s wall): {hung}"
    )


# ------------------------------------------------------------------ report
def report():
    """The battery's size and outcome counts per callable, as a table."""
    rows = []
    for name, surfaces in sorted(REGISTRY.items()):
        counts = Counter()
        problems = 0
        for surface in surfaces:
            for outcome in run_battery(surface):
                counts[outcome.kind] += 1
                problems += bool(outcome.problems)
        rows.append((name, len(surfaces), sum(counts.values()), counts, problems))
    width = max(len(r[0]) for r in rows)
    print(f"{'callable':{width}}  surfaces  cases  error  warning  finite  problems")
    for name, n_surfaces, n_cases, counts, problems in rows:
        print(
            f"{name:{width}}  {n_surfaces:8d}  {n_cases:5d}  {counts['error']:5d}  "
            f"{counts['warning']:7d}  {counts['finite']:6d}  {problems:8d}"
        )
    total = Counter()
    for row in rows:
        total.update(row[3])
    print(
        f"{'total':{width}}  {sum(r[1] for r in rows):8d}  "
        f"{sum(r[2] for r in rows):5d}  {total['error']:5d}  {total['warning']:7d}  "
        f"{total['finite']:6d}  {sum(r[4] for r in rows):8d}"
    )


if __name__ == "__main__":
    report()
