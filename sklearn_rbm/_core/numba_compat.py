"""Every private numba name the package uses, in one place, and the guard
against stale caches.

numba has no public API for three things the package needs: the C entry
point of BLAS ``gemm`` that numba's own ``np.dot`` calls
(``_numerics/blas.py``), the cache locators that decide where compiled
kernels are written and when they are stale, and the cache classes and
dispatcher attribute through which kernels read the compiled code that ships
with the package or was compiled before (``_numerics/cache.py``). Its compile
events (``numba.core.event``, documented but in a ``core`` module) tell the
compile notice of ``_core/engine.py`` when a kernel compiles. Two of its
compiler's internals are patched to compile less for the same code: the
typer of an always-inlined overload (:func:`inline_overload`) and the
inliner of ``jit(inline="always")`` functions (:func:`_install_memoised_inlining`).
As with scikit-learn's private names in ``sklearn_compat.py``, a numba release that
moves them breaks this module alone.

**Stale caches.** numba writes a kernel's compiled code beside its source
and reuses it while that one source file is unchanged (its index holds the
file's stamp). A kernel that inlines code from *other* files (the layers'
hooks, ``vecmath``'s polynomials) is therefore not recompiled when only the
other file changes, and silently runs the old code (numba issue 1833).
:func:`install_cache_guard` puts a hash of every kernel source of the
package into the stamp of every package kernel: an edit anywhere in the
package's compiled code recompiles all of its kernels once, and a kernel can
never run code older than its sources.
"""

import contextlib
import hashlib
import os
import re

from numba.core import caching, config, event  # noqa: F401 (config: for cache.py)
from numba.core.dispatcher import Dispatcher  # noqa: F401 (for cache.py)
from numba.core.inline_closurecall import InlineWorker
from numba.core.typing import templates
from numba.extending import overload
from numba.np.linalg import ensure_blas  # noqa: F401 (loads SciPy's BLAS for gemm)

# The classes of numba's disk cache that the shipped kernels build on
# (``_numerics/cache.py``); ``None`` when a numba release moves them, and then
# no kernels are shipped.
CompileResultCacheImpl = getattr(caching, "CompileResultCacheImpl", None)
FunctionCache = getattr(caching, "FunctionCache", None)
IndexDataCacheFile = getattr(caching, "IndexDataCacheFile", None)
_CacheLocator = getattr(caching, "_CacheLocator", None)
if None in (CompileResultCacheImpl, FunctionCache, IndexDataCacheFile):
    _CacheLocator = None


def kernel_cache(kernel):
    """The disk cache a dispatcher loads from and saves to (``None`` if none)."""
    return getattr(kernel, "_cache", None)


def set_kernel_cache(kernel, cache):
    """Make ``cache`` the disk cache of the dispatcher ``kernel``."""
    kernel._cache = cache


#: The C function of numba's helper library that its ``np.dot`` calls for
#: ``gemm`` (it dispatches to SciPy's BLAS).
XXGEMM_SYMBOL = "numba_xxgemm"


@contextlib.contextmanager
def on_first_compile(callback, package):
    """A context in which the first numba compilation of a kernel of
    ``package`` calls ``callback(kernel name)`` (once), through numba's
    compile events (``numba.core.event``)."""
    called = []

    class Listener(event.Listener):
        def on_start(self, compile_event):
            function = compile_event.data["dispatcher"].py_func
            if not called and function.__module__.startswith(package):
                called.append(True)
                callback(function.__qualname__)

        def on_end(self, compile_event):
            pass

    with event.install_listener("numba:compile", Listener()):
        yield


# Files that hold compiled code: numba decorators, hook registrations and
# intrinsics (what another kernel can inline).
_KERNEL_SOURCE = re.compile(
    rb"^@(vector_)?jit\b|^@implements\(|^@intrinsic\b|^@overload\(", re.MULTILINE
)


def kernel_sources_hash(package_dir):
    """A hash of every kernel source file under ``package_dir`` (their paths
    and bytes, in a fixed order)."""
    digest = hashlib.sha256()
    for root, directories, files in os.walk(package_dir):
        directories.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            with open(path, "rb") as source:
                text = source.read()
            if _KERNEL_SOURCE.search(text):
                digest.update(os.path.relpath(path, package_dir).encode())
                digest.update(text)
    return digest.hexdigest()


def install_cache_guard(package_dir):
    """Stamp the disk cache of every kernel under ``package_dir`` with
    :func:`kernel_sources_hash` (see the module docstring).

    Each of numba's cache locators gets a subclass for the package's files
    whose source stamp is numba's own plus the hash; they are tried before
    numba's, so caches land where numba would put them (beside the sources,
    in the user-wide folder for read-only installs, in ``NUMBA_CACHE_DIR``
    when it is set). Installing twice changes nothing.
    """
    package_dir = os.path.realpath(package_dir)
    locators = caching.CacheImpl._locator_classes
    if any(getattr(cls, "_guarded_package", None) == package_dir for cls in locators):
        return
    stamp = kernel_sources_hash(package_dir)

    def guarded(locator):
        class Guarded(locator):
            _guarded_package = package_dir

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.realpath(py_file).startswith(package_dir + os.sep):
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return (super().get_source_stamp(), stamp)

        Guarded.__name__ = Guarded.__qualname__ = f"Guarded{locator.__name__}"
        return Guarded

    caching.CacheImpl._locator_classes = [guarded(cls) for cls in locators] + list(
        locators
    )


# ------------------------------------------------------------ inlined overloads
#: Marks an ``overload`` typer registered by :func:`inline_overload`.
_INLINE_ONLY = "_sklearn_rbm_inline_only"


def inline_overload(func):
    """``numba.extending.overload(func, inline="always")``, without compiling
    each implementation on its own first.

    numba types an always-inlined overload twice: it compiles the
    implementation as a dispatcher of its own (typing, lowering, LLVM's
    optimisation and machine code: "make sure that the implementation can be
    fully compiled") and then types its IR again to inline it into the
    caller. The standalone machine code is never called. The layers' hooks
    and ``vecmath``'s dtype switches are all such overloads; skipping the
    standalone compile saves about a sixth of the package's compile time and
    changes no compiled kernel (the inlined IR is the same). The
    implementation's dispatcher is built with compilation disabled, so the
    typing that inlining needs is all that runs. A numba release that no
    longer builds implementations through ``_get_jit_decorator`` gets
    ordinary overloads back: slower to compile, the same code.
    """

    def register(typer):
        setattr(typer, _INLINE_ONLY, True)
        overload(func, inline="always")(typer)
        return typer

    return register


def _install_inline_only_overloads():
    base = getattr(templates, "_OverloadFunctionTemplate", None)
    original = getattr(base, "_get_jit_decorator", None)
    if original is None or getattr(original, _INLINE_ONLY, False):
        return

    def _get_jit_decorator(self):
        jitter = original(self)
        if not getattr(self._overload_func, _INLINE_ONLY, False):
            return jitter

        def typing_only_jitter(*args, **options):
            decorate = jitter(*args, **options)

            def build(pyfunc):
                dispatcher = decorate(pyfunc)
                # disable_compile() refuses a dispatcher with no signature
                dispatcher._can_compile = False
                return dispatcher

            return build

        return typing_only_jitter

    setattr(_get_jit_decorator, _INLINE_ONLY, True)
    base._get_jit_decorator = _get_jit_decorator


_install_inline_only_overloads()


# ------------------------------------------------- inlined jit functions
#: Marks numba's ``InlineWorker.inline_function`` once it reuses callee IR.
_MEMOISED = "_sklearn_rbm_memoised"


def _install_memoised_inlining(package):
    """Run the untyped passes of each ``jit(inline="always")`` function of
    ``package`` once per process, not once per call site.

    numba inlines such a function (``vecmath``'s polynomials, the draws'
    row helpers) by running its whole untyped pipeline at every call site,
    inlining its own callees again on the way, and then copying the result
    into the caller. The pipeline's result depends on the function and the
    caller's flags only, and ``inline_ir`` copies it before changing
    anything, so one result per pair serves every site: the inlined code is
    the same. A numba release that changes ``inline_function`` gets the
    original back: slower to compile, the same code.
    """
    original = getattr(InlineWorker, "inline_function", None)
    if original is None or getattr(original, _MEMOISED, False):
        return
    if not all(
        hasattr(InlineWorker, name) for name in ("run_untyped_passes", "inline_ir")
    ):
        return
    results = {}  # function -> [(flags, callee IR)]

    def inline_function(self, caller_ir, block, i, function, arg_typs=None):
        if not getattr(function, "__module__", "").startswith(package + "."):
            return original(self, caller_ir, block, i, function, arg_typs)
        # run_untyped_passes sets enable_ssa on the caller's flags: so here.
        self.flags.enable_ssa = False
        seen = results.setdefault(function, [])
        callee_ir = next((ir for flags, ir in seen if flags == self.flags), None)
        if callee_ir is None:
            callee_ir = self.run_untyped_passes(function)
            seen.append((self.flags.copy(), callee_ir))
        freevars = function.__code__.co_freevars
        return self.inline_ir(caller_ir, block, i, callee_ir, freevars, arg_typs)

    setattr(inline_function, _MEMOISED, True)
    InlineWorker.inline_function = inline_function


_install_memoised_inlining(__name__.split(".")[0])
