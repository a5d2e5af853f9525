"""
====================================================================
An RBM of a protein family: likelihood, hidden-unit motifs, contacts
====================================================================

:class:`~sklearn_rbm.CategoricalRBM` models sequences with one categorical
visible unit per position (21 states for proteins: the gap and 20 amino
acids) and a layer of hidden units, as Tubiana, Cocco & Monasson (eLife 2019)
do for protein families. Trained on 80% of an alignment with sequence
weights, it is compared on the other 20% with

* the independent-site model (each position on its own), the base model of
  its annealed importance sampling, and
* the Potts model of direct coupling analysis
  (:class:`~sklearn_rbm.PottsPseudoLikelihood`),

by the held-out log-likelihood per sequence (AIS for both, with their bands).
The weights of a hidden unit read as a motif: which states at which positions
switch it on. The RBM's effective pairwise couplings (Tubiana et al.'s
second-order expansion) rank pairs of positions as the Potts couplings do.

The alignment is the Kunitz/BPTI domain (Pfam PF00014) when the path of
``PF00014_mgap6.fasta.gz`` (with ``PF00014_struct.dat`` beside it) is in the
environment variable ``SKLEARN_RBM_PF00014`` or the first argument; otherwise
sequences drawn from a known sparse Potts model
(:func:`~sklearn_rbm.datasets.make_potts`) stand in, their coupled pairs as the
"contacts". ``SKLEARN_RBM_EXAMPLE_QUICK=1`` shrinks the fits.
"""

# %%
# The data and the split
# ----------------------
import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm import CategoricalRBM, PottsPseudoLikelihood
from sklearn_rbm.datasets import make_potts
from sklearn_rbm.sequences import contact_precision, read_alignment, sequence_weights

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SKLEARN_RBM_PF00014")
if path and os.path.exists(path):
    X, _ = read_alignment(path)
    distances = np.loadtxt(os.path.join(os.path.dirname(path), "PF00014_struct.dat"))
    L = X.shape[1]
    truth = np.zeros((L, L), dtype=bool)
    i, j = distances[:, 0].astype(int) - 1, distances[:, 1].astype(int) - 1
    close = distances[:, -1] < 8.0
    truth[i[close], j[close]] = truth[j[close], i[close]] = True
    q, min_separation, title = 21, 5, "PF00014 (Kunitz domain)"
    n_hidden, n_epochs, n_top = 100, 20, L  # PPV@L, as DCA papers report it
else:
    X, truth, _, _ = make_potts(3000, 30, 4, random_state=0)
    L, q, min_separation, title = 30, 4, 1, "sequences of a sparse Potts model"
    n_hidden, n_epochs, n_top = 50, 50, int(truth.sum()) // 2  # the true pairs
rng = np.random.default_rng(0)
order = rng.permutation(len(X))
n_train = int(0.8 * len(X))
X_train, X_test = X[order[:n_train]], X[order[n_train:]]
weights = sequence_weights(X_train)
print(
    f"{title}: {len(X)} sequences x {L} positions, q = {q}; "
    f"{weights.sum():.0f} effective training sequences"
)

# %%
# Three models, one held-out likelihood
# -------------------------------------
# Centred S-DCP (Upadhya & Sastry 2017), the solver that learned these data
# best in a quick comparison (PCD-1 at the same rate stayed near the
# independent-site model on the synthetic family).
if QUICK:
    n_epochs //= 2
rbm = CategoricalRBM(
    n_components=n_hidden, n_states=q, solver="csdcp", learning_rate=0.05,
    n_iter=n_epochs, score_method="ais", ais_betas=1000 if QUICK else 10_000,
    random_state=0,
).fit(X_train, sample_weight=weights)  # fmt: skip
potts = PottsPseudoLikelihood(
    n_states=q, score_method="ais", ais_betas=1000 if QUICK else 10_000,
    random_state=0,
).fit(X_train, sample_weight=weights)  # fmt: skip
independent = rbm.site_fields_[np.arange(L), X_test].sum(axis=1).mean()
print(f"held-out log-likelihood per sequence, independent sites: {independent:.2f}")
for name, model in (("CategoricalRBM", rbm), ("PottsPseudoLikelihood", potts)):
    band = model.log_partition_function()
    # score = mean log p~(x) - log Z: the band of log Z is the band of the score
    score = model.score(X_test)
    print(
        f"{name:>22s}: {score:.2f}  (AIS band {score + band.log_z - band.upper:.2f} "
        f"to {score + band.log_z - band.lower:.2f})"
    )

# %%
# Hidden units as motifs
# ----------------------
# The weights ``W[mu, i, a]`` of the four hidden units with the largest
# weights, in the zero-sum gauge: red states at a position switch the unit
# on, blue ones off.
W = rbm.components_.reshape(n_hidden, L, q)
strongest = np.argsort(-np.abs(W).sum(axis=(1, 2)))[:4]
fig, axes = plt.subplots(4, 1, figsize=(9, 7), sharex=True)
for ax, unit in zip(axes, strongest, strict=True):
    limit = np.abs(W[unit]).max()
    ax.imshow(W[unit].T, aspect="auto", cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_ylabel(f"unit {unit}\nstate")
axes[-1].set_xlabel("position")
fig.suptitle("Weights of four hidden units (state x position)")
fig.tight_layout()

# %%
# Contacts from the effective couplings
# -------------------------------------
fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
for ax, (name, model) in zip(axes, (("RBM", rbm), ("Potts", potts)), strict=True):
    scores = model.contact_scores()
    precision = contact_precision(scores, truth, n_top, min_separation=min_separation)
    upper = np.triu_indices(L, min_separation)
    top = np.argsort(-scores[upper])[:n_top]
    ax.imshow(truth, cmap="Greys", alpha=0.3)
    ax.scatter(upper[1][top], upper[0][top], s=12, c="tab:red")
    ax.set_title(f"{name}: top {n_top} pairs, precision {precision:.2f}")
fig.tight_layout()
plt.show()
