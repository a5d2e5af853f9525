"""Numba kernels: plain arrays in, plain arrays out, no scikit-learn imports.

Every kernel is compiled through :func:`sklearn_rbm._kernels._jit.jit`, which
fixes the project's numba options in one place (on-disk cache, no fastmath).
"""
