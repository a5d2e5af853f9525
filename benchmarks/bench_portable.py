"""What kernels compiled for a portable processor baseline cost at run time.

A wheel's shipped kernels are compiled for the processor of the machine that
built it, and numba loads them only on the same processor (its cache key holds
the processor name and features). They could instead target a baseline every
x86-64 processor runs (``NUMBA_CPU_NAME=generic``), so that a wheel built
elsewhere loads them; this script measures what that costs. For each target
it runs, in a fresh process with every cache off (so the kernels compile for
that target), a PCD-1 epoch of a 784 x 500 ``DCPBernoulliRBM`` (matrix
products, which BLAS does whatever the target, and the element-wise draws and
statistics, which numba compiles) and the layer's Bernoulli draw of a 100 x
784 block alone, and prints the best of ``--repeats`` times of each, and the
ratio of the generic to the host target.

Run: ``python benchmarks/bench_portable.py`` (``--blas-threads 1`` for steadier
ratios on a busy machine).
"""

import argparse
import json
import os
import subprocess
import sys

_CHILD = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._numerics.random import new_key
from sklearn_rbm._rbm.layers.bernoulli import add_bias_sample_keyed_

repeats, blas_threads = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
X = (rng.random((2000, 784)) < 0.15).astype(np.float64)
pre, bias = rng.standard_normal((100, 784)), rng.standard_normal(784)
generator = np.random.default_rng(1)
add_bias_sample_keyed_(pre.copy(), bias, np.uint64(new_key(generator)))
rbm = DCPBernoulliRBM(n_components=500, solver="pcd", batch_size=100, n_iter=1,
                      random_state=0)
with threadpool_limits(blas_threads):
    rbm.fit(X[:200])  # compile
    epochs, draws = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        rbm.partial_fit(X)
        epochs.append(time.perf_counter() - start)
        block = pre.copy()
        start = time.perf_counter()
        for _ in range(200):
            block[:] = pre
            add_bias_sample_keyed_(block, bias, np.uint64(new_key(generator)))
        draws.append((time.perf_counter() - start) / 200)
print(json.dumps({"epoch": min(epochs), "draw": min(draws)}))
"""


def measure(cpu_name, repeats, blas_threads):
    """Best times of one target, in a fresh process with the caches off."""
    env = dict(os.environ, SKLEARN_RBM_NUMBA_CACHE="0")
    if cpu_name:
        env.update(NUMBA_CPU_NAME=cpu_name, NUMBA_CPU_FEATURES="")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(repeats), str(blas_threads)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--blas-threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    host = measure(None, args.repeats, args.blas_threads)
    generic = measure("generic", args.repeats, args.blas_threads)
    print(f"BLAS threads: {args.blas_threads}; best of {args.repeats}")
    print(f"{'':28s} {'host ms':>9s} {'generic ms':>11s} {'generic/host':>13s}")
    for key, label in (
        ("epoch", "PCD-1 epoch, 2000 x 784"),
        ("draw", "draw 100 x 784"),
    ):
        h, g = host[key] * 1e3, generic[key] * 1e3
        print(f"{label:28s} {h:9.3f} {g:11.3f} {g / h:13.2f}")


if __name__ == "__main__":
    main()
