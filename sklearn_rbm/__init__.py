"""Restricted and fully visible Boltzmann machines for scikit-learn.

Estimators are added to ``__all__`` as they land; the arithmetic lives in
numba kernels under ``sklearn_rbm._kernels``.
"""

__version__ = "0.1.0.dev0"

__all__ = []
