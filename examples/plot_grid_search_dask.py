"""
==============================================================
A grid search on a dask cluster, one thread per worker process
==============================================================

A grid search that outgrows one machine runs on many with scikit-learn's
standard route: ``GridSearchCV(..., n_jobs=-1)`` inside
``joblib.parallel_backend("dask")`` sends every (candidate, split) fit to the
workers of a ``dask.distributed`` cluster. Nothing in ``sklearn_rbm`` changes:
the estimators pickle as plain arrays and a fixed ``random_state`` gives the
same fitted model on any worker, so the search returns exactly what
``n_jobs=1`` returns.

What needs care is the threads *inside* each worker. A worker process given
one task thread still runs BLAS's thread pool and numba's parallel loops,
which by default use every core of the machine: two such workers on two cores
fight over them. dask's nanny sets ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``
and ``OPENBLAS_NUM_THREADS`` to 1 before it starts a worker; numba reads
``NUMBA_NUM_THREADS``, which must be set the same way, in the nanny's
*pre-spawn* environment (the user guide's scale-out page shows what the other
routes get wrong and what the caps are worth).

Here a ``LocalCluster`` stands in for a real cluster: one worker process per
core, one task thread each. A DCP feature extractor with a logistic regression
on top is tuned over its solver and learning rate on the binarised 8x8
digits. Without ``distributed`` installed (``pip install distributed``) the
example runs the same search with joblib's default backend on this machine.
"""

# %%
import os
import time

import joblib
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.datasets import load_binary_digits

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
X, y = load_binary_digits()
pipeline = Pipeline(
    [
        ("rbm", DCPBernoulliRBM(n_components=64, n_iter=3 if QUICK else 10)),
        ("clf", LogisticRegression(max_iter=1000)),
    ]
)
grid = {
    "rbm__solver": ["cd", "pcd", "sdcp", "csdcp"],
    "rbm__learning_rate": [0.01, 0.03, 0.1],
    "rbm__random_state": [0],
}
search = GridSearchCV(pipeline, grid, cv=3, n_jobs=-1)

# %%
# The cluster
# -----------
# ``NUMBA_NUM_THREADS`` joins dask's own caps in the pre-spawn environment; on
# a real cluster, set it in the environment of ``dask worker`` (or in the
# workers' dask configuration under ``distributed.nanny.pre-spawn-environ``).
# ``joblib.parallel_backend("dask")`` then sends the search's fits to the
# workers of the active client.
try:
    import dask
    from distributed import Client, LocalCluster
except ImportError:
    dask = None


def fit_on_cluster(search, X, y):
    """Fit ``search`` on a local cluster, one single-threaded worker per core
    (joblib's default backend on this machine without ``distributed``)."""
    if dask is None:
        print("distributed is not installed: searching with joblib's default backend")
        return search.fit(X, y)
    n_workers = min(os.cpu_count() or 1, 4)
    # The nanny applies its pre-spawn environment by writing it into *this*
    # process's os.environ; put it back afterwards, or the thread caps would
    # leak into whatever runs next here (numba refuses a NUMBA_NUM_THREADS that
    # differs from the one its threads were launched with).
    environment = dict(os.environ)
    try:
        with dask.config.set(
            {"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": 1}
        ):
            cluster = LocalCluster(
                n_workers=n_workers, threads_per_worker=1, dashboard_address=None
            )
        with cluster, Client(cluster) as client:
            print(f"{len(client.scheduler_info()['workers'])} workers x 1 thread")
            with joblib.parallel_backend("dask"):
                return search.fit(X, y)
    finally:
        os.environ.clear()
        os.environ.update(environment)


def plot_scores(search):
    """Cross-validated accuracy of every candidate, solver by learning rate."""
    solvers, rates = grid["rbm__solver"], grid["rbm__learning_rate"]
    scores = np.empty((len(solvers), len(rates)))
    results = search.cv_results_
    for params, score in zip(
        results["params"], results["mean_test_score"], strict=True
    ):
        i = solvers.index(params["rbm__solver"])
        scores[i, rates.index(params["rbm__learning_rate"])] = score
    fig, axis = plt.subplots(figsize=(6.5, 4))
    image = axis.imshow(scores, cmap="viridis")
    axis.set(
        xticks=range(len(rates)),
        xticklabels=rates,
        yticks=range(len(solvers)),
        yticklabels=solvers,
        xlabel="learning_rate",
        ylabel="solver",
        title="DCP features + logistic regression, 3-fold accuracy",
    )
    for (i, j), value in np.ndenumerate(scores):
        axis.text(j, i, f"{value:.3f}", ha="center", va="center", color="w")
    fig.colorbar(image)
    fig.tight_layout()


# %%
# Search and show the scores
# --------------------------
# The worker processes are started with ``spawn``: each imports this script
# again, so the search runs under ``if __name__ == "__main__"``. The scores
# are the ones ``n_jobs=1`` gives, bit for bit.
if __name__ == "__main__":
    start = time.perf_counter()
    fit_on_cluster(search, X, y)
    seconds = time.perf_counter() - start
    print(f"{len(search.cv_results_['params']) * 3} fits in {seconds:.1f} s")
    print(f"best: {search.best_params_}, accuracy {search.best_score_:.3f}")
    plot_scores(search)
    plt.show()
