"""A user's first fit: each estimator's default fit in a fresh process.

For every estimator this runs, in a new Python process whose numba cache is an
empty temporary folder (``NUMBA_CACHE_DIR``), the import of the package, a
first ``fit`` with the default hyperparameters on ordinary data and a second
(warm) ``fit`` of a fresh copy on the same data, and prints

* ``import``: the wall time of ``import sklearn_rbm``;
* ``first fit``: the first fit's wall and process CPU time (CPU time is the
  steadier figure on a machine shared with other work: it does not count the
  time spent waiting for a core), split into the time spent inside numba's
  dispatchers (compiling, or loading compiled kernels from a cache) and the
  rest;
* ``warm fit``: the second fit's wall time, the fit a user pays every time
  after the first;
* the number of kernel specialisations compiled and loaded.

scikit-learn's ``BernoulliRBM`` on the same data is the peer. ``--kernels``
adds, per estimator, the kernels that cost the most: the seconds spent in the
dispatcher on a kernel's first call (its compilation with everything it
inlines or calls, or its loading from the cache).

The data are the issue's: binarised and standardised ``load_digits``,
``load_wine`` and ``load_breast_cancer``, and ``make_multilabel_classification``.

Run: ``python benchmarks/bench_first_fit.py`` (``--only DCPBernoulliRBM`` for one
estimator, ``--kernels`` for the per-kernel split, ``--other`` for three first
fits off the defaults: another solver, hidden unit type and dtype). Each
process starts with an empty numba cache of its own and whatever compiled
kernels the package ships (``sklearn_rbm/_kernel_cache``, built by ``pip install``; see
``sklearn_rbm/_numerics/cache.py``): ``--python .venv/bin/python`` measures a
fresh ``pip install .``, run from outside the checkout. ``--cache none`` turns
every cache off, so that every kernel compiles (the cost the shipped kernels
take off the first fit).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CASES = {
    # name: (the data it fits, the estimator it fits)
    "DCPBernoulliRBM": ("digits, binarised (1797 x 64)", "binary_digits"),
    "GaussianBernoulliRBM": ("wine, standardised (178 x 13)", "wine"),
    "ConditionalRBMRegressor": ("multilabel 500 x 20 -> 5 labels", "multilabel"),
    "FrankWolfeRBM": ("digits, binarised (1797 x 64)", "binary_digits"),
    "FVBMPseudoLikelihood": ("breast cancer, binarised (569 x 30)", "binary_cancer"),
    "PottsPseudoLikelihood": ("Potts sample, q = 4 (500 x 20)", "potts"),
    "CategoricalRBM": ("Potts sample, q = 4 (500 x 20)", "potts"),
    "BernoulliRBM (scikit-learn)": ("digits, binarised (1797 x 64)", "binary_digits"),
}
# A first fit off the defaults: another solver, hidden type or dtype (the
# estimator's keyword arguments and the dtype of its data).
OTHER_FITS = {
    "CategoricalRBM(hidden_unit='drelu', solver='pt')": (
        "potts", "CategoricalRBM", {"hidden_unit": "drelu", "solver": "pt"}, None,
    ),
    "GaussianBernoulliRBM(solver='cpt'), float32": (
        "wine", "GaussianBernoulliRBM", {"solver": "cpt"}, "float32",
    ),
    "ConditionalRBMRegressor(solver='mssvm')": (
        "multilabel", "ConditionalRBMRegressor", {"solver": "mssvm"}, None,
    ),
}  # fmt: skip


def load(name):
    """The data set ``name`` as ``(X,)`` or ``(X, Y)``."""
    import numpy as np
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    if name == "binary_digits":
        return ((datasets.load_digits().data > 8).astype(np.float64),)
    if name == "wine":
        return (StandardScaler().fit_transform(datasets.load_wine().data),)
    if name == "binary_cancer":
        X = datasets.load_breast_cancer().data
        return ((X > np.median(X, axis=0)).astype(np.float64),)
    if name == "potts":
        from sklearn_rbm.datasets import make_potts

        return (make_potts(500, 20, n_states=4, random_state=0)[0],)
    if name == "multilabel":
        X, Y = datasets.make_multilabel_classification(
            n_samples=500, n_features=20, n_classes=5, random_state=0
        )
        return StandardScaler().fit_transform(X), Y.astype(np.float64)
    raise ValueError(name)


def make_estimator(name):
    if name in OTHER_FITS:
        _, class_name, settings, _ = OTHER_FITS[name]
        import sklearn_rbm

        return getattr(sklearn_rbm, class_name)(random_state=0, **settings)
    if name == "BernoulliRBM (scikit-learn)":
        from sklearn.neural_network import BernoulliRBM

        return BernoulliRBM(random_state=0)
    import sklearn_rbm

    return getattr(sklearn_rbm, name)(random_state=0)


class DispatcherClock:
    """Seconds spent in numba's dispatchers, per kernel, and kernels compiled.

    A kernel called with argument types it has no machine code for goes
    through ``Dispatcher._compile_for_args``, which compiles it (with the
    kernels it calls) or loads it from a disk cache. Timing that method gives
    the first-call cost of each kernel called from Python. The
    ``numba:compile`` event fires for each specialisation numba compiles
    (inner ones included) and not for one loaded from a cache: ``compiled``
    counts those of the package's kernels.
    """

    def __init__(self):
        from numba.core import dispatcher, event

        self.seconds = {}
        self.compiled = 0
        self.depth = 0
        clock = self
        original = dispatcher.Dispatcher._compile_for_args

        def timed(self_, *args, **kws):
            clock.depth += 1
            start = time.perf_counter()
            try:
                return original(self_, *args, **kws)
            finally:
                clock.depth -= 1
                if clock.depth == 0:
                    name = self_.py_func.__module__ + "." + self_.py_func.__name__
                    elapsed = time.perf_counter() - start
                    clock.seconds[name] = clock.seconds.get(name, 0.0) + elapsed

        class CompileCounter(event.Listener):
            def on_start(self, ev):
                module = ev.data["dispatcher"].py_func.__module__
                clock.compiled += module.startswith("sklearn_rbm")

            def on_end(self, ev):
                pass

        dispatcher.Dispatcher._compile_for_args = timed
        event.register("numba:compile", CompileCounter())

    def total(self):
        return sum(self.seconds.values())


def child(name, data_name):
    """Run in the fresh process: import, first fit, warm fit; print JSON."""
    start = time.perf_counter()
    import sklearn_rbm  # noqa: F401  (the import a user pays)

    import_seconds = time.perf_counter() - start
    data = load(data_name)  # before the clock: make_potts compiles a sampler
    clock = DispatcherClock()
    from sklearn.base import clone

    estimator = make_estimator(name)
    dtype = OTHER_FITS[name][3] if name in OTHER_FITS else None
    if dtype:
        data = tuple(part.astype(dtype) for part in data)
    wall, cpu = time.perf_counter(), time.process_time()
    estimator.fit(*data)
    first = time.perf_counter() - wall, time.process_time() - cpu
    in_dispatcher = clock.total()
    compiled = clock.compiled
    wall = time.perf_counter()
    clone(estimator).fit(*data)
    warm = time.perf_counter() - wall
    top = sorted(clock.seconds.items(), key=lambda item: -item[1])
    print(
        json.dumps(
            {
                "import": import_seconds,
                "first_wall": first[0],
                "first_cpu": first[1],
                "dispatcher": in_dispatcher,
                "compiled": compiled,
                "kernels": len(clock.seconds),
                "warm": warm,
                "top": top[:8],
            }
        )
    )


def run_fresh(name, data_name, cache, python):
    """Run :func:`child` in a new process with an empty numba cache."""
    with tempfile.TemporaryDirectory(prefix="first-fit-cache-") as folder:
        env = dict(os.environ, NUMBA_CACHE_DIR=folder)
        if cache == "none":
            env["SKLEARN_RBM_NUMBA_CACHE"] = "0"
        start = time.perf_counter()
        done = subprocess.run(
            [python, __file__, "--child", name, data_name],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        process = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process"] = process
    return result


def describe(python, cache):
    """Which package the runs import, and which kernel cache they start with."""
    code = (
        "import sys, sklearn_rbm, numba; from sklearn_rbm._numerics import cache; "
        "print(sklearn_rbm.__file__, numba.__version__, sys.version.split()[0], "
        "[str(f) for f in cache.shipped_folders()])"
    )
    found = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    start = {
        "fresh": "an empty numba cache (NUMBA_CACHE_DIR) and the shipped kernels",
        "none": "no cache at all (SKLEARN_RBM_NUMBA_CACHE=0: every kernel compiles)",
    }[cache]
    return f"package, numba, python, shipped kernels: {found}\nstarting from {start}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=[*CASES, *OTHER_FITS])
    parser.add_argument(
        "--other", action="store_true", help="also the first fits off the defaults"
    )
    parser.add_argument("--kernels", action="store_true")
    parser.add_argument("--cache", choices=["fresh", "none"], default="fresh")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    names = args.only or [*CASES, *(OTHER_FITS if args.other else ())]
    print(describe(args.python, args.cache))
    header = (
        f"{'estimator':28s} {'data':36s} {'import':>6s} {'first':>6s} "
        f"{'(cpu)':>6s} {'numba':>6s} {'other':>6s} {'warm':>6s} "
        f"{'process':>7s} {'compiled':>8s}"
    )
    print(header)
    print("-" * len(header))
    details = {}
    for name in names:
        if name in OTHER_FITS:
            data_name = OTHER_FITS[name][0]
            description = f"as {OTHER_FITS[name][1]}'s"
        else:
            description, data_name = CASES[name]
        r = run_fresh(name, data_name, args.cache, args.python)
        details[name] = r["top"]
        print(
            f"{name:28s} {description:36s} {r['import']:6.2f} {r['first_wall']:6.2f} "
            f"{r['first_cpu']:6.2f} {r['dispatcher']:6.2f} "
            f"{r['first_wall'] - r['dispatcher']:6.2f} {r['warm']:6.2f} "
            f"{r['process']:7.2f} {r['compiled']:8d}",
            flush=True,
        )
    print(
        "\nseconds; first = the first fit (cpu: its process CPU time), numba = "
        "of which in numba's dispatchers (compiling or loading kernels), other = "
        "the rest, warm = a second fit, process = the whole fresh process "
        "(interpreter start and imports included), compiled = specialisations "
        "compiled"
    )
    if args.kernels:
        for name, top in details.items():
            print(f"\n{name}: first-call seconds per kernel")
            for kernel, seconds in top:
                print(f"  {seconds:6.2f}  {kernel}")


if __name__ == "__main__":
    main()
