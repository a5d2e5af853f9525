"""The fully visible Boltzmann machine as data: spins, parameter vectors, energies
and draws, shared by the estimator, its solvers and diagnostics, and
:mod:`sklearn_rbm.datasets`.

The model is ``P(x) = exp(1/2 x^T M x + b^T x) / Z`` on ``x in {-1, 1}^d``, ``M``
symmetric with a zero diagonal (Nguyen & Wood 2016, eq. 1.1). Nothing here
validates its arguments but :func:`check_parameters`, which the public
functions that take a model call.
"""

import numpy as np
from scipy.special import logsumexp

from .._core.utils import as_real_array, check_memory, check_sampling_work
from .._partition.exact import MAX_EXACT_UNITS, check_enumerable
from . import kernels

#: Number of independent Gibbs chains that share the draws of one sampling call.
GIBBS_CHAINS = 16


def _first_position(mask):
    """``(row, column)`` of the first True entry of a 2-d mask."""
    row, col = np.unravel_index(np.argmax(mask), mask.shape)
    return int(row), int(col)


def to_spins(X):
    """Map binary ``X`` in {0, 1} or {-1, 1} to a new float64 array in {-1, 1}.

    Returns ``(spins, values)`` where ``values`` is ``(0, 1)`` or ``(-1, 1)``,
    the convention of ``X``; an array of ones only is read as {0, 1}. The copy
    is always new, C-contiguous and writable, so kernels compile once and never
    touch the caller's (possibly read-only) array.
    """
    X = np.asarray(X)
    bad = (X != 0) & (X != 1) & (X != -1)
    if bad.any():
        row, col = _first_position(bad)
        raise ValueError(
            "FVBMPseudoLikelihood needs binary X, with values in {0, 1} or in "
            f"{{-1, 1}}; found X[{row}, {col}] = {X[row, col].item()!r}. Binarise X "
            "first (e.g. X > 0.5 for values in [0, 1], X > 0 for values "
            "centred at 0)."
        )
    has_zero = X == 0
    has_minus = X == -1
    if has_zero.any() and has_minus.any():
        r0, c0 = _first_position(has_zero)
        r1, c1 = _first_position(has_minus)
        raise ValueError(
            "X mixes the {0, 1} and {-1, 1} conventions: X"
            f"[{r0}, {c0}] = 0 and X[{r1}, {c1}] = -1. Encode all of X in one "
            "convention."
        )
    values = (-1, 1) if has_minus.any() else (0, 1)
    spins = np.where(X > 0, 1.0, -1.0)  # a new C-contiguous float64 array
    return spins, values


def from_spins(spins, values):
    """Map {-1, 1} draws back to the convention ``values``."""
    return spins if values == (-1, 1) else (spins + 1.0) / 2.0


def distinct_rows(spins):
    """Distinct rows and their weights (multiplicity / n_samples), summing to 1.

    Every sum over samples in the log-PL is a weighted sum over distinct rows;
    nearly frozen data (Nguyen & Wood's N(0, 0.5) couplings) collapse to a
    handful.
    """
    n, d = spins.shape
    if d < 63:  # one int64 code per row: a 1-d unique, far cheaper than axis=0
        codes = (spins > 0).astype(np.int64) @ (
            np.int64(1) << np.arange(d, dtype=np.int64)
        )
        _, first, counts = np.unique(codes, return_index=True, return_counts=True)
    else:  # rows as byte strings of their packed bits: a 1-d unique again
        bits = np.ascontiguousarray(np.packbits(spins > 0, axis=1))
        keys = bits.view(np.dtype((np.void, bits.shape[1]))).ravel()
        _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    rows = spins[first]
    return np.ascontiguousarray(rows), counts / n


def pack(intercept, coupling):
    """Nguyen & Wood's parameter vector ``theta = [b, M[triu(d, 1)]]``."""
    upper = np.triu_indices(intercept.shape[0], 1)
    return np.concatenate([intercept, coupling[upper]])


def unpack(theta, n_features):
    """Inverse of :func:`pack`: ``(b, M)`` with ``M`` symmetric, zero diagonal."""
    intercept = theta[:n_features].copy()
    coupling = np.zeros((n_features, n_features))
    upper = np.triu_indices(n_features, 1)
    coupling[upper] = theta[n_features:]
    return intercept, coupling + coupling.T


def energies(spins, coupling, intercept):
    """``1/2 x^T M x + b^T x = 1/2 x^T (A + b)`` for every row (the unnormalised log P).

    Computed row by row (no BLAS, whose blocking depends on the number of
    rows), so a row's value does not depend on the other rows.
    """
    A = kernels.predictors(spins, intercept, coupling)
    return 0.5 * np.sum(spins * (A + intercept), axis=1)


def mean_field_fields(coupling, intercept, n_iter=200):
    """Effective fields ``M m + b`` at a damped naive mean-field fixed point.

    Used as the independent model from which AIS anneals and Gibbs chains
    start; any choice keeps them valid, a closer one lowers their variance.
    """
    m = np.tanh(intercept)
    for _ in range(n_iter):
        m = 0.5 * m + 0.5 * np.tanh(coupling @ m + intercept)
    return np.clip(coupling @ m + intercept, -20.0, 20.0)


def check_parameters(coupling, intercept):
    """``(coupling, intercept)`` as float64 arrays, or a ValueError saying
    which of them is not a model's (shape, finiteness, symmetry)."""
    coupling = np.ascontiguousarray(as_real_array(coupling, "coupling"), np.float64)
    intercept = np.ascontiguousarray(as_real_array(intercept, "intercept"), np.float64)
    if intercept.ndim != 1:
        raise ValueError(
            f"intercept must be 1-D, one value per feature; got shape "
            f"{intercept.shape}. Pass np.ravel(intercept) for a single row."
        )
    n_features = intercept.shape[0]
    if coupling.shape != (n_features, n_features):
        raise ValueError(
            f"coupling must have shape ({n_features}, {n_features}) to match "
            f"intercept, got {coupling.shape}."
        )
    if not (np.all(np.isfinite(coupling)) and np.all(np.isfinite(intercept))):
        raise ValueError("coupling and intercept must be finite.")
    if not np.array_equal(coupling, coupling.T) or np.any(np.diag(coupling) != 0):
        raise ValueError(
            "coupling must be symmetric with a zero diagonal (Nguyen & Wood "
            "2016, eq. 1.1); use (C + C.T) / 2 with the diagonal set to 0."
        )
    return coupling, intercept


def check_sample_memory(n_samples, n_features):
    """Refuse a number of draws whose arrays cannot fit, before drawing: the
    draws, and per draw a uniform, a state code and its bits."""
    check_memory(
        8 * n_samples * (2 * n_features + 2),
        f"n_samples={n_samples} with {n_features} features",
        "Draw fewer samples (n_samples), or draw them in chunks.",
    )


def sample(coupling, intercept, n_samples, method, burn_in, thinning, rng):
    """Draws by ``method``: 'exact', 'gibbs', or 'auto' (exact up to
    ``MAX_EXACT_UNITS`` units, whose table of ``2^d`` probabilities is the
    memory limit of one call)."""
    n_features = intercept.shape[0]
    if method == "auto":
        method = "exact" if n_features <= MAX_EXACT_UNITS else "gibbs"
    if method == "exact":
        check_enumerable(
            n_features,
            f"Exact sampling of d={n_features} units",
            limit=MAX_EXACT_UNITS,
            instead="method='gibbs'",
        )
        return sample_exact(coupling, intercept, n_samples, rng)
    return sample_gibbs(coupling, intercept, n_samples, burn_in, thinning, rng)


def sample_exact(coupling, intercept, n_samples, rng):
    """Exact draws by inverting the cumulative distribution of the 2^d states."""
    check_sample_memory(n_samples, intercept.shape[0])
    log_p = kernels.state_energies(coupling, intercept)
    cdf = np.cumsum(np.exp(log_p - logsumexp(log_p)))
    codes = np.searchsorted(cdf, rng.random(n_samples) * cdf[-1], side="right")
    codes = np.minimum(codes, cdf.shape[0] - 1)
    bits = (codes[:, None] >> np.arange(intercept.shape[0])) & 1
    return np.where(bits == 1, 1.0, -1.0)


def sample_gibbs(coupling, intercept, n_samples, burn_in, thinning, rng):
    """Draws of ``min(n_samples, GIBBS_CHAINS)`` systematic-scan Gibbs chains
    started from the naive mean-field independent model."""
    check_sample_memory(n_samples, intercept.shape[0])
    n_chains = min(n_samples, GIBBS_CHAINS)
    per_chain = -(-n_samples // n_chains)
    d = intercept.shape[0]
    check_sampling_work(
        float(n_chains) * (burn_in + per_chain * thinning) * d * d,
        f"Gibbs sampling of n_samples={n_samples} with burn_in={burn_in}, "
        f"thinning={thinning} over d={d} units (sweeps x d^2)",
        "Draw fewer samples or use a smaller burn_in or thinning, in several "
        "calls if needed.",
    )
    start = mean_field_fields(coupling, intercept)
    draws = kernels.gibbs_samples(
        coupling, intercept, start, n_chains, per_chain, burn_in, thinning, rng
    )
    return draws[:n_samples]
