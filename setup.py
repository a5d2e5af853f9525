"""The build step that compiles the numba kernels into the wheel.

Everything else about the package is in ``pyproject.toml``. After the usual
``build_py`` this runs ``python -m sklearn_rbm._precompile`` on the built copy
of the package, which fills ``sklearn_rbm/_kernel_cache/`` with the compiled
kernels a first use needs (see ``sklearn_rbm/_numerics/cache.py``), so that a
user's first ``fit`` loads machine code instead of compiling it. It is best
effort: if it fails, the package is the same without that folder and compiles
its kernels on first use. ``SKLEARN_RBM_PRECOMPILE=0`` skips it; editable
installs skip it too (they run the sources in place).
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

FOLDER = Path("sklearn_rbm", "_kernel_cache")
# Seconds; the groups of kernels not compiled by then ship uncompiled.
TIME_LIMIT = 1800


def precompile(build_lib):
    """Fill ``build_lib/sklearn_rbm/_kernel_cache`` (see the module docstring)."""
    build_lib = Path(build_lib).resolve()
    folder = build_lib / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    env = dict(os.environ)
    # Keep the build environment's path (pip puts numba there) behind the built copy.
    env["PYTHONPATH"] = os.pathsep.join(
        [str(build_lib), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    print(f"compiling the numba kernels a first use needs into {folder} (about "
          "a minute; SKLEARN_RBM_PRECOMPILE=0 skips this)", flush=True)  # fmt: skip
    start = time.perf_counter()
    command = ["-m", "sklearn_rbm._precompile", str(folder)]
    command += ["--time-limit", str(TIME_LIMIT)]
    # Its own session, so that a hung build can be stopped with its workers.
    process = subprocess.Popen(
        [sys.executable, *command],
        cwd=build_lib,  # so that ``-m`` imports the built copy
        env=env,
        start_new_session=True,
    )
    try:
        status = f"exit status {process.wait(timeout=TIME_LIMIT + 300)}"
    except subprocess.TimeoutExpired:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        process.kill()
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)
        status = "stopped"
    print(f"kernels compiled in {time.perf_counter() - start:.0f} s ({status})")


class BuildPyWithKernels(build_py):
    def run(self):
        super().run()
        skip = os.environ.get("SKLEARN_RBM_PRECOMPILE", "1").lower() in ("0", "no")
        if not (skip or getattr(self, "editable_mode", False)):
            precompile(self.build_lib)


setup(cmdclass={"build_py": BuildPyWithKernels})
