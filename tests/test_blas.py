"""``sklearn_rbm/_numerics/blas.py``: ``gemm_`` against numpy for every layout
and dtype the kernels use, and its edge cases; ``kernel_dot`` against numpy,
and the fit's Python-side products routed through it."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._numerics import blas
from sklearn_rbm._numerics.blas import gemm_, kernel_dot


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "a_transposed, b_transposed", list(itertools.product([False, True], repeat=2))
)
@pytest.mark.parametrize("beta", [0.0, 1.0, -2.0])
def test_gemm_matches_numpy(dtype, a_transposed, b_transposed, beta):
    rng = np.random.default_rng(0)
    m, k, n = 7, 5, 3
    # A transposed C-contiguous array is column-major: gemm_ must transpose it.
    a = rng.standard_normal((k, m)).T if a_transposed else rng.standard_normal((m, k))
    b = rng.standard_normal((n, k)).T if b_transposed else rng.standard_normal((k, n))
    a, b = a.astype(dtype), b.astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    expected = 0.5 * (a.astype(float) @ b.astype(float)) + beta * c
    if beta == 0.0:
        c[0, 0] = np.nan  # beta = 0 overwrites c without reading it
    gemm_(0.5, a, b, beta, c)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(c, expected, rtol=tolerance, atol=tolerance)


def test_gemm_with_an_empty_inner_dimension_scales_c():
    c = np.ones((2, 3))
    gemm_(1.0, np.zeros((2, 0)), np.zeros((0, 3)), 3.0, c)
    np.testing.assert_array_equal(c, 3.0)
    gemm_(1.0, np.zeros((2, 0)), np.zeros((0, 3)), 0.0, c)
    np.testing.assert_array_equal(c, 0.0)


def test_gemm_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="shapes"):
        gemm_(1.0, np.ones((2, 3)), np.ones((4, 2)), 0.0, np.ones((2, 2)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_dot_matches_numpy(dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 5)).astype(dtype)
    W = rng.standard_normal((4, 5)).astype(dtype)
    v = rng.standard_normal(5).astype(dtype)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    cases = [
        (X, W.T),  # column-major right operand
        (X, np.ascontiguousarray(W.T)),
        (X, v),
        (W[:, 0], W),  # vector times matrix
        (X[:, ::2], W[:, ::2].T),  # neither operand contiguous
        (sp.csr_matrix(X), W.T),  # sparse: safe_sparse_dot
        (X, W.T.astype(np.float64 if dtype == np.float32 else np.float32)),  # mixed
    ]
    for a, b in cases:
        product = kernel_dot(a, b)
        assert isinstance(product, np.ndarray)
        expected = (a.toarray() if sp.issparse(a) else a) @ b
        assert product.dtype == expected.dtype
        np.testing.assert_allclose(product, expected, rtol=tolerance, atol=tolerance)


def test_a_fit_computes_its_per_epoch_products_with_the_kernels_blas(monkeypatch):
    """The divergence check and the publishing of the parameters, every
    epoch, go through ``kernel_dot`` and not numpy's BLAS: numpy's own
    OpenBLAS thread pool, woken between kernel calls, spins on the cores the
    kernels' BLAS needs (``kernel_dot``'s docstring)."""
    calls = []
    product = blas._scipy_product

    def counting(a, b):
        calls.append(a.shape)
        return product(a, b)

    monkeypatch.setattr(blas, "_scipy_product", counting)
    X = (np.random.default_rng(0).random((60, 8)) < 0.3).astype(np.float64)
    DCPBernoulliRBM(n_components=5, n_iter=3, batch_size=20, random_state=0).fit(X)
    # Per epoch: the free energy's two products and the two of publishing.
    assert len(calls) >= 3 * 4
