"""Compiled kernels that ship with the package, so a first fit does not compile.

numba compiles a kernel on its first call. Its on-disk cache spares every later
process that cost, but not the first: a new user's first ``fit`` used to spend
5 to 15 seconds (a minute on a busy machine) in LLVM. So ``pip install``
compiles the kernels a first use needs (``sklearn_rbm._precompile``, run by the
build step in ``setup.py``) into ``sklearn_rbm/_kernel_cache/``, a folder that
ships inside the package, and every kernel reads that folder before it
compiles. numba's own cache (next to the sources, in ``NUMBA_CACHE_DIR`` or in
numba's user folder) keeps working as before for everything the shipped folder
lacks. The wheel is built where it is installed, so the machine code fits the
processor that runs it.

What keeps a shipped binary from being the wrong one:

* numba's own keys: an entry is found only for the same numba version (its
  index records it), Python version (file names), argument types, bytecode,
  and processor name and features (``codegen.magic_tuple()``). Anything else
  is a miss and numba compiles, as it would without the folder.
* The source stamp is a hash of every kernel source of the package (the
  stale-cache guard's, ``_core/numba_compat.py``) and the numpy version, not
  of the kernel's own file: a kernel's machine code holds the kernels it calls
  from other files, so a change in any of them turns the whole shipped folder
  into misses (numba's own stamp covers one file).
* The folder is only read after the build, so a read-only installation works;
  any error reading it (a truncated file, say) is a miss, never a crash.

``SKLEARN_RBM_NUMBA_CACHE=0`` turns off every cache, this one included.
numba's private caching classes come from ``_core/numba_compat.py``.
"""

import functools
import inspect
import os
import sys
from pathlib import Path

import numpy as np

from .._core.numba_compat import (
    CompileResultCacheImpl,
    Dispatcher,
    FunctionCache,
    IndexDataCacheFile,
    _CacheLocator,
    config,
    kernel_cache,
    kernel_sources_hash,
    set_kernel_cache,
)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_FOLDER = PACKAGE_ROOT / "_kernel_cache"
# Set in the processes that fill a shipped folder (``sklearn_rbm._precompile``).
BUILD_FOLDER_VARIABLE = "SKLEARN_RBM_KERNEL_CACHE_BUILD"


@functools.cache
def source_stamp():
    """The stamp of every shipped kernel: the package's kernel sources and the
    numpy version."""
    return kernel_sources_hash(str(PACKAGE_ROOT)), np.__version__


@functools.cache
def shipped_folders():
    """The shipped folders to read: this package's, and that of an installed
    copy of the package elsewhere on ``sys.path`` (the tests run the sources
    of a checkout whose ``pip install`` built one; the source stamp makes
    sure its kernels are used only if the sources are the same)."""
    candidates = [SHIPPED_FOLDER] + [
        Path(entry or ".", "sklearn_rbm", SHIPPED_FOLDER.name) for entry in sys.path
    ]
    folders = []
    for folder in candidates:
        if folder.is_dir() and folder.resolve() not in folders:
            folders.append(folder.resolve())
    return folders


@functools.cache
def _cache_class(folder):
    """numba's ``FunctionCache`` over the shipped folder ``folder``."""

    class ShippedLocator(_CacheLocator):
        """numba's cache files of one kernel in a shipped folder, with the
        package-wide source stamp (see the module docstring)."""

        def __init__(self, py_func, py_file):
            self._lineno = py_func.__code__.co_firstlineno
            module_folder = Path(py_file).resolve().parent.relative_to(PACKAGE_ROOT)
            self._cache_path = str(folder / module_folder)

        def ensure_cache_path(self):  # only the build writes here
            os.makedirs(self._cache_path, exist_ok=True)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return source_stamp()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            return cls(py_func, py_file)

    class ShippedImpl(CompileResultCacheImpl):
        _locator_classes = [ShippedLocator]

    class ShippedCache(FunctionCache):
        _impl_class = ShippedImpl

    return ShippedCache


class _TieredCache:
    """A kernel's cache: the shipped folders first, then numba's own cache,
    which also keeps whatever is compiled in this process."""

    def __init__(self, user_cache, py_func):
        self._user = user_cache
        self._py_func = py_func
        self._shipped = None

    @property
    def cache_path(self):
        return self._user.cache_path

    def shipped(self):
        """The kernel's caches in the shipped folders, made on first use (so
        importing the package reads nothing)."""
        if self._shipped is None:
            self._shipped = [
                _cache_class(folder)(self._py_func) for folder in shipped_folders()
            ]
        return self._shipped

    def tiers(self):
        """Every cache this one reads, in order."""
        return [*self.shipped(), self._user]

    def load_overload(self, sig, target_context):
        for shipped in self.shipped():
            try:
                compiled = shipped.load_overload(sig, target_context)
            except Exception:  # an unreadable shipped entry is a miss
                compiled = None
            if compiled is not None:
                return compiled
        return self._user.load_overload(sig, target_context)

    def save_overload(self, sig, data):
        self._user.save_overload(sig, data)

    def enable(self):
        self._user.enable()

    def disable(self):
        self._user.disable()

    def flush(self):
        self._user.flush()


def ship(compiled):
    """Make a kernel read the shipped folders before compiling; while a shipped
    folder is being built, write there and read nothing else.

    ``compiled`` is what ``numba.njit`` returned: a dispatcher, or a decorator
    that makes one (``njit(inline="always")``), which is then wrapped. Anything
    else comes back unchanged: plain functions under ``NUMBA_DISABLE_JIT=1``,
    dispatchers that do not cache (``SKLEARN_RBM_NUMBA_CACHE=0``) or are not
    the package's, every kernel when ``NUMBA_CACHE_LOCATOR_CLASSES`` hands
    numba's cache to the user's classes, or when this numba lacks the classes
    used here.
    """
    if config.DISABLE_JIT or _CacheLocator is None:
        return compiled
    if not isinstance(compiled, Dispatcher):
        return lambda function: ship(compiled(function))
    if (
        not isinstance(kernel_cache(compiled), FunctionCache)
        or config.CACHE_LOCATOR_CLASSES
        or not _in_package(compiled.py_func)
    ):
        return compiled
    building = os.environ.get(BUILD_FOLDER_VARIABLE)
    if building:
        cache = _cache_class(Path(building).resolve())(compiled.py_func)
    else:
        cache = _TieredCache(kernel_cache(compiled), compiled.py_func)
    set_kernel_cache(compiled, cache)
    return compiled


def _in_package(function):
    """Whether ``function`` is defined in a module of this package (only those
    have a place in the shipped folder)."""
    try:
        return Path(inspect.getfile(function)).resolve().is_relative_to(PACKAGE_ROOT)
    except TypeError:  # defined at a prompt, not in a file
        return False


def merge(sources, target):
    """Merge shipped folders filled by separate processes into ``target``
    (numba's index of each kernel lists the entries of every source)."""
    stamp = source_stamp()
    for source in sources:
        for index in Path(source).rglob("*.nbi"):
            base = index.name[: -len(".nbi")]
            folder = Path(target) / index.parent.relative_to(source)
            folder.mkdir(parents=True, exist_ok=True)
            read = IndexDataCacheFile(str(index.parent), base, stamp)
            write = IndexDataCacheFile(str(folder), base, stamp)
            for key, name in read._load_index().items():
                write.save(key, read._load_data(name))
