"""Several fits at once and data on disk: the BLAS thread limit under
concurrent threads, grid searches on a dask.distributed cluster through
joblib's dask backend, and partial_fit over a memory map."""

import os
import threading

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from threadpoolctl import OpenBLASController, ThreadpoolController, threadpool_info

from sklearn_rbm import DCPBernoulliRBM, FVBMPseudoLikelihood
from sklearn_rbm._core.utils import blas_threads_for
from sklearn_rbm.datasets import load_binary_digits, make_fvbm


# ------------------------------------------------- the BLAS limit in threads
def blas_thread_counts():
    return [
        info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"
    ]


@pytest.fixture
def three_blas_threads():
    """BLAS set to 3 threads for the test, whatever the machine's default, so
    that a limit of 1 left behind shows; the default is restored after."""
    blas = ThreadpoolController().select(user_api="blas")
    if not blas.lib_controllers:
        pytest.skip("no BLAS library that threadpoolctl can control")
    # Set without entering, so this thread gives OpenBLAS's control back
    # (threadpoolctl 3.8 otherwise ignores the other threads' settings).
    release = getattr(OpenBLASController, "clear_controlling_thread", lambda: None)
    limit = blas.limit(limits=3)
    release()
    yield [3] * len(blas.lib_controllers)
    limit.restore_original_limits()
    release()


def run_in_threads(*functions):
    """Run each function in its own thread; re-raise the first error."""
    errors = []

    def guarded(function):
        try:
            function()
        except Exception as error:  # handed to the main thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(f,)) for f in functions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    if errors:
        raise errors[0]


def fit_at_once(estimators, X):
    """Fit each estimator in its own thread, all starting together."""
    start = threading.Barrier(len(estimators))

    def fit(estimator):
        start.wait(30)
        estimator.fit(X)

    run_in_threads(*(lambda e=e: fit(e) for e in estimators))


@pytest.mark.parametrize("first_in_main_thread", [False, True])
def test_overlapping_limits_restore_the_thread_count(
    three_blas_threads, first_in_main_thread
):
    """A enters, B enters, A leaves, B leaves (forced by events): BLAS stays on
    one thread while either is inside, and its count is back afterwards.

    threadpoolctl's own context fails this: B saves A's temporary 1, A
    restores 3 under B, and B leaves 1 behind for good."""
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with blas_threads_for(0):
            a_inside.set()
            assert b_inside.wait(30)
            seen["both inside"] = blas_thread_counts()
        a_left.set()

    def second():
        assert a_inside.wait(30)
        with blas_threads_for(0):
            b_inside.set()
            assert a_left.wait(30)
            seen["second alone"] = blas_thread_counts()

    if first_in_main_thread:
        helper = threading.Thread(target=second)
        helper.start()
        first()
        helper.join(30)
    else:
        run_in_threads(first, second)
    ones = [1] * len(three_blas_threads)
    assert seen == {"both inside": ones, "second alone": ones}
    assert blas_thread_counts() == three_blas_threads


def test_large_products_leave_blas_alone(three_blas_threads):
    with blas_threads_for(2**30):
        assert blas_thread_counts() == three_blas_threads


def test_nested_limits_in_one_thread(three_blas_threads):
    # fit -> score -> AIS enters the limit again inside the fit's limit.
    with blas_threads_for(0):
        with blas_threads_for(0):
            pass
        assert blas_thread_counts() == [1] * len(three_blas_threads)
    assert blas_thread_counts() == three_blas_threads


def test_two_threads_fitting_at_once_match_serial_fits(three_blas_threads):
    """Two DCP fits in two threads: bit-identical to the same fits run one
    after the other, and BLAS has its thread count back afterwards."""
    X, _ = load_binary_digits()
    settings = [
        {"solver": "sdcp", "random_state": 0},
        {"solver": "pcd", "random_state": 1},
    ]

    def make(params):
        return DCPBernoulliRBM(n_components=16, n_iter=3, batch_size=10, **params)

    serial = [make(params).fit(X) for params in settings]
    for repeat in range(3):
        together = [make(params) for params in settings]
        fit_at_once(together, X)
        for alone, concurrent in zip(serial, together, strict=True):
            np.testing.assert_array_equal(concurrent.components_, alone.components_)
            np.testing.assert_array_equal(
                concurrent.intercept_hidden_, alone.intercept_hidden_
            )
        assert blas_thread_counts() == three_blas_threads, f"repeat {repeat}"


# ------------------------------------------------- dask.distributed workers
# dask's nanny sets OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS
# to 1 before it starts a worker process; numba's threads need the same.
# NUMBA_NUM_THREADS is read when numba is imported, which in a spawned worker
# happens before the nanny's ``env`` is applied (the user's main module is
# imported first), and numba.set_num_threads in a worker plugin only sets the
# plugin's own thread: the pre-spawn environment is the setting that works.
WORKER_THREAD_CAP = {"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": 1}
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)


@pytest.fixture(scope="module")
def dask_client():
    """Two single-threaded worker processes with the documented thread cap.

    The nanny writes its pre-spawn environment into this process's
    ``os.environ`` too: the test puts it back afterwards."""
    distributed = pytest.importorskip("distributed")
    import dask

    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    try:
        with dask.config.set(WORKER_THREAD_CAP):
            with distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, dashboard_address=None
            ) as cluster:
                with distributed.Client(cluster) as client:
                    yield client
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        keep_numba_thread_count()


def keep_numba_thread_count():
    """numba re-reads NUMBA_NUM_THREADS at every compile and refuses a count
    other than the one its threads started with: when they started under the
    nanny's cap, the restored environment would make every later compile in
    this process fail, so the variable keeps the count they started with."""
    import numba
    from numba.core import config

    started = numba.config.NUMBA_NUM_THREADS
    try:
        config.reload_config()
    except RuntimeError:
        os.environ["NUMBA_NUM_THREADS"] = str(started)
        config.reload_config()


def threads_of_this_task():
    """BLAS and numba threads available to the thread running this task."""
    import numba

    blas = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
    return sorted(blas), numba.get_num_threads()


def test_workers_run_one_blas_and_one_numba_thread(dask_client):
    workers = list(dask_client.scheduler_info()["workers"])
    assert len(workers) == 2
    seen = [
        dask_client.submit(threads_of_this_task, pure=False, workers=[w]).result()
        for w in workers
    ]
    assert seen == [([1], 1), ([1], 1)]


def search_both_ways(search, X, y=None):
    """``search`` fitted with ``n_jobs=1``, and with ``n_jobs=-1`` on the
    cluster (joblib's dask backend finds the active client); the scores of
    every candidate and split and the chosen parameters must be equal."""
    serial = clone(search).set_params(n_jobs=1).fit(X, y)
    with joblib.parallel_backend("dask"):
        distributed = clone(search).set_params(n_jobs=-1).fit(X, y)
    assert distributed.cv_results_["params"] == serial.cv_results_["params"]
    for split in range(search.cv):
        key = f"split{split}_test_score"
        np.testing.assert_array_equal(
            distributed.cv_results_[key], serial.cv_results_[key]
        )
    assert distributed.best_params_ == serial.best_params_
    return serial, distributed


def test_dcp_pipeline_search_on_dask_equals_n_jobs_1(dask_client):
    X, y = load_binary_digits()
    pipeline = Pipeline(
        [
            ("rbm", DCPBernoulliRBM(n_components=32, n_iter=4, random_state=0)),
            ("clf", LogisticRegression(max_iter=500)),
        ]
    )
    grid = {"rbm__solver": ["cd", "sdcp"], "rbm__learning_rate": [0.01, 0.1]}
    serial, distributed = search_both_ways(GridSearchCV(pipeline, grid, cv=2), X, y)
    # The candidates differ (the search has something to choose) ...
    assert np.ptp(serial.cv_results_["mean_test_score"]) > 0.01
    # ... and the refitted pipelines are the same bit for bit.
    rbm, clf = serial.best_estimator_.named_steps.values()
    rbm_d, clf_d = distributed.best_estimator_.named_steps.values()
    np.testing.assert_array_equal(rbm_d.components_, rbm.components_)
    np.testing.assert_array_equal(rbm_d.intercept_visible_, rbm.intercept_visible_)
    np.testing.assert_array_equal(clf_d.coef_, clf.coef_)


def test_fvbm_search_on_dask_equals_n_jobs_1(dask_client):
    X, _, _ = make_fvbm(600, 6, coupling_variance=0.1, random_state=0)
    grid = {"alpha": [0.0, 0.05], "solver": ["lbfgs", "mm"]}
    search = GridSearchCV(FVBMPseudoLikelihood(random_state=0), grid, cv=3)
    serial, distributed = search_both_ways(search, X)
    assert np.ptp(serial.cv_results_["mean_test_score"]) > 1e-4
    np.testing.assert_array_equal(
        distributed.best_estimator_.coupling_, serial.best_estimator_.coupling_
    )
    np.testing.assert_array_equal(
        distributed.best_estimator_.intercept_, serial.best_estimator_.intercept_
    )


# ------------------------------------------------------ streaming from disk
def test_partial_fit_over_a_read_only_memmap_equals_chunks_in_memory(tmp_path):
    """The memory-mapped example's path: chunks read from a read-only ``.npy``
    memory map train exactly as the same chunks in memory, in float32."""
    X = (load_digits().data / 16.0).astype(np.float32)  # grey levels in [0, 1]
    path = tmp_path / "digits.npy"
    np.save(path, X)
    on_disk = np.load(path, mmap_mode="r")
    assert not on_disk.flags.writeable
    streamed, in_memory = (
        DCPBernoulliRBM(n_components=8, solver="pcd", random_state=0) for _ in "ab"
    )
    starts = range(0, len(X), 500)
    for start in starts:
        streamed.partial_fit(on_disk[start : start + 500])
        in_memory.partial_fit(X[start : start + 500].copy())
    assert streamed.components_.dtype == np.float32
    assert streamed.n_iter_ == len(starts) == 4
    np.testing.assert_array_equal(streamed.components_, in_memory.components_)
    np.testing.assert_array_equal(
        streamed.intercept_visible_, in_memory.intercept_visible_
    )
    np.testing.assert_array_equal(on_disk, X)  # the file was not written to
