"""The machinery of the bad-input contract (tests/test_contract.py): how a
bad argument is made, how a call is run and how its outcome is judged.

A *surface* is one public callable under one setting (a function, or a method
of a fitted estimator of one solver) with a valid call and the roles of its
arguments. A *case* replaces some arguments of the valid call by bad ones.
Every case ends in one of three acceptable outcomes:

* ``'error'``: a ``ValueError``, ``TypeError`` or ``MemoryError`` (or, for a
  diverging fit, a ``FloatingPointError``) raised by this package or by
  scikit-learn's validation, whose message names the argument and says what
  to do;
* ``'warning'``: a warning of this package (or scikit-learn) and a result
  without NaN;
* ``'finite'``: a result without NaN (infinities only where documented),
  and for an *equivalent* input (a list, sparse, read-only, non-contiguous or
  exactly converted copy of a valid argument) the valid call's result.

Never acceptable (each a *problem* of the case): a hang (the watchdog ends
the run), a raw error from numpy, numba, scipy or joblib (by type, by the
frame that raised it, or by its wording), a RuntimeWarning (numpy's
overflow and invalid-value warnings), NaN out, a modified argument, or an
estimator whose state changed by a call that failed.
"""

import copy
import dataclasses
import faulthandler
import os
import re
import resource
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

import sklearn_rbm
from sklearn_rbm._core import utils as core_utils

# Seconds a case may run before the watchdog dumps the stacks and ends the
# test process: a hang fails the suite loudly instead of stalling it.
CASE_TIMEOUT = int(os.environ.get("CONTRACT_CASE_TIMEOUT", 120))

# The memory every size check is measured against during the battery (the
# machine's own would make the outcome depend on the machine), and the
# address-space headroom a case gets: an allocation that slips past the size
# checks fails fast instead of swapping the machine.
MACHINE_MEMORY = 16 * 2**30
ADDRESS_SPACE_HEADROOM = 6 * 2**30

_RAW_LIBRARIES = ("numpy", "numba", "scipy", "joblib", "llvmlite", "threadpoolctl")
_RAW_ROOTS = tuple(
    # A package's folder, or a single-module library's file.
    os.path.dirname(module.__file__) + os.sep
    if module.__file__.endswith("__init__.py")
    else module.__file__
    for module in map(__import__, _RAW_LIBRARIES)
)
_OUR_ROOT = os.path.dirname(sklearn_rbm.__file__) + os.sep
# scikit-learn's input validation (validation.py, _param_validation.py and
# the array helpers they call).
_SKLEARN_VALIDATION = os.sep + os.path.join("sklearn", "utils") + os.sep

# Wordings of errors that reach the user from numpy, numba or Python itself.
_RAW_WORDING = re.compile(
    "|".join(
        (
            r"Unable to allocate",
            r"Allocation failed",
            r"could not be broadcast",
            r"matmul: Input operand",
            r"shapes \(.*\) and \(.*\) not aligned",
            r"ufunc",
            r"out of bounds",
            r"No matching definition",
            r"has no attribute",
            r"unsupported operand",
            r"not subscriptable",
            r"object of type",
            r"division by zero",
            r"math domain error",
            r"cannot reshape",
            r"invalid index",
            r"too many indices",
            r"setting an array element with a sequence",
            r"numba",
        )
    )
)

# Words of a message that tells the user what to do (or what is allowed).
_ADVICE = re.compile(
    r"\b(use|pass|must|expected|expects|should|reshape|convert|drop|set|increase|"
    r"decrease|reduce|fewer|smaller|larger|standardi[sz]e|binari[sz]e|scale|"
    r"call|refit|give|needs?|only|choose|at least|at most|limited|allowed|"
    r"requires?|valid|supports?|available)\b",
    re.IGNORECASE,
)

# FileNotFoundError: a loader's documented answer to missing data files.
ACCEPTED_ERRORS = (
    ValueError,
    TypeError,
    MemoryError,
    FloatingPointError,
    FileNotFoundError,
)


@dataclasses.dataclass
class Case:
    """Bad arguments for a surface's valid call.

    ``names``: the words a clear error names (the argument). ``equivalent``:
    the result must equal the valid call's. ``expect``: the outcomes
    allowed (default: any of the three). ``data_values``: the case changes
    the values of data, whose error must not blame a step size.
    """

    name: str
    overrides: dict
    names: tuple = ()
    equivalent: bool = False
    expect: frozenset = frozenset({"error", "warning", "finite"})
    data_values: bool = False


@dataclasses.dataclass
class Surface:
    """One public callable under one setting.

    ``run(target, **arguments)`` calls it; ``target`` is a fresh deep copy of
    the estimator ``fitted()`` returns (None for functions), whose state must
    survive a failed call.
    ``arrays`` gives the role of each array argument (see
    :func:`array_cases`), ``sizes`` the arguments that size allocations
    (10**9 must be refused before allocating), ``counts`` the ones that count
    work (out-of-range values only), ``reals`` the real-valued ones,
    ``extra`` hand-written cases.
    """

    callable_name: str
    setting: str
    run: Callable[..., Any]
    arguments: dict
    arrays: dict = dataclasses.field(default_factory=dict)
    sizes: tuple = ()
    counts: tuple = ()
    reals: tuple = ()
    extra: tuple = ()
    fitted: Any = None
    #: scikit-learn's validation messages name no argument when ``X`` is
    #: the only one (an estimator method): accepted there.
    sklearn_messages: bool = False
    #: Other names a clear error about an argument may use instead of its
    #: own (the error about a mismatch of ``X`` and ``X_val`` names either).
    aliases: dict = dataclasses.field(default_factory=dict)

    @property
    def id(self):
        return (
            f"{self.callable_name}[{self.setting}]"
            if self.setting
            else (self.callable_name)
        )


@dataclasses.dataclass
class Outcome:
    case: str
    kind: str  # 'error', 'warning' or 'finite'
    message: str
    problems: list
    error: type = None  # the exception's type, for an error


# --------------------------------------------------------------- mutations
def _with(array, index, value):
    changed = np.array(array, dtype=np.float64)
    changed[index] = value
    return changed


def _strided(array):
    """``array`` as a non-contiguous view (every other column of a wider one)."""
    array = np.asarray(array)
    wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), dtype=array.dtype)
    wide[..., ::2] = array
    return wide[..., ::2]


def _read_only(array):
    array = np.array(array)
    array.setflags(write=False)
    return array


def array_cases(name, role, value):
    """The battery for one array argument.

    ``role`` is ``'data'`` (rows of samples: X), ``'binary'`` (rows of 0/1
    samples), ``'codes'`` (rows of integer codes of categorical data),
    ``'one-hot'`` (their one-hot rows, blocks of columns side by side),
    ``'targets'`` (0/1 outputs, 1-D or 2-D), ``'matrix'`` (a 2-D model
    parameter), ``'vector'`` (a 1-D model parameter) or ``'weights'`` (one
    non-negative weight per sample).
    """
    value = np.asarray(value)
    names = (name,)
    first = (0,) * value.ndim
    last = tuple(s - 1 for s in value.shape)
    cases = [
        Case("NaN", {name: _with(value, first, np.nan)}, names, data_values=True),
        Case("+inf", {name: _with(value, last, np.inf)}, names, data_values=True),
        Case("-inf", {name: _with(value, first, -np.inf)}, names, data_values=True),
        Case("1e150", {name: _with(value, last, 1e150)}, names, data_values=True),
        Case("1e200", {name: _with(value, first, 1e200)}, names, data_values=True),
        Case("-1e200", {name: _with(value, last, -1e200)}, names, data_values=True),
        Case("empty", {name: value[:0]}, names),
        Case("complex", {name: value + 1j}, names),
        Case("strings", {name: np.full(value.shape, "a")}, names),
        Case("objects", {name: value.astype(object)}, names, equivalent=True),
        Case("float16", {name: value.astype(np.float16)}, names, equivalent=True),
        Case("list", {name: value.tolist()}, names, equivalent=True),
        Case("read-only", {name: _read_only(value)}, names, equivalent=True),
        Case("non-contiguous", {name: _strided(value)}, names, equivalent=True),
    ]
    binary_valued = np.all((value == 0) | (value == 1))
    if binary_valued:
        cases += [
            Case("bool", {name: value.astype(bool)}, names, equivalent=True),
            Case("int8", {name: value.astype(np.int8)}, names, equivalent=True),
        ]
    else:
        cases.append(Case("bool", {name: value > 0}, names))
    if value.ndim == 2:
        cases += [
            Case("1-D", {name: value[0]}, names),
            Case("3-D", {name: value[None]}, names),
            Case("transposed", {name: value.T.copy()}, names),
            Case("no columns", {name: value[:, :0]}, names),
            Case("extra column", {name: np.hstack([value, value[:, :1]])}, names),
            Case("one row", {name: value[:1]}, names),
            Case("Fortran order", {name: np.asfortranarray(value)}, names, True),
            Case("CSR", {name: sp.csr_matrix(value)}, names, equivalent=True),
            Case("CSC array", {name: sp.csc_array(value)}, names, equivalent=True),
        ]
    elif value.ndim == 1:
        cases += [
            Case("2-D", {name: value[None]}, names),
            Case("scalar", {name: value[0]}, names),
            Case("one short", {name: value[:-1]}, names),
            Case("one more", {name: np.append(value, value[:1])}, names),
        ]
    if role == "codes" and value.ndim == 2:
        cases += [
            Case("code 0.5", {name: _with(value, first, 0.5)}, names, data_values=True),
            Case("code -1", {name: _with(value, last, -1.0)}, names, data_values=True),
            Case("code 99", {name: _with(value, first, 99.0)}, names, data_values=True),
        ]
    if role == "one-hot" and value.ndim == 2:
        two, none = value.copy(), value.copy()
        two[0, :2] = 1.0  # the first block has two ones
        none[0, :2] = 0.0  # ... or none, when its 1 was in its first two columns
        cases += [
            Case("two ones in a block", {name: two}, names, data_values=True),
            Case("no one in a block", {name: none}, names, data_values=True),
            Case(
                "value 2.0", {name: _with(value, first, 2.0)}, names, data_values=True
            ),
        ]
    if role == "weights" and value.ndim == 1:
        cases += [
            Case("negative", {name: _with(value, first, -1.0)}, names),
            Case("all zero", {name: np.zeros_like(value)}, names),
        ]
    if role in ("data", "binary") and value.ndim == 2:
        cases.append(
            Case("value 2.0", {name: _with(value, first, 2.0)}, names, data_values=True)
        )
        cases.append(
            Case(
                "value -0.5", {name: _with(value, last, -0.5)}, names, data_values=True
            )
        )
    return cases


def size_cases(name):
    names = (name,)
    return [
        Case("10**9", {name: 10**9}, names),
        Case("0", {name: 0}, names),
        Case("-1", {name: -1}, names),
        Case("NaN", {name: np.nan}, names),
        Case("2.5", {name: 2.5}, names),
    ]


def count_cases(name):
    names = (name,)
    return [
        Case("0", {name: 0}, names),
        Case("-1", {name: -1}, names),
        Case("NaN", {name: np.nan}, names),
        Case("2.5", {name: 2.5}, names),
    ]


def real_cases(name):
    names = (name,)
    return [
        Case("0", {name: 0.0}, names),
        Case("-1", {name: -1.0}, names),
        Case("NaN", {name: np.nan}, names),
        Case("inf", {name: np.inf}, names),
        Case("1e300", {name: 1e300}, names),
        Case("1e-300", {name: 1e-300}, names),
    ]


def cases_of(surface):
    """Every case of a surface's battery, each named ``argument: case``."""
    generated = []
    for name, role in surface.arrays.items():
        generated += [
            (name, c) for c in array_cases(name, role, surface.arguments[name])
        ]
    for names, make in (
        (surface.sizes, size_cases),
        (surface.counts, count_cases),
        (surface.reals, real_cases),
    ):
        for name in names:
            generated += [(name, c) for c in make(name)]
    cases = []
    for argument, case in generated:
        case.name = f"{argument}: {case.name}"
        cases.append(case)
    return cases + list(surface.extra)


# ------------------------------------------------------------------ judging
def _innermost_file(error):
    frames = traceback.extract_tb(error.__traceback__)
    return frames[-1].filename if frames else ""


def _raw_error(error):
    """Why ``error`` is a raw error of a library underneath, or None."""
    module = type(error).__module__.split(".")[0]
    if module in _RAW_LIBRARIES:
        return f"raw {type(error).__module__}.{type(error).__name__}"
    where = _innermost_file(error)
    if where.startswith(_RAW_ROOTS):
        return f"raised inside {where}"
    if isinstance(error, MemoryError) and not str(error).strip():
        return "bare MemoryError"
    if _RAW_WORDING.search(str(error)):
        return "raw wording"
    return None


def _names_argument(message, names):
    return any(
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message)
        for name in names
    )


def error_problems(error, case, surface):
    """What is wrong with ``error`` as the outcome of ``case``."""
    problems = []
    message = str(error)
    if not isinstance(error, ACCEPTED_ERRORS):
        problems.append(f"{type(error).__name__} is not a ValueError/TypeError")
    raw = _raw_error(error)
    if raw:
        problems.append(raw)
    names = case.names + surface.aliases.get(case.names[0], ()) if case.names else ()
    # scikit-learn's own validation messages are the convention users know
    # (they give no advice beyond the rule); they name no argument when X is
    # the only one (an estimator method).
    from_sklearn = any(
        _SKLEARN_VALIDATION in _innermost_file(e) for e in (error, error.__cause__) if e
    )
    if from_sklearn and surface.sklearn_messages:
        return problems
    if names and not _names_argument(message, names):
        problems.append(f"does not name {' or '.join(names)}")
    if not from_sklearn and not _ADVICE.search(message):
        problems.append("gives no advice")
    return problems


def _warning_problems(caught):
    problems = []
    for w in caught:
        if issubclass(w.category, RuntimeWarning) or w.filename.startswith(_RAW_ROOTS):
            where = f"{w.filename}:{w.lineno}"
            problems.append(f"raw {w.category.__name__}: {w.message} ({where})")
    return problems


def _fitted_values(estimator):
    return {
        name: value
        for name, value in vars(estimator).items()
        if name.endswith("_") and not name.startswith("_") and name != "history_"
    }


def non_finite(value, where="result", allow_inf=False):
    """Where ``value`` holds NaN (or an infinity not allowed), as strings."""
    found = []
    if isinstance(value, BaseEstimator):
        for name, attribute in _fitted_values(value).items():
            found += non_finite(attribute, f"{where}.{name}", allow_inf)
    elif sp.issparse(value):
        found += non_finite(value.data, where, allow_inf)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        if np.isnan(value).any():
            found.append(f"NaN in {where}")
        elif not allow_inf and np.isinf(value).any():
            found.append(f"inf in {where}")
    elif isinstance(value, (float, np.floating)):
        if np.isnan(value):
            found.append(f"NaN in {where}")
        elif np.isinf(value) and not (allow_inf or where.endswith(".lower")):
            found.append(f"inf in {where}")
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for field in value._fields:
            found += non_finite(getattr(value, field), f"{where}.{field}", allow_inf)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            found += non_finite(
                getattr(value, field.name), f"{where}.{field.name}", allow_inf
            )
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            found += non_finite(item, f"{where}[{i}]", allow_inf)
    elif isinstance(value, dict):
        for key, item in value.items():
            found += non_finite(item, f"{where}[{key!r}]", allow_inf)
    return found


def same(a, b, *, exact=True, depth=0):
    """Whether two values (arrays, estimators, containers) are equal."""
    if depth > 6 or a is b:
        return True
    if isinstance(a, BaseEstimator) and isinstance(b, BaseEstimator):
        return same(_fitted_values(a), _fitted_values(b), exact=exact, depth=depth + 1)
    if sp.issparse(a) or sp.issparse(b):
        if not (sp.issparse(a) and sp.issparse(b)) or a.shape != b.shape:
            return False
        return same(a.toarray(), b.toarray(), exact=exact, depth=depth + 1)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            if exact:
                return bool(np.array_equal(a, b, equal_nan=True))
            return bool(np.allclose(a, b, rtol=1e-7, atol=1e-10, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(
            same(a[k], b[k], exact=exact, depth=depth + 1) for k in a
        )
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(
            same(x, y, exact=exact, depth=depth + 1) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, np.random.RandomState) and isinstance(b, np.random.RandomState):
        return same(
            a.get_state(legacy=False), b.get_state(legacy=False), depth=depth + 1
        )
    if isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    if isinstance(a, float) and isinstance(b, float):
        return (
            a == b
            or (np.isnan(a) and np.isnan(b))
            or (not exact and np.isclose(a, b, rtol=1e-7, atol=1e-10))
        )
    if hasattr(a, "__dict__") and type(a) is type(b) and not callable(a):
        return same(vars(a), vars(b), exact=exact, depth=depth + 1)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable objects: compare identity
        return a is b


def _state(estimator):
    return copy.deepcopy(vars(estimator)) if estimator is not None else None


def _copy_arguments(arguments):
    # A read-only array cannot be written into: kept as it is (a zero-stride
    # view of 10**9 rows would not fit in memory as a copy).
    return {
        name: value
        if isinstance(value, np.ndarray) and not value.flags.writeable
        else value.copy()
        if isinstance(value, np.ndarray) or sp.issparse(value)
        else copy.deepcopy(value)
        if isinstance(value, list)
        else value
        for name, value in arguments.items()
    }


class _Guards:
    """The watchdog against hangs and the address-space limit against
    allocations that slip past the size checks, around one case."""

    def __enter__(self):
        faulthandler.dump_traceback_later(CASE_TIMEOUT, exit=True)
        self._limits = resource.getrlimit(resource.RLIMIT_AS)
        used = _address_space()
        if used is not None:
            soft = used + ADDRESS_SPACE_HEADROOM
            hard = self._limits[1]
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        self._memory = core_utils._machine_memory
        core_utils._machine_memory = lambda: MACHINE_MEMORY
        return self

    def __exit__(self, *exc):
        core_utils._machine_memory = self._memory
        resource.setrlimit(resource.RLIMIT_AS, self._limits)
        faulthandler.cancel_dump_traceback_later()
        return False


def _address_space():
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        return None


def call(surface, overrides):
    """Run the surface with ``overrides``: ``(result, error, warnings,
    target before, target after, arguments before, arguments)``."""
    arguments = {**surface.arguments, **overrides}
    before_arguments = _copy_arguments(arguments)
    target = copy.deepcopy(surface.fitted()) if surface.fitted is not None else None
    before = _state(target)
    result = error = None
    with warnings.catch_warnings(record=True) as caught, _Guards():
        warnings.simplefilter("always")
        try:
            result = surface.run(target, **arguments)
        except Exception as exc:  # noqa: BLE001 - judged below
            error = exc
    return result, error, caught, target, before, before_arguments, arguments


def judge(surface, case, baseline):
    """Run ``case`` on ``surface`` and judge its outcome."""
    result, error, caught, target, before, before_arguments, arguments = call(
        surface, case.overrides
    )
    problems = _warning_problems(caught)
    for name, value in before_arguments.items():
        if not same(value, arguments[name]):
            problems.append(f"modified its argument {name}")
    ours = [w for w in caught if not issubclass(w.category, RuntimeWarning)]
    if error is not None:
        kind, message = "error", f"{type(error).__name__}: {error}"
        problems += error_problems(error, case, surface)
        warned = any(_names_argument(str(w.message), case.names) for w in ours)
        if case.data_values and "learning_rate" in str(error) and not warned:
            problems.append("blames learning_rate for bad data, which it never named")
        if target is not None and not same(before, vars(target)):
            kept = getattr(error, "kept_state", False)
            if not kept or non_finite(target):
                problems.append(
                    "the estimator's state changed although the call failed"
                )
    else:
        kind = "warning" if ours else "finite"
        message = str(ours[0].message) if ours else ""
        problems += non_finite(result, allow_inf=bool(ours))
        if (
            case.equivalent
            and baseline is not None
            and not same(result, baseline, exact=False)
        ):
            problems.append("differs from the valid call's result")
    if kind not in case.expect:
        problems.append(f"expected {' or '.join(sorted(case.expect))}, got {kind}")
    return Outcome(case.name, kind, message, problems, type(error) if error else None)


def baseline_of(surface):
    """The valid call's result; raises if the valid call is not clean."""
    result, error, caught, *_ = call(surface, {})
    if error is not None:
        raise AssertionError(f"{surface.id}: the valid call failed") from error
    problems = _warning_problems(caught) + non_finite(result)
    assert not problems, (surface.id, problems)
    return result
