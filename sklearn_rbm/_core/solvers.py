"""The shape of every family's solver table.

A family keeps one table, ``SOLVERS``, from the names its ``solver``
hyperparameter takes to frozen instances of a subclass of :class:`Solver`:
the flags the estimator reads (validated by ``StrOptions(set(SOLVERS))``)
and ``make_step``, the function that does the solver's work. ``make_step``
takes the fit's *state object* (the arrays it trains and the settings it
needs: never the estimator) and the solver's resolved settings, and returns
the callable the estimator runs:

* the RBM trainer and the conditional RBM train by epochs, so theirs is a
  mini-batch step ``step(batch)`` the training engine calls
  (``_rbm/solvers.py``, ``_conditional/solvers.py``);
* the fully visible Boltzmann machine solves in one go, so its callable
  runs the whole fit (``_fvbm/solvers.py``).

Hooks a solver owns (the tempering of the RBM solvers, the inference a
conditional RBM's solver predicts with) are fields of its entry, so an
estimator never branches on a solver's kind.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Solver:
    """One entry of a solver table: what a ``solver`` name means.

    Attributes
    ----------
    make_step : callable
        ``make_step(state, settings)``: the callable the estimator runs (a
        mini-batch step, or the whole fit), made from the fit's state object
        and the solver's resolved settings.
    """

    make_step: Callable
