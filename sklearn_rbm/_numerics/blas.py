"""``C = alpha * A @ B + beta * C`` in place, by BLAS ``gemm``, from numba kernels.

numba's ``np.dot`` calls ``gemm`` with ``alpha = 1`` and ``beta = 0``, so a
product always overwrites its output. An RBM weight step is a sum of two
scaled products added to the weights, ``W += (lr / n) H_data^T V - (lr / n')
H_model^T V_model``; written with ``np.dot`` it needs two weight-sized scratch
arrays and then one more pass over three weight-sized arrays, which is memory
bound (0.13 ms for 784 x 500, 5% of a float32 PCD-1 mini-batch). ``gemm``
itself can scale and accumulate: it reads and writes ``C`` block by block while
the block is in cache, so the step costs no pass of its own.

:func:`gemm_` reaches ``gemm`` through the C entry point that numba's own
``np.dot`` uses (``numba_xxgemm`` in numba's helper library, which dispatches
to SciPy's BLAS; named in ``_core/numba_compat.py``). It is named by
symbol, not by address, so the kernels that call it are cached on disk like
any other.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from scipy.linalg.blas import get_blas_funcs
from sklearn.utils.extmath import safe_sparse_dot

from .._core.numba_compat import XXGEMM_SYMBOL, ensure_blas
from .jit import jit

_CHAR = ir.IntType(8)
_VOID_P = _CHAR.as_pointer()
_BLAS_KIND = {types.float32: "s", types.float64: "d"}


def _is_matrix(ty, dtype, layouts):
    return (
        isinstance(ty, types.Array)
        and ty.ndim == 2
        and ty.dtype == dtype
        and ty.layout in layouts
    )


@intrinsic
def _xgemm(typingctx, alpha, a, b, beta, c):
    """The raw ``gemm`` call for contiguous, shape-checked, non-empty operands.

    ``c`` is row-major; ``a`` and ``b`` are row-major or column-major (such as
    the transpose of a row-major array). A row-major ``m x n`` matrix is the
    column-major ``n x m`` matrix of its transpose, so the row-major
    ``C = A B`` is the column-major ``C^T = B^T A^T``: ``b`` goes first, and an
    operand is transposed for BLAS when its layout is column-major.
    """
    if not isinstance(c, types.Array) or c.dtype not in _BLAS_KIND:
        return None
    dtype = c.dtype
    if not (
        _is_matrix(a, dtype, "CF")
        and _is_matrix(b, dtype, "CF")
        and _is_matrix(c, dtype, "C")
    ):
        return None
    ensure_blas()
    signature = types.intc(dtype, a, b, dtype, c)

    def codegen(context, builder, sig, args):
        alpha_value, a_value, b_value, beta_value, c_value = args
        a_array = context.make_array(a)(context, builder, a_value)
        b_array = context.make_array(b)(context, builder, b_value)
        c_array = context.make_array(c)(context, builder, c_value)
        m, k = cgutils.unpack_tuple(builder, a_array.shape, 2)
        n = cgutils.unpack_tuple(builder, b_array.shape, 2)[1]

        def operand(ty, array):
            rows, cols = cgutils.unpack_tuple(builder, array.shape, 2)
            row_major = ty.layout == "C"
            return (
                ir.Constant(_CHAR, ord("n" if row_major else "t")),
                cols if row_major else rows,
                builder.bitcast(array.data, _VOID_P),
            )

        trans_b, ld_b, data_b = operand(b, b_array)
        trans_a, ld_a, data_a = operand(a, a_array)
        _, ld_c, data_c = operand(c, c_array)
        alpha_slot = cgutils.alloca_once_value(builder, alpha_value)
        beta_slot = cgutils.alloca_once_value(builder, beta_value)
        intp = cgutils.intp_t
        function_type = ir.FunctionType(
            ir.IntType(32),
            [_CHAR, _CHAR, _CHAR, intp, intp, intp, _VOID_P, _VOID_P, intp,
             _VOID_P, intp, _VOID_P, _VOID_P, intp],
        )  # fmt: skip
        function = cgutils.get_or_insert_function(
            builder.module, function_type, XXGEMM_SYMBOL
        )
        return builder.call(
            function,
            (
                ir.Constant(_CHAR, ord(_BLAS_KIND[dtype])),
                trans_b, trans_a, n, m, k,
                builder.bitcast(alpha_slot, _VOID_P), data_b, ld_b,
                data_a, ld_a,
                builder.bitcast(beta_slot, _VOID_P), data_c, ld_c,
            ),
        )  # fmt: skip

    return signature, codegen


@jit
def gemm_(alpha, a, b, beta, c):
    """In place: ``c[...] = alpha * a @ b + beta * c``.

    ``a`` (m x k) and ``b`` (k x n) are contiguous, row- or column-major (a
    transposed view is fine); ``c`` (m x n) is C-contiguous and may not overlap
    them. All three share one floating dtype; ``alpha`` and ``beta`` are cast
    to it. As in BLAS, ``beta = 0`` overwrites ``c`` without reading it.
    """
    m, k = a.shape
    if b.shape[0] != k or c.shape[0] != m or c.shape[1] != b.shape[1]:
        raise ValueError("gemm_: shapes of a, b and c do not match")
    if m == 0 or b.shape[1] == 0:
        return
    if k == 0:  # BLAS wants leading dimensions >= 1; the product is empty
        if beta == 0.0:
            c[...] = 0.0
        else:
            c *= beta
        return
    if _xgemm(alpha, a, b, beta, c) != 0:
        raise RuntimeError("gemm_: numba could not load SciPy's BLAS gemm")


def kernel_dot(a, b):
    """``a @ b`` (a matrix or a vector times a matrix, a matrix times a
    vector) for Python-side code that runs between kernel calls, such as the
    checks of every epoch.

    Dense operands of one float dtype go to the BLAS the kernels call
    (SciPy's, through ``scipy.linalg.blas``: no kernel to compile), anything
    else (sparse, mixed dtypes) through ``safe_sparse_dot``. numpy may bundle
    an OpenBLAS of its own, with its own thread pool: one numpy product
    between kernel calls leaves that pool's workers spinning (about 0.13 s of
    CPU after each product, measured with two threads) on the cores the
    kernels' BLAS needs next (measured: a two-thread PCD-1 epoch of a
    784 x 500 RBM went from about 1.6 to 1.15 times its products' time once
    the per-epoch divergence check stopped calling numpy's BLAS). The
    operands are passed as the transposed views BLAS reads without a copy,
    and the routines are numpy's own (``gemm``; ``gemv`` for a vector), so
    small products keep numpy's bits.
    """
    if not (
        isinstance(a, np.ndarray)
        and isinstance(b, np.ndarray)
        and (a.ndim, b.ndim) in ((2, 2), (2, 1), (1, 2))
        and a.dtype == b.dtype
        and a.dtype.type in (np.float32, np.float64)
        and a.shape[-1] == b.shape[0]
        and a.size > 0
        and b.size > 0
    ):
        return safe_sparse_dot(a, b, dense_output=True)
    a = np.ascontiguousarray(a)
    if b.ndim == 1 or not (b.flags.c_contiguous or b.flags.f_contiguous):
        b = np.ascontiguousarray(b)
    return _scipy_product(a, b)


def _scipy_product(a, b):
    """``a @ b`` by SciPy's BLAS for a C-contiguous ``a`` and a contiguous
    ``b`` of one dtype. A C-contiguous matrix is the Fortran-order matrix of
    its transpose, so row-major products are computed transposed:
    ``(a b)^T = b^T a^T``."""
    gemm, gemv = get_blas_funcs(("gemm", "gemv"), (a, b))
    if b.ndim == 1:  # a b = (a^T)^T b
        return gemv(1.0, a.T, b, trans=1)
    if a.ndim == 1:  # a b = b^T a
        if b.flags.c_contiguous:
            return gemv(1.0, b.T, a)
        return gemv(1.0, b, a, trans=1)
    if b.flags.c_contiguous:  # (a b)^T = b^T a^T, both Fortran-order views
        return gemm(1.0, b.T, a.T).T
    return gemm(1.0, b, a.T, trans_a=1).T
