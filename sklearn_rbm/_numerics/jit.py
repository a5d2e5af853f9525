"""The one place where the project's numba options are decided.

* ``cache``: compiled kernels are written next to their source so that a second
  Python process does not pay the compile time again. Set the environment
  variable ``SKLEARN_RBM_NUMBA_CACHE=0`` to switch it off (read-only installs,
  debugging a kernel). The caches carry a hash of every kernel source of the
  package, so an edit anywhere in the compiled code recompiles every kernel
  once instead of leaving a kernel that inlines the edited code stale
  (``_core/numba_compat.py``). Kernels compiled when the package was
  installed are read first (``cache.py``).
* ``fastmath`` stays off: it lets LLVM assume no inf/NaN, which turns an
  overflow into a silent NaN instead of an error we can report.
* ``nogil``: kernels release the GIL so joblib's threading backend can overlap
  them.

Two decorators, for two kinds of kernel:

* :func:`jit` for every kernel;
* :func:`vector_jit` for the element-wise loops that must compile to SIMD
  code: the same options with numpy's error model (see below and
  ``vecmath.py``).

``NUMBA_DISABLE_JIT=1`` (numba's own switch) runs every kernel as Python, for
debugging and coverage.
"""

import os
import warnings

import numba
from numba.core.errors import NumbaIRAssumptionWarning

from .._core.numba_compat import install_cache_guard
from .cache import ship

# numba's inlining of the package's ``inline="always"`` overloads leaves
# variables that numba's own pedantic IR check then reports as "not in scope",
# asking for a numba bug report (four such warnings on the first fit of a
# tempering solver that compiles). Nothing a user can act on, and the
# compiled kernels are right (their tests); hidden for this package's source
# files only (numba names the kernel's file as the warning's origin).
warnings.filterwarnings(
    "ignore", category=NumbaIRAssumptionWarning, module=r".*sklearn_rbm[/\\]"
)

CACHE = os.environ.get("SKLEARN_RBM_NUMBA_CACHE", "1").lower() not in (
    "0",
    "false",
    "no",
)
if CACHE:
    # Kernels inline code from other files: stamp their caches with a hash
    # of all the package's kernel sources, so none runs stale code.
    install_cache_guard(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: The floating-point freedom of reduction kernels (dot products, sums):
#: reassociation lets LLVM split a running sum over SIMD lanes (four to eight
#: times faster than one chain), contraction fuses the multiply-add. The
#: order is fixed by the compiled code, so results stay bit-identical from
#: run to run and thread count to thread count on one machine; NaN and
#: infinity keep their meaning (no ``nnan`` / ``ninf``, the flags
#: ``fastmath=False`` avoids). Give it to small functions holding the
#: reduction alone: a caller's other arithmetic keeps its own rounding.
REDUCTION_MATH = {"reassoc", "contract"}


def jit(*args, **kwargs):
    """``numba.njit`` with the project's defaults (see the module docstring)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    kwargs.setdefault("fastmath", False)
    return ship(numba.njit(*args, **kwargs))  # reads the shipped kernels first


def vector_jit(*args, **kwargs):
    """:func:`jit` with ``error_model='numpy'``, for element-wise loops that
    must vectorise.

    With numba's default Python error model every division checks its
    denominator for zero and raises: a branch in every iteration, which
    stops LLVM from vectorising the loop. Kernels decorated here divide only
    by quantities that cannot be zero (the branch-free functions of
    ``vecmath.py`` guarantee it for theirs).
    """
    kwargs.setdefault("error_model", "numpy")
    return jit(*args, **kwargs)
