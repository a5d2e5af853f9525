"""The shipped kernel cache: kernels compiled at install time are loaded by a
fresh process, and anything that could make a shipped binary wrong (other
sources, processor or numba version, damaged files) makes numba compile instead.

Each check runs in a fresh Python process (a kernel loaded or compiled once
stays in memory), with an empty numba cache of its own and a shipped folder
built here for one small kernel, ``_frank_wolfe.kernels.softplus_rows``.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from sklearn_rbm._numerics import cache

ROOT = Path(__file__).resolve().parents[1]
BUILD = cache.BUILD_FOLDER_VARIABLE

CALL = """
import json
import numpy as np
import sklearn_rbm._numerics.cache as shipping
# Only the shipped folder under test: an installed copy of the package (CI
# runs the tests beside a `pip install .` that built its own folder, with
# the same sources) must not answer for it.
_every_folder = shipping.shipped_folders
shipping.shipped_folders = lambda: [
    folder for folder in _every_folder() if folder.is_relative_to({site!r})
]
{prelude}
from sklearn_rbm._frank_wolfe.kernels import softplus_rows
x = np.linspace(-30.0, 30.0, 13)
values = [softplus_rows(x.astype(dtype)[::{step}]).tolist() for dtype in {dtypes}]
stats = softplus_rows.stats
print(json.dumps({{
    "values": values,
    "hits": sum(stats.cache_hits.values()),
    "misses": sum(stats.cache_misses.values()),
}}))
"""


def call(folder, site, *, dtypes=("float64",), step=1, prelude="", env=None, root=ROOT):
    """Call the kernel in a fresh process whose numba cache is ``folder/user``
    and whose ``sys.path`` ends with ``site`` (where a shipped folder lies);
    the package is imported from ``root`` (the checkout by default)."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")
    }
    environment.pop("SKLEARN_RBM_NUMBA_CACHE", None)
    environment.pop(BUILD, None)
    environment.pop(cache.USER_FOLDER_VARIABLE, None)
    environment.update(
        {
            "NUMBA_CACHE_DIR": str(folder / "user"),
            "PYTHONPATH": os.pathsep.join([str(root), str(site)]),
            **(env or {}),
        }
    )
    environment = {key: value for key, value in environment.items() if value != ""}
    code = CALL.format(
        prelude=prelude, dtypes=list(dtypes), step=step, site=str(Path(site).resolve())
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_softplus(values, x):
    """``values`` are ``log(1 + exp(x))`` (to the kernel's absolute accuracy)."""
    expected = np.logaddexp(0.0, np.asarray(x, dtype=np.float64))
    np.testing.assert_allclose(values, expected, rtol=1e-13, atol=1e-15)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder holding ``sklearn_rbm/_kernel_cache``, merged from two parts
    built by two processes (float64 and float32 specialisations)."""
    base = tmp_path_factory.mktemp("shipped")
    parts = []
    for dtype in ("float64", "float32"):
        part = base / f"part-{dtype}"
        call(base, base / "nowhere", dtypes=(dtype,), env={BUILD: str(part)})
        parts.append(part)
    cache.merge(parts, base / "site" / "sklearn_rbm" / cache.SHIPPED_FOLDER.name)
    return base / "site"


def digest(folder):
    """A hash of every file under ``folder`` (names and contents)."""
    hasher = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            hasher.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return hasher.hexdigest()


def test_a_fresh_process_loads_the_shipped_kernels(site, tmp_path):
    before = digest(site)
    # float64 and float32 come from the two merged parts; a strided array is a
    # specialisation the shipped folder lacks, so numba compiles it.
    result = call(tmp_path, site, dtypes=("float64", "float32"))
    assert result["hits"] == 2 and result["misses"] == 0
    x = np.linspace(-30.0, 30.0, 13)
    assert_softplus(result["values"][0], x)
    assert_softplus(result["values"][1], x.astype(np.float32))
    assert not list((tmp_path / "user").rglob("*softplus_rows*"))
    strided = call(tmp_path, site, step=2)
    assert_softplus(strided["values"][0], x[::2])
    # What is compiled later goes to numba's own cache, never to the shipped folder.
    assert strided["misses"] == 1
    assert list((tmp_path / "user").rglob("*softplus_rows*.nbi"))
    assert digest(site) == before


@pytest.mark.parametrize(
    "what, prelude, env",
    [
        (
            "other sources",
            "import sklearn_rbm._numerics.cache as c\n"
            "c.source_stamp = lambda: 'the sources of another version'",
            None,
        ),
        ("another numba", "import numba\nnumba.__version__ = '0.0.0'", None),
        ("another processor", "", {"NUMBA_CPU_NAME": "generic"}),
    ],
)
def test_a_shipped_kernel_that_may_not_fit_is_compiled_instead(
    site, tmp_path, what, prelude, env
):
    result = call(tmp_path, site, prelude=prelude, env=env)
    assert result["hits"] == 0 and result["misses"] == 1, what
    assert_softplus(result["values"][0], np.linspace(-30.0, 30.0, 13))


def test_damaged_shipped_files_are_misses_not_crashes(site, tmp_path):
    damaged = tmp_path / "damaged"
    for path in site.rglob("*"):
        if path.is_file():
            target = damaged / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    result = call(tmp_path, damaged)
    assert result["hits"] == 0 and result["misses"] == 1
    assert_softplus(result["values"][0], np.linspace(-30.0, 30.0, 13))


def test_only_the_packages_caching_kernels_are_shipped():
    def outside(x):
        return x + 1

    kernel = cache.ship(numba.njit(cache=True)(outside))
    assert type(kernel._cache).__name__ == "FunctionCache"
    uncached = cache.ship(numba.njit(cache=False)(outside))
    assert type(uncached._cache).__name__ == "NullCache"


def user_entries(folder):
    """The per-user cache's index files of the test kernel under ``folder``."""
    return list(Path(folder).rglob("*softplus_rows*.nbi"))


def test_a_second_environment_reuses_what_the_first_compiled(tmp_path):
    # Two builds of the shipped folder (two virtual environments installing the
    # same sources) share the per-user folder: the second compiles nothing and
    # still ships the kernel.
    first = call(tmp_path, tmp_path / "nowhere", env={BUILD: str(tmp_path / "one")})
    second = call(tmp_path, tmp_path / "nowhere", env={BUILD: str(tmp_path / "two")})
    assert first["misses"] == 1
    assert second["misses"] == 0 and second["hits"] == 1
    assert user_entries(tmp_path / "two") and user_entries(tmp_path / "one")
    # And a plain process of a third environment loads it too.
    assert call(tmp_path, tmp_path / "nowhere")["misses"] == 0


def test_a_damaged_user_entry_is_compiled_again_and_repaired(tmp_path):
    call(tmp_path, tmp_path / "nowhere")
    stored = [p for p in (tmp_path / "user").rglob("*softplus_rows*") if p.is_file()]
    assert {p.suffix for p in stored} == {".nbi", ".nbc"}
    for path in stored:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    damaged = call(tmp_path, tmp_path / "nowhere")
    assert damaged["misses"] == 1
    assert_softplus(damaged["values"][0], np.linspace(-30.0, 30.0, 13))
    # The entry was written anew over the damaged index: the next process loads it.
    assert call(tmp_path, tmp_path / "nowhere")["hits"] == 1


def test_a_read_only_install_writes_nothing_beside_its_sources(tmp_path):
    # The package copied as an installation; its kernels compile into the
    # user's cache folder (here XDG_CACHE_HOME, as without NUMBA_CACHE_DIR),
    # and the installation's files stay as they were.
    install = tmp_path / "site"
    skip = shutil.ignore_patterns("__pycache__", "_kernel_cache")
    shutil.copytree(ROOT / "sklearn_rbm", install / "sklearn_rbm", ignore=skip)
    for path in install.rglob("*"):
        path.chmod(path.stat().st_mode & ~0o222)  # read-only (root ignores it)
    before = digest(install)
    env = {
        "XDG_CACHE_HOME": str(tmp_path / "home-cache"),
        "NUMBA_CACHE_DIR": "",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    try:
        first = call(tmp_path, install, env=env, root=install)
        second = call(tmp_path, install, env=env, root=install)
    finally:
        for path in install.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
    assert first["misses"] == 1 and second["hits"] == 1
    assert user_entries(tmp_path / "home-cache" / "sklearn_rbm")
    assert digest(install) == before


def test_an_unwritable_user_folder_still_runs(tmp_path):
    # A per-user folder that cannot exist (below a file): the kernel compiles
    # and runs, with numba's own cache in its place.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {cache.USER_FOLDER_VARIABLE: str(blocker / "cache")}
    result = call(tmp_path, tmp_path / "nowhere", env=env)
    assert result["misses"] == 1
    assert_softplus(result["values"][0], np.linspace(-30.0, 30.0, 13))


def test_the_compile_notice_fires_once_when_a_kernel_compiles():
    # The notice of verbose fits: numba's compile events name the kernel,
    # only for the package asked about, once per context.
    from sklearn_rbm._core.numba_compat import on_first_compile

    def add_one(x):
        return x + 1

    def add_two(x):
        return x + 2

    first, second = numba.njit(add_one), numba.njit(add_two)
    heard = []
    with on_first_compile(heard.append, package="elsewhere"):
        first(1)
    assert heard == []
    with on_first_compile(heard.append, package=__name__):
        first(2)  # already compiled: no event
        second(1)
        second(2.0)  # a second specialisation: still one notice
    assert heard == [
        "test_the_compile_notice_fires_once_when_a_kernel_compiles.<locals>.add_two"
    ]


def test_a_user_entry_of_another_processor_is_compiled_again(tmp_path):
    # Two machines sharing a home folder (or a wheel's kernels): what one
    # processor compiled is never loaded on another, in the per-user folder too.
    generic = call(tmp_path, tmp_path / "nowhere", env={"NUMBA_CPU_NAME": "generic"})
    native = call(tmp_path, tmp_path / "nowhere")
    assert generic["misses"] == 1 and native["misses"] == 1
    assert call(tmp_path, tmp_path / "nowhere")["hits"] == 1


def test_stale_user_folders_are_removed_when_a_new_one_is_made(tmp_path, monkeypatch):
    kernels = tmp_path / "sklearn_rbm" / "kernels"
    stale, recent, other = kernels / ("a" * 20), kernels / ("b" * 20), kernels / "keep"
    for folder in (stale, recent, other):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "entry.nbi").write_text("")
    long_ago = 0.0  # 1970: older than any limit
    for path in (stale, stale / "sub", stale / "sub" / "entry.nbi", other):
        os.utime(path, (long_ago, long_ago))
    monkeypatch.setenv(cache.USER_FOLDER_VARIABLE, str(tmp_path / "sklearn_rbm"))
    cache.user_folder.cache_clear()
    try:
        folder = cache.user_folder()
    finally:
        cache.user_folder.cache_clear()
    assert folder.parent == kernels and not folder.exists()
    # Only folders named like the per-user ones, and written long ago, go.
    assert not stale.exists() and recent.exists() and other.exists()


def test_an_inlined_overload_is_not_also_compiled_on_its_own():
    # numba's overload(inline="always") compiles its implementation as a
    # dispatcher of its own before inlining it; inline_overload only types it.
    from numba.core import event

    from sklearn_rbm._core.numba_compat import inline_overload

    def halve(x):
        raise NotImplementedError

    def _halve_impl(x):
        return x / 2.0

    @inline_overload(halve)
    def _halve(x):
        return _halve_impl

    @numba.njit
    def caller(x):
        return halve(x) + 1.0

    compiled = []

    class Listener(event.Listener):
        def on_start(self, compile_event):
            compiled.append(compile_event.data["dispatcher"].py_func.__name__)

        def on_end(self, compile_event):
            pass

    with event.install_listener("numba:compile", Listener()):
        assert caller(3.0) == 2.5
    assert compiled == ["caller"]


def test_an_inlined_jit_function_is_prepared_once_for_all_its_call_sites(
    monkeypatch,
):
    # numba runs the untyped pipeline of a jit(inline="always") function at
    # every call site; numba_compat keeps one result per function and flags.
    from numba.core.inline_closurecall import InlineWorker

    from sklearn_rbm._numerics.vecmath import log_positive

    prepared = []
    original = InlineWorker.run_untyped_passes

    def run_untyped_passes(self, func, *args, **kwargs):
        prepared.append(func)
        return original(self, func, *args, **kwargs)

    monkeypatch.setattr(InlineWorker, "run_untyped_passes", run_untyped_passes)

    @numba.njit
    def two_sites(x):
        return log_positive(x) + log_positive(2.0 * x)

    assert np.isclose(two_sites(1.5), np.log(4.5))
    assert prepared.count(log_positive.py_func) <= 1
