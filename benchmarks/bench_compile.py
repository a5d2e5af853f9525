"""What the numba kernels cost to compile, kernel by kernel.

For each group of calls that the install step compiles
(``sklearn_rbm._precompile.SHIPPED``: each estimator's defaults, their
queries and the demo tour; ``--coverage`` runs instead the wider set it
shipped before, ``COVERAGE``: every solver, hidden unit type and dtype), this
runs the group in a fresh Python process with every cache off
(``SKLEARN_RBM_NUMBA_CACHE=0``), so that every kernel compiles, and records
numba's compile events (``numba.core.event``, kind ``"numba:compile"``). It
prints, for each kernel, the number of specialisations it compiled and their
seconds of thread CPU time (numba compiles in the calling thread; CPU time
leaves out the waits for a core on a busy machine):

* ``self``: the time inside the kernel's own compile events less the time of
  the compile events nested in them (a kernel that calls another compiles its
  callee first, inside its own event);
* ``total``: the whole time of its events, callees included: what the first
  call of the kernel alone would cost.

Then, per group, the process's wall and CPU time and the seconds spent
compiling, and the sum over groups: the number to watch when a kernel is added
(``--top`` sets how many kernels are listed, ``--group`` runs one group). Each
group compiles everything it reaches, so a kernel two groups share is counted
in both (the install step runs the groups side by side, and they share only
what one of them has finished).

Run: ``python benchmarks/bench_compile.py`` (a few minutes: it compiles
everything once).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

_BENCHMARKS = os.path.dirname(os.path.abspath(__file__))


def compile_recorder(events):
    """A listener of numba's compile events that appends to ``events``, for
    each specialisation compiled, ``{"kernel", "signature", "total", "self",
    "top"}``: its module-qualified name and argument types, the thread CPU
    seconds of its event with and without the events nested in it (the
    callees it compiled first), and whether it was called from Python.

    Thread CPU time: numba compiles in the calling thread, and CPU time does
    not count the waits for a core on a busy machine.
    """
    import numba.core.event as ev

    stack = []

    class Recorder(ev.Listener):
        def on_start(self, event):
            stack.append([time.thread_time(), 0.0])

        def on_end(self, event):
            start, nested = stack.pop()
            elapsed = time.thread_time() - start
            if stack:
                stack[-1][1] += elapsed
            function = event.data["dispatcher"].py_func
            events.append({
                "kernel": f"{function.__module__}.{function.__qualname__}",
                "signature": str(event.data["args"]),
                "total": elapsed,
                "self": elapsed - nested,
                "top": not stack,
            })  # fmt: skip

    return Recorder()


_CHILD = r"""
import json, sys, time, warnings
import numba.core.event as ev

sys.path.insert(0, sys.argv[2])
from bench_compile import compile_recorder
from sklearn_rbm import _precompile

events = []
wall, cpu = time.perf_counter(), time.process_time()
with ev.install_listener("numba:compile", compile_recorder(events)), \
        warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _precompile.GROUPS[sys.argv[1]]()
print(json.dumps({
    "wall": time.perf_counter() - wall,
    "cpu": time.process_time() - cpu,
    "events": events,
}))
"""


def measure_group(group, python):
    """Run ``group`` in a fresh process with the caches off; its record."""
    env = dict(os.environ, SKLEARN_RBM_NUMBA_CACHE="0")
    output = subprocess.run(
        [python, "-c", _CHILD, group, _BENCHMARKS],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


#: What numba compiles for the message of a slice assignment from an array.
_SLICE_MESSAGE = "raise_with_shape_context"


def report(records, top):
    """Print the kernels by their self time, then the groups."""
    kernels = defaultdict(lambda: {"signatures": set(), "self": 0.0, "total": 0.0})
    for record in records.values():
        for event in record["events"]:
            kernel = kernels[event["kernel"]]
            kernel["signatures"].add(event["signature"])
            kernel["self"] += event["self"]
            kernel["total"] += event["total"]
    ranked = sorted(kernels.items(), key=lambda item: -item[1]["self"])
    print(f"{'kernel':<72} {'specs':>5} {'self s':>8} {'total s':>8}")
    for name, kernel in ranked[:top]:
        short = name.removeprefix("sklearn_rbm.")
        print(
            f"{short:<72} {len(kernel['signatures']):>5} "
            f"{kernel['self']:>8.2f} {kernel['total']:>8.2f}"
        )
    n_signatures = sum(len(kernel["signatures"]) for kernel in kernels.values())
    print(f"\n{len(kernels)} kernels, {n_signatures} specialisations\n")
    print(f"{'group':<14} {'wall s':>8} {'cpu s':>8} {'compile s':>10} {'compiles':>9}")
    totals = [0.0, 0.0, 0.0, 0]
    for group, record in records.items():
        compile_seconds = sum(e["total"] for e in record["events"] if e["top"])
        row = [record["wall"], record["cpu"], compile_seconds, len(record["events"])]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        print(f"{group:<14} {row[0]:>8.1f} {row[1]:>8.1f} {row[2]:>10.1f} {row[3]:>9}")
    print(
        f"{'all':<14} {totals[0]:>8.1f} {totals[1]:>8.1f} {totals[2]:>10.1f} "
        f"{totals[3]:>9}"
    )
    if any(_SLICE_MESSAGE in name for name in kernels):
        print(
            "\nA kernel assigns an array to a slice or a row (out[:] = x, out[i] = "
            "row): numba compiled its string formatting for the shape-mismatch "
            f"message ({_SLICE_MESSAGE}). Copy with _numerics.steps.copy_ / add_."
        )


def main(argv=None):
    from sklearn_rbm._precompile import COVERAGE, GROUPS, SHIPPED

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", choices=list(GROUPS), action="append")
    parser.add_argument(
        "--coverage", action="store_true", help="the wider set shipped before"
    )
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", help="also write the raw records to this file")
    args = parser.parse_args(argv)
    records = {}
    for group in args.group or list(COVERAGE if args.coverage else SHIPPED):
        start = time.perf_counter()
        records[group] = measure_group(group, args.python)
        print(f"  {group}: {time.perf_counter() - start:.0f} s", flush=True)
    if args.json:
        with open(args.json, "w") as file:
            json.dump(records, file)
    report(records, args.top)


if __name__ == "__main__":
    main()
