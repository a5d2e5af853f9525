"""Restricted and fully visible Boltzmann machines for scikit-learn.

Estimators
----------
CategoricalRBM
    RBM with categorical (Potts) visible units: integer codes such as aligned
    protein sequences, with sequence weights.
DCPBernoulliRBM
    Binary RBM trained by CD-K, PCD, centred gradient, S-DCP, centred S-DCP
    or parallel tempering.
FrankWolfeRBM
    RBM grown one hidden unit per Frank-Wolfe step; picks its own size.
ConditionalRBMRegressor
    Conditional RBM for structured prediction of binary outputs (CD,
    CD-PercLoss, mean field, BP, MSSVM, LSSVM).
FVBMPseudoLikelihood
    Fully visible Boltzmann machine (Ising model) fitted by maximum
    pseudo-likelihood, with an optional L1 penalty.
PottsPseudoLikelihood
    Potts model of categorical sequences (direct coupling analysis) fitted
    by maximum pseudo-likelihood, as plmc.
PottsBoltzmannMachine
    Potts model fitted by maximum likelihood on persistent Gibbs chains
    (Boltzmann-machine learning, as bmDCA and adabmDCA): generative.
GaussianBernoulliRBM
    RBM with real-valued (Gaussian) visible units, trained by the solvers of
    DCPBernoulliRBM, scored by its log-density.

Public modules: :mod:`sklearn_rbm.likelihood` (exact and AIS log partition
functions), :mod:`sklearn_rbm.inference` (belief propagation, mean field,
exact marginals), :mod:`sklearn_rbm.datasets` and
:mod:`sklearn_rbm.sequences` (alignments, sequence weights, contacts). The
arithmetic lives in numba kernels beside each family and under
``sklearn_rbm._numerics``.
"""

from ._conditional.estimator import ConditionalRBMRegressor
from ._frank_wolfe.estimator import FrankWolfeRBM
from ._fvbm.estimator import FVBMPseudoLikelihood, MPLEDoesNotExistWarning
from ._potts.boltzmann import PottsBoltzmannMachine
from ._potts.estimator import PottsPseudoLikelihood
from ._rbm.bernoulli import DCPBernoulliRBM
from ._rbm.categorical import CategoricalRBM
from ._rbm.gaussian import GaussianBernoulliRBM

__version__ = "0.1.0.dev0"

__all__ = [
    "CategoricalRBM",
    "ConditionalRBMRegressor",
    "DCPBernoulliRBM",
    "FrankWolfeRBM",
    "FVBMPseudoLikelihood",
    "GaussianBernoulliRBM",
    "MPLEDoesNotExistWarning",
    "PottsBoltzmannMachine",
    "PottsPseudoLikelihood",
]
