"""``sklearn_rbm/_numerics/blas.py``: ``gemm_`` against numpy for every layout
and dtype the kernels use, and its edge cases."""

import itertools

import numpy as np
import pytest

from sklearn_rbm._numerics.blas import gemm_


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
