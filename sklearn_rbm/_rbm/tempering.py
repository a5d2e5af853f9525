"""Parallel tempering on the estimator side: the ladder of inverse
temperatures and the swap-rate monitor with its gap warning.

The arithmetic (sweeps, swaps, the training update, tempered sampling) is in
``_rbm/kernels.py``; this module turns hyperparameters into a ladder, the
kernel's swap counts into ``history_`` figures, and says when the ladder has
a gap. Replicas are tempered towards the visible layer's base model (the
base-rate model of binary units, independent Gaussians with the data's means
and standard deviations for Gaussian ones), as AIS anneals.
"""

import numpy as np

from .._core.utils import as_real_array, warn

#: The ladder of 'pt' when none is given: ``DEFAULT_N_TEMPERATURES``
#: inverse temperatures evenly spaced from 1 down to ``DEFAULT_MIN_BETA``.
#: Evenly spaced, because with base-rate tempering a linear ladder gives every
#: neighbour pair about the same swap acceptance, where a geometric one
#: starves the pairs near beta = 1 (``benchmarks/bench_tempering.py family``,
#: 8x8 digits, four temperatures down to 0.2: 0.43, 0.44, 0.45 against 0.24,
#: 0.48, 0.69).
DEFAULT_N_TEMPERATURES = 4
DEFAULT_MIN_BETA = 0.5
LADDERS = ("linear", "geometric")

#: A neighbour pair accepting fewer than this fraction of its swaps has a gap
#: between its temperatures: states no longer travel through it.
GAP_ACCEPTANCE = 0.01
#: ... judged once the pair has had at least this many proposals (a full-batch
#: epoch of a tiny data set proposes only a handful per pair).
GAP_MIN_PROPOSALS = 200


def temperature_ladder(n_temperatures=None, min_beta=None, ladder=None):
    """The inverse temperatures ``1 = beta_0 > ... > beta_{T-1} > 0``.

    ``ladder`` is ``'linear'`` (``None``; equal steps of ``beta``),
    ``'geometric'`` (equal ratios, so equal steps of ``log beta``) or an
    array of the inverse temperatures themselves, which fixes the others: then
    ``n_temperatures`` and ``min_beta`` must be None. The ranges of
    ``n_temperatures`` (at least 2) and ``min_beta`` (in (0, 1)) are checked
    by the estimator's parameter constraints.
    """
    if ladder is not None and not isinstance(ladder, str):
        given = []
        for name, value in (("n_temperatures", n_temperatures), ("min_beta", min_beta)):
            if value is not None:
                given.append(f"{name}={value!r}")
        if given:
            raise ValueError(
                f"beta_ladder is an array of inverse temperatures, which fixes "
                f"the number of temperatures and the smallest one; leave "
                f"n_temperatures and min_beta at None (got {', '.join(given)})."
            )
        return check_ladder(ladder)
    n = ladder_length(n_temperatures, ladder)
    low = DEFAULT_MIN_BETA if min_beta is None else float(min_beta)
    if ladder in (None, "linear"):
        return np.linspace(1.0, low, n)
    if ladder == "geometric":
        return np.geomspace(1.0, low, n)
    raise ValueError(
        f"beta_ladder must be one of {LADDERS} or an array, got {ladder!r}."
    )


def ladder_length(n_temperatures=None, ladder=None):
    """The number of temperatures :func:`temperature_ladder` will give, known
    before it allocates anything (for the memory check of the replicas)."""
    if ladder is not None and not isinstance(ladder, str):
        return int(np.size(ladder))
    return DEFAULT_N_TEMPERATURES if n_temperatures is None else int(n_temperatures)


def check_ladder(betas, name="beta_ladder"):
    """``betas`` as a float64 array, refused unless it starts at 1, decreases
    strictly, stays in (0, 1] and has at least two entries."""
    # A copy: the fitted betas_ must not be the caller's own array.
    values = as_real_array(betas, name).astype(np.float64)
    problem = None
    if values.ndim != 1 or values.size < 2:
        problem = "needs at least two inverse temperatures in a 1-D array"
    elif not np.all(np.isfinite(values)) or np.any(values <= 0) or np.any(values > 1):
        problem = "must hold inverse temperatures in (0, 1]"
    elif values[0] != 1.0:
        problem = "must start at 1 (the model itself gives the statistics)"
    elif np.any(np.diff(values) >= 0):
        problem = "must decrease strictly from 1"
    if problem is not None:
        raise ValueError(
            f"{name} {problem}; got {np.array2string(values, precision=4)}. "
            "For example numpy.linspace(1, 0.5, 4), or give n_temperatures "
            "and min_beta instead."
        )
    return values


class SwapMonitor:
    """Swap counts of one tempering system: the kernel adds accepted swaps to
    ``accepted`` and the caller counts its swap ``rounds``; each round proposes
    ``n_chains`` swaps per neighbour pair.

    :meth:`figures` gives the acceptance rate of each pair since the last
    :meth:`start_epoch`; :meth:`warn_about_gaps` warns (once per monitor) when
    a pair's rate over at least ``GAP_MIN_PROPOSALS`` proposals is below
    ``GAP_ACCEPTANCE``.
    """

    def __init__(self, betas, n_chains):
        self.betas = betas
        self.n_chains = n_chains
        self.accepted = np.zeros(betas.size - 1, dtype=np.int64)
        self.rounds = 0
        self._window = np.zeros(betas.size - 1, dtype=np.int64)
        self._window_rounds = 0
        self._warned = False

    def start_epoch(self):
        self.accepted[...] = 0
        self.rounds = 0

    def rates(self):
        """Fraction of accepted swaps per pair since :meth:`start_epoch`."""
        if self.rounds == 0:
            return np.full(self.accepted.size, np.nan)
        return self.accepted / (self.rounds * self.n_chains)

    def figures(self):
        """``{'swap_acceptance_t': rate}`` for each pair ``(t, t + 1)``."""
        return {
            f"swap_acceptance_{t}": float(rate) for t, rate in enumerate(self.rates())
        }

    def warn_about_gaps(self, when):
        """Add the epoch's counts to the window and warn about pairs that
        accept almost nothing; ``when`` says where ("in epoch 7")."""
        self._window += self.accepted
        self._window_rounds += self.rounds
        proposals = self._window_rounds * self.n_chains
        if proposals < GAP_MIN_PROPOSALS:
            return
        rates = self._window / proposals
        self._window[...] = 0
        self._window_rounds = 0
        gaps = np.flatnonzero(rates < GAP_ACCEPTANCE)
        if gaps.size == 0 or self._warned:
            return
        self._warned = True
        pairs = ", ".join(
            f"{self.betas[t]:.3g} <-> {self.betas[t + 1]:.3g}: {rates[t]:.1%}"
            for t in gaps
        )
        warn(
            f"Parallel tempering: swaps between neighbouring inverse temperatures "
            f"were almost never accepted {when} ({pairs} of {proposals} "
            "proposals); the ladder has a gap there, so states no longer travel "
            "between the ends. Use more temperatures (n_temperatures), a "
            "min_beta closer to 1, or a beta_ladder with smaller steps there."
        )


def fitted_ladder(rbm):
    """The ladder of a model fitted by a tempered solver, else the default."""
    betas = getattr(rbm, "betas_", None)
    return temperature_ladder() if betas is None else betas
