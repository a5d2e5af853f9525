"""Parameter descriptions shared by several public docstrings, written once.

A docstring names a shared entry by a placeholder line ``%(name)s`` at the
indentation where the entry belongs; :func:`fill_doc` replaces it when the
module is imported, so ``help()``, Sphinx and numpydoc read the whole text.
(MNE-Python and nilearn keep their shared parameter texts the same way.)
"""

import textwrap

__all__ = ["fill_doc", "sample_docstring"]


def fill_doc(**entries):
    """Decorator: put each ``entries[name]`` at the ``%(name)s`` line of the
    decorated object's docstring, indented as that line is.

    A placeholder with no entry is a mistake of the writer and raises at
    import time rather than publishing a docstring with a hole in it. Entries
    a docstring does not name are left out, so one decorator can carry the
    texts of a whole module.
    """
    entries = {key: textwrap.dedent(text).strip("\n") for key, text in entries.items()}

    def fill(obj):
        lines = obj.__doc__.splitlines()
        for k, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith("%(") and stripped.endswith(")s"):
                name = stripped[2:-2]
                if name not in entries:
                    raise KeyError(f"{obj.__qualname__}: no shared text for %({name})s")
                indent = line[: len(line) - len(line.lstrip())]
                lines[k] = textwrap.indent(entries[name], indent)
        obj.__doc__ = "\n".join(lines)
        return obj

    return fill


#: Decorator for the ``sample`` method of every estimator: they all seed
#: their draws by one rule, described once at ``%(sample_random_state)s``.
sample_docstring = fill_doc(
    sample_random_state="""
    random_state : int, RandomState instance or None, default=None
        Seed of the draws; ``None`` uses the estimator's ``random_state``,
        so an int ``random_state`` gives the same samples on every call.
    """
)
