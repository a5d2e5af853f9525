"""Restricted and fully visible Boltzmann machines for scikit-learn.

Estimators
----------
DCPBernoulliRBM
    Binary RBM trained by CD-K, PCD, centred gradient, S-DCP or centred S-DCP.
FVBMPseudoLikelihood
    Fully visible Boltzmann machine fitted by maximum pseudo-likelihood.

Public modules: :mod:`sklearn_rbm.likelihood` (exact and AIS log partition
functions) and :mod:`sklearn_rbm.datasets`. The arithmetic lives in numba
kernels under ``sklearn_rbm._kernels``.
"""

from ._dcp import DCPBernoulliRBM
from ._fvbm import FVBMPseudoLikelihood, MPLEDoesNotExistWarning

__version__ = "0.1.0.dev0"

__all__ = ["DCPBernoulliRBM", "FVBMPseudoLikelihood", "MPLEDoesNotExistWarning"]
