"""Small helpers shared by every estimator: random streams and input checks."""

import contextlib
import functools
import math
import numbers
import os
import re
import sys
import threading
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import validate_data
from threadpoolctl import OpenBLASController, ThreadpoolController

from .sklearn_compat import Interval

# Below this many multiply-adds per matrix product, BLAS threads cost more to
# wake than they save (a 10 x 784 x 500 product is 3.9e6); on a busy machine
# threads woken for such products can make training an order of magnitude
# slower (measured: one PCD epoch with batch 10 took 50 s with two BLAS
# threads and 3.9 s with one while other processes held the cores).
SMALL_PRODUCT = 2**22

#: The dtypes estimators fit in: float32 input stays float32 end to end (it
#: halves the time of the matrix products); anything else becomes float64.
FLOAT_DTYPES = (np.float64, np.float32)

#: The constraint of ``n_jobs``, in joblib's meaning: a positive count, or
#: -1, -2, ... (all CPUs but some); 0 means nothing.
N_JOBS_CONSTRAINT = [
    Interval(numbers.Integral, 1, None, closed="left"),
    Interval(numbers.Integral, None, -1, closed="right"),
    None,
]

#: The ``validate_params`` constraints of a Gibbs sampler's run (the number
#: of samples, the sweeps before the first kept state and between two kept
#: states, the random state), shared by every ``sample`` of the fully visible models.
GIBBS_SAMPLING_CONSTRAINTS = {
    "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
    "burn_in": [Interval(numbers.Integral, 0, None, closed="left")],
    "thinning": [Interval(numbers.Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


def child_seed(random_state):
    """An int seed drawn from ``random_state``, for a stream of its own.

    Estimators give each random consumer (the Gibbs chains, the AIS run of
    ``score``, ``random_state_``) its own stream seeded this way at fit time,
    so that one consumer's draws never shift another's.
    """
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def kernel_rng(random_state):
    """A ``numpy.random.Generator`` for numba kernels, drawn from ``random_state``.

    numba's own global RNG is not seeded by numpy, so kernels take a Generator
    argument (numba draws the same stream from it as numpy does). Its seed is
    one draw from scikit-learn's ``check_random_state(random_state)``, so the
    usual ``random_state`` semantics hold: an int gives the same stream every
    time, a ``RandomState`` instance advances.
    """
    return np.random.default_rng(child_seed(random_state))


@functools.cache
def _blas_controller():
    # Inspecting the loaded BLAS libraries takes milliseconds: do it once.
    return ThreadpoolController()


def _release_openblas_control():
    """Let any thread set OpenBLAS's thread count again.

    With its pthreads threading layer OpenBLAS has one thread pool for the
    whole process, and recent threadpoolctl (3.8) lets only the first thread
    that sets its size change it until that thread gives control back; the
    other threads' settings are silently ignored. The limit of
    :class:`_OneBlasThread` is set and restored by whichever threads enter
    first and leave last, so each gives control back at once. (A user's own
    ``threadpool_limits`` held in another thread keeps control, and with it
    the size of BLAS's pool.)
    """
    release = getattr(OpenBLASController, "clear_controlling_thread", None)
    if release is not None:
        release()


def _blas_by_scope():
    """The BLAS libraries as two controllers: process-wide settings, and
    settings that belong to the calling thread.

    OpenBLAS built on OpenMP keeps a thread count per calling thread
    (threadpoolctl sets it with ``omp_set_num_threads``); MKL, BLIS and
    OpenBLAS on pthreads (the numpy and scipy wheels) have one setting for
    the whole process.
    """
    blas = _blas_controller().select(user_api="blas")
    per_thread = [
        library.filepath
        for library in blas.lib_controllers
        if library.internal_api == "openblas"
        and getattr(library, "threading_layer", None) == "openmp"
    ]
    shared = [
        library.filepath
        for library in blas.lib_controllers
        if library.filepath not in per_thread
    ]
    return blas.select(filepath=shared), blas.select(filepath=per_thread)


class _OneBlasThread:
    """One BLAS thread while any thread of the process runs inside the context.

    threadpoolctl's own context saves the thread count it finds and restores
    it on exit. For a process-wide setting that goes wrong when contexts
    overlap in two threads: the second saves the first one's temporary 1, the
    first restores the true count while the second still runs, and the second
    then restores 1, for good. Here a lock-protected count of the threads
    inside decides instead: the first to enter sets the limit and keeps the
    true original, the last to leave restores it. Libraries whose setting
    belongs to the calling thread (OpenBLAS on OpenMP) get threadpoolctl's
    ordinary context in each thread, which is right for them.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._inside = 0
        self._shared_limit = None

    @contextlib.contextmanager
    def __call__(self):
        shared, per_thread = _blas_by_scope()
        self._enter(shared)
        try:
            with per_thread.limit(limits=1):
                yield
        finally:
            self._leave()

    def _enter(self, shared):
        with self._lock:
            if self._inside == 0 and shared.lib_controllers:
                # Called, not entered: the limit outlives this thread's part.
                self._shared_limit = shared.limit(limits=1)
                _release_openblas_control()
            self._inside += 1

    def _leave(self):
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._shared_limit is not None:
                self._shared_limit.restore_original_limits()
                _release_openblas_control()
                self._shared_limit = None


_ONE_BLAS_THREAD = _OneBlasThread()


def one_blas_thread():
    """A context that runs BLAS on one thread, safe when several threads of
    the process enter it at once (see :class:`_OneBlasThread`)."""
    return _ONE_BLAS_THREAD()


def blas_threads_for(multiply_adds):
    """A context that runs BLAS on one thread when its products are small.

    ``multiply_adds`` is the size ``m * n * k`` of the typical matrix product
    inside the context; below ``SMALL_PRODUCT`` BLAS is limited to one thread
    (numba's ``np.dot`` and numpy share the limit), otherwise nothing changes.
    The limit is safe when several threads fit at once
    (:func:`one_blas_thread`): the thread count comes back when the last of
    them leaves.
    """
    if multiply_adds >= SMALL_PRODUCT:
        return contextlib.nullcontext()
    return one_blas_thread()


# Frames in these folders are skipped when a warning looks for the user's line:
# this package's, and scikit-learn's (the decorators that wrap our methods,
# Pipeline, GridSearchCV), so the warning points at the user's own call.
_LIBRARY_DIRS = (
    # sklearn_rbm/ and scikit-learn's folder.
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,
)


def user_stack_level():
    """``stacklevel`` that makes a warning point at the first caller outside
    sklearn_rbm and scikit-learn, however deep the warning is raised (as
    pandas' ``find_stack_level``)."""
    frame = sys._getframe(1)  # the caller of this function: level 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
        frame = frame.f_back
        level += 1
    return level


def warn(message, category=UserWarning):
    """``warnings.warn`` pointing at the user's line (see :func:`user_stack_level`)."""
    warnings.warn(message, category, stacklevel=user_stack_level())


def _machine_memory():
    """Bytes of physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None


def _human(n_bytes):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1024


def check_memory(n_bytes, what, fix):
    """Refuse, before allocating anything, work that needs more memory than
    the machine has.

    ``n_bytes`` is the estimate, ``what`` names the parameters that make it
    (``"n_components=1000000000 with 64 features"``), ``fix`` says what to do.
    Raises ``MemoryError`` with all three, instead of numpy's "Unable to
    allocate" after part of the work.
    """
    total = _machine_memory()
    if total is not None and n_bytes > total:
        raise MemoryError(
            f"{what} needs about {_human(n_bytes)} of memory, more than this "
            f"machine's {_human(total)}. {fix}"
        )


def check_array_memory(X, name, bytes_per_value):
    """Refuse, before any copy or temporary is made, an array ``X`` whose
    values times ``bytes_per_value`` (its converted copy, the masks of its
    checks) need more memory than the machine has. A zero-stride view
    (``np.broadcast_to``) of 10**9 rows costs nothing until it is copied or
    compared, so the size is checked on its shape; lists and sparse matrices
    are already in memory and pass."""
    shape = getattr(X, "shape", None)
    if shape is None or sp.issparse(X):
        return
    n_values = math.prod(int(n) for n in shape)
    check_memory(
        n_values * bytes_per_value,
        f"{name} of shape {tuple(shape)}",
        f"Pass fewer rows of {name}, in several calls if needed.",
    )


#: The most elementary operations (multiply-adds, site updates) one sampling
#: call may ask for: a few minutes on one core. Beyond it a call is refused
#: with the parameters that make the work, never left running for hours.
MAX_SAMPLING_WORK = 1e11


def check_sampling_work(work, what, fix):
    """Refuse a sampling call whose ``work`` (elementary operations) passes
    :data:`MAX_SAMPLING_WORK`: the one work limit of every sampler. ``what``
    names the call and its parameters, ``fix`` says what to do."""
    if work > MAX_SAMPLING_WORK:
        raise ValueError(
            f"{what} needs about {work:.1e} operations, more than the limit "
            f"{MAX_SAMPLING_WORK:.0e} of one call (minutes). {fix}"
        )


def check_chains_memory(n_chains, n_units, name):
    """Refuse ``n_chains`` Markov chains over ``n_units`` units (AIS, RAISE)
    whose states cannot fit in memory: each chain keeps a few float64 vectors
    of its units (states, probabilities, pre-activations, noise)."""
    check_memory(
        4 * 8 * n_chains * n_units,
        f"{name}={n_chains} chains of {n_units} units",
        f"Use fewer chains ({name}): 100 is the usual number.",
    )


def check_sample_weight(sample_weight, n_samples):
    """``sample_weight`` as float64 weights of ``n_samples`` rows, or None.

    Weights must be finite and non-negative with a positive sum; anything
    else is a ValueError that says which condition failed.
    """
    if sample_weight is None:
        return None
    if not sp.issparse(sample_weight):
        sample_weight = np.asarray(sample_weight)
        if sample_weight.dtype == object:  # numbers held as objects are numbers
            try:
                sample_weight = sample_weight.astype(np.float64)
            except (TypeError, ValueError):
                pass  # refused below, by name
    weights = as_real_array(sample_weight, "sample_weight").astype(np.float64)
    if weights.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), one weight per row "
            f"of X ({n_samples} rows); "
            f"got shape {weights.shape}."
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        bad = weights[~np.isfinite(weights) | (weights < 0)][0]
        raise ValueError(
            f"sample_weight must be finite and non-negative; found {float(bad)!r}."
        )
    if not weights.sum() > 0:
        raise ValueError("sample_weight sums to zero: give some row a positive weight.")
    return weights


def kernel_array(array, dtype=np.float64):
    """``array`` as the kernels take it: C-contiguous and writeable, of
    ``dtype`` (copied only when it is not already).

    numba compiles one specialisation per array type, and read-only or
    Fortran-ordered arrays are other types: a fitted model reloaded
    memory-mapped by joblib (read-only ``components_``) would otherwise make
    every kernel compile a second time, seconds each.
    """
    return np.require(array, dtype=dtype, requirements=["C", "W"])


def check_named_array(value, name, **check_params):
    """scikit-learn's ``check_array`` for the argument ``name`` of a public
    function, its errors naming the argument ("X: Found array with 0
    sample(s) ...") where scikit-learn's own message does not."""
    try:
        return check_array(value, input_name=name, **check_params)
    except (TypeError, ValueError) as error:
        if re.search(rf"\b{re.escape(name)}\b", str(error)):
            raise
        raise type(error)(f"{name}: {error}") from error


def smallest_scale(dtype):
    """The smallest standard deviation (or step) whose inverse square, times
    data and weights, stays far from overflow in ``dtype``: 1.2e-77 in
    float64, 1.1e-10 in float32 (``1 / scale**2`` is then at most the square
    root of the largest float)."""
    return float(np.finfo(dtype).tiny) ** 0.25


def largest_magnitude(dtype, n_terms):
    """The largest value whose square, summed over ``n_terms`` terms, stays
    finite in ``dtype`` (``sqrt(max / n_terms)``)."""
    return float(np.sqrt(np.finfo(dtype).max / max(n_terms, 1)))


def check_magnitude(values, name, n_terms, fix):
    """Refuse values whose squares (summed over ``n_terms``, as in a free
    energy or a product with weights) overflow: a ValueError naming ``name``
    and the largest value, instead of infinities or NaN further on."""
    values = values.data if sp.issparse(values) else np.asarray(values)
    if values.size == 0:
        return
    dtype = values.dtype if values.dtype.kind == "f" else np.float64
    limit = largest_magnitude(dtype, n_terms)
    largest = float(np.max(np.abs(values)))
    if largest > limit:
        raise ValueError(
            f"{name} holds a value of magnitude {largest:.3g}, beyond {limit:.3g}: "
            f"its square overflows {np.dtype(dtype).name}. {fix}"
        )


#: How many robust standard deviations from its column's median a value may
#: lie before :func:`warn_if_outlying` suspects a corrupted value or a sentinel.
OUTLIER_SCALES = 1e6


def warn_if_outlying(
    X, name="X", fix="Standardise it (StandardScaler).", *, reference=None
):
    """Warn when a value of the dense ``X`` lies more than ``OUTLIER_SCALES``
    robust standard deviations (1.4826 median absolute deviations, or the
    standard deviation where that is 0) from the median of its column: a
    single value of 1e150 among standardised data trains a model of nothing
    else. The scales come from the first 1,000 rows, or are the ``reference``
    pair ``(centre, scale)`` of a fitted model (``partial_fit`` on a batch,
    which may be a single row)."""
    if sp.issparse(X) or (reference is None and X.shape[0] < 2):
        return
    if reference is None:
        head = np.asarray(X[:1000], dtype=np.float64)
        centre = np.median(head, axis=0)
        scale = 1.4826 * np.median(np.abs(head - centre), axis=0)
        scale = np.where(scale > 0, scale, head.std(axis=0))
    else:
        centre, scale = reference
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        distance = np.abs(np.asarray(X, dtype=np.float64) - centre) / scale
    distance[~np.isfinite(distance)] = 0.0  # constant columns: no scale
    row, column = np.unravel_index(np.argmax(distance), distance.shape)
    if distance[row, column] > OUTLIER_SCALES:
        if reference is None:
            where = "robust standard deviations from the median of its column"
        else:
            where = "of the fitted model's standard deviations from its mean"
        warn(
            f"{name}[{row}, {column}] = {float(X[row, column]):.3g} lies "
            f"{distance[row, column]:.3g} {where}: "
            f"a corrupted value or a missing-value sentinel? The model will "
            f"spend itself on it. {fix}"
        )


def as_real_array(value, name):
    """``value`` as a dense numpy array of real numbers, or a ValueError that
    names it: sparse matrices, complex and non-numeric values are refused
    (numpy would densify, drop the imaginary part or fail obscurely)."""
    if sp.issparse(value):
        raise ValueError(
            f"{name} must be a dense array, got a sparse matrix; pass {name}.toarray()."
        )
    array = np.asarray(value)
    if array.dtype.kind == "c":
        raise ValueError(f"{name} must be real, got complex values.")
    if array.dtype.kind not in "fiub":
        raise ValueError(f"{name} must hold numbers, got dtype {array.dtype}.")
    return array


def check_unit_interval(X, what="X"):
    """Refuse values outside [0, 1], the domain of a Bernoulli visible unit.

    Binary data, or grey levels in [0, 1] read as probabilities (as
    scikit-learn's BernoulliRBM reads them), are accepted; anything else is a
    ValueError that shows an offending value and how to rescale, with the
    conversion of {-1, 1} spins spelled out.
    """
    values = X.data if sp.issparse(X) else X
    # Two reductions, no temporaries: the common case (every value inside)
    # costs two passes over the data instead of four and two boolean copies.
    if values.size == 0 or (values.min() >= 0 and values.max() <= 1):
        return X
    outside = (values < 0) | (values > 1)
    bad = float(values[outside].flat[0])
    if np.all((values == -1) | (values == 1) | (values == 0)) and np.any(values == -1):
        fix = f"It looks like -1/+1 coding: convert it with ({what} + 1) / 2."
    else:
        fix = (
            "Binarise it (e.g. X > threshold) or scale it into [0, 1], e.g. with "
            "sklearn.preprocessing.MinMaxScaler() in a Pipeline."
        )
    raise ValueError(
        f"{what} must hold values in [0, 1] (binary data, or grey levels read as "
        f"probabilities); found {bad!r} (min {float(values.min())!r}, max "
        f"{float(values.max())!r}). {fix}"
    )


def is_binary(X):
    """True when every stored value of ``X`` (dense or sparse) is 0 or 1."""
    values = X.data if sp.issparse(X) else X
    return bool(np.all((values == 0) | (values == 1)))


def warn_if_not_binary(X, what="log-likelihood"):
    """Warn that a likelihood is only defined for binary data.

    scikit-learn's BernoulliRBM trains on values in [0, 1] (grey levels read as
    probabilities), and so do our estimators; a likelihood, however, is a
    probability of binary vectors, so scoring grey levels gives a number with
    no meaning as a likelihood.
    """
    if not is_binary(X):
        warn(
            f"The {what} is only defined for binary data, but X holds values "
            "other than 0 and 1; the result is the formula evaluated at those "
            "values, not a likelihood. Binarise X first (e.g. X > 0.5)."
        )


def validation_split(n_samples, fraction, rs):
    """Row indices ``(train, validation)`` holding out ``fraction`` of the rows.

    One permutation drawn from ``rs``; a fraction that leaves either part
    empty is a ``ValueError`` that says how many rows each part would get.
    """
    n_val = int(round(fraction * n_samples))
    if n_val < 1 or n_val >= n_samples:
        raise ValueError(
            f"validation_fraction={fraction} of n_samples={n_samples} leaves "
            f"{n_val} for validation and {n_samples - n_val} for training; "
            "both need at least one. Use more data, another fraction, or "
            "validation_fraction=None."
        )
    order = rs.permutation(n_samples)
    return order[n_val:], order[:n_val]


def validate_held_out(estimator, X_val, **check_params):
    """``X_val`` checked like a query of the fitted ``estimator`` (features,
    finiteness, dtype), its errors naming ``X_val`` rather than ``X``."""
    try:
        return validate_data(estimator, X_val, reset=False, **check_params)
    except ValueError as error:
        raise ValueError(f"X_val: {error}") from error


def hold_out(arrays, rs, *, fraction, default_fraction=None, given=None):
    """Training and validation parts of ``arrays`` (arrays sharing their rows).

    ``given`` is validation data the caller passed to ``fit`` (already
    checked). It is used as it is, nothing is held out and ``fraction`` is
    ignored, as scikit-learn's gradient boosting does with ``X_val``: the way
    to keep related rows (several corruptions of one image, say) on one side
    of the split. Otherwise ``fraction`` of the rows (``default_fraction``
    when ``fraction`` is None: early stopping's 0.1) are held out by
    :func:`validation_split`; with neither, the validation part is None.
    """
    if given is not None:
        return arrays, given
    fraction = default_fraction if fraction is None else fraction
    if fraction is None:
        return arrays, None
    train, val = validation_split(arrays[0].shape[0], fraction, rs)
    return tuple(a[train] for a in arrays), tuple(a[val] for a in arrays)
