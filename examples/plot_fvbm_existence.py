"""
=====================================================
When the maximum pseudo-likelihood estimate is absent
=====================================================

The log pseudo-likelihood of a fully visible Boltzmann machine is strictly
concave, but its maximum need not be attained: if some conditional of the
data is *separable* -- a feature perfectly predicted by the others, as in
logistic regression -- the log-PL keeps rising along a direction of the
parameters and every solver's estimates run off to infinity. The estimate
then depends only on when the solver was told to stop.

Nguyen & Wood's (2016) own simulation set-up (couplings drawn from N(0, 0.5),
n = 16,000) produces such data for most draws once d >= 10: the units are
nearly frozen.
:class:`~sklearn_rbm.FVBMPseudoLikelihood` checks existence exactly
after each fit (``mple_exists_``) and warns; an L2 penalty ``alpha > 0``
restores a finite estimate.

Set ``SKLEARN_RBM_EXAMPLE_QUICK=1`` for a smaller run.
"""

# %%
# Two draws of Nguyen & Wood's set-up at d = 10
# ---------------------------------------------
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm import FVBMPseudoLikelihood, MPLEDoesNotExistWarning
from sklearn_rbm.datasets import make_fvbm

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK", "0") == "1"
BUDGETS = [10, 30, 100, 300] if QUICK else [10, 30, 100, 300, 1000, 3000]

draws = {
    "MPLE exists": make_fvbm(16_000, 10, random_state=100_002)[0],
    "MPLE does not exist": make_fvbm(16_000, 10, random_state=100_000)[0],
}
for name, X in draws.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FVBMPseudoLikelihood(compute_std=False).fit(X)
    flagged = [w for w in caught if issubclass(w.category, MPLEDoesNotExistWarning)]
    print(f"{name}: {len(np.unique(X, axis=0))} distinct rows of 16,000; "
          f"mple_exists_={est.mple_exists_}")  # fmt: skip
    if flagged:
        print("   warning:", str(flagged[0].message)[:150], "...")

# %%
# Estimates that depend on the iteration budget
# ---------------------------------------------
# Allow the solver more and more iterations (``tol=0`` so that only
# ``max_iter`` stops it). Where the MPLE exists the estimate settles; where it
# does not, the largest parameter keeps growing with the budget while the
# log-PL creeps towards its supremum.
fig, (grow, penal) = plt.subplots(1, 2, figsize=(9, 3.4))
for name, X in draws.items():
    largest = []
    for budget in BUDGETS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = FVBMPseudoLikelihood(
                solver="lbfgs", tol=0.0, max_iter=budget, compute_std=False
            )
            est.fit(X)
        largest.append(max(np.abs(est.coupling_).max(), np.abs(est.intercept_).max()))
    grow.semilogx(BUDGETS, largest, "o-", label=name)
grow.set_xlabel("max_iter (L-BFGS iterations)")
grow.set_ylabel("largest |parameter|")
grow.legend()

# %%
# A penalty restores a finite estimate
# ------------------------------------
# With ``alpha > 0`` the objective is ``P_n / n - alpha / 2 ||theta||^2``: it
# has a unique finite maximiser whatever the data, and the fit converges.
alphas = np.logspace(-6, -1, 4 if QUICK else 6)
for name, X in draws.items():
    largest = []
    for alpha in alphas:
        est = FVBMPseudoLikelihood(alpha=alpha, max_iter=5000, compute_std=False).fit(X)
        largest.append(max(np.abs(est.coupling_).max(), np.abs(est.intercept_).max()))
    penal.semilogx(alphas, largest, "o-", label=name)
penal.set_xlabel("alpha")
penal.set_ylabel("largest |parameter|")
fig.tight_layout()
plt.show()
