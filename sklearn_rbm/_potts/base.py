"""What every fitted Potts model answers, however it was fitted: energies,
contact scores, Gibbs samples, mutation effects and (through
``LikelihoodMixin``) the log-likelihood. ``PottsPseudoLikelihood`` and
``PottsBoltzmannMachine`` inherit it; each sets ``intercept_`` (L, q),
``coupling_`` (L, L, q, q) in the zero-sum gauge, ``n_states_`` and
``_ais_seed`` at fit.
"""

import math

import numba
import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.docstrings import sample_docstring
from .._core.sklearn_compat import validate_params
from .._core.utils import (
    GIBBS_SAMPLING_CONSTRAINTS,
    check_memory,
    check_sampling_work,
    kernel_rng,
)
from .._partition.annealing import ais_band, ais_betas
from .._partition.exact import LogPartition
from . import kernels
from .chains import draw_samples, sample_chains, sampling_work
from .contacts import coupling_scores
from .data import check_codes
from .mutations import check_wild_type, potts_effects


class Threads:
    """``numba.set_num_threads(n_jobs)`` for the duration of a block,
    restored in ``finally`` (``n_jobs`` as in joblib: None keeps numba's
    setting, -1 is every thread numba has)."""

    def __init__(self, n_jobs):
        most = numba.config.NUMBA_NUM_THREADS
        if n_jobs is None:
            self.n = numba.get_num_threads()
        elif n_jobs < 0:
            self.n = max(1, most + 1 + n_jobs)
        else:
            self.n = min(n_jobs, most)

    def __enter__(self):
        self.previous = numba.get_num_threads()
        numba.set_num_threads(self.n)

    def __exit__(self, *exc):
        numba.set_num_threads(self.previous)


class PottsModel:
    """The queries of a fitted Potts model (a mixin placed before
    ``LikelihoodMixin``)."""

    def _codes(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=None, reset=False)
        return check_codes(X, "X", self.n_states_)

    def _site_major(self):
        return np.ascontiguousarray(self.coupling_.transpose(0, 1, 3, 2))

    def energy(self, X):
        """Statistical energy ``E(x) = sum_i h_i(x_i) + sum_{i<j} J_ij(x_i, x_j)``.

        ``log P(x) = E(x) - log Z``: higher is more probable. The difference
        ``E(mutant) - E(wild type)`` is the mutation effect score of Hopf et
        al. (2017).

        Parameters
        ----------
        X : array-like of shape (n_samples, L)
            State codes.

        Returns
        -------
        energy : ndarray of shape (n_samples,)
            ``E(x)`` of each sequence (``log p~(x)``: higher is more probable).
        """
        return kernels.energies(self._codes(X), self.intercept_, self.coupling_)

    @validate_params(
        {"apc": ["boolean"], "include_gap": ["boolean"]},
        prefer_skip_nested_validation=True,
    )
    def contact_scores(self, apc=True, include_gap=True):
        """Coupling strength of every pair of sites, for contact prediction.

        The Frobenius norm of each zero-sum-gauge block ``J_ij`` (Ekeberg et
        al. 2013), over all states or without the gap state 0, then the
        average product correction (Dunn, Wahl & Gloor 2008).

        Parameters
        ----------
        apc : bool, default=True
            Apply the average product correction.
        include_gap : bool, default=True
            Keep state 0 (the gap of :func:`~sklearn_rbm.sequences.read_alignment`)
            in the norms, as plmc does (plmDCA drops it). On PF00014 the
            gap-inclusive scores rank contacts better (PPV@L 1.00 against
            0.98 at convergence).

        Returns
        -------
        scores : ndarray of shape (L, L)
            Symmetric, zero diagonal; rank pairs with
            :func:`sklearn_rbm.sequences.top_contacts`.
        """
        check_is_fitted(self)
        J = self._zero_sum_coupling()
        return coupling_scores(J if include_gap else J[:, :, 1:, 1:], apc)

    def _zero_sum_coupling(self):
        """``coupling_`` in the zero-sum gauge (a model that keeps another
        gauge converts it)."""
        return self.coupling_

    # The hooks of LikelihoodMixin (score, score_samples, log_partition_function).
    def _validate_query(self, X):
        return self._codes(X)

    def _log_unnormalised(self, X):
        return kernels.energies(X, self.intercept_, self.coupling_)

    def _enumerated_units(self):
        # q^L states count as log2(q^L) binary units.
        return math.ceil(self.n_features_in_ * math.log2(self.n_states_) - 1e-9)

    def _exact_log_partition(self):
        return kernels.log_partition_enumerate(self.intercept_, self.coupling_)

    def _mean_field_fields(self, n_iter=200, damping=0.5):
        """Fields of the naive mean-field independent-site model, the AIS start."""
        h, J = self.intercept_, self.coupling_
        fields = h.copy()
        for _ in range(n_iter):
            p = np.exp(fields - fields.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            new = h + np.einsum("ijab,jb->ia", J, p)
            fields = damping * fields + (1 - damping) * new
        return fields - fields.max(axis=1, keepdims=True)

    def _ais_log_partition(self, n_chains, betas, random_state):
        base = self._mean_field_fields()
        log_w = kernels.ais_log_weights(
            self.intercept_,
            self.coupling_,
            self._site_major(),
            base,
            ais_betas(betas),
            n_chains,
            np.random.default_rng(random_state),
        )
        top = base.max(axis=1, keepdims=True)
        log_z_base = float(np.sum(top[:, 0] + np.log(np.exp(base - top).sum(axis=1))))
        return LogPartition(*ais_band(log_w, log_z_base), "ais")

    @validate_params(GIBBS_SAMPLING_CONSTRAINTS, prefer_skip_nested_validation=True)
    @sample_docstring
    def sample(self, n_samples=1, *, burn_in=1000, thinning=10, random_state=None):
        """Draw sequences from the fitted model by Gibbs sampling.

        One chain for every 128 samples (from 16, or ``n_samples`` if
        fewer, to 256), started at uniform random states, each run
        ``burn_in`` sweeps, then one state kept every ``thinning`` sweeps.
        The chains run in parallel numba threads (``n_jobs``), each on its
        own random stream: the same sequences whatever the number of
        threads. The generative check
        (:func:`sklearn_rbm.sequences.compare_correlations`) needs many
        samples: the data's own rows, redrawn with their weights, read a
        lower Pearson correlation the fewer they are (see the User Guide).

        Parameters
        ----------
        n_samples : int, default=1
            Number of sequences.
        burn_in : int, default=1000
            Sweeps discarded at the start of each chain.
        thinning : int, default=10
            Sweeps between two kept states of a chain.
        %(sample_random_state)s

        Returns
        -------
        X : ndarray of shape (n_samples, L), dtype uint8
            State codes; row ``k n + c`` is the ``k``-th state of chain
            ``c`` of ``n``.
        """
        check_is_fitted(self)
        L, q = self.n_features_in_, self.n_states_
        check_memory(
            n_samples * L + sample_chains(n_samples) * L + 4 * L * L * q * q,
            f"sample(n_samples={n_samples}) of {L} sites",
            "Draw fewer samples, or draw them in several calls.",
        )
        check_sampling_work(
            sampling_work(n_samples, burn_in, thinning, L, q),
            f"sample(n_samples={n_samples}, burn_in={burn_in}, "
            f"thinning={thinning}) (sweeps x L^2 q / 3)",
            "Draw fewer samples or use a smaller thinning, in several calls if needed.",
        )
        rng = kernel_rng(self.random_state if random_state is None else random_state)
        with Threads(self.n_jobs):
            return draw_samples(
                self.intercept_, self.coupling_, n_samples, burn_in, thinning, rng
            )

    def mutation_effects(self, wild_type):
        """Log-probability change of every single mutant of ``wild_type``.

        ``effects[i, a] = log P(mutant) - log P(wild type)`` for the mutant
        with site ``i`` in state ``a``, that is ``h_i(a) - h_i(s_i) + sum_{j
        != i} [J_ij(a, s_j) - J_ij(s_i, s_j)]`` (the statistical energy
        difference of EVmutation, Hopf et al. 2017): positive when the
        mutant is more probable than the wild type, zero at the wild type's
        own states. Parse deep-mutational-scanning labels such as ``"A23V"``
        with :func:`sklearn_rbm.sequences.parse_mutations`.

        Parameters
        ----------
        wild_type : array-like of shape (L,)
            State codes of the reference sequence.

        Returns
        -------
        effects : ndarray of shape (L, q)
            The change of log-probability of each single mutant.
        """
        check_is_fitted(self)
        s = check_wild_type(wild_type, self.n_features_in_, self.n_states_)
        return potts_effects(self.intercept_, self.coupling_, s)
