"""Compiled persistent Gibbs chains of a Potts model, for maximum-likelihood
learning (``boltzmann.py``).

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
from .kernels import _exponentiate, _site_fields

#: Chains one task sweeps together, site after site: the couplings of one
#: site (``L q^2`` floats, 93 kB at L = 53, q = 21) are read from cache by
#: every chain of the block instead of from memory by each.
BLOCK = 32


@jit(parallel=True)
def gibbs_sweeps(chains, h, Jt, n_sweeps, keys, counters):
    """``n_sweeps`` in-place Gibbs sweeps (sites in order) of every chain.

    ``chains`` (M, L) uint8 states; ``h`` (L, q) and ``Jt`` (L, L, q, q) the
    float32 model in the site-major layout of ``kernels.py``; chain ``c``
    draws the uniforms ``counters[c], counters[c] + 1, ...`` of the stream
    ``keys[c]`` and ``counters`` is advanced past them.
    """
    n_chains, L = chains.shape
    q = h.shape[1]
    n_blocks = (n_chains + BLOCK - 1) // BLOCK
    for block in numba.prange(n_blocks):
        H = np.empty(q, dtype=h.dtype)
        lo = block * BLOCK
        hi = min(lo + BLOCK, n_chains)
        for _ in range(n_sweeps):
            for i in range(L):
                for c in range(lo, hi):
                    x = chains[c]
                    _site_fields(H, h[i], Jt[i], x)
                    _, z = _exponentiate(H)
                    u = uniform(keys[c], counters[c]) * z
                    counters[c] += 1
                    # Inversion of the cumulative sum; rounding can leave u
                    # above the last partial sum: the last state then.
                    state = q - 1
                    partial = 0.0
                    for a in range(q):
                        partial += H[a]
                        if u < partial:
                            state = a
                            break
                    x[i] = state
