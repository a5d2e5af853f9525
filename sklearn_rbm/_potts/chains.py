"""Compiled Gibbs chains of a Potts model: the persistent chains of
maximum-likelihood learning (``boltzmann.py``) and the samples of any fitted
Potts model (:func:`draw_samples`, for ``sample`` and ``make_potts``).

Every chain has its own counter-based random stream (``_numerics/random.py``):
its 64-bit key and the number of uniforms it has used. The chains are swept
in parallel, blocks of :data:`BLOCK` chains per task, and a chain's draws
depend only on its key and its counter, so the chains' states are the same
bit for bit whatever the number of threads.

The sampler reads the model in float32: a site's conditional fields are sums
of ``L`` terms of order one, which float32 holds to about 1e-6, far below
the chains' own noise, at half the memory traffic of float64.
"""

import numba
import numpy as np

from .._numerics.jit import jit
from .._numerics.random import uniform
from .._numerics.steps import copy_
from .kernels import _add_one, _exponentiate

#: Chains one task sweeps together, site after site: the couplings of one
#: site (``L q^2`` floats, 356 kB at L = 202, q = 21) are read from cache by
#: every chain of the block instead of from memory by each.
BLOCK = 32

#: :func:`draw_samples` runs a chain for every this many samples, from
#: ``FEWEST_SAMPLE_CHAINS`` (or ``n_samples`` if fewer: small draws pay few
#: burn-ins) to eight blocks (for the threads), so that each chain's kept
#: sweeps outweigh its burn-in.
SAMPLES_PER_CHAIN = 128
FEWEST_SAMPLE_CHAINS = 16


def sample_chains(n_samples):
    """The number of chains of ``draw_samples(n_samples, ...)``."""
    per_samples = min(8 * BLOCK, n_samples // SAMPLES_PER_CHAIN)
    return min(n_samples, max(FEWEST_SAMPLE_CHAINS, per_samples))


def sampling_work(n_samples, burn_in, thinning, L, q):
    """About the operations of :func:`draw_samples`: a sweep draws ``L``
    states and moves the fields (``L q`` each) of the sites that changed,
    a third or so of them, and every call of :func:`gibbs_sweeps` (one per
    kept row of a chain) sums the fields afresh (``L^2 q``)."""
    n_chains = sample_chains(n_samples)
    rounds = -(-n_samples // n_chains)
    sweeps = burn_in + rounds * thinning
    return float(n_chains) * (sweeps * L * q * (1 + L / 3) + rounds * L * L * q)


def stream_keys(rng, n_chains):
    """The 64-bit keys of ``n_chains`` counter-based random streams, drawn
    from the numpy Generator ``rng``."""
    top = np.iinfo(np.uint64).max
    return rng.integers(0, top, size=n_chains, dtype=np.uint64, endpoint=True)


def draw_samples(h, J, n_samples, burn_in, thinning, rng):
    """``n_samples`` Gibbs samples (uint8 rows) of the Potts model ``h`` (L,
    q), ``J`` (L, L, q, q) with ``J[i, j, a, b] = J[j, i, b, a]``.

    :func:`sample_chains` chains start at uniform random states drawn from
    ``rng``, run ``burn_in`` sweeps, then give one state every
    ``thinning`` sweeps; row ``k n + c`` is chain ``c``'s ``k``-th state, so
    every chain gives about as many rows. The chains are swept in parallel
    on their own random streams: the same rows whatever the thread count.
    """
    L, q = h.shape
    n_chains = sample_chains(n_samples)
    rounds = -(-n_samples // n_chains)
    chains = rng.integers(0, q, size=(n_chains, L)).astype(np.uint8)
    keys = stream_keys(rng, n_chains)
    counters = np.zeros(n_chains, dtype=np.int64)
    betas = np.ones(n_chains, dtype=np.float32)
    scores = np.empty(n_chains)
    no_record = np.empty((0, n_chains, L), dtype=np.uint8)
    h32 = h.astype(np.float32)
    J32 = np.ascontiguousarray(J, dtype=np.float32)

    def sweep(n):
        gibbs_sweeps(chains, h32, J32, n, keys, counters, no_record, betas, scores)

    sweep(burn_in)
    out = np.empty((rounds * n_chains, L), dtype=np.uint8)
    for k in range(rounds):
        sweep(thinning)
        out[k * n_chains : (k + 1) * n_chains] = chains
    return out[:n_samples]


@jit(parallel=True)
def gibbs_sweeps(chains, h, J, n_sweeps, keys, counters, visited, betas, scores):
    """``n_sweeps`` in-place Gibbs sweeps (sites in order) of every chain.

    ``chains`` (M, L) uint8 states; ``h`` (L, q) and ``J`` (L, L, q, q) the
    float32 model (``J[i, j, a, b] = J[j, i, b, a]``, zero diagonal blocks);
    chain ``c`` samples ``P(x)^betas[c]`` (float32; at 1, the model itself,
    it draws from its fields as they are, not scaled), draws the uniforms
    ``counters[c], counters[c] + 1, ...`` of the stream ``keys[c]`` and
    ``counters`` is advanced past them. When ``visited`` has shape
    (n_sweeps, m, L), the states of the first ``m`` chains after every
    sweep are written to it; give it shape (0, m, L) to skip that.
    ``scores[c]`` (float64) receives the model's log-weight ``sum_i
    h_i(x_i) + sum_{i<j} J_ij(x_i, x_j)`` of the chain's last state (at
    ``beta = 1``, for the swaps of parallel tempering), read off its fields:
    ``(sum_i h_i(x_i) + F_i(x_i)) / 2``.

    Every chain keeps its conditional fields ``F_i(a) = h_i(a) + sum_j
    J_ij(a, x_j)`` of all sites, summed once at the start of the call, and
    updates them only when a site changes state (the ``L q`` entries
    ``J[i, :, new] - J[i, :, old]``), instead of summing site ``i``'s ``L``
    rows at every draw: near the data a site changes in about a third of
    its draws. Ten sweeps of the pseudo-likelihood model's chains, one
    thread: 2.0x faster on PF13354 (L = 202), 1.1-1.6x on PF00014 (L =
    53). The fields drift by float32 rounding within one call only; the
    draws are those of fields summed afresh except where a uniform falls
    within that rounding of a partial sum (2 chains in 10,000 after 10
    sweeps on PF00014).
    """
    n_chains, L = chains.shape
    q = h.shape[1]
    record = visited.shape[0] > 0
    n_blocks = (n_chains + BLOCK - 1) // BLOCK
    for block in numba.prange(n_blocks):
        lo = block * BLOCK
        hi = min(lo + BLOCK, n_chains)
        fields = np.empty((hi - lo, L, q), dtype=h.dtype)
        H = np.empty(q, dtype=h.dtype)
        _all_fields(fields, h, J, chains[lo:hi])
        for sweep in range(n_sweeps):
            for i in range(L):
                for c in range(lo, hi):
                    x = chains[c]
                    F = fields[c - lo]
                    if betas[c] == 1.0:
                        copy_(H, F[i])
                    else:
                        _scale(H, F[i], betas[c])
                    state = _draw(H, uniform(keys[c], counters[c]))
                    counters[c] += 1
                    old = x[i]
                    if state != old:
                        x[i] = state
                        _move_fields(F, J[i], old, state)
            if record:
                for c in range(lo, min(hi, visited.shape[1])):
                    copy_(visited[sweep, c], chains[c])
        for c in range(lo, hi):
            scores[c] = _log_weight(h, fields[c - lo], chains[c])


@jit(inline="always")
def _scale(H, F_i, beta):
    """``H <- beta F_i``: the conditional fields of a chain at ``beta``."""
    for a in range(H.shape[0]):
        H[a] = beta * F_i[a]


@jit(inline="always")
def _log_weight(h, F, x):
    """``sum_i h_i(x_i) + sum_{i<j} J_ij(x_i, x_j)`` of the state ``x`` from
    its fields ``F_i(a) = h_i(a) + sum_j J_ij(a, x_j)``: each pair is counted
    twice in ``sum_i F_i(x_i)``."""
    total = 0.0
    for i in range(x.shape[0]):
        total += np.float64(h[i, x[i]]) + np.float64(F[i, x[i]])
    return 0.5 * total


@jit(inline="always")
def _all_fields(fields, h, J, block):
    """``fields[c, i, a] <- h_i(a) + sum_j J[i, j, a, x_j]`` of every chain
    ``x = block[c]``, summed over ``j`` in order (``J[j, i, x_j]`` is that
    row by symmetry).

    The loop over ``j`` is outside the loop over the chains: the slab
    ``J[j]`` (``L q^2`` floats) is read from cache by every chain of the
    block, where one chain at a time streamed ``L^2 q`` scattered floats
    from memory each. Every entry adds the same terms in the same order,
    so the sums are the same bits. On PF13354 (L = 202, one thread): 0.40
    instead of 1.15 ms a chain, which an update of 8,000 chains x 3 sweeps
    pays as much as its sweeps.
    """
    for c in range(block.shape[0]):
        for i in range(fields.shape[1]):
            copy_(fields[c, i], h[i])
    for j in range(block.shape[1]):
        slab = J[j]
        for c in range(block.shape[0]):
            F = fields[c]
            state = block[c, j]
            for i in range(F.shape[0]):
                _add_one(F[i], slab[i, state])


@jit(inline="always")
def _move_fields(F, J_i, old, new):
    """Every site's fields after site ``i`` went from ``old`` to ``new``:
    ``F[k] += J[i, k, new] - J[i, k, old]`` (``J_i = J[i]``)."""
    for k in range(F.shape[0]):
        row_new = J_i[k, new]
        row_old = J_i[k, old]
        Fk = F[k]
        for a in range(Fk.shape[0]):
            Fk[a] += row_new[a] - row_old[a]


@jit(inline="always")
def _draw(H, u):
    """The state drawn from the conditional fields ``H`` (overwritten) with
    the uniform ``u``: inversion of the cumulative sum of ``exp(H - max
    H)``; rounding can leave ``u`` above the last partial sum: the last
    state then."""
    _, z = _exponentiate(H)
    u *= z
    partial = 0.0
    for a in range(H.shape[0]):
        partial += H[a]
        if u < partial:
            return a
    return H.shape[0] - 1
