"""
=====================================================================
Direct coupling analysis: protein contacts from a sequence alignment
=====================================================================

A Potts model fitted to a multiple sequence alignment of a protein family
predicts which positions touch in the folded structure: the strongest
couplings (APC-corrected Frobenius norms) are mostly contacts (Morcos et al.
2011; Ekeberg et al. 2013). This example fits
:class:`~sklearn_rbm.PottsPseudoLikelihood` to the Kunitz/BPTI domain
(Pfam PF00014) and draws the predicted contact map over the true one.

The alignment is read from the path in the environment variable
``SKLEARN_RBM_PF00014`` (the file ``PF00014_mgap6.fasta.gz``, with the
distances ``PF00014_struct.dat`` beside it) or given as the first argument.
Without it the example falls back to synthetic data: sequences Gibbs-sampled
from a known sparse Potts model, whose couplings are the "contacts".
"""

# %%
# The data
# --------
import os
import sys
import time

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm import PottsPseudoLikelihood
from sklearn_rbm.sequences import (
    contact_precision,
    read_alignment,
    sequence_weights,
    top_contacts,
)

path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SKLEARN_RBM_PF00014")


def synthetic(L=40, q=4, n=3000, seed=0):
    """Sequences from a sparse Potts model with couplings on a random matching
    of the positions; returns codes and the coupled pairs as a contact map."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(L)
    truth = np.zeros((L, L), dtype=bool)
    J = np.zeros((L, L, q, q))
    for a, b in zip(order[::2], order[1::2], strict=True):
        block = rng.normal(0, 1.2, (q, q))
        J[a, b], J[b, a] = block, block.T
        truth[a, b] = truth[b, a] = True
    model = PottsPseudoLikelihood(n_states=q, random_state=seed)
    model.n_features_in_, model.n_states_ = L, q
    model.intercept_, model.coupling_ = rng.normal(0, 0.3, (L, q)), J
    return model.sample(n, burn_in=200, thinning=3), truth


if path and os.path.exists(path):
    X, ids = read_alignment(path)
    distances = np.loadtxt(os.path.join(os.path.dirname(path), "PF00014_struct.dat"))
    L = X.shape[1]
    truth = np.zeros((L, L), dtype=bool)
    i, j = distances[:, 0].astype(int) - 1, distances[:, 1].astype(int) - 1
    close = distances[:, -1] < 8.0
    truth[i[close], j[close]] = truth[j[close], i[close]] = True
    n_states, min_separation, title = 21, 5, "PF00014 (Kunitz domain)"
else:
    X, truth = synthetic()
    L = X.shape[1]
    n_states, min_separation, title = 4, 1, "synthetic sparse Potts model"
print(f"{title}: {X.shape[0]} sequences x {L} positions")

# %%
# Sequence weights and the fit
# ----------------------------
# Each sequence counts as one over the number of sequences at least 80 %
# identical to it; the fit minimises plmc's penalised pseudo-likelihood.
start = time.perf_counter()
w = sequence_weights(X)
potts = PottsPseudoLikelihood(n_states=n_states, n_jobs=2).fit(X, sample_weight=w)
print(
    f"N_eff = {w.sum():.1f}; fitted in {time.perf_counter() - start:.1f} s "
    f"({potts.n_iter_} L-BFGS iterations)"
)

scores = potts.contact_scores()
for k in (L // 5, L // 2, L, 2 * L):
    ppv = contact_precision(scores, truth, k, min_separation=min_separation)
    print(f"PPV@{k}: {ppv:.2f}")

# %%
# The contact map
# ---------------
# True contacts in grey (lower triangle: the top-L predictions too, coloured
# by whether they are right).
pairs, _ = top_contacts(scores, min_separation=min_separation, n_top=L)
right = truth[pairs[:, 0], pairs[:, 1]]
fig, ax = plt.subplots(figsize=(5.5, 5.5))
ti, tj = np.nonzero(np.triu(truth, min_separation))
ax.scatter(ti, tj, s=18, c="0.8", label="contact (structure)")
ax.scatter(tj, ti, s=18, c="0.8")
ax.scatter(
    pairs[right, 1], pairs[right, 0], s=10, c="tab:blue", label="predicted, right"
)
ax.scatter(
    pairs[~right, 1], pairs[~right, 0], s=10, c="tab:red", label="predicted, wrong"
)
ax.set_xlim(-1, L)
ax.set_ylim(L, -1)
ax.set_xlabel("position j")
ax.set_ylabel("position i")
ax.set_title(f"{title}: top {L} couplings")
ax.legend(loc="upper right", fontsize=8)
plt.tight_layout()
plt.show()
