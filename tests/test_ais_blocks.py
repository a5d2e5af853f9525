"""AIS in row blocks of chains (``_partition/annealing.py``): however the
chains are split, each chain draws the numbers it draws in one call on
every chain, for every visible and hidden unit type.

The weights are multiples of 1/64 and the visible statistics 0/1 or one-hot,
so the hidden inputs ``S W^T`` are exact whatever rows share a product: the
binary and categorical runs must agree bit for bit. Real-valued statistics
(Gaussian visible units, real hidden states) leave the rounding of a product
to the BLAS, which may depend on the rows beside it: those agree to 1e-12.
A block that drew from its own rows' counters wrongly would draw other
numbers and change its chains' states completely.
"""

import numba
import numpy as np
import pytest
from scipy.linalg import blas
from threadpoolctl import threadpool_limits

from sklearn_rbm._partition import annealing, reverse_ais
from sklearn_rbm._rbm.layers import bernoulli, categorical, gaussian
from sklearn_rbm._rbm.layers.drelu import HIDDEN_UNITS, DReLUHidden
from sklearn_rbm.likelihood import log_likelihood_raise

N_CHAINS = 100
SCHEDULE = np.linspace(0.0, 1.0, 30)


def _quantised(rng, shape, scale=8):
    return rng.integers(-scale, scale + 1, size=shape) / 64.0


def _paths():
    rng = np.random.default_rng(0)
    W, c = _quantised(rng, (12, 20)), _quantised(rng, 12)
    b = _quantised(rng, 20)
    yield "bernoulli", bernoulli.annealing_path(W, b, c, b / 2.0)
    yield (
        "gaussian visible",
        gaussian.annealing_path(W, b, c, np.full(20, 0.9), np.zeros(20), np.ones(20)),
    )
    fields = np.log(np.full((5, 4), 0.25))
    potential = np.array([[1.5] * 12, [0.8] * 12, [0.2] * 12, [-0.3] * 12])
    for name, hidden in sorted(HIDDEN_UNITS.items()):
        if name == "drelu":
            hidden = DReLUHidden(potential)
        yield (
            f"categorical, {name} hidden",
            categorical.annealing_path(W, b, c, 4, hidden, fields),
        )


def _run(path, blocks, monkeypatch):
    monkeypatch.setattr(annealing, "row_blocks", lambda n, size: blocks)
    rng = np.random.default_rng(7)
    return annealing.ais_log_weights(path, SCHEDULE, N_CHAINS, rng)


PATHS = dict(_paths())


@pytest.mark.parametrize("name", list(PATHS))
def test_any_split_of_the_chains_draws_the_same_numbers(name, monkeypatch):
    path = PATHS[name]
    log_w, states = _run(path, [(0, N_CHAINS)], monkeypatch)
    split_log_w, split_states = _run(
        path, [(0, 37), (37, 48), (48, N_CHAINS)], monkeypatch
    )
    assert split_states.shape == states.shape and split_states.dtype == states.dtype
    if name in ("bernoulli", "categorical, bernoulli hidden"):  # exact products
        assert split_log_w.tobytes() == log_w.tobytes()
        assert split_states.tobytes() == states.tobytes()
    else:
        np.testing.assert_allclose(split_log_w, log_w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(split_states, states, rtol=1e-12, atol=1e-12)
    # The states are draws, not the start: the chains moved.
    assert np.unique(states, axis=0).shape[0] > N_CHAINS // 2


def test_row_blocks_start_on_the_alignment_and_stay_whole_when_small():
    align = annealing.CHAIN_BLOCK_ALIGNMENT
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert annealing.row_blocks(1000, 500 * 784) == [(0, 1000)]
        if numba.config.NUMBA_NUM_THREADS >= 2:
            numba.set_num_threads(2)
            blocks = annealing.row_blocks(100, 500 * 784)
            assert blocks == [(0, align), (align, 100)]
            # A product too small to share stays in one block.
            assert annealing.row_blocks(100, 10) == [(0, 100)]
            # Too few chains for two aligned blocks.
            assert annealing.row_blocks(2 * align - 1, 500 * 784) == [
                (0, 2 * align - 1)
            ]
    finally:
        numba.set_num_threads(previous)


def _blas_keeps_row_bits_in_aligned_blocks(W, S):
    """Whether this BLAS gives the rows of ``S W^T`` the same bits when the
    rows are split at the alignment (OpenBLAS does on the processors seen)."""
    gemm = blas.dgemm if W.dtype == np.float64 else blas.sgemm
    with threadpool_limits(1, user_api="blas"):
        whole = gemm(1.0, S, W, trans_b=True)
        cut = annealing.CHAIN_BLOCK_ALIGNMENT
        parts = np.vstack([gemm(1.0, S[:cut], W, trans_b=True),
                           gemm(1.0, S[cut:], W, trans_b=True)])  # fmt: skip
    return whole.tobytes() == parts.tobytes()


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one numba thread")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_annealing_has_the_same_bits_at_one_and_two_threads(dtype):
    """Products large enough for every BLAS thread: at two threads AIS's
    chains and reverse annealing's data rows run in two blocks with one BLAS
    thread each, and give the bits of one thread (before the blocks, two BLAS
    threads changed the last bits)."""
    rng = np.random.default_rng(0)
    W = (0.05 * rng.standard_normal((500, 784))).astype(dtype)
    b, c = rng.standard_normal(784) - 1.0, rng.standard_normal(500) - 1.0
    S = (rng.random((N_CHAINS, 784)) < 0.3).astype(dtype)
    if not _blas_keeps_row_bits_in_aligned_blocks(W, S):
        pytest.skip("this BLAS rounds a row differently with other rows beside it")
    X = S[:48]
    runs = []
    previous = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            assert len(annealing.row_blocks(N_CHAINS, W.size)) == threads
            assert len(annealing.row_blocks(48, W.size, 10)) == threads
            with threadpool_limits(threads, user_api="blas"):
                forward = bernoulli.log_partition_ais_of(
                    W, b, c, n_chains=N_CHAINS, betas=8, random_state=0,
                    return_states=True,
                )  # fmt: skip
            # Reverse annealing adds each row's free energy, whose product
            # rounds by the BLAS thread count: compare its blocks at one.
            with threadpool_limits(1, user_api="blas"):
                reverse = log_likelihood_raise(
                    X, W, b, c, n_chains=10, betas=5, random_state=0
                )
            runs.append((*forward, reverse))
    finally:
        numba.set_num_threads(previous)
    (one, *arrays_one), (two, *arrays_two) = runs
    assert one == two
    for a, b in zip(arrays_one, arrays_two, strict=True):
        assert a.tobytes() == b.tobytes()


def test_row_blocks_of_data_rows_start_on_whole_chains_at_the_alignment():
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        blocks = annealing.row_blocks(100, 500 * 784, rows_per_item=10)
        if numba.get_num_threads() == 2:
            # 24 data rows of 10 chains are the first 240 chains: 5 x 48.
            assert blocks == [(0, 48), (48, 100)]
        for start, _ in blocks:
            assert start * 10 % annealing.CHAIN_BLOCK_ALIGNMENT == 0
    finally:
        numba.set_num_threads(previous)


@pytest.mark.parametrize("name", ["bernoulli", "gaussian visible"])
def test_reverse_annealing_shares_data_rows_without_changing_them(name, monkeypatch):
    """Each data row's reverse chains draw from the row's own key, so sharing
    the rows between threads changes no draw."""
    path = PATHS[name]
    rng = np.random.default_rng(3)
    if name == "bernoulli":
        X = (rng.random((30, 20)) < 0.4).astype(np.float64)
    else:
        X = rng.standard_normal((30, 20))

    def run(blocks):
        monkeypatch.setattr(reverse_ais, "row_blocks", lambda n, size, per: blocks)
        return reverse_ais._raise_rows(X, path, SCHEDULE, 4, 5)

    whole, shared = run([(0, 30)]), run([(0, 7), (7, 30)])
    for a, b in zip(whole, shared, strict=True):
        if name == "bernoulli":
            assert a.tobytes() == b.tobytes()
        else:
            np.testing.assert_allclose(b, a, rtol=1e-12)
