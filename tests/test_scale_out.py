"""Several fits at once: the BLAS thread limit under concurrent threads, and
grid searches on a dask.distributed cluster through joblib's dask backend."""

import threading

import numpy as np
import pytest
from threadpoolctl import OpenBLASController, ThreadpoolController, threadpool_info

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._utils import blas_threads_for
from sklearn_rbm.datasets import load_binary_digits


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
    # (threadpoolctl >= 3.8 otherwise ignores the other threads' settings).
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
