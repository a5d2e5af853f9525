"""Unit types of the RBM trainer: one module per type of unit.

``base.py`` declares what a unit type supplies (the :class:`~.base.Layer`
interface on the estimator side, the kernel hooks on the numba side);
``bernoulli.py`` and ``gaussian.py`` are the two types the package's RBMs use.
"""
