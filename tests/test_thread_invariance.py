"""Results do not depend on the thread count: a fit, AIS and reverse
annealing give the same bits with one numba thread and with two, and with
one BLAS thread and two where the products are small enough to run on one
thread anyway (``_core/utils.blas_threads_for``).

Above that size OpenBLAS itself splits a product differently with more
threads and changes its last bits (a 100 x 784 by 784 x 500 product differs
in most entries between one and two threads), so the BLAS side is checked on
small products only. The element-wise kernels must keep their bits at any
numba thread count: each element computed by the same operations and every
sum in the same order, whichever thread runs it.
"""

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._rbm.layers.bernoulli import log_partition_ais_of
from sklearn_rbm.datasets import load_binary_digits

pytestmark = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread here"
)


def _run(threads, task):
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        with threadpool_limits(threads, user_api="blas"):
            return task()
    finally:
        numba.set_num_threads(previous)


def _fit(solver, dtype):
    X = load_binary_digits()[0][:300].astype(dtype)
    rbm = DCPBernoulliRBM(
        n_components=48, solver=solver, n_iter=2, batch_size=50, random_state=0,
        early_stopping=True, n_iter_no_change=5, ais_betas=40, ais_n_chains=30,
    ).fit(X)  # fmt: skip
    return [
        rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_,
        rbm._chain_hidden, rbm.score(X[:40]),
    ]  # fmt: skip


def _ais(dtype):
    rng = np.random.default_rng(0)
    W = (0.1 * rng.standard_normal((40, 64))).astype(dtype)
    b, c = rng.standard_normal(64) - 1.0, rng.standard_normal(40)
    estimate, states, log_w = log_partition_ais_of(
        W, b, c, n_chains=60, betas=50, random_state=0, return_states=True
    )
    return [estimate.log_z, states, log_w]


def _assert_same_bits(one, two):
    for a, b in zip(one, two, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("solver", ["pcd", "csdcp"])
def test_fit_has_the_same_bits_at_one_and_two_threads(solver, dtype):
    _assert_same_bits(
        _run(1, lambda: _fit(solver, dtype)), _run(2, lambda: _fit(solver, dtype))
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ais_has_the_same_bits_at_one_and_two_threads(dtype):
    _assert_same_bits(_run(1, lambda: _ais(dtype)), _run(2, lambda: _ais(dtype)))
