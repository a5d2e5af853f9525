"""Where one fit's compile time goes: numba's front end, and LLVM per library.

``bench_compile.py`` times each kernel's compile events; this splits the time
of one fit of ``CategoricalRBM`` (every cache off, so everything it reaches
compiles) the other way, by what numba does with the code:

* per kernel, as ``bench_compile.py``: its specialisations' thread CPU
  seconds, ``self`` (less the callees compiled inside its events) and
  ``total``;
* per code library (one per specialisation, named after its kernel): the
  seconds of LLVM's function passes (``fpass``, run as each module is added),
  of the module optimisation after linking (``opt``) and of the machine code
  (``mc``), and the functions and instructions of its final module.

numba links the optimised module of every callee, with *its* callees, into
the caller's library as ``linkonce_odr`` functions, then optimises and emits
the whole again: a kernel's LLVM time grows with its entire call tree, and a
callee deep in the tree is optimised and emitted once per library above it.
The sum of ``self`` less the LLVM total is numba's own work (bytecode
analysis, type inference, inlining of overloads, lowering to LLVM IR).

Run: ``python benchmarks/bench_compile_tree.py --hidden-unit drelu --solver
pt`` (one fresh process; CPU seconds, so a busy machine changes little).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict


def install_recorders():
    """Record, from now on in this process, every compile event
    (``bench_compile.compile_recorder``) and every finalised code
    library (name, fpass, opt and mc seconds, functions, instructions)."""
    import numba.core.event as ev
    from bench_compile import compile_recorder
    from numba.core import codegen

    kernels, libraries, llvm = [], [], defaultdict(float)

    def timed(cls, method, key):
        original = getattr(cls, method)

        def wrapper(self, *args, **kwargs):
            start = time.thread_time()
            try:
                return original(self, *args, **kwargs)
            finally:
                llvm[id(self), key] += time.thread_time() - start

        setattr(cls, method, wrapper)

    timed(codegen.CPUCodeLibrary, "add_ir_module", "fpass")
    timed(codegen.CPUCodeLibrary, "_optimize_final_module", "opt")
    timed(codegen.JITCodeLibrary, "_finalize_specific", "mc")
    finalize = codegen.CPUCodeLibrary.finalize

    def recorded_finalize(self):
        finalize(self)
        sizes = [
            sum(1 for block in function.blocks for _ in block.instructions)
            for function in self._final_module.functions
            if not function.is_declaration
        ]
        seconds = [llvm[id(self), key] for key in ("fpass", "opt", "mc")]
        libraries.append([self.name.split(".")[-1], *seconds, len(sizes), sum(sizes)])

    codegen.CPUCodeLibrary.finalize = recorded_finalize
    ev.register("numba:compile", compile_recorder(kernels))
    return kernels, libraries


def child(hidden_unit, solver):
    """In the fresh process: one fit, its records as JSON on stdout."""
    import warnings

    kernels, libraries = install_recorders()
    from sklearn_rbm import CategoricalRBM
    from sklearn_rbm.datasets import make_potts

    X = make_potts(500, 20, n_states=4, random_state=0)[0]
    del kernels[:], libraries[:]  # make_potts compiles a sampler
    estimator = CategoricalRBM(hidden_unit=hidden_unit, solver=solver, random_state=0)
    cpu = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X)
    cpu = time.process_time() - cpu
    print(json.dumps({"cpu": cpu, "kernels": kernels, "libraries": libraries}))


def report(record, top):
    """Print the split, the kernels by self time, the libraries by LLVM time."""
    kernels = defaultdict(lambda: [0, 0.0, 0.0])
    for event in record["kernels"]:
        kernel = kernels[event["kernel"].rsplit(".", 1)[-1]]
        kernel[0] += 1
        kernel[1] += event["self"]
        kernel[2] += event["total"]
    compile_seconds = sum(k[1] for k in kernels.values())
    libraries = record["libraries"]
    llvm = [sum(row[i] for row in libraries) for i in (1, 2, 3)]
    print(f"fit: {record['cpu']:.1f} s CPU, of which compiling {compile_seconds:.1f} "
          f"({len(record['kernels'])} specialisations): LLVM {sum(llvm):.1f} "
          f"(fpass {llvm[0]:.1f}, opt {llvm[1]:.1f}, mc {llvm[2]:.1f}), "
          f"numba's front end {compile_seconds - sum(llvm):.1f}\n")  # fmt: skip
    print(f"{'kernel':<40} {'specs':>5} {'self s':>7} {'total s':>7}")
    for name, (count, own, total) in sorted(kernels.items(), key=lambda k: -k[1][1])[
        :top
    ]:
        print(f"{name[:40]:<40} {count:>5} {own:>7.2f} {total:>7.2f}")
    print(f"\n{'library':<40} {'fpass':>6} {'opt':>6} {'mc':>6} {'funcs':>6} "
          f"{'instrs':>7}")  # fmt: skip
    for name, fpass, opt, mc, n_functions, n_instructions in sorted(
        libraries, key=lambda row: -(row[1] + row[2] + row[3])
    )[:top]:
        print(f"{name[:40]:<40} {fpass:>6.2f} {opt:>6.2f} {mc:>6.2f} "
              f"{n_functions:>6} {n_instructions:>7}")  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden-unit", default="drelu")
    parser.add_argument("--solver", default="pt")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.hidden_unit, args.solver)
        return
    env = dict(os.environ, SKLEARN_RBM_NUMBA_CACHE="0")
    command = [sys.executable, __file__, "--child", "--hidden-unit",
               args.hidden_unit, "--solver", args.solver]  # fmt: skip
    output = subprocess.run(
        command, env=env, check=True, capture_output=True, text=True
    ).stdout
    report(json.loads(output.strip().splitlines()[-1]), args.top)


if __name__ == "__main__":
    main()
