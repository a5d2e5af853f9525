"""Constructs that cost compile time for nothing stay out of the kernels.

numba compiles, for the shape-mismatch message of a slice assignment from an
array (``out[:] = x``, ``out[a:b] += x``), its string formatting: about two
seconds in every fresh process that compiles such a kernel, a tenth of the
build (issue 33). Kernels copy and accumulate with
``sklearn_rbm._numerics.steps.copy_`` / ``add_`` instead. The check reads the
sources: it sees the sliced forms, not a row assigned by index (``out[i] =
row``), which costs the same; ``benchmarks/bench_compile.py`` flags both
when they compile.
"""

import ast
from pathlib import Path

import sklearn_rbm

PACKAGE = Path(sklearn_rbm.__file__).resolve().parent
JIT_DECORATORS = {"jit", "vector_jit", "njit"}


def _decorator_name(node):
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return getattr(node, "id", None)


def _is_kernel(function):
    return any(_decorator_name(d) in JIT_DECORATORS for d in function.decorator_list)


def _has_slice(index):
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(part, ast.Slice) for part in parts)


def _is_constant(value):
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    return isinstance(value, ast.Constant)


def sliced_array_assignments(source, filename="<source>"):
    """``(filename, line)`` of every assignment to a slice of a value that
    is not a literal, inside a jitted function of ``source``."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef) or not _is_kernel(function):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AugAssign):
                targets, value = [node.target], node.value
            else:
                continue
            sliced = any(
                isinstance(t, ast.Subscript) and _has_slice(t.slice) for t in targets
            )
            if sliced and not _is_constant(value):
                found.append((filename, node.lineno))
    return found


def test_the_check_sees_sliced_array_assignments():
    source = (
        "@jit\n"
        "def f(a, b, c):\n"
        "    a[:] = b\n"
        "    a[1:3] += b[1:3]\n"
        "    c[0, :] = b\n"
        "    a[:] = 0.0\n"
        "    a[:] = -1\n"
        "    a[0] = b[0]\n"
        "def not_a_kernel(a, b):\n"
        "    a[:] = b\n"
    )
    assert sliced_array_assignments(source) == [
        ("<source>", 3),
        ("<source>", 4),
        ("<source>", 5),
    ]


def test_no_kernel_assigns_an_array_to_a_slice():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += sliced_array_assignments(
            path.read_text(), str(path.relative_to(PACKAGE))
        )
    assert not found, (
        "slice assignments from arrays in kernels (use _numerics.steps.copy_ / "
        f"add_): {found}"
    )
