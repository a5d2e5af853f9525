"""Settings every test file shares."""

import os


def pytest_configure(config):
    """Under pytest-xdist (the README's ``-n auto``), each worker gets its
    share of the cores: one numba thread and one BLAS thread per worker when
    there are as many workers as cores, as scikit-learn's own test suite does.

    Otherwise every worker would run each parallel kernel and product on all
    the cores at once, beside the other workers doing the same. Threads that
    wait for a core they share spin in numba's and OpenBLAS's pools: measured
    on two cores, two workers, ``test_potts_boltzmann.py`` and
    ``test_dcp.py`` took 35.4 s (65.7 s of CPU) with each worker at two
    threads, 26.0 s (41.4 s of CPU) at one.

    Tests of the thread count set it themselves (up to the number of threads
    numba started, ``numba.config.NUMBA_NUM_THREADS``, which stays the
    core count) and restore it. Subprocesses keep the defaults.
    """
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None:
        return
    import numba
    from threadpoolctl import threadpool_limits

    share = max(1, (os.cpu_count() or 1) // int(workers))
    numba.set_num_threads(min(share, numba.config.NUMBA_NUM_THREADS))
    threadpool_limits(share)
