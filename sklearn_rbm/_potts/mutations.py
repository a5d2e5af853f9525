"""Mutation effects of fitted sequence models (EVmutation, Hopf et al. 2017)
and the parser of mutation labels such as ``"A23V"`` or ``"A23V:G45D"``.

The effect of a mutant is ``log P(mutant) - log P(wild type)``: positive
when the model finds the mutant more probable. For a Potts model it is the
difference of statistical energies; for an RBM the difference of free
energies ``F(wild type) - F(mutant)``.
"""

import numbers
import re

import numpy as np

from .alignment import ALPHABETS
from .data import check_codes

_LABEL = re.compile(r"^\s*([^\d\s])(-?\d+)([^\d\s])\s*$")


def check_wild_type(wild_type, n_sites, n_states):
    """``wild_type`` as an int64 vector of ``n_sites`` codes below
    ``n_states`` (one number or one per site); a ValueError naming it."""
    s = np.asarray(wild_type)
    if s.ndim != 1 or s.shape[0] != n_sites:
        raise ValueError(
            f"wild_type must be one sequence of {n_sites} state codes (the "
            f"model's number of sites), got an array of shape {s.shape}."
        )
    codes = check_codes(s[None, :], "wild_type", n_states)
    return codes[0].astype(np.int64)


def potts_effects(h, J, s):
    """``effects[i, a] = h_i(a) - h_i(s_i) + sum_j [J_ij(a, s_j) - J_ij(s_i,
    s_j)]``, shape (L, q): the conditional fields at the wild type ``s``
    less their value at ``s`` itself (``J_ii = 0``)."""
    L = h.shape[0]
    fields = h + J[:, np.arange(L), :, s].sum(axis=0)
    return fields - fields[np.arange(L), s][:, None]


def single_mutants(s, states_per_site):
    """Every single mutant of ``s`` as rows of codes, ``(L * q, L)`` with
    ``q = max(states_per_site)``, site-major; states a site does not have
    keep the wild type's (the caller masks them)."""
    L = s.shape[0]
    q = int(np.max(states_per_site))
    rows = np.repeat(s[None, :], L * q, axis=0)
    sites = np.repeat(np.arange(L), q)
    states = np.tile(np.arange(q), L)
    valid = states < np.asarray(states_per_site)[sites]
    rows[np.flatnonzero(valid), sites[valid]] = states[valid]
    return rows, valid.reshape(L, q)


def parse_mutations(mutations, wild_type, offset=1, alphabet="protein"):
    """``[(positions, states), ...]`` of each label, checked against the
    wild type (see :func:`sklearn_rbm.sequences.parse_mutations`)."""
    if isinstance(mutations, str):
        mutations = [mutations]
    if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
        raise ValueError(
            f"offset must be an integer (the residue number of the first "
            f"column), got {offset!r}."
        )
    if not isinstance(alphabet, str):
        raise ValueError(
            f"alphabet must be 'protein', 'rna', 'dna' or a string of symbols, "
            f"got {alphabet!r}."
        )
    symbols = ALPHABETS.get(alphabet.lower(), alphabet)
    if isinstance(wild_type, str):
        unknown = sorted(set(wild_type) - set(symbols))
        if unknown:
            raise ValueError(
                f"wild_type holds letters outside the alphabet {symbols!r}: "
                f"{''.join(unknown)!r}. Give the aligned wild-type sequence in "
                "that alphabet, or its state codes."
            )
        wild_type = np.array([symbols.index(c) for c in wild_type])
    s = check_wild_type(wild_type, np.size(wild_type), len(symbols))
    L = s.shape[0]
    parsed = []
    for label in mutations:
        if not isinstance(label, str):
            raise ValueError(
                f"mutations must hold strings such as 'A23V' or 'A23V:G45D', got "
                f"{label!r}."
            )
        positions, states = [], []
        for part in label.split(":"):
            match = _LABEL.match(part)
            if match is None:
                raise ValueError(
                    f"mutations: cannot read {part!r} of {label!r}; write each "
                    "single mutation as wild-type letter, residue number, "
                    "mutant letter ('A23V'), several joined by ':'."
                )
            before, number, after = match.group(1), int(match.group(2)), match.group(3)
            column = number - offset
            if not 0 <= column < L:
                raise ValueError(
                    f"mutations: position {number} of {label!r} is out of range: "
                    f"with offset={offset} the {L} columns are residues {offset} "
                    f"to {offset + L - 1}. Set offset to the residue number of "
                    "the first column."
                )
            for letter in (before, after):
                if letter not in symbols:
                    raise ValueError(
                        f"mutations: unknown letter {letter!r} in {label!r}; the "
                        f"alphabet is {symbols!r}: use its letters, or set "
                        "alphabet."
                    )
            if symbols[s[column]] != before:
                raise ValueError(
                    f"mutations: {label!r} says residue {number} is {before!r}, "
                    f"but the wild type has {symbols[s[column]]!r} there (column "
                    f"{column}). Give the wild type of the alignment, and set "
                    "offset to the residue number of its first column."
                )
            positions.append(column)
            states.append(symbols.index(after))
        parsed.append(
            (np.array(positions, dtype=np.intp), np.array(states, dtype=np.intp))
        )
    return parsed
