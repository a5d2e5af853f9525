"""Where compiled kernels are kept: shipped with the package, then per user.

numba compiles a kernel on its first call, and its on-disk cache spares later
processes that cost. Every kernel of the package reads, in order:

1. **The shipped folders.** ``pip install`` compiles the kernels a first use
   needs (``sklearn_rbm._precompile``, run by the build step in ``setup.py``)
   into ``sklearn_rbm/_kernel_cache/``, a folder that ships inside the
   package and is only read afterwards (a read-only installation works).
2. **The per-user folder** (:func:`user_folder`): what the shipped folders
   lack is compiled on first use and written here, not beside the sources, so
   every environment of the user with the same sources, numba and Python
   shares it: a second virtual environment, and the build step of a second
   ``pip install``, find the kernels the first compiled. Where that folder
   cannot be written, numba's own cache takes its place.

A build copies into the folder it fills what it finds in the per-user folder
and writes there what it compiles.

What keeps a stored binary from being the wrong one, in both tiers:

* numba's own keys: an entry is found only for the same numba version (its
  index records it), Python version (file names), argument types, bytecode,
  and processor name and features (``codegen.magic_tuple()``). A wheel built
  on another processor therefore ships kernels this one never loads: they
  compile on first use into the per-user folder, as if none had shipped.
* The source stamp is a hash of every kernel source of the package (the
  stale-cache guard's, ``_core/numba_compat.py``) and the numpy version, not
  of the kernel's own file: a kernel's machine code holds the kernels it calls
  from other files, so a change in any of them turns every stored entry into a
  miss (numba's own stamp covers one file).
* Any error reading an entry (a truncated file, say) is a miss, never a crash,
  and an index too damaged to update is replaced; a cache that cannot be
  written only means the kernel compiles again next time.

``SKLEARN_RBM_NUMBA_CACHE=0`` turns off every cache, these included.
numba's private caching classes come from ``_core/numba_compat.py``.
"""

import functools
import hashlib
import inspect
import os
import re
import shutil
import sys
import time
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
# Where the per-user folder of compiled kernels lives, if not in the default.
USER_FOLDER_VARIABLE = "SKLEARN_RBM_KERNEL_CACHE_DIR"
# The names of the per-user folders (a hash of what the kernels depend on).
_STAMP_NAME = re.compile(r"[0-9a-f]{20}")


def numba_version():
    """The running numba's version (a function, so a test can fake another)."""
    import numba

    return numba.__version__


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
def user_folder():
    """The per-user folder of compiled kernels for these sources.

    Under ``SKLEARN_RBM_KERNEL_CACHE_DIR``, else ``NUMBA_CACHE_DIR`` (numba's
    own switch for where caches go), else the user's cache folder
    (``$XDG_CACHE_HOME`` or ``~/.cache``), a sub-folder named after the
    source stamp and the numba and Python versions: every environment of the
    user with the same sources and versions reads and fills the same folder,
    so a second virtual environment compiles nothing the first compiled, and
    an edit of any kernel source starts a new folder (and removes those not
    written to for :data:`STALE_DAYS` days).
    """
    root = os.environ.get(USER_FOLDER_VARIABLE)
    if not root and os.environ.get("NUMBA_CACHE_DIR"):
        root = Path(os.environ["NUMBA_CACHE_DIR"], "sklearn_rbm")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        root = Path(base, "sklearn_rbm")
    key = repr((source_stamp(), numba_version(), sys.version_info[:2]))
    folder = Path(root, "kernels", hashlib.sha256(key.encode()).hexdigest()[:20])
    if not folder.exists():
        _remove_stale_folders(folder.parent)
    return folder


#: Days after its last write that the per-user folder of other sources or
#: versions is removed (when the folder of new ones is made).
STALE_DAYS = 30


def _remove_stale_folders(parent):
    """Remove the per-user folders under ``parent`` (named like those of
    :func:`user_folder`) written to last more than :data:`STALE_DAYS` ago:
    every edit or upgrade starts a new folder, and the old ones would pile
    up. Best effort: a folder that cannot be removed stays."""
    oldest = time.time() - STALE_DAYS * 86400
    try:
        candidates = list(Path(parent).iterdir())
    except OSError:
        return
    for folder in candidates:
        try:
            if (
                _STAMP_NAME.fullmatch(folder.name)
                and folder.is_dir()
                and max(p.stat().st_mtime for p in [folder, *folder.rglob("*")])
                < oldest
            ):
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


@functools.cache
def _cache_class(folder, writable=False):
    """numba's ``FunctionCache`` over ``folder``, with the package-wide
    source stamp: a shipped folder (read only after the build), or with
    ``writable`` a folder this process may write to (the per-user folder), for
    which a kernel gets no cache if the folder cannot be made or written."""

    class FolderLocator(_CacheLocator):
        """numba's cache files of one kernel in ``folder`` (see the module
        docstring)."""

        def __init__(self, py_func, py_file):
            self._lineno = py_func.__code__.co_firstlineno
            module_folder = Path(py_file).resolve().parent.relative_to(PACKAGE_ROOT)
            self._cache_path = str(folder / module_folder)

        def ensure_cache_path(self):
            os.makedirs(self._cache_path, exist_ok=True)
            if writable:  # numba's own check that the folder takes files
                super().ensure_cache_path()

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return source_stamp()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            locator = cls(py_func, py_file)
            if writable:
                try:
                    locator.ensure_cache_path()
                except OSError:  # no cache there: numba then raises, we fall back
                    return None
            return locator

    class FolderImpl(CompileResultCacheImpl):
        _locator_classes = [FolderLocator]

    class FolderCache(FunctionCache):
        _impl_class = FolderImpl

    return FolderCache


def _save(cache, sig, compiled):
    """Save ``compiled`` in ``cache``; a cache that cannot take it is left
    as it is (the kernel compiles again in the next process), and an index
    too damaged to update is replaced."""
    try:
        cache.save_overload(sig, compiled)
    except Exception:  # noqa: BLE001 (a cache never fails a fit)
        try:  # numba reads the old index before writing the new one
            os.remove(cache._cache_file._index_path)
            cache.save_overload(sig, compiled)
        except Exception:  # noqa: BLE001
            pass


def _load(cache, sig, target_context):
    """``cache``'s entry for ``sig``, or ``None``: an unreadable entry is a miss."""
    try:
        return cache.load_overload(sig, target_context)
    except Exception:  # noqa: BLE001 (a damaged file is a miss, never a crash)
        return None


def _copy_entry(source, target, sig, target_context):
    """Copy the stored entry of ``sig`` from the cache ``source`` to ``target``
    as it is on disk (a loaded kernel holds no object code to save again)."""
    try:
        key = source._index_key(sig, target_context.codegen())
        target._impl.locator.ensure_cache_path()
        target._cache_file.save(key, source._cache_file.load(key))
    except Exception:  # noqa: BLE001 (the build then lacks this kernel)
        pass


class _TieredCache:
    """A kernel's cache: the shipped folders first (read only), then the
    per-user folder, which also takes whatever this process compiles; numba's
    own cache stands in for the per-user folder where that cannot be
    written. While a shipped folder is built (``building``), the build reads
    the per-user folder alone and copies what it finds or compiles into the
    folder being built."""

    def __init__(self, fallback, py_func, building=None):
        self._fallback = fallback
        self._py_func = py_func
        self._building = building
        self._tiers = None

    def _made(self):
        """``(shipped caches, the writable cache, the build's cache or None)``,
        made on first use (so importing the package reads nothing)."""
        if self._tiers is None:
            folders = [] if self._building else shipped_folders()
            shipped = [_cache_class(folder)(self._py_func) for folder in folders]
            try:
                writable = _cache_class(user_folder(), writable=True)(self._py_func)
            except Exception:  # noqa: BLE001 (no per-user folder: numba's cache)
                writable = self._fallback
            build = self._building and _cache_class(self._building)(self._py_func)
            self._tiers = shipped, writable, build
        return self._tiers

    @property
    def cache_path(self):
        return self._made()[1].cache_path

    def tiers(self):
        """Every cache this one reads, in order."""
        shipped, writable, _ = self._made()
        return [*shipped, writable]

    def load_overload(self, sig, target_context):
        shipped, writable, build = self._made()
        for cache in shipped:
            compiled = _load(cache, sig, target_context)
            if compiled is not None:
                return compiled
        compiled = _load(writable, sig, target_context)
        if compiled is not None and build:
            _copy_entry(writable, build, sig, target_context)
        return compiled

    def save_overload(self, sig, data):
        _, writable, build = self._made()
        if build:
            _save(build, sig, data)
        _save(writable, sig, data)

    def enable(self):
        self._fallback.enable()

    def disable(self):
        self._fallback.disable()

    def flush(self):
        self._made()[1].flush()


def ship(compiled):
    """Make a kernel read the shipped folders, then the per-user folder, before
    compiling; while a shipped folder is being built, copy into it.

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
    building = Path(building).resolve() if building else None
    cache = _TieredCache(kernel_cache(compiled), compiled.py_func, building)
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
