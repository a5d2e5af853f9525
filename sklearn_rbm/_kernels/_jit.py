"""The one place where the project's numba options are decided.

* ``cache``: compiled kernels are written next to their source so that a second
  Python process does not pay the compile time again. Set the environment
  variable ``SKLEARN_RBM_NUMBA_CACHE=0`` to switch it off (read-only installs,
  debugging a kernel).
* ``fastmath`` stays off: it lets LLVM assume no inf/NaN, which turns an
  overflow into a silent NaN instead of an error we can report.
* ``nogil``: kernels release the GIL so joblib's threading backend can overlap
  them.

``NUMBA_DISABLE_JIT=1`` (numba's own switch) runs every kernel as Python, for
debugging and coverage.
"""

import os

import numba

CACHE = os.environ.get("SKLEARN_RBM_NUMBA_CACHE", "1").lower() not in (
    "0",
    "false",
    "no",
)


def jit(*args, **kwargs):
    """``numba.njit`` with the project's defaults (see the module docstring)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    kwargs.setdefault("fastmath", False)
    return numba.njit(*args, **kwargs)
